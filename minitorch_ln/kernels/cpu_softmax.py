"""The softmax of ``kernels/softmax.py`` and its backward as compiled loops over rows (float32).

The NumPy form makes five passes over the whole ``(..., L, S)`` score array (max, subtract, exp,
sum, divide), and NumPy's maximum along a short last axis is slow (at the ``tiny`` GPT's 64 keys
it was most of the softmax's time). Here each row is read three times while it sits in the L1
cache: its maximum, then ``e = exp(s - max)`` with their sum, then ``e / sum``; the backward
reads a row of ``dp`` and ``p`` twice (``Σ dp · p``, then ``p · (dp - Σ)``). The ``exp`` is the
vectorizable one of ``kernels/cpu_activation.py`` (an argument ``s - max <= 0`` always); the sums
may be reordered (``fastmath`` "reassoc", as the LayerNorm loops), so the results equal the NumPy
form's to rounding (a test holds them so), except that a probability below the smallest normal
float32 (``1.2e-38``) is 0 here, where NumPy's ``exp`` keeps a subnormal.

Rows whose maximum is not finite keep the NumPy form's rules: all ``-inf`` gives zeros; a ``+inf``
or a NaN gives NaN throughout, as PyTorch (the row is done by a plain scalar loop).
Rows are shared out over the kernel threads (``kernels/_threads.py``). Only C-contiguous float32
goes through here; anything else (float64, float16, views) takes the NumPy form.
"""

from __future__ import annotations

import numpy as np

from . import _threads
from . import softmax as _xp
from ._numba import AVAILABLE, jit
from .cpu_activation import _exp_neg

__all__ = ["AVAILABLE", "softmax_rows_", "softmax_bwd_rows_"]

_f = np.float32


@jit
def _max_nan_wins(a, b):
    return b if b > a or b != b else a              # NaN wins, as np.max


@jit
def _row_max(r):
    """``np.max(r)`` of a row (NaN if it holds one), in four running maxima: one chain of compare-and-
    select per element made the maximum the slowest of the three passes at 64 keys (issue 26). The
    maximum of a set is exact whatever the order; only which of two equal zeros (0.0 and -0.0) comes
    out can differ, and ``exp(s - m)`` is the same for both."""
    S = r.shape[0]
    m0 = m1 = m2 = m3 = r[0]
    j = 0
    while j + 4 <= S:
        m0 = _max_nan_wins(m0, r[j])
        m1 = _max_nan_wins(m1, r[j + 1])
        m2 = _max_nan_wins(m2, r[j + 2])
        m3 = _max_nan_wins(m3, r[j + 3])
        j += 4
    while j < S:
        m0 = _max_nan_wins(m0, r[j])
        j += 1
    return _max_nan_wins(_max_nan_wins(m0, m1), _max_nan_wins(m2, m3))


@jit
def _softmax_rows_loop(s, start, stop):
    S = s.shape[1]
    for i in range(start, stop):
        r = s[i]                                    # the row, a 1-d view
        m = _row_max(r)
        if not np.isfinite(m):
            _softmax_row_not_finite(s, i, m)
            continue
        total = _f(0.0)
        for j in range(S):
            e = _exp_neg(r[j] - m)
            r[j] = e
            total += e
        for j in range(S):                          # total >= 1: the maximum's own exp(0)
            r[j] = r[j] / total


@jit
def _softmax_row_not_finite(s, i, m):
    """The NumPy form's arithmetic for a row whose maximum ``m`` is -inf, +inf or NaN."""
    S = s.shape[1]
    total = _f(0.0)
    for j in range(S):
        # a maximum of -inf is not subtracted (np.where(m == -inf, 0, m)); +inf is: inf - inf = NaN
        e = np.exp(s[i, j]) if m == -np.inf else np.exp(s[i, j] - m)
        s[i, j] = e
        total += e
    if total == 0:
        total = _f(1.0)
    for j in range(S):
        s[i, j] = s[i, j] / total


@jit
def _softmax_bwd_rows_loop(dp, p, start, stop):
    S = dp.shape[1]
    for i in range(start, stop):
        d = _f(0.0)
        for j in range(S):
            d += dp[i, j] * p[i, j]
        for j in range(S):
            dp[i, j] = (dp[i, j] - d) * p[i, j]


def _compiled(*arrays) -> bool:
    return AVAILABLE and all(type(a) is np.ndarray and a.dtype == np.float32 and a.ndim >= 1 and a.size > 0
                             and a.flags.c_contiguous for a in arrays) \
        and all(a.shape == arrays[0].shape for a in arrays)


def softmax_rows_(s):
    """Softmax over the last axis of ``s``, in place (``kernels/softmax.py``'s interface)."""
    if not _compiled(s):
        return _xp.softmax_rows_(s)
    rows = s.reshape(-1, s.shape[-1])                                   # (N, S), a view
    others, (lo, hi) = _threads.start(_softmax_rows_loop, (rows,), rows.shape[0], rows.shape[1])
    _softmax_rows_loop(rows, lo, hi)
    _threads.join(others)
    return s


def softmax_bwd_rows_(dp, p):
    """``dp ← p ⊙ (dp - Σ_last (dp ⊙ p))`` in place (``kernels/softmax.py``'s interface)."""
    if not _compiled(dp, p):
        return _xp.softmax_bwd_rows_(dp, p)
    d2, p2 = dp.reshape(-1, dp.shape[-1]), p.reshape(-1, p.shape[-1])   # (N, S) views
    others, (lo, hi) = _threads.start(_softmax_bwd_rows_loop, (d2, p2), d2.shape[0], d2.shape[1])
    _softmax_bwd_rows_loop(d2, p2, lo, hi)
    _threads.join(others)
    return dp

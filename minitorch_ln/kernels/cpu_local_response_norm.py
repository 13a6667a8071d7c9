"""Local response normalization forward and backward as compiled loops on the CPU, on ``(N, C, L)`` in place.

The formulas and numerics of ``kernels/local_response_norm.py`` (docs/local_response_norm.md), written as loops that
Numba compiles: the window of ``size`` channels slides along the channel axis of each sample with
O(1) work per step whatever ``size`` is, by the blocked prefix/suffix sums of
:func:`minitorch_ln.kernels.local_response_norm.window_sums` (sums of at most ``size`` terms, never the difference
of two running totals). Innermost loops run along ``L``, along memory. Accumulation in float64.
float16, empty input and a missing Numba go to the NumPy kernels.
"""

from __future__ import annotations

import numpy as np

from . import local_response_norm as _xp
from ._numba import AVAILABLE, as_contiguous, jit
from .choice import COMPILED_DTYPES

__all__ = ["local_response_norm_bwd", "local_response_norm_fwd"]


@jit
def _window_sums(a, size, before, out):
    """``out[n, c] = Σ a[n, c']`` for ``c' ∈ [c - before, c - before + size)``, zero outside ``[0, C)``."""
    N, C, L = a.shape
    P = -(-(C + size - 1) // size) * size          # the zero-padded channel axis, whole blocks of `size`
    prefix = np.empty((P, L))                      # block start .. p
    suffix = np.empty((P, L))                      # p .. block end
    for n in range(N):
        for p in range(P):
            c = p - before
            for j in range(L):
                v = a[n, c, j] if 0 <= c < C else 0.0
                prefix[p, j] = v if p % size == 0 else prefix[p - 1, j] + v
        for p in range(P - 1, -1, -1):
            c = p - before
            for j in range(L):
                v = a[n, c, j] if 0 <= c < C else 0.0
                suffix[p, j] = v if (p + 1) % size == 0 else suffix[p + 1, j] + v
        for c in range(C):                         # the window of c is padded[c : c + size]
            e = c + size - 1
            if c % size == 0:                      # one whole block
                for j in range(L):
                    out[n, c, j] = prefix[e, j]
            else:                                  # the end of one block and the start of the next
                for j in range(L):
                    out[n, c, j] = suffix[c, j] + prefix[e, j]


@jit
def _denominator(x, size, alpha, k, s):
    """``s = k + (α/n) · Σ_{window} x²`` in float64."""
    N, C, L = x.shape
    sq = np.empty((N, C, L))
    for n in range(N):
        for c in range(C):
            for j in range(L):
                v = np.float64(x[n, c, j])
                sq[n, c, j] = v * v
    _window_sums(sq, size, size // 2, s)
    scale = alpha / size
    for n in range(N):
        for c in range(C):
            for j in range(L):
                s[n, c, j] = k + scale * s[n, c, j]


@jit
def _lrn_fwd(x, size, alpha, beta, k, y):
    N, C, L = x.shape
    s = np.empty((N, C, L))
    _denominator(x, size, alpha, k, s)
    for n in range(N):
        for c in range(C):
            for j in range(L):
                y[n, c, j] = np.float64(x[n, c, j]) / s[n, c, j] ** beta      # y = a / s^β


@jit
def _lrn_bwd(dy, x, size, alpha, beta, k, dx):
    N, C, L = x.shape
    s = np.empty((N, C, L))
    _denominator(x, size, alpha, k, s)
    t = np.empty((N, C, L))                        # dy_c · a_c · s_c^(-β-1), then s^β in s
    for n in range(N):
        for c in range(C):
            for j in range(L):
                s_beta = s[n, c, j] ** beta
                t[n, c, j] = np.float64(dy[n, c, j]) * np.float64(x[n, c, j]) / (s_beta * s[n, c, j])
                s[n, c, j] = s_beta
    through_s = np.empty((N, C, L))
    _window_sums(t, size, (size - 1) // 2, through_s)   # the mirrored window: every c whose window holds j
    coef = 2.0 * alpha * beta / size
    for n in range(N):
        for c in range(C):
            for j in range(L):
                #              term 1 (direct)                       term 2 (through every s_c)
                dx[n, c, j] = np.float64(dy[n, c, j]) / s[n, c, j] - coef * np.float64(x[n, c, j]) * through_s[n, c, j]


def _compiled(x) -> bool:
    """Whether ``x`` ``(N, C, L)`` goes through the compiled loops (float32/64, not empty)."""
    return AVAILABLE and x.dtype in COMPILED_DTYPES and x.ndim == 3 and x.size > 0


def local_response_norm_fwd(x, size, alpha, beta, k):
    """LRN forward, compiled, on ``x`` ``(N, C, L)`` → ``y`` ``(N, C, L)`` in ``x``'s dtype (``kernels/local_response_norm.py``)."""
    if not _compiled(x):
        return _xp.local_response_norm_fwd(x, size, alpha, beta, k)
    y = np.empty(x.shape, x.dtype)                                                   # (N, C, L)
    _lrn_fwd(as_contiguous(x, x.dtype), int(size), float(alpha), float(beta), float(k), y)
    return y


def local_response_norm_bwd(dy, x, size, alpha, beta, k):
    """LRN backward, compiled: ``dx`` ``(N, C, L)`` in ``x``'s dtype from ``dy``, ``x`` ``(N, C, L)``."""
    if not _compiled(x):
        return _xp.local_response_norm_bwd(dy, x, size, alpha, beta, k)
    if dy.shape != x.shape:
        raise ValueError(f"local_response_norm_bwd: expected dy of shape {x.shape}, got {dy.shape}")
    dx = np.empty(x.shape, x.dtype)                                                  # (N, C, L)
    _lrn_bwd(as_contiguous(dy, x.dtype), as_contiguous(x, x.dtype), int(size), float(alpha), float(beta),
             float(k), dx)
    return dx

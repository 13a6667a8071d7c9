"""LayerNorm (and RMSNorm, BatchNorm) forward and backward as compiled loops on the CPU, the math as written.

The file to read first, next to ``docs/layernorm_backward.md``, is :mod:`minitorch_ln.kernels.layer_norm`
(the same formulas with whole-array operations, the oracle this file is tested against); read this
one with section 9 of the docs (the numerics and why a compiled loop). NumPy cannot fuse that
form's operations, so each is one more pass that writes a full ``(n, D)`` temporary (5 such passes forward, 7 backward). Here every row is
handled by a plain loop that Numba (https://numba.pydata.org) compiles to machine code, the way
llm.c's ``layernorm_forward`` / ``layernorm_backward`` are written in C: the row is read a few
times while it sits in the L1 cache, and ``y`` (or ``dx``) is written once: the backward reads
each row from memory once (pass 1: its sums, ``dγ``, ``dβ``) and then again from the L1 cache
(pass 2: ``dx``). The forward asks for the next row (``prefetch_row``) as it starts on a row, so
that the next row arrives from memory while this one is worked on in the cache (the backward gained
nothing from it: its first pass already keeps the memory busy).

Per row of length ``D`` (notation as in the docs)::

    forward    mean = Σ x / D,  var = Σ (x - mean)² / D,  rstd = 1 / sqrt(var + eps)
               y    = (x - mean) · rstd · γ + β
    backward   xhat = (x - mean - c) · rstd,  dxhat = dy · γ     (c re-centres: see below)
               dx   = rstd · (dxhat - mean(dxhat) - xhat · mean(dxhat · xhat))
               dγ  += dy · xhat,  dβ += dy          (summed over rows)

The numerics are those of the NumPy kernels, which the tests hold these equal to:

- the row is shifted by its first element before the two-pass variance, so a constant row has
  deviations of exactly zero and its output is exactly ``β``; a row whose squares overflow
  (float32 values beyond about 1e19, float64 beyond 1e154) has its variance summed again in float64,
  scaled by its largest deviation;
- a row's sums are taken in the input's own dtype (float32 or float64), as in the NumPy kernels
  (BatchNorm's per-channel sums, over a whole batch, in float64); the compiler may reorder the
  additions (``fastmath`` "reassoc", which lets it add 16 floats at a time) but may not assume
  away NaN or infinity, so a NaN still propagates;
- the backward re-centres ``x - mean`` by its row mean ``c``, since the saved ``mean`` is rounded;
  the sums it needs come from one pass, with ``Σ dxhat · xhat = rstd · (Σ dxhat · (x - mean) - c · Σ dxhat)``
  (as BatchNorm's and GroupNorm's loops do), and ``dγ`` gets its ``- c · rstd · dy`` term only where
  ``c · rstd`` is beyond ``xhat``'s own rounding (a mean rounded by more than that: rows like
  ``1e4 + noise`` in float32);
- ``dx`` is written in the expanded form ``rstd · dxhat + B · (x - mean) + C`` (per-row constants
  ``B``, ``C``; fewer operations per value), except where ``B = -rstd² · mean(dxhat · xhat)`` would
  lose digits to underflow (float32 rows beyond about 1e19) or where a term could overflow (rows
  below about 1e-19, a tiny ``eps``, huge ``dy``; bounded by ``rstd · Σ |dxhat|``): there ``xhat``
  is formed first, and a cancellation inside the parentheses keeps ``dx`` finite;
- ``dγ``/``dβ`` are summed per block of rows and the blocks are added in order, so the result is
  bitwise the same on any number of threads (the blocks are those of the NumPy kernels).

RMSNorm is here too, as the same kind of loop (LayerNorm without the centring); BatchNorm's loops
are in ``cpu_batch_norm.py``. The rows are shared out over a few threads in runs of whole blocks
(``kernels/_threads.py``): the kernel function runs the first share itself and calls the row
loop directly.

Only float32 and float64 are compiled; float16 input (normalized in float32) and any array when
Numba is not installed go to the NumPy kernels (``layer_norm.py``, the form to read and the oracle).
``layer_norm_dispatch.py`` makes that choice, following :func:`minitorch_ln.kernels.set_cpu_kernels`;
both are always tested.
"""

from __future__ import annotations

import numpy as np

from . import _threads
from . import layer_norm as _xp
from . import rms_norm as _xp_rms
from ._numba import AVAILABLE, as_contiguous, check_shapes, jit, prefetch_row
from .choice import COMPILED_DTYPES

__all__ = ["AVAILABLE", "layer_norm_fwd", "layer_norm_bwd", "layer_norm_stats", "rms_norm_fwd", "rms_norm_bwd"]


# ==================================================================================================
# The loops, one row at a time. ``start:stop`` is a range of rows (one thread's share).
# ==================================================================================================


@jit(inline=True)
def _row_stats(x, i, eps):
    """``(shift, mean_shifted, var, rstd)`` of row ``i``: ``mean = shift + mean_shifted``.

    Copied into each row loop that calls it (``inline``): one call per row would cost more than
    the loops' own time over a short row."""
    D = x.shape[1]
    d = x.dtype.type(D)
    shift = x[i, 0]                     # every row is shifted by its first element
    s = x.dtype.type(0)
    for j in range(D):                  # first pass (the row comes from memory): Σ (x - shift)
        s += x[i, j] - shift
    mean_shifted = s / d                # mean(x - shift)
    v = x.dtype.type(0)
    for j in range(D):                  # second pass (from the L1 cache): Σ (x - mean)²
        xc = (x[i, j] - shift) - mean_shifted
        v += xc * xc
    var = v / d                         # biased: / D, not / (D - 1)
    if var == np.inf:                   # squares overflow (float32 |x - mean| > 1.8e19): redo, scaled
        var, rstd = _var_rstd_float64(x, i, shift, mean_shifted, eps)
    else:
        rstd = x.dtype.type(1) / np.sqrt(var + eps)     # eps inside the sqrt
    return shift, mean_shifted, var, rstd


@jit
def _var_rstd_float64(x, i, shift, mean_shifted, eps):
    """Row ``i``'s variance and rstd from its squares scaled by the largest deviation ``m``, in
    float64, cast back to ``x``'s dtype: ``rstd = 1 / (m · sqrt(mean((xc/m)²) + eps/m²))``.

    Only for rows whose sum of squares overflowed (float32 beyond about 1e19, float64 beyond 1e154):
    the variance may itself exceed the dtype (then ``var`` is inf), but ``rstd`` is representable,
    so ``y`` stays right instead of collapsing to ``β`` (``rstd = 1/sqrt(inf) = 0``).
    """
    D = x.shape[1]
    m = 0.0
    for j in range(D):                  # m = max |x - mean|
        m = max(m, abs(np.float64((x[i, j] - shift) - mean_shifted)))
    if m == np.inf:                     # a row holding ±inf (RMSNorm): truly infinite, rstd = 1/sqrt(inf) = 0
        return x.dtype.type(np.inf), x.dtype.type(0)
    q = 0.0
    for j in range(D):                  # q = Σ ((x - mean) / m)²
        xs = np.float64((x[i, j] - shift) - mean_shifted) / m
        q += xs * xs
    q /= D
    return x.dtype.type(m * m * q), x.dtype.type(1.0 / (m * np.sqrt(q + eps / m / m)))


@jit
def _layer_norm_fwd_rows(x, weight, bias, eps, y, mean, rstd, start, stop):
    D = x.shape[1]
    for i in range(start, stop):
        prefetch_row(x, i + 1)          # the next row comes from memory while this one is in the L1 cache
        shift, mean_shifted, _, r = _row_stats(x, i, eps)     # mean, rstd: two passes over row i
        mean[i, 0] = shift + mean_shifted
        rstd[i, 0] = r
        for j in range(D):              # y = xhat · γ + β, exactly β where xhat = 0
            xhat = ((x[i, j] - shift) - mean_shifted) * r
            y[i, j] = xhat * weight[j] + bias[j]


@jit
def _layer_norm_stats_rows(x, eps, mean, rstd, start, stop):
    for i in range(start, stop):
        prefetch_row(x, i + 1)          # as in the forward: the next row arrives during the variance pass
        shift, mean_shifted, _, r = _row_stats(x, i, eps)
        mean[i, 0] = shift + mean_shifted
        rstd[i, 0] = r


@jit
def _layer_norm_bwd_rows(dy, x, weight, mean, rstd, dx, dweight_blocks, dbias_blocks, rows_per_block,
                         start, stop):
    D = x.shape[1]
    d = x.dtype.type(D)
    eps = np.finfo(x.dtype).eps
    tiny = np.finfo(x.dtype).tiny
    big = np.finfo(x.dtype).max / 8   # the expanded dx's terms stay below this, so their sum is finite
    for i in range(start, stop):
        mu, r = mean[i, 0], rstd[i, 0]
        b = i // rows_per_block         # this row's block of dγ/dβ partial sums
        # pass 1 (the row comes from memory), with xc = x - mu:
        #   Σ xc (re-centring: c = mean(xc) is zero up to the rounding of the saved mean),
        #   Σ dxhat, and Σ dxhat · xc, so that Σ dxhat · xhat = r · (Σ dxhat · xc - c · Σ dxhat);
        #   dγ += dy · xc · r (the re-centred xhat is xc · r - c · r: corrected below), dβ += dy
        sum_xc = x.dtype.type(0)
        sum_dxhat = x.dtype.type(0)
        sum_dxhat_xc = x.dtype.type(0)
        sum_abs_dxhat = x.dtype.type(0)     # bounds every |dxhat|: whether r · dxhat may overflow
        for j in range(D):
            xc = x[i, j] - mu
            g = dy[i, j]
            dxhat = g * weight[j]
            sum_xc += xc
            sum_dxhat += dxhat
            sum_dxhat_xc += dxhat * xc
            sum_abs_dxhat += abs(dxhat)
            dweight_blocks[b, j] += g * (xc * r)
            dbias_blocks[b, j] += g
        c = sum_xc / d
        mean_dxhat = sum_dxhat / d
        mean_dxhat_xhat = r * (sum_dxhat_xc - c * sum_dxhat) / d
        cr = c * r
        if abs(cr) > eps:               # a mean rounded by more than xhat's own rounding (rows 1e4 + noise)
            _add_scaled_row(dy, i, -cr, dweight_blocks, b)      # dγ += dy · (-c · r)
        # pass 2 (the row is in the L1 cache now): dx, the three terms of the compact form
        #   dx = r · dxhat - r · mean(dxhat) - r · xhat · mean(dxhat · xhat)
        #      = r · dxhat + B · xc + C,   B = -r² · mean(dxhat · xhat),  C = r · (c · r · mean(dxhat · xhat) - mean(dxhat))
        rm = r * mean_dxhat_xhat
        B = -(rm * r)
        C = r * (rm * c - mean_dxhat)
        # the expanded form (fewer operations) where B keeps every digit and no term can overflow:
        # |r · dxhat| <= r · Σ|dxhat|, |B · xc| = |rm · xhat| <= |rm| · D, B and C; NaN fails every test
        if (abs(B) >= tiny / eps or rm == 0) and abs(B) < big and r * sum_abs_dxhat < big \
                and abs(rm) * d < big and abs(C) < big:
            _layer_norm_bwd_row_dx_expanded(dy, x, weight, i, mu, r, B, C, dx)
        else:   # r² under- or overflows (float32 rows beyond 1e19 or below 1e-19), huge dy: xhat first
            _layer_norm_bwd_row_dx(dy, x, weight, i, mu, c, r, mean_dxhat, mean_dxhat_xhat, dx)


# The helpers below have no sums: compiled in the written order (reassoc=False), so that the
# compiler never regroups a product into rstd · rstd on its own.


@jit(reassoc=False)
def _layer_norm_bwd_row_dx_expanded(dy, x, weight, i, mu, r, B, C, dx):
    for j in range(x.shape[1]):
        #          term 1 (direct)        terms 3 and 2 (via rstd and via mean)
        dx[i, j] = (dy[i, j] * weight[j]) * r + (B * (x[i, j] - mu) + C)


@jit(reassoc=False)
def _layer_norm_bwd_row_dx(dy, x, weight, i, mu, c, r, mean_dxhat, mean_dxhat_xhat, dx):
    for j in range(x.shape[1]):
        xhat = ((x[i, j] - mu) - c) * r
        #              term 1 (direct)          term 2 (via mean)  term 3 (via rstd, i.e. the variance)
        dx[i, j] = r * (dy[i, j] * weight[j] - mean_dxhat - xhat * mean_dxhat_xhat)


@jit(reassoc=False)
def _add_scaled_row(a, i, k, out, b):
    for j in range(a.shape[1]):
        out[b, j] += a[i, j] * k


# RMSNorm (no centring): rstd = 1 / sqrt(mean(x²) + eps), xhat = x · rstd, y = xhat · γ,
#   dx = rstd · (dxhat - xhat · mean(dxhat · xhat)),  dγ = Σ_rows dy · xhat   (docs, section 7)


@jit
def _rms_norm_fwd_rows(x, weight, eps, y, rstd, start, stop):
    D = x.shape[1]
    d = x.dtype.type(D)
    for i in range(start, stop):
        prefetch_row(x, i + 1)          # as in LayerNorm's forward: the next row arrives meanwhile
        ms = x.dtype.type(0)
        for j in range(D):              # Σ x² (the row comes from memory)
            ms += x[i, j] * x[i, j]
        if ms == np.inf:                # squares overflow (float32 |x| > 1.8e19): redo, scaled
            _, r = _var_rstd_float64(x, i, x.dtype.type(0), x.dtype.type(0), eps)
        else:
            r = x.dtype.type(1) / np.sqrt(ms / d + eps)
        rstd[i, 0] = r
        for j in range(D):              # y = x · rstd · γ (from the L1 cache)
            y[i, j] = x[i, j] * r * weight[j]


@jit
def _rms_norm_bwd_rows(dy, x, weight, rstd, dx, dweight_blocks, rows_per_block, start, stop):
    D = x.shape[1]
    d = x.dtype.type(D)
    for i in range(start, stop):
        r = rstd[i, 0]
        b = i // rows_per_block
        sum_dxhat_xhat = x.dtype.type(0)
        for j in range(D):              # Σ dxhat · xhat (dxhat = dy · γ), dγ += dy · xhat
            xhat = x[i, j] * r
            sum_dxhat_xhat += dy[i, j] * weight[j] * xhat
            dweight_blocks[b, j] += dy[i, j] * xhat
        mean_dxhat_xhat = sum_dxhat_xhat / d
        for j in range(D):
            #              term 1 (direct)     term 2 (via rstd)
            dx[i, j] = r * (dy[i, j] * weight[j] - x[i, j] * r * mean_dxhat_xhat)


# ==================================================================================================
# The kernel interface (minitorch_ln/kernels/__init__.py): arrays in, arrays out
# ==================================================================================================


def _compiled(x) -> bool:
    """Whether ``x`` goes through the compiled loops (float32/float64 rows of at least one value)."""
    return AVAILABLE and x.dtype in COMPILED_DTYPES and x.ndim == 2 and x.shape[1] > 0


@jit
def _sum_blocks(blocks, total):
    for b in range(blocks.shape[0]):
        for j in range(blocks.shape[1]):
            total[j] += blocks[b, j]


def _sum_block_rows(blocks, dtype):
    """``(D,)``: the rows of the ``(blocks, D)`` partial sums added in block order, one after another
    (so the same on any number of threads; zeros for no rows)."""
    total = np.zeros(blocks.shape[1], blocks.dtype)
    _sum_blocks(blocks, total)
    return total.astype(dtype, copy=False)


def layer_norm_fwd(x, weight, bias, eps):
    """LayerNorm forward, compiled; the interface of :func:`minitorch_ln.kernels.layer_norm.layer_norm_fwd`.

    ``x`` ``(N, D)`` float32/float64 (float16 goes to the NumPy kernel); ``weight``, ``bias``
    ``(D,)`` or None; returns ``(y (N, D), mean (N, 1), rstd (N, 1))`` in ``x``'s dtype.
    """
    if not _compiled(x):
        return _xp.layer_norm_fwd(x, weight, bias, eps)
    check_shapes("layer_norm_fwd", x, weight=weight, bias=bias)
    N, D = x.shape
    dt = x.dtype
    x = as_contiguous(x, dt)
    w = np.ones(D, dt) if weight is None else as_contiguous(weight, dt)         # (D,)  γ (1 without)
    b = np.zeros(D, dt) if bias is None else as_contiguous(bias, dt)            # (D,)  β (0 without)
    y = np.empty((N, D), dt)                                                    # (N, D)
    mean, rstd = np.empty((N, 1), dt), np.empty((N, 1), dt)                     # (N, 1) each
    args = (x, w, b, dt.type(eps), y, mean, rstd)
    others, (lo, hi) = _threads.start(_layer_norm_fwd_rows, args, N, D)   # the other threads' rows
    _layer_norm_fwd_rows(*args, lo, hi)                                   # this thread's rows
    _threads.join(others)
    return y, mean, rstd


def layer_norm_stats(x, eps):
    """Only ``(mean, rstd)`` ``(N, 1)`` of the rows of ``x`` ``(N, D)``, compiled (float16: NumPy)."""
    if not _compiled(x):
        return _xp.layer_norm_stats(x, eps)
    N, D = x.shape
    dt = x.dtype
    mean, rstd = np.empty((N, 1), dt), np.empty((N, 1), dt)                     # (N, 1) each
    args = (as_contiguous(x, dt), dt.type(eps), mean, rstd)
    others, (lo, hi) = _threads.start(_layer_norm_stats_rows, args, N, D)   # the other threads' rows
    _layer_norm_stats_rows(*args, lo, hi)                                   # this thread's rows
    _threads.join(others)
    return mean, rstd


def layer_norm_bwd(dy, x, weight, mean, rstd):
    """LayerNorm backward, compiled; the interface of :func:`minitorch_ln.kernels.layer_norm.layer_norm_bwd`.

    ``dy``, ``x`` ``(N, D)``; ``weight`` ``(D,)`` or None; ``mean``, ``rstd`` ``(N, 1)``. Returns
    ``(dx (N, D), dweight (D,), dbias (D,))``, the last two None without a weight and otherwise
    in the weight's dtype.
    """
    if not _compiled(x):
        return _xp.layer_norm_bwd(dy, x, weight, mean, rstd)
    check_shapes("layer_norm_bwd", x, dy=dy, weight=weight, mean=mean, rstd=rstd)
    N, D = x.shape
    dt = x.dtype
    w = np.ones(D, dt) if weight is None else as_contiguous(weight, dt)         # (D,)
    rows_per_block = _threads.rows_per_block(N, D)
    n_blocks = -(-N // rows_per_block)
    dweight_blocks = np.zeros((n_blocks, D), dt)                                # (blocks, D)
    dbias_blocks = np.zeros((n_blocks, D), dt)                                  # (blocks, D)
    dx = np.empty((N, D), dt)                                                   # (N, D)
    args = (as_contiguous(dy, dt), as_contiguous(x, dt), w, as_contiguous(mean, dt), as_contiguous(rstd, dt),
              dx, dweight_blocks, dbias_blocks, rows_per_block)
    others, (lo, hi) = _threads.start(_layer_norm_bwd_rows, args, N, D)   # the other threads' rows
    _layer_norm_bwd_rows(*args, lo, hi)                                   # this thread's rows
    _threads.join(others)
    if weight is None:
        return dx, None, None
    # added in block order: the same on any number of threads
    return dx, _sum_block_rows(dweight_blocks, weight.dtype), _sum_block_rows(dbias_blocks, weight.dtype)


def rms_norm_fwd(x, weight, eps):
    """RMSNorm forward, compiled: ``x`` ``(N, D)``, ``weight`` ``(D,)`` or None → ``(y (N, D), rstd (N, 1))``."""
    if not _compiled(x):
        return _xp_rms.rms_norm_fwd(x, weight, eps)
    check_shapes("rms_norm_fwd", x, weight=weight)
    N, D = x.shape
    dt = x.dtype
    w = np.ones(D, dt) if weight is None else as_contiguous(weight, dt)         # (D,)
    y, rstd = np.empty((N, D), dt), np.empty((N, 1), dt)                        # (N, D), (N, 1)
    args = (as_contiguous(x, dt), w, dt.type(eps), y, rstd)
    others, (lo, hi) = _threads.start(_rms_norm_fwd_rows, args, N, D)   # the other threads' rows
    _rms_norm_fwd_rows(*args, lo, hi)                                   # this thread's rows
    _threads.join(others)
    return y, rstd


def rms_norm_bwd(dy, x, weight, rstd):
    """RMSNorm backward, compiled → ``(dx (N, D), dweight (D,) or None)`` (dweight in the weight's dtype)."""
    if not _compiled(x):
        return _xp_rms.rms_norm_bwd(dy, x, weight, rstd)
    check_shapes("rms_norm_bwd", x, dy=dy, weight=weight, rstd=rstd)
    N, D = x.shape
    dt = x.dtype
    w = np.ones(D, dt) if weight is None else as_contiguous(weight, dt)         # (D,)
    rows_per_block = _threads.rows_per_block(N, D)
    dweight_blocks = np.zeros((-(-N // rows_per_block), D), dt)                 # (blocks, D)
    dx = np.empty((N, D), dt)                                                   # (N, D)
    args = (as_contiguous(dy, dt), as_contiguous(x, dt), w, as_contiguous(rstd, dt), dx, dweight_blocks,
              rows_per_block)
    others, (lo, hi) = _threads.start(_rms_norm_bwd_rows, args, N, D)   # the other threads' rows
    _rms_norm_bwd_rows(*args, lo, hi)                                   # this thread's rows
    _threads.join(others)
    if weight is None:
        return dx, None
    return dx, _sum_block_rows(dweight_blocks, weight.dtype)

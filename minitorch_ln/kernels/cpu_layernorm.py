"""LayerNorm forward and backward as compiled loops on the CPU: one pass per row, the math as written.

Read this file next to ``docs/layernorm_backward.md`` (section 3, the compact form; section 7, why
a compiled loop). The NumPy kernels in :mod:`minitorch_ln.kernels.layernorm` compute the same
formulas with whole-array operations; NumPy cannot fuse them, so each operation is one more pass
that writes a full ``(n, D)`` temporary (5 such passes forward, 7 backward). Here every row is
handled by a plain loop that Numba (https://numba.pydata.org) compiles to machine code, the way
llm.c's ``layernorm_forward`` / ``layernorm_backward`` are written in C: the row is read a few
times while it sits in the L1 cache, and ``y`` (or ``dx``) is written once.

Per row of length ``D`` (notation as in the docs)::

    forward    mean = Σ x / D,  var = Σ (x - mean)² / D,  rstd = 1 / sqrt(var + eps)
               y    = (x - mean) · rstd · γ + β
    backward   xhat = (x - mean) · rstd,  dxhat = dy · γ
               dx   = rstd · (dxhat - mean(dxhat) - xhat · mean(dxhat · xhat))
               dγ  += dy · xhat,  dβ += dy          (summed over rows)

The numerics are those of the NumPy kernels, which the tests hold these equal to:

- the row is shifted by its first element before the two-pass variance, so a constant row has
  deviations of exactly zero and its output is exactly ``β``;
- sums are taken in the input's own dtype (float32 or float64), as NumPy's and PyTorch's CPU
  kernels do; the compiler may reorder the additions (``fastmath`` "reassoc", which lets it add
  16 floats at a time) but may not assume away NaN or infinity, so a NaN still propagates;
- the backward re-centres ``x - mean`` by its row mean ``c``, since the saved ``mean`` is rounded;
- ``dγ``/``dβ`` are summed per block of rows and the blocks are added in order, so the result is
  bitwise the same on any number of threads (the blocks are those of the NumPy kernels).

Only float32 and float64 are compiled; float16 input (normalized in float32) and any array when
Numba is not installed go to the NumPy kernels. :func:`minitorch_ln.kernels.set_cpu_kernels`
chooses between the two; both are always tested.
"""

from __future__ import annotations

import numpy as np

from . import layernorm as _numpy_kernels

try:  # Numba is a dependency, but the package still works (on the NumPy kernels) without it
    import numba
except ImportError:  # pragma: no cover - exercised only where numba cannot be installed
    numba = None

AVAILABLE = numba is not None
COMPILED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

__all__ = ["AVAILABLE", "COMPILED_DTYPES", "layer_norm_fwd", "layer_norm_bwd", "layer_norm_stats"]


def _jit(fn):
    """Compile ``fn`` without the GIL (the row blocks run on threads), cached on disk.

    ``fastmath={"reassoc"}`` allows reordering sums (so that they vectorize), nothing else: no
    "nnan"/"ninf", so NaN and infinity behave as in NumPy, and no "contract" (fused multiply-adds),
    whose unrounded products would make ``dxhat - mean(dxhat)`` of a one-value row non-zero.
    ``error_model="numpy"``: a division by zero gives inf/NaN, as in NumPy, not an exception.
    """
    if numba is None:  # pragma: no cover
        return None
    return numba.njit(nogil=True, cache=True, fastmath={"reassoc"}, error_model="numpy")(fn)


# ==================================================================================================
# The loops, one row at a time. ``start:stop`` is a range of rows (one thread's share).
# ==================================================================================================


@_jit
def _row_stats(x, i, eps):
    """``(shift, mean_shifted, rstd)`` of row ``i``: ``mean = shift + mean_shifted``."""
    D = x.shape[1]
    d = x.dtype.type(D)
    shift = x[i, 0]                     # every row is shifted by its first element
    s = x.dtype.type(0)
    for j in range(D):
        s += x[i, j] - shift
    mean_shifted = s / d                # mean(x - shift)
    v = x.dtype.type(0)
    for j in range(D):                  # second pass: squared deviations from the mean
        xc = (x[i, j] - shift) - mean_shifted
        v += xc * xc
    rstd = x.dtype.type(1) / np.sqrt(v / d + eps)       # biased variance; eps inside the sqrt
    return shift, mean_shifted, rstd


@_jit
def _layer_norm_fwd_rows(x, weight, bias, eps, y, mean, rstd, start, stop):
    D = x.shape[1]
    for i in range(start, stop):
        shift, mean_shifted, r = _row_stats(x, i, eps)
        mean[i, 0] = shift + mean_shifted
        rstd[i, 0] = r
        for j in range(D):              # y = xhat · γ + β, exactly β where xhat = 0
            xhat = ((x[i, j] - shift) - mean_shifted) * r
            y[i, j] = xhat * weight[j] + bias[j]


@_jit
def _layer_norm_stats_rows(x, eps, mean, rstd, start, stop):
    for i in range(start, stop):
        shift, mean_shifted, r = _row_stats(x, i, eps)
        mean[i, 0] = shift + mean_shifted
        rstd[i, 0] = r


@_jit
def _layer_norm_bwd_rows(dy, x, weight, mean, rstd, dx, dweight_blocks, dbias_blocks, rows_per_block,
                         start, stop):
    D = x.shape[1]
    d = x.dtype.type(D)
    for i in range(start, stop):
        mu, r = mean[i, 0], rstd[i, 0]
        b = i // rows_per_block         # this row's block of dγ/dβ partial sums
        # re-centring: c = mean(x - mu) is zero up to the rounding of the saved mean
        c = x.dtype.type(0)
        for j in range(D):
            c += x[i, j] - mu
        c /= d
        # the two row means in dx's formula; dγ = Σ_rows dy · xhat and dβ = Σ_rows dy on the way
        sum_dxhat = x.dtype.type(0)
        sum_dxhat_xhat = x.dtype.type(0)
        for j in range(D):
            xhat = ((x[i, j] - mu) - c) * r
            dxhat = dy[i, j] * weight[j]
            sum_dxhat += dxhat
            sum_dxhat_xhat += dxhat * xhat
            dweight_blocks[b, j] += dy[i, j] * xhat
            dbias_blocks[b, j] += dy[i, j]
        mean_dxhat = sum_dxhat / d
        mean_dxhat_xhat = sum_dxhat_xhat / d
        for j in range(D):
            xhat = ((x[i, j] - mu) - c) * r
            dxhat = dy[i, j] * weight[j]
            #              term 1 (direct)  term 2 (via mean)  term 3 (via rstd, i.e. the variance)
            dx[i, j] = r * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat)


# ==================================================================================================
# The kernel interface (minitorch_ln/kernels/__init__.py): arrays in, arrays out
# ==================================================================================================


def _compiled(x) -> bool:
    """Whether ``x`` goes through the compiled loops (float32/float64 rows of at least one value)."""
    return AVAILABLE and x.dtype in COMPILED_DTYPES and x.ndim == 2 and x.shape[1] > 0


def _as(a, dtype):
    """``a`` as a C-contiguous array of ``dtype`` (no copy when it already is one)."""
    return np.ascontiguousarray(a, dtype=dtype)


def _run_rows(kernel, n_rows: int, row_len: int, *args) -> None:
    """``kernel(*args, start, stop)`` over runs of whole row blocks, one run per kernel thread."""
    runs = _numpy_kernels.row_block_runs(n_rows, row_len)
    _numpy_kernels.run_on_threads(lambda run: kernel(*args, run[0].start, run[-1].stop), runs)


def layer_norm_fwd(x, weight, bias, eps):
    """LayerNorm forward, compiled; the interface of :func:`minitorch_ln.kernels.layernorm.layer_norm_fwd`.

    ``x`` ``(N, D)`` float32/float64 (float16 goes to the NumPy kernel); ``weight``, ``bias``
    ``(D,)`` or None; returns ``(y (N, D), mean (N, 1), rstd (N, 1))`` in ``x``'s dtype.
    """
    if not _compiled(x):
        return _numpy_kernels.layer_norm_fwd(x, weight, bias, eps)
    N, D = x.shape
    dt = x.dtype
    x = _as(x, dt)
    w = np.ones(D, dt) if weight is None else _as(weight, dt)                    # (D,)  γ (1 without)
    b = np.zeros(D, dt) if bias is None else _as(bias, dt)                       # (D,)  β (0 without)
    y = np.empty((N, D), dt)                                                     # (N, D)
    mean, rstd = np.empty((N, 1), dt), np.empty((N, 1), dt)                      # (N, 1) each
    _run_rows(_layer_norm_fwd_rows, N, D, x, w, b, dt.type(eps), y, mean, rstd)
    return y, mean, rstd


def layer_norm_stats(x, eps):
    """Only ``(mean, rstd)`` ``(N, 1)`` of the rows of ``x`` ``(N, D)``, compiled (float16: NumPy)."""
    if not _compiled(x):
        return _numpy_kernels.layer_norm_stats(x, eps)
    N, D = x.shape
    dt = x.dtype
    mean, rstd = np.empty((N, 1), dt), np.empty((N, 1), dt)                      # (N, 1) each
    _run_rows(_layer_norm_stats_rows, N, D, _as(x, dt), dt.type(eps), mean, rstd)
    return mean, rstd


def layer_norm_bwd(dy, x, weight, mean, rstd):
    """LayerNorm backward, compiled; the interface of :func:`minitorch_ln.kernels.layernorm.layer_norm_bwd`.

    ``dy``, ``x`` ``(N, D)``; ``weight`` ``(D,)`` or None; ``mean``, ``rstd`` ``(N, 1)``. Returns
    ``(dx (N, D), dweight (D,), dbias (D,))``, the last two None without a weight and otherwise
    in the weight's dtype.
    """
    if not _compiled(x):
        return _numpy_kernels.layer_norm_bwd(dy, x, weight, mean, rstd)
    N, D = x.shape
    dt = x.dtype
    w = np.ones(D, dt) if weight is None else _as(weight, dt)                    # (D,)
    rows_per_block = _numpy_kernels.rows_per_block(N, D)
    n_blocks = -(-N // rows_per_block)
    dweight_blocks = np.zeros((n_blocks, D), dt)                                # (blocks, D)
    dbias_blocks = np.zeros((n_blocks, D), dt)                                  # (blocks, D)
    dx = np.empty((N, D), dt)                                                    # (N, D)
    _run_rows(_layer_norm_bwd_rows, N, D, _as(dy, dt), _as(x, dt), w, _as(mean, dt), _as(rstd, dt),
              dx, dweight_blocks, dbias_blocks, rows_per_block)
    if weight is None:
        return dx, None, None
    if n_blocks == 0:  # no rows: the sums are zeros
        return dx, np.zeros(D, weight.dtype), np.zeros(D, weight.dtype)
    # the blocks' partial sums, added in block order (the same on any number of threads)
    dweight = _numpy_kernels.sum_blocks(list(dweight_blocks)).astype(weight.dtype, copy=False)
    dbias = _numpy_kernels.sum_blocks(list(dbias_blocks)).astype(weight.dtype, copy=False)
    return dx, dweight, dbias

"""Normalization kernels on raw arrays: LayerNorm, RMSNorm and BatchNorm, forward and backward.

Read this file next to ``docs/layernorm_backward.md``, which derives every formula used here. Every
kernel works on a 2-D, C-contiguous array of *rows to normalize*: LayerNorm's ``(B, L, D)`` input
arrives as ``(N, D)`` with ``N = B·L``; BatchNorm's ``(N, C, L)`` arrives as ``(C, N·L)``, one row
per channel. The ops layer (``minitorch_ln/ops/normalization.py``) does that reshaping.

Notation, per row of length ``D``::

    mean = Σ x / D                      (N, 1)
    var  = Σ (x - mean)² / D            (N, 1)   the biased variance
    rstd = 1 / sqrt(var + eps)          (N, 1)   eps inside the square root
    xhat = (x - mean) · rstd            (N, D)
    y    = xhat · weight + bias         (N, D)   weight (γ) and bias (β) of shape (D,)

    dxhat   = dy · weight                                          (N, D)
    dx      = rstd · (dxhat - mean(dxhat) - xhat · mean(dxhat · xhat))   (N, D)
    dweight = Σ_rows dy · xhat,   dbias = Σ_rows dy                (D,)

Numerics, each explained where it is done:

- two-pass variance, never E[x²] - E[x]², and the rows are first shifted by their first element,
  so that a constant row has deviations of exactly zero and its output is exactly ``bias``; a row
  whose float32 squares overflow (values beyond about 1e19) is summed again in float64;
- float16 input is normalized in float32: statistics, ``xhat`` and the ``dweight``/``dbias`` sums
  are float32, the output and ``dx`` are cast back to float16;
- in backward ``xhat`` is re-centred, because the saved ``mean`` is rounded to the input's precision
  (for a float32 row ``1e4 + 1e-3·noise`` that rounding is half the spread of the row).

Written with ``xp = get_array_module(x)`` throughout, so the same code runs on CuPy arrays: it is
the GPU fallback for every kernel that ``cuda_layernorm`` does not define, and the oracle its tests
compare against. On the CPU, large inputs are cut into blocks of
rows that fit in the L2 cache and the blocks are spread over a few threads (see
:func:`_map_row_blocks`).
"""

from __future__ import annotations

import os
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..backend import get_array_module

__all__ = [
    "layer_norm_fwd", "layer_norm_bwd", "layer_norm_stats", "layer_norm_bwd_terms", "layer_norm_bwd_chain_rule",
    "rms_norm_fwd", "rms_norm_bwd", "batch_norm_fwd", "batch_norm_bwd", "batch_norm_fwd_ncl",
    "batch_norm_bwd_ncl", "stat_dtype", "set_num_threads", "get_num_threads",
]


def stat_dtype(dtype) -> np.dtype:
    """The dtype of statistics and parameter-gradient sums: float32 for float16 input, else the input's."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype == np.float16 else dtype


# ==================================================================================================
# Blocks of rows, spread over threads (CPU only)
# ==================================================================================================
#
# A straightforward NumPy LayerNorm makes about ten passes over the whole (N, D) array, each one
# streaming it from main memory, on one core. Three changes bring it closer to PyTorch:
#   1. cut the rows into blocks of about BLOCK_ELEMENTS values (a few hundred KB), so that all the
#      passes over one block run in the L2 cache and main memory is read and written once;
#   2. sum rows and columns with a matrix-vector product (``a @ ones``), which BLAS does several
#      times faster than ``a.sum(axis=1)``, and a row-wise dot product with ``einsum``, which needs
#      no temporary array;
#   3. split the rows into one contiguous chunk per thread. NumPy releases the GIL inside its
#      loops, so the threads really run on different cores. Each block writes its own rows of the
#      output, and the per-block partial sums of dweight/dbias are added afterwards in block
#      order, so the result does not depend on the number of threads.

BLOCK_ELEMENTS = 1 << 16  # 65,536 values: 256 KB of float32 per temporary
# At least this many rows per block, even when fewer fit in BLOCK_ELEMENTS: the per-block partial
# sums of dweight/dbias, (blocks, D) each, then cost at most 1/16 of dx (at D = 100,000 a block of
# one row each would double the backward's memory).
MIN_BLOCK_ROWS = 16


def _default_threads() -> int:
    """``MINITORCH_LN_NUM_THREADS`` if it is a positive integer, else ``min(cpus, 4)``."""
    default = max(1, min(os.cpu_count() or 1, 4))
    env = os.environ.get("MINITORCH_LN_NUM_THREADS")
    if env is None:
        return default
    if env.strip().isdigit() and int(env) > 0:
        return int(env)
    warnings.warn(f"MINITORCH_LN_NUM_THREADS: expected a positive integer, got {env!r}; using {default} threads",
                  stacklevel=2)
    return default


_num_threads = _default_threads()
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _forget_pool() -> None:
    # A forked child has none of the parent's threads: a pool inherited from it would never run
    # anything, so the child makes its own on first use.
    global _pool
    _pool = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def set_num_threads(n: int) -> None:
    """Use ``n`` threads for the CPU kernels (1 turns threading off; default ``min(cpus, 4)``,
    or the environment variable ``MINITORCH_LN_NUM_THREADS``).

    Safe while other threads run kernels: they finish on the pool they started with, which is
    then dropped (its idle threads exit when it is garbage-collected).

    Raises:
        ValueError: ``n`` is not an int >= 1.
    """
    global _num_threads
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_threads: expected an int >= 1, got {n!r}")
    with _pool_lock:
        _num_threads = n
        _forget_pool()


def get_num_threads() -> int:
    """The number of threads the CPU kernels use."""
    return _num_threads


def rows_per_block(n_rows: int, row_len: int) -> int:
    """Rows in each block: all of them for a small input, else about ``BLOCK_ELEMENTS`` values' worth
    (at least ``MIN_BLOCK_ROWS``)."""
    if n_rows * row_len <= BLOCK_ELEMENTS:
        return max(n_rows, 1)
    return max(MIN_BLOCK_ROWS, BLOCK_ELEMENTS // max(row_len, 1))


def row_block_runs(n_rows: int, row_len: int) -> list[list[slice]]:
    """The row blocks, grouped into one contiguous run of blocks per thread (at most ``get_num_threads()``).

    The blocks depend only on the shape, never on the thread count, so that sums taken block by
    block and added in block order are the same on any number of threads.
    """
    step = rows_per_block(n_rows, row_len)
    blocks = [slice(i, min(i + step, n_rows)) for i in range(0, n_rows, step)] or [slice(0, 0)]
    n_threads = min(_num_threads, len(blocks))
    per = -(-len(blocks) // n_threads)  # one run per thread: fewer hand-overs of the GIL than one task per block
    return [blocks[i:i + per] for i in range(0, len(blocks), per)]


def run_on_threads(fn, runs: list) -> list:
    """``[fn(run) for run in runs]``, on the kernel threads when there is more than one run."""
    if len(runs) == 1:
        return [fn(runs[0])]
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=_num_threads, thread_name_prefix="minitorch_ln-kernels")
        pool = _pool  # this call's pool, even if set_num_threads drops it meanwhile
    return list(pool.map(fn, runs))


def _map_row_blocks(fn, x) -> list:
    """``[fn(rows) for rows in blocks]`` over slices of ``x``'s rows, on threads for large NumPy arrays."""
    n_rows, row_len = x.shape
    if get_array_module(x) is not np:
        return [fn(slice(0, n_rows))]  # CuPy has its own parallelism
    results = run_on_threads(lambda run: [fn(b) for b in run], row_block_runs(n_rows, row_len))
    return [r for run in results for r in run]


def sum_blocks(parts):
    """Add per-block partial sums in block order (deterministic whatever the thread count)."""
    total = parts[0].copy()
    for p in parts[1:]:
        total += p
    return total


def _row_mean(a):
    """``(n, 1)`` mean of each row of ``a`` ``(n, D)``, summed by BLAS (``a @ ones``)."""
    xp = get_array_module(a)
    return (a @ xp.ones(a.shape[1], dtype=a.dtype))[:, None] / a.shape[1]


def _row_dot_mean(a, b):
    """``(n, 1)`` mean of ``a · b`` along each row, without a temporary ``(n, D)`` array."""
    xp = get_array_module(a)
    return xp.einsum("ij,ij->i", a, b)[:, None] / a.shape[1]


def _col_sum(a):
    """``(D,)`` sum of the rows of ``a`` ``(n, D)`` (``ones @ a``)."""
    xp = get_array_module(a)
    return xp.ones(a.shape[0], dtype=a.dtype) @ a


# ==================================================================================================
# The two pieces every normalization shares: row statistics, and dx from dxhat
# ==================================================================================================


def _row_stats(x, eps, sdt):
    """``(xc, mean, var, rstd)`` of each row of ``x`` ``(n, D)``: ``xc = x - mean`` ``(n, D)`` in ``sdt``.

    Two passes (the mean, then the squared deviations from it) after shifting every row by its
    first element. The shift changes nothing mathematically (variance is shift-invariant) but makes
    a constant row's deviations exactly zero, where a plain float32 mean of identical values can
    differ from them by one rounding; and it keeps ``x - shift`` exact for rows with a large mean
    and a small spread (Sterbenz: a difference of two floats within a factor 2 is exact).
    """
    xp = get_array_module(x)
    shift = x[:, :1].astype(sdt)                             # (n, 1)
    xc = xp.subtract(x, shift, dtype=sdt)                    # (n, D)  x - shift
    mean_shifted = _row_mean(xc)                             # (n, 1)  mean(x - shift)
    xc -= mean_shifted                                       # (n, D)  x - mean
    var = _row_dot_mean(xc, xc)                              # (n, 1)  biased: / D, not / (D - 1)
    rstd = 1.0 / xp.sqrt(var + eps)                          # (n, 1)  eps inside the sqrt
    _redo_overflowed_rows(xc, var, rstd, eps)
    mean = shift + mean_shifted                              # (n, 1)
    return xc, mean.astype(sdt, copy=False), var, rstd.astype(sdt, copy=False)


def _redo_overflowed_rows(a, ms, rstd, eps) -> None:
    """Where the float32 mean square ``ms`` of a row of ``a`` overflowed (values beyond about
    1e19), sum its squares again in float64 and rewrite ``ms`` and ``rstd`` (in place).

    ``rstd = 1/sqrt(inf) = 0`` would otherwise turn the row's output into ``β`` without a word;
    the mean square may itself exceed float32 (it stays inf), but ``rstd`` is representable.
    """
    if a.dtype == np.float64:  # squares overflow only beyond 1e154 there
        return
    xp = get_array_module(a)
    rows = xp.isposinf(ms[:, 0])                             # (n,)
    if not bool(rows.any()):
        return
    a64 = a[rows].astype(np.float64)                         # (k, D)
    ms64 = (a64 * a64).mean(axis=1, keepdims=True)           # (k, 1)
    with np.errstate(over="ignore"):  # a mean square beyond float32's range stays inf, as it should
        ms[rows] = ms64
    rstd[rows] = 1.0 / xp.sqrt(ms64 + eps)


def _xhat_from_stats(x, mean, rstd):
    """``xhat`` ``(n, D)`` recomputed from ``x`` and the saved statistics, re-centred.

    ``mean`` was rounded to the statistics dtype when saved. For a float32 row ``1e4 + 1e-3·noise``
    that rounding (up to 5e-4) is about half the row's spread, so ``x - mean`` would carry a
    constant offset and every term of ``dx`` that multiplies ``xhat`` would be wrong. Subtracting
    the row mean of ``x - mean`` once more removes the offset: ``Σ_D xhat = 0`` again, as the
    derivation assumes. On well-conditioned rows the correction is at the rounding level.
    """
    xp = get_array_module(x)
    xc = xp.subtract(x, mean, dtype=mean.dtype)              # (n, D)  x - mean (rounded mean)
    xc -= _row_mean(xc)                                      # (n, D)  re-centred
    xc *= rstd                                               # (n, D)  xhat
    return xc


def _dx_from_dxhat(dxhat, xhat, rstd, out=None):
    """``dx = rstd · (dxhat - mean(dxhat) - xhat · mean(dxhat · xhat))``, each row; ``(n, D)``.

    The compact form of the chain rule through ``xhat = (x - mean) · rstd`` (docs, section 3). The
    three terms are the three paths from ``x`` to the loss: directly through ``xhat``, through
    ``mean``, and through ``rstd`` (that is, through the variance). Overwrites ``dxhat`` and
    ``xhat`` (they are temporaries of the caller).
    """
    xp = get_array_module(dxhat)
    mean_dxhat = _row_mean(dxhat)                            # (n, 1)
    mean_dxhat_xhat = _row_dot_mean(dxhat, xhat)             # (n, 1)
    dx = dxhat
    dx -= mean_dxhat                          # term 1 (dxhat) and term 2 (through the mean)
    xhat *= mean_dxhat_xhat
    dx -= xhat                                # term 3 (through rstd, i.e. the variance)
    if out is None:
        dx *= rstd
        return dx
    return xp.multiply(dx, rstd, out=out, casting="same_kind")


# ==================================================================================================
# LayerNorm: rows of x (N, D); weight and bias (D,) along the row
# ==================================================================================================


def layer_norm_fwd(x, weight, bias, eps):
    """LayerNorm forward on the rows of ``x``.

    Args:
        x: ``(N, D)`` C-contiguous float16/32/64 array, one row per normalized group.
        weight, bias: ``(D,)`` arrays (γ and β) or ``None`` (float32 with float16 ``x`` is fine).
        eps: a float > 0, added to the variance inside the square root.
    Returns:
        ``(y, mean, rstd)``: ``y`` ``(N, D)`` in ``x``'s dtype; ``mean`` and ``rstd`` ``(N, 1)`` in
        :func:`stat_dtype` of ``x`` (float32 for float16).
    """
    xp = get_array_module(x)
    N, D = x.shape
    sdt = stat_dtype(x.dtype)
    y = xp.empty((N, D), dtype=x.dtype)                      # (N, D)
    mean = xp.empty((N, 1), dtype=sdt)                       # (N, 1)
    rstd = xp.empty((N, 1), dtype=sdt)                       # (N, 1)

    def rows(r):
        xc, mean[r], _, rstd[r] = _row_stats(x[r], eps, sdt)  # (n, D), (n, 1), (n, 1)
        xhat = xc
        xhat *= rstd[r]                                      # (n, D)  in place: xc becomes xhat
        if weight is not None:
            xhat *= weight                                   # (n, D)  · γ
        if bias is None:
            y[r] = xhat
        else:  # + β, written straight into y; exactly β where xhat = 0
            xp.add(xhat, bias, out=y[r], casting="same_kind")

    _map_row_blocks(rows, x)
    return y, mean, rstd


def layer_norm_stats(x, eps):
    """Only ``(mean, rstd)`` ``(N, 1)`` of the rows of ``x`` ``(N, D)`` (backward's recompute option)."""
    xp = get_array_module(x)
    N = x.shape[0]
    sdt = stat_dtype(x.dtype)
    mean = xp.empty((N, 1), dtype=sdt)
    rstd = xp.empty((N, 1), dtype=sdt)

    def rows(r):
        _, mean[r], _, rstd[r] = _row_stats(x[r], eps, sdt)

    _map_row_blocks(rows, x)
    return mean, rstd


def layer_norm_bwd(dy, x, weight, mean, rstd):
    """LayerNorm backward, the compact hand-derived form (docs/layernorm_backward.md, section 3).

    Args:
        dy: ``(N, D)`` upstream gradient, C-contiguous, ``x``'s dtype.
        x: ``(N, D)`` the forward's input.
        weight: ``(D,)`` or ``None``.
        mean, rstd: ``(N, 1)`` saved by :func:`layer_norm_fwd`.
    Returns:
        ``(dx, dweight, dbias)``: ``dx`` ``(N, D)`` in ``x``'s dtype; ``dweight`` and ``dbias``
        ``(D,)``, summed in the statistics dtype and returned in ``weight``'s dtype, or ``None``
        when ``weight`` is ``None``.
    """
    xp = get_array_module(x)
    N, D = x.shape
    sdt = mean.dtype
    dx = xp.empty((N, D), dtype=x.dtype)                     # (N, D)
    w = xp.ones(D, dtype=sdt) if weight is None else weight.astype(sdt, copy=False)   # (D,)  γ (1 without)

    # Below this rstd, rstd² underflows (float32: values beyond about 1e17 make rstd < 1e-17):
    # the arrangement below multiplies by rstd² and would lose the third term of dx. Such rows
    # take the plain form instead, which forms xhat first.
    tiny_rstd = float(np.sqrt(np.finfo(sdt).tiny)) * 1e3

    def tiny_rstd_rows(r, dy_r, rstd_r):
        xhat = _xhat_from_stats(x[r], mean[r], rstd_r)                    # (n, D)
        dxhat = dy_r * w                                                   # (n, D)
        parts = None if weight is None else (_col_sum(dy_r * xhat), _col_sum(dy_r))   # (D,) each
        _dx_from_dxhat(dxhat, xhat, rstd_r, out=dx[r])
        return parts

    def rows(r):
        # The same formula as _xhat_from_stats and _dx_from_dxhat, arranged so that every full
        # (n, D) pass that writes is one that cannot be avoided (NumPy cannot fuse; a write pass
        # costs about five BLAS read passes): xhat and dxhat are never formed. Each row sum they
        # would feed is a product of BLAS with an array that exists anyway, and the re-centring
        # constant c (see _xhat_from_stats) enters those sums as a per-row correction.
        dy_r, rstd_r = dy[r].astype(sdt, copy=False), rstd[r]       # (n, D), (n, 1)
        if bool((rstd_r < tiny_rstd).any()):
            return tiny_rstd_rows(r, dy_r, rstd_r)
        xc = xp.subtract(x[r], mean[r], dtype=sdt)           # (n, D)  x - mean (rounded mean)
        c = _row_mean(xc)                                    # (n, 1)  xhat = (xc - c) · rstd
        a = (dy_r @ w)[:, None]                              # (n, 1)  Σ dxhat,         dxhat = dy · γ
        p = dy_r * xc                                        # (n, D)
        pw = (p @ w)[:, None]                                # (n, 1)  Σ dxhat · xc
        mean_dxhat = a / D                                   # (n, 1)
        mean_dxhat_xhat = rstd_r * (pw - c * a) / D          # (n, 1)  mean(dxhat · xhat)
        # dx = rstd · (dxhat - mean(dxhat) - xhat · mean(dxhat · xhat))
        #    = rstd · dxhat - k · xc - beta,  k = rstd² · mean(dxhat · xhat),  beta = rstd · mean(dxhat) - k · c
        k = rstd_r * rstd_r * mean_dxhat_xhat                # (n, 1)
        beta = rstd_r * mean_dxhat - k * c                   # (n, 1)
        dx_r = xp.multiply(dy_r, w) if weight is not None else dy_r.copy()   # (n, D)  dxhat
        dx_r *= rstd_r                                       # term 1: rstd · dxhat
        xc *= k                                              # term 3 (through rstd): k · (xc - c) ...
        xc += beta                                           # ... with term 2 (through the mean)
        xp.subtract(dx_r, xc, out=dx[r], casting="same_kind")   # (n, D)
        if weight is None:
            return None
        ones = xp.ones((1, dy_r.shape[0]), dtype=sdt)       # (1, n)
        dweight = (rstd_r.T @ p - (rstd_r * c).T @ dy_r)[0]  # (D,)    dγ = Σ_rows dy · (xc - c) · rstd
        dbias = (ones @ dy_r)[0]                             # (D,)    dβ = Σ_rows dy
        return dweight, dbias

    parts = _map_row_blocks(rows, x)
    if weight is None:
        return dx, None, None
    dweight = sum_blocks([p[0] for p in parts]).astype(weight.dtype, copy=False)
    dbias = sum_blocks([p[1] for p in parts]).astype(weight.dtype, copy=False)
    return dx, dweight, dbias


def layer_norm_bwd_chain_rule(dy, x, weight, mean, rstd):
    """The same backward as :func:`layer_norm_bwd`, unrolled step by step through the forward graph.

    The forward, one named intermediate per step::

        mu = mean(x);  xc = x - mu;  var = mean(xc²);  rstd = (var + eps)^(-1/2);
        xhat = xc · rstd;  y = xhat · γ + β

    walked backwards, one line of the chain rule per step (docs, section 2). This is the form to
    learn from; :func:`layer_norm_bwd` is the form that runs, and the tests hold the two equal.
    Shapes and return value as :func:`layer_norm_bwd`; no blocking, no threads.
    """
    D = x.shape[1]
    sdt = mean.dtype
    x_s, dy_s = x.astype(sdt), dy.astype(sdt)                # (N, D)
    xc = x_s - mean                                          # (N, D)
    xc -= xc.mean(axis=1, keepdims=True)                     # re-centred, as in layer_norm_bwd
    xhat = xc * rstd                                         # (N, D)
    # y = xhat · γ + β
    dbias = dy_s.sum(axis=0)                                 # (D,)
    dweight = (dy_s * xhat).sum(axis=0)                      # (D,)
    dxhat = dy_s * weight if weight is not None else dy_s    # (N, D)
    # xhat = xc · rstd: two inputs, xc and rstd
    dxc = dxhat * rstd                                       # (N, D)  ∂xhat/∂xc = rstd
    drstd = (dxhat * xc).sum(axis=1, keepdims=True)          # (N, 1)  ∂xhat/∂rstd = xc, summed over the row
    # rstd = (var + eps)^(-1/2)
    dvar = drstd * (-0.5) * rstd**3                          # (N, 1)
    # var = Σ xc² / D: a second path into xc
    dxc += dvar * 2.0 * xc / D                               # (N, D)
    # xc = x - mu: into x directly, and into mu with a minus sign
    dmu = -dxc.sum(axis=1, keepdims=True)                    # (N, 1)
    # mu = Σ x / D
    dx = dxc + dmu / D                                       # (N, D)
    if weight is None:
        return dx.astype(x.dtype, copy=False), None, None
    return dx.astype(x.dtype, copy=False), dweight.astype(weight.dtype), dbias.astype(weight.dtype)


def layer_norm_bwd_terms(dy, x, weight, mean, rstd) -> dict:
    """The backward split into its terms, so that each can be checked on its own.

    Arguments as :func:`layer_norm_bwd`. Returns a dict of arrays, all in the statistics dtype
    (float32 for float16 input), keyed:

    - ``"xhat"`` ``(N, D)``: ``(x - mean) · rstd``;
    - ``"dxhat"`` ``(N, D)``: ``dy · weight`` (``dy`` when ``weight`` is None);
    - ``"dx_direct"`` ``(N, D)``: ``rstd · dxhat``, the path through ``xhat`` with ``mean`` and
      ``rstd`` held fixed (finite differences of ``Σ dy·y`` with frozen statistics);
    - ``"dx_via_mean"`` ``(N, D)``: ``-rstd · mean(dxhat)``, the path through ``mean`` (each row's
      entries are equal): differences of ``Σ dy·y`` moving ``x`` only inside ``mean(x)``;
    - ``"dx_via_rstd"`` ``(N, D)``: ``-rstd · xhat · mean(dxhat · xhat)``, the path through
      ``rstd``: differences moving ``x`` only inside ``rstd(x)``;
    - ``"dx"`` ``(N, D)``: the sum of the three, equal to :func:`layer_norm_bwd`'s ``dx``;
    - ``"dweight"``, ``"dbias"`` ``(D,)``: ``Σ_rows dy · xhat`` and ``Σ_rows dy`` (present whatever
      ``weight`` is).
    """
    xp = get_array_module(x)
    D = x.shape[1]
    sdt = mean.dtype
    dy_s = dy.astype(sdt)
    xhat = _xhat_from_stats(x, mean, rstd)                                    # (N, D)
    dxhat = dy_s * weight if weight is not None else dy_s                    # (N, D)
    dx_direct = rstd * dxhat                                                  # (N, D)
    dx_via_mean = xp.broadcast_to(-rstd * dxhat.sum(axis=1, keepdims=True) / D, dxhat.shape).copy()
    dx_via_rstd = -rstd * xhat * ((dxhat * xhat).sum(axis=1, keepdims=True) / D)  # (N, D)
    return {
        "xhat": xhat,
        "dxhat": dxhat,
        "dx_direct": dx_direct,
        "dx_via_mean": dx_via_mean,
        "dx_via_rstd": dx_via_rstd,
        "dx": dx_direct + dx_via_mean + dx_via_rstd,
        "dweight": (dy_s * xhat).sum(axis=0),
        "dbias": dy_s.sum(axis=0),
    }


# ==================================================================================================
# RMSNorm: rows of x (N, D), no centring; weight (D,)
# ==================================================================================================
#
#   rstd = 1 / sqrt(mean(x²) + eps),  xhat = x · rstd,  y = xhat · γ
#   dx = rstd · (dxhat - xhat · mean(dxhat · xhat)),  dγ = Σ_rows dy · xhat
# (LayerNorm's formula without the mean term: there is no mean to differentiate through.)


def rms_norm_fwd(x, weight, eps):
    """RMSNorm forward: ``x`` ``(N, D)``, ``weight`` ``(D,)`` or None → ``(y (N, D), rstd (N, 1))``."""
    xp = get_array_module(x)
    N, D = x.shape
    sdt = stat_dtype(x.dtype)
    y = xp.empty((N, D), dtype=x.dtype)
    rstd = xp.empty((N, 1), dtype=sdt)

    def rows(r):
        x_r = x[r].astype(sdt, copy=False)                                    # (n, D)
        ms = _row_dot_mean(x_r, x_r)                                          # (n, 1)  mean(x²)
        rstd_r = 1.0 / xp.sqrt(ms + eps)                                      # (n, 1)
        _redo_overflowed_rows(x_r, ms, rstd_r, eps)
        rstd[r] = rstd_r
        xhat = x_r * rstd[r]                                                  # (n, D)
        if weight is not None:
            xhat *= weight
        y[r] = xhat

    _map_row_blocks(rows, x)
    return y, rstd


def rms_norm_bwd(dy, x, weight, rstd):
    """RMSNorm backward → ``(dx (N, D), dweight (D,) or None)``, sums in the statistics dtype."""
    xp = get_array_module(x)
    N, D = x.shape
    sdt = rstd.dtype
    dx = xp.empty((N, D), dtype=x.dtype)

    def rows(r):
        xhat = xp.multiply(x[r], rstd[r], dtype=sdt)                          # (n, D)
        dy_r = dy[r].astype(sdt, copy=False)                                  # (n, D)
        dweight = None if weight is None else _col_sum(dy_r * xhat)           # (D,)  dγ = Σ_rows dy · xhat
        dxhat = dy_r * weight if weight is not None else dy_r                 # (n, D)
        mean_dxhat_xhat = _row_dot_mean(dxhat, xhat)                          # (n, 1)
        xhat *= mean_dxhat_xhat
        # dx = rstd · (dxhat - xhat · mean(dxhat · xhat))
        xp.multiply(dxhat - xhat, rstd[r], out=dx[r], casting="same_kind")
        return dweight

    parts = _map_row_blocks(rows, x)
    dweight = None if weight is None else sum_blocks(parts).astype(weight.dtype, copy=False)
    return dx, dweight


# ==================================================================================================
# BatchNorm: rows of x are channels, (C, M) with M = N·L; weight and bias (C,) across the rows
# ==================================================================================================
#
# The same statistics and the same dx formula as LayerNorm, over the other axis: BatchNorm
# normalizes each channel over the batch (and length), so γ and β scale whole rows here.


def batch_norm_fwd(x, weight, bias, eps):
    """BatchNorm forward with batch statistics: ``x`` ``(C, M)`` → ``(y, mean, rstd, var)``.

    ``weight``/``bias`` ``(C,)`` or None. ``y`` ``(C, M)`` in ``x``'s dtype; ``mean``, ``rstd`` and
    the biased batch variance ``var`` ``(C, 1)`` in :func:`stat_dtype` (``var`` feeds the running
    statistics, which take it unbiased: ``var · M / (M - 1)``).
    """
    sdt = stat_dtype(x.dtype)
    xc, mean, var, rstd = _row_stats(x, eps, sdt)            # (C, M), (C, 1), (C, 1), (C, 1)
    xhat = xc
    xhat *= rstd                                             # (C, M)
    if weight is not None:
        xhat *= weight[:, None]                              # (C, M)  γ per channel
    if bias is not None:
        xhat += bias[:, None]                                # (C, M)  β per channel
    return xhat.astype(x.dtype, copy=False), mean, rstd, var.astype(sdt, copy=False)


def batch_norm_bwd(dy, x, weight, mean, rstd):
    """BatchNorm backward (batch statistics): ``(dx (C, M), dweight (C,), dbias (C,))``.

    ``dweight``/``dbias`` are ``None`` when ``weight`` is None; sums in the statistics dtype,
    returned in ``weight``'s dtype.
    """
    sdt = mean.dtype
    xhat = _xhat_from_stats(x, mean, rstd)                   # (C, M)
    dy_s = dy.astype(sdt, copy=False)                        # (C, M)
    if weight is None:
        return _dx_from_dxhat(dy_s.copy(), xhat, rstd).astype(x.dtype, copy=False), None, None
    dweight = _row_dot_mean(dy_s, xhat)[:, 0] * x.shape[1]   # (C,)  Σ over the batch of dy · xhat
    dbias = _row_mean(dy_s)[:, 0] * x.shape[1]               # (C,)  Σ over the batch of dy
    dxhat = dy_s * weight[:, None]                           # (C, M)
    dx = _dx_from_dxhat(dxhat, xhat, rstd).astype(x.dtype, copy=False)   # (C, M)
    return dx, dweight.astype(weight.dtype, copy=False), dbias.astype(weight.dtype, copy=False)


def _channel_rows(a):
    """``(N, C, L)`` → the C-contiguous channel rows ``(C, N·L)`` (a transposing copy)."""
    xp = get_array_module(a)
    N, C, L = a.shape
    return xp.ascontiguousarray(a.transpose(1, 0, 2)).reshape(C, N * L)


def _from_channel_rows(rows, shape):
    """The inverse of :func:`_channel_rows`: ``(C, N·L)`` → ``(N, C, L)`` (a transposed view)."""
    N, C, L = shape
    return rows.reshape(C, N, L).transpose(1, 0, 2)


def batch_norm_fwd_ncl(x, weight, bias, eps):
    """BatchNorm forward on ``x`` ``(N, C, L)`` (the input's own layout) → ``(y (N, C, L), mean, rstd, var)``.

    The channel rows ``(C, N·L)`` through :func:`batch_norm_fwd`, and back.
    """
    y, mean, rstd, var = batch_norm_fwd(_channel_rows(x), weight, bias, eps)
    return _from_channel_rows(y, x.shape), mean, rstd, var


def batch_norm_bwd_ncl(dy, x, weight, mean, rstd):
    """BatchNorm backward on ``(N, C, L)`` arrays → ``(dx (N, C, L), dweight (C,), dbias (C,))``."""
    dx, dweight, dbias = batch_norm_bwd(_channel_rows(dy), _channel_rows(x), weight, mean, rstd)
    return _from_channel_rows(dx, x.shape), dweight, dbias

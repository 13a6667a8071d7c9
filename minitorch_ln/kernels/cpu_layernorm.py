"""LayerNorm (and RMSNorm, BatchNorm) forward and backward as compiled loops on the CPU, the math as written.

Read this file next to ``docs/layernorm_backward.md`` (section 3, the compact form; section 9, the
numerics and why a compiled loop). The NumPy kernels in :mod:`minitorch_ln.kernels.layernorm`
compute the same formulas with whole-array operations; NumPy cannot fuse them, so each operation
is one more pass that writes a full ``(n, D)`` temporary (5 such passes forward, 7 backward). Here every row is
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
  deviations of exactly zero and its output is exactly ``β``; a row whose float32 squares
  overflow (values beyond about 1e19) has its variance summed again in float64;
- a row's sums are taken in the input's own dtype (float32 or float64), as in the NumPy kernels
  (BatchNorm's per-channel sums, over a whole batch, in float64); the compiler may reorder the
  additions (``fastmath`` "reassoc", which lets it add 16 floats at a time) but may not assume
  away NaN or infinity, so a NaN still propagates;
- the backward re-centres ``x - mean`` by its row mean ``c``, since the saved ``mean`` is rounded;
- ``dγ``/``dβ`` are summed per block of rows and the blocks are added in order, so the result is
  bitwise the same on any number of threads (the blocks are those of the NumPy kernels).

RMSNorm and BatchNorm (batch statistics) are here too, as the same kind of loop: RMSNorm is
LayerNorm without the centring; BatchNorm is LayerNorm over each channel ``x[:, c, :]`` of an
``(N, C, L)`` input, read in place (no transposed copy), with ``γ``, ``β`` per channel.

Only float32 and float64 are compiled; float16 input (normalized in float32) and any array when
Numba is not installed go to the NumPy kernels. :func:`minitorch_ln.kernels.set_cpu_kernels`
chooses between the two; both are always tested.
"""

from __future__ import annotations

import numpy as np

from . import layernorm as _numpy_kernels

try:  # Numba is a dependency, but the package still works (on the NumPy kernels) without it
    import numba
except Exception:  # noqa: BLE001 - not installed, or broken (an import that raises anything)
    numba = None

AVAILABLE = numba is not None
COMPILED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

__all__ = [
    "AVAILABLE", "COMPILED_DTYPES", "layer_norm_fwd", "layer_norm_bwd", "layer_norm_stats",
    "rms_norm_fwd", "rms_norm_bwd", "batch_norm_fwd_ncl", "batch_norm_bwd_ncl",
]


def _jit(fn):
    """Compile ``fn`` without the GIL (the row blocks run on threads), cached on disk.

    ``fastmath={"reassoc"}`` allows reordering sums (so that they vectorize), nothing else: no
    "nnan"/"ninf", so NaN and infinity behave as in NumPy, and no "contract" (fused multiply-adds),
    whose unrounded products would make ``dxhat - mean(dxhat)`` of a one-value row non-zero.
    ``error_model="numpy"``: a division by zero gives inf/NaN, as in NumPy, not an exception.

    Caching needs a writable folder: ``__pycache__`` beside this file, else Numba's user cache
    (``NUMBA_CACHE_DIR``, ``~/.cache``). Where there is none (a read-only install and home),
    Numba refuses ``cache=True`` and the loops are compiled anew in each process instead.
    ``NUMBA_DISABLE_JIT=1`` runs them as plain Python, to step through in a debugger (about a
    hundred times slower than the NumPy kernels).
    """
    if numba is None:  # pragma: no cover
        return None
    options = dict(nogil=True, fastmath={"reassoc"}, error_model="numpy")
    try:
        return numba.njit(cache=True, **options)(fn)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return numba.njit(cache=False, **options)(fn)


# ==================================================================================================
# The loops, one row at a time. ``start:stop`` is a range of rows (one thread's share).
# ==================================================================================================


@_jit
def _row_stats(x, i, eps):
    """``(shift, mean_shifted, var, rstd)`` of row ``i``: ``mean = shift + mean_shifted``."""
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
    var = v / d                         # biased: / D, not / (D - 1)
    if var == np.inf:                   # float32 squares overflow for |x - mean| > 1.8e19: redo in float64
        var, rstd = _var_rstd_float64(x, i, shift, mean_shifted, eps)
    else:
        rstd = x.dtype.type(1) / np.sqrt(var + eps)     # eps inside the sqrt
    return shift, mean_shifted, var, rstd


@_jit
def _var_rstd_float64(x, i, shift, mean_shifted, eps):
    """Row ``i``'s variance and rstd with the squares summed in float64, cast back to ``x``'s dtype.

    Only for rows whose float32 sum of squares overflowed: the variance may itself exceed float32
    (then ``var`` is inf), but ``rstd`` is representable, so ``y`` stays right instead of
    collapsing to ``β`` (``rstd = 1/sqrt(inf) = 0``).
    """
    D = x.shape[1]
    v = 0.0
    for j in range(D):
        xc = np.float64((x[i, j] - shift) - mean_shifted)
        v += xc * xc
    return x.dtype.type(v / D), x.dtype.type(1.0 / np.sqrt(v / D + eps))


@_jit
def _layer_norm_fwd_rows(x, weight, bias, eps, y, mean, rstd, start, stop):
    D = x.shape[1]
    for i in range(start, stop):
        shift, mean_shifted, _, r = _row_stats(x, i, eps)
        mean[i, 0] = shift + mean_shifted
        rstd[i, 0] = r
        for j in range(D):              # y = xhat · γ + β, exactly β where xhat = 0
            xhat = ((x[i, j] - shift) - mean_shifted) * r
            y[i, j] = xhat * weight[j] + bias[j]


@_jit
def _layer_norm_stats_rows(x, eps, mean, rstd, start, stop):
    for i in range(start, stop):
        shift, mean_shifted, _, r = _row_stats(x, i, eps)
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


# RMSNorm (no centring): rstd = 1 / sqrt(mean(x²) + eps), xhat = x · rstd, y = xhat · γ,
#   dx = rstd · (dxhat - xhat · mean(dxhat · xhat)),  dγ = Σ_rows dy · xhat   (docs, section 7)


@_jit
def _rms_norm_fwd_rows(x, weight, eps, y, rstd, start, stop):
    D = x.shape[1]
    d = x.dtype.type(D)
    for i in range(start, stop):
        ms = x.dtype.type(0)
        for j in range(D):
            ms += x[i, j] * x[i, j]
        if ms == np.inf:                # float32 squares overflow for |x| > 1.8e19: redo in float64
            _, r = _var_rstd_float64(x, i, x.dtype.type(0), x.dtype.type(0), eps)
        else:
            r = x.dtype.type(1) / np.sqrt(ms / d + eps)
        rstd[i, 0] = r
        for j in range(D):
            y[i, j] = x[i, j] * r * weight[j]


@_jit
def _rms_norm_bwd_rows(dy, x, weight, rstd, dx, dweight_blocks, rows_per_block, start, stop):
    D = x.shape[1]
    d = x.dtype.type(D)
    for i in range(start, stop):
        r = rstd[i, 0]
        b = i // rows_per_block
        sum_dxhat_xhat = x.dtype.type(0)
        for j in range(D):
            xhat = x[i, j] * r
            sum_dxhat_xhat += dy[i, j] * weight[j] * xhat
            dweight_blocks[b, j] += dy[i, j] * xhat
        mean_dxhat_xhat = sum_dxhat_xhat / d
        for j in range(D):
            #              term 1 (direct)     term 2 (via rstd)
            dx[i, j] = r * (dy[i, j] * weight[j] - x[i, j] * r * mean_dxhat_xhat)


# BatchNorm with batch statistics, on the input's own layout (N, C, L): one mean and variance per
# channel c over the N·L values x[:, c, :], and γ, β per channel; otherwise LayerNorm's formulas
# (docs, section 8). Working in place of the (C, N·L) rows of the NumPy kernels saves the two
# transposing copies each way (for (4096, 256) float32 they took 7 ms each). The per-channel sums
# run over the whole batch, often millions of values, so they are accumulated in float64.
#
# Each pass is a helper whose innermost loop runs along memory, so that it vectorizes: over the
# channels for an (N, C) input (L = 1), along L otherwise. Single-threaded.


@_jit
def _channel_sums(x, shift, mean_shifted, squares, out):
    """``out[c] += Σ xc`` (or ``Σ xc²`` with ``squares``), ``xc = (x - shift[c]) - mean_shifted[c]``."""
    N, C, L = x.shape
    for n in range(N):
        if L == 1:
            for c in range(C):
                xc = (x[n, c, 0] - shift[c]) - mean_shifted[c]
                out[c] += xc * xc if squares else xc
        else:
            for c in range(C):
                acc = 0.0
                for j in range(L):
                    xc = (x[n, c, j] - shift[c]) - mean_shifted[c]
                    acc += xc * xc if squares else xc
                out[c] += acc


@_jit
def _channel_normalize(x, shift, mean_shifted, scale, bias, y):
    """``y = ((x - shift[c]) - mean_shifted[c]) · scale[c] + bias[c]``: exactly β where x is constant."""
    N, C, L = x.shape
    for n in range(N):
        if L == 1:
            for c in range(C):
                y[n, c, 0] = ((x[n, c, 0] - shift[c]) - mean_shifted[c]) * scale[c] + bias[c]
        else:
            for c in range(C):
                for j in range(L):
                    y[n, c, j] = ((x[n, c, j] - shift[c]) - mean_shifted[c]) * scale[c] + bias[c]


@_jit
def _channel_grad_sums(dy, x, mu, sum_xc, sum_dy, sum_dy_xc):
    """``Σ (x - mu[c])``, ``Σ dy`` and ``Σ dy · (x - mu[c])`` per channel, in one pass."""
    N, C, L = x.shape
    for n in range(N):
        if L == 1:
            for c in range(C):
                xc = x[n, c, 0] - mu[c]
                sum_xc[c] += xc
                sum_dy[c] += dy[n, c, 0]
                sum_dy_xc[c] += dy[n, c, 0] * xc
        else:
            for c in range(C):
                a, b, d = 0.0, 0.0, 0.0
                for j in range(L):
                    xc = x[n, c, j] - mu[c]
                    a += xc
                    b += dy[n, c, j]
                    d += dy[n, c, j] * xc
                sum_xc[c] += a
                sum_dy[c] += b
                sum_dy_xc[c] += d


@_jit
def _channel_dx(dy, x, mu, cen, r, weight, mean_dxhat, mean_dxhat_xhat, dx):
    """``dx = rstd · (dxhat - mean(dxhat) - xhat · mean(dxhat · xhat))`` per channel."""
    N, C, L = x.shape
    for n in range(N):
        if L == 1:
            for c in range(C):
                xhat = ((x[n, c, 0] - mu[c]) - cen[c]) * r[c]
                dx[n, c, 0] = r[c] * (dy[n, c, 0] * weight[c] - mean_dxhat[c] - xhat * mean_dxhat_xhat[c])
        else:
            for c in range(C):
                for j in range(L):
                    xhat = ((x[n, c, j] - mu[c]) - cen[c]) * r[c]
                    #                 term 1 (direct)        term 2 (via mean)   term 3 (via rstd)
                    dx[n, c, j] = r[c] * (dy[n, c, j] * weight[c] - mean_dxhat[c] - xhat * mean_dxhat_xhat[c])


@_jit
def _batch_norm_fwd_ncl(x, weight, bias, eps, y, mean, rstd, var):
    N, C, L = x.shape
    m = np.float64(N * L)
    shift = np.empty(C)                 # (C,) float64: each channel shifted by its first value
    for c in range(C):
        shift[c] = x[0, c, 0]
    s = np.zeros(C)
    _channel_sums(x, shift, np.zeros(C), False, s)              # (C,) Σ (x - shift)
    mean_shifted = s / m
    v = np.zeros(C)
    _channel_sums(x, shift, mean_shifted, True, v)              # (C,) Σ (x - mean)², the second pass
    r = 1.0 / np.sqrt(v / m + eps)      # biased variance, eps inside the sqrt
    for c in range(C):
        mean[c, 0], var[c, 0], rstd[c, 0] = shift[c] + mean_shifted[c], v[c] / m, r[c]
    _channel_normalize(x, shift, mean_shifted, r * weight, bias, y)


@_jit
def _batch_norm_bwd_ncl(dy, x, weight, mean, rstd, dx, dweight, dbias):
    N, C, L = x.shape
    m = np.float64(N * L)
    mu, r = np.empty(C), np.empty(C)
    for c in range(C):
        mu[c], r[c] = mean[c, 0], rstd[c, 0]
    sum_xc, sum_dy, sum_dy_xc = np.zeros(C), np.zeros(C), np.zeros(C)
    _channel_grad_sums(dy, x, mu, sum_xc, sum_dy, sum_dy_xc)
    cen = sum_xc / m                    # re-centring: xhat = (x - mu - cen) · rstd
    sum_dy_xhat = r * (sum_dy_xc - cen * sum_dy)                # (C,) Σ dy · xhat = dγ
    for c in range(C):
        dweight[c], dbias[c] = sum_dy_xhat[c], sum_dy[c]        # dβ = Σ dy
    mean_dxhat = weight * sum_dy / m                            # (C,) mean(dxhat), dxhat = dy · γ
    mean_dxhat_xhat = weight * sum_dy_xhat / m                  # (C,) mean(dxhat · xhat)
    _channel_dx(dy, x, mu, cen, r, weight, mean_dxhat, mean_dxhat_xhat, dx)


# ==================================================================================================
# The kernel interface (minitorch_ln/kernels/__init__.py): arrays in, arrays out
# ==================================================================================================


def _compiled(x) -> bool:
    """Whether ``x`` goes through the compiled loops (float32/float64 rows of at least one value)."""
    return AVAILABLE and x.dtype in COMPILED_DTYPES and x.ndim == 2 and x.shape[1] > 0


def _check(op: str, x, dy=None, weight=None, bias=None, mean=None, rstd=None, per_row: bool = False) -> None:
    """Raise ValueError unless the arrays fit ``x``: compiled loops do not check their indices.

    ``weight``/``bias`` have one value per column of ``x`` ``(N, D)`` (or per channel of an
    ``(N, C, L)`` BatchNorm input: ``per_row``), ``dy`` has ``x``'s shape, ``mean``/``rstd`` one
    value per row (per channel) as ``(rows, 1)``.
    """
    n_stats = x.shape[1] if per_row else x.shape[0]
    n_params = x.shape[1]
    for name, a, shape in (("dy", dy, x.shape), ("weight", weight, (n_params,)), ("bias", bias, (n_params,)),
                           ("mean", mean, (n_stats, 1)), ("rstd", rstd, (n_stats, 1))):
        if a is not None and tuple(a.shape) != tuple(shape):
            raise ValueError(f"{op}: expected {name} of shape {tuple(shape)} for x of shape {tuple(x.shape)}, "
                             f"got {tuple(a.shape)}")


def _compiled_ncl(x) -> bool:
    """Whether BatchNorm's ``x`` ``(N, C, L)`` goes through the compiled loops (float32/64, not empty)."""
    return AVAILABLE and x.dtype in COMPILED_DTYPES and x.ndim == 3 and x.size > 0


def _as(a, dtype):
    """``a`` as a C-contiguous array of ``dtype`` (no copy when it already is one)."""
    return np.ascontiguousarray(a, dtype=dtype)


def _sum_block_rows(blocks, dtype):
    """``(D,)``: the rows of the ``(blocks, D)`` partial sums added in block order (zeros for no rows)."""
    if len(blocks) == 0:
        return np.zeros(blocks.shape[1], dtype)
    return _numpy_kernels.sum_blocks(list(blocks)).astype(dtype, copy=False)


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
    _check("layer_norm_fwd", x, weight=weight, bias=bias)
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
    _check("layer_norm_bwd", x, dy=dy, weight=weight, mean=mean, rstd=rstd)
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
    # added in block order: the same on any number of threads
    return dx, _sum_block_rows(dweight_blocks, weight.dtype), _sum_block_rows(dbias_blocks, weight.dtype)


def rms_norm_fwd(x, weight, eps):
    """RMSNorm forward, compiled: ``x`` ``(N, D)``, ``weight`` ``(D,)`` or None → ``(y (N, D), rstd (N, 1))``."""
    if not _compiled(x):
        return _numpy_kernels.rms_norm_fwd(x, weight, eps)
    _check("rms_norm_fwd", x, weight=weight)
    N, D = x.shape
    dt = x.dtype
    w = np.ones(D, dt) if weight is None else _as(weight, dt)                    # (D,)
    y, rstd = np.empty((N, D), dt), np.empty((N, 1), dt)                         # (N, D), (N, 1)
    _run_rows(_rms_norm_fwd_rows, N, D, _as(x, dt), w, dt.type(eps), y, rstd)
    return y, rstd


def rms_norm_bwd(dy, x, weight, rstd):
    """RMSNorm backward, compiled → ``(dx (N, D), dweight (D,) or None)`` (dweight in the weight's dtype)."""
    if not _compiled(x):
        return _numpy_kernels.rms_norm_bwd(dy, x, weight, rstd)
    _check("rms_norm_bwd", x, dy=dy, weight=weight, rstd=rstd)
    N, D = x.shape
    dt = x.dtype
    w = np.ones(D, dt) if weight is None else _as(weight, dt)                    # (D,)
    rows_per_block = _numpy_kernels.rows_per_block(N, D)
    dweight_blocks = np.zeros((-(-N // rows_per_block), D), dt)                 # (blocks, D)
    dx = np.empty((N, D), dt)                                                    # (N, D)
    _run_rows(_rms_norm_bwd_rows, N, D, _as(dy, dt), _as(x, dt), w, _as(rstd, dt), dx, dweight_blocks,
              rows_per_block)
    if weight is None:
        return dx, None
    return dx, _sum_block_rows(dweight_blocks, weight.dtype)


def batch_norm_fwd_ncl(x, weight, bias, eps):
    """BatchNorm forward (batch statistics), compiled, on ``x`` ``(N, C, L)`` → ``(y, mean, rstd, var)``.

    ``weight``/``bias`` ``(C,)`` or None; ``y`` ``(N, C, L)``; ``mean``, ``rstd`` and the biased
    ``var`` ``(C, 1)``, all in ``x``'s dtype. Single-threaded.
    """
    if not _compiled_ncl(x):
        return _numpy_kernels.batch_norm_fwd_ncl(x, weight, bias, eps)
    _check("batch_norm_fwd_ncl", x, weight=weight, bias=bias, per_row=True)
    N, C, L = x.shape
    dt = x.dtype
    w = np.ones(C, dt) if weight is None else _as(weight, dt)                    # (C,)
    b = np.zeros(C, dt) if bias is None else _as(bias, dt)                       # (C,)
    y = np.empty((N, C, L), dt)                                                  # (N, C, L)
    mean, rstd, var = np.empty((C, 1), dt), np.empty((C, 1), dt), np.empty((C, 1), dt)
    _batch_norm_fwd_ncl(_as(x, dt), w, b, float(eps), y, mean, rstd, var)
    return y, mean, rstd, var


def batch_norm_bwd_ncl(dy, x, weight, mean, rstd):
    """BatchNorm backward (batch statistics), compiled, on ``(N, C, L)`` → ``(dx, dweight (C,), dbias (C,))``.

    ``dweight``/``dbias`` are None when ``weight`` is None, else in the weight's dtype.
    """
    if not _compiled_ncl(x):
        return _numpy_kernels.batch_norm_bwd_ncl(dy, x, weight, mean, rstd)
    _check("batch_norm_bwd_ncl", x, dy=dy, weight=weight, mean=mean, rstd=rstd, per_row=True)
    N, C, L = x.shape
    dt = x.dtype
    w = np.ones(C, dt) if weight is None else _as(weight, dt)                    # (C,)
    dx, dweight, dbias = np.empty((N, C, L), dt), np.empty(C, dt), np.empty(C, dt)
    _batch_norm_bwd_ncl(_as(dy, dt), _as(x, dt), w, _as(mean, dt), _as(rstd, dt), dx, dweight, dbias)
    if weight is None:
        return dx, None, None
    return dx, dweight.astype(weight.dtype, copy=False), dbias.astype(weight.dtype, copy=False)

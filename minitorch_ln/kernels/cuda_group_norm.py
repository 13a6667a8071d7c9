"""GroupNorm forward and backward for CuPy arrays: LayerNorm's CUDA row kernels plus three small kernels.

Same formulas and signatures as ``kernels/group_norm.py`` (the oracle; docs, section 12). A group is
a LayerNorm row: the C-contiguous ``(N, C, L)`` input viewed as ``(N·G, C/G·L)`` rows (no copy) goes
through ``cuda_layer_norm.layer_norm_fwd`` / ``layer_norm_bwd`` without parameters, which do the
statistics (two-pass from registers, shifted, re-centred in backward; CuPy array expressions for
rows too long for the registers). What is per channel is done here:

- ``gn_affine``: ``y = xhat · γ[c] + β[c]`` over the ``(N, C, L)`` layout (in place on ``xhat``);
- ``gn_dxhat``: ``dxhat = dy · γ[c]``, the upstream gradient of the parameter-free row backward,
  whose ``dx = rstd·(dxhat - mean(dxhat) - xhat·mean(dxhat·xhat))`` is then GroupNorm's ``dx``;
- ``gn_channel_sums``: per ``(n, c)``, one warp sums ``x - mean``, ``dy`` and ``dy · (x - mean)``
  over the ``L`` values (fixed order, no atomics: the same bits every run). From these ``(N, C)``
  sums, small array expressions give ``dγ[c] = Σ_n rstd·(Σ_l dy·(x - mean) - cen·Σ_l dy)`` (``cen``:
  the re-centring constant of the group, as the row kernel uses it) and ``dβ[c] = Σ_{n,l} dy``.

float16 is computed in float32: the input is converted to float32 rows first (so ``xhat`` is not
rounded to float16 before γ is applied), statistics and sums in float32, ``y`` and ``dx`` float16.
"""

from __future__ import annotations

import numpy as np

from . import cuda_common, cuda_layer_norm
from .cuda_common import CTYPE, check_kernel_dtype, device_of_array
from .layer_norm import stat_dtype

__all__ = ["group_norm_fwd", "group_norm_bwd", "example_kernels", "SOURCE"]

SOURCE = r"""
// y[i] = xhat[i] * weight[c] + bias[c] on the (N, C, L) layout, c = (i / L) % C. xhat is in the
// accumulation type of T and may be y's own memory (each element is read, then written, by one thread).
template <typename T, typename W>
__global__ void gn_affine(const typename Acc<T>::type* xhat, const W* __restrict__ weight,
                          const W* __restrict__ bias, T* y, long long total, int C, int L,
                          int has_weight, int has_bias) {
    typedef typename Acc<T>::type A;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int c = (int)((i / L) % C);
        A o = xhat[i];
        if (has_weight) o *= (A)to_acc(weight[c]);
        if (has_bias) o += (A)to_acc(bias[c]);    // exactly bias where xhat = 0
        y[i] = cast_to<T>(o);
    }
}

// dxhat[i] = dy[i] * weight[c] in the accumulation type, c = (i / L) % C.
template <typename T, typename W>
__global__ void gn_dxhat(const T* __restrict__ dy, const W* __restrict__ weight,
                         typename Acc<T>::type* __restrict__ dxhat, long long total, int C, int L) {
    typedef typename Acc<T>::type A;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        dxhat[i] = to_acc(dy[i]) * (A)to_acc(weight[(int)((i / L) % C)]);
    }
}

// One warp per (n, c) row of L values (blockDim = (32, 8)): the sums of xc = x - mean[n, g], of dy
// and of dy * xc, each written to index n * C + c.
template <typename T>
__global__ void gn_channel_sums(const T* __restrict__ dy, const T* __restrict__ x,
                                const typename Acc<T>::type* __restrict__ mean,
                                typename Acc<T>::type* __restrict__ sum_xc,
                                typename Acc<T>::type* __restrict__ sum_dy,
                                typename Acc<T>::type* __restrict__ sum_dy_xc,
                                long long NC, int C, int L, int cpg) {
    typedef typename Acc<T>::type A;
    const long long row = (long long)blockIdx.x * blockDim.y + threadIdx.y;
    const bool valid = row < NC;              // no early return: every lane must reach warp_sum
    const int G = C / cpg;
    const A mu = valid ? mean[(row / C) * G + (int)(row % C) / cpg] : (A)0;
    const T* xr = x + (valid ? row : 0) * (long long)L;
    const T* dr = dy + (valid ? row : 0) * (long long)L;
    A a = 0, b = 0, d = 0;
    if (valid) {
        for (int j = threadIdx.x; j < L; j += 32) {
            const A xc = to_acc(xr[j]) - mu, g = to_acc(dr[j]);
            a += xc;
            b += g;
            d += g * xc;
        }
    }
    a = warp_sum(a);
    b = warp_sum(b);
    d = warp_sum(d);
    if (valid && threadIdx.x == 0) { sum_xc[row] = a; sum_dy[row] = b; sum_dy_xc[row] = d; }
}
"""

THREADS = 256  # per block of the elementwise kernels


def _check_x(x, num_groups, what: str):
    check_kernel_dtype(x, what)
    if x.ndim != 3 or not x.flags.c_contiguous:
        raise ValueError(f"{what}: expected a C-contiguous array of shape (N, C, L), got shape {x.shape}")
    if num_groups < 1 or x.shape[1] % num_groups:
        raise ValueError(f"{what}: expected num_groups dividing the {x.shape[1]} channels of x {x.shape}, "
                         f"got {num_groups}")


def _param(p, x, like, what: str):
    """``p`` ``(C,)`` C-contiguous in the dtype the kernels read: float32 for float16 ``x`` with a
    float32 ``like`` (the weight, or the bias without one), else ``x``'s dtype."""
    if p is None:
        return None
    if p.shape != (x.shape[1],):
        raise ValueError(f"{what}: expected shape ({x.shape[1]},), one value per channel of x {x.shape}, got {p.shape}")
    dtype = np.float32 if (x.dtype == np.float16 and like.dtype == np.float32) else x.dtype
    return p if (p.dtype == dtype and p.flags.c_contiguous) else p.astype(dtype, order="C")


def _elementwise_grid(total: int) -> tuple:
    blocks = min(-(-total // THREADS), 8 * cuda_common.launcher.num_sms())
    return (max(blocks, 1), 1, 1), (THREADS, 1, 1)


def group_norm_fwd(x, weight, bias, num_groups, eps):
    """Fused GroupNorm forward of a CuPy array ``x`` ``(N, C, L)``; see ``kernels/group_norm.py``.

    Returns ``(y (N, C, L), mean (N, G), rstd (N, G))``: ``y`` in ``x``'s dtype, the statistics in
    float32 for float16 input, else in ``x``'s dtype.

    Raises:
        TypeError: a dtype other than float16/32/64. ValueError: ``x`` not C-contiguous
        ``(N, C, L)``, ``num_groups`` not dividing ``C``, parameters not ``(C,)``.
    """
    _check_x(x, num_groups, "group_norm_fwd")
    N, C, L = x.shape
    G = num_groups
    like = weight if weight is not None else bias
    w = _param(weight, x, like, "group_norm_fwd: weight")
    b = _param(bias, x, like, "group_norm_fwd: bias")
    xp = cuda_common.array_module(x)
    sdt = stat_dtype(x.dtype)
    rows = x.reshape(N * G, (C // G) * L).astype(sdt, copy=False)                # (N·G, C/G·L)
    xhat, mean, rstd = cuda_layer_norm.layer_norm_fwd(rows, None, None, eps)      # (N·G, C/G·L), (N·G, 1) ×2
    mean, rstd = mean.reshape(N, G), rstd.reshape(N, G)                          # (N, G) each
    if w is None and b is None:
        return xhat.reshape(N, C, L).astype(x.dtype, copy=False), mean, rstd
    y = xhat.reshape(N, C, L) if x.dtype == sdt else xp.empty((N, C, L), x.dtype)   # (N, C, L)
    pdt = (w if w is not None else b).dtype
    dummy = xp.empty((1,), dtype=pdt)  # stands for a missing weight/bias (never read)
    if x.size:
        grid, block = _elementwise_grid(x.size)
        name = f"gn_affine<{CTYPE[x.dtype]}, {CTYPE[pdt]}>"
        args = (xhat, w if w is not None else dummy, b if b is not None else dummy, y, np.int64(x.size),
                np.int32(C), np.int32(L), np.int32(w is not None), np.int32(b is not None))
        with device_of_array(x):
            cuda_common.launcher.launch(SOURCE, name, grid, block, args)
    return y, mean, rstd


def group_norm_bwd(dy, x, weight, mean, rstd, num_groups):
    """Fused GroupNorm backward of CuPy arrays → ``(dx (N, C, L), dweight (C,), dbias (C,))``.

    ``dweight``/``dbias`` are summed in the statistics dtype and returned in ``weight``'s dtype, or
    None without a weight. Deterministic: no float atomics.

    Raises:
        TypeError / ValueError: as :func:`group_norm_fwd`, and when ``dy`` does not match ``x`` or
        ``mean``/``rstd`` are not ``(N, G)``.
    """
    _check_x(x, num_groups, "group_norm_bwd")
    if dy.shape != x.shape or dy.dtype != x.dtype:
        raise ValueError(f"group_norm_bwd: dy must match x, got dy {dy.shape} {dy.dtype} and x {x.shape} {x.dtype}")
    N, C, L = x.shape
    G = num_groups
    if mean.shape != (N, G) or rstd.shape != (N, G):
        raise ValueError(f"group_norm_bwd: expected mean and rstd of shape {(N, G)}, got {mean.shape} and {rstd.shape}")
    w = _param(weight, x, weight, "group_norm_bwd: weight")
    xp = cuda_common.array_module(x)
    sdt = stat_dtype(x.dtype)
    dy = xp.ascontiguousarray(dy)
    mean = xp.ascontiguousarray(mean, dtype=sdt)                                  # (N, G)
    rstd = xp.ascontiguousarray(rstd, dtype=sdt)                                  # (N, G)
    if x.size == 0:
        zeros = None if weight is None else xp.zeros(C, weight.dtype)
        return xp.empty_like(x), zeros, None if weight is None else zeros.copy()
    with device_of_array(x):
        if w is None:
            dxhat = dy.astype(sdt, copy=False)                                    # (N, C, L)
        else:
            dxhat = xp.empty((N, C, L), sdt)                                      # (N, C, L)  dy · γ[c]
            grid, block = _elementwise_grid(x.size)
            cuda_common.launcher.launch(SOURCE, f"gn_dxhat<{CTYPE[x.dtype]}, {CTYPE[w.dtype]}>", grid, block,
                                        (dy, w, dxhat, np.int64(x.size), np.int32(C), np.int32(L)))
        D = (C // G) * L
        rows = x.reshape(N * G, D).astype(sdt, copy=False)                        # (N·G, C/G·L)
        dx, _, _ = cuda_layer_norm.layer_norm_bwd(dxhat.reshape(N * G, D), rows, None, mean.reshape(N * G, 1),
                                                 rstd.reshape(N * G, 1), need_param_grads=False)
        dx = dx.reshape(N, C, L).astype(x.dtype, copy=False)                      # (N, C, L)
        if weight is None:
            return dx, None, None
        sum_xc, sum_dy, sum_dy_xc = (xp.empty((N, C), sdt) for _ in range(3))     # (N, C) each
        args = (dy, x, mean, sum_xc, sum_dy, sum_dy_xc, np.int64(N * C), np.int32(C), np.int32(L), np.int32(C // G))
        cuda_common.launcher.launch(SOURCE, f"gn_channel_sums<{CTYPE[x.dtype]}>", (-(-(N * C) // 8), 1, 1),
                                    (32, 8, 1), args)
    cpg = C // G
    cen = sum_xc.reshape(N, G, cpg).sum(axis=2, keepdims=True) / D                # (N, G, 1)  re-centring
    dy_xhat = rstd[:, :, None] * (sum_dy_xc.reshape(N, G, cpg) - cen * sum_dy.reshape(N, G, cpg))  # (N, G, C/G)
    dweight = dy_xhat.reshape(N, C).sum(axis=0)                                   # (C,)  dγ = Σ_{n,l} dy · xhat
    dbias = sum_dy.sum(axis=0)                                                    # (C,)  dβ = Σ_{n,l} dy
    return dx, dweight.astype(weight.dtype, copy=False), dbias.astype(weight.dtype, copy=False)


def example_kernels() -> list:
    """Name expressions of representative instances (for compile checks without a GPU)."""
    names = []
    for t, p in (("float", "float"), ("double", "double"), ("half_t", "half_t"), ("half_t", "float")):
        names += [f"gn_affine<{t}, {p}>", f"gn_dxhat<{t}, {p}>"]
    names += [f"gn_channel_sums<{t}>" for t in ("float", "double", "half_t")]
    return names

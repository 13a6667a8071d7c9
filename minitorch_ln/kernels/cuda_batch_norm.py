"""BatchNorm (batch statistics) forward and backward for CuPy arrays, reading ``(N, C, L)`` in place.

The formulas of ``kernels/batch_norm.py`` (the oracle; LayerNorm's, along each channel ``x[:, c, :]``:
docs, section 8), as CUDA kernels with the same signatures as ``batch_norm_fwd_ncl`` /
``batch_norm_bwd_ncl``::

    mean = Σ x / M,   var = Σ (x - mean)² / M,   rstd = 1 / sqrt(var + eps)      M = N·L per channel
    y    = (x - mean) · rstd · weight + bias
    dx   = rstd · (dxhat - mean(dxhat) - xhat · mean(dxhat · xhat)),  dxhat = dy · weight
    dweight = Σ dy · xhat,   dbias = Σ dy

Layout: one block of ``THREADS`` threads per channel (``grid = (C,)``). The block walks the
channel's ``M`` values ``x[n, c, j]`` (address ``(n·C + c)·L + j``) in order of ``i = n·L + j``, so
consecutive threads read consecutive addresses wherever ``L`` is at least a warp; an ``(N, C)``
input (``L = 1``) reads with a stride of ``C`` (correct, not fast). The per-channel sums run over
the whole batch, often millions of values, so they are accumulated in double for every dtype (as
``cpu_batch_norm`` does), then added over the block in a fixed order: the same bits on every run.

- forward: pass 1 ``Σ (x - shift)`` (shift: the channel's first value, so that a constant channel
  has deviations of exactly zero and its output is exactly ``bias``), pass 2 ``Σ (x - mean)²``
  (the exact two-pass variance, never ``E[x²] - E[x]²``), pass 3 writes ``y``;
- backward: pass 1 ``Σ (x - mean)``, ``Σ dy``, ``Σ dy · (x - mean)`` (the first re-centres ``xhat``:
  the saved ``mean`` is rounded), pass 2 writes ``dx``; thread 0 writes ``dweight[c]``, ``dbias[c]``.

float16 is read and written as float16 and computed in float (statistics in float32, as the oracle);
float32 in float; float64 in double. Empty input goes to the oracle.
"""

from __future__ import annotations

import numpy as np

from . import batch_norm as _xp
from . import cuda_common
from .cuda_common import CTYPE, check_kernel_dtype, check_param, device_of_array, param_dtype
from .layer_norm import stat_dtype

__all__ = ["SOURCE", "THREADS", "batch_norm_bwd_ncl", "batch_norm_fwd_ncl", "example_kernels"]

THREADS = 256  # one block per channel: 8 warps

SOURCE = r"""
// Each of NV sums over the whole block (blockDim.x = 32 * warps, at most 32 warps); every thread
// gets the totals. smem holds 32 * NV doubles. Reached by every thread of the block.
template <int NV> __device__ __forceinline__ void block_sums(double (&v)[NV], double* smem) {
#pragma unroll
    for (int i = 0; i < NV; ++i) v[i] = warp_sum(v[i]);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = blockDim.x >> 5;
    __syncthreads();  // smem may still be read by the previous block_sums
    if (lane == 0) {
#pragma unroll
        for (int i = 0; i < NV; ++i) smem[32 * i + warp] = v[i];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < NV; ++i) {
        v[i] = 0;
        for (int w = 0; w < warps; ++w) v[i] += smem[32 * i + w];   // a fixed order
    }
}

// The address of the i-th value of channel c in x (N, C, L): i = n * L + j.
__device__ __forceinline__ long long ncl_at(long long i, long long C, long long L, long long c) {
    const long long n = i / L;
    return (n * C + c) * L + (i - n * L);
}

// Forward, one block per channel c: mean, rstd, var (C,) in S (float for half/float, double for
// double) and y = ((x - shift) - mean_shifted) * (rstd * weight) + bias.
template <typename T, typename P, typename S>
__global__ void bn_fwd_ncl(const T* __restrict__ x, const P* __restrict__ weight, const P* __restrict__ bias,
                           T* __restrict__ y, S* __restrict__ mean, S* __restrict__ rstd, S* __restrict__ var,
                           long long N, long long C, long long L, double eps, int has_weight, int has_bias) {
    typedef typename Acc<T>::type A;
    __shared__ double smem[32];
    const long long c = blockIdx.x, M = N * L;
    const double shift = (double)to_acc(x[c * L]);                    // x[0, c, 0]
    double s[1] = {0.0};
    for (long long i = threadIdx.x; i < M; i += blockDim.x) s[0] += (double)to_acc(x[ncl_at(i, C, L, c)]) - shift;
    block_sums<1>(s, smem);
    const double mean_shifted = s[0] / (double)M;                      // mean(x - shift)
    double v[1] = {0.0};
    for (long long i = threadIdx.x; i < M; i += blockDim.x) {
        const double xc = ((double)to_acc(x[ncl_at(i, C, L, c)]) - shift) - mean_shifted;
        v[0] += xc * xc;
    }
    block_sums<1>(v, smem);
    const double var_c = v[0] / (double)M;                             // biased: / M
    const double r = 1.0 / acc_sqrt(var_c + eps);                      // eps inside the sqrt
    if (threadIdx.x == 0) {
        mean[c] = (S)(shift + mean_shifted);
        rstd[c] = (S)r;
        var[c] = (S)var_c;
    }
    // the output in the accumulation type of T, as the oracle: xc exactly 0 on a constant channel
    const A sh = (A)shift, ms = (A)mean_shifted;
    const A scale = (A)r * (has_weight ? (A)to_acc(weight[c]) : (A)1);
    const A b = has_bias ? (A)to_acc(bias[c]) : (A)0;
    for (long long i = threadIdx.x; i < M; i += blockDim.x) {
        const long long at = ncl_at(i, C, L, c);
        y[at] = cast_to<T>((((A)to_acc(x[at]) - sh) - ms) * scale + b);
    }
}

// Backward, one block per channel c: dx, and dweight[c] = Σ dy · xhat, dbias[c] = Σ dy.
template <typename T, typename P, typename S>
__global__ void bn_bwd_ncl(const T* __restrict__ dy, const T* __restrict__ x, const P* __restrict__ weight,
                           const S* __restrict__ mean, const S* __restrict__ rstd, T* __restrict__ dx,
                           P* __restrict__ dweight, P* __restrict__ dbias,
                           long long N, long long C, long long L, int has_weight) {
    typedef typename Acc<T>::type A;
    __shared__ double smem[96];
    const long long c = blockIdx.x, M = N * L;
    const double mu = (double)mean[c], r = (double)rstd[c];
    double sums[3] = {0.0, 0.0, 0.0};                                  // Σ xc, Σ dy, Σ dy · xc
    for (long long i = threadIdx.x; i < M; i += blockDim.x) {
        const long long at = ncl_at(i, C, L, c);
        const double xc = (double)to_acc(x[at]) - mu, g = (double)to_acc(dy[at]);
        sums[0] += xc;
        sums[1] += g;
        sums[2] += g * xc;
    }
    block_sums<3>(sums, smem);
    const double cen = sums[0] / (double)M;                            // re-centring: xhat = (x - mu - cen) · rstd
    const double sum_dy_xhat = r * (sums[2] - cen * sums[1]);          // Σ dy · xhat = dγ
    const double w = has_weight ? (double)to_acc(weight[c]) : 1.0;
    if (threadIdx.x == 0 && has_weight) {
        dweight[c] = cast_to<P>((typename Acc<P>::type)sum_dy_xhat);
        dbias[c] = cast_to<P>((typename Acc<P>::type)sums[1]);        // dβ = Σ dy
    }
    const A mean_dxhat = (A)(w * sums[1] / (double)M);                 // mean(dxhat), dxhat = dy · γ
    const A mean_dxhat_xhat = (A)(w * sum_dy_xhat / (double)M);        // mean(dxhat · xhat)
    const A am = (A)mu, ac = (A)cen, ar = (A)r, aw = (A)w;
    for (long long i = threadIdx.x; i < M; i += blockDim.x) {
        const long long at = ncl_at(i, C, L, c);
        const A xhat = (((A)to_acc(x[at]) - am) - ac) * ar;
        //                        term 1 (direct)             term 2 (via mean)   term 3 (via rstd)
        dx[at] = cast_to<T>(ar * ((A)to_acc(dy[at]) * aw - mean_dxhat - xhat * mean_dxhat_xhat));
    }
}
"""


def _check_ncl(x, what: str):
    check_kernel_dtype(x, what)
    if x.ndim != 3 or not x.flags.c_contiguous:
        raise ValueError(f"{what}: expected a C-contiguous array of shape (N, C, L), got shape {x.shape}")


def batch_norm_fwd_ncl(x, weight, bias, eps):
    """BatchNorm forward (batch statistics) on a CuPy ``x`` ``(N, C, L)`` → ``(y, mean, rstd, var)``.

    Args:
        x: C-contiguous ``(N, C, L)``, float16/32/64.
        weight, bias: ``(C,)`` or None (float32 allowed with float16 ``x``).
        eps: > 0, inside the square root.
    Returns:
        ``y`` ``(N, C, L)`` in ``x``'s dtype; ``mean``, ``rstd`` and the biased ``var`` ``(C, 1)``
        in float32 for float16 ``x``, else ``x``'s dtype.
    Raises:
        TypeError: a dtype other than float16/32/64. ValueError: ``x`` not C-contiguous
        ``(N, C, L)``, or a parameter not of shape ``(C,)``.
    """
    _check_ncl(x, "batch_norm_fwd_ncl")
    N, C, L = x.shape
    pdt = param_dtype(x, weight if weight is not None else bias)
    weight = check_param(weight, C, pdt, "batch_norm_fwd_ncl: weight", "one value per channel of x")
    bias = check_param(bias, C, pdt, "batch_norm_fwd_ncl: bias", "one value per channel of x")
    if x.size == 0:
        return _xp.batch_norm_fwd_ncl(x, weight, bias, eps)
    xp = cuda_common.array_module(x)
    sdt = stat_dtype(x.dtype)
    y = xp.empty((N, C, L), dtype=x.dtype)                                           # (N, C, L)
    mean, rstd, var = (xp.empty((C, 1), dtype=sdt) for _ in range(3))                # (C, 1) ×3
    dummy = xp.empty((1,), dtype=pdt)  # stands for a missing weight/bias (never read)
    name = f"bn_fwd_ncl<{CTYPE[x.dtype]}, {CTYPE[pdt]}, {CTYPE[sdt]}>"
    args = (x, weight if weight is not None else dummy, bias if bias is not None else dummy, y, mean, rstd, var,
            np.int64(N), np.int64(C), np.int64(L), np.float64(eps), np.int32(weight is not None),
            np.int32(bias is not None))
    with device_of_array(x):
        cuda_common.launcher.launch(SOURCE, name, (C, 1, 1), (THREADS, 1, 1), args)
    return y, mean, rstd, var


def batch_norm_bwd_ncl(dy, x, weight, mean, rstd):
    """BatchNorm backward (batch statistics) on CuPy ``(N, C, L)`` arrays → ``(dx, dweight, dbias)``.

    ``mean``/``rstd`` ``(C, 1)`` (or ``(C,)``) from :func:`batch_norm_fwd_ncl`. ``dweight``/``dbias``
    ``(C,)`` in ``weight``'s dtype (sums in double), None when ``weight`` is None.

    Raises:
        TypeError / ValueError: as :func:`batch_norm_fwd_ncl`, and when ``dy`` does not match ``x``
        or ``mean``/``rstd`` do not hold one value per channel.
    """
    _check_ncl(x, "batch_norm_bwd_ncl")
    if dy.shape != x.shape or dy.dtype != x.dtype:
        raise ValueError(f"batch_norm_bwd_ncl: dy must match x, got dy {dy.shape} {dy.dtype} and x {x.shape} {x.dtype}")
    N, C, L = x.shape
    if mean.size != C or rstd.size != C:
        raise ValueError(f"batch_norm_bwd_ncl: mean and rstd must have {C} values (one per channel), got "
                         f"{mean.shape} and {rstd.shape}")
    xp = cuda_common.array_module(x)
    sdt = stat_dtype(x.dtype)
    pdt = param_dtype(x, weight)
    w = check_param(weight, C, pdt, "batch_norm_bwd_ncl: weight", "one value per channel of x")
    if x.size == 0:
        return _xp.batch_norm_bwd_ncl(dy, x, weight, mean.reshape(C, 1), rstd.reshape(C, 1))
    dy = dy if dy.flags.c_contiguous else xp.ascontiguousarray(dy)
    mean = xp.ascontiguousarray(mean.reshape(C), dtype=sdt)                          # (C,)
    rstd = xp.ascontiguousarray(rstd.reshape(C), dtype=sdt)                          # (C,)
    dx = xp.empty((N, C, L), dtype=x.dtype)                                          # (N, C, L)
    dweight, dbias = xp.empty((C,), dtype=pdt), xp.empty((C,), dtype=pdt)            # (C,) ×2
    name = f"bn_bwd_ncl<{CTYPE[x.dtype]}, {CTYPE[pdt]}, {CTYPE[sdt]}>"
    args = (dy, x, w if w is not None else xp.empty((1,), dtype=pdt), mean, rstd, dx, dweight, dbias,
            np.int64(N), np.int64(C), np.int64(L), np.int32(w is not None))
    with device_of_array(x):
        cuda_common.launcher.launch(SOURCE, name, (C, 1, 1), (THREADS, 1, 1), args)
    if weight is None:
        return dx, None, None
    return dx, dweight.astype(weight.dtype, copy=False), dbias.astype(weight.dtype, copy=False)


def example_kernels() -> list:
    """Name expressions of every instance the wrappers launch (for compile checks without a GPU)."""
    names = []
    for dt, pdt in ((np.float32, np.float32), (np.float64, np.float64), (np.float16, np.float16),
                    (np.float16, np.float32)):
        types = f"{CTYPE[np.dtype(dt)]}, {CTYPE[np.dtype(pdt)]}, {CTYPE[stat_dtype(dt)]}"
        names += [f"bn_fwd_ncl<{types}>", f"bn_bwd_ncl<{types}>"]
    return names

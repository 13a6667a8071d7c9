"""Fused softmax, log-softmax and cross-entropy for CuPy arrays, forward and backward.

Each works on the rows of a C-contiguous ``(N, C)`` array (the softmax axis last). A row group of
``32 * WPR`` threads handles one row; the row maximum and the sum of exponentials come from one
*online* pass (Milakov & Gimelshein 2018, "Online normalizer calculation for softmax": a running
``(m, s)`` pair, rescaled by ``exp(m_old - m_new)`` when the maximum grows), so:

- ``softmax_fwd``: reads ``x`` twice (statistics, then output) and writes ``y`` once, for any ``C``;
- ``softmax_bwd``: ``dx = y * (dy - sum(dy * y))`` or, for log-softmax, ``dx = dy - exp(y) * sum(dy)``;
- ``cross_entropy_fwd``: one read of the logits gives each row's ``lse = m + log(s)`` and its loss
  ``(1 - eps) * (lse - x[t]) + eps * (lse - mean(x))`` (label smoothing ``eps``, PyTorch's formula);
  nothing of size ``(N, C)`` is written;
- ``cross_entropy_bwd``: one read of the logits and one write of
  ``dx = dloss * (softmax(x) - (1 - eps) * onehot(t) - eps / C)``, zero for ignored rows.

Numerics follow ``ops/softmax.py``: a row of all ``-inf`` gives zeros from softmax and ``-inf`` from
log-softmax (not NaN); float16 is computed in float32.
"""

from __future__ import annotations

import numpy as np

from . import cuda_common
from .cuda_common import CTYPE, check_kernel_dtype, device_of_array
from .layer_norm import stat_dtype

SOURCE = r"""
// Merge two online-softmax pairs (max m, sum of exp(x - m)); an empty pair has m = -inf, s = 0.
template <typename A> __device__ __forceinline__ void ms_merge(A& m, A& s, A m2, A s2) {
    const A mx = acc_max(m, m2);
    const A a = (m == neg_inf<A>()) ? (A)0 : s * acc_exp(m - mx);
    const A b = (m2 == neg_inf<A>()) ? (A)0 : s2 * acc_exp(m2 - mx);
    m = mx;
    s = a + b;   // a + b == b + a: every lane of the butterfly ends with the same pair
}

// Add one element to a running pair.
template <typename A> __device__ __forceinline__ void ms_push(A& m, A& s, A v) {
    if (v > m) { s = s * acc_exp(m - v) + (A)1; m = v; }   // s * exp(-inf) = 0 for the first element
    else s += (v == neg_inf<A>()) ? (A)0 : acc_exp(v - m);  // NaN propagates through exp
}

// (m, s) over the 32 * WPR threads of a row group; every thread gets the result.
template <int WPR, typename A> __device__ __forceinline__ void group_ms(A& m, A& s, A* smem) {
    for (int o = 16; o > 0; o >>= 1) {
        const A m2 = shfl_xor(m, o), s2 = shfl_xor(s, o);
        ms_merge(m, s, m2, s2);
    }
    if (WPR == 1) return;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __syncthreads();
    if (lane == 0) { smem[threadIdx.y * WPR + warp] = m; smem[32 + threadIdx.y * WPR + warp] = s; }
    __syncthreads();
    m = smem[threadIdx.y * WPR];
    s = smem[32 + threadIdx.y * WPR];
    for (int w = 1; w < WPR; ++w) ms_merge(m, s, smem[threadIdx.y * WPR + w], smem[32 + threadIdx.y * WPR + w]);
}

template <typename T, int WPR>
__global__ void softmax_fwd(const T* __restrict__ x, T* __restrict__ y, long long N, int C, int log_softmax) {
    typedef typename Acc<T>::type A;
    __shared__ A smem[64];
    const long long row = (long long)blockIdx.x * blockDim.y + threadIdx.y;
    const bool valid = row < N;
    const T* xr = x + (valid ? row : 0) * (long long)C;
    A m = neg_inf<A>(), s = 0;
    if (valid)
        for (int c = threadIdx.x; c < C; c += 32 * WPR) ms_push(m, s, (A)to_acc(xr[c]));
    group_ms<WPR>(m, s, smem);
    if (!valid) return;
    T* yr = y + row * (long long)C;
    if (log_softmax) {
        const A lse = m + acc_log(s);
        for (int c = threadIdx.x; c < C; c += 32 * WPR)
            yr[c] = cast_to<T>(s == (A)0 ? neg_inf<A>() : (A)to_acc(xr[c]) - lse);   // all -inf row: -inf
    } else {
        const A inv = s == (A)0 ? (A)0 : (A)1 / s;                                    // all -inf row: 0
        for (int c = threadIdx.x; c < C; c += 32 * WPR)
            yr[c] = cast_to<T>(s == (A)0 ? (A)0 : acc_exp((A)to_acc(xr[c]) - m) * inv);
    }
}

template <typename T, int WPR>
__global__ void softmax_bwd(const T* __restrict__ dy, const T* __restrict__ y, T* __restrict__ dx,
                            long long N, int C, int log_softmax) {
    typedef typename Acc<T>::type A;
    __shared__ A smem[32];
    const long long row = (long long)blockIdx.x * blockDim.y + threadIdx.y;
    const bool valid = row < N;
    const long long off = (valid ? row : 0) * (long long)C;
    A s = 0;   // sum(dy) for log-softmax, sum(dy * y) for softmax
    if (valid)
        for (int c = threadIdx.x; c < C; c += 32 * WPR)
            s += log_softmax ? (A)to_acc(dy[off + c]) : (A)to_acc(dy[off + c]) * (A)to_acc(y[off + c]);
    s = group_sum<WPR>(s, smem);
    if (!valid) return;
    for (int c = threadIdx.x; c < C; c += 32 * WPR) {
        const A g = to_acc(dy[off + c]), v = to_acc(y[off + c]);
        dx[off + c] = cast_to<T>(log_softmax ? g - acc_exp(v) * s : v * (g - s));
    }
}

// Per-row loss and log-sum-exp. A target equal to ignore_index gives loss 0; one outside [0, C)
// gives NaN (the Python side checks targets first; this only keeps the kernel from reading out of
// bounds).
template <typename T, int WPR>
__global__ void ce_fwd(const T* __restrict__ x, const long long* __restrict__ target,
                       typename Acc<T>::type* __restrict__ loss, typename Acc<T>::type* __restrict__ lse_out,
                       long long N, int C, long long ignore_index, double smoothing) {
    typedef typename Acc<T>::type A;
    __shared__ A smem[64];
    const long long row = (long long)blockIdx.x * blockDim.y + threadIdx.y;
    const bool valid = row < N;
    const T* xr = x + (valid ? row : 0) * (long long)C;
    A m = neg_inf<A>(), s = 0, sx = 0;
    if (valid)
        for (int c = threadIdx.x; c < C; c += 32 * WPR) {
            const A v = to_acc(xr[c]);
            ms_push(m, s, v);
            sx += v;
        }
    group_ms<WPR>(m, s, smem);
    const A eps = (A)smoothing;
    if (eps != (A)0) sx = group_sum<WPR>(sx, smem);   // uniform branch: eps is the same everywhere
    if (!valid || threadIdx.x != 0) return;
    const A lse = m + acc_log(s);
    const long long t = target[row];
    A l;
    if (t == ignore_index) l = 0;
    else if (t < 0 || t >= C) l = acc_exp(-neg_inf<A>()) * (A)0;   // inf * 0 = NaN
    else {
        l = ((A)1 - eps) * (lse - (A)to_acc(xr[t]));
        if (eps != (A)0) l += eps * (lse - sx / (A)C);   // only then: sum(x) may hold -inf
    }
    loss[row] = l;
    lse_out[row] = lse;
}

// dx = dloss * (softmax(x) - (1 - eps) * onehot(t) - eps / C); rows with an ignored target get 0.
// dloss[row * dloss_stride]: stride 0 broadcasts one value (reduction "mean" or "sum").
template <typename T, int WPR>
__global__ void ce_bwd(const typename Acc<T>::type* __restrict__ dloss, long long dloss_stride,
                       const T* __restrict__ x, const long long* __restrict__ target,
                       const typename Acc<T>::type* __restrict__ lse, T* __restrict__ dx,
                       long long N, int C, long long ignore_index, double smoothing) {
    typedef typename Acc<T>::type A;
    const long long row = (long long)blockIdx.x * blockDim.y + threadIdx.y;
    if (row >= N) return;   // no synchronisation in this kernel
    const long long off = row * (long long)C;
    const long long t = target[row];
    T* dxr = dx + off;
    if (t == ignore_index) {
        for (int c = threadIdx.x; c < C; c += 32 * WPR) dxr[c] = cast_to<T>((A)0);
        return;
    }
    const A g = dloss[row * dloss_stride], l = lse[row], eps = (A)smoothing;
    const A on = (A)1 - eps, off_target = eps / (A)C;
    for (int c = threadIdx.x; c < C; c += 32 * WPR) {
        const A p = acc_exp((A)to_acc(x[off + c]) - l);
        dxr[c] = cast_to<T>(g * (p - (c == t ? on : (A)0) - off_target));
    }
}
"""


def row_config(C: int):
    """``(WPR, RPB)``: warps per row (about one element per thread per 4 warps' pass) and rows per block."""
    wpr = 1
    while wpr < 8 and 32 * wpr * 4 < C:
        wpr *= 2
    return wpr, max(1, 8 // wpr)


def _check_rows(x, what: str):
    check_kernel_dtype(x, what)
    if x.ndim != 2 or not x.flags.c_contiguous:
        raise ValueError(f"{what}: expected a C-contiguous array of shape (N, C), got shape {x.shape}")


def _launch(kernel: str, x, args, N: int, C: int):
    wpr, rpb = row_config(C)
    name = f"{kernel}<{CTYPE[x.dtype]}, {wpr}>"
    with device_of_array(x):
        cuda_common.launcher.launch(SOURCE, name, (-(-N // rpb), 1, 1), (32 * wpr, rpb, 1), args)


def softmax_fwd(x, log: bool = False):
    """Softmax (or log-softmax) over the last axis of ``x``.

    Args:
        x: C-contiguous ``(N, C)`` CuPy array, float16/32/64.
        log: log-softmax instead of softmax.
    Returns:
        ``y`` ``(N, C)`` in ``x``'s dtype (all ``-inf`` rows: zeros, or ``-inf`` for log-softmax).
    Raises:
        TypeError: a dtype other than float16/32/64. ValueError: not ``(N, C)`` C-contiguous.
    """
    _check_rows(x, "softmax_fwd")
    xp = cuda_common.array_module(x)
    N, C = x.shape
    y = xp.empty((N, C), dtype=x.dtype)  # (N, C)
    if N and C:
        _launch("softmax_fwd", x, (x, y, np.int64(N), np.int32(C), np.int32(bool(log))), N, C)
    return y


def softmax_bwd(dy, y, log: bool = False):
    """Gradient of :func:`softmax_fwd` from its output ``y`` ``(N, C)`` and ``dy`` ``(N, C)``.

    Returns ``dx`` ``(N, C)`` in ``y``'s dtype. Raises as :func:`softmax_fwd`, and ValueError when
    ``dy`` and ``y`` differ in shape or dtype.
    """
    _check_rows(y, "softmax_bwd")
    if dy.shape != y.shape or dy.dtype != y.dtype:
        raise ValueError(f"softmax_bwd: dy must match y, got dy {dy.shape} {dy.dtype} and y {y.shape} {y.dtype}")
    xp = cuda_common.array_module(y)
    dy = dy if dy.flags.c_contiguous else xp.ascontiguousarray(dy)
    N, C = y.shape
    dx = xp.empty((N, C), dtype=y.dtype)  # (N, C)
    if N and C:
        _launch("softmax_bwd", y, (dy, y, dx, np.int64(N), np.int32(C), np.int32(bool(log))), N, C)
    return dx


def _check_target(target, N: int, xp):
    if target.shape != (N,) or target.dtype.kind not in "iu":
        raise ValueError(f"cross_entropy: expected class indices of shape ({N},), got {target.shape} {target.dtype}")
    return xp.ascontiguousarray(target, dtype=np.int64)


def cross_entropy_fwd(x, target, ignore_index: int = -100, label_smoothing: float = 0.0):
    """Per-row cross-entropy of logits ``x`` ``(N, C)`` at class indices ``target`` ``(N,)``.

    Targets must lie in ``[0, C)`` or equal ``ignore_index`` (the caller checks; a bad one gives a
    NaN loss rather than a read out of bounds).

    Returns:
        ``(loss, lse)``, both ``(N,)`` in float32 for float16 ``x``, else ``x``'s dtype: the loss
        of each row (0 where the target is ignored) and its log-sum-exp, saved for backward.
    Raises:
        TypeError / ValueError: bad dtype or shapes (naming what was expected).
    """
    _check_rows(x, "cross_entropy_fwd")
    xp = cuda_common.array_module(x)
    N, C = x.shape
    target = _check_target(target, N, xp)
    stat = stat_dtype(x.dtype)
    loss = xp.empty((N,), dtype=stat)  # (N,)
    lse = xp.empty((N,), dtype=stat)  # (N,)
    if N and C:
        args = (x, target, loss, lse, np.int64(N), np.int32(C), np.int64(ignore_index), np.float64(label_smoothing))
        _launch("ce_fwd", x, args, N, C)
    return loss, lse


def cross_entropy_bwd(dloss, x, target, lse, ignore_index: int = -100, label_smoothing: float = 0.0):
    """Gradient of the per-row losses of :func:`cross_entropy_fwd` with respect to the logits.

    Args:
        dloss: ``(N,)`` per-row upstream gradients, or one value (shape ``()`` or ``(1,)``) for all
            rows (the ``mean``/``sum`` reductions: pass ``dy / count`` or ``dy``).
        x, target, lse: as given to and returned by :func:`cross_entropy_fwd`.
    Returns:
        ``dx`` ``(N, C)`` in ``x``'s dtype.
    """
    _check_rows(x, "cross_entropy_bwd")
    xp = cuda_common.array_module(x)
    N, C = x.shape
    target = _check_target(target, N, xp)
    stat = stat_dtype(x.dtype)
    if dloss.size not in (1, N):
        raise ValueError(f"cross_entropy_bwd: dloss must hold 1 or {N} values, got shape {dloss.shape}")
    stride = 0 if dloss.size == 1 else 1
    dloss = xp.ascontiguousarray(dloss.reshape(-1), dtype=stat)  # (N,) or (1,)
    lse = xp.ascontiguousarray(lse.reshape(-1), dtype=stat)  # (N,)
    dx = xp.empty((N, C), dtype=x.dtype)  # (N, C)
    if N and C:
        args = (dloss, np.int64(stride), x, target, lse, dx, np.int64(N), np.int32(C), np.int64(ignore_index),
                np.float64(label_smoothing))
        _launch("ce_bwd", x, args, N, C)
    return dx


def example_kernels() -> list:
    """Name expressions of representative instances (for compile checks without a GPU)."""
    names = []
    for t in ("float", "half_t", "double"):
        for C in (10, 1000, 50257):
            wpr, _ = row_config(C)
            names += [f"{k}<{t}, {wpr}>" for k in ("softmax_fwd", "softmax_bwd", "ce_fwd", "ce_bwd")]
    return list(dict.fromkeys(names))

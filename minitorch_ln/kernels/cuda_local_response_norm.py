"""Local response normalization forward and backward for CuPy arrays: CUDA kernels on ``(N, C, L)`` in place.

The formulas and numerics of ``kernels/local_response_norm.py`` (the oracle; docs/local_response_norm.md), one
thread per element ``(n, c, l)`` (consecutive threads on consecutive ``l``: coalesced)::

    s_c  = k + (α/n) · Σ_{c' ∈ [c - n//2, c + (n-1)//2]} a_{c'}²       y_c = a_c / s_c^β
    dx_j = dy_j / s_j^β - (2αβ/n) · a_j · Σ_{c ∈ [j - (n-1)//2, j + n//2]} dy_c · a_c / s_c^(β+1)

Each thread sums its own window directly (at most ``n`` terms, never the difference of two
running totals), as PyTorch's avg_pool does; ``n`` is small in practice (5 in AlexNet). The
backward is two launches: the first writes ``s^β`` and ``t = dy · a / s^(β+1)`` for every element
(scratch in the working dtype), the second sums ``t`` over the mirrored window. float16 is
computed in float, float32 and float64 in double (squares of float32 values beyond 1e19 overflow
float). Empty input goes to the oracle.
"""

from __future__ import annotations

import numpy as np

from . import cuda_common
from . import local_response_norm as _xp
from .cuda_common import CTYPE, check_kernel_dtype, device_of_array
from .local_response_norm import work_dtype

__all__ = ["SOURCE", "THREADS", "example_kernels", "local_response_norm_bwd", "local_response_norm_fwd"]

THREADS = 256

SOURCE = r"""
__device__ __forceinline__ float lrn_pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double lrn_pow(double a, double b) { return pow(a, b); }

// s = k + (alpha / size) * sum of a^2 over channels [c - before, c - before + size) ∩ [0, C), at (n, c, l).
template <typename T, typename W>
__device__ __forceinline__ W lrn_s(const T* x, long long n, long long c, long long l, long long C, long long L,
                                   int size, int before, W alpha, W k) {
    const long long lo = c - before < 0 ? 0 : c - before;
    const long long hi = c - before + size > C ? C : c - before + size;
    W sum = 0;
    for (long long cc = lo; cc < hi; ++cc) {
        const W v = (W)to_acc(x[(n * C + cc) * L + l]);
        sum += v * v;
    }
    return k + alpha / (W)size * sum;
}

template <typename T, typename W>
__global__ void lrn_fwd(const T* __restrict__ x, T* __restrict__ y, long long N, long long C, long long L, int size,
                        W alpha, W beta, W k) {
    typedef typename Acc<T>::type A;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N * C * L) return;
    const long long l = i % L, c = (i / L) % C, n = i / (C * L);
    const W s = lrn_s(x, n, c, l, C, L, size, size / 2, alpha, k);
    y[i] = cast_to<T>((A)((W)to_acc(x[i]) / lrn_pow(s, beta)));                 // y = a / s^beta
}

// Backward, first launch: s^beta and t = dy * a / s^(beta + 1) at every element.
template <typename T, typename W>
__global__ void lrn_bwd_terms(const T* __restrict__ dy, const T* __restrict__ x, W* __restrict__ s_beta,
                              W* __restrict__ t, long long N, long long C, long long L, int size, W alpha, W beta,
                              W k) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N * C * L) return;
    const long long l = i % L, c = (i / L) % C, n = i / (C * L);
    const W s = lrn_s(x, n, c, l, C, L, size, size / 2, alpha, k);
    const W sb = lrn_pow(s, beta);
    s_beta[i] = sb;
    t[i] = (W)to_acc(dy[i]) * (W)to_acc(x[i]) / (sb * s);
}

// Backward, second launch: dx_j = dy_j / s_j^beta - (2 alpha beta / size) a_j sum of t over the mirrored window.
template <typename T, typename W>
__global__ void lrn_bwd_dx(const T* __restrict__ dy, const T* __restrict__ x, const W* __restrict__ s_beta,
                           const W* __restrict__ t, T* __restrict__ dx, long long N, long long C, long long L,
                           int size, W alpha, W beta) {
    typedef typename Acc<T>::type A;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N * C * L) return;
    const long long l = i % L, c = (i / L) % C, n = i / (C * L);
    const long long before = (size - 1) / 2;                     // every c' whose window holds c
    const long long lo = c - before < 0 ? 0 : c - before;
    const long long hi = c - before + size > C ? C : c - before + size;
    W through_s = 0;
    for (long long cc = lo; cc < hi; ++cc) through_s += t[(n * C + cc) * L + l];
    const W coef = (W)2 * alpha * beta / (W)size;
    //                       term 1 (direct)                        term 2 (through every s_c)
    dx[i] = cast_to<T>((A)((W)to_acc(dy[i]) / s_beta[i] - coef * (W)to_acc(x[i]) * through_s));
}
"""


def _check_ncl(x, what: str):
    check_kernel_dtype(x, what)
    if x.ndim != 3 or not x.flags.c_contiguous:
        raise ValueError(f"{what}: expected a C-contiguous array of shape (N, C, L), got shape {x.shape}")


def _scalar(wdt):
    return np.float32 if wdt == np.float32 else np.float64


def _grid(total: int) -> tuple:
    return (-(-total // THREADS), 1, 1)


def local_response_norm_fwd(x, size, alpha, beta, k):
    """LRN forward on a CuPy ``x`` ``(N, C, L)`` (C-contiguous, float16/32/64) → ``y`` in ``x``'s dtype.

    Raises:
        TypeError: another dtype. ValueError: ``x`` not C-contiguous ``(N, C, L)``.
    """
    _check_ncl(x, "local_response_norm_fwd")
    if x.size == 0:
        return _xp.local_response_norm_fwd(x, size, alpha, beta, k)
    xp = cuda_common.array_module(x)
    N, C, L = x.shape
    wdt = work_dtype(x.dtype)
    f = _scalar(wdt)
    y = xp.empty((N, C, L), dtype=x.dtype)                                           # (N, C, L)
    name = f"lrn_fwd<{CTYPE[x.dtype]}, {CTYPE[wdt]}>"
    args = (x, y, np.int64(N), np.int64(C), np.int64(L), np.int32(size), f(alpha), f(beta), f(k))
    with device_of_array(x):
        cuda_common.launcher.launch(SOURCE, name, _grid(x.size), (THREADS, 1, 1), args)
    return y


def local_response_norm_bwd(dy, x, size, alpha, beta, k):
    """LRN backward on CuPy ``(N, C, L)`` arrays → ``dx`` in ``x``'s dtype.

    Raises:
        TypeError / ValueError: as :func:`local_response_norm_fwd`, and when ``dy`` does not match ``x``.
    """
    _check_ncl(x, "local_response_norm_bwd")
    if dy.shape != x.shape or dy.dtype != x.dtype:
        raise ValueError(f"local_response_norm_bwd: dy must match x, got dy {dy.shape} {dy.dtype} and x "
                         f"{x.shape} {x.dtype}")
    if x.size == 0:
        return _xp.local_response_norm_bwd(dy, x, size, alpha, beta, k)
    xp = cuda_common.array_module(x)
    dy = dy if dy.flags.c_contiguous else xp.ascontiguousarray(dy)
    N, C, L = x.shape
    wdt = work_dtype(x.dtype)
    f = _scalar(wdt)
    s_beta, t = xp.empty((N, C, L), dtype=wdt), xp.empty((N, C, L), dtype=wdt)       # (N, C, L) ×2
    dx = xp.empty((N, C, L), dtype=x.dtype)                                          # (N, C, L)
    types = f"{CTYPE[x.dtype]}, {CTYPE[wdt]}"
    dims = (np.int64(N), np.int64(C), np.int64(L), np.int32(size))
    with device_of_array(x):
        cuda_common.launcher.launch(SOURCE, f"lrn_bwd_terms<{types}>", _grid(x.size), (THREADS, 1, 1),
                                    (dy, x, s_beta, t, *dims, f(alpha), f(beta), f(k)))
        cuda_common.launcher.launch(SOURCE, f"lrn_bwd_dx<{types}>", _grid(x.size), (THREADS, 1, 1),
                                    (dy, x, s_beta, t, dx, *dims, f(alpha), f(beta)))
    return dx


def example_kernels() -> list:
    """Name expressions of every instance the wrappers launch (for compile checks without a GPU)."""
    names = []
    for dt in (np.float16, np.float32, np.float64):
        types = f"{CTYPE[np.dtype(dt)]}, {CTYPE[work_dtype(dt)]}"
        names += [f"lrn_fwd<{types}>", f"lrn_bwd_terms<{types}>", f"lrn_bwd_dx<{types}>"]
    return names

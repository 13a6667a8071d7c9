"""What every CUDA kernel module shares: the device prelude, compilation and launching.

The CUDA sources of this package are plain strings compiled at first use by CuPy (NVRTC) through
:class:`CupyLauncher`. They include no header at all (NVRTC may not find the CUDA include path on a
machine that only has the CuPy wheel), so float16 is handled as its 16 raw bits (``half_t``) and
converted to float with one PTX instruction, as ``cuda_fp16.h`` itself does.

Each source is three parts: a *prelude* (``PRELUDE_CUDA``: conversions and math for the device),
the shared helpers (``COMMON``: accumulator types, vector packs, warp and row-group sums) and the
kernels. ``tests/cuda_emu.py`` swaps the prelude for a host one and runs the very same kernel text
on the CPU, one OS thread per CUDA thread, which is how these kernels were checked without a GPU.

Launching goes through the module attribute :data:`launcher` (``launcher.launch(source, name,
grid, block, args)``), so a test can put the emulator in its place and run the Python wrappers of
``cuda_layer_norm``, ``cuda_softmax`` and ``cuda_optim`` end to end on NumPy arrays.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ..backend import cupy_or_error, get_array_module

array_module = get_array_module  # numpy in the CPU emulator, cupy on the GPU

# --------------------------------------------------------------------------------------------
# CUDA source shared by the kernel modules
# --------------------------------------------------------------------------------------------

PRELUDE_CUDA = r"""
// ---- device prelude: no #include, so NVRTC needs no CUDA include path ----
typedef unsigned short half_t;  // float16 kept as its 16 bits; arithmetic is done in float

__device__ __forceinline__ float to_acc(float v) { return v; }
__device__ __forceinline__ double to_acc(double v) { return v; }
__device__ __forceinline__ float to_acc(half_t v) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v));
    return f;
}

template <typename T> struct Acc { typedef float type; };   // float16 and float32 accumulate in float
template <> struct Acc<double> { typedef double type; };     // float64 stays float64

template <typename T> __device__ __forceinline__ T cast_to(typename Acc<T>::type v);
template <> __device__ __forceinline__ float cast_to<float>(float v) { return v; }
template <> __device__ __forceinline__ double cast_to<double>(double v) { return v; }
template <> __device__ __forceinline__ half_t cast_to<half_t>(float v) {
    half_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));  // round to nearest even, as PyTorch
    return h;
}

__device__ __forceinline__ float acc_rsqrt(float v) { return rsqrtf(v); }
__device__ __forceinline__ double acc_rsqrt(double v) { return rsqrt(v); }
__device__ __forceinline__ float acc_sqrt(float v) { return sqrtf(v); }
__device__ __forceinline__ double acc_sqrt(double v) { return sqrt(v); }
__device__ __forceinline__ float acc_exp(float v) { return expf(v); }
__device__ __forceinline__ double acc_exp(double v) { return exp(v); }
__device__ __forceinline__ float acc_log(float v) { return logf(v); }
__device__ __forceinline__ double acc_log(double v) { return log(v); }
__device__ __forceinline__ float acc_max(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double acc_max(double a, double b) { return fmax(a, b); }
template <typename A> __device__ __forceinline__ A neg_inf();
template <> __device__ __forceinline__ float neg_inf<float>() { return __int_as_float(0xff800000); }
template <> __device__ __forceinline__ double neg_inf<double>() { return __longlong_as_double(0xfff0000000000000ULL); }
template <typename A> __device__ __forceinline__ A shfl_xor(A v, int mask) {
    return __shfl_xor_sync(0xffffffffu, v, mask);
}
"""

COMMON = r"""
// ---- shared helpers (the same text runs on the GPU and in the CPU emulator) ----

// VEC elements of T moved by one load/store instruction (16 bytes when VEC * sizeof(T) == 16).
template <typename T, int VEC> struct alignas(sizeof(T) * VEC) Pack { T v[VEC]; };

// Sum over the 32 lanes of a warp; every lane gets the total (butterfly, fixed order).
template <typename A> __device__ __forceinline__ A warp_sum(A v) {
    for (int o = 16; o > 0; o >>= 1) v += shfl_xor(v, o);
    return v;
}

// Sum over the WPR warps (32 * WPR threads along x) that share one row (threadIdx.y); every thread
// gets the total. smem holds one value per warp of the block (at most 32 warps). Must be reached by
// every thread of the block (it synchronises when WPR > 1). The order of the additions is fixed,
// so the result is the same bit for bit on every run.
template <int WPR, typename A> __device__ __forceinline__ A group_sum(A v, A* smem) {
    v = warp_sum(v);
    if (WPR == 1) return v;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __syncthreads();  // smem may still be read by the previous group_sum
    if (lane == 0) smem[threadIdx.y * WPR + warp] = v;
    __syncthreads();
    A total = 0;
    for (int w = 0; w < WPR; ++w) total += smem[threadIdx.y * WPR + w];
    return total;
}

// NV sums at once (one round of synchronisation instead of NV); smem holds 32 * NV values.
template <int WPR, int NV, typename A> __device__ __forceinline__ void group_sums(A (&v)[NV], A* smem) {
#pragma unroll
    for (int i = 0; i < NV; ++i) v[i] = warp_sum(v[i]);
    if (WPR == 1) return;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __syncthreads();
    if (lane == 0) {
#pragma unroll
        for (int i = 0; i < NV; ++i) smem[32 * i + threadIdx.y * WPR + warp] = v[i];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < NV; ++i) {
        v[i] = 0;
        for (int w = 0; w < WPR; ++w) v[i] += smem[32 * i + threadIdx.y * WPR + w];
    }
}
"""

# The kernel-side name of each dtype.
CTYPE = {np.dtype(np.float16): "half_t", np.dtype(np.float32): "float", np.dtype(np.float64): "double"}


def check_kernel_dtype(array, what: str) -> None:
    if array.dtype not in CTYPE:
        raise TypeError(f"{what}: expected float16, float32 or float64, got {array.dtype}")


def param_dtype(x, p) -> np.dtype:
    """The dtype the kernels read a weight/bias in: float32 for float16 ``x`` with float32
    parameters (PyTorch's mixed precision), else ``x``'s."""
    if p is not None and x.dtype == np.float16 and p.dtype == np.float32:
        return np.dtype(np.float32)
    return x.dtype


def check_param(p, n: int, dtype, what: str, of: str):
    """``p`` as a C-contiguous ``(n,)`` array of ``dtype`` (None stays None); ``of`` says what the
    ``n`` values belong to, for the error.

    Raises:
        ValueError: ``p`` is not of shape ``(n,)``.
    """
    if p is None:
        return None
    if p.shape != (n,):
        raise ValueError(f"{what}: expected shape ({n},), {of}, got {p.shape}")
    return p if (p.dtype == dtype and p.flags.c_contiguous) else p.astype(dtype, order="C")


def vector_width(n: int, itemsize: int) -> int:
    """The most elements per 16-byte load that divide ``n`` (so every row starts aligned)."""
    vec = 16 // itemsize
    while vec > 1 and n % vec:
        vec //= 2
    return vec


# --------------------------------------------------------------------------------------------
# Compiling and launching
# --------------------------------------------------------------------------------------------


class CupyLauncher:
    """Compiles each ``(source, template instance)`` once per GPU with CuPy and launches it."""

    def __init__(self):
        self._functions = {}
        self._sms = {}

    def launch(self, source: str, name: str, grid: tuple, block: tuple, args: tuple) -> None:
        """Run kernel ``name`` (a name expression like ``"ln_fwd<float, 4, 6, 1>"``) of ``source``.

        ``source`` holds the kernels only; the device prelude and the shared helpers are put in
        front of it (:func:`full_source`). ``args`` are CuPy arrays (passed as pointers) and NumPy
        scalars (passed by value with their own width: ``np.int64`` for ``long long``, ...).
        """
        self._function(source, name)(grid, block, args)

    def _function(self, source: str, name: str):
        cp = cupy_or_error()
        key = (cp.cuda.Device().id, source, name)
        fn = self._functions.get(key)
        if fn is None:
            # no -std option: NVRTC's default (C++17) is used; the sources are plain C++11
            module = cp.RawModule(code=full_source(source), name_expressions=(name,))
            fn = module.get_function(name)
            self._functions[key] = fn
        return fn

    def blocks_per_sm(self, source: str, name: str, threads: int) -> int:
        """How many blocks of ``threads`` threads of this kernel one SM runs at once (at least 1)."""
        fn = self._function(source, name)
        try:
            from cupy_backends.cuda.api import driver  # noqa: PLC0415

            ptr = getattr(getattr(fn, "kernel", fn), "ptr")
            return max(1, int(driver.occupancyMaxActiveBlocksPerMultiprocessor(ptr, threads, 0)))
        except Exception:  # noqa: BLE001 - an older CuPy: estimate from the thread count alone
            return max(1, 2048 // threads)

    def num_sms(self) -> int:
        """Streaming multiprocessors of the current GPU (sizes the persistent grids)."""
        cp = cupy_or_error()
        dev = cp.cuda.Device()
        if dev.id not in self._sms:
            self._sms[dev.id] = int(dev.attributes["MultiProcessorCount"])
        return self._sms[dev.id]


launcher = CupyLauncher()


def device_of_array(array):
    """A context manager that makes ``array``'s GPU current (nothing for a NumPy array in the emulator)."""
    dev = getattr(array, "device", None)
    return dev if hasattr(dev, "__enter__") else contextlib.nullcontext()


def pointer(array) -> int:
    """The address of an array's first element (CuPy or NumPy)."""
    data = array.data
    return int(data.ptr) if hasattr(data, "ptr") else int(array.ctypes.data)


def full_source(*parts: str) -> str:
    """The source NVRTC compiles: the device prelude, the shared helpers, then ``parts``."""
    return PRELUDE_CUDA + COMMON + "".join(parts)

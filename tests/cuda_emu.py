"""A CPU emulator for this package's CUDA kernels, used to test them where there is no GPU.

The kernel text of ``minitorch_ln/kernels/cuda_*.py`` is compiled with ``g++`` after a host prelude
(``EMU_PRELUDE``) instead of the device one: each CUDA thread is a fiber (``ucontext``) and a
scheduler runs the fibers of a block in turn, switching only at barriers; ``__syncthreads`` is a
barrier of the block, ``__shfl_xor_sync`` an exchange through memory between two barriers of the
warp, ``__shared__`` a static (blocks run one after another), float16 goes through ``_Float16``.
When a whole round of the scheduler makes no progress the emulator aborts with a message: a kernel
where not every thread reaches ``__syncthreads`` deadlocks here as it would hang on a GPU.

:class:`EmuLauncher` stands in for ``cuda_common.launcher``: the Python wrappers run unchanged on
NumPy arrays, and every launch is checked against the kernel's C++ signature: each pointer
argument must be an array of the pointee's dtype, each value argument a NumPy scalar of the
parameter's width (what CuPy would pass), so a wrong argument order, dtype or width fails here.

What this does not check: timing, real warp scheduling (lanes here are threads that meet only at
barriers), and what only the GPU compiler or CuPy does (``scripts/check_cuda_sources.py`` compiles
the same sources with nvcc; ``scripts/gpu_check.sh`` runs the real thing).
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile

import numpy as np

from minitorch_ln.kernels import cuda_common

EMU_PRELUDE = r"""
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#include <csetjmp>
#include <ucontext.h>

struct dim3 { unsigned x, y, z; };
dim3 threadIdx, blockIdx, blockDim, gridDim;   // set by the scheduler before it resumes a thread
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static

// CUDA threads are fibers run by one scheduler, switched only at barriers: deterministic and fast.
// A fiber starts through makecontext/swapcontext once; after that every switch is _setjmp/_longjmp
// (no signal-mask system call), which makes the emulator fast enough for tests.
struct EmuSched {
    ucontext_t main_ctx;
    jmp_buf main_jb;
    std::vector<ucontext_t> ctx;
    struct Jb { jmp_buf b; };
    std::vector<Jb> jb;
    std::vector<dim3> tid;
    std::vector<char> done, started;
    int current = 0;
    long progress = 0;
};
static EmuSched* g_sched;

inline void emu_yield() {
    if (!_setjmp(g_sched->jb[g_sched->current].b)) _longjmp(g_sched->main_jb, 1);
}

struct EmuBarrier {
    int n, count = 0;
    long gen = 0;
    explicit EmuBarrier(int n_) : n(n_) {}
    void wait() {
        const long g = gen;
        ++g_sched->progress;
        if (++count == n) { count = 0; ++gen; return; }
        while (gen == g) emu_yield();
    }
};

struct EmuBlock {
    std::unique_ptr<EmuBarrier> block;
    std::vector<std::unique_ptr<EmuBarrier>> warps;
    alignas(16) unsigned char xchg[1024][16];
};
static EmuBlock* g_block;

inline int emu_tid() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
inline void __syncthreads() { g_block->block->wait(); }

template <typename A> inline A shfl_xor(A v, int mask) {
    const int t = emu_tid(), w = t / 32, lane = t % 32;
    std::memcpy(g_block->xchg[t], &v, sizeof(A));
    g_block->warps[w]->wait();
    A r;
    std::memcpy(&r, g_block->xchg[w * 32 + (lane ^ mask)], sizeof(A));
    g_block->warps[w]->wait();
    return r;
}

typedef unsigned short half_t;
inline float to_acc(float v) { return v; }
inline double to_acc(double v) { return v; }
inline float to_acc(half_t v) { _Float16 h; std::memcpy(&h, &v, 2); return (float)h; }
template <typename T> struct Acc { typedef float type; };
template <> struct Acc<double> { typedef double type; };
template <typename T> inline T cast_to(typename Acc<T>::type v);
template <> inline float cast_to<float>(float v) { return v; }
template <> inline double cast_to<double>(double v) { return v; }
template <> inline half_t cast_to<half_t>(float v) { _Float16 h = (_Float16)v; half_t r; std::memcpy(&r, &h, 2); return r; }
inline float acc_rsqrt(float v) { return 1.0f / std::sqrt(v); }
inline double acc_rsqrt(double v) { return 1.0 / std::sqrt(v); }
inline float acc_sqrt(float v) { return std::sqrt(v); }
inline double acc_sqrt(double v) { return std::sqrt(v); }
inline float acc_exp(float v) { return std::exp(v); }
inline double acc_exp(double v) { return std::exp(v); }
inline float acc_log(float v) { return std::log(v); }
inline double acc_log(double v) { return std::log(v); }
inline float acc_max(float a, float b) { return std::fmax(a, b); }
inline double acc_max(double a, double b) { return std::fmax(a, b); }
template <typename A> inline A neg_inf() { return -std::numeric_limits<A>::infinity(); }
"""

EMU_LAUNCH = r"""
template <typename T> struct Code { static const char* get() { return "?"; } };
template <> struct Code<float> { static const char* get() { return "f"; } };
template <> struct Code<double> { static const char* get() { return "d"; } };
template <> struct Code<unsigned short> { static const char* get() { return "h"; } };
template <> struct Code<long long> { static const char* get() { return "q"; } };
template <> struct Code<unsigned long long> { static const char* get() { return "Q"; } };
template <> struct Code<int> { static const char* get() { return "i"; } };

template <typename X> std::string emu_arg_code() {
    typedef typename std::remove_cv<X>::type Y;
    if (std::is_pointer<Y>::value)
        return std::string("p") + Code<typename std::remove_cv<typename std::remove_pointer<Y>::type>::type>::get();
    return std::string("v") + std::to_string(sizeof(Y));
}

template <typename... Args> std::string emu_signature(void (*)(Args...)) {
    std::string s;
    const std::string parts[] = {emu_arg_code<Args>()..., ""};
    for (size_t i = 0; i < sizeof...(Args); ++i) { if (i) s += ","; s += parts[i]; }
    return s;
}

template <typename... Args, size_t... I>
void emu_call(void (*f)(Args...), void** params, std::index_sequence<I...>) {
    f(*reinterpret_cast<typename std::remove_cv<Args>::type*>(params[I])...);
}

static void (*g_entry)(void*);
static void* g_entry_arg;
static void emu_fiber_main() {
    g_entry(g_entry_arg);
    g_sched->done[g_sched->current] = 1;
    ++g_sched->progress;
    _longjmp(g_sched->main_jb, 1);
}

template <typename... Args> struct EmuCall {
    void (*f)(Args...);
    void** params;
    static void run(void* self) {
        EmuCall* c = static_cast<EmuCall*>(self);
        emu_call(c->f, c->params, std::index_sequence_for<Args...>{});
    }
};

template <typename... Args>
void emu_launch(void (*f)(Args...), const int* g, const int* b, void** params) {
    gridDim = dim3{(unsigned)g[0], (unsigned)g[1], (unsigned)g[2]};
    blockDim = dim3{(unsigned)b[0], (unsigned)b[1], (unsigned)b[2]};
    const int nt = b[0] * b[1] * b[2];
    const size_t stack_size = 1 << 17;
    std::unique_ptr<char[]> stacks(new char[(size_t)nt * stack_size]);
    EmuCall<Args...> call{f, params};
    g_entry = &EmuCall<Args...>::run;
    g_entry_arg = &call;
    for (int bz = 0; bz < g[2]; ++bz)
    for (int by = 0; by < g[1]; ++by)
    for (int bx = 0; bx < g[0]; ++bx) {
        EmuBlock blk;
        blk.block.reset(new EmuBarrier(nt));
        for (int w = 0; w < (nt + 31) / 32; ++w)
            blk.warps.emplace_back(new EmuBarrier(nt - 32 * w < 32 ? nt - 32 * w : 32));
        g_block = &blk;
        EmuSched sched;
        g_sched = &sched;
        sched.ctx.resize(nt);
        sched.jb.resize(nt);
        sched.tid.resize(nt);
        sched.done.assign(nt, 0);
        sched.started.assign(nt, 0);
        blockIdx = dim3{(unsigned)bx, (unsigned)by, (unsigned)bz};
        for (int t = 0; t < nt; ++t) {
            sched.tid[t] = dim3{(unsigned)(t % b[0]), (unsigned)((t / b[0]) % b[1]), (unsigned)(t / (b[0] * b[1]))};
            getcontext(&sched.ctx[t]);
            sched.ctx[t].uc_stack.ss_sp = &stacks[(size_t)t * stack_size];
            sched.ctx[t].uc_stack.ss_size = stack_size;
            sched.ctx[t].uc_link = nullptr;
            makecontext(&sched.ctx[t], emu_fiber_main, 0);
        }
        for (;;) {
            const long before = sched.progress;
            int alive = 0;
            for (int t = 0; t < nt; ++t) {
                if (sched.done[t]) continue;
                sched.current = t;
                threadIdx = sched.tid[t];
                if (!_setjmp(sched.main_jb)) {
                    if (!sched.started[t]) { sched.started[t] = 1; swapcontext(&sched.main_ctx, &sched.ctx[t]); }
                    else _longjmp(sched.jb[t].b, 1);
                }
                threadIdx = sched.tid[t];
                alive += !sched.done[t];
            }
            if (!alive) break;
            if (sched.progress == before) {
                std::fprintf(stderr, "cuda emulator: deadlock in block (%d, %d, %d): %d threads wait at a barrier "
                             "that the others never reach\n", bx, by, bz, alive);
                std::abort();
            }
        }
    }
}
"""

_DTYPE_CODE = {
    np.dtype(np.float32): "f", np.dtype(np.float64): "d", np.dtype(np.float16): "h",
    np.dtype(np.int64): "q", np.dtype(np.uint64): "Q", np.dtype(np.int32): "i",
}
_CTYPES = {
    np.dtype(np.int64): ctypes.c_int64, np.dtype(np.int32): ctypes.c_int32, np.dtype(np.uint64): ctypes.c_uint64,
    np.dtype(np.float64): ctypes.c_double, np.dtype(np.float32): ctypes.c_float,
}


def compiler_available() -> bool:
    return shutil.which("g++") is not None


def build(source: str, names, cache_dir: str | None = None):
    """Compile ``source`` (kernels only) with wrappers for ``names``; returns the loaded library."""
    names = list(names)
    wrappers = ["#include <string>"]
    for i, name in enumerate(names):
        wrappers.append(
            f'extern "C" void emu_{i}(const int* g, const int* b, void** p) {{ emu_launch(&{name}, g, b, p); }}\n'
            f'extern "C" const char* emu_sig_{i}() {{ static std::string s = emu_signature(&{name}); return s.c_str(); }}'
        )
    code = EMU_PRELUDE + EMU_LAUNCH + cuda_common.COMMON + source + "\n".join(wrappers) + "\n"
    digest = hashlib.sha1(code.encode()).hexdigest()[:16]
    cache_dir = cache_dir or os.path.join(tempfile.gettempdir(), "minitorch_ln_cuda_emu")
    os.makedirs(cache_dir, exist_ok=True)
    lib_path = os.path.join(cache_dir, f"emu_{digest}.so")
    if not os.path.exists(lib_path):
        src_path = os.path.join(cache_dir, f"emu_{digest}.cpp")
        with open(src_path, "w") as f:
            f.write(code)
        extra = os.environ.get("CUDA_EMU_CXXFLAGS", "").split()
        cmd = ["g++", "-std=c++17", "-O1", "-U_FORTIFY_SOURCE", "-shared", "-fPIC", "-Wno-unknown-pragmas",
               *extra, src_path, "-o", lib_path + ".tmp"]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"g++ could not compile the emulated kernels:\n{res.stderr[-6000:]}")
        os.replace(lib_path + ".tmp", lib_path)
    lib = ctypes.CDLL(lib_path)
    table = {}
    for i, name in enumerate(names):
        fn = getattr(lib, f"emu_{i}")
        fn.restype = None
        sig = getattr(lib, f"emu_sig_{i}")
        sig.restype = ctypes.c_char_p
        table[name] = (fn, sig().decode().split(","))
    return lib, table


class EmuLauncher:
    """``cuda_common.launcher`` for NumPy arrays: runs kernels in the emulator and checks arguments.

    ``names`` lists the kernels to compile up front (one g++ run); an unknown one triggers another
    build. ``launches`` records ``(name, grid, block)`` of every launch, for tests to inspect.
    """

    def __init__(self, source: str, names=(), sms: int = 3, blocks_per_sm: int = 2):
        self.source, self.sms, self.per_sm = source, sms, blocks_per_sm
        self.names = list(dict.fromkeys(names))
        self.table = {}
        self.launches = []
        if self.names:
            self._lib, self.table = build(source, self.names)

    def num_sms(self) -> int:
        return self.sms

    def blocks_per_sm(self, source, name, threads) -> int:
        return self.per_sm

    def launch(self, source, name, grid, block, args) -> None:
        if source != self.source:
            raise AssertionError("EmuLauncher: a kernel of another source module was launched")
        if name not in self.table:
            self.names.append(name)
            self._lib, self.table = build(self.source, self.names)
        fn, sig = self.table[name]
        if len(sig) != len(args):
            raise TypeError(f"{name}: the kernel takes {len(sig)} arguments, {len(args)} were passed")
        if block[0] * block[1] * block[2] > 1024 or min(block) < 1 or min(grid) < 1:
            raise ValueError(f"{name}: invalid launch shape grid={grid} block={block}")
        keep, params = [], []
        for i, (code, a) in enumerate(zip(sig, args)):
            if code[0] == "p":
                if not isinstance(a, np.ndarray):
                    raise TypeError(f"{name}: argument {i} must be an array (pointer), got {type(a).__name__}")
                if _DTYPE_CODE.get(a.dtype) != code[1]:
                    raise TypeError(f"{name}: argument {i} must point to '{code[1]}', got an array of {a.dtype}")
                if a.size and not a.flags.c_contiguous:
                    raise ValueError(f"{name}: argument {i} is not C-contiguous")
                v = ctypes.c_void_p(a.ctypes.data)
            else:
                if not isinstance(a, np.generic) or a.dtype not in _CTYPES:
                    raise TypeError(f"{name}: argument {i} must be a sized NumPy scalar, got {a!r}")
                if a.dtype.itemsize != int(code[1:]):
                    raise TypeError(f"{name}: argument {i} takes {code[1:]} bytes, got {a.dtype} ({a.dtype.itemsize})")
                v = _CTYPES[a.dtype](a.item())
            keep.append(v)
            params.append(ctypes.cast(ctypes.pointer(v), ctypes.c_void_p))
        arr = (ctypes.c_void_p * len(params))(*params)
        g = (ctypes.c_int * 3)(*grid)
        b = (ctypes.c_int * 3)(*block)
        self.launches.append((name, tuple(grid), tuple(block)))
        fn(g, b, arr)


class Emulator:
    """One :class:`EmuLauncher` per kernel source, behind the ``cuda_common.launcher`` interface.

    ``prebuild`` maps a source to the kernel names to compile at once (one g++ run per source).
    """

    def __init__(self, prebuild: dict, sms: int = 2, blocks_per_sm: int = 1):
        self.sms, self.per_sm = sms, blocks_per_sm
        self.by_source = {src: EmuLauncher(src, names, sms, blocks_per_sm) for src, names in prebuild.items()}
        self.launches = []  # (name, grid, block) of every launch, in order


    def num_sms(self) -> int:
        return self.sms

    def blocks_per_sm(self, source, name, threads) -> int:
        return self.per_sm

    def launch(self, source, name, grid, block, args) -> None:
        if source not in self.by_source:
            self.by_source[source] = EmuLauncher(source, (), self.sms, self.per_sm)
        self.by_source[source].launch(source, name, grid, block, args)
        self.launches.append((name, tuple(grid), tuple(block)))


@contextlib.contextmanager
def installed(prebuild: dict, **kwargs):
    """``with installed({SOURCE: names}) as emu:`` the kernels' wrappers launch on the emulator
    (it stands in for ``cuda_common.launcher``), and the real launcher is put back after."""
    emu = Emulator(prebuild, **kwargs)
    saved = cuda_common.launcher
    cuda_common.launcher = emu
    try:
        yield emu
    finally:
        cuda_common.launcher = saved


def rel_err(got, ref) -> float:
    """The largest ``|got - ref|`` relative to the largest ``|ref|`` (0 for empty arrays)."""
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    return float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)) if ref.size else 0.0


def check_norm_kernels(kernel, oracle, fwd: str, bwd: str, x, dy, weight, bias, eps, tol=1e-12):
    """Run ``kernel``'s ``fwd``/``bwd`` (a CUDA kernel module under the emulator) and ``oracle``'s on
    the same arrays and assert they agree within ``tol`` (:func:`rel_err`): the forward's outputs,
    ``dx``, and ``dweight``/``dbias``, which are both None without a weight. Returns the kernel's
    forward outputs and backward results ``(fwd_out, (dx, dweight, dbias))``."""
    got, ref = getattr(kernel, fwd)(x, weight, bias, eps), getattr(oracle, fwd)(x, weight, bias, eps)
    for g, r in zip(got, ref):
        assert rel_err(g, r) < tol
    grads = getattr(kernel, bwd)(dy, x, weight, got[1], got[2])
    rdx, rdw, rdb = getattr(oracle, bwd)(dy, x, weight, ref[1], ref[2])
    dx, dw, db = grads
    assert rel_err(dx, rdx) < tol
    if weight is None:
        assert dw is None and db is None
    else:
        assert rel_err(dw, rdw) < tol and rel_err(db, rdb) < tol
    return got, grads

"""A fused multi-tensor Adam/AdamW update for CuPy parameters: one kernel launch per parameter group.

The per-parameter path (``optim/adam.py`` calling ``kernels/adam.py``) runs about ten array
operations per parameter; for the ``small`` GPT (~80 parameter tensors) that is ~800 kernel
launches per step, ~8 ms of Python and launch overhead alone. Here a table of pointers (parameters, gradients, ``exp_avg``, ``exp_avg_sq``)
and a table of chunks (``CHUNK`` elements of one tensor each) go to one kernel, whose blocks walk
the chunks; each element is read and written once. The arithmetic is ``kernels/adam.py``'s, in the
same order, in the parameter's precision (float32 for float16 parameters)::

    g ← -g (maximize);  θ ← θ(1 - γλ) (decoupled)  or  g ← g + λθ (L2)
    m ← m + (1 - β1)(g - m);  v ← β2 v + (1 - β2) g²;  v̂ ← max(v̂, v) (amsgrad)
    θ ← θ - (m · γ / (1 - β1ᵗ)) / (√v / √(1 - β2ᵗ) + ε)
"""

from __future__ import annotations

import numpy as np

from . import cuda_common
from .cuda_common import CTYPE, device_of_array, pointer

CHUNK = 65536  # elements of one tensor handled by one block visit

SOURCE = r"""
template <typename T>
__global__ void adam_multi(const unsigned long long* __restrict__ params, const unsigned long long* __restrict__ grads,
                           const unsigned long long* __restrict__ exp_avgs,
                           const unsigned long long* __restrict__ exp_avg_sqs,
                           const unsigned long long* __restrict__ max_exp_avg_sqs,
                           const long long* __restrict__ sizes, const int* __restrict__ chunk_tensor,
                           const long long* __restrict__ chunk_start, int n_chunks, int chunk_size,
                           double one_minus_beta1, double beta2, double one_minus_beta2, double eps,
                           double weight_decay, double decay, double step_size, double bias_correction2_sqrt,
                           int decoupled, int maximize, int amsgrad) {
    typedef typename Acc<T>::type A;
    // 1 - beta and 1 - lr * wd come computed in double, as Python computes them for the CPU path
    const A a_omb1 = (A)one_minus_beta1, a_b2 = (A)beta2, a_omb2 = (A)one_minus_beta2, a_eps = (A)eps;
    const A a_wd = (A)weight_decay, a_decay = (A)decay, a_step = (A)step_size, a_bc2 = (A)bias_correction2_sqrt;
    for (int ch = blockIdx.x; ch < n_chunks; ch += gridDim.x) {
        const int t = chunk_tensor[ch];
        const long long start = chunk_start[ch];
        const long long end = start + chunk_size < sizes[t] ? start + chunk_size : sizes[t];
        T* p = reinterpret_cast<T*>(params[t]);
        const T* g = reinterpret_cast<const T*>(grads[t]);
        T* m = reinterpret_cast<T*>(exp_avgs[t]);
        T* v = reinterpret_cast<T*>(exp_avg_sqs[t]);
        T* vmax = amsgrad ? reinterpret_cast<T*>(max_exp_avg_sqs[t]) : (T*)0;
        for (long long i = start + threadIdx.x; i < end; i += blockDim.x) {
            A gi = to_acc(g[i]);
            A pi = to_acc(p[i]);
            if (maximize) gi = -gi;
            if (a_wd != (A)0) {
                if (decoupled) pi *= a_decay;
                else gi += a_wd * pi;
            }
            A mi = to_acc(m[i]);
            mi += a_omb1 * (gi - mi);                      // first moment (a lerp, as PyTorch)
            A vi = to_acc(v[i]) * a_b2 + a_omb2 * gi * gi;  // second moment
            m[i] = cast_to<T>(mi);
            v[i] = cast_to<T>(vi);
            if (amsgrad) {
                const A vm = acc_max((A)to_acc(vmax[i]), vi);
                vmax[i] = cast_to<T>(vm);
                vi = vm;
            }
            const A denom = acc_sqrt(vi) / a_bc2 + a_eps;
            pi -= (mi * a_step) / denom;
            p[i] = cast_to<T>(pi);
        }
    }
}
"""

_chunk_tables: dict = {}


def _chunks(sizes: tuple, xp):
    """``(chunk_tensor int32, chunk_start int64, sizes int64)`` device arrays, cached per size list."""
    key = (sizes, CHUNK, xp.__name__, _device_id(xp))
    if key not in _chunk_tables:
        tensor, start = [], []
        for i, n in enumerate(sizes):
            for s in range(0, n, CHUNK):
                tensor.append(i)
                start.append(s)
        _chunk_tables[key] = (
            xp.asarray(np.array(tensor, dtype=np.int32)),  # (n_chunks,)
            xp.asarray(np.array(start, dtype=np.int64)),  # (n_chunks,)
            xp.asarray(np.array(sizes, dtype=np.int64)),  # (n_tensors,)
        )
    return _chunk_tables[key]


def _device_id(xp) -> int:
    return xp.cuda.Device().id if hasattr(xp, "cuda") else -1


def adam_multi_tensor(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs=None, *, lr: float, beta1: float,
                      beta2: float, eps: float, weight_decay: float, step: int, decoupled_weight_decay: bool,
                      maximize: bool = False) -> None:
    """Update every array of ``params`` in place with one Adam/AdamW step (one kernel launch).

    Args:
        params, exp_avgs, exp_avg_sqs (and ``max_exp_avg_sqs`` for amsgrad): lists of C-contiguous
            CuPy arrays, one dtype (float16/32/64) for all, on one GPU; updated in place.
        grads: arrays of the same shapes (made contiguous and cast to the parameters' dtype if needed).
        step: the step number ``t`` after incrementing (the same for every tensor of the call).
        lr, beta1, beta2, eps, weight_decay, decoupled_weight_decay, maximize: as ``optim.Adam``.

    Raises:
        ValueError: lists of different lengths, shapes that differ, non-contiguous parameters or
        states, or mixed dtypes.
    """
    n = len(params)
    lists = [grads, exp_avgs, exp_avg_sqs] + ([max_exp_avg_sqs] if max_exp_avg_sqs is not None else [])
    if any(len(lst) != n for lst in lists):
        raise ValueError("adam_multi_tensor: params, grads and states must be lists of the same length")
    if n == 0:
        return
    dtype = params[0].dtype
    if dtype not in CTYPE:
        raise ValueError(f"adam_multi_tensor: parameters must be float16/32/64, got {dtype}")
    xp = cuda_common.array_module(params[0])
    fixed_grads = []
    for i, p in enumerate(params):
        states = [lst[i] for lst in lists[1:]]
        for a in (p, *states):
            if a.dtype != dtype or a.shape != p.shape or not a.flags.c_contiguous:
                raise ValueError(
                    f"adam_multi_tensor: tensor {i}: parameters and states must be C-contiguous {dtype} arrays of "
                    f"shape {p.shape}, got {a.dtype} {a.shape} (contiguous: {a.flags.c_contiguous})"
                )
        g = grads[i]
        if g.shape != p.shape:
            raise ValueError(f"adam_multi_tensor: gradient {i} has shape {g.shape}, its parameter {p.shape}")
        fixed_grads.append(xp.ascontiguousarray(g, dtype=dtype))

    sizes = tuple(int(p.size) for p in params)
    chunk_tensor, chunk_start, size_arr = _chunks(sizes, xp)
    n_chunks = int(chunk_tensor.shape[0])
    if n_chunks == 0:
        return
    amsgrad = max_exp_avg_sqs is not None
    lists = (params, fixed_grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs if amsgrad else exp_avg_sqs)
    ptrs = xp.asarray(np.array([[pointer(a) for a in lst] for lst in lists], dtype=np.uint64))  # (5, n): one copy
    args = (
        ptrs[0], ptrs[1], ptrs[2], ptrs[3], ptrs[4], size_arr, chunk_tensor, chunk_start,
        np.int32(n_chunks), np.int32(CHUNK),
        np.float64(1 - beta1), np.float64(beta2), np.float64(1 - beta2), np.float64(eps), np.float64(weight_decay),
        np.float64(1 - lr * weight_decay), np.float64(lr / (1 - beta1**step)), np.float64((1 - beta2**step) ** 0.5),
        np.int32(bool(decoupled_weight_decay)), np.int32(bool(maximize)), np.int32(amsgrad),
    )
    with device_of_array(params[0]):
        blocks = min(n_chunks, cuda_common.launcher.num_sms() * 8)
        cuda_common.launcher.launch(SOURCE, f"adam_multi<{CTYPE[dtype]}>", (blocks, 1, 1), (256, 1, 1), args)
    # the pointer tables and the contiguous gradient copies must live until the kernel has run:
    # CuPy's memory pool reuses a freed block only for work queued after the free on the same stream


def example_kernels() -> list:
    return [f"adam_multi<{t}>" for t in ("float", "half_t", "double")]

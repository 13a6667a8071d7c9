"""Fused LayerNorm forward and backward for CuPy arrays: CUDA kernels and their launch wrappers.

Same formulas and signatures as the NumPy kernels in ``kernels/layernorm.py`` (the oracle), for a
C-contiguous ``x`` of shape ``(N, D)`` normalised over its last axis (derivation: ``docs/``)::

    mean = sum(x) / D                 rstd = 1 / sqrt(sum((x - mean)^2) / D + eps)
    xhat = (x - mean) * rstd          y = xhat * weight + bias
    g = dy * weight
    dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
    dweight = sum_rows(dy * xhat)     dbias = sum_rows(dy)

Layout: a *row group* of ``32 * WPR`` threads (``WPR`` warps) handles one row; a block holds
``RPB`` row groups (``blockDim = (32 * WPR, RPB)``). Each thread keeps ``ITEMS`` packs of ``VEC``
elements of its row in registers (``VEC * itemsize`` = 16 bytes where ``D`` allows), so:

- forward reads ``x`` once and writes ``y`` once; the variance is the exact two-pass one (from the
  registers, so a large mean with a tiny spread loses nothing) and ``mean``/``rstd`` are saved;
- backward reads ``x`` and ``dy`` once and writes ``dx`` once per row. A thread always owns the same
  columns, so it also sums ``dy * xhat`` and ``dy`` for its columns over the rows it visits (a
  persistent grid walks the rows in a fixed order), adds the block's row groups in shared memory
  and writes one ``(D,)`` row per block to a ``(blocks, D)`` buffer; a second kernel sums that
  buffer's columns in a fixed order. No float atomics: the
  result is identical on every run.

float16 inputs are computed in float32 (statistics and gradient sums in float32); float32 in float32;
float64 in float64. Rows longer than the register budget allows (``D`` above 32768 for float32 in
forward, 16384 in backward) fall back to CuPy array expressions with the same numerics.
"""

from __future__ import annotations

import numpy as np

from . import cuda_common
from .cuda_common import CTYPE, acc_dtype, check_kernel_dtype, device_of_array, vector_width

SOURCE = r"""
#define LN_COMB 16384   // bytes of shared memory per gradient sum for adding a block's row groups

// y = (x - mean) * rstd * weight + bias, one row per row group; mean/rstd saved per row.
template <typename T, int VEC, int ITEMS, int WPR>
__global__ void ln_fwd(const T* __restrict__ x, const T* __restrict__ weight, const T* __restrict__ bias,
                       T* __restrict__ y, typename Acc<T>::type* __restrict__ mean_out,
                       typename Acc<T>::type* __restrict__ rstd_out,
                       long long N, int D, double eps, int has_weight, int has_bias) {
    typedef typename Acc<T>::type A;
    typedef Pack<T, VEC> P;
    __shared__ A smem[64];
    const long long row = (long long)blockIdx.x * blockDim.y + threadIdx.y;
    const bool valid = row < N;              // no early return: every thread must reach group_sum
    const int nvec = D / VEC;
    const P* xrow = reinterpret_cast<const P*>(x + (valid ? row : 0) * (long long)D);

    A v[ITEMS][VEC];                         // this thread's part of the row, in registers
    A s = 0;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int c = k * (32 * WPR) + threadIdx.x;   // pack index in the row: coalesced per warp
        if (valid && c < nvec) {
            const P p = xrow[c];
#pragma unroll
            for (int j = 0; j < VEC; ++j) { v[k][j] = to_acc(p.v[j]); s += v[k][j]; }
        } else {
#pragma unroll
            for (int j = 0; j < VEC; ++j) v[k][j] = 0;
        }
    }
    const A mean = group_sum<WPR>(s, smem) / (A)D;

    A q = 0;                                 // second pass over the registers: exact variance
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int c = k * (32 * WPR) + threadIdx.x;
        if (valid && c < nvec) {
#pragma unroll
            for (int j = 0; j < VEC; ++j) { const A d = v[k][j] - mean; q += d * d; }
        }
    }
    const A var = group_sum<WPR>(q, smem) / (A)D;
    const A rstd = acc_rsqrt(var + (A)eps);
    if (!valid) return;                      // no synchronisation below this line
    if (threadIdx.x == 0) { mean_out[row] = mean; rstd_out[row] = rstd; }

    P* yrow = reinterpret_cast<P*>(y + row * (long long)D);
    const P* wp = reinterpret_cast<const P*>(weight);
    const P* bp = reinterpret_cast<const P*>(bias);
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int c = k * (32 * WPR) + threadIdx.x;
        if (c < nvec) {
            P out, w, b;
            if (has_weight) w = wp[c];
            if (has_bias) b = bp[c];
#pragma unroll
            for (int j = 0; j < VEC; ++j) {
                A o = (v[k][j] - mean) * rstd;                    // xhat
                if (has_weight) o *= to_acc(w.v[j]);
                if (has_bias) o += to_acc(b.v[j]);
                out.v[j] = cast_to<T>(o);
            }
            yrow[c] = out;
        }
    }
}

// dx for every row, plus the sums of dy * xhat (dweight) and dy (dbias) over the rows this block
// visits (row groups blockIdx.x, blockIdx.x + gridDim.x, ...), written to row blockIdx.x of
// part_dw / part_db, of shape (gridDim.x, D).
template <typename T, int VEC, int ITEMS, int WPR>
__global__ void ln_bwd(const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ weight,
                       const typename Acc<T>::type* __restrict__ mean,
                       const typename Acc<T>::type* __restrict__ rstd,
                       T* __restrict__ dx, typename Acc<T>::type* __restrict__ part_dw,
                       typename Acc<T>::type* __restrict__ part_db,
                       long long N, int D, int has_weight, int need_param_grads) {
    typedef typename Acc<T>::type A;
    typedef Pack<T, VEC> P;
    __shared__ A smem[64];
    const int nvec = D / VEC;
    const P* wp = reinterpret_cast<const P*>(weight);

    A dw_acc[ITEMS][VEC], db_acc[ITEMS][VEC];
#pragma unroll
    for (int k = 0; k < ITEMS; ++k)
#pragma unroll
        for (int j = 0; j < VEC; ++j) { dw_acc[k][j] = 0; db_acc[k][j] = 0; }

    const long long groups = (N + blockDim.y - 1) / blockDim.y;
    for (long long grp = blockIdx.x; grp < groups; grp += gridDim.x) {   // same trip count in the block
        const long long row = grp * blockDim.y + threadIdx.y;
        const bool valid = row < N;
        const A mu = valid ? mean[row] : (A)0;
        const A rs = valid ? rstd[row] : (A)0;
        const P* xrow = reinterpret_cast<const P*>(x + (valid ? row : 0) * (long long)D);
        const P* dyrow = reinterpret_cast<const P*>(dy + (valid ? row : 0) * (long long)D);

        A xhat[ITEMS][VEC], g[ITEMS][VEC];
        A sum_g = 0, sum_gx = 0;
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const int c = k * (32 * WPR) + threadIdx.x;
            if (valid && c < nvec) {
                const P xp = xrow[c], dp = dyrow[c];
                P w;
                if (has_weight) w = wp[c];
#pragma unroll
                for (int j = 0; j < VEC; ++j) {
                    const A d = to_acc(dp.v[j]);
                    xhat[k][j] = (to_acc(xp.v[j]) - mu) * rs;
                    g[k][j] = has_weight ? d * to_acc(w.v[j]) : d;
                    sum_g += g[k][j];
                    sum_gx += g[k][j] * xhat[k][j];
                    dw_acc[k][j] += d * xhat[k][j];
                    db_acc[k][j] += d;
                }
            } else {
#pragma unroll
                for (int j = 0; j < VEC; ++j) { xhat[k][j] = 0; g[k][j] = 0; }
            }
        }
        group_sum2<WPR>(sum_g, sum_gx, smem);
        const A mean_g = sum_g / (A)D, mean_gx = sum_gx / (A)D;
        if (valid) {
            P* dxrow = reinterpret_cast<P*>(dx + row * (long long)D);
#pragma unroll
            for (int k = 0; k < ITEMS; ++k) {
                const int c = k * (32 * WPR) + threadIdx.x;
                if (c < nvec) {
                    P out;
#pragma unroll
                    for (int j = 0; j < VEC; ++j)
                        // the three terms: g, minus its row mean, minus xhat times mean(g * xhat)
                        out.v[j] = cast_to<T>(rs * (g[k][j] - mean_g - xhat[k][j] * mean_gx));
                    dxrow[c] = out;
                }
            }
        }
    }
    if (!need_param_grads) return;
    // Add up the RPB row groups of the block (same columns, fixed order), one partial row per block.
    A* pdw = part_dw + (long long)blockIdx.x * D;
    A* pdb = part_db + (long long)blockIdx.x * D;
    if (blockDim.y == 1) {
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const int c = k * (32 * WPR) + threadIdx.x;
            if (c < nvec) {
#pragma unroll
                for (int j = 0; j < VEC; ++j) { pdw[c * VEC + j] = dw_acc[k][j]; pdb[c * VEC + j] = db_acc[k][j]; }
            }
        }
        return;
    }
    // RPB > 1 only when WPR <= 4, so RPB * D <= 8 * 32 * (elements per thread) <= LN_COMB
    __shared__ A comb[2 * LN_COMB / sizeof(A)];
    const int half = LN_COMB / sizeof(A);
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int c = k * (32 * WPR) + threadIdx.x;
        if (c < nvec) {
#pragma unroll
            for (int j = 0; j < VEC; ++j) {
                comb[threadIdx.y * D + c * VEC + j] = dw_acc[k][j];
                comb[half + threadIdx.y * D + c * VEC + j] = db_acc[k][j];
            }
        }
    }
    __syncthreads();
    if (threadIdx.y != 0) return;
    for (int col = threadIdx.x; col < D; col += blockDim.x) {
        A tw = 0, tb = 0;
        for (int t = 0; t < (int)blockDim.y; ++t) { tw += comb[t * D + col]; tb += comb[half + t * D + col]; }
        pdw[col] = tw;
        pdb[col] = tb;
    }
}

// dweight[j] = sum_r part_dw[r, j] (and dbias), blockDim = (32, 32): 32 columns per block, the rows
// split over threadIdx.y, then added in a fixed order through shared memory.
template <typename T>
__global__ void ln_param_grads(const typename Acc<T>::type* __restrict__ part_dw,
                               const typename Acc<T>::type* __restrict__ part_db,
                               T* __restrict__ dweight, T* __restrict__ dbias, int R, int D) {
    typedef typename Acc<T>::type A;
    __shared__ A s_w[32][33];
    __shared__ A s_b[32][33];
    const int col = blockIdx.x * 32 + threadIdx.x;
    A aw = 0, ab = 0;
    if (col < D) {
        for (int r = threadIdx.y; r < R; r += 32) {
            aw += part_dw[(long long)r * D + col];
            ab += part_db[(long long)r * D + col];
        }
    }
    s_w[threadIdx.y][threadIdx.x] = aw;
    s_b[threadIdx.y][threadIdx.x] = ab;
    __syncthreads();
    if (threadIdx.y == 0 && col < D) {
        A tw = 0, tb = 0;
        for (int i = 0; i < 32; ++i) { tw += s_w[i][threadIdx.x]; tb += s_b[i][threadIdx.x]; }
        dweight[col] = cast_to<T>(tw);
        dbias[col] = cast_to<T>(tb);
    }
}
"""

# Elements of a row one thread keeps in registers (forward holds x; backward holds xhat, g and two
# gradient sums per element, hence the smaller budget). Halved for float64.
FWD_ELEMENTS = 32
BWD_ELEMENTS = 16


def row_config(D: int, dtype, budget: int):
    """Launch shape for rows of ``D`` elements: ``(VEC, ITEMS, WPR, RPB)``, or None when too long.

    ``VEC`` elements per 16-byte pack, ``ITEMS`` packs per thread, ``WPR`` warps per row (the fewest
    that keep ``ITEMS * VEC`` within ``budget``), ``RPB`` rows per block (blocks of ~256 threads).
    """
    itemsize = np.dtype(dtype).itemsize
    if itemsize == 8:
        budget //= 2
    vec = vector_width(D, itemsize)
    nvec = D // vec
    for wpr in (1, 2, 4, 8, 16, 32):
        items = -(-nvec // (32 * wpr))
        if items * vec <= budget:
            return vec, max(items, 1), wpr, max(1, 8 // wpr)
    return None


def _check_x(x, what: str):
    check_kernel_dtype(x, what)
    if x.ndim != 2 or not x.flags.c_contiguous:
        raise ValueError(f"{what}: expected a C-contiguous array of shape (N, D), got shape {x.shape}")


def _check_param(p, D: int, x, what: str):
    if p is None:
        return None
    if p.shape != (D,):
        raise ValueError(f"{what}: expected shape ({D},) to match the last axis of x, got {p.shape}")
    # the kernels read the parameters in x's dtype (as the NumPy oracle computes with them)
    return p if (p.dtype == x.dtype and p.flags.c_contiguous) else p.astype(x.dtype, order="C")


def layer_norm_fwd(x, weight, bias, eps: float):
    """Fused LayerNorm forward over the last axis of a CuPy array.

    Args:
        x: C-contiguous ``(N, D)`` array, float16, float32 or float64.
        weight, bias: ``(D,)`` arrays or None (read in ``x``'s dtype).
        eps: added to the variance.

    Returns:
        ``(y, mean, rstd)``: ``y`` ``(N, D)`` in ``x``'s dtype; ``mean`` and ``rstd`` ``(N, 1)`` in
        float32 for float16 input, else in ``x``'s dtype.

    Raises:
        TypeError: for a dtype other than float16/32/64. ValueError: for a shape that is not
        ``(N, D)`` C-contiguous, or parameters whose shape is not ``(D,)``.
    """
    _check_x(x, "layer_norm_fwd")
    N, D = x.shape
    weight = _check_param(weight, D, x, "layer_norm_fwd: weight")
    bias = _check_param(bias, D, x, "layer_norm_fwd: bias")
    xp = cuda_common.array_module(x)
    stat = acc_dtype(x.dtype)
    y = xp.empty((N, D), dtype=x.dtype)  # (N, D)
    mean = xp.empty((N, 1), dtype=stat)  # (N, 1)
    rstd = xp.empty((N, 1), dtype=stat)  # (N, 1)
    if N == 0 or D == 0:
        rstd[...] = 1.0 / np.sqrt(eps) if D == 0 else 0
        mean[...] = 0
        return y, mean, rstd
    cfg = row_config(D, x.dtype, FWD_ELEMENTS)
    if cfg is None:
        return _fwd_composed(xp, x, weight, bias, eps)
    vec, items, wpr, rpb = cfg
    name = f"ln_fwd<{CTYPE[x.dtype]}, {vec}, {items}, {wpr}>"
    grid = (-(-N // rpb), 1, 1)
    block = (32 * wpr, rpb, 1)
    args = (
        x, weight if weight is not None else x, bias if bias is not None else x, y, mean, rstd,
        np.int64(N), np.int32(D), np.float64(eps), np.int32(weight is not None), np.int32(bias is not None),
    )
    with device_of_array(x):
        cuda_common.launcher.launch(SOURCE, name, grid, block, args)
    return y, mean, rstd


def layer_norm_bwd(dy, x, weight, mean, rstd, need_param_grads=None):
    """Fused LayerNorm backward: ``dx`` in one pass per row, ``dweight``/``dbias`` deterministically.

    Args:
        dy, x: C-contiguous ``(N, D)`` arrays of one float dtype.
        weight: ``(D,)`` or None.
        mean, rstd: ``(N, 1)`` (or ``(N,)``) from :func:`layer_norm_fwd`.
        need_param_grads: compute ``dweight`` and ``dbias``; default: when ``weight`` is given.

    Returns:
        ``(dx, dweight, dbias)``: ``dx`` ``(N, D)`` in ``x``'s dtype; ``dweight``, ``dbias`` ``(D,)``
        summed in float32 (float64 for float64 input) and returned in ``weight``'s dtype (``x``'s
        when there is no weight), or None when not needed.

    Raises:
        TypeError / ValueError: as :func:`layer_norm_fwd`, and when ``dy`` does not match ``x``.
    """
    _check_x(x, "layer_norm_bwd")
    if dy.shape != x.shape or dy.dtype != x.dtype:
        raise ValueError(
            f"layer_norm_bwd: dy must match x, got dy {dy.shape} {dy.dtype} and x {x.shape} {x.dtype}"
        )
    N, D = x.shape
    if need_param_grads is None:
        need_param_grads = weight is not None
    out_dtype = weight.dtype if weight is not None else x.dtype
    w = _check_param(weight, D, x, "layer_norm_bwd: weight")
    xp = cuda_common.array_module(x)
    stat = acc_dtype(x.dtype)
    dy = dy if dy.flags.c_contiguous else xp.ascontiguousarray(dy)
    mean = xp.ascontiguousarray(mean.reshape(N), dtype=stat)  # (N,)
    rstd = xp.ascontiguousarray(rstd.reshape(N), dtype=stat)  # (N,)
    dx = xp.empty((N, D), dtype=x.dtype)  # (N, D)
    cfg = row_config(D, x.dtype, BWD_ELEMENTS)
    if N == 0 or D == 0 or cfg is None:
        return _bwd_composed(xp, dy, x, w, mean, rstd, need_param_grads, out_dtype)
    vec, items, wpr, rpb = cfg
    groups = -(-N // rpb)
    name = f"ln_bwd<{CTYPE[x.dtype]}, {vec}, {items}, {wpr}>"
    # one wave of resident blocks walks all rows: the partial buffer has one row per block
    with device_of_array(x):
        per_sm = cuda_common.launcher.blocks_per_sm(SOURCE, name, 32 * wpr * rpb)
        blocks = min(groups, cuda_common.launcher.num_sms() * per_sm)
    R = blocks
    if need_param_grads:
        part_dw = xp.empty((R, D), dtype=stat)  # (R, D)
        part_db = xp.empty((R, D), dtype=stat)  # (R, D)
    else:
        part_dw = part_db = dx  # never written
    args = (
        dy, x, w if w is not None else x, mean, rstd, dx, part_dw, part_db,
        np.int64(N), np.int32(D), np.int32(w is not None), np.int32(bool(need_param_grads)),
    )
    dweight = dbias = None
    with device_of_array(x):
        cuda_common.launcher.launch(SOURCE, name, (blocks, 1, 1), (32 * wpr, rpb, 1), args)
        if need_param_grads:
            dweight = xp.empty((D,), dtype=x.dtype)  # (D,)
            dbias = xp.empty((D,), dtype=x.dtype)  # (D,)
            name = f"ln_param_grads<{CTYPE[x.dtype]}>"
            cuda_common.launcher.launch(
                SOURCE, name, (-(-D // 32), 1, 1), (32, 32, 1), (part_dw, part_db, dweight, dbias, np.int32(R), np.int32(D))
            )
    if need_param_grads and dweight.dtype != out_dtype:
        dweight, dbias = dweight.astype(out_dtype), dbias.astype(out_dtype)
    return dx, dweight, dbias


# --------------------------------------------------------------------------------------------
# Rows too long for the register kernels: the same numerics as CuPy array expressions
# --------------------------------------------------------------------------------------------


def _fwd_composed(xp, x, weight, bias, eps):
    stat = acc_dtype(x.dtype)
    xf = x.astype(stat)  # (N, D)
    mean = xf.mean(axis=1, keepdims=True)  # (N, 1)
    xc = xf - mean  # (N, D)
    rstd = 1.0 / xp.sqrt((xc * xc).mean(axis=1, keepdims=True) + stat.type(eps))  # (N, 1)
    y = xc * rstd  # (N, D)
    if weight is not None:
        y = y * weight.astype(stat)
    if bias is not None:
        y = y + bias.astype(stat)
    return y.astype(x.dtype), mean, rstd.astype(stat)


def _bwd_composed(xp, dy, x, weight, mean, rstd, need_param_grads, out_dtype):
    stat = acc_dtype(x.dtype)
    N, D = x.shape
    mean, rstd = mean.reshape(N, 1), rstd.reshape(N, 1)  # (N, 1)
    dyf = dy.astype(stat)  # (N, D)
    xhat = (x.astype(stat) - mean) * rstd  # (N, D)
    g = dyf * weight.astype(stat) if weight is not None else dyf  # (N, D)
    if D > 0:
        dx = rstd * (g - g.mean(axis=1, keepdims=True) - xhat * (g * xhat).mean(axis=1, keepdims=True))
    else:
        dx = g
    dweight = dbias = None
    if need_param_grads:
        dweight = (dyf * xhat).sum(axis=0).astype(out_dtype)  # (D,)
        dbias = dyf.sum(axis=0).astype(out_dtype)  # (D,)
    return dx.astype(x.dtype), dweight, dbias

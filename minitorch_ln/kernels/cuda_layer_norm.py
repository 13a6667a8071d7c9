"""Fused LayerNorm forward and backward for CuPy arrays: CUDA kernels and their launch wrappers.

Same formulas and signatures as the NumPy kernels in ``kernels/layer_norm.py`` (the oracle), for a
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

from pathlib import Path

import numpy as np

from . import cuda_common
from . import layer_norm as _xp
from .cuda_common import CTYPE, check_kernel_dtype, check_param, device_of_array, param_dtype, vector_width
from .layer_norm import stat_dtype

# The CUDA source sits beside this file (``cuda_layer_norm.cu``), compiled by CuPy on first use.
SOURCE = (Path(__file__).parent / "cuda_layer_norm.cu").read_text()

# Elements of a row one thread keeps in registers (forward holds x; backward holds xhat, g and two
# gradient sums per element, hence the smaller budget). Halved for float64.
FWD_ELEMENTS = 32
BWD_ELEMENTS = 16


def row_config(D: int, dtype, budget: int, max_vec: int = 16):
    """Launch shape for rows of ``D`` elements: ``(VEC, ITEMS, WPR, RPB)``, or None when too long.

    ``VEC`` elements per 16-byte pack (at most ``max_vec``), ``ITEMS`` packs per thread, ``WPR``
    warps per row (the fewest that keep ``ITEMS * VEC`` within ``budget``), ``RPB`` rows per block
    (blocks of ~256 threads).
    """
    itemsize = np.dtype(dtype).itemsize
    if itemsize == 8:
        budget //= 2
    vec = min(vector_width(D, itemsize), max_vec)
    nvec = D // vec
    for wpr in (1, 2, 4, 8, 16, 32):
        items = -(-nvec // (32 * wpr))
        if items * vec <= budget:
            return vec, max(items, 1), wpr, max(1, 8 // wpr)
    return None


def _max_vec(*arrays) -> int:
    """The widest pack every array's start address allows (a view may start anywhere in its buffer).

    A pack of ``VEC`` elements of an array is loaded as one ``VEC * itemsize``-byte access, which
    the GPU requires to be aligned to its size.
    """
    vec = 16
    for a in arrays:
        if a is None:
            continue
        while vec > 1 and cuda_common.pointer(a) % (vec * a.dtype.itemsize):
            vec //= 2
    return vec


def _check_x(x, what: str):
    check_kernel_dtype(x, what)
    if x.ndim != 2 or not x.flags.c_contiguous:
        raise ValueError(f"{what}: expected a C-contiguous array of shape (N, D), got shape {x.shape}")


def layer_norm_fwd(x, weight, bias, eps: float):
    """Fused LayerNorm forward over the last axis of a CuPy array.

    Args:
        x: C-contiguous ``(N, D)`` array, float16, float32 or float64.
        weight, bias: ``(D,)`` arrays or None, in ``x``'s dtype (or float32 with float16 ``x``;
            any other dtype is converted to ``x``'s).
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
    pdt = param_dtype(x, weight if weight is not None else bias)
    weight = check_param(weight, D, pdt, "layer_norm_fwd: weight", "to match the last axis of x")
    bias = check_param(bias, D, pdt, "layer_norm_fwd: bias", "to match the last axis of x")
    xp = cuda_common.array_module(x)
    stat = stat_dtype(x.dtype)
    if N == 0 or D == 0:
        mean = xp.zeros((N, 1), dtype=stat)  # (N, 1)
        with np.errstate(divide="ignore", invalid="ignore"):  # any eps: inf for 0, NaN below
            rstd = xp.full((N, 1), 1.0 / np.sqrt(np.float64(eps)), dtype=stat)  # (N, 1): var = 0
        return xp.empty((N, D), dtype=x.dtype), mean, rstd
    cfg = row_config(D, x.dtype, FWD_ELEMENTS, _max_vec(x, weight, bias))
    if cfg is None:
        return _xp.layer_norm_fwd(x, weight, bias, eps)
    vec, items, wpr, rpb = cfg
    y = xp.empty((N, D), dtype=x.dtype)  # (N, D)
    mean = xp.empty((N, 1), dtype=stat)  # (N, 1)
    rstd = xp.empty((N, 1), dtype=stat)  # (N, 1)
    name = f"ln_fwd<{CTYPE[x.dtype]}, {CTYPE[pdt]}, {vec}, {items}, {wpr}>"
    dummy = xp.empty((1,), dtype=pdt)  # stands for a missing weight/bias (never read)
    args = (
        x, weight if weight is not None else dummy, bias if bias is not None else dummy, y, mean, rstd,
        np.int64(N), np.int32(D), np.float64(eps), np.int32(weight is not None), np.int32(bias is not None),
    )
    with device_of_array(x):
        cuda_common.launcher.launch(SOURCE, name, (-(-N // rpb), 1, 1), (32 * wpr, rpb, 1), args)
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
        TypeError / ValueError: as :func:`layer_norm_fwd`, and when ``dy`` does not match ``x`` or
        ``mean``/``rstd`` do not hold one value per row.
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
    pdt = param_dtype(x, weight)
    w = check_param(weight, D, pdt, "layer_norm_bwd: weight", "to match the last axis of x")
    xp = cuda_common.array_module(x)
    stat = stat_dtype(x.dtype)
    if mean.size != N or rstd.size != N:
        raise ValueError(f"layer_norm_bwd: mean and rstd must have {N} values (one per row), got {mean.shape} and {rstd.shape}")
    dy = dy if dy.flags.c_contiguous else xp.ascontiguousarray(dy)
    mean = xp.ascontiguousarray(mean.reshape(N), dtype=stat)  # (N,)
    rstd = xp.ascontiguousarray(rstd.reshape(N), dtype=stat)  # (N,)
    cfg = row_config(D, x.dtype, BWD_ELEMENTS, _max_vec(x, dy, w))
    if N == 0 or D == 0 or cfg is None:
        return _bwd_xp(xp, dy, x, w, mean, rstd, need_param_grads, out_dtype)
    vec, items, wpr, rpb = cfg
    name = f"ln_bwd<{CTYPE[x.dtype]}, {CTYPE[pdt]}, {vec}, {items}, {wpr}>"
    groups = -(-N // rpb)
    dx = xp.empty((N, D), dtype=x.dtype)  # (N, D)
    with device_of_array(x):
        # one wave of resident blocks walks all rows: the partial buffers have one row per block
        per_sm = cuda_common.launcher.blocks_per_sm(SOURCE, name, 32 * wpr * rpb)
        blocks = min(groups, cuda_common.launcher.num_sms() * per_sm)
        if need_param_grads:
            part_dw = xp.empty((blocks, D), dtype=stat)  # (blocks, D)
            part_db = xp.empty((blocks, D), dtype=stat)  # (blocks, D)
        else:
            part_dw = part_db = xp.empty((1,), dtype=stat)  # never written
        args = (
            dy, x, w if w is not None else xp.empty((1,), dtype=pdt), mean, rstd, dx, part_dw, part_db,
            np.int64(N), np.int32(D), np.int32(w is not None), np.int32(bool(need_param_grads)),
        )
        cuda_common.launcher.launch(SOURCE, name, (blocks, 1, 1), (32 * wpr, rpb, 1), args)
        if not need_param_grads:
            return dx, None, None
        gdt = pdt if w is not None else x.dtype
        dweight = xp.empty((D,), dtype=gdt)  # (D,)
        dbias = xp.empty((D,), dtype=gdt)  # (D,)
        name = f"ln_param_grads<{CTYPE[stat]}, {CTYPE[gdt]}>"
        args = (part_dw, part_db, dweight, dbias, np.int32(blocks), np.int32(D))
        cuda_common.launcher.launch(SOURCE, name, (-(-D // 32), 1, 1), (32, 32, 1), args)
    if dweight.dtype != out_dtype:
        dweight, dbias = dweight.astype(out_dtype), dbias.astype(out_dtype)
    return dx, dweight, dbias


# --------------------------------------------------------------------------------------------
# Rows too long for the register kernels: the xp kernels of kernels/layer_norm.py, on CuPy arrays
# --------------------------------------------------------------------------------------------


def _bwd_xp(xp, dy, x, weight, mean, rstd, need_param_grads, out_dtype):
    N, D = x.shape
    if need_param_grads and weight is None:  # dweight/dbias wanted without a weight: γ = 1
        weight = xp.ones(D, dtype=out_dtype)
    dx, dweight, dbias = _xp.layer_norm_bwd(dy, x, weight, mean.reshape(N, 1), rstd.reshape(N, 1))
    if not need_param_grads:
        return dx, None, None
    return dx, dweight.astype(out_dtype, copy=False), dbias.astype(out_dtype, copy=False)


def example_kernels() -> list:
    """Name expressions of representative instances (for compile checks without a GPU)."""
    names = []
    for dt, pdt in ((np.float32, np.float32), (np.float16, np.float16), (np.float16, np.float32), (np.float64, np.float64)):
        for D in (768, 4096, 33, 1000):
            for kind, budget in (("ln_fwd", FWD_ELEMENTS), ("ln_bwd", BWD_ELEMENTS)):
                vec, items, wpr, _ = row_config(D, dt, budget)
                names.append(f"{kind}<{CTYPE[np.dtype(dt)]}, {CTYPE[np.dtype(pdt)]}, {vec}, {items}, {wpr}>")
        names.append(f"ln_param_grads<{CTYPE[stat_dtype(dt)]}, {CTYPE[np.dtype(pdt)]}>")
    return list(dict.fromkeys(names))

"""Array-level index math of ``interpolate``: for one spatial axis, which source cells each output
cell reads and with what weight ("taps"), and the two linear maps those taps define.

Interpolation is separable: along each axis, output cell ``o`` is ``Σ_t w_t[o] · x[i_t[o]]``, so a
2-d resize is a 1-d resize of every row followed by one of every column. A tap list is
``[(idx, weight), ...]`` with ``idx`` an int64 array ``(O,)`` and ``weight`` ``(O,)`` or ``None`` (= 1):
nearest has one tap, linear two. The index formulas are ATen's (``aten/src/ATen/native/UpSample.h``),
including the float32 arithmetic of its nearest-neighbour index, so that the same source cell is
picked where a product lands exactly on an integer.
"""

from __future__ import annotations

import numpy as np

from ..backend import get_array_module
from .im2col import scatter_axis


# ------------------------------------------------------------------------------------ index math
def _source_scale(in_size: int, out_size: int, scale, dtype):
    """ATen's ``compute_scales_value``: ``1 / scale_factor`` when one was given, else ``in / out``."""
    if scale is not None and scale > 0:
        return dtype(1.0 / scale)
    return dtype(in_size) / dtype(out_size)


def nearest_taps(in_size: int, out_size: int, scale, exact: bool, dtype, planar: bool) -> list:
    """Mode ``'nearest'``: ``i = min(⌊o · s⌋, in - 1)`` (the legacy rule, OpenCV's INTER_NEAREST);
    ``'nearest-exact'``: ``i = min(⌊(o + ½) · s⌋, in - 1)`` (Pillow, scipy).

    ATen computes these in two kernels, and the last bit of the product decides where ``o · s`` lands
    on an integer, so both are reproduced: ``planar`` (4-D input, ATen's ``nearest_idx`` /
    ``nearest_exact_idx``) uses a float32 ``s`` and, for ``'nearest'``, copies at equal sizes and takes
    ``o // 2`` at double size even when a ``scale_factor`` says otherwise; 3-D input (ATen's generic
    kernel) uses ``s`` in ``dtype`` (float64 for float64 input) and no shortcut.
    """
    o = np.arange(out_size)
    if planar:
        s = _source_scale(in_size, out_size, scale, np.float32)
        if not exact and out_size == in_size:
            return [(o, None)]
        if not exact and out_size == 2 * in_size:
            return [(o // 2, None)]
        if exact:  # floorf((o + 0.5) * s): the product in double, rounded to float
            src = np.floor(((o + 0.5) * np.float64(s)).astype(np.float32))
        else:
            src = np.floor(o.astype(np.float32) * s)
    else:
        s = _source_scale(in_size, out_size, scale, dtype)
        if exact:  # floorf(max((o + 0.5)·s - 0.5, 0) + 0.5)
            real = np.maximum(s * (o + 0.5).astype(dtype) - dtype(0.5), dtype(0))
            src = np.floor((real + dtype(0.5)).astype(np.float32))
        else:
            src = np.floor((s * o.astype(dtype)).astype(np.float32))
    return [(np.minimum(src.astype(np.int64), in_size - 1), None)]


def linear_taps(in_size: int, out_size: int, scale, align_corners: bool, dtype) -> list:
    """Mode ``'linear'`` along one axis: two taps ``(i0, 1 - λ), (i1, λ)`` at the source coordinate

        align_corners=True:   src = o · (in - 1) / (out - 1)
        align_corners=False:  src = max((o + ½) · s - ½, 0),   s = 1/scale_factor or in/out

    ``i0 = min(⌊src⌋, in - 1)``, ``i1 = min(i0 + 1, in - 1)``, ``λ = clip(src - i0, 0, 1)``, computed in
    ``dtype`` (float32 for float16/float32 input, as ATen's ``opmath``). Equal sizes copy (ATen's shortcut,
    taken even when a ``scale_factor`` was given).
    """
    o = np.arange(out_size)
    if in_size == out_size:
        return [(o, None)]
    if align_corners:
        ratio = dtype(in_size - 1) / dtype(out_size - 1) if out_size > 1 else dtype(0)
        src = ratio * o.astype(dtype)
    else:
        ratio = _source_scale(in_size, out_size, scale, dtype)
        src = np.maximum(ratio * (o + 0.5).astype(dtype) - dtype(0.5), dtype(0))
    i0 = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    lam = np.clip(src - i0, 0, 1).astype(dtype)  # weight of the upper neighbour
    i1 = np.minimum(i0 + 1, in_size - 1)
    return [(i0, dtype(1) - lam), (i1, lam)]


def cubic_taps(in_size: int, out_size: int, scale, align_corners: bool, dtype, A: float = -0.75) -> list:
    """Mode ``'bicubic'`` along one axis: Keys' cubic convolution (``A = -0.75``, as ATen's
    ``get_cubic_upsample_coefficients`` in ``UpSample.h``), four taps at ``i0 - 1 .. i0 + 2`` clamped
    to ``[0, in - 1]`` (border replication, ATen's ``upsample_get_value_bounded``)::

        src = o · (in - 1) / (out - 1)   (align_corners=True)   or   (o + ½) · s - ½   (no clamp at 0)
        i0 = min(⌊src⌋, in - 1),  t = clip(src - i0, 0, 1)
        w = [c2(t + 1), c1(t), c1(1 - t), c2(2 - t)]
        c1(x) = ((A + 2) x - (A + 3)) x² + 1          (|x| ≤ 1)
        c2(x) = ((A x - 5A) x + 8A) x - 4A            (1 < |x| < 2)

    computed in ``dtype`` (float32 for float16/float32 input, ATen's ``opmath``)."""
    o = np.arange(out_size)
    A = dtype(A)
    if align_corners:
        ratio = dtype(in_size - 1) / dtype(out_size - 1) if out_size > 1 else dtype(0)
        src = ratio * o.astype(dtype)
    else:
        ratio = _source_scale(in_size, out_size, scale, dtype)
        src = ratio * (o + 0.5).astype(dtype) - dtype(0.5)
    i0 = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    t = np.clip(src - i0.astype(dtype), 0, 1).astype(dtype)

    def c1(x):
        return ((A + dtype(2)) * x - (A + dtype(3))) * x * x + dtype(1)

    def c2(x):
        return ((A * x - dtype(5) * A) * x + dtype(8) * A) * x - dtype(4) * A

    one = dtype(1)
    weights = [c2(t + one), c1(t), c1(one - t), c2((one - t) + one)]
    return [(np.clip(i0 - 1 + k, 0, in_size - 1), w.astype(dtype)) for k, w in enumerate(weights)]


def to_device(taps: list, like, dtype) -> list:
    """The taps as arrays of ``like``'s module (NumPy or CuPy), weights in the input's ``dtype``."""
    xp = get_array_module(like)
    return [(xp.asarray(i), None if w is None else xp.asarray(w.astype(dtype))) for i, w in taps]


# ------------------------------------------------------------------------------------ the two maps
def _along(w, axis: int, ndim: int):
    """A weight vector ``(O,)`` shaped to broadcast along ``axis`` of an ``ndim``-d array."""
    return w.reshape((-1,) + (1,) * (ndim - 1 - axis))


def taps_apply(x, taps: list, axis: int):
    """``y[..., o, ...] = Σ_t w_t[o] · x[..., i_t[o], ...]`` along ``axis`` (a gather per tap)."""
    xp = get_array_module(x)
    y = None
    for idx, w in taps:
        term = xp.take(x, idx, axis=axis)  # (..., O, ...)
        if w is not None:
            term = term * _along(w, axis, x.ndim)
        y = term if y is None else y + term
    return y


def taps_adjoint(dy, taps: list, axis: int, size: int):
    """Transpose of :func:`taps_apply`: ``dx[..., i, ...] = Σ_t Σ_{o: i_t[o] = i} w_t[o] · dy[..., o, ...]``
    (every tap's weighted ``dy`` scatter-added into the source cells, all taps in one scatter)."""
    xp = get_array_module(dy)
    parts = [dy if w is None else dy * _along(w, axis, dy.ndim) for _, w in taps]
    if len(taps) == 1:  # one tap (nearest, padding): no concatenated copy
        return scatter_axis(parts[0], taps[0][0], axis, size)
    idx = xp.concatenate([i for i, _ in taps])  # (T·O,)
    return scatter_axis(xp.concatenate(parts, axis=axis), idx, axis, size)

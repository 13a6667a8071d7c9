"""Pooling: ``max_pool1d/2d/3d``, ``avg_pool1d/2d/3d``, ``adaptive_avg_pool1d/2d/3d``, ``adaptive_max_pool1d/2d/3d``.

Max pooling finds each window's argmax on arrays (PyTorch's choice: the first maximum in row-major
window order, the last NaN if there is one) and is then a *gather* with fixed indices; its gradient
is the adjoint scatter, whose gradient is the gather again (``GatherFlat``/``ScatterFlat``).
Average pooling is a window sum (im2col summed over the window; adjoint: col2im of the broadcast
``dy``) divided by PyTorch's divisor. Adaptive average pooling is the separable linear map
``A_h @ x @ A_wᵀ`` (``Separable``, whose adjoint uses the transposed matrices). 1-d pools run as
2-d ones on a height-1 image; 3-d pools run the same Functions and kernels with a third axis. Window bounds follow ATen's ``pooling_output_shape`` and
``adaptive_avg_pool`` (``start = ⌊o·I/O⌋``, ``end = ⌈(o+1)·I/O⌉``).
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..backend import get_array_module
from ..kernels import im2col as K
from ..tensor import Tensor
from ._util import require_float
from .selection import where
from .convolution import ntuple

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "adaptive_max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool2d", "max_pool3d"
]


# ================================================================================ Functions
class GatherFlat(Function):
    """``y[n, c, *o] = x[n, c].ravel()[idx[n, c, *o]]`` with fixed int64 ``idx``."""

    @staticmethod
    def forward(ctx, x, idx):
        ctx.idx, ctx.plane = idx, x.shape[2:]
        return K.gather_flat(x, idx)

    @staticmethod
    def backward(ctx, dy):
        return ScatterFlat.apply(dy, ctx.idx, ctx.plane), None


class ScatterFlat(Function):
    """Adjoint of :class:`GatherFlat`: ``dy`` added into zeros ``(N, C, *plane)`` at ``idx``."""

    @staticmethod
    def forward(ctx, dy, idx, plane):
        ctx.idx = idx
        return K.scatter_flat(dy, idx, plane)

    @staticmethod
    def backward(ctx, ddx):
        return GatherFlat.apply(ddx, ctx.idx), None, None


class WindowSum(Function):
    """``y = Σ_window x``: ``(N, C, *S)`` → ``(N, C, *O)`` over zero-padded windows."""

    @staticmethod
    def forward(ctx, x, geom):
        ctx.geom, ctx.hw = geom, x.shape[2:]
        return K.im2col(x, *geom).sum(axis=tuple(range(2, 2 + len(geom[0]))))

    @staticmethod
    def backward(ctx, dy):
        return WindowSumT.apply(dy, ctx.geom, ctx.hw), None


class WindowSumT(Function):
    """Adjoint of :class:`WindowSum`: every window gets its ``dy`` back (col2im of the broadcast)."""

    @staticmethod
    def forward(ctx, dy, geom, hw):
        xp = get_array_module(dy)
        ctx.geom = geom
        ksize, stride, pads, dilation = geom
        N, C, *outs = dy.shape
        nd = len(ksize)
        cols = xp.broadcast_to(dy.reshape((N, C) + (1,) * nd + tuple(outs)), (N, C) + tuple(ksize) + tuple(outs))
        return K.col2im(cols, hw, stride, pads, dilation)

    @staticmethod
    def backward(ctx, ddx):
        return WindowSum.apply(ddx, ctx.geom), None, None


class Separable(Function):
    """``y = a @ x @ bᵀ`` over the last two dims, for constant matrices ``a (OH, H)``, ``b (OW, W)``
    (with ``c``: the map along the last three dims, ``a`` on the first of them)."""

    @staticmethod
    def forward(ctx, x, a, b, c=None):
        ctx.mats = (a, b, c)
        return K.separable(x, a, b, c)

    @staticmethod
    def backward(ctx, dy):
        a, b, c = ctx.mats
        if c is None:
            return Separable.apply(dy, a.T, b.T), None, None
        return Separable.apply(dy, a.T, b.T, c.T), None, None, None


# ================================================================================ geometry
def _as_4d(op, x, nd):
    """``(N, C, *S)`` or ``(C, *S)`` → a 4-d Tensor and a function restoring the caller's layout."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(x).__name__}")
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{op}: expected a {nd + 1}D (unbatched) or {nd + 2}D (batched) input, but got input of "
                           f"size: {list(x.shape)}")
    if any(n == 0 for n in x.shape[1 if x.ndim == nd + 2 else 0:]):
        raise RuntimeError(f"{op}: expected input with non-zero sizes for the non-batch dimensions, but got input of "
                           f"size: {list(x.shape)}")
    unbatched = x.ndim == nd + 1
    x4 = x.unsqueeze(0) if unbatched else x  # (N, C, *S): 2 or 3 spatial axes
    if nd == 1:
        x4 = x4.unsqueeze(2)

    def restore(t):
        t = t.squeeze(2) if nd == 1 else t
        return t.squeeze(0) if unbatched else t
    return x4, restore


def _pool_geometry(op, x4, nd, kernel_size, stride, padding, dilation, ceil_mode, avg):
    k = ntuple(kernel_size, nd, "kernel_size", op)
    s = k if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0) else ntuple(stride, nd, "stride", op)
    p, d = ntuple(padding, nd, "padding", op), ntuple(dilation, nd, "dilation", op)
    if any(v <= 0 for v in k) or any(v <= 0 for v in s) or any(v <= 0 for v in d):
        raise RuntimeError(f"{op}: kernel_size, stride and dilation must be greater than zero, but got "
                           f"kernel_size={list(k)}, stride={list(s)}, dilation={list(d)}")
    for pp, kk, dd in zip(p, k, d):
        # the limit of PyTorch's max_pool2d_with_indices / max_pool1d / avg_pool2d kernels: half the
        # kernel size, dilation not counted
        if pp < 0 or pp > kk // 2:
            raise RuntimeError(f"{op}: pad should be at most half of kernel size, but got pad={pp}, kernel_size={kk}"
                               f" and dilation={dd}")
    sizes = x4.shape[-nd:]
    outs = []
    for n, kk, ss, pp, dd in zip(sizes, k, s, p, d):
        o = (n + 2 * pp - dd * (kk - 1) - 1 + (ss - 1 if ceil_mode else 0)) // ss + 1
        if ceil_mode and (o - 1) * ss >= n + pp:
            o -= 1
        outs.append(o)
    if any(o < 1 for o in outs):
        raise RuntimeError(f"{op}: given input size {list(sizes)}, calculated output size {outs}. Output size is too small")
    # extra bottom/right padding so that the last (ceil_mode) window fits
    pads = tuple((pp, max(pp, (o - 1) * ss + dd * (kk - 1) + 1 - n - pp))
                 for n, kk, ss, pp, dd, o in zip(sizes, k, s, p, d, outs))
    if nd == 1:
        return ((1,) + k, (1,) + s, ((0, 0),) + pads, (1,) + d), p, outs
    return (k, s, pads, d), p, outs


# ================================================================================ max pooling
def _max_pool(op, nd, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    x4, restore = _as_4d(op, input, nd)
    geom, _, outs = _pool_geometry(op, x4, nd, kernel_size, stride, padding, dilation, ceil_mode, avg=False)
    idx, empty = K.window_argmax(x4.array, *geom)
    crop = (Ellipsis,) + tuple(slice(None, o) for o in outs)
    idx, empty = idx[crop], empty[crop]  # (N, C, *O)
    if empty.any():  # windows entirely in the padding: -inf, no gradient (PyTorch sends one elsewhere)
        xp = get_array_module(idx)
        y = GatherFlat.apply(x4, xp.where(empty, 0, idx)).masked_fill(Tensor._from_op(empty), -np.inf)
    else:
        y = GatherFlat.apply(x4, idx)
    y = restore(y)
    if return_indices:
        return y, restore(Tensor._from_op(idx))
    return y


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """2-d max pooling, as ``torch.nn.functional.max_pool2d``: ``(N, C, H, W)`` or ``(C, H, W)`` →
    ``(N, C, OH, OW)``; with ``return_indices`` also the int64 flat indices ``h·W + w`` of the maxima.

    Ties go to the first maximum in row-major window order and a NaN wins (the last NaN), as in
    PyTorch's CPU kernel; the gradient goes to that element only.
    Raises RuntimeError for a wrong number of dims, a pad over half the effective kernel, a
    non-positive kernel/stride/dilation, or an output that would be empty.
    """
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """1-d max pooling ``(N, C, L)`` or ``(C, L)`` → ``(N, C, OL)``; see :func:`max_pool2d`."""
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """3-d max pooling ``(N, C, D, H, W)`` or ``(C, D, H, W)`` → ``(N, C, OD, OH, OW)``; indices are flat
    ``d·H·W + h·W + w``; see :func:`max_pool2d` (same ties, NaN and errors)."""
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


# ================================================================================ average pooling
def _divisor_1d(n, k, s, p, out, count_include_pad):
    start = np.arange(out) * s - p
    end = np.minimum(start + k, n + p)
    if count_include_pad:
        return end - start
    return np.minimum(end, n) - np.maximum(start, 0)


def _avg_pool(op, nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    x4, restore = _as_4d(op, input, nd)
    require_float(x4, op)
    geom, p, outs = _pool_geometry(op, x4, nd, kernel_size, stride, padding, 1, ceil_mode, avg=True)
    k, s = geom[0][-nd:], geom[1][-nd:]
    sizes = x4.shape[-nd:]
    if nd == 3 and any(n < kk for n, kk in zip(sizes, k)):  # ATen's pool3d_shape_check(check_input_size=True)
        raise RuntimeError(f"{op}: input image (T: {sizes[0]} H: {sizes[1]} W: {sizes[2]}) smaller than kernel size "
                           f"(kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    sums = WindowSum.apply(x4, geom)[(Ellipsis,) + tuple(slice(None, o) for o in outs)]  # (N, C, *O)
    xp = get_array_module(x4.array)
    if divisor_override is not None:
        if not isinstance(divisor_override, numbers.Number) or divisor_override == 0:
            raise RuntimeError(f"{op}: divisor must be not zero, got divisor_override={divisor_override!r}")
        div = np.full((1,) * max(nd, 2), float(divisor_override))
    else:
        per_axis = [_divisor_1d(n, kk, ss, pp, o, count_include_pad) for n, kk, ss, pp, o in zip(sizes, k, s, p, outs)]
        div = per_axis[0].reshape(1, -1) if nd == 1 else np.ones(())
        if nd > 1:
            for a, d in enumerate(per_axis):
                div = div * d.reshape([-1 if i == a else 1 for i in range(nd)])
    return restore(sums / Tensor._from_op(xp.asarray(div.astype(x4.dtype))))


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """2-d average pooling, as ``torch.nn.functional.avg_pool2d``: ``(N, C, H, W)`` or ``(C, H, W)`` →
    ``(N, C, OH, OW)``. The divisor is the window size clipped to the padded input (``count_include_pad``)
    or to the input, or ``divisor_override``. Float dtypes only (TypeError otherwise); RuntimeError as
    :func:`max_pool2d` (the pad limit is half the kernel size).
    """
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True) -> Tensor:
    """1-d average pooling ``(N, C, L)`` or ``(C, L)`` → ``(N, C, OL)`` (no ``divisor_override``, as in
    PyTorch); see :func:`avg_pool2d`."""
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """3-d average pooling ``(N, C, D, H, W)`` or ``(C, D, H, W)`` → ``(N, C, OD, OH, OW)``; see :func:`avg_pool2d`."""
    return _avg_pool("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


# ================================================================================ adaptive pooling
def _adaptive_sizes(op, output_size, sizes, nd):
    if isinstance(output_size, numbers.Integral) or output_size is None:
        output_size = (output_size,) * nd
    output_size = tuple(output_size)
    if len(output_size) != nd:
        raise RuntimeError(f"{op}: output_size must have {nd} elements, got {output_size!r}")
    out = tuple(n if o is None else int(o) for o, n in zip(output_size, sizes))
    if any(o < 0 for o in out):
        raise RuntimeError(f"{op}: output_size must be non-negative, got {list(out)}")
    return out


def _bounds(n, o):
    i = np.arange(o)
    return (i * n) // o, -((-(i + 1) * n) // o)  # floor(i·n/o), ceil((i+1)·n/o)


def _avg_matrix(n, o, dtype, xp):
    start, end = _bounds(n, o)
    cols = np.arange(n)
    a = ((cols >= start[:, None]) & (cols < end[:, None])) / (end - start)[:, None]  # (o, n)
    return xp.asarray(a.astype(dtype))


def _windows(sizes, out):
    """``(flat, valid)``, both ``(*O, k)``: the flat cell index of each window's cells (padded with a repeat of
    a valid cell up to the largest window's ``k``) and which of them belong to the window."""
    m = len(sizes)
    # per axis a: the window cells (O_a, k_a), placed at axis a (outputs) and m + a (cells) of (*O, *k)
    flat, valid = np.zeros((1,) * 2 * m, dtype=np.int64), np.ones((1,) * 2 * m, dtype=bool)
    for a, (n, o) in enumerate(zip(sizes, out)):
        start, end = _bounds(n, o)
        cells = start[:, None] + np.arange(int((end - start).max()) if o else 0)  # (O_a, k_a)
        shape = [1] * 2 * m
        shape[a], shape[m + a] = cells.shape
        valid = valid & (cells < end[:, None]).reshape(shape)
        flat = flat * n + np.minimum(cells, n - 1).reshape(shape)
    kk = int(np.prod(flat.shape[m:]))
    return flat.reshape(tuple(out) + (kk,)), np.broadcast_to(valid, flat.shape).reshape(tuple(out) + (kk,))


def _adaptive_avg(op, nd, input, output_size):
    x4, restore = _as_4d(op, input, nd)
    require_float(x4, op)
    out = _adaptive_sizes(op, output_size, x4.shape[-nd:], nd)
    out = (1,) + out if nd == 1 else out
    xp = get_array_module(x4.array)
    if x4.array.size and not bool(xp.isfinite(x4.array).all()):
        # ±inf or NaN: the averaging matrices would multiply them by the 0 weights of other windows (0·inf = NaN
        # in windows without them); sum each window's own cells instead (the same numbers for finite input)
        flat, valid = _windows(x4.shape[2:], out)
        N, C = x4.shape[:2]
        idx = xp.ascontiguousarray(xp.broadcast_to(xp.asarray(flat), (N, C) + flat.shape))
        win = GatherFlat.apply(x4, idx)  # (N, C, *O, k)
        win = where(Tensor._from_op(xp.asarray(valid)), win, Tensor._from_op(xp.zeros((), dtype=x4.dtype)))
        counts = Tensor._from_op(xp.asarray(valid.sum(-1).astype(x4.dtype)))
        return restore(win.sum(-1) / counts)
    mats = [_avg_matrix(n, o, x4.dtype, xp) for n, o in zip(x4.shape[2:], out)]  # (O_a, S_a) per axis
    return restore(Separable.apply(x4, *mats))


def adaptive_avg_pool2d(input, output_size) -> Tensor:
    """``(N, C, H, W)`` or ``(C, H, W)`` → ``(N, C, *output_size)``, each output the mean of the window
    ``[⌊o·H/OH⌋, ⌈(o+1)·H/OH⌉)``; ``None`` in ``output_size`` keeps that size. As ``torch.nn.functional``."""
    return _adaptive_avg("adaptive_avg_pool2d", 2, input, output_size)


def adaptive_avg_pool1d(input, output_size) -> Tensor:
    """``(N, C, L)`` or ``(C, L)`` → ``(N, C, output_size)``; see :func:`adaptive_avg_pool2d`."""
    return _adaptive_avg("adaptive_avg_pool1d", 1, input, output_size)


def adaptive_avg_pool3d(input, output_size) -> Tensor:
    """``(N, C, D, H, W)`` or ``(C, D, H, W)`` → ``(N, C, *output_size)``; see :func:`adaptive_avg_pool2d`."""
    return _adaptive_avg("adaptive_avg_pool3d", 3, input, output_size)


def _adaptive_max(op, nd, input, output_size, return_indices):
    x4, restore = _as_4d(op, input, nd)
    N, C, *sizes = x4.shape
    out = _adaptive_sizes(op, output_size, x4.shape[-nd:], nd)
    out = (1,) + out if nd == 1 else out
    xp = get_array_module(x4.array)
    flat, valid = _windows(sizes, out)
    kk = flat.shape[-1]
    flat = xp.asarray(flat)  # (*O, k) flat cell indices
    win = x4.array.reshape(N, C, int(np.prod(sizes)))[:, :, flat]  # (N, C, *O, k)
    fill = -np.inf if backend.is_floating(x4.dtype) else np.iinfo(x4.dtype).min
    win = xp.where(xp.asarray(valid), win, fill)
    kidx = xp.argmax(win, axis=-1)  # first maximum in row-major window order
    if backend.is_floating(x4.dtype):
        isnan = xp.isnan(win)
        kidx = xp.where(isnan.any(axis=-1), kk - 1 - xp.argmax(isnan[..., ::-1], axis=-1), kidx)
    idx = xp.take_along_axis(xp.broadcast_to(flat, (N, C) + flat.shape), kidx[..., None], axis=-1)[..., 0]
    idx = xp.ascontiguousarray(idx.astype(np.int64))  # (N, C, *O)
    y = restore(GatherFlat.apply(x4, idx))
    return (y, restore(Tensor._from_op(idx))) if return_indices else y


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Adaptive max pooling ``(N, C, H, W)`` or ``(C, H, W)`` → ``(N, C, *output_size)`` over the windows
    of :func:`adaptive_avg_pool2d`; ``return_indices`` adds int64 flat indices ``h·W + w``. Ties and
    NaN as :func:`max_pool2d`."""
    return _adaptive_max("adaptive_max_pool2d", 2, input, output_size, return_indices)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Adaptive max pooling ``(N, C, L)`` or ``(C, L)`` → ``(N, C, output_size)``."""
    return _adaptive_max("adaptive_max_pool1d", 1, input, output_size, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Adaptive max pooling ``(N, C, D, H, W)`` or ``(C, D, H, W)`` → ``(N, C, *output_size)``; indices flat
    ``d·H·W + h·W + w``; see :func:`adaptive_max_pool2d`."""
    return _adaptive_max("adaptive_max_pool3d", 3, input, output_size, return_indices)

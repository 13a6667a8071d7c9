"""Shape ops: reshape, broadcasting, transposes, squeezing.

Their backward only moves gradients around: the inverse reshape, the inverse permutation, or a
sum over the axes a broadcast repeated. Results that are views of their input (``reshape`` when no
copy is needed, ``view``, ``permute``/``transpose``, ``broadcast_to``/``expand``, ``squeeze``/``unsqueeze``,
``flatten``) are marked as such (``autograd/views.py``): they share the input's memory and version
counter, and an in-place op on them rewrites their base's history. Shapes that do not fit raise
:class:`~minitorch_ln.errors.ShapeError` (a RuntimeError, as PyTorch, and a ValueError), naming both.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..autograd.function import Function
from ..autograd.views import make_view
from ..backend import get_array_module
from ..errors import ShapeError
from ..tensor import Tensor
from ._util import axis_alias, normalize_dim, normalize_dims
from .memory_views import is_dtype_arg, view_dtype

__all__ = ["broadcast_to", "expand", "flatten", "permute", "reshape", "squeeze", "transpose", "unsqueeze", "view"]


def _views_memory_of(out, x) -> bool:
    """Whether the array ``out`` (a reshape of ``x``) views ``x``'s memory rather than a copy."""
    if type(out) is np.ndarray:
        return out.base is not None and (out.base is x or out.base is x.base)
    return out.data.ptr == x.data.ptr and out.size == x.size  # CuPy: a copy lives elsewhere


def _shape_args(shape) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


# ----------------------------------------------------------------------------------- reshape


class Reshape(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        return x.reshape(shape)

    @staticmethod
    def backward(ctx, dy):
        return reshape(dy, ctx.in_shape), None


def _resolve_shape(in_shape, shape, numel, op):
    shape = tuple(shape)
    if sum(1 for s in shape if s == -1) > 1:
        raise ShapeError(f"{op}: only one dimension can be -1, got {shape}")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise ShapeError(f"{op}: invalid size {s} in {shape}")
            known *= s
    if -1 in shape:
        if known == 0 or numel % known:
            raise ShapeError(f"{op}: shape {shape} is invalid for an input of shape {tuple(in_shape)} ({numel} elements)")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise ShapeError(f"{op}: shape {shape} is invalid for an input of shape {tuple(in_shape)} ({numel} elements)")
    return shape


def _reshape_view(t, shape):
    """Redo a reshape that was a view (trusted shape)."""
    return reshape(t, shape)


def reshape(x: Tensor, *shape) -> Tensor:
    """``x`` with a new shape of the same number of elements (one size may be -1).

    A view of ``x`` when the strides allow it, else a copy (as PyTorch). Raises ShapeError for a
    shape with a different number of elements, naming both shapes.
    """
    shape = _resolve_shape(x.shape, _shape_args(shape), x.numel(), "reshape")
    if shape == x.shape:
        return x
    out = Reshape.apply(x, shape)
    if _views_memory_of(out.array, x.array):
        make_view(out, x, lambda t: _reshape_view(t, shape))
    return out


def view(x: Tensor, *shape) -> Tensor:
    """As :func:`reshape`, but always a view: raises ShapeError where a copy would be needed.

    ``x.transpose(0, 1).view(-1)`` raises (as PyTorch); use ``.reshape`` or ``.contiguous().view``.
    ``x.view(dtype)`` reads the same bytes as another dtype (``ops/memory_views.py``).
    """
    if len(shape) == 1 and is_dtype_arg(shape[0]):
        return view_dtype(x, shape[0])
    shape = _resolve_shape(x.shape, _shape_args(shape), x.numel(), "view")
    out = Reshape.apply(x, shape)
    if not _views_memory_of(out.array, x.array):
        if out.array.size > 1:
            raise ShapeError(
                f"view: shape {shape} is not compatible with the input's shape {tuple(x.shape)} and "
                f"strides {tuple(x.array.strides)} (at least one dimension spans across two contiguous "
                "subspaces); use .reshape(...) instead"
            )
        return out  # 0 or 1 element: a copy is indistinguishable (NumPy may copy, PyTorch views)
    return make_view(out, x, lambda t: _reshape_view(t, shape))


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dims ``start_dim..end_dim`` into one: ``(2, 3, 4)`` with ``(1, 2)`` → ``(2, 12)``; a 0-d tensor gives ``(1,)``.

    A view when the strides allow it (as :func:`reshape`). Raises IndexError for a dim out of range
    and ShapeError when ``start_dim`` comes after ``end_dim``.
    """
    if x.ndim == 0:
        return reshape(x, 1)
    s = normalize_dim(start_dim, x.ndim, "flatten")
    e = normalize_dim(end_dim, x.ndim, "flatten")
    if s > e:
        raise ShapeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} (shape {tuple(x.shape)})")
    return reshape(x, *x.shape[:s], -1, *x.shape[e + 1 :])


# ----------------------------------------------------------------------------------- broadcasting


class BroadcastTo(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        return get_array_module(x).broadcast_to(x, shape)

    @staticmethod
    def backward(ctx, dy):
        return sum_to(dy, ctx.in_shape), None


def broadcast_to(x: Tensor, shape) -> Tensor:
    """A read-only view of ``x`` repeated to ``shape`` (NumPy broadcasting); the backward sums over the repeated axes.

    Shares ``x``'s memory and version counter (an in-place write into it raises: its elements
    overlap). Raises ShapeError naming both shapes when ``x.shape`` does not broadcast to ``shape``.
    """
    shape = tuple(int(s) for s in shape)
    if x.shape == shape:
        return x
    try:
        np.broadcast_shapes(x.shape, shape)
        ok = np.broadcast_shapes(x.shape, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ShapeError(f"broadcast_to: a tensor of shape {tuple(x.shape)} cannot be broadcast to {shape}")
    return make_view(BroadcastTo.apply(x, shape), x, lambda t: BroadcastTo.apply(t, shape))


def expand(x: Tensor, *sizes) -> Tensor:
    """Broadcast to ``sizes`` (a view sharing ``x``'s memory and version counter); -1 keeps that
    dimension's size (as PyTorch). Raises ShapeError when ``x.shape`` does not expand to ``sizes``."""
    sizes = _shape_args(sizes)
    lead = len(sizes) - x.ndim
    if lead < 0:
        raise ShapeError(
            f"expand: the number of sizes given ({len(sizes)}, {sizes}) must be at least the number of "
            f"dimensions of the tensor of shape {tuple(x.shape)}"
        )
    if any(s == -1 for s in sizes[:lead]):
        raise ShapeError(f"expand: -1 is not allowed for the new leading dimensions, got sizes {sizes} for shape {tuple(x.shape)}")
    shape = tuple(x.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(sizes))
    return broadcast_to(x, shape)


def sum_to_array(a, shape):
    """Sum the array ``a`` over the axes along which ``shape`` was broadcast to ``a.shape``."""
    shape = tuple(shape)
    if a.shape == shape:
        return a
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and a.shape[lead + i] != 1)
    y = a.sum(axis=axes, keepdims=True) if axes else a
    return y.reshape(shape) if lead else y


class SumTo(Function):
    """Sum a broadcast array back to ``shape``: the adjoint of ``broadcast_to``."""

    supports_complex = True

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        return sum_to_array(x, shape)

    @staticmethod
    def backward(ctx, dy):
        return broadcast_to(dy, ctx.in_shape), None


def unbroadcast(grad: Tensor, shape: tuple) -> Tensor:
    """Sum a gradient of a broadcast result back to an input's ``shape`` (the one place it is done)."""
    return grad if grad.array.shape == shape else SumTo.apply(grad, tuple(shape))  # trusted: skips sum_to's check


def sum_to(x: Tensor, shape) -> Tensor:
    """Sum ``x`` over the axes a broadcast from ``shape`` to ``x.shape`` would have repeated.

    Raises ShapeError when ``shape`` does not broadcast to ``x.shape`` (naming both).
    """
    shape = tuple(int(s) for s in shape)
    if x.shape == shape:
        return x
    try:
        ok = np.broadcast_shapes(shape, x.shape) == x.shape
    except ValueError:
        ok = False
    if not ok:
        raise ShapeError(f"sum_to: shape {shape} does not broadcast to the input's shape {tuple(x.shape)}")
    return SumTo.apply(x, shape)


# ----------------------------------------------------------------------------------- axes


class Permute(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return get_array_module(x).transpose(x, dims)

    @staticmethod
    def backward(ctx, dy):
        inverse = tuple(int(i) for i in np.argsort(ctx.dims))
        return permute(dy, *inverse), None


def permute(x: Tensor, *dims) -> Tensor:
    """Reorder the dims: ``y.shape[i] = x.shape[dims[i]]`` (a view); the backward applies the inverse permutation.

    Raises IndexError for a dim out of range and ShapeError when ``dims`` is not a permutation.
    """
    dims = _shape_args(dims)
    for d in dims:
        if not -max(x.ndim, 1) <= d < max(x.ndim, 1):
            raise IndexError(f"permute: dimension {d} is out of range for a tensor with {x.ndim} dimension(s)")
    if sorted(d % max(x.ndim, 1) for d in dims) != list(range(x.ndim)):
        raise ShapeError(f"permute: dims {dims} is not a permutation of the {x.ndim} dimensions of shape {tuple(x.shape)}")
    dims = tuple(d % x.ndim for d in dims)
    if dims == tuple(range(x.ndim)):
        return x
    return make_view(Permute.apply(x, dims), x, lambda t: Permute.apply(t, dims))


def transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap dims ``dim0`` and ``dim1`` (a view); ``x.mT`` swaps the last two. Raises IndexError for a dim out of range."""
    d0, d1 = normalize_dim(dim0, x.ndim, "transpose"), normalize_dim(dim1, x.ndim, "transpose")
    if x.ndim == 0:
        return x
    dims = list(range(x.ndim))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return permute(x, *dims)


@axis_alias
def unsqueeze(x: Tensor, dim: int) -> Tensor:
    """Insert a dim of size 1 at ``dim`` (in ``[-ndim-1, ndim]``): ``(2, 3)`` with ``-1`` → ``(2, 3, 1)``. Raises IndexError otherwise."""
    if not isinstance(dim, numbers.Integral) or not -x.ndim - 1 <= dim <= x.ndim:
        raise IndexError(f"unsqueeze: dim {dim} is out of range for a tensor with {x.ndim} dimensions (expected [{-x.ndim - 1}, {x.ndim}])")
    d = dim % (x.ndim + 1)
    return reshape(x, *x.shape[:d], 1, *x.shape[d:])


@axis_alias
def squeeze(x: Tensor, dim=None) -> Tensor:
    """Drop size-1 dimensions (all of them, or those in ``dim`` that have size 1)."""
    dims = normalize_dims(dim, x.ndim, "squeeze")
    shape = tuple(s for i, s in enumerate(x.shape) if not (i in dims and s == 1))
    return reshape(x, *shape) if shape != x.shape else x

"""Views made by strides alone: ``Tensor.unfold`` (sliding windows along one dim) and ``as_strided``.

Both share memory with their input; where windows overlap, the view is read-only (a write would land in
several elements at once). Their backward adds each element's gradient back where it was read.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..autograd.views import make_view
from ..backend import get_array_module
from ..errors import OptionError, ShapeError
from ..kernels.scatter import scatter_add as add_at
from ..tensor import Tensor
from ._util import normalize_dim

__all__ = ["as_strided"]  # unfold_windows is Tensor.unfold (ops.unfold is F.unfold)


# ==================================================================================================
# Tensor.unfold: a strided view of sliding windows along one dim
# ==================================================================================================


def _windows_array(a, d, size, step):
    """The strided view of ``a``'s windows of ``size`` every ``step`` along ``d``: ``d`` holds the window
    index, a new last dim the position in the window. Read-only where windows overlap (a write would hit
    one element twice)."""
    xp = get_array_module(a)
    n = (a.shape[d] - size) // step + 1
    shape = a.shape[:d] + (n,) + a.shape[d + 1:] + (size,)  # (..., n, ..., size)
    strides = a.strides[:d] + (a.strides[d] * step,) + a.strides[d + 1:] + (a.strides[d],)
    if xp is np:
        writeable = a.flags.writeable and step >= size
        return np.lib.stride_tricks.as_strided(a, shape, strides, writeable=writeable)
    return xp.lib.stride_tricks.as_strided(a, shape, strides)  # pragma: no cover - needs a GPU


class Windows(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, x, d, size, step):
        ctx.shape, ctx.args = x.shape, (d, size, step)
        return _windows_array(x, d, size, step)

    @staticmethod
    def backward(ctx, dy):
        return WindowsBackward.apply(dy, ctx.shape, *ctx.args), None, None, None


class WindowsBackward(Function):
    """The adjoint of :class:`Windows`: each window of ``dy`` added back where it was read (overlaps sum)."""

    supports_complex = True

    @staticmethod
    def forward(ctx, dy, shape, d, size, step):
        ctx.args = (d, size, step)
        xp = get_array_module(dy)
        dx = xp.zeros(shape, dtype=dy.dtype)  # the input's shape
        n, lead = dy.shape[d], (slice(None),) * d
        for k in range(size):  # position k of every window: input entries k, k + step, ...
            dx[lead + (slice(k, k + step * (n - 1) + 1, step),)] += dy[..., k]
        return dx

    @staticmethod
    def backward(ctx, ddx):
        return Windows.apply(ddx, *ctx.args), None, None, None, None


def unfold_windows(input: Tensor, dimension: int, size: int, step: int) -> Tensor:  # noqa: A002
    """``Tensor.unfold``: every slice of length ``size`` along ``dimension``, ``step`` apart, as a view.

    ``(..., L, ...)`` → ``(..., (L - size) // step + 1, ..., size)``: ``dimension`` counts the windows and a
    new last dim runs along each. The gradient adds each window back where it was read (overlapping
    windows sum), as PyTorch's ``unfold_backward``. Overlapping windows are a read-only view.

    Raises:
        IndexOutOfRangeError: ``dimension`` out of range. ShapeError: ``size`` larger than the dim.
        OptionError: ``size < 0`` or ``step <= 0``.
    """
    if step <= 0:
        raise OptionError(f"unfold: step is {step} but must be > 0")
    if size < 0:
        raise OptionError(f"unfold: size is {size} but must be >= 0")
    if input.ndim == 0:
        input = input.reshape(1)
        if size > 1:
            raise ShapeError(f"unfold: maximum size for tensor at dimension 0 is 1 but size is {size}")
        return input[:size].clone() if size == 0 else input
    d = normalize_dim(dimension, input.ndim, "unfold")
    if size > input.shape[d]:
        raise ShapeError(f"unfold: maximum size for tensor at dimension {d} is {input.shape[d]} but size is {size}")
    out = Windows.apply(input, d, int(size), int(step))
    return make_view(out, input, lambda t: Windows.apply(t, d, int(size), int(step)))


# ==================================================================================================
# as_strided: any strided window onto a contiguous tensor's memory
# ==================================================================================================


def _strided_positions(size, stride, offset, xp):
    """The flat position in the base of every element of the strided view: ``offset + Σ i_k · stride_k``."""
    pos = xp.full(tuple(size), offset, dtype=np.int64)  # (*size)
    for k, (n, st) in enumerate(zip(size, stride)):
        pos = pos + (xp.arange(n, dtype=np.int64) * st).reshape((n,) + (1,) * (len(size) - k - 1))
    return pos


class AsStrided(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, x, size, stride, offset, overlaps):
        xp = get_array_module(x)
        ctx.shape, ctx.args = x.shape, (size, stride, offset, overlaps)
        flat = x.reshape(-1)[offset:] if x.size else x.reshape(-1)  # (numel - offset,)
        bytes_ = tuple(st * x.itemsize for st in stride)
        if xp is np:
            return np.lib.stride_tricks.as_strided(flat, size, bytes_, writeable=flat.flags.writeable and not overlaps)
        return xp.lib.stride_tricks.as_strided(flat, size, bytes_)  # pragma: no cover - needs a GPU

    @staticmethod
    def backward(ctx, dy):
        return AsStridedBackward.apply(dy, ctx.shape, *ctx.args), None, None, None, None


class AsStridedBackward(Function):
    """The adjoint of :class:`AsStrided` on a contiguous input (PyTorch's ``as_strided_backward``): each
    element of ``dy`` is added at its flat position in the input; positions read twice sum."""

    supports_complex = True

    @staticmethod
    def forward(ctx, dy, shape, size, stride, offset, overlaps):
        ctx.args = (size, stride, offset, overlaps)
        xp = get_array_module(dy)
        dx = xp.zeros(int(np.prod(shape)), dtype=dy.dtype)  # (numel,)
        add_at(dx, _strided_positions(size, stride, offset, xp).reshape(-1), dy.reshape(-1))
        return dx.reshape(shape)

    @staticmethod
    def backward(ctx, ddx):
        return AsStrided.apply(ddx.contiguous(), *ctx.args), None, None, None, None, None


def as_strided(input: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:  # noqa: A002
    """The view of ``input``'s memory with shape ``size``, element strides ``stride`` and first element
    at ``storage_offset`` (``torch.as_strided``), for a contiguous tensor that owns its memory.

    Element ``(i_0, .., i_k)`` is ``input.flatten()[storage_offset + Σ i_j · stride_j]``. The gradient
    adds ``dy`` back at those positions (overlapping windows sum), as PyTorch's ``as_strided_backward``.
    A view whose elements overlap is read-only: a write through it would hit one element twice.

    Raises:
        ShapeError: ``input`` a view or not contiguous (``.clone()`` it first: NumPy cannot say where its
        storage starts), ``size`` and ``stride`` of different lengths, a negative size, stride or
        offset, or a view reaching past the end of the memory.
    """
    size, stride = tuple(int(n) for n in size), tuple(int(st) for st in stride)
    offset = 0 if storage_offset is None else int(storage_offset)
    if input._base is not None or not input.is_contiguous():
        raise ShapeError("as_strided: supported on a contiguous tensor that owns its memory (not a view); "
                         "call .clone() first")
    if len(size) != len(stride):
        raise ShapeError(f"as_strided: mismatch in length of strides and shape ({len(stride)} vs {len(size)})")
    if min(size + stride + (offset,), default=0) < 0:
        raise ShapeError(f"as_strided: sizes, strides and storage_offset must be >= 0, got size {size}, "
                         f"stride {stride}, storage_offset {offset}")
    last = offset + sum((n - 1) * st for n, st in zip(size, stride)) if all(size) else offset - 1
    if last >= input.numel() or offset > input.numel():
        raise ShapeError(f"as_strided: setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                         f"{offset} reach past the end of the input's {input.numel()} elements")
    xp = get_array_module(input.array)
    pos = _strided_positions(size, stride, offset, xp)
    overlaps = int(xp.unique(pos).size) != pos.size
    out = AsStrided.apply(input, size, stride, offset, overlaps)
    return make_view(out, input, lambda t: AsStrided.apply(t, size, stride, offset, overlaps))

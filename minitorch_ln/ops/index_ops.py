"""Whole slices picked by a 1-D index, and masks: ``index_select``, ``index_add``, ``index_copy``, ``index_fill``,
``masked_select``, ``masked_scatter`` (``nonzero``, ``argwhere``, ``searchsorted``, ``bucketize``: searching.py).

``index_select`` picks slices ``x[..., index[k], ...]`` along ``dim``; its adjoint is ``index_add``
into zeros (repeated indices add up, through ``kernels.scatter``), and ``index_add``'s gradient
for ``source`` is ``index_select`` again. ``masked_select`` and ``masked_scatter`` are each other's
adjoint in the same way.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..backend import get_array_module
from ..kernels.scatter import along_dim_index, scatter_reduce_at
from ..errors import ShapeError
from ..tensor import Tensor
from ._util import normalize_dim
from .autocast_policies import autocast
from .conversion import cast
from .fill_values import checked_number
from .index_checks import IndexDtypeError, check_bounds, index_array
from .shape import broadcast_to, reshape

__all__ = ["index_add", "index_copy", "index_fill", "index_select", "masked_scatter", "masked_select"]


ShapeMismatchError = ShapeError  # minitorch_ln/errors.py


def _along(dim):
    """The index tuple selecting ``index`` along ``dim`` (slices before it)."""
    return (slice(None),) * dim


def _zeros(shape, like) -> Tensor:
    return Tensor._from_op(get_array_module(like.array).zeros(shape, dtype=like.dtype))


def _vector_index(op, input, dim, index, dtypes=("int64", "int32"), negative=False):
    """Check ``input``/``dim``/``index`` for an ``index_*`` op; return ``(dim, index as a 1-D int64 array)``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): expected input to be a Tensor, got {type(input).__name__}")
    dim = normalize_dim(dim, input.ndim, op)
    idx = index_array(index, input, op, dtypes)
    if idx.ndim > 1:
        raise IndexError(f"{op}(): index must be a vector (0-d or 1-D), got shape {tuple(idx.shape)}")
    size = (input.shape or (1,))[dim]
    return dim, check_bounds(idx.reshape(-1), size, dim, op, negative)


def _as_1d(x: Tensor) -> Tensor:
    return reshape(x, (1,)) if x.ndim == 0 else x


def _check_source(op, input, dim, idx, source):
    if not isinstance(source, Tensor):
        raise TypeError(f"{op}(): expected source to be a Tensor, got {type(source).__name__}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"{op}(): expected source of input's dtype {input.dtype}, got {source.dtype}")
    want = list(input.shape or (1,))
    want[dim] = idx.shape[0]
    got = tuple(source.shape or (1,))
    if got != tuple(want):
        raise RuntimeError(f"{op}(): expected source of shape {tuple(want)} (input's shape with dimension {dim} "
                           f"the number of indices, {idx.shape[0]}), got {tuple(source.shape)}")
    return _as_1d(source)


def _result(out: Tensor, input: Tensor) -> Tensor:
    return reshape(out, ()) if input.ndim == 0 else out


# ==================================================================================================
# index_select, index_add, index_copy, index_fill
# ==================================================================================================


class IndexSelect(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, x, index, dim):
        ctx.in_shape, ctx.index, ctx.dim = x.shape, index, dim
        return get_array_module(x).take(x, index, axis=dim)  # x's shape with len(index) at dim

    @staticmethod
    def backward(ctx, dy):
        return IndexAdd.apply(_zeros(ctx.in_shape, dy), dy, ctx.index, ctx.dim, 1), None, None


class IndexAdd(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, x, source, index, dim, alpha):
        ctx.index, ctx.dim, ctx.alpha = index, dim, alpha
        xp = get_array_module(x)
        y = x.copy()  # (*x.shape)
        source = source * x.dtype.type(alpha) if alpha != 1 else source
        if xp is np:  # rows of a view with dim first: the fast row scatter of kernels.scatter
            scatter_reduce_at(xp.moveaxis(y, dim, 0), (index,), xp.moveaxis(source, dim, 0), "sum")
        else:  # pragma: no cover - needs a GPU; one index per element, which every CuPy path takes
            shape = [1] * x.ndim
            shape[dim] = -1
            scatter_reduce_at(y, along_dim_index(xp.broadcast_to(index.reshape(shape), source.shape), dim), source, "sum")
        return y

    @staticmethod
    def backward(ctx, dy):
        dx = dy if ctx.needs_input_grad[0] else None
        dsource = None
        if ctx.needs_input_grad[1]:
            dsource = IndexSelect.apply(dy, ctx.index, ctx.dim)
            dsource = dsource * ctx.alpha if ctx.alpha != 1 else dsource
        return dx, dsource, None, None, None


class IndexCopy(Function):
    """``y = x`` with the slices at ``index`` replaced by ``source``'s, or (``fill``) set to a 0-d ``source``."""

    supports_complex = True  # moves or copies elements only: the same backward for complex (docs/complex.md)

    @staticmethod
    def forward(ctx, x, source, index, dim, fill):
        ctx.index, ctx.dim, ctx.fill = index, dim, fill
        y = x.copy()  # (*x.shape)
        y[_along(dim) + (index,)] = source
        return y

    @staticmethod
    def backward(ctx, dy):
        dx = IndexCopy.apply(dy, 0, ctx.index, ctx.dim, True) if ctx.needs_input_grad[0] else None
        dsource = None
        if ctx.needs_input_grad[1] and ctx.fill:  # the value gets the sum over every slice it filled, once each
            dsource = IndexSelect.apply(dy, get_array_module(ctx.index).unique(ctx.index), ctx.dim).sum()
        elif ctx.needs_input_grad[1]:
            dsource = IndexSelect.apply(dy, ctx.index, ctx.dim)
        return dx, dsource, None, None, None


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of ``input`` at ``index`` along ``dim``: ``(a, n, b)`` with ``k`` indices → ``(a, k, b)``.

    ``index`` is 0-d or 1-D, int64 or int32; negative indices are errors (as PyTorch). The gradient
    index-adds ``dy`` into zeros (repeated indices add up).

    Raises IndexDtypeError (RuntimeError, TypeError) for another index dtype, IndexError for a 2-D
    index or ``dim`` out of range, IndexOutOfRangeError for an index outside ``[0, size)``.
    """
    dim, idx = _vector_index("index_select", input, dim, index)
    if input.ndim == 0 and idx.shape[0] != 1:
        raise RuntimeError(f"index_select(): a 0-dimensional input takes exactly one index, got {idx.shape[0]}")
    return _result(IndexSelect.apply(_as_1d(input), idx, dim), input)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """``out = input`` with ``out[..., index[k], ...] += alpha * source[..., k, ...]`` along ``dim``.

    ``source`` has ``input``'s dtype and shape except ``len(index)`` at ``dim``; repeated indices add
    up. Integer inputs cast ``alpha`` to their dtype first (as PyTorch). Gradients: ``dinput = dy``,
    ``dsource = alpha * index_select(dy, dim, index)``. Raises as :func:`index_select`, and
    RuntimeError for a ``source`` of another dtype or shape.
    """
    dim, idx = _vector_index("index_add", input, dim, index)
    source = _check_source("index_add", input, dim, idx, source)
    if not isinstance(alpha, (numbers.Number, np.generic)):
        raise TypeError(f"index_add(): alpha must be a number, got {type(alpha).__name__}")
    return _result(IndexAdd.apply(_as_1d(input), source, idx, dim, alpha), input)


@autocast("index_copy")
def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """``out = input`` with ``out[..., index[k], ...] = source[..., k, ...]`` along ``dim``.

    ``index`` must be int64 (PyTorch rejects int32 here). With repeated indices which copy wins is
    unspecified (as PyTorch). Gradients: ``dinput = dy`` zeroed at the copied slices,
    ``dsource = index_select(dy, dim, index)``. Raises as :func:`index_add`.
    """
    dim, idx = _vector_index("index_copy", input, dim, index, dtypes=("int64",))
    source = _check_source("index_copy", input, dim, idx, source)
    return _result(IndexCopy.apply(_as_1d(input), source, idx, dim, False), input)


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """``out = input`` with the slices at ``index`` along ``dim`` set to ``value`` (a number or a 0-d Tensor).

    ``index`` must be int64; negative indices count from the end (as PyTorch). A 0-d Tensor
    ``value`` is cast to ``input``'s dtype and gets the sum of ``dy`` over the filled places (each
    once, however often it is repeated in ``index``, as PyTorch). ``dinput = dy`` zeroed there.

    Raises IndexDtypeError for a non-int64 index, RuntimeError for a value Tensor that is not 0-d,
    TypeError for a value of another type, IndexOutOfRangeError as :func:`index_select`.
    """
    dim, idx = _vector_index("index_fill", input, dim, index, dtypes=("int64",), negative=True)
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"index_fill(): value must be a number or a 0-dimensional Tensor, got shape "
                               f"{tuple(value.shape)}")
        value = cast(value, input.dtype) if value.dtype != input.dtype else value
        if not (backend.is_floating(input.dtype) or input.dtype.kind == "c"):  # no gradient for integers
            value = value.array[()]
    else:  # PyTorch's check of the number against the dtype (ops/fill_values.py): 1j into float32 was dropped to 0
        value = get_array_module(input.array).asarray(checked_number(value, input.dtype, "index_fill"),
                                                      dtype=input.dtype)[()]
    return _result(IndexCopy.apply(_as_1d(input), value, idx, dim, True), input)


# ==================================================================================================
# masked_select, masked_scatter
# ==================================================================================================


class MaskedSelect(Function):
    supports_complex = True  # moves or copies elements only: the same backward for complex (docs/complex.md)

    @staticmethod
    def forward(ctx, x, mask):
        ctx.mask = mask
        return x[mask]  # (mask.sum(),)

    @staticmethod
    def backward(ctx, dy):
        return MaskedScatter.apply(_zeros(ctx.mask.shape, dy), dy, ctx.mask), None


class MaskedScatter(Function):
    """``y = x`` with ``y[mask] = source.reshape(-1)[:mask.sum()]`` (``x`` and ``mask`` of one shape)."""

    supports_complex = True  # moves or copies elements only: the same backward for complex (docs/complex.md)

    @staticmethod
    def forward(ctx, x, source, mask):
        ctx.mask, ctx.source_shape = mask, source.shape
        k = int(mask.sum())
        y = x.copy()  # (*x.shape)
        y[mask] = source.reshape(-1)[:k]
        return y

    @staticmethod
    def backward(ctx, dy):
        xp = get_array_module(dy.array)
        dx = dy.masked_fill(Tensor._from_op(ctx.mask), 0) if ctx.needs_input_grad[0] else None
        dsource = None
        if ctx.needs_input_grad[1]:
            n = int(np.prod(ctx.source_shape))
            used = xp.arange(n) < int(ctx.mask.sum())  # (n,), the leading entries of source were used
            dsource = MaskedScatter.apply(_zeros((n,), dy), MaskedSelect.apply(dy, ctx.mask), used)
            dsource = reshape(dsource, ctx.source_shape)
        return dx, dsource, None


def _mask_and_broadcast(op, input, mask):
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): expected input to be a Tensor, got {type(input).__name__}")
    if not isinstance(mask, Tensor) or mask.dtype != np.bool_:
        got = mask.dtype if isinstance(mask, Tensor) else type(mask).__name__
        raise IndexDtypeError(f"{op}(): expected mask to be a bool Tensor, got {got}")
    try:
        shape = tuple(np.broadcast_shapes(input.shape, mask.shape))
    except ValueError:
        raise ShapeMismatchError(f"{op}(): mask of shape {tuple(mask.shape)} and input of shape {tuple(input.shape)} "
                                 "do not broadcast (trailing dimensions must be equal or 1)") from None
    xp = get_array_module(input.array)
    m = xp.broadcast_to(backend.to_device(mask.array, input.device), shape)
    x = broadcast_to(input, shape) if input.shape != shape else input
    return x, m


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The entries of ``input`` where ``mask`` (bool, broadcast with ``input``) is True, as a 1-D tensor (row-major order).

    The gradient puts ``dy`` back at the mask's places (summed over broadcast axes). Raises
    IndexDtypeError (RuntimeError, TypeError) for a non-bool mask and ShapeMismatchError
    (RuntimeError, ValueError) when the shapes do not broadcast.
    """
    x, m = _mask_and_broadcast("masked_select", input, mask)
    return MaskedSelect.apply(x, m)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``out`` = ``input`` broadcast with ``mask``, with the True places filled by ``source``'s leading entries in order.

    ``source`` (any shape, ``input``'s dtype) needs at least ``mask.sum()`` elements. Gradients:
    ``dinput = dy`` zeroed at the mask (summed over broadcast axes); ``dsource`` is
    ``masked_select(dy, mask)`` in its leading entries and zero after. Raises RuntimeError (source
    too small or of another dtype) and as :func:`masked_select`.
    """
    x, m = _mask_and_broadcast("masked_scatter", input, mask)
    if not isinstance(source, Tensor):
        raise TypeError(f"masked_scatter(): expected source to be a Tensor, got {type(source).__name__}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"masked_scatter(): expected source of input's dtype {input.dtype}, got {source.dtype}")
    k = int(m.sum())
    if source.numel() < k:
        raise RuntimeError(f"masked_scatter(): source has {source.numel()} elements but the mask has {k} True entries "
                           "(source needs at least as many)")
    return MaskedScatter.apply(x, source, m)


"""Gather and scatter along one dim: ``gather``, ``scatter``, ``scatter_add``, ``scatter_reduce``, ``take``, ``take_along_dim``.

``gather`` reads ``y[i][j] = x[i][index[i][j]]`` (for ``dim=1``); its backward is the adjoint, a
scatter-*add* of ``dy`` into zeros of ``x``'s shape, and the backward of ``scatter_add`` is a
gather again, so each op's gradient is built from the others and is itself differentiable. Every
add over repeated indices goes through ``kernels.scatter`` (a plain ``dx[idx] = dy`` would keep
only one of the writes). The ``scatter_reduce`` gradients follow PyTorch's
``scatter_reduce_backward`` (``torch/csrc/autograd/FunctionsManual.cpp``).
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import DtypeError
from ..kernels.scatter import along_dim_index, scatter_reduce_at
from ..tensor import Tensor
from ._util import normalize_dim
from .autocast_policies import autocast
from .complex_parts import cj
from .index_checks import IndexDtypeError, check_bounds, index_array
from .selection import where
from .shape import broadcast_to, reshape

__all__ = ["gather", "scatter", "scatter_add", "scatter_reduce", "take", "take_along_dim"]


def _check_shapes(op, x, dim, index, src=None):
    """PyTorch's rule: ``index.size(d) <= x.size(d)`` for ``d != dim`` and ``index.size(d) <= src.size(d)`` for all ``d``."""
    ndim = max(x.ndim, 1)
    if max(index.ndim, 1) != ndim:
        raise RuntimeError(f"{op}(): index must have the same number of dimensions as input ({x.ndim}), "
                           f"got index of shape {tuple(index.shape)} for input of shape {tuple(x.shape)}")
    if src is not None and max(src.ndim, 1) != ndim:
        raise RuntimeError(f"{op}(): src must have the same number of dimensions as input ({x.ndim}), "
                           f"got src of shape {tuple(src.shape)} for input of shape {tuple(x.shape)}")
    xs, ids = x.shape or (1,), index.shape or (1,)
    ss = (src.shape or (1,)) if src is not None else None
    for d in range(ndim):
        if (d != dim and ids[d] > xs[d]) or (ss is not None and ids[d] > ss[d]):
            also = f" and no larger than src {tuple(ss)}" if ss is not None else ""
            raise RuntimeError(f"{op}(): expected index {tuple(ids)} to be no larger than input {tuple(xs)} apart from "
                               f"dimension {dim}{also}; they differ at dimension {d}")


def _prepare(op, x, dim, index, src=None, negative=False):
    """Check the arguments of a gather/scatter; return ``(dim, index array (>= 1-D), src cut to index's shape)``."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): expected input to be a Tensor, got {type(x).__name__}")
    dim = normalize_dim(dim, x.ndim, op)
    if src is not None and src.dtype != x.dtype:
        raise RuntimeError(f"{op}(): expected src to have input's dtype {x.dtype}, got {src.dtype}")
    if isinstance(index, Tensor) and index.numel() == 0:
        # nothing is read or written: PyTorch checks neither an empty index's dtype nor its shape (gather gives
        # an empty result of index's shape, a scatter the input), so an empty uint8 index is accepted, as there
        idx = get_array_module(x.array).zeros((0,) * max(x.ndim, 1), dtype=np.int64)  # (0, ..., 0)
        if src is not None:
            src = reshape(reshape(src, (-1,))[:0], idx.shape)  # a view: src's gradient is zeros
        return dim, idx, src
    idx = index_array(index, x, op)
    _check_shapes(op, x, dim, idx, src)
    idx = check_bounds(idx.reshape(idx.shape or (1,)), (x.shape or (1,))[dim], dim, op, negative)
    if src is not None:
        if src.ndim == 0:
            src = reshape(src, (1,))
        if src.shape != idx.shape:
            src = src[tuple(slice(0, n) for n in idx.shape)]  # a view: its backward pads with zeros
    return dim, idx, src


def _as_1d(x: Tensor) -> Tensor:
    return reshape(x, (1,)) if x.ndim == 0 else x


def _zeros(shape, like) -> Tensor:
    return Tensor._from_op(get_array_module(like.array).zeros(shape, dtype=like.dtype))


# ==================================================================================================
# gather, scatter_add, scatter
# ==================================================================================================


class Gather(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, x, index, dim):
        ctx.in_shape, ctx.index, ctx.dim = x.shape, index, dim
        return x[along_dim_index(index, dim)]  # (*index.shape)

    @staticmethod
    def backward(ctx, dy):
        return ScatterAdd.apply(_zeros(ctx.in_shape, dy), dy, ctx.index, ctx.dim), None, None


class ScatterAdd(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, x, src, index, dim):
        ctx.index, ctx.dim = index, dim
        y = x.copy()  # (*x.shape)
        scatter_reduce_at(y, along_dim_index(index, dim), src, "sum")
        return y

    @staticmethod
    def backward(ctx, dy):
        dx = dy if ctx.needs_input_grad[0] else None
        dsrc = Gather.apply(dy, ctx.index, ctx.dim) if ctx.needs_input_grad[1] else None
        return dx, dsrc, None, None


class Scatter(Function):
    """``y = x`` with ``y[.., index[..], ..] = src[..]``; ``src`` is an array of index's shape or a number."""

    supports_complex = True  # moves or copies elements only: the same backward for complex (docs/complex.md)

    @staticmethod
    def forward(ctx, x, src, index, dim):
        ctx.index, ctx.dim = index, dim
        y = x.copy()  # (*x.shape)
        y[along_dim_index(index, dim)] = src
        return y

    @staticmethod
    def backward(ctx, dy):
        dx = Scatter.apply(dy, 0, ctx.index, ctx.dim) if ctx.needs_input_grad[0] else None  # overwritten: no gradient
        dsrc = Gather.apply(dy, ctx.index, ctx.dim) if ctx.needs_input_grad[1] else None
        return dx, dsrc, None, None


def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """``out[i][j][k] = input[i][index[i][j][k]][k]`` for ``dim=1`` (and likewise for any dim).

    Shapes: ``index`` has ``input``'s number of dims and ``index.size(d) <= input.size(d)`` for
    ``d != dim``; the result has ``index``'s shape and ``input``'s dtype. The gradient scatter-adds
    ``dy`` into zeros of ``input``'s shape (repeated indices add up).

    Raises:
        IndexDtypeError (RuntimeError, TypeError): index not int64/int32 (PyTorch accepts both); an empty
            index of any dtype or shape gives an empty result of its shape, as PyTorch's.
        IndexOutOfRangeError (IndexError, RuntimeError): an index outside ``[0, input.size(dim))``
            (negative indices are errors, as in PyTorch).
        RuntimeError: index has another number of dims or is too large.  IndexError: dim out of range.
    """
    dim, idx, _ = _prepare("gather", input, dim, index)
    out = Gather.apply(_as_1d(input), idx, dim)
    return out if tuple(out.shape) == tuple(index.shape) else reshape(out, index.shape)  # 0-d or empty index


@autocast("scatter_add")
def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """``out = input`` with ``out[i][index[i][j]] += src[i][j]`` (``dim=1``), repeated indices adding up.

    Only the leading ``index.shape`` block of ``src`` is used; ``src`` needs ``input``'s dtype. Gradients:
    ``dinput = dy``, ``dsrc = gather(dy, dim, index)`` (zero outside that block). Raises as
    :func:`scatter`.
    """
    _need_tensor("scatter_add", src, "src")
    dim, idx, src = _prepare("scatter_add", input, dim, index, src)
    out = ScatterAdd.apply(_as_1d(input), src, idx, dim)
    return reshape(out, ()) if input.ndim == 0 else out


def scatter(input: Tensor, dim: int, index: Tensor, src=None, value=None, *, reduce=None) -> Tensor:
    """``out = input`` with ``out[i][index[i][j]] = src[i][j]`` (``dim=1``), or ``= value`` for a number.

    ``src`` (a Tensor of ``input``'s dtype, each ``src.size(d) >= index.size(d)``) or ``value`` (a
    number, cast to ``input``'s dtype; also accepted as the 4th positional argument, as PyTorch does).
    Gradients: ``dinput = dy`` with the written places zeroed; ``dsrc = gather(dy, dim, index)``.
    With repeated indices which write wins is unspecified (as in PyTorch), and every repeat gets the
    gradient (as PyTorch). ``reduce='add'|'multiply'`` is ``scatter_reduce(..., 'sum'|'prod')``
    (PyTorch has no gradient for it and raises in backward; here it has scatter_reduce's). Where
    ``src`` is larger than ``index``, PyTorch raises in backward; here its unused part gets zeros.

    Raises:
        ValueError: ``reduce`` not None/'add'/'multiply'.  TypeError: both or neither of src/value.
        RuntimeError: src of another dtype, shapes that do not fit.  Others as :func:`gather`.
    """
    if src is not None and not isinstance(src, Tensor) and value is None:
        src, value = None, src  # scatter(x, dim, index, 2.0)
    if (src is None) == (value is None):
        raise TypeError("scatter(): give exactly one of src (a Tensor) and value (a number)")
    if value is not None and (isinstance(value, Tensor) or not isinstance(value, (numbers.Number, np.generic))):
        raise TypeError(f"scatter(): value must be a number, got {type(value).__name__} (pass a Tensor as src)")
    if src is not None:
        _need_tensor("scatter", src, "src")
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise ValueError(f"scatter(): reduce must be None, 'add' or 'multiply', got {reduce!r}")
        if src is None:
            xp = get_array_module(input.array)
            shape = index.shape if isinstance(index, Tensor) else ()
            src = Tensor._from_op(xp.full(shape, value).astype(input.dtype))
        return scatter_reduce(input, dim, index, src, "sum" if reduce == "add" else "prod")
    dim, idx, src = _prepare("scatter", input, dim, index, src)
    if src is None:
        src = get_array_module(input.array).asarray(value).astype(input.dtype)[()]
    out = Scatter.apply(_as_1d(input), src, idx, dim)
    return reshape(out, ()) if input.ndim == 0 else out


def _need_tensor(op, t, name):
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}(): expected {name} to be a Tensor, got {type(t).__name__}")


# ==================================================================================================
# scatter_reduce
# ==================================================================================================

def _identity(reduce, dtype):
    """The value that leaves ``reduce`` unchanged, for ``include_self=False`` (``amax``: -inf or the smallest int)."""
    if reduce in ("sum", "prod"):
        return 0 if reduce == "sum" else 1
    if dtype.kind == "b":
        return reduce == "amin"
    lo, hi = (-np.inf, np.inf) if backend.is_floating(dtype) else (np.iinfo(dtype).min, np.iinfo(dtype).max)
    return lo if reduce == "amax" else hi


class ScatterReduce(Function):
    # complex: sum and mean are linear with real coefficients; prod's coefficients (products of the
    # others) are conjugated in backward (docs/complex.md); amax/amin refuse complex in scatter_reduce
    supports_complex = True

    @staticmethod
    def forward(ctx, x, src, index, dim, reduce, include_self):
        xp = get_array_module(x)
        ctx.index, ctx.dim, ctx.reduce, ctx.include_self = index, dim, reduce, include_self
        if reduce != "sum":  # a sum's gradient needs neither
            ctx.save_for_backward(x, src)
        place = along_dim_index(index, dim)
        y = x.copy()  # (*x.shape)
        if not include_self:
            y[place] = _identity("sum" if reduce == "mean" else reduce, x.dtype)
        scatter_reduce_at(y, place, src, "sum" if reduce == "mean" else reduce)
        if reduce == "mean":
            count = xp.full(x.shape, 1 if include_self else 0, dtype=np.int64)  # (*x.shape)
            scatter_reduce_at(count, place, xp.ones(index.shape, dtype=np.int64), "sum")
            count = xp.maximum(count, 1).astype(x.dtype)
            y = y / count if (backend.is_floating(x.dtype) or x.dtype.kind == "c") else y // count  # integers: floor, as PyTorch
        return y.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dy):
        x, src = ctx.saved_tensors if ctx.reduce != "sum" else (None, None)
        index, dim, reduce, include_self = ctx.index, ctx.dim, ctx.reduce, ctx.include_self
        xp = get_array_module(dy.array)
        place = along_dim_index(index, dim)

        def gather_(t):
            return Gather.apply(t, index, dim)

        def count(at_src):  # (*x.shape) array: per target place, how many src entries where at_src
            c = xp.zeros(dy.shape, dtype=dy.dtype)
            scatter_reduce_at(c, place, at_src.astype(dy.dtype), "sum")
            return c

        if reduce == "sum":
            dx, dsrc = dy, gather_(dy)
        elif reduce == "mean":
            n = count(xp.ones(index.shape)) + (1 if include_self else 0)  # (*x.shape) terms per place
            n = Tensor._from_op(xp.maximum(n, 1))
            dx, dsrc = dy / n, gather_(dy) / gather_(n)
        elif reduce == "prod":
            # d/dx = prod of the others = result / x; a zero x is masked to 1 and the product redone
            masked_x = x.masked_fill(x == 0, 1)
            dx = dy * cj(ScatterReduce.apply(masked_x, src, index, dim, reduce, include_self) / masked_x)
            src_zero = src.array == 0  # (*index.shape)
            zeros_here = count(src_zero)[place]  # (*index.shape) zeros of src at the same place
            single = Tensor._from_op(src_zero & (zeros_here == 1))
            result = ScatterReduce.apply(x, src, index, dim, reduce, include_self)
            without = ScatterReduce.apply(x, src.masked_fill(single, 1), index, dim, reduce, include_self)
            dsrc = where(single, gather_(dy * cj(without)),
                         gather_(dy * cj(result)) / cj(src.masked_fill(Tensor._from_op(src_zero), 1)))
            if bool((zeros_here > 1).any()):
                dsrc = DelayedError.apply(dsrc, "scatter_reduce(): double backward is not supported for src when more "
                                                "than one zero of src is scattered to the same place (as in PyTorch)")
        else:  # amax, amin: the gradient is shared evenly between the entries equal to the result (ties)
            result = ScatterReduce.apply(x.detach(), src.detach(), index, dim, reduce, include_self).array
            x_is = x.array == result  # (*x.shape)
            if not include_self:
                # PyTorch counts an excluded x equal to the result as a tie (and then zeroes its gradient),
                # so the src gradient sums to less than dy there; the finite differences say it must not.
                x_is[place] = False
            src_is = src.array == result[place]  # (*index.shape)
            n = Tensor._from_op(x_is.astype(dy.dtype) + count(src_is))  # (*x.shape) ties per place
            shared = dy / n
            dx = shared * Tensor._from_op(x_is.astype(dy.dtype))
            dsrc = gather_(shared) * Tensor._from_op(src_is.astype(dy.dtype))
        if not include_self:
            dx = Scatter.apply(dx, 0, index, dim)
        return (dx if ctx.needs_input_grad[0] else None), (dsrc if ctx.needs_input_grad[1] else None), None, None, None, None


class DelayedError(Function):
    """Passes its input through; raises ``message`` if a gradient is ever taken of it (PyTorch's DelayedError)."""

    @staticmethod
    def forward(ctx, x, message):
        ctx.message = message
        return x.copy()

    @staticmethod
    def backward(ctx, dy):
        raise RuntimeError(ctx.message)


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """``out[i][index[i][j]] = reduce(input[i][index[i][j]], src[i][j] for all j that go there)`` (``dim=1``).

    ``reduce``: ``'sum'``, ``'prod'``, ``'mean'`` (integers floor-divide, as PyTorch), ``'amax'``,
    ``'amin'`` (NaN propagates). ``include_self=False`` leaves ``input``'s value out at the places
    written to. Shapes and dtypes as :func:`scatter`; the result has ``input``'s shape and dtype.
    Gradients as PyTorch's ``scatter_reduce_backward``: for amax/amin ``dy`` is shared evenly between
    the tied entries; prod handles zeros (one zero: the product of the others; double backward
    raises when two zeros go to one place, as PyTorch). One deviation: with ``include_self=False``,
    PyTorch also counts an excluded input that happens to equal the result as a tie (so ``src`` gets
    too little); here it does not, as finite differences require.

    Raises:
        ValueError: ``reduce`` not one of the five.  Others as :func:`scatter`.
    """
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise ValueError(f"scatter_reduce(): reduce must be one of 'sum', 'prod', 'mean', 'amax', 'amin', got {reduce!r}")
    _need_tensor("scatter_reduce", src, "src")
    if reduce in ("amax", "amin") and isinstance(input, Tensor) and input.dtype.kind == "c":
        raise DtypeError(f"scatter_reduce(): reduce={reduce!r} is not supported for complex tensors (got "
                         f"{input.dtype}): complex numbers have no order")
    dim, idx, src = _prepare("scatter_reduce", input, dim, index, src)
    out = ScatterReduce.apply(_as_1d(input), src, idx, dim, reduce, bool(include_self))
    return reshape(out, ()) if input.ndim == 0 else out


# ==================================================================================================
# take, take_along_dim
# ==================================================================================================


def take(input: Tensor, index: Tensor) -> Tensor:
    """``input`` read as 1-D at ``index``: the result has ``index``'s shape (any shape) and ``input``'s dtype.

    Negative indices count from the end (as PyTorch). The gradient scatter-adds into ``input``'s shape.
    Raises IndexDtypeError (index not int64), IndexOutOfRangeError (outside ``[-numel, numel)``).
    """
    _need_tensor("take", input, "input")
    idx = index_array(index, input, "take", dtypes=("int64",))
    flat = reshape(input, (-1,))
    idx = check_bounds(idx.reshape(-1), flat.shape[0], 0, "take", negative=True)
    return reshape(Gather.apply(flat, idx, 0), index.shape)


def take_along_dim(input: Tensor, indices: Tensor, dim=None) -> Tensor:
    """``gather`` with ``input`` and ``indices`` broadcast against each other off ``dim`` (NumPy's ``take_along_axis``).

    ``dim=None``: both are flattened. Shapes: ``(2, 1, 5)`` with indices ``(1, 4, 3)`` along
    ``dim=2`` → ``(2, 4, 3)``. With a ``dim``, negative indices count from the end (as PyTorch);
    PyTorch 2.13 also wraps indices ``>= size`` around silently, which here raises instead.

    Raises:
        IndexDtypeError: indices not int64.  IndexOutOfRangeError: an index out of range.
        RuntimeError: different numbers of dims, or shapes that do not broadcast.
    """
    _need_tensor("take_along_dim", input, "input")
    index_array(indices, input, "take_along_dim", dtypes=("int64",), name="indices")
    if dim is None:
        return gather(reshape(input, (-1,)), 0, reshape(indices, (-1,)))
    if input.ndim != indices.ndim:
        raise RuntimeError(f"take_along_dim(): input and indices should have the same number of dimensions, got "
                           f"shapes {tuple(input.shape)} and {tuple(indices.shape)}")
    if input.ndim == 0:
        raise IndexError(f"take_along_dim(): dim {dim} given for a 0-dimensional input")
    dim = normalize_dim(dim, input.ndim, "take_along_dim")
    size = input.shape[dim]
    idx = check_bounds(backend.to_device(indices.array, input.device), size, dim, "take_along_dim", negative=True)
    shape_x, shape_i = list(input.shape), list(indices.shape)
    shape_x[dim] = shape_i[dim] = 1
    try:
        common = list(np.broadcast_shapes(tuple(shape_x), tuple(shape_i)))
    except ValueError:
        raise RuntimeError(f"take_along_dim(): input {tuple(input.shape)} and indices {tuple(indices.shape)} do not "
                           f"broadcast in the dims other than {dim}") from None
    xp = get_array_module(idx)
    common[dim] = indices.shape[dim]
    idx = xp.broadcast_to(idx, tuple(common))
    common[dim] = size
    return Gather.apply(broadcast_to(input, tuple(common)), idx, dim)

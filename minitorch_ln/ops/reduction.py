"""Reductions: sum, mean, max/min, logsumexp, arg-reductions, topk (``any``/``all`` are in
``comparison.py``; ``var``/``std`` in ``variance.py``).

Backward of a reduction broadcasts the upstream gradient back over the reduced axes (re-inserting
them with size 1 first when ``keepdim=False``). Every reduction takes ``axis=`` as an alias of
``dim=`` (as PyTorch; both given is a TypeError).
"""

from __future__ import annotations

import builtins
import numbers
from collections import namedtuple

import numpy as np

from ..autograd.function import Function
from .. import backend
from ..backend import as_dtype, get_array_module
from ..errors import DtypeError, IndexOutOfRangeError, OptionError
from ..tensor import Tensor
from ._util import (
    keepdims_alias,
    normalize_dim,
    normalize_dims,
    refuse_complex,
    require_float,
)
from . import complex_composed as C
from .autocast_policies import autocast
from .comparison import all, any  # noqa: A004, F401 - the logical reductions, re-exported here
from .conversion import cast
from .elementwise import exp
from .indexing import GetItem
from .selection import maximum, minimum
from .shape import broadcast_to, reshape

__all__ = ["all", "amax", "amin", "any", "argmax", "argmin", "logsumexp", "max", "mean", "min", "sum", "topk"]


def _keepdim_shape(shape, axes) -> tuple:
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def _acc(dtype):
    """The dtype a reduction accumulates in: float32 for float16 (as PyTorch), else the dtype itself."""
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _dim_alias(dim, axis, op: str):
    """``axis=``, NumPy's name that PyTorch accepts for ``dim=``; giving both is a TypeError (as PyTorch)."""
    if dim is not None:
        raise TypeError(f"{op}(): got both dim={dim!r} and its alias axis={axis!r}; give one of them")
    return axis


def _count(shape, axes) -> int:
    n = 1
    for a in axes:
        n *= shape[a]
    return n


class Sum(Function):
    """Sum over ``axes`` (float16/bfloat16 arrive in float32: ``autograd/bfloat16.py``), divided by ``n`` for
    :class:`Mean`: ``sum / n`` in one forward, one rounding, as PyTorch's mean; the backward is ``dy / n``."""

    supports_complex = True

    @staticmethod
    def forward(ctx, x, axes, keepdim, n=1):
        ctx.in_shape, ctx.axes, ctx.n = x.shape, axes, n
        return x.sum(axis=axes, keepdims=keepdim) if n == 1 else x.sum(axis=axes, keepdims=keepdim) / n

    @staticmethod
    def backward(ctx, dy):
        dy = reshape(dy if ctx.n == 1 else dy / ctx.n, _keepdim_shape(ctx.in_shape, ctx.axes))  # (..., 1, ...)
        return (broadcast_to(dy, ctx.in_shape),) + (None,) * (len(ctx.needs_input_grad) - 1)


class Mean(Sum):
    torch_name = "Mean"  # PyTorch records MeanBackward0


@keepdims_alias  # keepdims=, NumPy's name, as PyTorch accepts it
@autocast("sum")
def sum(x: Tensor, dim=None, keepdim: bool = False, *, dtype=None, axis=None) -> Tensor:  # noqa: A001
    """Sum over ``dim`` (an int, a tuple, or None for all; ``axis`` is an alias), as ``torch.sum``.
    An empty ``dim`` (``()``, ``[]``) is every dim, as in PyTorch (so in mean, amax, amin, logsumexp,
    nansum, nanmean, var, std, their ``_mean`` forms, norms and count_nonzero).

    Integer and bool inputs sum to int64; ``dtype`` casts the input first and sums in it (wrapping
    on overflow, as PyTorch); float16 accumulates in float32. The sum over an empty dim is 0.
    Raises IndexError for ``dim`` out of range, TypeError for both ``dim`` and ``axis``.
    """
    dim = dim if axis is None else _dim_alias(dim, axis, "sum")
    axes = normalize_dims(dim, x.ndim, "sum", empty_is_all=True)
    if dtype is not None:
        x = cast(x, as_dtype(dtype))
        if not backend.is_floating(x.dtype) and x.dtype.kind != "c":
            return Tensor._from_op(x.array.sum(axis=axes, keepdims=keepdim, dtype=x.dtype))
    if x.dtype.kind in "bui":
        return Tensor._from_op(x.array.sum(axis=axes, keepdims=keepdim).astype("int64"))
    return Sum.apply(x, axes, keepdim)


def sum_over(x: Tensor, dims: tuple, keepdim: bool = False) -> Tensor:
    """Sum over exactly the axes ``dims``: ``x`` itself when there are none (NumPy's ``axis=()``), where
    :func:`sum` reads an empty ``dim`` as every axis (PyTorch's ``sum(dim=())``). For internal callers
    whose axis list may come out empty (a parameter gradient over the non-normalized axes, say)."""
    return sum(x, dims, keepdim) if dims else x


@keepdims_alias  # keepdims=, NumPy's name, as PyTorch accepts it
def mean(x: Tensor, dim=None, keepdim: bool = False, *, dtype=None, axis=None) -> Tensor:
    """Mean over ``dim`` (an int, a tuple, or None for all; ``axis`` is an alias), keeping reduced
    dims as size 1 with ``keepdim``; ``dtype`` (a float dtype) casts the input first (``torch.mean``).

    Floating point results only (as PyTorch): an integer or bool tensor needs ``dtype=float32``
    (or ``.float()``), else DtypeError (a TypeError and a RuntimeError), as for an integer
    ``dtype``. An empty reduction gives NaN. Raises IndexError for ``dim`` out of range.
    """
    dim = dim if axis is None else _dim_alias(dim, axis, "mean")
    if dtype is not None:
        dt = as_dtype(dtype)
        if not backend.is_floating(dt):
            raise DtypeError(f"mean: could not infer output dtype: dtype= must be a floating point dtype, got {dt}")
        x = cast(x, dt)
    if not backend.is_floating(x.dtype) and x.dtype.kind != "c":
        raise DtypeError(f"mean: expected a floating point tensor, got dtype {x.dtype}; pass dtype=float32 or "
                         "convert with .float() first")
    axes = normalize_dims(dim, x.ndim, "mean", empty_is_all=True)
    n = _count(x.shape, axes)
    # sum / n, one rounding, as PyTorch (sum * (1/n) rounds twice: 1 ulp off in a quarter of float32
    # cases); the backward is dy / n too. float16/bfloat16: Mean's forward gets float32 and rounds its
    # quotient once (autograd/bfloat16.py), as PyTorch's CPU mean_out
    return Mean.apply(x, axes, keepdim, n) if n else sum(x, axes, keepdim) * float("nan")


# ==================================================================================================
# max, min, amax, amin, logsumexp
# ==================================================================================================


class AMax(Function):
    """Maximum over ``axes``; the gradient is split evenly among tied maxima (as PyTorch).

    A NaN maximum ties with nothing, so amax's gradient is NaN there (0/0, as PyTorch's ``amax``);
    with ``nan_ties`` (``max()``/``min()`` of all elements) it is split among the NaN entries instead,
    as PyTorch's ``evenly_distribute_backward`` (one NaN: a one-hot at it).
    """

    @staticmethod
    def forward(ctx, x, axes, keepdim, nan_ties=False):
        xp = get_array_module(x)
        y = x.max(axis=axes, keepdims=True)  # (..., 1, ...)
        ties = (x == y) | (xp.isnan(x) & xp.isnan(y)) if nan_ties else x == y
        ties = ties.astype(x.dtype)
        with np.errstate(invalid="ignore"):  # a NaN maximum without nan_ties: 0/0, NaN (as PyTorch's amax)
            ctx.share = ties / ties.sum(axis=axes, keepdims=True)  # (*x.shape)
        ctx.in_shape, ctx.axes = x.shape, axes
        return y if keepdim else y.reshape(tuple(s for i, s in enumerate(x.shape) if i not in axes))

    @staticmethod
    def backward(ctx, dy):
        dy = reshape(dy, _keepdim_shape(ctx.in_shape, ctx.axes))
        return broadcast_to(dy, ctx.in_shape) * Tensor._from_op(ctx.share), None, None, None


def _check_nonempty(x, axes, op):
    """max/min of nothing has no value: an IndexError that is also a RuntimeError (PyTorch raises
    IndexError with a dim and RuntimeError without one)."""
    if builtins.any(x.shape[a] == 0 for a in axes):
        raise IndexOutOfRangeError(f"{op}: cannot reduce over an empty dimension of shape {tuple(x.shape)} (the "
                                   "operation has no identity); give a dim whose size is not 0")


@keepdims_alias  # keepdims=, NumPy's name, as PyTorch accepts it
def amax(x: Tensor, dim=None, keepdim: bool = False, *, axis=None) -> Tensor:
    """Maximum over ``dim`` (None: all); ties share the gradient evenly. Raises IndexError for an empty dim."""
    dim = dim if axis is None else _dim_alias(dim, axis, "amax")
    axes = normalize_dims(dim, x.ndim, "amax", empty_is_all=True)
    _check_nonempty(x, axes, "amax")
    refuse_complex("amax", x)
    if not backend.is_floating(x.dtype):
        return Tensor._from_op(x.array.max(axis=axes, keepdims=keepdim))
    return AMax.apply(x, axes, keepdim, False)


@keepdims_alias  # keepdims=, NumPy's name, as PyTorch accepts it
def amin(x: Tensor, dim=None, keepdim: bool = False, *, axis=None) -> Tensor:
    """Minimum over ``dim`` (None: all), as ``-amax(-x)``: ties share the gradient evenly.

    Raises IndexError for a dim out of range or an empty dimension.
    """
    dim = dim if axis is None else _dim_alias(dim, axis, "amin")
    refuse_complex("amin", x)
    if not backend.is_floating(x.dtype):
        axes = normalize_dims(dim, x.ndim, "amin", empty_is_all=True)
        _check_nonempty(x, axes, "amin")
        return Tensor._from_op(x.array.min(axis=axes, keepdims=keepdim))
    return -amax(-x, dim, keepdim)


MaxResult = namedtuple("max", ["values", "indices"])
MinResult = namedtuple("min", ["values", "indices"])
TopkResult = namedtuple("topk", ["values", "indices"])


def _along(xp, idx, axis, shape):
    """The advanced index that reads ``take_along_axis(x, idx, axis)`` as ``x[index]`` (differentiable via getitem)."""
    index = []
    for d in range(len(shape)):
        if d == axis:
            index.append(idx)
        else:
            view = [1] * len(shape)
            view[d] = shape[d] if d != axis else 1
            index.append(xp.arange(idx.shape[d]).reshape(view))
    return tuple(index)


def _select(x: Tensor, idx, axis: int, keepdim: bool) -> Tensor:
    """``x`` at ``idx`` (int64, ``x``'s shape but ``k`` along ``axis``): values with the gradient routed to them."""
    xp = get_array_module(x.array)
    values = GetItem.apply(x, _along(xp, idx, axis, idx.shape), False)
    return values if keepdim else reshape(values, tuple(s for i, s in enumerate(values.shape) if i != axis))


def _max_min(x, dim, keepdim, largest, op):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    refuse_complex(op, x)
    if isinstance(dim, Tensor):  # torch.max(a, b): the elementwise maximum
        return maximum(x, dim) if largest else minimum(x, dim)
    if dim is None:
        if not backend.is_floating(x.dtype) or x.numel() == 0:
            return amax(x) if largest else amin(x)  # no NaN to share the gradient; the empty-input error
        return AMax.apply(x, tuple(range(x.ndim)), False, True) if largest else -AMax.apply(
            -x, tuple(range(x.ndim)), False, True)
    axis = normalize_dim(dim, x.ndim, op)
    _check_nonempty(x, (axis,) if x.ndim else (), op)
    xp = get_array_module(x.array)
    if x.ndim == 0:
        idx = xp.zeros((), dtype="int64")
        return (MaxResult if largest else MinResult)(x, Tensor._from_op(idx))
    idx = (xp.argmax if largest else xp.argmin)(x.array, axis=axis)  # first of tied maxima
    idx = xp.expand_dims(idx, axis).astype("int64")  # (..., 1, ...)
    values = _select(x, idx, axis, keepdim) if backend.is_floating(x.dtype) else Tensor._from_op(
        xp.take_along_axis(x.array, idx, axis) if keepdim else xp.take_along_axis(x.array, idx, axis).squeeze(axis))
    indices = Tensor._from_op(idx if keepdim else idx.squeeze(axis))
    return (MaxResult if largest else MinResult)(values, indices)


@keepdims_alias  # keepdims=, NumPy's name, as PyTorch accepts it
def max(x: Tensor, dim=None, keepdim: bool = False, *, axis=None):  # noqa: A001 - PyTorch's name
    """``max(x)``: the 0-d maximum (gradient shared among ties); ``max(x, dim)``: ``(values, indices)``.

    With ``dim`` the result is a namedtuple like ``torch.return_types.max``; the gradient goes to
    the returned index (the first of tied maxima). ``max(x, other_tensor)`` is :func:`maximum`.

    Raises:
        IndexError: ``dim`` out of range or an empty dimension.
    """
    return _max_min(x, dim if axis is None else _dim_alias(dim, axis, "max"), keepdim, True, "max")


@keepdims_alias  # keepdims=, NumPy's name, as PyTorch accepts it
def min(x: Tensor, dim=None, keepdim: bool = False, *, axis=None):  # noqa: A001
    """``min(x)``: the 0-d minimum; ``min(x, dim)``: a ``(values, indices)`` namedtuple like ``torch.return_types.min``.

    As :func:`max`: the gradient goes to the returned index (the first of tied minima); raises
    IndexError for a dim out of range or an empty dimension.
    """
    return _max_min(x, dim if axis is None else _dim_alias(dim, axis, "min"), keepdim, False, "min")


def _arg(x, dim, keepdim, largest, op):
    refuse_complex(op, x)
    xp = get_array_module(x.array)
    fn = xp.argmax if largest else xp.argmin
    if dim is None:
        _check_nonempty(x, tuple(range(x.ndim)), op)
        idx = fn(x.array.reshape(-1)).astype("int64")
        return Tensor._from_op(idx.reshape((1,) * x.ndim) if keepdim else idx)
    axis = normalize_dim(dim, x.ndim, op)
    _check_nonempty(x, (axis,) if x.ndim else (), op)
    if x.ndim == 0:
        return Tensor._from_op(xp.zeros((), dtype="int64"))
    return Tensor._from_op(fn(x.array, axis=axis, keepdims=keepdim).astype("int64"))


@keepdims_alias  # keepdims=, NumPy's name, as PyTorch accepts it
def argmax(x: Tensor, dim=None, keepdim: bool = False, *, axis=None) -> Tensor:
    """Index (int64) of the maximum over ``dim``, or in the flattened tensor when ``dim`` is None; first of ties."""
    return _arg(x, dim if axis is None else _dim_alias(dim, axis, "argmax"), keepdim, True, "argmax")


@keepdims_alias  # keepdims=, NumPy's name, as PyTorch accepts it
def argmin(x: Tensor, dim=None, keepdim: bool = False, *, axis=None) -> Tensor:
    """Index (int64) of the minimum over ``dim`` (of the flattened tensor for None); the first of ties.

    No gradient. Raises IndexError for a dim out of range or an empty dimension.
    """
    return _arg(x, dim if axis is None else _dim_alias(dim, axis, "argmin"), keepdim, False, "argmin")


class LogSumExp(Function):
    """``m + log Σ exp(x - m)`` with ``m`` the maximum; its gradient is ``softmax(x) = exp(x - y)``."""

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        xp = get_array_module(x)
        a = x.astype(_acc(x.dtype), copy=False)  # float16 in float32 (as PyTorch)
        with np.errstate(all="ignore"):
            if _count(x.shape, axes) == 0:  # log of the empty sum: -inf (as PyTorch)
                y = xp.full(_keepdim_shape(x.shape, axes), -np.inf, dtype=a.dtype)
            else:
                m = a.max(axis=axes, keepdims=True)  # (..., 1, ...)
                m = xp.where(xp.isinf(m), 0, m).astype(a.dtype, copy=False)  # all ±inf rows: shift by 0 (as PyTorch)
                y = m + xp.log(xp.exp(a - m).sum(axis=axes, keepdims=True))
            y = y.astype(x.dtype, copy=False)
        ctx.in_shape, ctx.axes, ctx.keepdim = x.shape, axes, keepdim
        if not keepdim:
            y = y.reshape(tuple(s for i, s in enumerate(x.shape) if i not in axes))
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, y = ctx.saved_tensors
        shape = _keepdim_shape(ctx.in_shape, ctx.axes)
        with np.errstate(invalid="ignore"):  # inf - inf at an infinite entry: NaN (as PyTorch)
            return reshape(dy, shape) * exp(x - reshape(y, shape)), None, None


@keepdims_alias  # keepdims=, NumPy's name, as PyTorch accepts it
@autocast("logsumexp")
def logsumexp(x: Tensor, dim=None, keepdim: bool = False, *, axis=None) -> Tensor:
    """``log Σ exp(x)`` over ``dim``, stable for huge values (``torch.logsumexp``); float16 in
    float32; ``-inf`` over an empty dim (as PyTorch); complex input composed (ops/complex_composed.py).

    Raises TypeError for integer input and IndexError for ``dim`` out of range.
    """
    dim = dim if axis is None else _dim_alias(dim, axis, "logsumexp")
    if not C.is_complex(x):
        require_float(x, "logsumexp")
    # dim=() is every dim, as PyTorch's keepdim=True result shows (with keepdim=False PyTorch 2.13 raises
    # "output with shape [] doesn't match the broadcast shape", a bug in its out= plumbing)
    axes = normalize_dims(dim, x.ndim, "logsumexp", empty_is_all=True)
    return C.logsumexp(x, axes, keepdim) if C.is_complex(x) else LogSumExp.apply(x, axes, keepdim)


def topk(x: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True, *, axis=None):  # noqa: A002
    """The ``k`` largest (or smallest) values along ``dim`` and their indices: ``(values, indices)``.

    Values come in descending order for ``largest`` (ascending otherwise); NaN is the largest value
    (as PyTorch's topk, sort and max: a NaN logit is picked first). Ties keep the lower index first
    (PyTorch leaves the order of equal values unspecified: its partial sort may pick another of them,
    or the other of -0.0 and 0.0). The gradient goes to the selected elements.

    Raises:
        ValueError: ``k`` outside ``[0, size of dim]``. IndexError: ``dim`` out of range.
    """
    if axis is not None:  # axis= for dim= (dim's default -1 cannot tell "both given" from "axis only")
        dim = _dim_alias(None if dim == -1 else dim, axis, "topk")
    axis = normalize_dim(dim, x.ndim, "topk")
    refuse_complex("topk", x)
    n = x.shape[axis] if x.ndim else 1
    if not isinstance(k, numbers.Integral) or not 0 <= k <= n:
        raise OptionError(f"topk: k={k!r} is out of range for dimension {axis} of size {n}")
    xp = get_array_module(x.array)
    if x.ndim == 0:
        if k != 1:
            raise ValueError(f"topk: a 0-d tensor has one element, so k must be 1, got {k}")
        return TopkResult(x, Tensor._from_op(xp.zeros((), dtype="int64")))
    kw = {"kind": "stable"} if xp is np else {}
    if largest:
        # descending as the reverse of an ascending sort of the reversed row: ties keep the lower index
        # first, NaN (sorted last) comes first, as the largest value (as PyTorch's topk, sort and max).
        # Never a sort of -x: that keeps NaN last and wraps int64's minimum onto itself (it was picked
        # as the largest)
        order = xp.flip(xp.argsort(xp.flip(x.array, axis), axis=axis, **kw), axis)  # (..., N, ...)
        order = (n - 1) - order
    else:
        order = xp.argsort(x.array, axis=axis, **kw)  # NaN last: the largest
    idx = xp.take(order, xp.arange(k), axis=axis).astype("int64")  # (..., k, ...)
    if backend.is_floating(x.dtype):
        values = _select(x, idx, axis, keepdim=True)
    else:
        values = Tensor._from_op(xp.take_along_axis(x.array, idx, axis))
    return TopkResult(values, Tensor._from_op(idx))


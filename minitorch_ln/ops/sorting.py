"""Sorting and order statistics: sort, argsort, msort, median, nanmedian, kthvalue, mode, quantile, unique.

Every value these ops return is an element of the input picked by an index (or, for ``quantile``,
a blend of two), so the gradient is a scatter-add to the picked positions: values are read with
:func:`~minitorch_ln.ops.scan.take_along`, which is differentiable to any order. NaN sorts as
larger than every number (as PyTorch); sorting is always stable, which ``stable=False`` allows.
"""

from __future__ import annotations

import numbers
from collections import namedtuple

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..backend import get_array_module
from ..tensor import Tensor
from ._util import normalize_dim, refuse_complex
from .autocast_policies import autocast
from .selection import where
from .scan import DtypeError, OptionError, _scan_arrays, axis_alias, take_along
from .shape import permute, reshape, squeeze, unsqueeze

__all__ = ["argsort", "kthvalue", "median", "mode", "msort", "nanmedian", "quantile", "sort", "unique"]

SortResult = namedtuple("sort", ["values", "indices"])
MedianResult = namedtuple("median", ["values", "indices"])
NanmedianResult = namedtuple("nanmedian", ["values", "indices"])
KthvalueResult = namedtuple("kthvalue", ["values", "indices"])
ModeResult = namedtuple("mode", ["values", "indices"])


def _check_tensor(x, op):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor as input, got {type(x).__name__}")
    refuse_complex(op, x)


def _argsort(x, axis: int, descending: bool = False):
    """Stable argsort along ``axis`` (int64); NaN is the largest value, so last (first if descending)."""
    xp = get_array_module(x)
    kw = {"kind": "stable"} if xp is np else {}
    if not descending:
        return xp.argsort(x, axis=axis, **kw).astype("int64", copy=False)
    # Sort the reversed array and reverse the result: descending, and equal values keep their order.
    order = xp.argsort(xp.flip(x, axis), axis=axis, **kw).astype("int64", copy=False)
    return xp.ascontiguousarray(xp.flip(x.shape[axis] - 1 - order, axis))


def _pick(x: Tensor, idx, axis: int, keepdim: bool) -> Tensor:
    """``x`` at ``idx`` (size 1 along ``axis``), with ``axis`` dropped unless ``keepdim``."""
    values = take_along(x, idx, axis)
    return values if keepdim else squeeze(values, axis)


def _zero_index(x: Tensor) -> Tensor:
    return Tensor._from_op(get_array_module(x.array).zeros((), dtype="int64"))


@axis_alias
def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False):
    """Sorted values along ``dim`` and where they came from: ``(values, indices)`` like ``torch.sort``.

    Same shape as ``input``; indices are int64. NaN counts as larger than every number; ties keep
    their order (the sort is always stable). The gradient goes back through ``indices``.
    Raises IndexError for ``dim`` out of range.
    """
    _check_tensor(input, "sort")
    axis = normalize_dim(dim, input.ndim, "sort")
    if input.ndim == 0:
        return SortResult(take_along(input, None, 0), _zero_index(input))
    idx = _argsort(input.array, axis, descending)  # (*input.shape)
    return SortResult(take_along(input, idx, axis), Tensor._from_op(idx))


@axis_alias
def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The int64 indices that sort ``input`` along ``dim`` (``torch.argsort``); see :func:`sort`."""
    return sort(input, dim, descending, stable).indices


def msort(input: Tensor) -> Tensor:
    """``input`` sorted along dim 0 (``torch.msort``): the values of ``sort(input, dim=0)``."""
    return sort(input, 0).values


# ==================================================================================================
# median, nanmedian, kthvalue
# ==================================================================================================


class SelectEvenly(Function):
    """A 0-d value taken from ``x`` whose gradient is shared evenly by the elements equal to it
    (NaN elements when it is NaN): PyTorch's ``evenly_distribute_backward`` for ``median(x)``."""

    @staticmethod
    def forward(ctx, x, value):
        xp = get_array_module(x)
        hit = xp.isnan(x) if bool(xp.isnan(value)) else x == value  # (*x.shape)
        ctx.share = hit.astype(x.dtype) / max(int(hit.sum()), 1)
        return value.astype(x.dtype).copy()

    @staticmethod
    def backward(ctx, dy):
        return dy * Tensor._from_op(ctx.share), None


def _order_stat(x: Tensor, axis: int, keepdim: bool, which, op: str):
    """``(values, indices)`` at the sorted position ``which(n_valid, n_nan)`` (array, size 1 along ``axis``)."""
    xp = get_array_module(x.array)
    if x.ndim == 0:
        return take_along(x, None, 0), _zero_index(x)
    if x.shape[axis] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {axis} to have non-zero size (shape {tuple(x.shape)})")
    order = _argsort(x.array, axis)  # (*x.shape)
    n_nan = (xp.isnan(x.array) if backend.is_floating(x.dtype) else xp.zeros(x.shape, bool)).sum(axis, keepdims=True)
    k = which(x.shape[axis] - n_nan, n_nan).astype("int64")  # (..., 1, ...)
    idx = xp.take_along_axis(order, k, axis)  # (..., 1, ...)
    values = _pick(x, idx, axis, keepdim)
    return values, Tensor._from_op(idx if keepdim else idx.squeeze(axis))


def _median(input, dim, keepdim, ignore_nan, op):
    _check_tensor(input, op)
    xp = get_array_module(input.array)
    n = input.shape[normalize_dim(dim, input.ndim, op)] if dim is not None and input.ndim else input.numel()

    def which(n_valid, n_nan):
        if ignore_nan:  # the lower median of the numbers; all NaN: position 0 (a NaN)
            return xp.maximum(n_valid - 1, 0) // 2
        return xp.where(n_nan > 0, n_valid, (n - 1) // 2)  # any NaN: the first NaN

    if dim is None:
        if input.numel() == 0:
            return Tensor._from_op(xp.asarray(float("nan"), dtype=input.dtype))
        flat = input.array.reshape(-1)
        values, _ = _order_stat(Tensor._from_op(flat), 0, False, which, op)
        if not backend.is_floating(input.dtype):
            return values
        return SelectEvenly.apply(input, values.array)
    axis = normalize_dim(dim, input.ndim, op)
    result = NanmedianResult if ignore_nan else MedianResult
    return result(*_order_stat(input, axis, keepdim, which, op))


@axis_alias
def median(input: Tensor, dim=None, keepdim: bool = False):
    """The lower median (``torch.median``): of all elements (0-d) or along ``dim`` as ``(values, indices)``.

    For ``n`` elements it is the ``(n - 1) // 2``-th smallest (the lower of the two middle ones).
    A NaN makes the result NaN (its index is that of the first NaN). Without ``dim`` the gradient
    is shared evenly among the elements equal to the median (as PyTorch); with ``dim`` it goes to
    ``indices``. Which of several equal elements ``indices`` names can differ from PyTorch's.
    Raises IndexError for ``dim`` out of range or an empty dimension; ``median`` of an empty
    tensor is NaN.
    """
    return _median(input, dim, keepdim, False, "median")


@axis_alias
def nanmedian(input: Tensor, dim=None, keepdim: bool = False):
    """:func:`median` ignoring NaN (``torch.nanmedian``); NaN only where every element is NaN."""
    return _median(input, dim, keepdim, True, "nanmedian")


@axis_alias
def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False):
    """The ``k``-th smallest element (1-based) along ``dim``: ``(values, indices)`` like ``torch.kthvalue``.

    NaN counts as the largest value. The gradient goes to ``indices``.

    Raises:
        RuntimeError: ``k`` outside ``[1, size of dim]``. IndexError: ``dim`` out of range.
        TypeError: ``k`` not an int.
    """
    _check_tensor(input, "kthvalue")
    if not isinstance(k, numbers.Integral) or isinstance(k, bool):
        raise TypeError(f"kthvalue(): k must be an int, got {k!r}")
    axis = normalize_dim(dim, input.ndim, "kthvalue")
    n = input.shape[axis] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k={k} out of range for dimension {axis} of size {n}"
                           f" (expected 1 <= k <= {n})")
    xp = get_array_module(input.array)
    return KthvalueResult(*_order_stat(input, axis, keepdim, lambda nv, nn: xp.full(nv.shape, k - 1), "kthvalue"))


@axis_alias
def mode(input: Tensor, dim: int = -1, keepdim: bool = False):
    """The most frequent value along ``dim`` and its LAST index: ``(values, indices)`` like ``torch.mode``.

    Among equally frequent values the smallest wins (as PyTorch); NaN never equals NaN. The
    gradient goes to ``indices``. Raises IndexError for ``dim`` out of range or an empty dimension.
    """
    _check_tensor(input, "mode")
    axis = normalize_dim(dim, input.ndim, "mode")
    if input.ndim == 0:
        return ModeResult(take_along(input, None, 0), _zero_index(input))
    n = input.shape[axis]
    if n == 0:
        raise IndexError(f"mode(): Expected reduction dim {axis} to have non-zero size (shape {tuple(input.shape)})")
    xp = get_array_module(input.array)
    order = xp.moveaxis(_argsort(input.array, axis), axis, -1)  # (..., n)
    s = xp.take_along_axis(xp.moveaxis(input.array, axis, -1), order, -1)  # (..., n) sorted
    pos = xp.arange(n)
    new_run = xp.ones(s.shape, bool)
    new_run[..., 1:] = s[..., 1:] != s[..., :-1]
    end_run = xp.ones(s.shape, bool)
    end_run[..., :-1] = new_run[..., 1:]
    start = _scan_arrays("maximum", xp.where(new_run, pos, 0), s.ndim - 1)  # (..., n) first position of the run
    end = xp.flip(_scan_arrays("minimum", xp.flip(xp.where(end_run, pos, n), -1), s.ndim - 1), -1)  # (..., n) last
    first = xp.argmax(end - start, axis=-1)[..., None]  # (..., 1) start of the first longest run
    last = xp.take_along_axis(end, first, -1)  # (..., 1) its end: stable sort, so the last index
    idx = xp.moveaxis(xp.take_along_axis(order, last, -1), -1, axis)  # (..., 1, ...)
    return ModeResult(_pick(input, idx, axis, keepdim), Tensor._from_op(idx if keepdim else idx.squeeze(axis)))


# ==================================================================================================
# quantile
# ==================================================================================================

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def read_ranks(sorted_x: Tensor, ranks, axis: int, interpolation: str, weight=None) -> Tensor:
    """The values of ``sorted_x`` at the fractional ``ranks`` (an array ``(..., Q, ...)``) along ``axis``, by
    ``interpolation`` (quantile's and nanquantile's shared step). ``weight(below)``, when given, is the linear
    weight ``rank - floor(rank)`` written in Tensor ops of ``q`` (so that ``q`` gets its gradient)."""
    xp = get_array_module(sorted_x.array)
    if interpolation in ("lower", "higher", "nearest"):
        r = {"lower": xp.floor, "higher": xp.ceil, "nearest": xp.round}[interpolation](ranks)
        return take_along(sorted_x, r.astype("int64"), axis)
    below, above = xp.floor(ranks), xp.ceil(ranks)
    w = ranks - below if interpolation == "linear" else xp.where(below == ranks, 0, 0.5).astype(ranks.dtype)
    lo = take_along(sorted_x, below.astype("int64"), axis)  # (..., Q, ...)
    hi = take_along(sorted_x, above.astype("int64"), axis)  # (..., Q, ...)
    wt = weight(Tensor._from_op(below)) if weight is not None and interpolation == "linear" else Tensor._from_op(w)
    # torch.lerp's two forms: start + w·(end - start) for w < 0.5, else end - (end - start)·(1 - w)
    out = where(Tensor._from_op(w < 0.5), lo + wt * (hi - lo), hi - (hi - lo) * (1 - wt))
    return where(Tensor._from_op(below == above), lo, out)  # a whole rank reads one value (inf - inf is NaN)


@autocast("quantile")
@axis_alias
def quantile(input: Tensor, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear") -> Tensor:
    """The ``q``-th quantiles of ``input`` along ``dim`` (all elements for None), as ``torch.quantile``.

    With ``n`` sorted values the quantile sits at rank ``r = q·(n - 1)``: ``linear`` blends the
    values at ``floor(r)`` and ``ceil(r)`` by ``r - floor(r)``; ``lower``/``higher``/``nearest``
    (round half to even) take one; ``midpoint`` averages the two (one value when ``r`` is whole).
    A slice with a NaN gives NaN. ``q`` a float or 0-d tensor: the reduced shape; ``q`` 1-D of
    length ``Q``: ``(Q, *reduced shape)``. float32/float64 only. The gradient goes to the one or two
    values each quantile is made of.

    Raises:
        RuntimeError: empty input, ``q`` outside [0, 1], a ``q`` tensor with more than 1 dim.
        TypeError (also a RuntimeError, as PyTorch): integer input or a ``q`` tensor of another
            dtype. ValueError (also a RuntimeError): unknown ``interpolation``.
        IndexError: ``dim`` out of range.
    """
    _check_tensor(input, "quantile")
    if input.dtype not in (np.float32, np.float64):
        raise DtypeError(f"quantile() input tensor must be either float or double dtype, got {input.dtype}")
    if input.numel() == 0:
        raise RuntimeError(f"quantile() input tensor must be non-empty, got shape {tuple(input.shape)}")
    if interpolation not in _INTERPOLATIONS:
        raise OptionError(f"quantile() interpolation must be one of {', '.join(_INTERPOLATIONS)}, got {interpolation!r}")
    xp = get_array_module(input.array)
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"quantile() q must be a scalar or 1D tensor, got shape {tuple(q.shape)}")
        if q.dtype != input.dtype:
            raise DtypeError(f"quantile() q tensor must be same dtype as the input tensor ({input.dtype}), got {q.dtype}")
        qa, q_scalar = xp.asarray(q.array).reshape(-1), q.ndim == 0
    elif isinstance(q, numbers.Real) and not isinstance(q, bool):
        qa, q_scalar = xp.asarray([q], dtype=input.dtype), True
    else:
        raise TypeError(f"quantile() q must be a float or a Tensor, got {type(q).__name__}")
    if qa.size and not bool(((qa >= 0) & (qa <= 1)).all()):
        raise RuntimeError(f"quantile() q values must be in the range [0, 1], got {qa.tolist()}")
    if dim is None:
        x, axis = reshape(input, (-1,)), 0
    else:
        x, axis = input, normalize_dim(dim, input.ndim, "quantile")
    if x.ndim == 0:
        x, axis = reshape(x, (1,)), 0
    n = x.shape[axis]
    if n == 0:
        raise RuntimeError(f"quantile() input tensor must be non-empty along dim {axis}, got shape {tuple(x.shape)}")
    sorted_x = sort(x, axis).values  # (..., n, ...)
    Q = qa.shape[0]
    shape = [1] * x.ndim
    shape[axis] = Q
    ranks = (qa * (n - 1)).astype(x.dtype).reshape(shape)  # (1, .., Q, .., 1), in the input's dtype as PyTorch
    has_nan = xp.isnan(x.array).any(axis=axis, keepdims=True)  # (..., 1, ...)
    ranks = xp.where(has_nan, n - 1, ranks).astype(x.dtype)  # (..., Q, ...): NaN slices read the last (NaN) value
    weight = None
    if isinstance(q, Tensor) and q.requires_grad:
        # w = q·(n - 1) - floor(r) as Tensor ops, so q gets (hi - lo)·(n - 1) (PyTorch's); a NaN slice's is 0
        weight = lambda below: where(Tensor._from_op(has_nan), 0.0, reshape(q, shape) * float(n - 1) - below)  # noqa: E731
    out = read_ranks(sorted_x, ranks, axis, interpolation, weight)  # (..., Q, ...)
    out = permute(out, (axis, *[d for d in range(x.ndim) if d != axis]))  # (Q, *reduced)
    if keepdim and input.ndim:  # a 0-d input keeps its 0 dims
        out = reshape(out, (Q,) + (1,) * input.ndim) if dim is None else unsqueeze(out, axis + 1)
    return reshape(out, out.shape[1:]) if q_scalar else out


# ==================================================================================================
# unique
# ==================================================================================================


class _NoGrad(Function):
    """Passes ``x`` through; its backward raises, as PyTorch's for ``unique`` (its output requires grad)."""

    @staticmethod
    def forward(ctx, x, values, op):
        ctx.op = op
        return values

    @staticmethod
    def backward(ctx, dy):
        raise RuntimeError(f"the derivative for '{ctx.op}' is not implemented")


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           dim=None):
    """The distinct elements (or, with ``dim``, distinct slices along ``dim``) in ascending order (``torch.unique``).

    Returns the values, plus ``inverse`` (int64; the input's shape, or ``(size of dim,)`` with
    ``dim``) and ``counts`` (int64) when asked, as a tuple. NaNs are all distinct (as PyTorch).
    The result is always sorted (``sorted=False`` allows it). Not differentiable: the output
    requires grad when the input does, and backward raises RuntimeError, as in PyTorch.
    Raises IndexError for ``dim`` out of range.
    """
    _check_tensor(input, "unique")
    xp = get_array_module(input.array)
    kw = {"return_inverse": True, "return_counts": True}
    if dim is None:
        try:
            values, inverse, counts = xp.unique(input.array.reshape(-1), equal_nan=False, **kw)
        except TypeError:  # an array module without equal_nan
            values, inverse, counts = xp.unique(input.array.reshape(-1), **kw)
        inverse = inverse.reshape(input.shape)
    else:
        axis = normalize_dim(dim, input.ndim, "unique")
        values, inverse, counts = xp.unique(input.array, axis=axis, **kw)
        inverse = inverse.reshape(-1)
    out = Tensor._from_op(values)
    if input.requires_grad and backend.is_floating(input.dtype):
        out = _NoGrad.apply(input, values, "unique")
    extra = ([Tensor._from_op(inverse.astype("int64"))] if return_inverse else []) + \
        ([Tensor._from_op(counts.astype("int64"))] if return_counts else [])
    return (out, *extra) if extra else out

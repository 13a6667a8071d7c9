"""Other reductions: prod, count_nonzero, var_mean, std_mean, aminmax (as ``torch.*``).

``prod`` is the last entry of :func:`~minitorch_ln.ops.scan.cumprod`, so its gradient
``dx_i = dy · Π_{j≠i} x_j`` never divides by ``x``: exact with one zero (the product of the
others) and with several (zero), at every order.
"""

from __future__ import annotations

import numbers
from collections import namedtuple

from .. import backend
from ..backend import get_array_module
from ..tensor import Tensor
from ._util import normalize_dim, normalize_dims
from .autocast_policies import autocast
from .conversion import cast
from .scan import DtypeError, axis_alias, cumprod
from .shape import reshape

__all__ = ["aminmax", "count_nonzero", "prod", "std_mean", "var_mean"]

AminmaxResult = namedtuple("aminmax", ["min", "max"])


def _check_tensor(x, op):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor as input, got {type(x).__name__}")


@autocast("prod")
@axis_alias
def prod(input: Tensor, dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """Product of all elements (0-d) or along the int ``dim`` (``torch.prod``).

    Integer and bool inputs give int64 (no gradient); ``dtype`` casts the input first and multiplies
    in it, as PyTorch (uint8 wraps: 360 is 104; bool is a logical and); float16 multiplies in
    float32. An empty product is 1. ``dx_i = dy · Π_{j≠i} x_j``, exact with zeros (see the module
    docstring).

    Raises:
        TypeError: ``dim`` not an int (PyTorch's ``prod`` takes one dim). IndexError: out of range.
    """
    _check_tensor(input, "prod")
    if dim is not None and (not isinstance(dim, numbers.Integral) or isinstance(dim, bool)):
        raise TypeError(f"prod: dim must be an int (prod reduces one dim), got {dim!r}")
    x = input
    if dtype is not None:  # the product is taken in dtype, wrapping (uint8: 360 -> 104) or bool's logical and
        x = cast(x, backend.as_dtype(dtype))
    elif x.dtype.kind in "bui":
        x = cast(x, "int64")
    if dim is None:
        out = prod(reshape(x, (-1,)), 0, dtype=x.dtype)  # x has its final dtype: not cast to int64 again
        return reshape(out, (1,) * x.ndim) if keepdim else out
    axis = normalize_dim(dim, x.ndim, "prod")
    if not backend.is_floating(x.dtype) and x.dtype.kind != "c":
        return Tensor._from_op(get_array_module(x.array).prod(x.array, axis=axis if x.ndim else None, keepdims=keepdim,
                                                              dtype=x.dtype))
    if x.ndim == 0:
        return x * 1
    n = x.shape[axis]
    if n == 0:  # the empty product: ones, still connected to x (an empty gradient), as PyTorch
        return x.sum(axis, keepdim=keepdim) * 0 + 1
    last = (slice(None),) * axis + (slice(n - 1, n) if keepdim else n - 1,)
    return cumprod(x, axis)[last]  # (..., [1,] ...)


@axis_alias
def count_nonzero(input: Tensor, dim=None) -> Tensor:
    """Number of non-zero elements over ``dim`` (an int, a tuple or None for all) as int64 (``torch.count_nonzero``).

    No gradient. Raises IndexError for a dim out of range, ValueError for a repeated dim.
    """
    _check_tensor(input, "count_nonzero")
    axes = normalize_dims(dim, input.ndim, "count_nonzero", empty_is_all=True)
    xp = get_array_module(input.array)
    return Tensor._from_op(xp.count_nonzero(input.array, axis=axes if input.ndim else None).astype("int64"))


def _moments(input, dim, unbiased, keepdim, correction, op, take_sqrt):
    _check_tensor(input, op)
    if not backend.is_floating(input.dtype) and input.dtype.kind != "c":
        raise DtypeError(f"{op}: only floating point dtypes are supported, got {input.dtype}")
    if isinstance(dim, bool):  # var_mean(x, True): PyTorch's (input, unbiased) overload
        if unbiased is not None:
            raise TypeError(f"{op}: got unbiased twice (as the second argument {dim!r} and as unbiased=)")
        dim, unbiased = None, dim
    spread = (input.std if take_sqrt else input.var)(dim, unbiased, keepdim, correction=correction)
    return spread, input.mean(dim, keepdim)


@axis_alias
def var_mean(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    """``(var, mean)`` over ``dim`` in one call (``torch.var_mean``); a plain tuple, as PyTorch.

    ``correction`` (default 1, Bessel's) or ``unbiased`` as :func:`~minitorch_ln.ops.reduction.var`;
    ``var_mean(x, True)`` means ``unbiased=True``. Raises TypeError (also a RuntimeError) for
    integer input, IndexError for ``dim`` out of range, ValueError for both unbiased and correction.
    """
    return _moments(input, dim, unbiased, keepdim, correction, "var_mean", False)


@axis_alias
def std_mean(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    """``(std, mean)`` over ``dim`` (``torch.std_mean``); arguments and errors as :func:`var_mean`."""
    return _moments(input, dim, unbiased, keepdim, correction, "std_mean", True)


@axis_alias
def aminmax(input: Tensor, *, dim=None, keepdim: bool = False):
    """``(min, max)`` over the int ``dim`` or all elements, a namedtuple like ``torch.aminmax``.

    Ties share the gradient evenly (as ``amin``/``amax`` and PyTorch).

    Raises:
        RuntimeError: an empty input with ``dim=None``. IndexError: ``dim`` out of range or an
            empty dimension. TypeError: ``dim`` not an int.
    """
    _check_tensor(input, "aminmax")
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has "
                               f"no identity (input shape {tuple(input.shape)})")
        lo, hi = input.amin(), input.amax()
        if keepdim:
            lo, hi = reshape(lo, (1,) * input.ndim), reshape(hi, (1,) * input.ndim)
        return AminmaxResult(lo, hi)
    axis = normalize_dim(dim, input.ndim, "aminmax")
    if input.ndim and input.shape[axis] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {axis} to have non-zero size (shape {tuple(input.shape)})")
    return AminmaxResult(input.amin(axis, keepdim), input.amax(axis, keepdim))

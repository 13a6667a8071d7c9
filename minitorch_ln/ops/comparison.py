"""Comparisons and logic: ``eq``, ``ne``, ``lt``, ``le``, ``gt``, ``ge``, ``logical_*``, ``isfinite``,
``isnan``, and the logical reductions ``any``, ``all``.

Bool results of the broadcast shape, with no gradient. An integer tensor compared with a Python int
outside its dtype's range (``uint8_image > -1``) compares the true values, in int64. PyTorch wraps
the number into the dtype first (``-1`` becomes 255, so ``tensor([1], dtype=uint8) > -1`` is False
there); the math decides here, as the comparison's meaning does not depend on the storage width.
"""

from __future__ import annotations

import numpy as np

from ..autograd import function as _function
from ..backend import get_array_module
from ..tensor import Tensor
from ._util import (
    broadcast_shape,
    keepdims_alias,
    normalize_dims,
    promote,
    refuse_complex,
)
from .conversion import cast

__all__ = ["eq", "ge", "gt", "isfinite", "isnan", "le", "logical_and", "logical_not", "logical_or", "lt", "ne"]


def _widen(t, n):
    """``t`` as int64 when it is a small-integer tensor and ``n`` a Python int outside its range."""
    if isinstance(t, Tensor) and type(n) is int and t.dtype.kind in "iu" and t.dtype.itemsize < 8:
        info = np.iinfo(t.dtype)
        if not info.min <= n <= info.max:
            return cast(t, np.int64)
    return t


def _compare(a, b, fn, name) -> Tensor:
    if name not in ("eq", "ne", "logical_and", "logical_or"):  # truth values of complex numbers: nonzero
        refuse_complex(name, a, b)
    a, b = _widen(a, b), _widen(b, a)
    a, b = promote(a, b, name)
    broadcast_shape(a.shape, b.shape, name)
    if a.device != b.device:
        raise RuntimeError(
            f"{name}: expected all tensors on the same device, but found tensors on {a.device} and {b.device}; "
            "move them with .to(device) first"
        )
    out = Tensor._from_op(fn(a.array, b.array))
    if _function._tracer is not None:  # no Function records a comparison: the ONNX export's trace sees it here
        _function._tracer(name, None, (a, b), {}, out)
    return out


def eq(a, b) -> Tensor:
    """``a == b`` elementwise: a bool tensor of the broadcast shape, with no gradient. Raises ValueError naming both shapes when they do not broadcast."""
    return _compare(a, b, lambda x, y: x == y, "eq")


def ne(a, b) -> Tensor:
    """``a != b`` elementwise (bool, no gradient); as :func:`eq`."""
    return _compare(a, b, lambda x, y: x != y, "ne")


def lt(a, b) -> Tensor:
    """``a < b`` elementwise (bool, no gradient); as :func:`eq`."""
    return _compare(a, b, lambda x, y: x < y, "lt")


def le(a, b) -> Tensor:
    """``a <= b`` elementwise (bool, no gradient); as :func:`eq`."""
    return _compare(a, b, lambda x, y: x <= y, "le")


def gt(a, b) -> Tensor:
    """``a > b`` elementwise (bool, no gradient); as :func:`eq`."""
    return _compare(a, b, lambda x, y: x > y, "gt")


def ge(a, b) -> Tensor:
    """``a >= b`` elementwise (bool, no gradient); as :func:`eq`."""
    return _compare(a, b, lambda x, y: x >= y, "ge")


def logical_not(x: Tensor) -> Tensor:
    """``~x``: a bool tensor of ``x``'s shape (non-zero is True), no gradient."""
    return Tensor._from_op(get_array_module(x.array).logical_not(x.array))


def logical_and(a, b) -> Tensor:
    """``a & b`` elementwise on truth values: bool, broadcast shape, no gradient."""
    return _compare(a, b, lambda x, y: get_array_module(x).logical_and(x, y), "logical_and")


def logical_or(a, b) -> Tensor:
    """``a | b`` elementwise on truth values: bool, broadcast shape, no gradient."""
    return _compare(a, b, lambda x, y: get_array_module(x).logical_or(x, y), "logical_or")


def isfinite(x: Tensor) -> Tensor:
    """True where ``x`` is neither inf nor NaN (bool, ``x``'s shape, no gradient)."""
    return Tensor._from_op(get_array_module(x.array).isfinite(x.array))


def isnan(x: Tensor) -> Tensor:
    """True where ``x`` is NaN (bool, ``x``'s shape, no gradient)."""
    return Tensor._from_op(get_array_module(x.array).isnan(x.array))


def _logical_reduction(x, dim, keepdim, axis, name):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(x).__name__}")
    if axis is not None:
        if dim is not None:
            raise TypeError(f"{name}(): got both dim={dim!r} and its alias axis={axis!r}; give one of them")
        dim = axis
    axes = normalize_dims(dim, x.ndim, name)
    out = getattr(get_array_module(x.array), name)(x.array, axis=axes, keepdims=keepdim)
    return Tensor._from_op(out.astype(np.uint8) if x.dtype == np.uint8 else out)


@keepdims_alias
def any(x: Tensor, dim=None, keepdim: bool = False, *, axis=None) -> Tensor:  # noqa: A001 - PyTorch's name
    """True where any element over ``dim`` (an int, a tuple, None for all; ``axis`` an alias) is
    non-zero (``torch.any``); bool, but uint8 for a uint8 input, as PyTorch. No gradient."""
    return _logical_reduction(x, dim, keepdim, axis, "any")


@keepdims_alias
def all(x: Tensor, dim=None, keepdim: bool = False, *, axis=None) -> Tensor:  # noqa: A001
    """True where every element over ``dim`` is non-zero (``torch.all``); dtypes and arguments as :func:`any`."""
    return _logical_reduction(x, dim, keepdim, axis, "all")

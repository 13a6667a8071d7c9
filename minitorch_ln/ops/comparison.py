"""Comparisons and logic: ``eq``, ``ne``, ``lt``, ``le``, ``gt``, ``ge``, ``logical_*``, ``isfinite``, ``isnan``.

Bool results of the broadcast shape, with no gradient.
"""

from __future__ import annotations

from ..backend import get_array_module
from ..tensor import Tensor
from ._util import broadcast_shape, promote


def _compare(a, b, fn, name) -> Tensor:
    a, b = promote(a, b, name)
    broadcast_shape(a.shape, b.shape, name)
    if a.device != b.device:
        raise RuntimeError(
            f"{name}: expected all tensors on the same device, but found tensors on {a.device} and {b.device}; "
            "move them with .to(device) first"
        )
    return Tensor._from_op(fn(a.array, b.array))


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

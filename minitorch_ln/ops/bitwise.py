"""Bitwise ops on integer and bool tensors (``&``, ``|``, ``^``, ``~``, ``<<``, ``>>``) and ``logical_xor``.

None of these has a gradient: their results are integer or bool tensors, which never require grad.
Operands promote as in PyTorch (:func:`promote`): an int32 tensor with a Python int stays int32, a
bool tensor with a Python int becomes int64, uint8 with int8 gives int16. Floating point operands
raise DtypeError, a TypeError and a RuntimeError (PyTorch: ``RuntimeError: "bitwise_and_cpu" not implemented
for 'Float'``).
Shifts follow PyTorch where C leaves them undefined: a shift by a negative amount or by at least
the bit width gives 0 to the left, and 0 or -1 (the sign, spread) to the right.
"""

from __future__ import annotations

import numpy as np

from ..backend import get_array_module
from ..errors import DtypeError
from ..tensor import Tensor
from ._util import broadcast_shape, promote

__all__ = [
    "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "logical_xor"
]


def _int_operands(a, b, op: str, kinds: str):
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"{op}: expected at least one Tensor, got {type(a).__name__} and {type(b).__name__}")
    a, b = promote(a, b, op)
    broadcast_shape(a.shape, b.shape, op)
    if a.dtype.kind not in kinds:
        want = "integer or bool" if "b" in kinds else "integer"
        raise DtypeError(f"{op}: not implemented for dtype {a.dtype}: expected {want} tensors")
    if a.device != b.device and a.ndim and b.ndim:
        raise RuntimeError(f"{op}: expected all tensors on the same device, but found tensors on {a.device} and {b.device}")
    return a.array, b.array


def _result(array) -> Tensor:
    return Tensor._from_op(get_array_module(array).asarray(array))


def bitwise_and(input, other) -> Tensor:  # noqa: A002 - PyTorch's argument names
    """``input & other`` bit by bit (bool: logical and); broadcast shape, promoted integer/bool dtype.
    Raises TypeError for floating point operands."""
    a, b = _int_operands(input, other, "bitwise_and", "biu")
    return _result(a & b)


def bitwise_or(input, other) -> Tensor:  # noqa: A002
    """``input | other`` bit by bit; as :func:`bitwise_and`."""
    a, b = _int_operands(input, other, "bitwise_or", "biu")
    return _result(a | b)


def bitwise_xor(input, other) -> Tensor:  # noqa: A002
    """``input ^ other`` bit by bit; as :func:`bitwise_and`."""
    a, b = _int_operands(input, other, "bitwise_xor", "biu")
    return _result(a ^ b)


def bitwise_not(input: Tensor) -> Tensor:  # noqa: A002
    """``~input``: each bit flipped (``~x = -x - 1`` for signed ints, logical not for bool); same
    shape and dtype. Raises TypeError for floating point tensors."""
    if not isinstance(input, Tensor):
        raise TypeError(f"bitwise_not: expected a Tensor, got {type(input).__name__}")
    if input.dtype.kind not in "biu":
        raise DtypeError(f"bitwise_not: not implemented for dtype {input.dtype}: expected an integer or bool tensor")
    return _result(~input.array)


def _shift(input, other, op: str, left: bool) -> Tensor:
    a, s = _int_operands(input, other, op, "iu")
    xp = get_array_module(a)
    bits = a.dtype.itemsize * 8
    in_range = (s >= 0) & (s < bits)
    s_ok = xp.where(in_range, s, 0).astype(a.dtype, copy=False)
    with np.errstate(all="ignore"):
        shifted = (a << s_ok) if left else (a >> s_ok)
    fill = a.dtype.type(0) if left else xp.where(a < 0, a.dtype.type(-1) if a.dtype.kind == "i" else 0, 0)
    return _result(xp.where(in_range, shifted, fill).astype(a.dtype, copy=False))


def bitwise_left_shift(input, other) -> Tensor:  # noqa: A002
    """``input << other`` (``input·2^other``, wrapping at the dtype's width); integer tensors only.

    A shift by a negative amount or by at least the bit width gives 0 (as PyTorch). Raises
    TypeError for bool-with-bool or floating point operands."""
    return _shift(input, other, "bitwise_left_shift", left=True)


def bitwise_right_shift(input, other) -> Tensor:  # noqa: A002
    """``input >> other`` (arithmetic: ``floor(input / 2^other)``); integer tensors only.

    A shift by a negative amount or by at least the bit width gives -1 for negative inputs and 0
    otherwise (as PyTorch). Errors as :func:`bitwise_left_shift`."""
    return _shift(input, other, "bitwise_right_shift", left=False)


def logical_xor(input, other) -> Tensor:  # noqa: A002
    """True where exactly one of ``input`` and ``other`` is non-zero (NaN counts as non-zero): a bool
    tensor of the broadcast shape, no gradient; any dtypes."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"logical_xor: expected at least one Tensor, got {type(input).__name__} and {type(other).__name__}")
    a, b = promote(input, other, "logical_xor")
    broadcast_shape(a.shape, b.shape, "logical_xor")
    return _result(get_array_module(a.array).logical_xor(a.array, b.array))

"""Divisions: ``fmod``, ``remainder`` (``%``), ``floor_divide`` (``//``), ``div(rounding_mode=...)``, ``true_divide``.
"""

from __future__ import annotations

import math


from ..autograd.function import Function
from .. import backend
from ..backend import get_array_module
from ..tensor import Tensor
from .shape import unbroadcast

__all__ = ["floor_divide", "fmod", "remainder", "true_divide"]

_LN2 = math.log(2.0)
from .binary import OptionError, _calm, _check_int_divisor, _operands, _zeros


# ==================================================================================================
# Divisions: fmod, remainder, floor_divide, div(rounding_mode=...), true_divide
# ==================================================================================================


class _Quotient(Function):
    """``a // b`` (floor) or ``trunc(a / b)``: piecewise constant, so zero gradients."""

    @staticmethod
    def forward(ctx, a, b, mode):
        xp = get_array_module(a)
        ctx.shapes = (a.shape, b.shape)
        q = _calm(xp.floor_divide, a, b)  # Python's floor division (as PyTorch's, -0.0 and inf included)
        if mode == "trunc":
            if backend.is_floating(a.dtype):
                return _calm(lambda: xp.trunc(a / b).astype(a.dtype, copy=False))
            inexact = _calm(lambda: (a - q * b) != 0)
            q = q + (inexact & ((a < 0) != (b < 0))).astype(q.dtype)  # floor → toward zero
        return q

    @staticmethod
    def backward(ctx, dy):
        return _zeros(ctx.shapes[0], dy), _zeros(ctx.shapes[1], dy), None


def _quotient(a, b, mode, op):
    a, b = _operands(a, b, op, kinds="iuf")
    _check_int_divisor(b, op)
    return _Quotient.apply(a, b, mode)


def floor_divide(input, other) -> Tensor:  # noqa: A002
    """``floor(input / other)`` elementwise, as Python's ``//`` (ints keep their dtype; float
    results are whole floats). Raises ZeroDivisionError (also a RuntimeError) for an integer zero
    divisor and TypeError for bool. Deviation: the gradient is 0 (the derivative almost everywhere),
    where PyTorch raises "derivative not implemented"."""
    return _quotient(input, other, "floor", "floor_divide")


def div_rounding(input, other, rounding_mode=None) -> Tensor:  # noqa: A002
    """PyTorch's ``div(input, other, rounding_mode=None)``: true division (ints give float32) with
    ``None``; ``'trunc'`` rounds the quotient toward zero, ``'floor'`` down, both keeping integer
    dtypes and giving zero gradients (as PyTorch). Raises ValueError (also a RuntimeError) for
    another ``rounding_mode``."""
    if rounding_mode is None:
        return true_divide(input, other)
    if rounding_mode not in ("trunc", "floor"):
        raise OptionError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found {rounding_mode!r}")
    return _quotient(input, other, rounding_mode, "div")


def true_divide(input, other) -> Tensor:  # noqa: A002
    """``input / other`` with integer operands as float32 (the alias PyTorch keeps for ``div``)."""
    a, b = _operands(input, other, "true_divide", kinds="biufc", to_float=True)
    return a / b


class Fmod(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _calm(get_array_module(a).fmod, a, b)

    @staticmethod
    def backward(ctx, dy):
        a, b = ctx.saved_tensors
        da = unbroadcast(dy, a.shape) if ctx.needs_input_grad[0] else None
        db = unbroadcast(-dy * div_rounding(a, b, "trunc"), b.shape) if ctx.needs_input_grad[1] else None
        return da, db


class Remainder(Function):
    @staticmethod
    def forward(ctx, a, b):
        xp = get_array_module(a)
        ctx.save_for_backward(a, b)
        if not backend.is_floating(a.dtype):
            return xp.remainder(a, b)
        m = _calm(xp.fmod, a, b)  # PyTorch's rule, which keeps fmod's -0.0: shift m into b's sign
        return xp.where((m != 0) & ((b < 0) != (m < 0)), m + b, m).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, dy):
        a, b = ctx.saved_tensors
        da = unbroadcast(dy, a.shape) if ctx.needs_input_grad[0] else None
        db = unbroadcast(-dy * div_rounding(a, b, "floor"), b.shape) if ctx.needs_input_grad[1] else None
        return da, db


def fmod(input, other) -> Tensor:  # noqa: A002
    """C's ``fmod``: ``input - trunc(input/other)·other``, with the sign of ``input`` (ints keep their
    dtype; NaN for a float zero divisor). Gradients: 1 and ``-trunc(input/other)`` (as PyTorch).
    Raises ZeroDivisionError (also a RuntimeError) for an integer zero divisor, TypeError for bool."""
    a, b = _operands(input, other, "fmod", kinds="iuf")
    _check_int_divisor(b, "fmod")
    return Fmod.apply(a, b)


def remainder(input, other) -> Tensor:  # noqa: A002
    """Python's ``%``: ``input - floor(input/other)·other``, with the sign of ``other`` (ints keep their
    dtype). Gradients: 1 and ``-floor(input/other)`` (as PyTorch). Errors as :func:`fmod`."""
    a, b = _operands(input, other, "remainder", kinds="iuf")
    _check_int_divisor(b, "remainder")
    return Remainder.apply(a, b)

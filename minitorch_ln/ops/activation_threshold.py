"""Thresholding activations: ``threshold``, ``softshrink``, ``hardshrink`` (piecewise, as those of
activation_piecewise.py, whose conventions hold here).
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..backend import get_array_module
from ..tensor import Tensor
from .activation import ActivationDtypeError, _check, _const, _number

class Threshold(Function):
    @staticmethod
    def forward(ctx, x, threshold, value):
        xp = get_array_module(x)
        below = x <= threshold
        ctx.keep = ~below
        return xp.where(below, xp.asarray(value).astype(x.dtype), x)

    @staticmethod
    def backward(ctx, dy):
        return dy * _const(ctx.keep, dy.dtype), None, None


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x`` where ``x > threshold``, else ``value`` (cast to the input's dtype): ``(*)`` → ``(*)``.

    Integer inputs keep their dtype. ``dx = dy`` where ``x > threshold``, else 0 (0 at the threshold).
    """
    if isinstance(input, Tensor) and input.dtype == np.bool_:
        raise ActivationDtypeError("threshold: bool tensors are not supported; expected a float or integer tensor")
    x = _check(input, "threshold", ints="keep")
    return Threshold.apply(x, _number(threshold, "threshold", "threshold"), _number(value, "value", "threshold"))


class Shrink(Function):
    """Zero where ``|x| <= lambd``; elsewhere ``x - shift·sign(x)`` (``shift = lambd`` soft, 0 hard)."""

    @staticmethod
    def forward(ctx, x, lambd, soft):
        xp = get_array_module(x)
        zero = (x >= -lambd) & (x <= lambd)  # PyTorch's test: a NaN is not zeroed
        ctx.keep = ~zero
        shifted = xp.where(x > lambd, x - x.dtype.type(lambd), x + x.dtype.type(lambd)) if soft else x
        return xp.where(zero, x.dtype.type(0), shifted)

    @staticmethod
    def backward(ctx, dy):
        return dy * _const(ctx.keep, dy.dtype), None, None


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """``x - lambd`` if ``x > lambd``, ``x + lambd`` if ``x < -lambd``, else 0: ``(*)`` → ``(*)``.

    ``dx = dy`` where ``|x| > lambd``, 0 at ``±lambd``. Raises RuntimeError for ``lambd < 0``.
    """
    x = _check(input, "softshrink")
    lambd = _number(lambd, "lambd", "softshrink")
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}")
    return Shrink.apply(x, lambd, True)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """``x`` where ``|x| > lambd``, else 0: ``(*)`` → ``(*)``; ``dx = dy`` where kept, 0 at ``±lambd``.

    A negative ``lambd`` zeroes nothing (as PyTorch).
    """
    return Shrink.apply(_check(input, "hardshrink"), _number(lambd, "lambd", "hardshrink"), False)


# Tensor.hardshrink is in ops/methods.py; the others are torch.nn.functional only

__all__ = ["hardshrink", "softshrink", "threshold"]

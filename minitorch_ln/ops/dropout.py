"""Dropout (Srivastava et al., 2014), inverted: kept values are scaled by ``1/(1-p)`` during training,
so that evaluation needs no rescaling. The mask comes from the device's seeded generator
(``backend.generator``), so ``manual_seed`` makes it reproducible.
"""

from __future__ import annotations

import numbers

from .. import backend
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import require_float


class Dropout(Function):
    @staticmethod
    def forward(ctx, x, p):
        keep = backend.generator(backend.device_of(x)).random(x.shape) >= p  # (*x.shape)
        scale = keep.astype(x.dtype) * x.dtype.type(1.0 / (1.0 - p)) if p < 1 else keep.astype(x.dtype)
        ctx.scale = scale
        return x * scale

    @staticmethod
    def backward(ctx, dy):
        return dy * Tensor._from_op(ctx.scale), None


def dropout(input: Tensor, p: float = 0.5, training: bool = True) -> Tensor:  # noqa: A002
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``; same shape and dtype.

    Returns ``input`` itself when ``training`` is False or ``p == 0``; zeros when ``p == 1``.

    Raises:
        ValueError: ``p`` outside [0, 1]. TypeError: integer input.
    """
    if not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: probability p must be between 0 and 1, got {p!r}")
    require_float(input, "dropout")
    if not training or p == 0:
        return input
    return Dropout.apply(input, float(p))

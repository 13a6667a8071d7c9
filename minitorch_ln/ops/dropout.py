"""Dropout (Srivastava et al., 2014), inverted: kept values are scaled by ``1/(1-p)`` during training,
so that evaluation needs no rescaling. The mask comes from the device's seeded generator
(``backend.generator``), so ``manual_seed`` makes it reproducible; on the CPU it is PyTorch's
(``noise = empty_like(x).bernoulli_(1 - p).div_(1 - p)``, then ``x * noise``).
"""

from __future__ import annotations

import numbers

from .. import backend, random_torch
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import require_float

__all__ = ["dropout"]


class Dropout(Function):
    @staticmethod
    def forward(ctx, x, p):
        scale = dropout_noise(x.shape, p, x)  # (*x.shape)
        ctx.scale = scale
        return x * scale

    @staticmethod
    def backward(ctx, dy):
        return dy * Tensor._from_op(ctx.scale), None


def dropout_noise(shape, p: float, like):
    """PyTorch's dropout noise, ``like``'s dtype and device: 1/(1-p) (divided in that dtype) with
    probability 1-p, else 0 (``bernoulli_(1 - p).div_(1 - p)``); nothing is drawn when p = 1. ``(*shape)``."""
    if p >= 1:
        return backend.get_array_module(like).zeros(shape, dtype=like.dtype)
    keep = random_torch.bernoulli_scalar(backend.generator(backend.device_of(like)), shape, like.dtype, 1.0 - p)
    return keep / like.dtype.type(1.0 - p)  # (*shape)


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

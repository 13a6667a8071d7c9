"""Dropout (Srivastava et al., 2014), inverted: kept values are scaled by ``1/(1-p)`` during training,
so that evaluation needs no rescaling; its channel-wise forms ``dropout1d/2d/3d`` (Tompson et al., 2015:
one draw per ``(n, c)`` map) and alpha dropout (Klambauer et al., 2017, for SELU networks: dropped
values go to SELU's negative saturation and an affine map keeps mean and variance), all as ATen's
``_dropout_impl``. The mask comes from the device's seeded generator
(``backend.generator``), so ``manual_seed`` makes it reproducible; on the CPU it is PyTorch's
(``noise = empty_like(x).bernoulli_(1 - p).div_(1 - p)``, then ``x * noise``).
"""

from __future__ import annotations

import numbers
import warnings

from .. import backend, random_torch
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import require_float

__all__ = [
    "alpha_dropout", "dropout", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout"
]


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


_ALPHA = 1.7580993408473766  # -SELU's scale·alpha: the value a dropped unit takes before the affine map


def _check_p(p) -> float:
    if not isinstance(p, numbers.Real) or isinstance(p, bool) or not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return float(p)


def _dropout_impl(input, p, training, feature, alpha, op):  # noqa: A002
    """ATen's ``_dropout_impl``: noise of shape ``(N, C, 1, ...)`` (feature) or ``input``'s, drawn as
    ``bernoulli(1 - p)``; plain: ``x·noise/(1-p)``; alpha: ``x·a·noise + b`` with
    ``a = 1/sqrt((α²p + 1)(1 - p))``, ``b = α·a·p - α·a·(1 - noise)``. Composed of Tensor ops."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    require_float(input, op)
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        return input * 0.0
    if feature and input.ndim < 2:  # checked where ATen makes the noise: after the two early returns
        raise RuntimeError(f"{op}: Feature dropout requires at least 2 dimensions in the input, got "
                           f"{list(input.shape)}")
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if feature else tuple(input.shape)
    keep = random_torch.bernoulli_scalar(backend.generator(input.device), shape, input.dtype, 1.0 - p)  # (*shape)
    if not alpha:
        return input * Tensor._from_op(keep / input.dtype.type(1.0 - p))
    a = 1.0 / ((_ALPHA * _ALPHA * p + 1) * (1 - p)) ** 0.5
    b = (keep - 1) * (_ALPHA * a) + _ALPHA * a * p
    return input * Tensor._from_op(keep * input.dtype.type(a)) + Tensor._from_op(b.astype(input.dtype))


def _feature_dropout(op, nd, input, p, training, strict):  # noqa: A002
    """dropout1d/2d/3d: ``(N, C, *S)`` or unbatched ``(C, *S)`` with ``nd`` spatial dims."""
    p = _check_p(p)
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if input.ndim not in (nd + 1, nd + 2):
        if strict:
            raise RuntimeError(f"{op}: Expected {nd + 1}D or {nd + 2}D input, but received a {input.ndim}D input. "
                               f"Note that {op} exists to provide channel-wise dropout on inputs with {nd} spatial "
                               "dimension(s), a channel dimension, and an optional batch dimension.")
        warnings.warn(f"{op}: Received a {input.ndim}-D input to {op}, which is deprecated and will result in an "
                      f"error in a future release (PyTorch's warning)", stacklevel=3)
    if nd == 2:  # PyTorch never adds a batch dim here: a 3-D input is read as (N, C, L), its historical behaviour
        if input.ndim == 3:
            warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                          "behavior is desired - input is interpreted as shape (N, C, L) (PyTorch's behaviour)",
                          stacklevel=3)
        return _dropout_impl(input, p, training, True, False, op)
    if input.ndim != nd + 2:  # unbatched (and, for dropout3d, any other rank, as PyTorch)
        return _dropout_impl(input.unsqueeze(0), p, training, True, False, op).squeeze(0)
    return _dropout_impl(input, p, training, True, False, op)


def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels: ``(N, C, L)`` or ``(C, L)``, each ``(n, c)`` row kept with probability
    ``1 - p`` and scaled by ``1/(1-p)``. ``inplace`` is accepted and ignored (a new tensor).
    Raises ValueError for ``p`` outside [0, 1], RuntimeError for another rank, TypeError for integers."""
    return _feature_dropout("dropout1d", 1, input, p, training, strict=True)


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels of ``(N, C, H, W)``; a 3-D input is read as ``(N, C, L)`` with PyTorch's
    warning (its historical behaviour); other ranks warn as PyTorch and drop channels of dims 0-1."""
    return _feature_dropout("dropout2d", 2, input, p, training, strict=False)


def dropout3d(input, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)``; see :func:`dropout2d`."""
    return _feature_dropout("dropout3d", 3, input, p, training, strict=False)


def alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:  # noqa: A002
    """Alpha dropout for SELU networks (Klambauer et al., 2017): any shape; dropped values become
    ``-α·a·(1-p)``-shifted so that mean and variance are kept. Identity when not ``training`` (the
    default, as PyTorch's). Raises ValueError for ``p`` outside [0, 1]."""
    return _dropout_impl(input, _check_p(p), training, False, True, "alpha_dropout")


def feature_alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:  # noqa: A002
    """Alpha dropout of whole channels (one draw per ``(n, c)``): ``(N, C, *)``; see :func:`alpha_dropout`."""
    return _dropout_impl(input, _check_p(p), training, True, True, "feature_alpha_dropout")

"""Multi-class and embedding margin losses: ``multi_margin_loss``, ``multilabel_margin_loss``,
``multilabel_soft_margin_loss``, ``hinge_embedding_loss``, ``triplet_margin_with_distance_loss``.

Each is composed of differentiable Tensor ops (gather, ``relu``, ``logsigmoid``, masks built on
arrays from the integer targets), so every order of derivative follows. Formulas from PyTorch's
documentation of the ``torch.nn`` loss modules (and ATen's ``MultiMarginCriterion.cpp``,
``MultiLabelMarginCriterion.cpp``, ``Loss.cpp``); the gradient at a hinge's kink is 0, as ATen's
``z > 0``.
"""

from __future__ import annotations

import numpy as np

from ..backend import get_array_module
from ..tensor import Tensor
from ._util import require_float
from .activation import relu
from .autocast_policies import autocast
from .distance import pairwise_distance
from .loss_margin import _LogSigmoid
from .loss_regression import check_tensors, reduce_loss, resolve_reduction
from .selection import minimum, where

__all__ = [
    "hinge_embedding_loss", "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
    "triplet_margin_with_distance_loss"
]


def _scores(op, input, target):  # noqa: A002
    """``(N, C)`` scores (an unbatched ``(C,)`` gets N = 1, a 0-d one is ``(1, 1)``) and whether to drop
    that dim again."""
    if target.dtype.kind not in "iu":
        raise RuntimeError(f"{op}: expected an integer (int64) target of class indices, got {target.dtype}")
    if input.ndim == 0:
        require_float(input, op)
        return input.reshape(1, 1), True
    if input.ndim not in (1, 2) or (input.ndim == 2 and input.shape[1] == 0) or (input.ndim == 1 and input.shape[0] == 0):
        raise RuntimeError(f"{op}: Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    require_float(input, op)
    return (input.unsqueeze(0), True) if input.ndim == 1 else (input, False)


@autocast("multi_margin_loss")
def multi_margin_loss(input, target, p: int = 1, margin: float = 1.0, weight=None, size_average=None, reduce=None,  # noqa: A002
                      reduction: str = "mean") -> Tensor:
    """``Σ_{i≠y} w[y]·max(0, margin - x[y] + x[i])^p / C`` per sample: ``(N, C)`` scores with ``(N,)``
    int64 targets (or ``(C,)`` with a 0-d target) → 0-d, or ``(N,)`` with ``reduction='none'``.

    Raises ValueError for ``p`` other than 1 or 2; RuntimeError (PyTorch's messages) for a target of
    the wrong size, a class outside ``[0, C)``, a ``weight`` that is not ``(C,)``.
    """
    reduction = resolve_reduction(size_average, reduce, reduction, "multi_margin_loss")
    check_tensors("multi_margin_loss", input=input, target=target)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x, unbatched = _scores("multi_margin_loss", input, target)
    N, C = x.shape
    if target.numel() != N or target.ndim > 1:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{N}], but got {list(target.shape)}. Input has "
                           f"shape {list(input.shape)}.")
    y = target.array.reshape(N).astype(np.int64)
    if y.size and (int(y.min()) < 0 or int(y.max()) >= C):
        raise RuntimeError(f"multi_margin_loss: target out of range: classes must lie in [0, {C}), got {y.tolist()}")
    if weight is not None and (not isinstance(weight, Tensor) or weight.ndim != 1 or weight.shape[0] != C):
        raise RuntimeError(f"inconsistent weight size, expected {C} but got {list(getattr(weight, 'shape', []))}")
    xp = get_array_module(x.array)
    yt = Tensor._from_op(xp.asarray(y.reshape(N, 1)))
    z = relu(margin - x.gather(1, yt) + x)  # (N, C): the hinge of every class against the target's
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.to(x.dtype).gather(0, yt.reshape(N)).reshape(N, 1)
    others = Tensor._from_op(xp.asarray(np.arange(C) != y.reshape(N, 1)))  # (N, C): i ≠ y
    loss = where(others, z, 0.0).sum(1) / C  # (N,)
    return reduce_loss(loss.squeeze(0) if unbatched else loss, reduction)


@autocast("multilabel_margin_loss")
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:  # noqa: A002
    """``Σ_j Σ_{i ∉ targets} max(0, 1 - (x[y_j] - x[i])) / C`` per sample, ``y_j`` the target classes up to
    the first ``-1``: ``(N, C)`` scores with ``(N, C)`` int64 targets (or ``(C,)`` and ``(C,)``) → 0-d, or
    ``(N,)`` with ``reduction='none'``.

    Raises RuntimeError (PyTorch's messages) for a target of another shape than the input or a class
    outside ``[-1, C)``.
    """
    reduction = resolve_reduction(size_average, reduce, reduction, "multilabel_margin_loss")
    check_tensors("multilabel_margin_loss", input=input, target=target)
    x, unbatched = _scores("multilabel_margin_loss", input, target)
    N, C = x.shape
    if tuple(target.shape) != tuple(input.shape):  # (a 0-d input takes a 0-d target)
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    y = np.asarray(target.detach().cpu().array).reshape(N, C).astype(np.int64)
    if y.size and (int(y.min()) < -1 or int(y.max()) >= C):
        raise RuntimeError(f"multilabel_margin_loss: target index out of range: classes must lie in [-1, {C}), got "
                           f"{y.tolist()}")
    valid = np.cumprod(y >= 0, axis=1).astype(bool)  # (N, C): the targets before the first -1
    is_target = np.zeros((N, C), dtype=bool)
    rows = np.broadcast_to(np.arange(N)[:, None], (N, C))
    is_target[rows[valid], y[valid]] = True
    xp = get_array_module(x.array)
    xy = x.gather(1, Tensor._from_op(xp.asarray(np.maximum(y, 0))))  # (N, J): the target scores
    hinge = relu(1 - xy.unsqueeze(2) + x.unsqueeze(1))  # (N, J, C)
    mask = Tensor._from_op(xp.asarray(valid[:, :, None] & ~is_target[:, None, :]))
    loss = where(mask, hinge, 0.0).sum((1, 2)) / C  # (N,)
    return reduce_loss(loss.squeeze(0) if unbatched else loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,  # noqa: A002
                                reduction: str = "mean") -> Tensor:
    """``-Σ_c w_c·(y_c·log σ(x_c) + (1 - y_c)·log σ(-x_c)) / C`` per sample: ``(N, C)`` scores and
    ``(N, C)`` 0/1 (or soft) targets → 0-d, or ``(N,)`` with ``reduction='none'`` (PyTorch's composed
    formula; ``log σ`` computed stably). Raises RuntimeError when the shapes do not broadcast."""
    reduction = resolve_reduction(size_average, reduce, reduction, "multilabel_soft_margin_loss")
    check_tensors("multilabel_soft_margin_loss", input=input, target=target)
    require_float(input, "multilabel_soft_margin_loss")
    loss = -(target * _LogSigmoid.apply(input) + (1 - target) * _LogSigmoid.apply(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.ndim - 1) / input.shape[-1] if input.ndim else loss
    return reduce_loss(loss, reduction)


@autocast("hinge_embedding_loss")
def hinge_embedding_loss(input, target, margin: float = 1.0, size_average=None, reduce=None,  # noqa: A002
                         reduction: str = "mean") -> Tensor:
    """``x`` where ``y = 1``, ``max(0, margin - x)`` where ``y = -1`` (ATen adds both terms for any
    other ``y``): ``(*)`` and ``(*)`` (broadcast) → 0-d, or ``(*)`` with ``reduction='none'``."""
    reduction = resolve_reduction(size_average, reduce, reduction, "hinge_embedding_loss")
    check_tensors("hinge_embedding_loss", input=input, target=target)
    require_float(input, "hinge_embedding_loss")
    zero = input * 0
    loss = where(target != 1, (margin - input).clamp(min=0), zero) + where(target != -1, input, zero)
    return reduce_loss(loss, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """``max(0, d(a, p) - d(a, n) + margin)`` with any ``distance_function`` (default
    :func:`pairwise_distance`): ``(N, D)`` ×3 (or ``(D,)`` ×3) → 0-d or ``(N,)``; ``swap`` uses
    ``min(d(a, n), d(p, n))``.

    Raises ValueError for ``margin <= 0`` or an unknown ``reduction``; RuntimeError when the three
    have different numbers of dims (PyTorch's messages).
    """
    reduction = resolve_reduction(None, None, reduction, "triplet_margin_with_distance_loss")
    check_tensors("triplet_margin_with_distance_loss", anchor=anchor, positive=positive, negative=negative)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but "
            f"got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative {negative.ndim}D inputs")
    dist = pairwise_distance if distance_function is None else distance_function
    d_pos, d_neg = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_neg = minimum(d_neg, dist(positive, negative))
    return reduce_loss((margin + d_pos - d_neg).clamp(min=0), reduction)

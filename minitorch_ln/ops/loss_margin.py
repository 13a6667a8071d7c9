"""Binary and margin losses: ``binary_cross_entropy``, ``binary_cross_entropy_with_logits``,
``soft_margin_loss``, ``cosine_embedding_loss``, ``margin_ranking_loss``, ``triplet_margin_loss``;
and ``one_hot`` for class targets.

``binary_cross_entropy_with_logits`` is one fused node. With ``l = 1 + (pos_weight - 1)·t`` and
``log σ(x) = min(x, 0) - log1p(e^{-|x|})`` (never overflows),

    loss = w·((1 - t)·x - l·log σ(x))
    dx   = w·(l·σ(x) - pos_weight·t)              (σ(x) - t without pos_weight)
    dt   = w·(-x - (pos_weight - 1)·log σ(x))     (-x without pos_weight)

``binary_cross_entropy`` is one node too, with PyTorch's clamps: each log at least -100 in the
forward, ``dx = w·(x - t)/max(x(1 - x), 1e-12)`` and ``dt = w·(log(1 - x) - log x)`` (unclamped,
so ±inf at 0 and 1, as PyTorch). The margin losses compose Tensor ops exactly as ATen does
(``aten/src/ATen/native/Loss.cpp``).
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..backend import get_array_module
from ..tensor import Tensor
from ._util import broadcast_shape, promote, require_float
from .autocast_policies import autocast
from .distance import pairwise_distance
from .loss_regression import check_tensors, reduce_loss, resolve_reduction
from .selection import minimum, where

__all__ = [
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cosine_embedding_loss", "margin_ranking_loss",
    "one_hot", "soft_margin_loss", "triplet_margin_loss"
]

_BCE_EPS = 1e-12  # PyTorch's EPSILON in binary_cross_entropy_backward


def _const_weight(w, input, name, op):  # noqa: A002
    """A ``weight``/``pos_weight`` that broadcasts to ``input``, as an array of its dtype (no gradient)."""
    if w is None:
        return None
    if not isinstance(w, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor or None, got {type(w).__name__}")
    if w.requires_grad and is_grad_enabled():
        raise RuntimeError(f"{op}: the function is not differentiable with respect to argument '{name}'. "
                           f"This input cannot have requires_grad True; pass {name}.detach()")
    if broadcast_shape(input.shape, w.shape, op) != input.shape:
        raise RuntimeError(f"{op}: {name} of shape {tuple(w.shape)} does not broadcast to the input's shape "
                           f"{tuple(input.shape)}")
    return w.array.astype(input.dtype, copy=False)


def _same_size(input, target, op):  # noqa: A002
    check_tensors(op, input=input, target=target)
    if target.shape != input.shape:
        raise ValueError(f"{op}: Target size {tuple(target.shape)} must be the same as input size "
                         f"{tuple(input.shape)}")
    require_float(input, op)
    return promote(input, target, op)


class BinaryCrossEntropy(Function):
    @staticmethod
    def forward(ctx, x, t, w):
        xp = get_array_module(x)
        ctx.save_for_backward(x, t)
        ctx.w = w
        with np.errstate(divide="ignore"):
            log_x = xp.maximum(xp.log(x), -100)  # (*) PyTorch's clamp: log 0 = -100, not -inf
            log_1mx = xp.maximum(xp.log1p(-x), -100)
        out = -(t * log_x + (1 - t) * log_1mx)
        return (out if w is None else out * w).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dy):
        x, t = ctx.saved_tensors
        g = dy if ctx.w is None else dy * Tensor._from_op(ctx.w)
        dx = g * (x - t) / (x * (1 - x)).clamp(min=_BCE_EPS) if ctx.needs_input_grad[0] else None
        dt = g * ((-x).log1p() - x.log()) if ctx.needs_input_grad[1] else None
        return dx, dt, None


@autocast("binary_cross_entropy")
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,  # noqa: A002
                         reduction: str = "mean") -> Tensor:
    """Binary cross entropy of probabilities ``input`` in [0, 1]: ``(*)``, ``(*)`` → 0-d or ``(*)``.

    ``-w·(t·log x + (1 - t)·log(1 - x))`` with each log clamped at -100 (PyTorch's choice: a finite
    loss at ``x ∈ {0, 1}``); ``weight`` broadcasts to the input and has no gradient. The target
    may require grad (``dt = w·(log(1 - x) - log x)``).

    Raises:
        ValueError: a target of another size (PyTorch's message), a bad ``reduction``.
        RuntimeError: an input entry outside [0, 1] or NaN (PyTorch's message); a ``weight`` that
        requires grad or does not broadcast. TypeError: non-Tensors or an integer input.
    """
    reduction = resolve_reduction(size_average, reduce, reduction, "binary_cross_entropy")
    x, t = _same_size(input, target, "binary_cross_entropy")
    w = _const_weight(weight, x, "weight", "binary_cross_entropy")
    a = x.array
    if not bool(((a >= 0) & (a <= 1)).all()):
        bad = a[~((a >= 0) & (a <= 1))]
        raise RuntimeError(f"binary_cross_entropy: all elements of input should be between 0 and 1, got "
                           f"{float(bad.reshape(-1)[0])}")
    return reduce_loss(BinaryCrossEntropy.apply(x, t, w), reduction)


class _LogSigmoid(Function):
    """``log σ(x) = min(x, 0) - log1p(e^{-|x|})``; ``d/dx = σ(-x)``."""

    @staticmethod
    def forward(ctx, x):
        xp = get_array_module(x)
        ctx.save_for_backward(x)
        return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return dy * (-x).sigmoid()


def _np_log_sigmoid(xp, x):
    return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))


class BinaryCrossEntropyWithLogits(Function):
    """See the module docstring for the formulas."""

    @staticmethod
    def forward(ctx, x, t, w, pw):
        xp = get_array_module(x)
        ctx.save_for_backward(x, t)
        ctx.w, ctx.pw = w, pw
        log_sig = _np_log_sigmoid(xp, x)  # (*)
        lw = 1 if pw is None else 1 + (pw - 1) * t
        out = (1 - t) * x - lw * log_sig
        return (out if w is None else out * w).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dy):
        x, t = ctx.saved_tensors
        g = dy if ctx.w is None else dy * Tensor._from_op(ctx.w)
        dx = dt = None
        if ctx.pw is None:
            dx = g * (x.sigmoid() - t) if ctx.needs_input_grad[0] else None
            dt = -g * x if ctx.needs_input_grad[1] else None
        else:
            pw = Tensor._from_op(ctx.pw)
            if ctx.needs_input_grad[0]:
                dx = g * ((1 + (pw - 1) * t) * x.sigmoid() - pw * t)
            if ctx.needs_input_grad[1]:
                dt = -g * (x + (pw - 1) * _LogSigmoid.apply(x))
        return dx, dt, None, None


@autocast("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,  # noqa: A002
                                     reduction: str = "mean", pos_weight=None) -> Tensor:
    """Sigmoid + binary cross entropy in one stable node: logits ``(*)``, target ``(*)`` → 0-d or ``(*)``.

    ``weight`` broadcasts to the input; ``pos_weight`` (per class, along the last dimension, e.g.
    ``(C,)`` for ``(N, C)``) weights the positive term. Neither has a gradient (as PyTorch); the
    target may require grad. Finite for any finite logit (``log σ`` never overflows).

    Raises:
        ValueError: a target of another size (PyTorch's message), a bad ``reduction``.
        RuntimeError: ``weight``/``pos_weight`` that require grad or do not broadcast.
        TypeError: non-Tensors or an integer input.
    """
    reduction = resolve_reduction(size_average, reduce, reduction, "binary_cross_entropy_with_logits")
    x, t = _same_size(input, target, "binary_cross_entropy_with_logits")
    w = _const_weight(weight, x, "weight", "binary_cross_entropy_with_logits")
    pw = _const_weight(pos_weight, x, "pos_weight", "binary_cross_entropy_with_logits")
    return reduce_loss(BinaryCrossEntropyWithLogits.apply(x, t, w, pw), reduction)


@autocast("soft_margin_loss")
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:  # noqa: A002
    """Two-class logistic loss ``log(1 + exp(-y·x))`` for ``y ∈ {1, -1}``: ``(*)``, ``(*)`` → 0-d or ``(*)``.

    The target has no gradient (as PyTorch: RuntimeError if it requires grad). Computed as ``-log σ(y·x)``, finite for any finite ``y·x`` (PyTorch's ``log1p(exp(-y·x))``
    overflows to inf beyond ``y·x ≈ -89`` in float32; the math decides).
    """
    reduction = resolve_reduction(size_average, reduce, reduction, "soft_margin_loss")
    check_tensors("soft_margin_loss", input=input, target=target)
    if target.requires_grad and is_grad_enabled():
        raise RuntimeError("soft_margin_loss: the function is not differentiable with respect to argument 'target'. "
                           "This input cannot have requires_grad True; pass target.detach()")
    x, t = promote(input, target, "soft_margin_loss")
    require_float(x, "soft_margin_loss")
    broadcast_shape(x.shape, t.shape, "soft_margin_loss")
    return reduce_loss(-_LogSigmoid.apply(x * t), reduction)


_COS_EPS = 1e-12  # ATen's EPSILON in cosine_embedding_loss


@autocast("cosine_embedding_loss")
def cosine_embedding_loss(input1, input2, target, margin: float = 0, size_average=None, reduce=None,
                          reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where ``y = 1``, ``max(0, cos(x1, x2) - margin)`` where ``y = -1`` (0 for other y).

    ``(N, D)``, ``(N, D)``, ``(N,)`` → 0-d or ``(N,)``; or unbatched ``(D,)``, ``(D,)``, ``()``.
    ``cos = Σ x1·x2 / sqrt((Σ x1² + 1e-12)(Σ x2² + 1e-12))`` (ATen's formula).

    Raises RuntimeError for a target of 2+ dims or inputs of the wrong rank (PyTorch's messages).
    """
    reduction = resolve_reduction(size_average, reduce, reduction, "cosine_embedding_loss")
    check_tensors("cosine_embedding_loss", input1=input1, input2=input2, target=target)
    if target.ndim not in (0, 1):
        raise RuntimeError(f"cosine_embedding_loss: 0D or 1D target tensor expected, multi-target not supported, "
                           f"got a {target.ndim}D target")
    want = target.ndim + 1
    if input1.ndim != want or input2.ndim != want:
        raise RuntimeError(f"cosine_embedding_loss: {target.ndim}D target tensor expects {want}D input tensors, but "
                           f"found inputs with sizes {list(input1.shape)} and {list(input2.shape)}.")
    x1, x2 = promote(input1, input2, "cosine_embedding_loss")
    require_float(x1, "cosine_embedding_loss")
    d = target.ndim
    prod = (x1 * x2).sum(d)  # (N,)
    mag1, mag2 = (x1 * x1).sum(d) + _COS_EPS, (x2 * x2).sum(d) + _COS_EPS
    cos = prod / (mag1 * mag2).sqrt()
    zero = cos * 0
    loss = where(target == 1, 1 - cos, zero) + where(target == -1, (cos - margin).clamp(min=0), zero)
    return reduce_loss(loss, reduction)


@autocast("margin_ranking_loss")
def margin_ranking_loss(input1, input2, target, margin: float = 0, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, -y·(x1 - x2) + margin)``: ``(N,)``/``()`` each (broadcast) → 0-d or ``(N,)``.

    Raises RuntimeError when the three inputs have different numbers of dims (PyTorch's message).
    """
    reduction = resolve_reduction(size_average, reduce, reduction, "margin_ranking_loss")
    check_tensors("margin_ranking_loss", input1=input1, input2=input2, target=target)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {tuple(input1.shape)}, input2: {tuple(input2.shape)}, target: {tuple(target.shape)}")
    x1, x2 = promote(input1, input2, "margin_ranking_loss")
    require_float(x1, "margin_ranking_loss")
    return reduce_loss((-target * (x1 - x2) + margin).clamp(min=0), reduction)


@autocast("triplet_margin_loss")
def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``max(0, d(a, p) - d(a, n) + margin)`` with ``d`` :func:`pairwise_distance` (Balntas et al., 2016).

    ``(N, D)`` ×3 → 0-d or ``(N,)`` (or ``(D,)`` ×3 → 0-d). ``swap`` uses ``min(d(a, n), d(p, n))``.

    Raises ValueError for ``margin <= 0``; RuntimeError when the three have different numbers of
    dims (PyTorch's message).
    """
    reduction = resolve_reduction(size_average, reduce, reduction, "triplet_margin_loss")
    check_tensors("triplet_margin_loss", anchor=anchor, positive=positive, negative=negative)
    if margin <= 0:
        raise ValueError(f"triplet_margin_loss: margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but "
            f"got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative {negative.ndim}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return reduce_loss((d_pos - d_neg + margin).clamp(min=0), reduction)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """``(*)`` int64 class indices → ``(*, num_classes)`` int64 with a 1 at each index.

    ``num_classes=-1`` uses ``max + 1``. No gradient.

    Raises RuntimeError (PyTorch's messages) for a non-int64 tensor, ``-1`` with an empty tensor,
    a negative class, or a class ``>= num_classes``.
    """
    check_tensors("one_hot", tensor=tensor)
    if tensor.dtype != np.int64:
        raise RuntimeError(f"one_hot is only applicable to index tensor of type LongTensor, got {tensor.dtype}.")
    a = tensor.array
    xp = get_array_module(a)
    if num_classes == -1:
        if a.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(a.max()) + 1
    if a.size and int(a.min()) < 0:
        raise RuntimeError(f"Class values must be non-negative, got {int(a.min())}.")
    if a.size and int(a.max()) >= num_classes:
        raise RuntimeError(f"Class values must be smaller than num_classes ({num_classes}), got {int(a.max())}.")
    out = (a[..., None] == xp.arange(num_classes)).astype(np.int64)  # (*, C)
    return Tensor._from_op(out)


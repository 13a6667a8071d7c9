"""The targets and weights of the classification losses (``cross_entropy``, ``nll_loss``: loss.py):
argument checks, the class axis moved last and back, and the per-row weights a target gives."""

from __future__ import annotations

import numpy as np

from .. import backend
from ..backend import get_array_module
from ..errors import ShapeError
from ..tensor import Tensor
from ._util import require_float

_REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(reduction, op):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{op}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")


def _class_last(x):
    """``(N, C, d1, ...)`` → ``(N, d1, ..., C)``; ``(C,)`` → ``(1, C)``."""
    xp = get_array_module(x)
    if x.ndim == 1:
        return x[None]
    return xp.moveaxis(x, 1, -1)


def _class_back(a, ndim):
    """Inverse of :func:`_class_last` for a Tensor or an array."""
    if ndim == 1:
        return a[0]
    order = (0, a.ndim - 1, *range(1, a.ndim - 1))
    return a.permute(*order) if isinstance(a, Tensor) else get_array_module(a).transpose(a, order)


def _check_scores(input, target, op):
    """Validate ``input`` ``(N, C, d1, ...)`` or ``(C,)`` and the target; say whether it holds probabilities."""
    if not isinstance(input, Tensor) or not isinstance(target, Tensor):
        raise TypeError(f"{op}: input and target must be Tensors, got {type(input).__name__} and {type(target).__name__}")
    require_float(input, op)
    if input.ndim == 0:
        raise ShapeError(f"{op}: input must have shape (C,), (N, C) or (N, C, d1, ...), got a 0-d tensor")
    probs = backend.is_floating(target.dtype)
    if probs:
        if target.shape != input.shape:
            raise ShapeError(
                f"{op}: class-probability targets must have the input's shape {tuple(input.shape)}, "
                f"got {tuple(target.shape)}"
            )
    elif target.dtype.kind not in "iu":
        raise TypeError(f"{op}: target must hold class indices (int64) or class probabilities (float), got {target.dtype}")
    else:
        want = input.shape[:1] + input.shape[2:] if input.ndim > 1 else ()
        if target.shape != want:
            raise ShapeError(
                f"{op}: for input of shape {tuple(input.shape)} the class-index target must have shape "
                f"{tuple(want)}, got {tuple(target.shape)}"
            )
    return probs


def _grad_scale(xp, scale):
    """The ``mean`` scale for gradients: 0 where ``1/Σw`` is inf (all targets ignored), so each row's
    gradient is its weight (0) times it, not 0·inf (as PyTorch: the loss is NaN, the gradient 0)."""
    return xp.where(xp.isfinite(scale), scale, 0).astype(scale.dtype, copy=False)


def _class_targets(xp, target, weight, n_classes, ignore_index, reduction, dtype):
    """Per-row pieces of a class-index loss, without any ``(N, C)`` array.

    Returns ``safe`` (targets with ignored ones set to 0), ``keep`` (not ignored), ``w`` ``(C,)``,
    ``wt = w[t]·keep`` (the target weight of each row) and ``scale`` (``1/Σ wt`` for ``mean``, else 1).

    Raises IndexError for a target outside ``[0, C)`` that is not ``ignore_index``.
    """
    t = target[None] if target.ndim == 0 else target  # (N, d...)
    w = xp.ones((n_classes,), dtype=dtype) if weight is None else weight.astype(dtype, copy=False)  # (C,)
    keep = t != ignore_index  # (N, d...)
    safe = xp.where(keep, t, 0)
    bad = xp.logical_and(keep, xp.logical_or(safe < 0, safe >= n_classes))
    if bool(bad.any()):
        raise IndexError(
            f"target {int(t[bad].reshape(-1)[0])} is out of bounds: expected a class index in "
            f"[0, {n_classes - 1}] or ignore_index={ignore_index}"
        )
    wt = w[safe] * keep  # (N, d...)
    scale = xp.asarray(1.0, dtype=dtype)
    if reduction == "mean":
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = (1.0 / wt.sum()).astype(dtype)  # all targets ignored: 0·inf = NaN, as PyTorch
    return safe, keep, w, wt.astype(dtype, copy=False), scale


def _loss_weights(xp, target, weight, n_classes, ignore_index, reduction, label_smoothing, dtype, probs):
    """Dense ``A`` ``(N, d..., C)`` with loss = ``-Σ_c A·logp`` (per row for ``none``, in total otherwise).

    Also returns the class weights ``(C,)`` with the ``mean`` scale applied, for the gradient with
    respect to probability targets. Used for probability targets, ``nll_loss`` and double backward.
    """
    eps = label_smoothing
    if probs:
        t = _class_last(target)  # (N, d..., C)
        w = xp.ones((n_classes,), dtype=dtype) if weight is None else weight.astype(dtype, copy=False)  # (C,)
        a = (t * (1.0 - eps) + eps / n_classes) * w  # (N, d..., C)
        scale = xp.asarray(1.0 / (t.size // n_classes) if reduction == "mean" and t.size else
                           (float("nan") if reduction == "mean" else 1.0), dtype=dtype)
    else:
        safe, keep, w, _, scale = _class_targets(xp, target, weight, n_classes, ignore_index, reduction, dtype)
        scale = _grad_scale(xp, scale)  # NLLLoss.forward makes the NaN of an all-ignored mean itself
        onehot = (safe[..., None] == xp.arange(n_classes)).astype(dtype)  # (N, d..., C)
        a = ((1.0 - eps) * onehot * w + (eps / n_classes) * w) * keep[..., None].astype(dtype)
    with np.errstate(invalid="ignore"):  # all targets ignored: 0·inf = NaN in the loss, as PyTorch
        return (a * scale).astype(dtype, copy=False), (w * scale).astype(dtype, copy=False)

"""Losses: ``cross_entropy``, ``nll_loss``, ``mse_loss``.

``cross_entropy`` is one fused node. With ``A[i, c]`` the weight each log-probability carries in
the loss (one-hot target times class weight, label smoothing, the ``1/N`` of ``mean``), the loss is
``-Σ_c A[i, c] logp[i, c]`` and, since ``∂logp[i, c]/∂x[i, k] = [c = k] - p[i, k]``,

    dx[i, k] = dloss[i] · (p[i, k] · Σ_c A[i, c] - A[i, k])      (p = softmax(x))

which for a one-hot target is the familiar ``p - onehot``.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..autograd.composed import double_backward
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..backend import get_array_module
from ..errors import DtypeError, ShapeError, warn_at_caller
from ..tensor import Tensor
from .autocast_policies import autocast
from .loss_targets import (
    _check_reduction, _check_scores, _class_back, _class_last, _class_targets, _grad_scale, _loss_weights,
)
from .softmax import _fused_rows, _shifted, log_softmax, softmax

__all__ = ["cross_entropy", "mse_loss", "nll_loss"]


class CrossEntropy(Function):
    """Fused ``log_softmax`` + weighted negative log likelihood (one graph node).

    Its node prints as PyTorch's loss does, ``NllLossBackward0``: PyTorch records ``cross_entropy`` as
    ``log_softmax`` then ``nll_loss``, and scripts print the last node (``torch_name``).

    For class-index targets no ``(N, C)`` array besides ``p = softmax(x)`` is kept: with
    ``wt = w[t]`` (0 for ignored rows), ``s`` the ``mean`` scale and ε the smoothing,

        loss_i   = -s [(1-ε) wt_i logp[i, t_i] + (ε/C) keep_i Σ_c w_c logp[i, c]]
        dx[i, :] = dy_i s [p[i, :] ((1-ε) wt_i + (ε/C) keep_i Σ_c w_c) - (ε/C) keep_i w] - dy_i s (1-ε) wt_i [c = t_i]
    """

    torch_name = "NllLoss"

    @staticmethod
    def forward(ctx, x, target, weight, ignore_index, reduction, label_smoothing, probs):
        xp = get_array_module(x)
        n_classes = x.shape[0 if x.ndim == 1 else 1]
        eps = label_smoothing
        if not probs and x.ndim == 2 and weight is None and _fused_rows(x, 1) is not None:
            return _cross_entropy_fused(ctx, xp, x, target, ignore_index, reduction, eps)
        z, e, s = _shifted(_class_last(x), -1)
        logp = z - xp.log(s)  # (N, d..., C)
        ctx.save_for_backward(x, target)
        ctx.p, ctx.ndim, ctx.reduction, ctx.eps, ctx.probs = e / s, x.ndim, reduction, eps, probs
        ctx.n_classes, ctx.args = n_classes, (weight, ignore_index, label_smoothing)
        if probs:
            a, ctx.w_scaled = _loss_weights(xp, target, weight, n_classes, ignore_index, reduction, eps, x.dtype, True)
            ctx.a, ctx.logp = a, logp
            # where a = 0 (zero weights) mask logp, so a -inf logit cannot give 0·(-inf) = NaN
            rows = -(a * xp.where(a != 0, logp, 0)).sum(-1)  # (N, d...)
            return _reduce_rows(xp, rows, reduction, x)
        safe, keep, w, wt, scale = _class_targets(xp, target, weight, n_classes, ignore_index, reduction, x.dtype)
        logp_t = xp.take_along_axis(logp, safe[..., None], -1)[..., 0]  # (N, d...)
        rows = (1.0 - eps) * wt * xp.where(keep, logp_t, 0)
        if eps:
            rows = rows + (eps / n_classes) * xp.where(keep, (logp * w).sum(-1), 0)
        ctx.safe, ctx.keep, ctx.w, ctx.wt, ctx.scale = safe, keep, w, wt, scale
        with np.errstate(invalid="ignore"):  # all targets ignored: 0·inf = NaN, as PyTorch
            return _reduce_rows(xp, -rows * scale, reduction, x)

    @staticmethod
    def backward(ctx, dy):
        x, target = ctx.saved_tensors
        grads = CrossEntropyBackward.apply(dy, x, target, ctx)
        grads = grads if isinstance(grads, tuple) else (grads,)
        dx = grads[0] if ctx.needs_input_grad[0] else None
        dtarget = grads[1] if ctx.probs and ctx.needs_input_grad[1] else None
        return dx, dtarget, None, None, None, None, None


def _dense_weights(fwd, x: Tensor, target: Tensor) -> Tensor:
    """``A`` ``(N, d..., C)``: the weight of each log-probability in the loss, as a Tensor (from the
    target with its history for probability targets)."""
    if fwd.probs:
        return (_class_last_tensor(target) * (1.0 - fwd.eps) + fwd.eps / fwd.n_classes) * Tensor._from_op(fwd.w_scaled)
    xp = get_array_module(x.array)
    weight, ignore_index, eps = fwd.args
    return Tensor._from_op(_loss_weights(xp, target.array, weight, fwd.n_classes, ignore_index, fwd.reduction, eps,
                                         x.dtype, False)[0])


def _cross_entropy_backward_composed(fwd, dy: Tensor, x: Tensor, target: Tensor) -> tuple:
    """``dx`` (and ``dtarget`` for probability targets) of :class:`CrossEntropy` in Tensor ops, ``p``
    rebuilt from ``x``: what :class:`CrossEntropyBackward`'s own backward differentiates."""
    a = _dense_weights(fwd, x, target)                                       # (N, d..., C)
    if fwd.reduction == "none":
        dy = dy.reshape(*a.shape[:-1], 1)                                    # (N, d..., 1)
    p = softmax(_class_last_tensor(x), -1)                                   # (N, d..., C)
    dx = _class_back(dy * (p * a.sum(-1, keepdim=True) - a), fwd.ndim)
    if not fwd.probs:
        return (dx,)
    # loss = -Σ (t(1-ε) + ε/C) w logp / denom  ⇒  ∂loss/∂t = -(1-ε) w logp / denom
    logp = log_softmax(_class_last_tensor(x), -1)
    return dx, _class_back(dy * logp * Tensor._from_op(-(1.0 - fwd.eps) * fwd.w_scaled), fwd.ndim)


class CrossEntropyBackward(Function):
    """``(dy, x, target) -> dx`` (and ``dtarget`` for probability targets) of :class:`CrossEntropy`,
    on the arrays the forward kept (``fwd``, its ctx); its own backward differentiates
    :func:`_cross_entropy_backward_composed`."""

    @staticmethod
    def forward(ctx, dy, x, target, fwd):
        ctx.fwd = fwd
        ctx.save_for_backward(dy, x, target)
        if getattr(fwd, "lse", None) is not None:  # the GPU's fused forward: one kernel
            return _cross_entropy_fused_backward(fwd, dy, x, target)
        if not fwd.probs:
            return _class_index_dx(fwd, dy)
        xp = get_array_module(x)
        a = fwd.a                                                            # (N, d..., C)
        if fwd.reduction == "none":
            dy = dy.reshape(*a.shape[:-1], 1)                                # (N, d..., 1)
        dx = _class_back(dy * (fwd.p * a.sum(-1, keepdims=True) - a), fwd.ndim)
        dtarget = _class_back(dy * fwd.logp * (-(1.0 - fwd.eps) * fwd.w_scaled), fwd.ndim)
        return xp.ascontiguousarray(dx), xp.ascontiguousarray(dtarget)

    @staticmethod
    def backward(ctx, *cotangents):
        dy, x, target = ctx.saved_tensors
        fwd = ctx.fwd
        if fwd.probs:
            grads = double_backward(lambda dy_, x_, t_: _cross_entropy_backward_composed(fwd, dy_, x_, t_),
                                    (dy, x, target), cotangents)
        else:  # class indices: a constant of the composed backward
            ddy, dx = double_backward(lambda dy_, x_: _cross_entropy_backward_composed(fwd, dy_, x_, target),
                                      (dy, x), cotangents)
            grads = (ddy, dx, None)
        return (*grads, None)


def _class_index_dx(ctx, dy):
    """First-order ``dx`` for class-index targets on arrays: ``p`` scaled per row, minus the target terms."""
    xp = get_array_module(dy)
    eps, n_classes = ctx.eps, ctx.n_classes
    coef = dy * _grad_scale(xp, ctx.scale)  # () or (N, d...)
    if ctx.reduction != "none" or ctx.ndim == 1:
        coef = xp.broadcast_to(coef, ctx.wt.shape)
    keep = ctx.keep.astype(ctx.p.dtype)  # (N, d...)
    rowsum = (1.0 - eps) * ctx.wt + (eps / n_classes) * keep * ctx.w.sum()  # (N, d...) = Σ_c A[i, c] / s
    dx = ctx.p * (coef * rowsum)[..., None]  # (N, d..., C)
    if eps:
        dx -= (coef * keep)[..., None] * ((eps / n_classes) * ctx.w)
    dx = xp.ascontiguousarray(dx)
    flat = dx.reshape(-1, n_classes)  # (M, C), a view: each row has one target, so no index repeats
    flat[xp.arange(flat.shape[0]), ctx.safe.reshape(-1)] -= (coef * ((1.0 - eps) * ctx.wt)).reshape(-1)
    return _class_back(dx, ctx.ndim).astype(ctx.p.dtype, copy=False)


def _cross_entropy_fused(ctx, xp, x, target, ignore_index, reduction, eps):
    """CrossEntropy.forward for CuPy logits ``(N, C)`` without class weights: one kernel for the rows.

    ``kernels/cuda_softmax.py`` reads the logits once and keeps only each row's log-sum-exp for
    backward (no ``(N, C)`` array). The create_graph backward takes the dense path as usual.
    """
    from ..kernels import cuda_softmax  # noqa: PLC0415 - only reached with CuPy arrays

    n_classes = x.shape[1]
    _, _, _, _, scale = _class_targets(xp, target, None, n_classes, ignore_index, reduction, x.dtype)  # checks targets
    rows, lse = cuda_softmax.cross_entropy_fwd(x, target, ignore_index, eps)  # (N,), (N,)
    ctx.save_for_backward(x, target)
    ctx.lse, ctx.scale, ctx.p, ctx.ndim, ctx.reduction, ctx.eps, ctx.probs = lse, scale, None, 2, reduction, eps, False
    ctx.n_classes, ctx.args = n_classes, (None, ignore_index, eps)
    return _reduce_rows(xp, rows * scale, reduction, x)


def _cross_entropy_fused_backward(ctx, dy, x, target):
    """``dx`` ``(N, C)`` from one kernel: ``dloss · (softmax(x) - (1-ε)·onehot - ε/C)``, 0 on ignored rows."""
    from ..kernels import cuda_softmax  # noqa: PLC0415

    coef = (dy * _grad_scale(get_array_module(dy), ctx.scale)).astype(ctx.lse.dtype)  # (N,) for "none", () for "mean"/"sum"
    _, ignore_index, eps = ctx.args
    return cuda_softmax.cross_entropy_bwd(coef, x, target, ctx.lse, ignore_index, eps)


def _reduce_rows(xp, rows, reduction, x):
    """``rows`` (already scaled by the ``mean`` factor) summed, or as they are for ``none``.

    A ``mean`` over no rows (an empty batch) is 0/0 = NaN, as PyTorch; so is a mean whose target
    weights sum to 0 (all targets ignored), which the scale ``1/Σw = inf`` already gives.
    """
    out = rows if reduction == "none" else rows.sum()
    if reduction == "mean" and rows.size == 0:
        out = np.nan
    if reduction == "none" and x.ndim == 1:
        out = out[0]
    return xp.asarray(out, dtype=x.dtype)


def _class_last_tensor(x: Tensor) -> Tensor:
    if x.ndim == 1:
        return x.unsqueeze(0)
    return x.permute(0, *range(2, x.ndim), 1)


def _check_weight(weight, n_classes, input, op):
    if weight is None:
        return None
    if not isinstance(weight, Tensor) or weight.shape != (n_classes,):
        got = tuple(weight.shape) if isinstance(weight, Tensor) else type(weight).__name__
        raise ShapeError(f"{op}: weight must be a Tensor of shape ({n_classes},), one per class, got {got}")
    if weight.requires_grad and is_grad_enabled():
        raise NotImplementedError(f"{op}: gradients with respect to weight are not supported; pass weight.detach()")
    return weight.array.astype(input.dtype, copy=False)


@autocast("cross_entropy")
def cross_entropy(input, target, weight=None, size_average=None, ignore_index: int = -100, reduce=None,  # noqa: A002
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy between logits and targets, as ``torch.nn.functional.cross_entropy``.

    Args:
        input: logits ``(N, C)``, ``(N, C, d1, ...)`` or unbatched ``(C,)``; float.
        target: class indices ``(N,)``/``(N, d1, ...)``/``()`` (int64), or class probabilities of
            ``input``'s shape (float).
        weight: ``(C,)`` per-class weights (no gradient) or None.
        ignore_index: targets equal to it contribute nothing (class-index targets only).
        reduction: ``"mean"`` (divided by the summed weights of the non-ignored targets; by the
            number of rows for probability targets), ``"sum"`` or ``"none"`` (per-row, target's shape).
        label_smoothing: ε in [0, 1]; the target becomes ``(1-ε)·onehot + ε/C`` (PyTorch's formula,
            Szegedy et al. 2016).

    ``size_average`` and ``reduce`` are PyTorch's deprecated arguments, accepted only as None.

    Returns:
        a 0-d tensor, or ``(N, d1, ...)`` for ``reduction="none"``; ``input``'s dtype. One graph node,
        with ``dx = dloss · (softmax(x)·ΣA - A)`` (see the module docstring).

    Raises:
        TypeError: integer logits, or a target that is neither integer nor float.
        ShapeError (a RuntimeError and a ValueError): shapes that do not fit (naming both), a ``weight``
            not of shape ``(C,)``. ValueError: a bad ``reduction``/``label_smoothing``.
        IndexError: a target class outside ``[0, C)`` that is not ``ignore_index``.
    """
    if size_average is not None or reduce is not None:
        raise ValueError("cross_entropy: size_average and reduce are deprecated; use reduction=")
    _check_reduction(reduction, "cross_entropy")
    if not isinstance(label_smoothing, numbers.Real) or not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing!r}")
    probs = _check_scores(input, target, "cross_entropy")
    if probs and target.dtype != input.dtype:
        target = target.to(input.dtype)
    n_classes = input.shape[0 if input.ndim == 1 else 1]
    w = _check_weight(weight, n_classes, input, "cross_entropy")
    return CrossEntropy.apply(input, target, w, int(ignore_index), reduction, float(label_smoothing), probs)


class NLLLoss(Function):
    """``-Σ A·input`` with ``A`` the weighted one-hot target (scaled for ``mean``): linear in ``input``."""

    @staticmethod
    def forward(ctx, x, target, weight, ignore_index, reduction):
        xp = get_array_module(x)
        a, _ = _loss_weights(xp, target, weight, x.shape[0 if x.ndim == 1 else 1], ignore_index, reduction, 0.0,
                             x.dtype, False)
        rows = -(a * xp.where(a != 0, _class_last(x), 0)).sum(-1)  # (N, d...)
        ctx.a, ctx.ndim, ctx.reduction = a, x.ndim, reduction
        out = _reduce_rows(xp, rows, reduction, x)
        if reduction == "mean" and not bool(a.sum() != 0):  # Σ w[t] = 0 (all ignored): 0/0 = NaN, as PyTorch
            out = xp.asarray(np.nan, dtype=x.dtype)
        return out

    @staticmethod
    def backward(ctx, dy):
        a = Tensor._from_op(ctx.a)  # (N, d..., C)
        if ctx.reduction == "none":
            dy = dy.reshape(*a.shape[:-1], 1)
        return _class_back(-(dy * a), ctx.ndim), None, None, None, None


@autocast("nll_loss")
def nll_loss(input, target, weight=None, size_average=None, ignore_index: int = -100, reduce=None,  # noqa: A002
             reduction: str = "mean") -> Tensor:
    """Negative log likelihood of log-probabilities ``input`` ``(N, C)``/``(N, C, d1, ...)``/``(C,)`` at class-index ``target``.

    ``loss[i] = -weight[t_i] · input[i, t_i]``; ``mean`` divides by the summed weights of the
    non-ignored targets (as PyTorch). Raises as :func:`cross_entropy`; probability targets are
    not accepted (TypeError).
    """
    if size_average is not None or reduce is not None:
        raise ValueError("nll_loss: size_average and reduce are deprecated; use reduction=")
    _check_reduction(reduction, "nll_loss")
    if _check_scores(input, target, "nll_loss"):
        raise TypeError(f"nll_loss: target must hold class indices (int64), got {target.dtype}")
    w = _check_weight(weight, input.shape[0 if input.ndim == 1 else 1], input, "nll_loss")
    return NLLLoss.apply(input, target, w, int(ignore_index), reduction)


@autocast("mse_loss")
def mse_loss(input, target, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:  # noqa: A002
    """Mean squared error ``(input - target)²``, reduced by ``mean``, ``sum`` or not (``none``).

    ``input`` and ``target`` broadcast together (PyTorch warns when their shapes differ; so do we).
    ``mean`` of an empty input is NaN (0/0, as PyTorch); ``sum`` is 0. Squares that overflow give inf
    (the true value does not fit either) without NumPy's warnings.

    Raises ShapeError (a RuntimeError and a ValueError) for shapes that do not broadcast (naming
    both), ValueError for a bad ``reduction``, DtypeError for complex tensors (as PyTorch).
    """
    if size_average is not None or reduce is not None:
        raise ValueError("mse_loss: size_average and reduce are deprecated; use reduction=")
    _check_reduction(reduction, "mse_loss")
    if any(isinstance(t, Tensor) and t.dtype.kind == "c" for t in (input, target)):  # (x - t)² would be complex
        raise DtypeError(f"mse_loss: not implemented for complex tensors (got {input.dtype}; PyTorch's refuses too)")
    if isinstance(input, Tensor) and isinstance(target, Tensor) and input.shape != target.shape:
        warn_at_caller(
            f"mse_loss: target shape {tuple(target.shape)} differs from input shape {tuple(input.shape)}; "
            "they will be broadcast, which is rarely intended")
    with np.errstate(over="ignore"):
        diff = input - target
        sq = diff * diff
        if reduction == "none":
            return sq
        return sq.mean() if reduction == "mean" else sq.sum()

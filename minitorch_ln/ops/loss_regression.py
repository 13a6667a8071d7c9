"""Regression and divergence losses: ``l1_loss``, ``smooth_l1_loss``, ``huber_loss``, ``kl_div``,
``poisson_nll_loss``, ``gaussian_nll_loss``; and the helpers every loss shares (``reduction``, the
deprecated ``size_average``/``reduce``, the target-size warning).

The Huber family is one fused node. With ``d = input - target`` and ``δ`` the threshold,

    huber(d)     = ½ d²            if |d| < δ,   δ (|d| - ½ δ)  otherwise
    d huber / dd = clamp(d, -δ, δ)

and ``smooth_l1(d; β) = huber(d; δ=β) / β`` (PyTorch's two definitions), so both are ``Huber`` with a
scale. ``clamp`` passes its gradient at ``|d| = δ``, so the second derivative there is 1 (PyTorch's
``huber_loss_double_backward`` takes the same branch). The rest are compositions of Tensor ops that
follow PyTorch's own composite formulas (``torch/nn/functional.py``, ``aten/.../Loss.cpp``).
"""

from __future__ import annotations

import math
import numbers

from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import warn_at_caller
from ..tensor import Tensor
from ._util import broadcast_shape, promote, require_float
from .autocast_policies import autocast
from .selection import clamp, where
from .shape import unbroadcast, unsqueeze

__all__ = ["gaussian_nll_loss", "huber_loss", "kl_div", "l1_loss", "poisson_nll_loss", "smooth_l1_loss"]

_REDUCTIONS = ("none", "mean", "sum")


# ==================================================================================================
# Shared helpers (also used by ops/loss_margin.py, ops/distance.py and nn/loss.py)
# ==================================================================================================


def legacy_reduction(size_average, reduce) -> str:
    """PyTorch's ``_Reduction.legacy_get_string``: the deprecated pair as a ``reduction`` string.

    None counts as True; ``reduce=False`` gives ``'none'``, else ``size_average`` picks ``'mean'``
    or ``'sum'``. Warns (UserWarning) with PyTorch's message, as PyTorch does.
    """
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else ("sum" if reduce else "none")
    warn_at_caller(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.")
    return ret


def resolve_reduction(size_average, reduce, reduction, op: str, extra=()) -> str:
    """``reduction``, overridden by the deprecated arguments when either is given; ValueError if unknown."""
    if size_average is not None or reduce is not None:
        return legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS + tuple(extra):
        raise ValueError(f"{op}: {reduction!r} is not a valid value for reduction; expected one of "
                         f"{_REDUCTIONS + tuple(extra)}")
    return reduction


def reduce_loss(loss: Tensor, reduction: str) -> Tensor:
    """``none``: as is; ``mean``: the mean (NaN for an empty loss, as PyTorch); ``sum``: the sum."""
    if reduction == "none":
        return loss
    return loss.mean() if reduction == "mean" else loss.sum()


def check_tensors(op: str, **tensors) -> None:
    for name, t in tensors.items():
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")


def warn_size(input: Tensor, target: Tensor, op: str) -> None:  # noqa: A002
    """PyTorch's warning for a target whose size differs from the input's (then they broadcast)."""
    if input.shape != target.shape:
        warn_at_caller(
            f"{op}: Using a target size {tuple(target.shape)} that is different to the input size "
            f"{tuple(input.shape)}. This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.")


def _pair(input, target, op, complex_ok=False):  # noqa: A002
    """Validated, promoted ``(input, target)`` of an elementwise regression loss (broadcast shapes checked);
    complex ones where ``complex_ok`` (``l1_loss``: ``|input - target|`` is real, as PyTorch's)."""
    check_tensors(op, input=input, target=target)
    warn_size(input, target, op)
    x, t = promote(input, target, op)
    if not (complex_ok and x.dtype.kind == "c"):
        require_float(x, op)
    broadcast_shape(x.shape, t.shape, op)
    return x, t


def _weighted(loss, weight, input, reduction, op, mean_by_weight):  # noqa: A002
    """PyTorch 2.13's elementwise ``weight=`` of ``l1_loss``/``huber_loss`` (same size as ``input``)."""
    if not isinstance(weight, Tensor) or weight.shape != input.shape:
        got = tuple(weight.shape) if isinstance(weight, Tensor) else type(weight).__name__
        raise ValueError(f"{op}: Weights and input must have the same size: input {tuple(input.shape)}, weight {got}")
    loss = loss * weight
    if reduction == "mean" and mean_by_weight:
        return loss.sum() / weight.sum()
    return reduce_loss(loss, reduction)


# ==================================================================================================
# l1_loss, smooth_l1_loss, huber_loss
# ==================================================================================================


@autocast("l1_loss")
def l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean",  # noqa: A002
            weight=None) -> Tensor:
    """Mean absolute error ``|input - target|``: ``(*)``, ``(*)`` (broadcast, with PyTorch's warning) → 0-d or ``(*)``.

    ``weight`` (PyTorch 2.13): elementwise, input's shape; ``mean`` is then ``Σ w·|d| / Σ w``.
    The gradient at ``input = target`` is 0 (``sign(0)``, as PyTorch).

    Raises:
        TypeError: non-Tensors or integer inputs. ValueError: bad ``reduction`` or ``weight`` size.
        RuntimeError (ShapeError): shapes that do not broadcast.
    """
    reduction = resolve_reduction(size_average, reduce, reduction, "l1_loss")
    x, t = _pair(input, target, "l1_loss", complex_ok=True)
    loss = (x - t).abs()
    if weight is not None:
        return _weighted(loss, weight, input, reduction, "l1_loss", mean_by_weight=True)
    return reduce_loss(loss, reduction)


class Huber(Function):
    """``scale·huber(input - target; delta)`` elementwise, broadcast; see the module docstring."""

    @staticmethod
    def forward(ctx, x, t, delta, scale):
        xp = get_array_module(x)
        ctx.save_for_backward(x, t)
        ctx.delta, ctx.scale = delta, scale
        d = x - t  # (*) broadcast
        a = xp.abs(d)
        out = xp.where(a < delta, 0.5 * d * d, delta * (a - 0.5 * delta))
        return (out * scale).astype(d.dtype, copy=False)

    @staticmethod
    def backward(ctx, dy):
        x, t = ctx.saved_tensors
        dd = dy * clamp(x - t, -ctx.delta, ctx.delta) * ctx.scale  # (*) broadcast
        dx = unbroadcast(dd, x.shape) if ctx.needs_input_grad[0] else None
        dt = unbroadcast(-dd, t.shape) if ctx.needs_input_grad[1] else None
        return dx, dt, None, None


def _number(v, name, op):
    if not isinstance(v, numbers.Real) or isinstance(v, bool):
        raise TypeError(f"{op}: {name} must be a number, got {type(v).__name__}")
    return float(v)


@autocast("smooth_l1_loss")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean",  # noqa: A002
                   beta: float = 1.0) -> Tensor:
    """Smooth L1 (Girshick, 2015): ``½ d²/β`` for ``|d| < β``, else ``|d| - ½β``; ``d = input - target``.

    ``(*)``, ``(*)`` (broadcast, warned) → 0-d or ``(*)``. ``dx = clamp(d, -β, β)/β``; ``beta = 0``
    is ``l1_loss`` (as PyTorch). Raises RuntimeError for ``beta < 0`` (PyTorch's message), and as
    :func:`l1_loss`.
    """
    reduction = resolve_reduction(size_average, reduce, reduction, "smooth_l1_loss")
    beta = _number(beta, "beta", "smooth_l1_loss")
    if beta < 0:
        raise RuntimeError(f"smooth_l1_loss does not support negative values for beta, got beta={beta}.")
    x, t = _pair(input, target, "smooth_l1_loss")
    if beta == 0.0:
        return reduce_loss((x - t).abs(), reduction)
    return reduce_loss(Huber.apply(x, t, beta, 1.0 / beta), reduction)


@autocast("huber_loss")
def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0, weight=None) -> Tensor:  # noqa: A002
    """Huber loss (Huber, 1964): ``½ d²`` for ``|d| < δ``, else ``δ(|d| - ½δ)``; ``d = input - target``.

    ``(*)``, ``(*)`` (broadcast, warned) → 0-d or ``(*)``. ``dx = clamp(d, -δ, δ)``. ``weight``
    (PyTorch 2.13): elementwise, input's shape; ``mean`` is then the plain mean of ``w·huber``.
    Raises RuntimeError for ``delta <= 0`` (PyTorch's message), and as :func:`l1_loss`.
    """
    reduction = resolve_reduction(None, None, reduction, "huber_loss")
    delta = _number(delta, "delta", "huber_loss")
    if not delta > 0:
        raise RuntimeError(f"huber_loss does not support non-positive values for delta, got delta={delta}.")
    x, t = _pair(input, target, "huber_loss")
    loss = Huber.apply(x, t, delta, 1.0)
    if weight is not None:
        return _weighted(loss, weight, input, reduction, "huber_loss", mean_by_weight=False)
    return reduce_loss(loss, reduction)


# ==================================================================================================
# kl_div, poisson_nll_loss, gaussian_nll_loss
# ==================================================================================================


@autocast("kl_div")
def kl_div(input, target, size_average=None, reduce=None, reduction: str = "mean",  # noqa: A002
           log_target: bool = False) -> Tensor:
    """Kullback-Leibler divergence with ``input`` the log-probabilities: ``(*)``, ``(*)`` (broadcast) → 0-d or ``(*)``.

    Pointwise ``target·(log target - input)`` (``xlogy``, so 0 where ``target = 0``; NaN for a
    negative target, as PyTorch), or ``exp(target)·(target - input)`` with ``log_target=True``.
    ``reduction='batchmean'`` is the sum divided by ``input.size(0)`` (the true KL divergence for
    rows of distributions); ``'mean'`` divides by every element and warns, as PyTorch.
    The gradient with respect to ``target`` is ``log target + 1 - input`` (``exp(target)·(target
    - input + 1)``); at ``target = 0`` it is NaN, as PyTorch's.

    Raises ValueError for a bad ``reduction``; TypeError for non-Tensors or an integer input.
    """
    check_tensors("kl_div", input=input, target=target)
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    else:
        reduction = resolve_reduction(None, None, reduction, "kl_div", extra=("batchmean",))
        if reduction == "mean":
            warn_at_caller(
                "reduction: 'mean' divides the total loss by both the batch size and the support size."
                "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                "'mean' will be changed to behave the same as 'batchmean' in the next major release.")
    x, t = promote(input, target, "kl_div")
    require_float(x, "kl_div")
    broadcast_shape(x.shape, t.shape, "kl_div")
    loss = t.exp() * (t - x) if log_target else t.xlogy(t) - t * x
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.ndim != 0 else total
    return reduce_loss(loss, reduction)


@autocast("poisson_nll_loss")
def poisson_nll_loss(input, target, log_input: bool = True, full: bool = False, size_average=None,  # noqa: A002
                     eps: float = 1e-8, reduce=None, reduction: str = "mean") -> Tensor:
    """Poisson negative log likelihood: ``exp(input) - target·input`` (``log_input=True``) or
    ``input - target·log(input + eps)``; ``(*)``, ``(*)`` → 0-d or ``(*)``.

    ``full=True`` adds Stirling's ``target·log target - target + ½ log(2π target)`` where
    ``target > 1`` (0 elsewhere, as PyTorch; computed on a clamped target there, so its gradient
    is 0 rather than PyTorch's ``0·log 0 = NaN`` at ``target = 0``).
    """
    reduction = resolve_reduction(size_average, reduce, reduction, "poisson_nll_loss")
    check_tensors("poisson_nll_loss", input=input, target=target)
    x, t = promote(input, target, "poisson_nll_loss")
    require_float(x, "poisson_nll_loss")
    broadcast_shape(x.shape, t.shape, "poisson_nll_loss")
    loss = x.exp() - t * x if log_input else x - t * (x + eps).log()
    if full:
        big = t > 1
        ts = where(big, t, 2.0)  # any value > 1: the masked entries' gradient is then exactly 0
        stirling = ts * ts.log() - ts + 0.5 * (ts * (2 * math.pi)).log()
        loss = loss + stirling.masked_fill(~big, 0.0)
    return reduce_loss(loss, reduction)


class _ClampMinStraightThrough(Function):
    """``max(x, lo)`` whose gradient is the identity: PyTorch clamps these values in place under
    ``no_grad`` (``gaussian_nll_loss``'s variance, ``cosine_similarity``'s norms), which hides the
    clamp from autograd."""

    @staticmethod
    def forward(ctx, x, lo):
        return get_array_module(x).maximum(x, x.dtype.type(lo))

    @staticmethod
    def backward(ctx, dy):
        return dy, None


def clamp_min_straight_through(x: Tensor, lo: float) -> Tensor:
    return _ClampMinStraightThrough.apply(x, float(lo))


def gaussian_nll_loss(input, target, var, full: bool = False, eps: float = 1e-6,  # noqa: A002
                      reduction: str = "mean") -> Tensor:
    """Gaussian negative log likelihood ``½(log var + (input - target)²/var)`` (+ ``½ log 2π`` if ``full``).

    Shapes: ``input`` ``(N, *)`` or ``(*)``; ``target`` the same; ``var`` the same, or one
    dimension short / size 1 in exactly one dimension (homoscedastic), or a float. ``var`` is
    clamped to ``eps`` with the gradient of the unclamped value (as PyTorch, which clamps under
    ``no_grad``).

    Raises ValueError for a negative ``var`` entry, a ``var`` of incorrect size, or a bad ``reduction``.
    """
    reduction = resolve_reduction(None, None, reduction, "gaussian_nll_loss")
    check_tensors("gaussian_nll_loss", input=input, target=target)
    if isinstance(var, numbers.Real) and not isinstance(var, bool):
        if var < 0:
            raise ValueError(f"gaussian_nll_loss: var has negative entry/entries, got {var}")
        var = Tensor._from_op(get_array_module(input.array).full(input.shape, float(var), dtype=input.dtype))
    elif not isinstance(var, Tensor):
        raise TypeError(f"gaussian_nll_loss: var must be a Tensor or a float, got {type(var).__name__}")
    elif bool((var.array < 0).any()):
        raise ValueError("gaussian_nll_loss: var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = unsqueeze(var, -1)
        elif not (input.ndim == var.ndim and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError(f"gaussian_nll_loss: var is of incorrect size: input {tuple(input.shape)}, "
                             f"var {tuple(var.shape)} (expected the input's shape, one dim short, or 1 in one dim)")
    require_float(input, "gaussian_nll_loss")
    var = clamp_min_straight_through(var, eps)
    d = input - target
    loss = 0.5 * (var.log() + d * d / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction)

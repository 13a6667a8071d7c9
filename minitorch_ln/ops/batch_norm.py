"""BatchNorm (Ioffe & Szegedy, 2015): each channel normalized over the batch (and length) axes.

The training-mode op is one fused node with a hand-derived backward, LayerNorm's formulas along
each channel (docs, section 8); eval mode with running statistics is composed from primitive ops.
"""

from __future__ import annotations

import numpy as np

from ..kernels import batch_norm_dispatch
from ..kernels.layer_norm import stat_dtype
from ..autograd.composed import double_backward
from ..autograd.function import Function
from ..autograd.grad_mode import no_grad
from ..backend import get_array_module
from ..errors import DtypeError
from ..tensor import Tensor
from .normalization_common import check_eps, check_input, check_param, stat_cast

__all__ = ["batch_norm"]


#
# Input (N, C) or (N, C, L) (any (N, C, ...)): channel axis 1, normalized over every other axis.
# The kernels take it as (N, C, L), a view (L = 1 for (N, C); (N, C, H·W) for (N, C, H, W)) and
# read it in place: the NumPy kernels reduce over its axes (0, 2), the compiled and CUDA ones loop
# over each channel's values. γ and β (C,) scale whole channels; otherwise every formula is
# LayerNorm's (docs, section 8).


def _ncl(a):
    """``(N, C, ...)`` as a C-contiguous ``(N, C, L)`` array, ``L`` the product of the trailing dims."""
    xp = get_array_module(a)
    return xp.ascontiguousarray(a).reshape(a.shape[0], a.shape[1], -1)


class NativeBatchNorm(Function):
    """Training-mode BatchNorm with batch statistics (biased variance), one graph node."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps, batch_stats):
        y, mean, rstd, var = batch_norm_dispatch.batch_norm_fwd_ncl_for(x)(_ncl(x), weight, bias, eps)   # (N, C, L), (C, 1) ×3
        ctx.eps, ctx.has_bias = eps, bias is not None
        ctx.save_for_backward(x, weight, mean, rstd)
        batch_stats["mean"], batch_stats["var"] = mean[:, 0], var[:, 0]          # for the running stats
        return y.reshape(x.shape)                                                 # (N, C, ...)

    @staticmethod
    def backward(ctx, dy):
        x, weight, mean, rstd = ctx.saved_tensors
        grads = NativeBatchNormBackward.apply(dy, x, weight, mean, rstd, ctx.eps, ctx.has_bias)
        grads = grads if isinstance(grads, tuple) else (grads,)
        return grads[0], (grads[1] if weight is not None else None), (grads[-1] if ctx.has_bias else None), None, None


class NativeBatchNormBackward(Function):
    """Batch statistics backward: LayerNorm's three-term ``dx`` along each channel's row (docs, section 8)."""

    @staticmethod
    def forward(ctx, dy, x, weight, mean, rstd, eps, has_bias):
        dy3 = _ncl(dy)                                                             # (N, C, L)
        dx, dweight, dbias = batch_norm_dispatch.batch_norm_bwd_ncl_for(x)(dy3, _ncl(x), weight, mean, rstd)
        ctx.eps, ctx.has_bias = eps, has_bias
        ctx.save_for_backward(dy, x, weight)
        out = [dx.reshape(x.shape)]                                                # (N, C, ...)
        if weight is not None:
            out.append(dweight)                                                    # (C,)
        if has_bias:
            if dbias is None:  # a bias without a weight: dbias = Σ dy over all but the channel axis
                dbias = dy3.astype(stat_dtype(x.dtype)).sum(axis=(0, 2)).astype(x.dtype)
            out.append(dbias)                                                      # (C,)
        return tuple(out)

    @staticmethod
    def backward(ctx, *cotangents):
        dy, x, weight = ctx.saved_tensors
        eps, has_bias = ctx.eps, ctx.has_bias

        def composed(dy_, x_, weight_):
            return batch_norm_backward_composed(dy_, x_, weight_, eps, has_bias)

        ddy, dx_, dweight_ = double_backward(composed, (dy, x, weight), cotangents)
        return ddy, dx_, dweight_, None, None, None, None


def _channel_view(p: Tensor, x: Tensor) -> Tensor:
    """A ``(C,)`` tensor reshaped to broadcast along axis 1 of ``x``: ``(1, C)`` or ``(1, C, 1)``."""
    return p.reshape((1, -1) + (1,) * (x.ndim - 2))


def _empty_batch(input: Tensor, weight, bias) -> Tensor:
    """PyTorch's output for an input with no elements: a copy, times ``weight[0]`` plus ``bias[0]`` where given
    (so the parameters stay in the graph with zero gradients, as PyTorch's)."""
    out = input * 1
    if weight is not None:
        out = out * weight[0]
    if bias is not None:
        out = out + bias[0]
    return out


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,  # noqa: A002
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Batch normalization (Ioffe & Szegedy, 2015), as ``torch.nn.functional.batch_norm``.

    In training (or without running statistics) each channel is normalized with the batch mean and
    biased variance over every axis but 1, in one fused graph node with a hand-derived backward;
    ``running_mean``/``running_var``, when given, are updated in place with ``momentum`` and the
    *unbiased* batch variance. Otherwise ``(x - running_mean) / sqrt(running_var + eps) · weight +
    bias``, composed from primitive ops.

    Args:
        input: ``(N, C)`` or ``(N, C, L)`` (any ``(N, C, ...)``) float16/32/64.
        running_mean, running_var: ``(C,)`` or None.
        weight, bias: ``(C,)`` or None.
        training: use batch statistics (and update the running ones).
        momentum: the weight of the new batch in the running averages (``None`` is not accepted
            here; the module handles the cumulative average).
        eps: > 0 in training, >= 0 otherwise (PyTorch's rule; NaN and inf give NaN and ``bias``).
    Returns:
        ``(N, C, ...)``, ``input``'s dtype; an empty 1-d input gives an empty output, as PyTorch.
    Raises:
        ValueError: fewer than 2 dims (unless empty), a parameter not of shape ``(C,)``, eps ≤ 0 in training
            or < 0 in evaluation (PyTorch's messages), one value per
            channel in training ("Expected more than 1 value per channel when training"), or only
            one of ``running_mean``/``running_var`` given.
        RuntimeError: ``training=False`` without both running statistics (as PyTorch).
        TypeError: integer input; ``momentum`` not a number (``None`` is the modules' option).
        DtypeError: running statistics of another dtype than the input's (float32 for float16 input).
    """
    op = "batch_norm"
    check_input(input, op)
    eps = check_eps(eps, op, positive=False)
    # PyTorch's F.batch_norm: eps > 0 in training, >= 0 otherwise (NaN passes its comparisons, as here)
    if training and eps <= 0.0:
        raise ValueError(f"{op}: eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"{op}: eps must be non-negative, but got {eps}")
    if input.ndim == 1 and input.numel() == 0:  # PyTorch: an empty 1-d input (no channel dim) gives an empty output
        return _empty_batch(input, weight, bias)
    if input.ndim < 2:
        raise ValueError(f"{op}: expected an input of shape (N, C) or (N, C, L), got shape {tuple(input.shape)}")
    if momentum is None or isinstance(momentum, bool) or not isinstance(momentum, (int, float)):
        raise TypeError(f"{op}(): argument 'momentum' must be float, not {type(momentum).__name__} (a module's "
                        "momentum=None, the cumulative average, is handled by nn.BatchNorm*)")
    if not training:
        for name, p in (("running_mean", running_mean), ("running_var", running_var)):
            if p is None:
                raise RuntimeError(f"{op}: {name} must be defined in evaluation mode (training=False)")
    if (running_mean is None) != (running_var is None):
        raise ValueError(f"{op}: running_mean and running_var must either both be None or neither be None")
    C = input.shape[1]
    stat_dt = np.dtype(np.float32) if input.dtype == np.float16 else input.dtype
    for name, p in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)):
        if p is not None:
            if not isinstance(p, Tensor):
                raise TypeError(f"{op}: {name} must be a Tensor or None, got {type(p).__name__}")
            if tuple(p.shape) != (C,):
                raise ValueError(f"{op}: expected {name} of shape ({C},) (one value per channel of the input "
                                 f"of shape {tuple(input.shape)}), got {tuple(p.shape)}")
            if name.startswith("running") and p.dtype not in (input.dtype, stat_dt):
                # PyTorch: "mixed dtype (CPU): expect parameter to have scalar type of Float"; an integer
                # buffer would silently truncate the running averages
                raise DtypeError(f"{op}: expected {name} of dtype {stat_dt} (the input's, or float32 for float16 "
                                 f"input), got {p.dtype}")
    for name, p in (("weight", weight), ("bias", bias)):
        check_param(p, name, (C,), input, op)
    use_batch_stats = training
    if input.numel() == 0:  # an empty batch: an empty output, as PyTorch (nothing to average)
        return _empty_batch(input, weight, bias)
    if not use_batch_stats:
        scale = (stat_cast(running_var) + eps).rsqrt()                             # (C,)
        y = (stat_cast(input) - _channel_view(running_mean, input)) * _channel_view(scale, input)
        if weight is not None:
            y = y * _channel_view(weight, input)
        if bias is not None:
            y = y + _channel_view(bias, input)
        return y.to(input.dtype)
    M = input.numel() // max(C, 1)
    if M <= 1:
        raise ValueError(
            f"{op}: expected more than 1 value per channel when training, got input of shape {tuple(input.shape)}"
        )
    batch = {}  # the forward leaves the batch mean and biased variance (C,) here
    y = NativeBatchNorm.apply(input, weight, bias, eps, batch)
    if training and running_mean is not None and running_var is not None:
        unbiased = batch["var"] * (M / (M - 1))                                  # Bessel's correction
        with no_grad():
            for buf, new in ((running_mean, batch["mean"]), (running_var, unbiased)):
                buf.array[...] = ((1 - momentum) * buf.array + momentum * new).astype(buf.dtype, copy=False)
                buf._bump_version()
    return y


def batch_norm_composed(input: Tensor, weight=None, bias=None, eps: float = 1e-5) -> Tensor:  # noqa: A002
    """Training-mode :func:`batch_norm` (batch statistics) from primitive Tensor ops (reference)."""
    axes = tuple(i for i in range(input.ndim) if i != 1)
    x = stat_cast(input)
    xc = x - x.mean(axes, keepdim=True)                          # (N, C, L)
    y = xc * ((xc * xc).mean(axes, keepdim=True) + eps).rsqrt()  # (N, C, L)
    if weight is not None:
        y = y * _channel_view(weight, x)
    if bias is not None:
        y = y + _channel_view(bias, x)
    return y.to(input.dtype)


def batch_norm_backward_composed(dy: Tensor, x: Tensor, weight, eps: float, has_bias: bool) -> tuple:
    """``(dx, dweight or None, dbias or None)`` of training-mode BatchNorm from primitive Tensor ops."""
    axes = tuple(i for i in range(x.ndim) if i != 1)
    xs, dys = stat_cast(x), stat_cast(dy)
    xc = xs - xs.mean(axes, keepdim=True)
    rstd = ((xc * xc).mean(axes, keepdim=True) + eps).rsqrt()
    xhat = xc * rstd
    dxhat = dys * _channel_view(weight, xs) if weight is not None else dys
    dx = rstd * (dxhat - dxhat.mean(axes, keepdim=True) - xhat * (dxhat * xhat).mean(axes, keepdim=True))
    dweight = (dys * xhat).sum(axes).to(weight.dtype) if weight is not None else None
    dbias = dys.sum(axes).to(x.dtype if weight is None else weight.dtype) if has_bias else None
    out = (dx.to(x.dtype),)
    if weight is not None:
        out += (dweight,)
    if has_bias:
        out += (dbias,)
    return out

"""GroupNorm (Wu & He, 2018) and InstanceNorm (Ulyanov et al., 2016): LayerNorm's formulas over channel groups.

An ``(N, C, *)`` input's ``C`` channels are split into ``num_groups = G`` groups of ``C/G``; each
sample's group (its ``C/G`` channels × every spatial position) is normalized with its own mean and
biased variance, then scaled by γ and shifted by β *per channel*. Every formula is LayerNorm's, over
other axes (docs/layernorm_backward.md, section 12); InstanceNorm is ``G = C``. As LayerNorm, four
pieces:

- ``NativeGroupNorm`` (a ``Function``): one graph node running the fused kernel ``group_norm_fwd`` of
  :mod:`minitorch_ln.kernels` (``kernels/group_norm.py`` is the readable form, ``cpu_group_norm.py``
  the compiled loops, ``cuda_group_norm.py`` the GPU); it saves ``x``, ``weight`` and ``mean``,
  ``rstd`` ``(N, G)``; its backward applies
- ``NativeGroupNormBackward`` (a ``Function``): the hand-derived ``dx = rstd·(dxhat - mean_g(dxhat) -
  xhat·mean_g(dxhat·xhat))`` with ``dxhat = dy·γ[c]``, ``dγ[c] = Σ_{n,l} dy·xhat``, ``dβ[c] =
  Σ_{n,l} dy``, as the kernel ``group_norm_bwd``; its own backward (second and higher derivatives)
  differentiates the composed backward below through ``autograd.composed.double_backward``;
- ``group_norm`` / ``instance_norm``: check their arguments, then apply ``NativeGroupNorm``;
- ``group_norm_composed`` and ``group_norm_backward_composed``: the same from primitive Tensor ops.
"""

from __future__ import annotations

import math
import numbers

from ..kernels import group_norm_dispatch
from ..kernels.layer_norm import stat_dtype
from ..autograd.composed import double_backward
from ..autograd.function import Function
from ..autograd.grad_mode import no_grad
from ..backend import get_array_module
from ..errors import OptionError, ShapeError
from ..tensor import Tensor
from .autocast_policies import autocast
from .batch_norm import batch_norm
from .normalization_common import check_eps, check_input, check_param, stat_cast

__all__ = ["group_norm", "instance_norm"]


def _ncl(a):
    """``(N, C, ...)`` as a C-contiguous ``(N, C, L)`` array, ``L`` the product of the trailing dims (1 for none)."""
    xp = get_array_module(a)
    return xp.ascontiguousarray(a).reshape(a.shape[0], a.shape[1], math.prod(a.shape[2:]))


def _shaped(a, shape):
    """The kernel's own ``(N, C, L)`` array given ``shape`` in place (a view would be copied again
    before becoming a leaf's ``.grad``), or a reshaped view when it is not its own array."""
    if a.base is None and a.flags.c_contiguous:
        a.shape = shape
        return a
    return a.reshape(shape)


class NativeGroupNorm(Function):
    """``y = (x - mean[n, g]) · rstd[n, g] · γ[c] + β[c]``, each group of ``C/G`` channels: one graph node."""

    @staticmethod
    def forward(ctx, x, weight, bias, num_groups, eps):
        y, mean, rstd = group_norm_dispatch.group_norm_fwd_for(x)(_ncl(x), weight, bias, num_groups, eps)  # (N, C, L), (N, G) ×2
        ctx.num_groups, ctx.eps = num_groups, eps
        ctx.bias_dtype = None if bias is None else bias.dtype
        ctx.save_for_backward(x, weight, mean, rstd)
        return _shaped(y, x.shape)                                                # (N, C, *)

    @staticmethod
    def backward(ctx, dy):
        x, weight, mean, rstd = ctx.saved_tensors
        grads = NativeGroupNormBackward.apply(dy, x, weight, mean, rstd, ctx.num_groups, ctx.eps, ctx.bias_dtype)
        grads = grads if isinstance(grads, tuple) else (grads,)
        dweight = grads[1] if weight is not None else None
        dbias = grads[-1] if ctx.bias_dtype is not None else None
        return grads[0], dweight, dbias, None, None


class NativeGroupNormBackward(Function):
    """``(dy, x, weight) -> (dx[, dweight][, dbias])``: the hand-derived backward as one node (docs, section 12)."""

    @staticmethod
    def forward(ctx, dy, x, weight, mean, rstd, num_groups, eps, bias_dtype):
        dy3, x3 = _ncl(dy), _ncl(x)                                               # (N, C, L) each
        dx, dweight, dbias = group_norm_dispatch.group_norm_bwd_for(x3)(dy3, x3, weight, mean, rstd, num_groups)
        ctx.num_groups, ctx.eps, ctx.bias_dtype = num_groups, eps, bias_dtype
        ctx.save_for_backward(dy, x, weight)
        out = [_shaped(dx, x.shape)]                                              # (N, C, *)
        if weight is not None:
            out.append(dweight)                                                   # (C,)
        if bias_dtype is not None:
            if dbias is None:  # a bias without a weight: dβ = Σ dy over all but the channel axis
                dbias = dy3.astype(stat_dtype(dy3.dtype)).sum(axis=(0, 2))
            out.append(dbias.astype(bias_dtype, copy=False))                      # (C,)
        return tuple(out)

    @staticmethod
    def backward(ctx, *cotangents):
        dy, x, weight = ctx.saved_tensors
        num_groups, eps, bias_dtype = ctx.num_groups, ctx.eps, ctx.bias_dtype

        def composed(dy_, x_, weight_):  # the outputs this node has: dx[, dweight][, dbias]
            grads = group_norm_backward_composed(dy_, x_, weight_, num_groups, eps, bias_dtype is not None)
            return tuple(g for g in grads if g is not None)

        ddy, dx_, dweight_ = double_backward(composed, (dy, x, weight), cotangents)
        return ddy, dx_, dweight_, None, None, None, None, None


def _check_group_args(input, num_groups, weight, bias, eps, op: str) -> float:
    """The argument checks of :func:`group_norm` (PyTorch's messages); returns ``eps`` as a float."""
    check_input(input, op)
    if input.ndim < 2:
        raise ShapeError(f"{op}: Expected at least 2 dimensions for input tensor but received {input.ndim} "
                         f"(an input of shape (N, C, *), got {tuple(input.shape)})")
    if isinstance(num_groups, bool) or not isinstance(num_groups, numbers.Integral) or num_groups <= 0:
        raise OptionError(f"{op}: Expected num groups to be a positive int, got {num_groups!r}")
    C = input.shape[1]
    if C % num_groups:
        raise ShapeError(f"{op}: Expected number of channels in input to be divisible by num_groups, but got input "
                         f"of shape {list(input.shape)} and num_groups={num_groups}")
    for name, p in (("weight", weight), ("bias", bias)):
        if isinstance(p, Tensor) and tuple(p.shape) != (C,):
            raise ShapeError(f"{op}: Expected {name} to be a vector of size equal to the number of channels in input, "
                             f"but got {name} of shape {list(p.shape)} and input of shape {list(input.shape)}")
        check_param(p, name, (C,), input, op)
    return check_eps(eps, op, positive=False)


@autocast("group_norm")
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Group normalization (Wu & He, 2018), as ``torch.nn.functional.group_norm``: fused, one graph node.

    ``y = (x - mean) / sqrt(var + eps) · weight[c] + bias[c]``, the mean and the biased variance taken
    over each sample's group of ``C/num_groups`` channels and all spatial positions. ``num_groups=1``
    is LayerNorm over ``(C, *)`` with per-channel parameters; ``num_groups=C`` is InstanceNorm.
    Derivation: ``docs/layernorm_backward.md``, section 12.

    Args:
        input: ``(N, C, *)``, e.g. ``(N, C)``, ``(N, C, L)`` or ``(N, C, H, W)``; float16/32/64.
        num_groups: ``G``, a positive int dividing ``C``.
        weight, bias: ``(C,)`` or None, ``input``'s dtype (float32 with float16 input is allowed).
        eps: added to the variance inside the square root; any real number, as PyTorch (negative too:
            the formula's number where ``var + eps > 0``, NaN/inf where it is not, as PyTorch's).
    Returns:
        ``(N, C, *)``, ``input``'s dtype; float16 is normalized in float32.
    Raises:
        ShapeError (RuntimeError, ValueError): fewer than 2 dims, ``C`` not divisible by
            ``num_groups``, a weight or bias not of shape ``(C,)``.
        OptionError (RuntimeError, ValueError): ``num_groups`` not a positive int.
        ValueError: eps not a real number; one value in all (``N·C/G·L == 1``), which PyTorch refuses
            ("Expected more than 1 value per channel when training").
        TypeError: integer input, or parameters of another dtype.
    """
    op = "group_norm"
    eps = _check_group_args(input, num_groups, weight, bias, eps, op)
    N, C = input.shape[:2]
    if N * (C // num_groups) * math.prod(input.shape[2:]) == 1:  # PyTorch's _verify_batch_size
        raise ValueError(f"{op}: Expected more than 1 value per channel when training, got input size "
                         f"{[N * C // num_groups, num_groups] + list(input.shape[2:])}")
    return NativeGroupNorm.apply(input, weight, bias, int(num_groups), eps)


def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Instance normalization (Ulyanov, Vedaldi & Lempitsky, 2016), as ``torch.nn.functional.instance_norm``.

    With ``use_input_stats`` each ``(n, c)`` is normalized over its spatial positions: GroupNorm with
    one channel per group, the same fused node. ``running_mean``/``running_var``, when given, are then
    updated in place as PyTorch does (it runs BatchNorm on the input viewed as ``(1, N·C, *)`` and
    averages the ``N`` updated copies): ``running ← (1 - momentum)·running + momentum·mean_n(stat)``,
    ``stat`` the per-``(n, c)`` mean and *unbiased* variance. Without ``use_input_stats``:
    ``(x - running_mean) / sqrt(running_var + eps) · weight + bias``, composed (BatchNorm's eval).

    Args:
        input: ``(N, C, *)`` float16/32/64 (at least 2 spatial values with ``use_input_stats``).
        running_mean, running_var, weight, bias: ``(C,)`` or None.
        use_input_stats: normalize with each instance's statistics (else the running ones).
        momentum: the weight of the new statistics in the running averages.
        eps: any real number but 0 (negative as PyTorch: NaN where ``var + eps < 0``).
    Returns:
        ``(N, C, *)``, ``input``'s dtype.
    Raises:
        ShapeError: fewer than 2 dims, a parameter or running statistic not ``(C,)``.
        ValueError: one spatial value with ``use_input_stats`` (PyTorch's "Expected more than 1 spatial
            element when training"), eps = 0 (see the comment in the body).
        OptionError (RuntimeError): ``use_input_stats=False`` without both running statistics.
        TypeError: integer input, or parameters of another dtype.
    """
    op = "instance_norm"
    check_input(input, op)
    if input.ndim < 2:
        raise ShapeError(f"{op}: expected an input of shape (N, C, *), got shape {tuple(input.shape)}")
    C = input.shape[1]
    for name, p in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)):
        if p is not None and (not isinstance(p, Tensor) or tuple(p.shape) != (C,)):
            got = tuple(p.shape) if isinstance(p, Tensor) else type(p).__name__
            raise ShapeError(f"{op}: expected {name} to be a Tensor of shape ({C},), one value per channel of the "
                             f"input of shape {tuple(input.shape)}, got {got}")
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise OptionError(f"{op}: Expected running_mean and running_var to be defined when use_input_stats is false")
        return batch_norm(input, running_mean, running_var, weight, bias, False, 0.0, eps)  # eval: momentum unused
    if math.prod(input.shape[2:]) == 1:  # PyTorch's _verify_spatial_size
        raise ValueError(f"{op}: Expected more than 1 spatial element when training, got input size {list(input.shape)}")
    eps = _check_group_args(input, C, weight, bias, eps, op)
    if eps == 0:
        # PyTorch's instance_norm (its batch-norm kernel) sets rstd = 0 where var + eps is 0 with eps 0, so a
        # constant instance gives ``bias``, not the formula's 0/0 (its group_norm gives NaN there, as ours);
        # refused rather than a number that differs from PyTorch's on constant instances
        raise ValueError(f"{op}: eps must not be 0 (PyTorch sets 1/sqrt(var + eps) to 0 where var is 0, a value "
                         "that is not the formula's); give a nonzero eps")
    y = NativeGroupNorm.apply(input, weight, bias, C, eps)
    if running_mean is not None or running_var is not None:
        _update_running_stats(input, running_mean, running_var, momentum)
    return y


def _update_running_stats(input, running_mean, running_var, momentum) -> None:
    """PyTorch's update: the per-``(n, c)`` mean and unbiased variance, averaged over ``n``, in place."""
    x3 = _ncl(input.array).astype(stat_dtype(input.dtype), copy=False)    # (N, C, L)
    with no_grad():
        for buf, stat in ((running_mean, lambda: x3.mean(axis=2)), (running_var, lambda: x3.var(axis=2, ddof=1))):
            if buf is None:
                continue
            new = stat().mean(axis=0)                                             # (C,)  mean over n of (N, C)
            buf.array[...] = ((1 - momentum) * buf.array + momentum * new).astype(buf.dtype, copy=False)
            buf._bump_version()


def _channel_view(p: Tensor, x: Tensor) -> Tensor:
    """A ``(C,)`` tensor reshaped to broadcast along axis 1 of ``x``: ``(1, C)``, ``(1, C, 1)``, ..."""
    return p.reshape((1, -1) + (1,) * (x.ndim - 2))


def group_norm_composed(input: Tensor, num_groups: int, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    """:func:`group_norm` from primitive Tensor ops (reshape, mean, sub, mul, rsqrt, ...): the reference.

    Same arguments, shapes and errors as :func:`group_norm` (except the one-value check); autograd
    derives the backward from about ten nodes where the fused op has one.
    """
    eps = _check_group_args(input, num_groups, weight, bias, eps, "group_norm_composed")
    x = stat_cast(input)
    xg = x.reshape(x.shape[0], num_groups, -1)                    # (N, G, C/G·L)
    xc = xg - xg.mean(2, keepdim=True)                            # (N, G, C/G·L)
    rstd = ((xc * xc).mean(2, keepdim=True) + eps).rsqrt()        # (N, G, 1)  biased variance
    y = (xc * rstd).reshape(x.shape)                              # (N, C, *)  xhat
    if weight is not None:
        y = y * _channel_view(weight, x)
    if bias is not None:
        y = y + _channel_view(bias, x)
    return y.to(input.dtype)


def group_norm_backward_composed(dy: Tensor, x: Tensor, weight, num_groups: int, eps: float, has_bias: bool) -> tuple:
    """``(dx, dweight or None, dbias or None)`` of GroupNorm, from primitive Tensor ops.

    The compact formula (docs, section 12) with the statistics recomputed from ``x``, so that the
    result is differentiable in ``x`` too: what the fused backward's own backward differentiates.
    Shapes: ``dy``, ``x`` ``(N, C, *)``; ``weight`` ``(C,)`` or None.
    """
    xs, dys = stat_cast(x), stat_cast(dy)
    N, C = x.shape[:2]
    xg = xs.reshape(N, num_groups, -1)                            # (N, G, C/G·L)
    xc = xg - xg.mean(2, keepdim=True)                            # (N, G, C/G·L)
    rstd = ((xc * xc).mean(2, keepdim=True) + eps).rsqrt()        # (N, G, 1)
    xhat = xc * rstd                                              # (N, G, C/G·L)
    dxhat = dys * _channel_view(weight, xs) if weight is not None else dys   # (N, C, *)  dy · γ[c]
    dxhat = dxhat.reshape(N, num_groups, -1)                      # (N, G, C/G·L)
    dx = rstd * (dxhat                                            # term 1: directly through xhat
                 - dxhat.mean(2, keepdim=True)                    # term 2: through the group mean
                 - xhat * (dxhat * xhat).mean(2, keepdim=True))   # term 3: through rstd
    dy3 = dys.reshape(N, C, -1)                                   # (N, C, L)
    dweight = (dy3 * xhat.reshape(N, C, -1)).sum((0, 2)).to(weight.dtype) if weight is not None else None   # (C,)
    dbias = dy3.sum((0, 2)) if has_bias else None                 # (C,)
    if dbias is not None and weight is not None:
        dbias = dbias.to(weight.dtype)
    return dx.reshape(x.shape).to(x.dtype), dweight, dbias

"""RMSNorm (Zhang & Sennrich, 2019): LayerNorm without the centring, fused, with a hand-derived backward.

``y = x · rstd · weight`` with ``rstd = 1 / sqrt(mean(x²) + eps)`` over the normalized axes (docs,
section 7); the pieces are those of ``ops/layer_norm.py``.
"""

from __future__ import annotations

import numpy as np

from ..kernels import rms_norm_dispatch
from ..autograd.composed import double_backward
from ..autograd.function import Function
from ..tensor import Tensor
from .normalization_common import check_eps, check_input, check_param, flat, param_view, resolve_axes, rows_of, stat_cast
from .reduction import sum_over

__all__ = ["rms_norm"]


class RMSNorm(Function):
    @staticmethod
    def forward(ctx, x, weight, axes, eps):
        rows = rows_of(x.shape, axes)
        y, rstd = rms_norm_dispatch.rms_norm_fwd_for(x)(rows.to_rows(x), flat(weight, rows.D), eps)
        ctx.axes, ctx.eps = axes, eps
        ctx.save_for_backward(x, weight, rstd.reshape(rows.stat_shape))
        return rows.from_rows(y)                                                  # (B, L, D)

    @staticmethod
    def backward(ctx, dy):
        x, weight, rstd = ctx.saved_tensors
        grads = RMSNormBackward.apply(dy, x, weight, rstd, ctx.axes, ctx.eps)
        grads = grads if isinstance(grads, tuple) else (grads,)
        return grads[0], (grads[1] if weight is not None else None), None, None


class RMSNormBackward(Function):
    """``dx = rstd · (dxhat - xhat · mean(dxhat · xhat))``, ``dweight = Σ dy · xhat`` (docs, section 7)."""

    @staticmethod
    def forward(ctx, dy, x, weight, rstd, axes, eps):
        rows = rows_of(x.shape, axes)
        dx, dweight = rms_norm_dispatch.rms_norm_bwd_for(x)(rows.to_rows(dy), rows.to_rows(x), flat(weight, rows.D),
                                           rstd.reshape(rows.N, 1))
        ctx.axes, ctx.eps = axes, eps
        ctx.save_for_backward(dy, x, weight)
        out = [rows.from_rows(dx)]
        if weight is not None:
            out.append(dweight.reshape(rows.param_shape))
        return tuple(out)

    @staticmethod
    def backward(ctx, *cotangents):
        dy, x, weight = ctx.saved_tensors
        axes, eps = ctx.axes, ctx.eps

        def composed(dy_, x_, weight_):
            dx, dweight = rms_norm_backward_composed(dy_, x_, weight_, axes, eps)
            return (dx,) if weight_ is None else (dx, dweight)

        ddy, dx_, dweight_ = double_backward(composed, (dy, x, weight), cotangents)
        return ddy, dx_, dweight_, None, None, None


def _rms_eps(eps, x: Tensor, op: str) -> float:
    if eps is None:  # as PyTorch: the machine epsilon of the input's dtype
        return float(np.finfo(x.dtype).eps)
    return check_eps(eps, op, positive=False)


def rms_norm(input: Tensor, normalized_shape=None, weight: Tensor | None = None, eps: float | None = None,  # noqa: A002
             *, dim=None) -> Tensor:
    """Root mean square normalization (Zhang & Sennrich, 2019): ``y = x / sqrt(mean(x²) + eps) · weight``.

    Args:
        input: ``(*, D1, ..., Dk)`` float16/32/64, e.g. ``(B, L, D)``.
        normalized_shape, dim: as :func:`layer_norm` (exactly one of them).
        weight: of the normalized shape, or None.
        eps: any real number (negative as PyTorch: NaN where ``mean(x²) + eps < 0``), or None for
            ``finfo(input.dtype).eps`` (as ``torch.nn.functional.rms_norm``).
    Returns:
        ``y``, the shape and dtype of ``input`` (float16 computed in float32).
    Raises:
        As :func:`layer_norm`.
    """
    op = "rms_norm"
    check_input(input, op)
    axes = resolve_axes(input, normalized_shape, dim, op)
    eps = _rms_eps(eps, input, op)
    rows = rows_of(input.shape, axes)
    check_param(weight, "weight", rows.param_shape, input, op)
    if rows.D == 0:  # nothing to normalize: an empty output (and empty gradients), as PyTorch
        return rms_norm_composed(input, None, weight, eps, dim=axes)
    return RMSNorm.apply(input, weight, axes, eps)


def rms_norm_composed(input: Tensor, normalized_shape=None, weight=None, eps=None, *, dim=None) -> Tensor:  # noqa: A002
    """:func:`rms_norm` from primitive Tensor ops (reference)."""
    op = "rms_norm_composed"
    check_input(input, op)
    axes = resolve_axes(input, normalized_shape, dim, op)
    eps = _rms_eps(eps, input, op)
    x = stat_cast(input)
    y = x * ((x * x).mean(axes, keepdim=True) + eps).rsqrt()   # (B, L, D)
    if weight is not None:
        y = y * param_view(weight, x, axes)
    return y.to(input.dtype)


def rms_norm_backward_composed(dy: Tensor, x: Tensor, weight, axes: tuple, eps: float) -> tuple:
    """``(dx, dweight or None)`` of RMSNorm from primitive Tensor ops (differentiable in all inputs)."""
    xs, dys = stat_cast(x), stat_cast(dy)
    other = tuple(i for i in range(x.ndim) if i not in axes)
    rstd = ((xs * xs).mean(axes, keepdim=True) + eps).rsqrt()   # (B, L, 1)
    xhat = xs * rstd                                            # (B, L, D)
    dxhat = dys * param_view(weight, xs, axes) if weight is not None else dys
    dx = rstd * (dxhat - xhat * (dxhat * xhat).mean(axes, keepdim=True))
    dweight = sum_over(dys * xhat, other).reshape(weight.shape).to(weight.dtype) if weight is not None else None
    return dx.to(x.dtype), dweight

"""PyTorch's ``native_*`` normalization entry points, which return their statistics with the output:
``native_layer_norm``, ``native_batch_norm``, ``_native_batch_norm_legit``, ``native_group_norm``.

The output is the project's own fused kernel (``layer_norm``, ``batch_norm``, ``group_norm``: one graph
node with the hand-derived backward of ``docs/``); the statistics are PyTorch's: the mean and
``rstd = 1 / sqrt(var + eps)`` (biased variance) of each normalized group, in PyTorch's shapes. As in
PyTorch, layer and batch norm's statistics carry no gradient, group norm's do (composed of ``mean``, ``var``
and ``rsqrt``, so an upstream gradient on them reaches the input).
"""

from __future__ import annotations

import numbers

from ..backend import get_array_module
from ..errors import ShapeError
from ..tensor import Tensor
from .batch_norm import batch_norm
from .group_norm import group_norm
from .layer_norm import layer_norm

__all__ = ["native_batch_norm", "native_group_norm", "native_layer_norm"]


def _stats(x: Tensor, axes: tuple, eps: float, keepdim: bool) -> tuple:
    """``(mean, rstd)`` of ``x`` over ``axes`` (biased variance)."""
    mean = x.mean(axes, keepdim=keepdim)
    var = x.var(axes, keepdim=keepdim, correction=0)
    return mean, (var + eps).rsqrt()


def _plain_normalize(x: Tensor, axes: tuple, eps: float) -> Tensor:
    """``(x - mean) · rstd`` over ``axes`` for any ``eps`` (NaN where ``var + eps < 0``, as PyTorch's aten ops)."""
    mean, rstd = _stats(x, axes, eps, keepdim=True)
    return (x - mean) * rstd


def _affine(y: Tensor, weight, bias, channels_ndim) -> Tensor:
    """``y · weight + bias``; per channel (dim 1 of ``channels_ndim`` dims) when ``channels_ndim`` is given."""
    def view(p):
        return p if channels_ndim is None else p.reshape((-1,) + (1,) * (channels_ndim - 2))

    y = y if weight is None else y * view(weight)
    return y if bias is None else y + view(bias)


def native_layer_norm(input: Tensor, normalized_shape, weight: Tensor | None, bias: Tensor | None,
                      eps: float) -> tuple:
    """``(out, mean, rstd)``: :func:`layer_norm` over the last ``len(normalized_shape)`` dims; ``mean`` and
    ``rstd`` have ``input``'s shape with those dims 1 (no gradient). Raises as :func:`layer_norm`."""
    shape = (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else tuple(normalized_shape)
    axes = tuple(range(input.ndim - len(shape), input.ndim))
    if isinstance(eps, numbers.Real) and eps <= 0:  # composed (the aten op's arithmetic); F.layer_norm agrees
        out = _affine(_plain_normalize(input, axes, eps), weight, bias, None)
    else:
        out = layer_norm(input, normalized_shape, weight, bias, eps)
    mean, rstd = _stats(input.detach(), axes, eps, keepdim=True)  # (*, 1, ..., 1)
    if input.numel() == 0:  # PyTorch's statistics of an empty batch are empty too
        mean, rstd = mean * 0.0, rstd * 0.0
    return out, mean, rstd


def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
                      running_var: Tensor | None, training: bool, momentum: float, eps: float) -> tuple:
    """``(out, save_mean, save_invstd)``: :func:`batch_norm` (updating the running statistics in training); in
    training the per-channel batch mean and ``1/sqrt(var + eps)`` ``(C,)``, in evaluation two empty ``(0,)``
    tensors (PyTorch's). No gradient on the statistics. Raises as :func:`batch_norm`."""
    out = batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        xp = get_array_module(input.array)
        empty = Tensor._from_op(xp.zeros((0,), dtype=input.dtype))
        return out, empty, Tensor._from_op(xp.zeros((0,), dtype=input.dtype))
    axes = (0,) + tuple(range(2, input.ndim))
    mean, invstd = _stats(input.detach(), axes, eps, keepdim=False)  # (C,), (C,)
    return out, mean, invstd


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int, C: int, HxW: int,
                      group: int, eps: float) -> tuple:
    """``(out, mean, rstd)``: :func:`group_norm` with ``group`` groups of ``input`` ``(N, C, *)``; ``mean`` and
    ``rstd`` are ``(N, group)`` and differentiable (PyTorch's). Raises ShapeError when ``N``, ``C`` and ``HxW``
    do not describe ``input``, and as :func:`group_norm`."""
    if not isinstance(input, Tensor):
        raise TypeError(f"native_group_norm(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if input.ndim < 2 or input.shape[0] != N or input.shape[1] != C or input.numel() != N * C * HxW:
        raise ShapeError(f"native_group_norm(): N={N}, C={C}, HxW={HxW} do not describe an input of shape "
                         f"{tuple(input.shape)}")
    grouped = input.reshape(N, group, (C // group) * HxW)  # (N, G, C/G · HxW)
    if isinstance(eps, numbers.Real) and eps <= 0:  # composed (the aten op's arithmetic); F.group_norm agrees
        out = _affine(_plain_normalize(grouped, (2,), eps).reshape(tuple(input.shape)), weight, bias, input.ndim)
    else:
        out = group_norm(input, group, weight, bias, eps)
    mean, rstd = _stats(grouped, (2,), eps, keepdim=False)  # (N, G), (N, G)
    return out, mean, rstd

"""Normalization layers: ``LayerNorm``, ``RMSNorm`` and (from ``nn/batchnorm.py``) ``BatchNorm1d/2d/3d``, as in ``torch.nn``.

The math (and the hand-derived backwards) live in :mod:`minitorch_ln.ops.layer_norm`, ``rms_norm`` and ``batch_norm``; see
``docs/layernorm_backward.md``. Parameter and buffer names match PyTorch's, so a PyTorch
``state_dict`` loads with ``load_state_dict``.
"""

from __future__ import annotations

import numbers

from ..autograd.grad_mode import no_grad
from ..ops.normalization_common import check_eps as _check_eps
from ..ops.creation import ones, zeros
from . import functional as F
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .module import Module
from .parameter import Parameter

__all__ = ["LayerNorm", "RMSNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]


def _shape(normalized_shape, cls: str) -> tuple:
    shape = (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else normalized_shape
    try:
        shape = tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"{cls}: normalized_shape must be an int or a tuple of ints, got {normalized_shape!r}") from None
    if not shape or any(s <= 0 for s in shape):
        raise ValueError(f"{cls}: normalized_shape must be one or more positive sizes, got {normalized_shape!r}")
    return shape


class LayerNorm(Module):
    """Layer normalization over the trailing ``normalized_shape`` dims (Ba, Kiros & Hinton, 2016).

    ``y = (x - mean) / sqrt(var + eps) · weight + bias``: input ``(B, L, D)`` → output ``(B, L, D)``
    with ``normalized_shape = D`` (any ``(*, *normalized_shape)`` works). One fused graph node with
    a hand-derived backward (:func:`minitorch_ln.nn.functional.layer_norm`).

    Args:
        normalized_shape: an int ``D`` or a tuple of trailing sizes.
        eps: added to the biased variance inside the square root (default 1e-5).
        elementwise_affine: learn ``weight`` (γ, initialised to ones) and ``bias`` (β, zeros).
        bias: with ``elementwise_affine``, whether to learn ``bias`` too.
        device, dtype: of the parameters.
    Attributes:
        weight, bias: Parameters of shape ``normalized_shape`` (or None); ``gamma`` and ``beta``
            are the same Parameters under the names of the paper (not extra ``state_dict`` keys).
    Raises:
        ValueError: (in forward) an input whose trailing dims are not ``normalized_shape``.
    """

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape, "LayerNorm")
        self.eps = _check_eps(eps, type(self).__name__) if eps is not None else None
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(self.normalized_shape, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(zeros(self.normalized_shape, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    @property
    def gamma(self):
        """γ: the same Parameter as ``weight``."""
        return self.weight

    @property
    def beta(self):
        """β: the same Parameter as ``bias``."""
        return self.bias

    def reset_parameters(self) -> None:
        with no_grad():
            if self.weight is not None:
                self.weight.array.fill(1)
                self.weight._bump_version()
            if self.bias is not None:
                self.bias.array.fill(0)
                self.bias._bump_version()

    def forward(self, input):  # noqa: A002
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class RMSNorm(Module):
    """Root mean square normalization (Zhang & Sennrich, 2019): ``y = x / sqrt(mean(x²) + eps) · weight``.

    Input ``(B, L, D)`` → output ``(B, L, D)``. ``eps=None`` uses the machine epsilon of the
    input's dtype, as ``torch.nn.RMSNorm``. ``weight`` (ones) when ``elementwise_affine``.
    """

    def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True,
                 device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape, "RMSNorm")
        self.eps = _check_eps(eps, type(self).__name__) if eps is not None else None
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(self.normalized_shape, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self) -> None:
        if self.weight is not None:
            with no_grad():
                self.weight.array.fill(1)
                self.weight._bump_version()

    def forward(self, input):  # noqa: A002
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"

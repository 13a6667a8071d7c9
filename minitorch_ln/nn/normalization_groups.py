"""Normalization over channel groups: ``GroupNorm`` and ``InstanceNorm1d/2d/3d``, as in ``torch.nn``.

The math (and the hand-derived backward) lives in :mod:`minitorch_ln.ops.group_norm`; see
``docs/layernorm_backward.md``, section 12. Parameter and buffer names, initial values and
``extra_repr`` match PyTorch's, so a PyTorch ``state_dict`` loads with ``load_state_dict``.
"""

from __future__ import annotations

import numbers
import warnings

from ..ops.creation import ones, zeros
from ..ops.group_norm import group_norm, instance_norm
from ..ops.normalization_common import check_eps as _check_eps
from ..tensor import Tensor
from .batchnorm import _fill, _NormBase
from .module import Module
from .parameter import Parameter

__all__ = ["GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


def _positive_int(value, name: str, cls: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"{cls}: {name} must be a positive int, got {value!r}")
    return int(value)


class GroupNorm(Module):
    """Group normalization (Wu & He, 2018) of ``(N, C, *)`` input, as ``torch.nn.GroupNorm``.

    The ``num_channels`` channels are split into ``num_groups`` groups; each sample's group is
    normalized with its own mean and biased variance (the same in training and eval), then scaled
    and shifted per channel. ``GroupNorm(1, C)`` is LayerNorm over ``(C, *)`` with per-channel
    parameters; ``GroupNorm(C, C)`` is InstanceNorm with affine parameters.

    Args:
        num_groups: a positive int dividing ``num_channels``.
        num_channels: ``C``, the size of axis 1 of the input.
        eps: added to the variance inside the square root (default 1e-5).
        affine: learn ``weight`` (ones) and ``bias`` (zeros), ``(C,)`` each.
        device, dtype: of the parameters.
        bias: (keyword only) with ``affine``, whether to learn ``bias`` too (PyTorch 2.13's argument).
    Raises:
        ValueError: ``num_channels`` not divisible by ``num_groups``; (in forward) an input whose
            channels do not fit, as :func:`minitorch_ln.ops.group_norm.group_norm`.
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device=None, dtype=None, *, bias: bool = True):
        super().__init__()
        num_groups = _positive_int(num_groups, "num_groups", "GroupNorm")
        num_channels = _positive_int(num_channels, "num_channels", "GroupNorm")
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps = _check_eps(eps, "GroupNorm")
        self.affine = affine
        if affine:
            self.weight = Parameter(ones(num_channels, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(zeros(num_channels, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        if self.weight is not None:
            _fill(self.weight, 1)
        if self.bias is not None:
            _fill(self.bias, 0)

    def forward(self, input):
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class _InstanceNorm(_NormBase):
    """What InstanceNorm1d/2d/3d share (PyTorch's ``_InstanceNorm``: ``_NormBase`` with ``affine`` and
    ``track_running_stats`` off by default); ``_no_batch_dim`` is the number of dims of an unbatched
    input ``(C, *spatial)``."""

    _no_batch_dim = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None, *, bias: bool = True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _check_input_dim(self, input) -> None:
        cls, nb = type(self).__name__, self._no_batch_dim
        if not isinstance(input, Tensor):
            raise TypeError(f"{cls}: expected input to be a Tensor, got {type(input).__name__}")
        if input.ndim not in (nb, nb + 1):
            raise ValueError(f"{cls}: expected {nb}D or {nb + 1}D input (got {input.ndim}D input of shape "
                             f"{tuple(input.shape)})")

    def _instance_norm(self, input):
        # PyTorch's rule: running statistics are used only in eval mode with track_running_stats;
        # InstanceNorm never counts num_batches_tracked, and momentum=None means no update at all.
        return instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                             self.training or not self.track_running_stats,
                             self.momentum if self.momentum is not None else 0.0, self.eps)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.ndim - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"{type(self).__name__}: expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: {input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          UserWarning, stacklevel=2)
        if input.ndim == self._no_batch_dim:  # unbatched (C, *spatial): as a batch of one
            return self._instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization (Ulyanov et al., 2016) of ``(N, C, L)`` or unbatched ``(C, L)`` input.

    Each ``(n, c)`` is normalized over its ``L`` values (biased variance), as ``torch.nn.InstanceNorm1d``.
    ``affine``: ``weight`` (ones), ``bias`` (zeros) ``(C,)``. ``track_running_stats``: buffers
    ``running_mean`` (zeros), ``running_var`` (ones), ``num_batches_tracked``, updated in training with
    ``momentum`` and the unbiased variance averaged over the batch, used in eval.

    Raises:
        ValueError: input not 2-D or 3-D; with ``affine``, a channel count other than ``num_features``
            (without ``affine`` PyTorch's warning is given instead); one value per instance in training.
    """

    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of ``(N, C, H, W)`` or unbatched ``(C, H, W)`` input, as ``torch.nn.InstanceNorm2d``.

    See :class:`InstanceNorm1d`; raises ValueError for input that is not 3-D or 4-D.
    """

    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization of ``(N, C, D, H, W)`` or unbatched ``(C, D, H, W)`` input, as ``torch.nn.InstanceNorm3d``.

    See :class:`InstanceNorm1d`; raises ValueError for input that is not 4-D or 5-D.
    """

    _no_batch_dim = 4

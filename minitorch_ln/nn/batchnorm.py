"""Batch normalization layers: ``BatchNorm1d``, ``BatchNorm2d`` and ``BatchNorm3d``, as in ``torch.nn``.

One implementation for all three (``_BatchNorm``, PyTorch's ``_NormBase`` + ``_BatchNorm``): the op,
:func:`minitorch_ln.ops.batch_norm.batch_norm`, takes any ``(N, C, ...)`` input as ``(N, C, L)``; the
subclasses only say which input ranks they accept (``_ranks``, checked by ``_check_input_dim``). The math and its
hand-derived backward: ``ops/batch_norm.py`` and ``docs/layernorm_backward.md`` (section 8).
Parameter and buffer names match PyTorch's, so a PyTorch ``state_dict`` loads with ``load_state_dict``.
"""

from __future__ import annotations

import numbers

from ..autograd.grad_mode import no_grad
from ..ops.creation import ones, zeros
from ..ops.normalization_common import check_eps as _check_eps
from ..tensor import tensor
from . import functional as F
from .module import Module
from .parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]


def _fill(t, value) -> None:
    """Fill a parameter or buffer in place, outside the graph, and count it as a change (version)."""
    with no_grad():
        t.array.fill(value)
        t._bump_version()


class _NormBase(Module):
    """What BatchNorm and InstanceNorm share (PyTorch's ``_NormBase``): ``num_features`` channels, the
    optional affine ``weight`` (ones) and ``bias`` (zeros), and the optional running statistics
    ``running_mean`` (zeros), ``running_var`` (ones) and ``num_batches_tracked`` (int64)."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True):
        super().__init__()
        name = type(self).__name__
        if isinstance(num_features, bool) or not isinstance(num_features, numbers.Integral) or num_features <= 0:
            raise ValueError(f"{name}: num_features must be a positive int, got {num_features!r}")
        if momentum is not None and (isinstance(momentum, bool) or not isinstance(momentum, numbers.Real)):
            raise TypeError(f"{name}: momentum must be a float or None, got {momentum!r}")
        self.num_features, self.momentum = int(num_features), momentum
        self.eps = _check_eps(eps, name)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(ones(self.num_features, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(zeros(self.num_features, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(self.num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", ones(self.num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", tensor(0, dtype="int64", device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, ``num_batches_tracked`` 0 (when tracked)."""
        if self.track_running_stats:
            _fill(self.running_mean, 0)
            _fill(self.running_var, 1)
            _fill(self.num_batches_tracked, 0)

    def reset_parameters(self) -> None:
        """The running statistics reset, and ``weight`` = 1, ``bias`` = 0 (when ``affine``)."""
        self.reset_running_stats()
        if self.affine:
            _fill(self.weight, 1)
            if self.bias is not None:
                _fill(self.bias, 0)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    """Batch normalization (Ioffe & Szegedy, 2015) over every axis of ``(N, C, ...)`` but the channels.

    Training: each channel is normalized with the batch mean and *biased* variance over ``N`` and
    the trailing axes; the running statistics are updated with ``momentum`` (``None``: the
    cumulative average, ``1 / num_batches_tracked``) and the *unbiased* variance. Eval: the running
    statistics are used, unless ``track_running_stats=False`` (then batch statistics always).

    Args:
        num_features: ``C``, the size of axis 1.
        eps: added to the variance inside the square root (default 1e-5).
        momentum: the weight of each new batch in the running statistics (default 0.1), or None.
        affine: learn ``weight`` (γ, ones) and ``bias`` (β, zeros).
        bias: (keyword-only, as PyTorch 2.13) with ``affine``, whether to learn ``bias`` too.
        track_running_stats: keep ``running_mean`` (zeros), ``running_var`` (ones) and
            ``num_batches_tracked`` (int64) as buffers.
        device, dtype: of the parameters and the running statistics.
    Raises:
        ValueError: (when built) ``num_features`` not a positive int, a bad ``eps``; (in forward) an
            input of the wrong rank ("expected 4D input (got 3D input)", as PyTorch), a channel count
            other than ``num_features``, or one value per channel in training.
        TypeError: (in forward) integer input.
    """

    _ranks: "tuple | None" = None  # the input ranks a subclass accepts
    _expected = "(N, C, ...)"  # and their shapes, for the error message

    def _check_input_dim(self, input) -> None:
        """Raise PyTorch's ValueError unless ``input`` has one of ``_ranks`` (a subclass may override
        this method instead, as of PyTorch's ``_BatchNorm``, whose own raises NotImplementedError)."""
        if self._ranks is None:
            raise NotImplementedError(f"{type(self).__name__}: a _BatchNorm subclass names the input ranks it accepts")
        if input.ndim not in self._ranks:
            ranks = " or ".join(f"{r}D" for r in self._ranks)
            raise ValueError(f"{type(self).__name__}: expected {ranks} input (got {input.ndim}D input), an input "
                             f"of shape {self._expected}; got shape {tuple(input.shape)}")

    def forward(self, input):
        self._check_input_dim(input)
        if input.shape[1] != self.num_features:
            raise ValueError(
                f"{type(self).__name__}: expected {self.num_features} channels on axis 1 (num_features), got input "
                f"of shape {tuple(input.shape)}"
            )
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.array[...] += 1
                self.num_batches_tracked._bump_version()
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats  # a module that tracks nothing passes no buffers
        return F.batch_norm(input, self.running_mean if keep else None, self.running_var if keep else None,
                            self.weight, self.bias, use_batch_stats, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """:class:`_BatchNorm` of ``(N, C)`` or ``(N, C, L)`` input, as ``torch.nn.BatchNorm1d``.

    Raises:
        ValueError: an input that is not 2-D or 3-D ("expected 2D or 3D input (got 4D input)").
    """

    _ranks = (2, 3)
    _expected = "(N, C) or (N, C, L)"


class BatchNorm2d(_BatchNorm):
    """:class:`_BatchNorm` of ``(N, C, H, W)`` input, each channel over ``N, H, W``, as ``torch.nn.BatchNorm2d``.

    Raises:
        ValueError: an input that is not 4-D ("expected 4D input (got 3D input)").
    """

    _ranks = (4,)
    _expected = "(N, C, H, W)"


class BatchNorm3d(_BatchNorm):
    """:class:`_BatchNorm` of ``(N, C, D, H, W)`` input, each channel over ``N, D, H, W``, as ``torch.nn.BatchNorm3d``.

    Raises:
        ValueError: an input that is not 5-D ("expected 5D input (got 4D input)").
    """

    _ranks = (5,)
    _expected = "(N, C, D, H, W)"

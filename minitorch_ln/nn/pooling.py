"""Pooling layers: ``MaxPool1d/2d/3d``, ``AvgPool1d/2d/3d``, ``AdaptiveAvgPool1d/2d/3d``, ``AdaptiveMaxPool1d/2d/3d``,
``LPPool1d/2d/3d``, ``MaxUnpool1d/2d/3d``, ``FractionalMaxPool2d/3d``.

Thin wrappers over ``ops/pooling.py`` with PyTorch's constructor arguments and ``extra_repr``; no
parameters. Shapes and errors are those of the functions.
"""

from __future__ import annotations

from ..ops import pooling as P
from ..ops import pooling_lp as LP
from ..ops import pooling_fractional as FR
from ..ops import pooling_unpool as UP
from ..ops.convolution import ntuple
from .module import Module


class _MaxPoolNd(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if (stride is not None) else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                              self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """``(N, C, L)`` or ``(C, L)`` → ``(N, C, OL)``; see :func:`~minitorch_ln.ops.pooling.max_pool1d`."""

    _fn = staticmethod(P.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """``(N, C, H, W)`` or ``(C, H, W)`` → ``(N, C, OH, OW)``; see :func:`~minitorch_ln.ops.pooling.max_pool2d`."""

    _fn = staticmethod(P.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """``(N, C, D, H, W)`` or ``(C, D, H, W)`` → ``(N, C, OD, OH, OW)``; see :func:`~minitorch_ln.ops.pooling.max_pool3d`."""

    _fn = staticmethod(P.max_pool3d)


class AvgPool1d(Module):
    """``(N, C, L)`` or ``(C, L)`` → ``(N, C, OL)``; see :func:`~minitorch_ln.ops.pooling.avg_pool1d`."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if (stride is not None) else kernel_size
        self.padding, self.ceil_mode, self.count_include_pad = padding, ceil_mode, count_include_pad

    def forward(self, input):
        return P.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self._t(self.kernel_size)}, stride={self._t(self.stride)}, padding={self._t(self.padding)}"

    @staticmethod
    def _t(v):  # PyTorch's AvgPool1d stores single-element tuples
        return tuple(v) if isinstance(v, (tuple, list)) else (v,)


class _AvgPoolNd(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if (stride is not None) else kernel_size
        self.padding, self.ceil_mode, self.count_include_pad = padding, ceil_mode, count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                              self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """``(N, C, H, W)`` or ``(C, H, W)`` → ``(N, C, OH, OW)``; see :func:`~minitorch_ln.ops.pooling.avg_pool2d`."""

    _fn = staticmethod(P.avg_pool2d)


class AvgPool3d(_AvgPoolNd):
    """``(N, C, D, H, W)`` or ``(C, D, H, W)`` → ``(N, C, OD, OH, OW)``; see :func:`~minitorch_ln.ops.pooling.avg_pool3d`."""

    _fn = staticmethod(P.avg_pool3d)


class _AdaptiveAvgPoolNd(Module):
    _fn = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return type(self)._fn(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """``(N, C, L)`` or ``(C, L)`` → ``(N, C, output_size)``."""

    _fn = staticmethod(P.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """``(N, C, H, W)`` or ``(C, H, W)`` → ``(N, C, *output_size)``."""

    _fn = staticmethod(P.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """``(N, C, D, H, W)`` or ``(C, D, H, W)`` → ``(N, C, *output_size)``."""

    _fn = staticmethod(P.adaptive_avg_pool3d)


class _AdaptiveMaxPoolNd(Module):
    _fn = None

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        return type(self)._fn(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """``(N, C, L)`` or ``(C, L)`` → ``(N, C, output_size)``; ``return_indices`` adds int64 indices."""

    _fn = staticmethod(P.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """``(N, C, H, W)`` or ``(C, H, W)`` → ``(N, C, *output_size)``; ``return_indices`` adds int64 indices."""

    _fn = staticmethod(P.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """``(N, C, D, H, W)`` or ``(C, D, H, W)`` → ``(N, C, *output_size)``; ``return_indices`` adds int64 indices."""

    _fn = staticmethod(P.adaptive_max_pool3d)


class _LPPoolNd(Module):
    _fn = None

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input):
        return type(self)._fn(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling ``(N, C, L)`` or ``(C, L)`` → ``(N, C, OL)``; see :func:`~minitorch_ln.ops.pooling_lp.lp_pool1d`."""

    _fn = staticmethod(LP.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """Power-average pooling ``(N, C, H, W)`` or ``(C, H, W)`` → ``(N, C, OH, OW)``."""

    _fn = staticmethod(LP.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """Power-average pooling ``(N, C, D, H, W)`` or ``(C, D, H, W)`` → ``(N, C, OD, OH, OW)``."""

    _fn = staticmethod(LP.lp_pool3d)


class _MaxUnpoolNd(Module):
    _fn = None
    _nd = 1

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        name, nd = type(self).__name__, self._nd  # stored as tuples, as PyTorch's _single/_pair/_triple
        self.kernel_size = ntuple(kernel_size, nd, "kernel_size", name)
        self.stride = ntuple(stride if stride is not None else kernel_size, nd, "stride", name)
        self.padding = ntuple(padding, nd, "padding", name)

    def forward(self, input, indices, output_size=None):
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Partial inverse of ``MaxPool1d``: ``forward(input, indices, output_size=None)``."""

    _fn = staticmethod(UP.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """Partial inverse of ``MaxPool2d``: ``forward(input, indices, output_size=None)``."""

    _fn = staticmethod(UP.max_unpool2d)
    _nd = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """Partial inverse of ``MaxPool3d``: ``forward(input, indices, output_size=None)``."""

    _fn = staticmethod(UP.max_unpool3d)
    _nd = 3


class _FractionalMaxPoolNd(Module):
    _fn = None
    _nd = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__()
        name = type(self).__name__
        self.kernel_size, self.return_indices = kernel_size, return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = ntuple(output_size, self._nd, "output_size", name) if output_size is not None else None
        self.output_ratio = None
        if output_ratio is not None:
            self.output_ratio = (output_ratio,) * self._nd if not isinstance(output_ratio, (tuple, list)) \
                else tuple(output_ratio)
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                              _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling ``(N, C, H, W)`` → ``(N, C, *output_size)``; see
    :func:`~minitorch_ln.ops.pooling_fractional.fractional_max_pool2d`."""

    _fn = staticmethod(FR.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling ``(N, C, T, H, W)`` → ``(N, C, *output_size)``."""

    _fn = staticmethod(FR.fractional_max_pool3d)
    _nd = 3

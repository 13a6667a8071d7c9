"""Padding layers: ``ReflectionPad1d/2d/3d``, ``ReplicationPad1d/2d/3d``, ``CircularPad1d/2d/3d``,
``ConstantPad1d/2d/3d``, ``ZeroPad1d/2d/3d`` (as ``torch.nn``).

Each is :func:`~minitorch_ln.ops.padding.pad` with a stored ``padding``: an int (the same on every
side) or a tuple of ``2·n`` ints in ``F.pad``'s order (last dimension first: left, right, top,
bottom, front, back). No parameters; shapes and errors are those of ``pad``.
"""

from __future__ import annotations

import numbers

from ..ops.padding import pad
from .module import Module


def _padding(padding, n: int, name: str) -> tuple:
    """PyTorch's ``_ntuple(2·n)`` of the constructor: an int → ``2·n`` copies; a tuple must hold ``2·n`` ints."""
    if isinstance(padding, numbers.Integral) and not isinstance(padding, bool):
        return (int(padding),) * (2 * n)
    if isinstance(padding, (tuple, list)) and len(padding) == 2 * n and all(
            isinstance(p, numbers.Integral) and not isinstance(p, bool) for p in padding):
        return tuple(int(p) for p in padding)
    raise ValueError(f"{name}: padding must be an int or a tuple of {2 * n} ints, got {padding!r}")


class _PadNd(Module):
    _mode = "constant"
    _n = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _padding(padding, self._n, type(self).__name__)

    def forward(self, input):  # noqa: A002
        if self._mode == "circular" and getattr(input, "ndim", None) not in (self._n + 1, self._n + 2):
            # as PyTorch's _CircularPadNd._check_input_dim (the other modes leave the check to F.pad)
            raise ValueError(f"{type(self).__name__}: expected {self._n + 1}D or {self._n + 2}D input (got "
                             f"{getattr(input, 'ndim', type(input).__name__)}D input)")
        return pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float):
        super().__init__(padding)
        self.value = value

    def forward(self, input):  # noqa: A002
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ReflectionPad1d(_PadNd):
    """Reflect the last dim (``(C, W)`` or ``(N, C, W)``); each pad smaller than that dim."""
    _mode, _n = "reflect", 1


class ReflectionPad2d(_PadNd):
    """Reflect the last two dims (``(C, H, W)`` or ``(N, C, H, W)``); each pad smaller than its dim."""
    _mode, _n = "reflect", 2


class ReflectionPad3d(_PadNd):
    """Reflect the last three dims (``(C, D, H, W)`` or ``(N, C, D, H, W)``); each pad smaller than its dim."""
    _mode, _n = "reflect", 3


class ReplicationPad1d(_PadNd):
    """Repeat the edge values of the last dim (``(C, W)`` or ``(N, C, W)``)."""
    _mode, _n = "replicate", 1


class ReplicationPad2d(_PadNd):
    """Repeat the edge values of the last two dims (``(C, H, W)`` or ``(N, C, H, W)``)."""
    _mode, _n = "replicate", 2


class ReplicationPad3d(_PadNd):
    """Repeat the edge values of the last three dims (``(C, D, H, W)`` or ``(N, C, D, H, W)``)."""
    _mode, _n = "replicate", 3


class CircularPad1d(_PadNd):
    """Wrap the last dim around (``(C, W)`` or ``(N, C, W)``); each pad at most that dim."""
    _mode, _n = "circular", 1


class CircularPad2d(_PadNd):
    """Wrap the last two dims around (``(C, H, W)`` or ``(N, C, H, W)``); each pad at most its dim."""
    _mode, _n = "circular", 2


class CircularPad3d(_PadNd):
    """Wrap the last three dims around (``(C, D, H, W)`` or ``(N, C, D, H, W)``); each pad at most its dim."""
    _mode, _n = "circular", 3


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value`` (any input of at least one dim; negative pads crop)."""
    _n = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with ``value`` (negative pads crop)."""
    _n = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with ``value`` (negative pads crop)."""
    _n = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pad the last dim with zeros (negative pads crop)."""
    _n = 1


class ZeroPad2d(_ZeroPadNd):
    """Pad the last two dims with zeros (negative pads crop)."""
    _n = 2


class ZeroPad3d(_ZeroPadNd):
    """Pad the last three dims with zeros (negative pads crop)."""
    _n = 3

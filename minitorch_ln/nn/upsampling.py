"""Resizing layers: ``Upsample``, ``UpsamplingNearest2d``, ``UpsamplingBilinear2d``, ``PixelShuffle``,
``PixelUnshuffle``, ``ChannelShuffle``.

Thin wrappers over ``ops/interpolate.py`` and ``ops/pixel_shuffle.py`` with PyTorch's constructor
arguments (``scale_factor`` stored as a float or a tuple of floats) and ``extra_repr``; no
parameters. Shapes and errors are those of the functions.
"""

from __future__ import annotations

from ..ops.interpolate import interpolate
from ..ops.pixel_shuffle import channel_shuffle, pixel_shuffle, pixel_unshuffle
from .module import Module


class Upsample(Module):
    """``(N, C, L)`` or ``(N, C, H, W)`` → ``(N, C, *size)`` or scaled by ``scale_factor``; see
    :func:`~minitorch_ln.ops.interpolate.interpolate` for the modes minitorch_ln supports."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners, self.recompute_scale_factor = mode, align_corners, recompute_scale_factor

    def forward(self, input):
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """``Upsample(size, scale_factor, mode='nearest')`` for ``(N, C, H, W)`` input."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample(size, scale_factor, mode='bilinear', align_corners=True)`` for ``(N, C, H, W)`` input
    (``align_corners=True``, as PyTorch's layer)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class PixelShuffle(Module):
    """``(*, C·r², H, W)`` → ``(*, C, H·r, W·r)``; see :func:`~minitorch_ln.ops.pixel_shuffle.pixel_shuffle`."""

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``(*, C, H·r, W·r)`` → ``(*, C·r², H, W)``; see :func:`~minitorch_ln.ops.pixel_shuffle.pixel_unshuffle`."""

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """``(N, C, *)`` → ``(N, C, *)`` with the channels of ``groups`` groups interleaved; see
    :func:`~minitorch_ln.ops.pixel_shuffle.channel_shuffle`."""

    def __init__(self, groups: int):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"

"""Sliding-block layers: ``Unfold`` (im2col) and ``Fold`` (col2im).

Thin wrappers over ``ops/fold.py`` with PyTorch's constructor arguments and ``extra_repr``; no
parameters. Shapes and errors are those of the functions.
"""

from __future__ import annotations

from ..ops.fold import fold, unfold
from .module import Module


class Fold(Module):
    """``(N, C·kh·kw, L)`` or ``(C·kh·kw, L)`` → ``(N, C, *output_size)``, overlapping blocks summed;
    see :func:`~minitorch_ln.ops.fold.fold`."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """``(N, C, H, W)`` or ``(C, H, W)`` → ``(N, C·kh·kw, L)``; see :func:`~minitorch_ln.ops.fold.unfold`."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, stride={self.stride}"

"""Channel-wise and alpha dropout layers: ``Dropout1d/2d/3d``, ``AlphaDropout``, ``FeatureAlphaDropout``
(``Dropout`` itself: ``nn/activation.py``). Each calls its function in ``ops/dropout.py`` with
``self.training``; no parameters. Raise ValueError for ``p`` outside [0, 1], as PyTorch's."""

from __future__ import annotations

from ..ops.dropout import alpha_dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout
from .module import Module


class _DropoutNd(Module):
    _fn = None

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):  # noqa: A002
        return type(self)._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` while training."""

    _fn = staticmethod(dropout1d)


class Dropout2d(_DropoutNd):
    """Zero whole channels of ``(N, C, H, W)`` while training (a 3-D input: ``(N, C, L)``, as PyTorch)."""

    _fn = staticmethod(dropout2d)


class Dropout3d(_DropoutNd):
    """Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` while training."""

    _fn = staticmethod(dropout3d)


class AlphaDropout(_DropoutNd):
    """Alpha dropout (for SELU networks) while training; any shape."""

    _fn = staticmethod(alpha_dropout)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels ``(N, C, *)`` while training."""

    _fn = staticmethod(feature_alpha_dropout)

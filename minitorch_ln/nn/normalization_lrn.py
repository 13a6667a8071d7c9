"""``LocalResponseNorm``, as ``torch.nn.LocalResponseNorm``: the module around
:func:`minitorch_ln.ops.local_response_norm.local_response_norm` (derivation: ``docs/local_response_norm.md``).
"""

from __future__ import annotations

from ..ops.local_response_norm import local_response_norm
from .module import Module

__all__ = ["LocalResponseNorm"]


class LocalResponseNorm(Module):
    """Local response normalization across channels (Krizhevsky et al., 2012), as ``torch.nn.LocalResponseNorm``.

    ``y_c = x_c / (k + (alpha/size) · Σ_{c' ∈ window(c)} x_{c'}²)^beta`` over a window of ``size``
    channels centred on ``c`` (zero-padded: ``size//2`` before, ``(size-1)//2`` after). Input
    ``(N, C, *)`` with at least 3 dims → output of the same shape and dtype. No parameters.

    Args:
        size: channels per window (≥ 1).
        alpha, beta, k: the formula's constants (defaults 1e-4, 0.75, 1.0).
    Raises:
        ValueError: (in forward) an input of fewer than 3 dims, ``size`` not a positive int.
        TypeError: (in forward) integer input.
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"

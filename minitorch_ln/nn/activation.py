"""Activation layers and ``Dropout``: thin modules over :mod:`minitorch_ln.nn.functional`.

Each keeps PyTorch's class name, arguments and defaults, and has no parameters; they exist so a
model can be written as a ``Sequential`` and printed like its PyTorch twin.
"""

from __future__ import annotations

import warnings

from . import functional as F
from .module import Module


class ReLU(Module):
    """``max(x, 0)`` elementwise: any shape ``(*)`` → ``(*)``, same dtype.

    ``inplace`` is accepted for signature parity with PyTorch and ignored: the result is always a
    new tensor (an in-place activation would overwrite what backward needs).
    """

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002 - PyTorch's name
        return F.relu(input)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    """Gaussian Error Linear Unit (Hendrycks & Gimpel, 2016): ``(*)`` → ``(*)``.

    ``approximate="none"``: ``x · Φ(x) = x · ½(1 + erf(x/√2))``; ``approximate="tanh"``:
    ``½x(1 + tanh(√(2/π)(x + 0.044715x³)))``.

    Raises:
        ValueError: ``approximate`` is neither ``"none"`` nor ``"tanh"``.
    """

    def __init__(self, approximate: str = "none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, input):  # noqa: A002
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    """``tanh(x)`` elementwise: ``(*)`` → ``(*)``."""

    def forward(self, input):  # noqa: A002
        return F.tanh(input)


class Sigmoid(Module):
    """``1 / (1 + exp(-x))`` elementwise: ``(*)`` → ``(*)``."""

    def forward(self, input):  # noqa: A002
        return F.sigmoid(input)


def _legacy_softmax_dim(name: str, ndim: int) -> int:
    # PyTorch's rule for dim=None (kept for parity, with its warning): 0 for 0-, 1- and 3-D, else 1.
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        UserWarning,
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


class Softmax(Module):
    """``exp(x_i) / Σ_j exp(x_j)`` along ``dim``: ``(*)`` → ``(*)``; each slice along ``dim`` sums to 1.

    Pass ``dim`` explicitly; ``dim=None`` follows PyTorch's deprecated implicit choice and warns.
    """

    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, input):  # noqa: A002
        dim = self.dim if self.dim is not None else _legacy_softmax_dim("Softmax", input.ndim)
        return F.softmax(input, dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax2d(Module):
    """Softmax over the channels at every position: ``(N, C, H, W)`` or ``(C, H, W)`` → same shape
    (``softmax`` along dim ``-3``), as ``torch.nn.Softmax2d``.

    Raises ValueError for an input that is not 3-D or 4-D (PyTorch's message).
    """

    def forward(self, input):  # noqa: A002
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3)


class LogSoftmax(Module):
    """``log(softmax(x))`` along ``dim``, computed stably as ``x - logsumexp(x)``: ``(*)`` → ``(*)``."""

    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, input):  # noqa: A002
        dim = self.dim if self.dim is not None else _legacy_softmax_dim("LogSoftmax", input.ndim)
        return F.log_softmax(input, dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Dropout(Module):
    """Zero each element with probability ``p`` while training and scale the rest by ``1/(1-p)``.

    ``(*)`` → ``(*)``. In ``eval()`` mode (``self.training`` False) it is the identity. The mask
    comes from the input device's seeded generator (:func:`minitorch_ln.manual_seed`).
    Srivastava et al. (2014), "Dropout: a simple way to prevent neural networks from overfitting".

    Raises:
        ValueError: ``p`` outside ``[0, 1]``.
    """

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = float(p), inplace

    def forward(self, input):  # noqa: A002
        return F.dropout(input, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"

"""Activation layers over :mod:`minitorch_ln.ops.activation`, with PyTorch's class names, arguments,
defaults, attributes and ``repr``.

``inplace=True`` is accepted everywhere PyTorch accepts it, shown in ``repr`` as PyTorch shows it,
and ignored: the result is always a new tensor (in-place semantics are being reworked, and an
in-place activation would overwrite what backward needs). Only :class:`PReLU` has a parameter,
``weight`` of shape ``(num_parameters,)``, so a PyTorch ``PReLU`` state dict loads unchanged.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import backend
from ..autograd.grad_mode import no_grad
from .. import ops as A  # the activation ops (ops/activation.py, ops/activation_piecewise.py)
from .module import Module
from .parameter import Parameter


def _inplace(inplace: bool, first: bool = False) -> str:
    if not inplace:
        return ""
    return "inplace=True" if first else ", inplace=True"


class _Inplace(Module):
    """A parameterless activation whose only option is ``inplace`` (accepted, out of place here)."""

    _show_inplace = True  # PyTorch's Hardsigmoid and Hardswish do not print it

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return _inplace(self.inplace, first=True) if self._show_inplace else ""


class SiLU(_Inplace):
    """``x·σ(x)`` elementwise: ``(*)`` → ``(*)`` (see :func:`minitorch_ln.ops.activation.silu`)."""

    def forward(self, input):  # noqa: A002 - PyTorch's name
        return A.silu(input)


class Mish(_Inplace):
    """``x·tanh(softplus(x))``: ``(*)`` → ``(*)``."""

    def forward(self, input):  # noqa: A002
        return A.mish(input)


class SELU(_Inplace):
    """``scale·elu(x, alpha)`` with Klambauer et al.'s constants: ``(*)`` → ``(*)``."""

    def forward(self, input):  # noqa: A002
        return A.selu(input)


class Hardsigmoid(_Inplace):
    """``clamp(x + 3, 0, 6)/6``: ``(*)`` → ``(*)``."""

    _show_inplace = False

    def forward(self, input):  # noqa: A002
        return A.hardsigmoid(input)


class Hardswish(_Inplace):
    """``x·clamp(x + 3, 0, 6)/6``: ``(*)`` → ``(*)``."""

    _show_inplace = False

    def forward(self, input):  # noqa: A002
        return A.hardswish(input)


class LeakyReLU(Module):
    """``x`` if ``x > 0`` else ``negative_slope·x``: ``(*)`` → ``(*)``."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):  # noqa: A002
        return A.leaky_relu(input, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace(self.inplace)}"


class RReLU(Module):
    """Randomized leaky ReLU: slopes from ``U(lower, upper)`` while training, their mean in ``eval()``."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):  # noqa: A002
        return A.rrelu(input, self.lower, self.upper, self.training)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace(self.inplace)}"


class _Alpha(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace(self.inplace)}"


class ELU(_Alpha):
    """``x`` if ``x > 0`` else ``alpha·(e^x - 1)``: ``(*)`` → ``(*)``."""

    def forward(self, input):  # noqa: A002
        return A.elu(input, self.alpha)


class CELU(_Alpha):
    """``max(0, x) + min(0, alpha·(e^(x/alpha) - 1))``: ``(*)`` → ``(*)``. Raises RuntimeError for alpha 0 (on call)."""

    def forward(self, input):  # noqa: A002
        return A.celu(input, self.alpha)


class Softplus(Module):
    """``log(1 + e^(βx))/β``, linear where ``βx > threshold``: ``(*)`` → ``(*)``."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):  # noqa: A002
        return A.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softsign(Module):
    """``x / (1 + |x|)``: ``(*)`` → ``(*)``."""

    def forward(self, input):  # noqa: A002
        return A.softsign(input)


class LogSigmoid(Module):
    """``log σ(x)``, stable for large ``|x|``: ``(*)`` → ``(*)``."""

    def forward(self, input):  # noqa: A002
        return A.logsigmoid(input)


class Tanhshrink(Module):
    """``x - tanh(x)``: ``(*)`` → ``(*)``."""

    def forward(self, input):  # noqa: A002
        return A.tanhshrink(input)


class _BoundsError(ValueError, AssertionError):
    """Hardtanh's bounds are out of order (PyTorch raises AssertionError)."""


class Hardtanh(Module):
    """``clamp(x, min_val, max_val)``: ``(*)`` → ``(*)``.

    ``min_value``/``max_value`` are PyTorch's deprecated spellings (they warn).

    Raises:
        ValueError (also an AssertionError, as PyTorch's): ``max_val <= min_val``.
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`", stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`", stacklevel=2)
            max_val = max_value
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        if self.max_val <= self.min_val:
            raise _BoundsError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input):  # noqa: A002
        return A.hardtanh(input, self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace(self.inplace)}"


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``: ``(*)`` → ``(*)`` (a ``Hardtanh(0., 6.)``, as in PyTorch)."""

    def __init__(self, inplace: bool = False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace(self.inplace, first=True)


class Threshold(Module):
    """``x`` where ``x > threshold``, else ``value``: ``(*)`` → ``(*)``."""

    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):  # noqa: A002
        return A.threshold(input, self.threshold, self.value)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace(self.inplace)}"


class _Lambd(Module):
    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        return str(self.lambd)


class Softshrink(_Lambd):
    """``x ∓ lambd`` outside ``[-lambd, lambd]``, 0 inside: ``(*)`` → ``(*)``."""

    def forward(self, input):  # noqa: A002
        return A.softshrink(input, self.lambd)


class Hardshrink(_Lambd):
    """``x`` outside ``[-lambd, lambd]``, 0 inside: ``(*)`` → ``(*)``."""

    def forward(self, input):  # noqa: A002
        return A.hardshrink(input, self.lambd)


class GLU(Module):
    """``a·σ(b)`` for the two halves ``a, b`` of the input along ``dim``: ``(*, 2H, *)`` → ``(*, H, *)``."""

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, input):  # noqa: A002
        return A.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(Module):
    """``softmax(-x)`` along ``dim``: ``(*)`` → ``(*)``. ``dim=None`` uses PyTorch's deprecated implicit choice (warns)."""

    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, input):  # noqa: A002
        return A.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class PReLU(Module):
    """``x`` if ``x > 0`` else ``weight·x``; one learned slope, or one per channel (dim 1): ``(N, C, *)`` → same.

    Attributes:
        weight: ``Parameter`` of shape ``(num_parameters,)``, filled with ``init`` (PyTorch's layout).
    Args:
        num_parameters: 1, or the number of channels ``C`` of the input.
        init: initial slope. device, dtype: of ``weight`` (default: CPU, the default float dtype).
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        dt = backend.as_dtype(dtype) if dtype is not None else backend.default_float_dtype()
        w = np.empty((num_parameters,), dtype=dt)
        self.weight = Parameter(backend.to_device(w, device) if device is not None else w)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Refill ``weight`` with ``init``."""
        with no_grad():
            self.weight.fill_(self.init)

    def forward(self, input):  # noqa: A002
        return A.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


__all__ = [
    "CELU",
    "ELU",
    "GLU",
    "SELU",
    "Hardshrink",
    "Hardsigmoid",
    "Hardswish",
    "Hardtanh",
    "LeakyReLU",
    "LogSigmoid",
    "Mish",
    "PReLU",
    "RReLU",
    "ReLU6",
    "SiLU",
    "Softmin",
    "Softplus",
    "Softshrink",
    "Softsign",
    "Tanhshrink",
    "Threshold",
]

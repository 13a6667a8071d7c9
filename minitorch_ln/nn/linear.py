"""``Linear`` and ``Identity``."""

from __future__ import annotations

import math
import numbers

from ..ops.creation import empty
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class Identity(Module):
    """Returns its input unchanged (any shape); arguments are accepted and ignored, as in PyTorch."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):  # noqa: A002 - PyTorch's name
        return input


class Linear(Module):
    """``y = x Wᵀ + b``: input ``(*, in_features)`` → output ``(*, out_features)``.

    Parameters ``weight`` ``(out_features, in_features)`` and ``bias`` ``(out_features,)``,
    initialised as PyTorch does: uniform on ±1/sqrt(in_features). dtype float32 unless ``dtype``.

    Raises:
        ValueError: sizes that are not non-negative ints; (in forward) an input whose last
            dimension is not ``in_features``.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None):
        super().__init__()
        for name, v in (("in_features", in_features), ("out_features", out_features)):
            if not isinstance(v, numbers.Integral) or isinstance(v, bool) or v < 0:
                raise ValueError(f"Linear: {name} must be a non-negative int, got {v!r}")
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(empty(out_features, in_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))  # = uniform(±1/sqrt(fan_in))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):  # noqa: A002 - PyTorch's name (module_db calls forward(input=...))
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """``y = x1ᵀ A x2 + b``: ``(*, in1)``, ``(*, in2)`` → ``(*, out)``, as ``torch.nn.Bilinear``.

    ``weight (out, in1, in2)`` and ``bias (out,)``, both uniform on ``±1/sqrt(in1)`` (PyTorch's
    ``reset_parameters``). Raises ValueError for ``in1_features <= 0``; forward as :func:`F.bilinear`.
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(empty(out_features, in1_features, in2_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.in1_features <= 0:
            raise ValueError(f"in1_features must be > 0, but got (in1_features={self.in1_features})")
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")

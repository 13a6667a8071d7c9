"""Convolution layers: ``Conv1d/2d/3d``, ``ConvTranspose1d/2d/3d`` (their ``Lazy`` forms: ``nn/lazy.py``).

Parameters, their names, layouts and initialisation are PyTorch's, so a PyTorch ``state_dict``
loads unchanged: ``weight`` ``(out, in/groups, *kernel)`` (transposed: ``(in, out/groups, *kernel)``),
``bias`` ``(out,)``; ``weight`` by ``kaiming_uniform_(a=sqrt(5))``, ``bias`` uniform on
``±1/sqrt(fan_in)``.
"""

from __future__ import annotations

import math
import numbers

from ..ops.convolution import conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, ntuple
from ..ops.padding import pad
from ..ops.creation import empty
from . import init
from .module import Module
from .parameter import Parameter

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    _nd = 2
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                 padding_mode, output_padding=0, device=None, dtype=None):
        super().__init__()
        name, nd = type(self).__name__, self._nd
        for what, v in (("in_channels", in_channels), ("out_channels", out_channels)):
            if not isinstance(v, numbers.Integral) or isinstance(v, bool) or v < 0:
                raise ValueError(f"{name}: {what} must be a non-negative int, got {v!r}")
        if not isinstance(groups, numbers.Integral) or groups <= 0:
            raise ValueError(f"{name}: groups must be a positive integer, got {groups!r}")
        if in_channels % groups:
            raise ValueError(f"{name}: in_channels must be divisible by groups, got in_channels={in_channels}, "
                             f"groups={groups}")
        if out_channels % groups:
            raise ValueError(f"{name}: out_channels must be divisible by groups, got out_channels={out_channels}, "
                             f"groups={groups}")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {list(_PADDING_MODES)}, but got padding_mode={padding_mode!r}")
        if self._transposed and padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {name}')
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = ntuple(kernel_size, nd, "kernel_size", name)
        self.stride = ntuple(stride, nd, "stride", name)
        self.dilation = ntuple(dilation, nd, "dilation", name)
        self.output_padding = ntuple(output_padding, nd, "output_padding", name)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = ntuple(padding, nd, "padding", name)
        self.padding_mode = padding_mode
        # F.pad order (last dim first), as PyTorch's _reversed_padding_repeated_twice
        if padding == "same":
            pairs = [(d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for k, d in zip(self.kernel_size, self.dilation)]
        elif padding == "valid":
            pairs = [(0, 0)] * nd
        else:
            pairs = [(p, p) for p in self.padding]
        self._reversed_padding_repeated_twice = tuple(v for pair in reversed(pairs) for v in pair)
        shape = ((in_channels, out_channels // groups) if self._transposed else (out_channels, in_channels // groups))
        self.weight = Parameter(empty(*shape, *self.kernel_size, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1] * math.prod(self.kernel_size)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        nd = self._nd
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    _fn = staticmethod(conv2d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, 0, device, dtype)

    def forward(self, input):
        if self.padding_mode != "zeros":
            input = pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return self._fn(input, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return self._fn(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Conv1d(_Conv):
    """1-d convolution over ``(N, C_in, L)`` (or ``(C_in, L)``) → ``(N, C_out, L_out)``; see ``torch.nn.Conv1d``.

    Raises ValueError for channels not divisible by ``groups``, a bad ``padding`` string or
    ``padding_mode``, ``padding='same'`` with a stride; forward raises as :func:`conv1d`.
    """

    _nd = 1
    _fn = staticmethod(conv1d)


class Conv2d(_Conv):
    """2-d convolution over ``(N, C_in, H, W)`` (or ``(C_in, H, W)``) → ``(N, C_out, H_out, W_out)``;
    see ``torch.nn.Conv2d``. ``padding_mode`` ``'zeros'`` (default), ``'reflect'``, ``'replicate'`` or
    ``'circular'`` (done with :func:`pad`). Raises as :class:`Conv1d`; forward as :func:`conv2d`.
    """

    _nd = 2
    _fn = staticmethod(conv2d)


class Conv3d(_Conv):
    """3-d convolution over ``(N, C_in, D, H, W)`` (or ``(C_in, D, H, W)``) → ``(N, C_out, D_out, H_out, W_out)``;
    see ``torch.nn.Conv3d``. Arguments and errors as :class:`Conv2d`; forward as :func:`conv3d`.
    """

    _nd = 3
    _fn = staticmethod(conv3d)


class _ConvTranspose(_ConvNd):
    _transposed = True
    _fn = staticmethod(conv_transpose2d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if isinstance(padding, str):  # PyTorch: ValueError for a string padding here
            raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple of ints, got {padding!r}")  # noqa: TRY004
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, output_padding, device, dtype)

    def _output_padding(self, input, output_size):
        """``output_padding`` giving ``output_size`` (PyTorch's ``_ConvTransposeNd._output_padding``)."""
        if output_size is None:
            return self.output_padding
        nd = self._nd
        output_size = list(output_size)
        if len(output_size) in (nd + 1, nd + 2):
            output_size = output_size[-nd:]
        if len(output_size) != nd:
            raise ValueError(f"ConvTranspose{nd}D: for {input.ndim}D input, output_size must have {nd} or {nd + 2} "
                             f"elements (got {len(output_size)})")
        spatial = input.shape[-nd:]
        result = []
        for i in range(nd):
            lo = ((spatial[i] - 1) * self.stride[i] - 2 * self.padding[i]
                  + self.dilation[i] * (self.kernel_size[i] - 1) + 1)
            hi = lo + self.stride[i] - 1
            if not lo <= output_size[i] <= hi:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {lo} to "
                                 f"{hi} (for an input of {list(spatial)})")
            result.append(output_size[i] - lo)
        return tuple(result)

    def forward(self, input, output_size=None):
        opad = self._output_padding(input, output_size)
        return self._fn(input, self.weight, self.bias, self.stride, self.padding, opad, self.groups, self.dilation)


class ConvTranspose1d(_ConvTranspose):
    """1-d transposed convolution ``(N, C_in, L)`` → ``(N, C_out, L_out)``; see ``torch.nn.ConvTranspose1d``.
    ``forward(input, output_size=None)``; only ``padding_mode='zeros'``."""

    _nd = 1
    _fn = staticmethod(conv_transpose1d)


class ConvTranspose2d(_ConvTranspose):
    """2-d transposed convolution ``(N, C_in, H, W)`` → ``(N, C_out, H_out, W_out)``; see
    ``torch.nn.ConvTranspose2d``. ``forward(input, output_size=None)``; only ``padding_mode='zeros'``."""

    _nd = 2
    _fn = staticmethod(conv_transpose2d)


class ConvTranspose3d(_ConvTranspose):
    """3-d transposed convolution ``(N, C_in, D, H, W)`` → ``(N, C_out, D_out, H_out, W_out)``; see
    ``torch.nn.ConvTranspose3d``. ``forward(input, output_size=None)``; only ``padding_mode='zeros'``."""

    _nd = 3
    _fn = staticmethod(conv_transpose3d)

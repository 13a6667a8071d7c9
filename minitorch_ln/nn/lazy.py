"""Lazy modules: ``LazyConv1d/2d/3d`` and ``LazyConvTranspose1d/2d/3d``, whose ``in_channels`` is read
from the first input, as PyTorch's ``torch.nn.modules.lazy.LazyModuleMixin``.

A lazy module holds :class:`~minitorch_ln.nn.parameter.UninitializedParameter` weights. Its first
forward (a forward pre-hook) calls ``initialize_parameters(input)``: the shapes are inferred, the
parameters materialized and initialized as the full module's ``reset_parameters`` does; then the
hook is removed and the object *becomes* its ``cls_to_become`` (``Conv2d`` for ``LazyConv2d``): the
same object, with the same parameters, of the ordinary class. Loading a ``state_dict`` into a lazy
module materializes its parameters to the loaded shapes first (``Module.load_state_dict``).
"""

from __future__ import annotations

from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .parameter import UninitializedParameter


class LazyModuleMixin:
    """``has_uninitialized_params()``, the first-forward hook and the class switch (PyTorch's names)."""

    cls_to_become = None

    def _lazy_setup(self) -> None:
        self._initialize_hook = self.register_forward_pre_hook(LazyModuleMixin._infer_parameters)

    def has_uninitialized_params(self) -> bool:
        return any(isinstance(p, UninitializedParameter) for p in self._parameters.values())

    @staticmethod
    def _infer_parameters(module, args):
        module.initialize_parameters(*args)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {type(module).__name__} has not been fully initialized")
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become


class _LazyConvMixin(LazyModuleMixin):
    _transposed = False

    def _lazy_init(self, out_channels, bias, device, dtype) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        self._lazy_setup()

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_in_channels(self, input) -> int:  # noqa: A002
        nd = self._nd
        if input.ndim not in (nd + 1, nd + 2):
            raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: {list(input.shape)}")
        return input.shape[1] if input.ndim == nd + 2 else input.shape[0]

    def initialize_parameters(self, input, *args, **kwargs) -> None:  # noqa: A002
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups:
            raise ValueError(f"{type(self).__name__}: in_channels must be divisible by groups, got in_channels="
                             f"{self.in_channels} from the input, groups={self.groups}")
        if self._transposed:
            shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
        else:
            shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
        self.weight.materialize(shape)
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()


def _lazy_conv(cls, doc):
    """``Lazy<cls>``: ``cls``'s constructor without ``in_channels``."""

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        cls.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device=device,
                     dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)

    return type(f"Lazy{cls.__name__}", (_LazyConvMixin, cls),
                {"__init__": __init__, "cls_to_become": cls, "__doc__": doc, "__module__": __name__})


def _lazy_conv_transpose(cls, doc):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        cls.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                     device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)

    return type(f"Lazy{cls.__name__}", (_LazyConvMixin, cls),
                {"__init__": __init__, "cls_to_become": cls, "_transposed": True, "__doc__": doc,
                 "__module__": __name__})


_DOC = ("``{0}`` with ``in_channels`` inferred from the first input (``input.shape[1]``, or ``[0]`` unbatched); "
        "it then becomes a ``{0}``. Arguments as ``{0}`` without ``in_channels``. Raises RuntimeError for an "
        "input of the wrong rank, ValueError when the inferred channels are not divisible by ``groups``.")
LazyConv1d = _lazy_conv(Conv1d, _DOC.format("Conv1d"))
LazyConv2d = _lazy_conv(Conv2d, _DOC.format("Conv2d"))
LazyConv3d = _lazy_conv(Conv3d, _DOC.format("Conv3d"))
LazyConvTranspose1d = _lazy_conv_transpose(ConvTranspose1d, _DOC.format("ConvTranspose1d"))
LazyConvTranspose2d = _lazy_conv_transpose(ConvTranspose2d, _DOC.format("ConvTranspose2d"))
LazyConvTranspose3d = _lazy_conv_transpose(ConvTranspose3d, _DOC.format("ConvTranspose3d"))

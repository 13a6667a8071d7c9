"""The operators and methods of :class:`Tensor` that run an op: ``x + y``, ``x @ w``, ``x.sum(dim)``,
``x.reshape(...)``, ``x.to(dtype)``, ... each a one-line forward to the op function of the same name.

``tensor.py`` imports nothing of ``ops/``; ``methods.py`` lists every Tensor method and operator,
these included, and attaches them when the ops are imported (DeZero's ``setup_variable``);
in-place methods are in ``inplace.py``.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..tensor import Tensor
from .activation import relu, sigmoid, tanh
from .autocast_policies import autocast
from .division import div_rounding
from .bitwise import bitwise_and, bitwise_not, bitwise_or
from .comparison import eq, ge, gt, le, lt, ne
from .conversion import cast, clone, to_device
from .elementwise import abs, add, div, exp, log, mul, neg, pow, rsqrt, sqrt, sub  # noqa: A004
from .unary_trig import cos, sin
from .grids import tril, triu
from .indexing import getitem, setitem_
from .stacking import chunk, split
from .matmul import matmul
from .reduction import (  # noqa: A004 - PyTorch's names
    all, amax, amin, any, argmax, argmin, logsumexp, max, mean, min, sum, topk,
)
from .variance import std, var
from .selection import clamp, masked_fill, maximum, minimum
from .reorder import flip
from .shape import broadcast_to, expand, flatten, permute, reshape, squeeze, transpose, unsqueeze, view
from .softmax import log_softmax, softmax


class _Methods:
    """The methods attached to :class:`Tensor` below (``self`` is the Tensor)."""

    def clone(self) -> "Tensor":
        return clone(self)

    def to(self, *args, dtype=None, device=None, non_blocking=False, copy=False, memory_format=None) -> "Tensor":
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(other)`` (its dtype and device), as PyTorch;
        differentiable; no copy when nothing changes (unless ``copy=True``).

        ``non_blocking`` is accepted and has no effect (NumPy and CuPy copies here are synchronous);
        ``memory_format`` only accepts the default (there is one memory format here).
        """
        for a in args:
            if isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            elif isinstance(a, (str, backend.Device, int)) and not isinstance(a, bool) and not (
                    isinstance(a, str) and (a in backend._DTYPE_NAMES or a in backend._UNSUPPORTED_DTYPES)):
                device = a  # an int is a GPU index, as PyTorch's `x.to(rank)`
            else:
                dtype = a
        if memory_format is not None and str(memory_format) not in ("torch.preserve_format", "torch.contiguous_format",
                                                                      "preserve_format", "contiguous_format"):
            raise ValueError(f"to: memory_format {memory_format!r} is not supported here (only the default layout)")
        out = self
        if dtype is not None and backend.as_dtype(dtype) != self.dtype:
            out = cast(out, backend.as_dtype(dtype))
        if device is not None and backend.device(device) != self.device:
            out = to_device(out, backend.device(device))
        if copy and out is self:
            out = clone(self)
        return out

    def pin_memory(self, device=None) -> "Tensor":
        """As PyTorch's for a CPU tensor: here pinned memory does not exist, so the tensor itself
        (``DataLoader(pin_memory=True)`` and ``x.pin_memory().to('cuda', non_blocking=True)`` work)."""
        return self

    def is_pinned(self, device=None) -> bool:
        return False

    def __format__(self, spec: str) -> str:
        # f"{loss:.4f}": a one-element tensor formats as its number, as in PyTorch
        if self.numel() == 1 and self.ndim == 0:
            return format(self.item(), spec)
        if spec:
            raise TypeError(f"unsupported format string {spec!r} passed to Tensor.__format__ for a tensor of shape "
                            f"{tuple(self.shape)}: only 0-d tensors take a format spec (as PyTorch)")
        return repr(self)

    def float(self) -> "Tensor":
        return self.to(np.float32)

    def double(self) -> "Tensor":
        return self.to(np.float64)

    def half(self) -> "Tensor":
        return self.to(np.float16)

    def bfloat16(self) -> "Tensor":
        return self.to(backend.BFLOAT16)

    def long(self) -> "Tensor":
        return self.to(np.int64)

    def int(self) -> "Tensor":
        return self.to(np.int32)

    def bool(self) -> "Tensor":
        return self.to(np.bool_)

    def cpu(self) -> "Tensor":
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False, memory_format=None) -> "Tensor":
        """``to("cuda:N")``: ``device`` an index, ``"cuda:N"``, a device or None (GPU 0), as PyTorch."""
        return self.to(0 if device is None else device, non_blocking=non_blocking, memory_format=memory_format)




    # arithmetic: ``x + y`` calls ``add(x, y)`` itself, one Python call less per op (the reflected
    # forms swap the operands, and the named methods keep PyTorch's argument name, ``other``)
    __add__ = add

    def __radd__(self, other):
        return add(other, self)

    __sub__ = sub

    def __rsub__(self, other):
        return sub(other, self)

    __mul__ = mul

    def __rmul__(self, other):
        return mul(other, self)

    __truediv__ = div

    @autocast("rtruediv")  # on PyTorch's CUDA float32 list (x / y is not)
    def __rtruediv__(self, other):
        return div(other, self)

    __div__ = __truediv__  # PyTorch keeps Python 2's names too
    __rdiv__ = __rtruediv__

    def __pow__(self, other):
        return pow(self, other)

    def __rpow__(self, other):
        return pow(other, self)

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)

    def __neg__(self):
        return neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return abs(self)

    def __eq__(self, other):  # noqa: D105 - elementwise, as in PyTorch
        if other is None:  # as PyTorch: ``t == None`` is False, ``t != None`` True (Python's identity test)
            return NotImplemented
        return eq(self, other)

    def __ne__(self, other):
        if other is None:
            return NotImplemented
        return ne(self, other)

    def __lt__(self, other):
        return lt(self, other)

    def __le__(self, other):
        return le(self, other)

    def __gt__(self, other):
        return gt(self, other)

    def __ge__(self, other):
        return ge(self, other)

    def __invert__(self):  # bitwise on integers, logical on bool; PyTorch's TypeError for the operator on floats
        if backend.is_floating(self.dtype) or self.dtype.kind == "c":
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
        return bitwise_not(self)

    def __and__(self, other):
        return bitwise_and(self, other)

    def __or__(self, other):
        return bitwise_or(self, other)

    def __getitem__(self, index):
        return getitem(self, index)

    def __iter__(self):
        # the sub-tensors along dim 0 (views), as PyTorch; without this Python would index 0, 1, ...
        # until an IndexError, and a 0-d tensor would silently iterate as empty. ``self[i]`` per row (the
        # int-index view of indexing.py, with its fast path for a tensor without history), taken all at
        # once as PyTorch's unbind does
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter([getitem(self, i) for i in range(self.array.shape[0])])

    def __reversed__(self):
        return self if self.ndim == 0 else flip(self, (0,))

    def __contains__(self, element) -> bool:
        """``element in t``: whether any element of ``t`` equals it (a number or a tensor, broadcast), as PyTorch."""
        if isinstance(element, (Tensor, bool, int, float, np.number)):
            return bool(any(eq(self, element)).item())
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}.")

    def __setitem__(self, index, value):
        setitem_(self, index, value)



    # methods forwarding to ops
    def add(self, other, *, alpha=1):
        return add(self, other, alpha=alpha)

    def sub(self, other, *, alpha=1):
        return sub(self, other, alpha=alpha)

    def mul(self, other):
        return mul(self, other)

    def div(self, other, *, rounding_mode=None):
        return div_rounding(self, other, rounding_mode=rounding_mode)

    def pow(self, exponent):
        return pow(self, exponent)

    def matmul(self, other):
        return matmul(self, other)

    def exp(self):
        return exp(self)

    def log(self):
        return log(self)

    def sqrt(self):
        return sqrt(self)

    def rsqrt(self):
        return rsqrt(self)

    def abs(self):
        return abs(self)

    def tanh(self):
        return tanh(self)

    def sigmoid(self):
        return sigmoid(self)

    def relu(self):
        return relu(self)

    def sin(self):
        return sin(self)

    def cos(self):
        return cos(self)

    def maximum(self, other):
        return maximum(self, other)

    def minimum(self, other):
        return minimum(self, other)

    def clamp(self, min=None, max=None):  # noqa: A002 - PyTorch's argument names
        return clamp(self, min, max)

    clip = clamp

    def masked_fill(self, mask, value):
        return masked_fill(self, mask, value)

    # the reductions take the functions' arguments as they are (dim= or axis=, keepdim, dtype=, ...)
    def sum(self, *args, **kwargs):
        return sum(self, *args, **kwargs)

    def mean(self, *args, **kwargs):
        return mean(self, *args, **kwargs)

    def var(self, *args, **kwargs):
        return var(self, *args, **kwargs)

    def std(self, *args, **kwargs):
        return std(self, *args, **kwargs)

    def max(self, *args, **kwargs):
        return max(self, *args, **kwargs)

    def min(self, *args, **kwargs):
        return min(self, *args, **kwargs)

    def amax(self, *args, **kwargs):
        return amax(self, *args, **kwargs)

    def amin(self, *args, **kwargs):
        return amin(self, *args, **kwargs)

    def logsumexp(self, *args, **kwargs):
        return logsumexp(self, *args, **kwargs)

    def argmax(self, *args, **kwargs):
        return argmax(self, *args, **kwargs)

    def argmin(self, *args, **kwargs):
        return argmin(self, *args, **kwargs)

    def topk(self, *args, **kwargs):
        return topk(self, *args, **kwargs)

    def any(self, *args, **kwargs):
        return any(self, *args, **kwargs)

    def all(self, *args, **kwargs):
        return all(self, *args, **kwargs)

    def softmax(self, *args, **kwargs):
        return softmax(self, *args, **kwargs)

    def log_softmax(self, *args, **kwargs):
        return log_softmax(self, *args, **kwargs)

    def reshape(self, *shape):
        return reshape(self, *shape)

    def view(self, *shape):
        return view(self, *shape)

    def flatten(self, start_dim=0, end_dim=-1):
        return flatten(self, start_dim, end_dim)

    def transpose(self, dim0, dim1):
        return transpose(self, dim0, dim1)

    def permute(self, *dims):
        return permute(self, *dims)

    @property
    def mT(self):  # noqa: N802 - PyTorch's name
        return transpose(self, -2, -1)

    @property
    def T(self):  # noqa: N802
        return permute(self, *reversed(range(self.ndim)))

    def t(self):
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, got {self.ndim}")
        return self.T

    def unsqueeze(self, *args, **kwargs):
        return unsqueeze(self, *args, **kwargs)

    def squeeze(self, *args, **kwargs):
        return squeeze(self, *args, **kwargs)

    def expand(self, *sizes):
        return expand(self, *sizes)

    def broadcast_to(self, shape):
        return broadcast_to(self, shape)

    def expand_as(self, other):
        return broadcast_to(self, other.shape)

    def split(self, split_size_or_sections, dim=0):
        return split(self, split_size_or_sections, dim)

    def chunk(self, *args, **kwargs):
        return chunk(self, *args, **kwargs)

    def triu(self, diagonal=0):
        return triu(self, diagonal)

    def tril(self, diagonal=0):
        return tril(self, diagonal)

    def contiguous(self):
        """``self`` when its memory is C-contiguous, else a contiguous copy (differentiable), as PyTorch."""
        return self if self.array.flags.c_contiguous else clone(self)

    def is_contiguous(self) -> bool:
        return bool(self.array.flags.c_contiguous)

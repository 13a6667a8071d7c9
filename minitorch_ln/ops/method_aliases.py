"""``Tensor`` methods that are a ``torch.*`` function called on the tensor (``x.isnan()`` is
``torch.isnan(x)``, ``x.where(cond, y)`` is ``torch.where(cond, x, y)``, ``x.multiply(y)`` is
``torch.mul(x, y)``), and the metadata queries PyTorch's Tensor answers (``x.stride()``,
``x.element_size()``, ``x.is_floating_point()``, ...), for ``ops/methods.py``'s table.
"""

from __future__ import annotations

from .. import backend
from .comparison import (
    eq,
    ge,
    gt,
    isfinite,
    isnan,
    le,
    logical_and,
    logical_not,
    logical_or,
    lt,
    ne,
)
from .elementwise import erf, mul, neg, sub
from .selection import where

__all__: list = []  # Tensor methods only

# Tensor.<name>: the function called with the tensor first
FUNCTION_METHODS = {
    "eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge, "isnan": isnan, "isfinite": isfinite,
    "logical_and": logical_and, "logical_or": logical_or, "logical_not": logical_not, "erf": erf, "neg": neg,
    "negative": neg, "multiply": mul, "subtract": sub, "not_equal": ne, "greater": gt, "greater_equal": ge,
    "less": lt, "less_equal": le,
}


def _where(self, condition, other):
    """``x.where(condition, y)``: ``torch.where(condition, x, y)`` (the tensor is the value where True)."""
    return where(condition, self, other)


def _absolute(self):
    return self.abs()


def _is_floating_point(self) -> bool:
    return backend.is_floating(self.dtype)


def _is_signed(self) -> bool:
    """False for uint8 and bool, True otherwise (floats included), as PyTorch."""
    return self.dtype.kind not in "ub"


def _element_size(self) -> int:
    """Bytes per element (4 for float32)."""
    return int(self.dtype.itemsize)


def _nbytes(self) -> int:
    return int(self.numel() * self.dtype.itemsize)


def _stride(self, dim=None):
    """Strides in elements, as PyTorch's (NumPy's are in bytes): a tuple, or one dim's with ``dim``.

    Raises IndexError when ``dim`` is out of range.
    """
    strides = tuple(int(s) // int(self.dtype.itemsize) for s in self.array.strides)
    if dim is None:
        return strides
    if not -len(strides) <= dim < max(len(strides), 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-len(strides)}, "
                         f"{len(strides) - 1}], but got {dim})")
    return strides[dim]


def _storage_offset(self) -> int:
    """Elements between the start of the memory the tensor shares (its base's) and its first element."""
    if self._base is None:
        return 0
    xp = backend.get_array_module(self.array)
    start = self.array.__array_interface__["data"][0] if xp.__name__ == "numpy" else self.array.data.ptr
    base = self._base.array
    base_start = base.__array_interface__["data"][0] if xp.__name__ == "numpy" else base.data.ptr
    return (start - base_start) // int(self.dtype.itemsize)


def _get_device(self) -> int:
    """-1 on the CPU, else the CUDA device index."""
    dev = self.device
    return -1 if dev.type == "cpu" else int(dev.index or 0)


def _is_nonzero(self) -> bool:
    """The one element's truth; RuntimeError for none or several (as PyTorch)."""
    if self.numel() != 1:
        raise RuntimeError(f"Boolean value of Tensor with {'no values' if self.numel() == 0 else 'more than one value'} "
                           "is ambiguous")
    return bool(self.item())


def _is_same_size(self, other) -> bool:
    return tuple(self.shape) == tuple(other.shape)


OTHER_METHODS = {
    "where": _where, "absolute": _absolute,
    "is_floating_point": _is_floating_point, "is_signed": _is_signed, "element_size": _element_size,
    "nbytes": property(_nbytes), "itemsize": property(_element_size), "ndimension": lambda self: self.ndim,
    "stride": _stride, "storage_offset": _storage_offset, "get_device": _get_device,
    "is_cpu": property(lambda self: self.device.type == "cpu"),
    "is_cuda": property(lambda self: self.device.type == "cuda"), "is_nonzero": _is_nonzero,
    "is_same_size": _is_same_size, "retains_grad": property(lambda self: bool(self._retains_grad)),
}

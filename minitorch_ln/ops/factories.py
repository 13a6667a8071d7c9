"""Small ``torch.*`` factories and fills beside ``creation.py``: ``scalar_tensor``, ``empty_strided``,
``empty_permuted``, ``Tensor.new_empty_strided``, ``fill``, ``zero_`` (the function), ``rsub``.

minitorch_ln's tensors are always laid out by their arrays (row-major when made), so the stride and
layout arguments of the ``empty_*`` factories are checked and then only the size is used: the values of an
empty tensor are undefined in PyTorch too. ``fill(input, value)`` is ``where(True, value, input)``: the
result does not depend on ``input`` (its gradient is 0) and a 0-d tensor ``value`` gets the sum of the
upstream gradient, as PyTorch's. ``rsub(input, other, alpha)`` is ``other - alpha · input``.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..errors import ShapeError
from ..tensor import Tensor
from .creation import empty
from .elementwise import sub
from .fill_values import checked_number
from .selection import where

__all__ = ["empty_permuted", "empty_strided", "fill", "rsub", "scalar_tensor", "zero_"]


def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor holding the number ``s``, of ``dtype`` or the default float dtype (even for an int or a bool,
    as PyTorch's). Raises TypeError for a non-number."""
    if isinstance(s, Tensor):
        s = s.item()
    if not isinstance(s, numbers.Number) or isinstance(s, complex):
        raise TypeError(f"scalar_tensor(): argument 's' must be a real number, not {type(s).__name__}")
    dt = backend.default_float_dtype() if dtype is None else backend.as_dtype(dtype)
    out = empty((), dtype=dt, device=device)
    out.array[...] = s
    out.requires_grad_(requires_grad)
    return out


def _check_sizes(op: str, size, other, what: str) -> tuple:
    size = tuple(size)
    other = tuple(other)
    if len(other) != len(size):
        raise ShapeError(f"{op}(): expected {what} of length {len(size)} (one per dim of size {size}), got {other}")
    if any(not isinstance(n, numbers.Integral) or n < 0 for n in size):
        raise ShapeError(f"{op}(): sizes must be non-negative ints, got {size}")
    return size


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
                  pin_memory: bool = False) -> Tensor:
    """An uninitialized tensor of ``size`` (``stride`` checked for length, the memory laid out row-major here).
    Raises ShapeError when ``stride`` has another length than ``size``."""
    size = _check_sizes("empty_strided", size, stride, "stride")
    return empty(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
                   pin_memory: bool = False) -> Tensor:
    """An uninitialized tensor of ``size``; ``physical_layout`` must be a permutation of its dims (checked; the
    memory is laid out row-major here). Raises ShapeError otherwise."""
    size = _check_sizes("empty_permuted", size, physical_layout, "physical_layout")
    if sorted(physical_layout) != list(range(len(size))):
        raise ShapeError(f"empty_permuted(): physical_layout must be a permutation of 0..{len(size) - 1}, "
                         f"got {tuple(physical_layout)}")
    return empty(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def _new_empty_strided(self: Tensor, size, stride, *, dtype=None, device=None, requires_grad: bool = False,
                       layout=None, pin_memory: bool = False) -> Tensor:
    """``Tensor.new_empty_strided``: :func:`empty_strided` with this tensor's dtype and device by default."""
    return empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype,
                         device=self.device if device is None else device, requires_grad=requires_grad)


def fill(input: Tensor, value) -> Tensor:
    """A tensor of ``input``'s shape and dtype holding ``value`` everywhere (a number or a 0-d tensor, cast to
    ``input``'s dtype as ``fill_``). Raises RuntimeError for a ``value`` tensor with dims (PyTorch's "fill_
    only supports 0-dimension value tensor")."""
    if not isinstance(input, Tensor):
        raise TypeError(f"fill(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"fill(): fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.ndim} dimensions.")
        v = value.to(input.dtype) if value.dtype != input.dtype else value
    else:  # PyTorch's check of a number against the dtype (ops/fill_values.py): 300 into int8 wrapped to 44
        v = Tensor._from_op(np.asarray(checked_number(value, input.dtype, "fill"), dtype=input.dtype))
    everywhere = Tensor._from_op(backend.get_array_module(input.array).ones(tuple(input.shape), dtype=bool))
    return where(everywhere, v, input)


def zero_(input: Tensor) -> Tensor:
    """``torch.zero_(input)``: ``input.zero_()``, in place (raises as that on a leaf that requires grad)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"zero_(): argument 'input' must be a Tensor, not {type(input).__name__}")
    return input.zero_()


def rsub(input: Tensor, other, alpha=1) -> Tensor:
    """``other - alpha · input`` (subtraction with the operands reversed), broadcasting and promoting as ``sub``."""
    return sub(other, input, alpha=alpha)

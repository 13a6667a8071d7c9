"""Ops on a tensor's memory as it is: ``view(dtype)`` (the same bytes read as another dtype), ``data_ptr``,
the in-place view ops ``t_``/``transpose_``/``swapdims_``/``squeeze_``/``unsqueeze_``, and ``apply_``.

None of them records history: ``view(dtype)`` is not differentiable (as PyTorch, its result does not require
grad), and the in-place ones are refused for a tensor that requires grad, or that is a view of another
tensor (changing its shape would break the link to its base) — a clear error instead of a wrong gradient.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..errors import DtypeError, ShapeError
from ..tensor import Tensor
from ._util import normalize_dim

__all__: list[str] = []  # Tensor methods only (ops/methods.py); view(dtype) is reached through view


def is_dtype_arg(arg) -> bool:
    """Whether ``view``'s one argument is a dtype (``x.view(torch.int32)``) rather than a size."""
    return not isinstance(arg, (numbers.Integral, tuple, list)) and (isinstance(arg, np.dtype) or hasattr(arg, "itemsize")
                                                                     or isinstance(arg, type) or isinstance(arg, str))


def view_dtype(x: Tensor, dtype) -> Tensor:
    """``x.view(dtype)``: ``x``'s bytes read as ``dtype``, sharing memory and version counter with ``x``.

    Shape: ``x``'s, but for an element size of another width the last dim scales by
    ``x.element_size() / dtype's size`` (``(2, 3)`` float32 viewed as uint8 is ``(2, 12)``), as PyTorch.

    Raises:
        ShapeError: for another element width, a last dim that is not contiguous (stride 1) or whose byte
            size does not divide by the new element size, or a 0-d tensor.
    """
    dt = backend.as_dtype(dtype)
    arr = x.array
    old, new = arr.dtype.itemsize, dt.itemsize
    if old != new:
        if arr.ndim == 0:
            raise ShapeError(f"view(dtype): a 0-d tensor of {arr.dtype} cannot be viewed as {dt} (element sizes "
                             f"{old} and {new} differ); expected a tensor with at least one dim")
        if arr.strides[-1] != old and arr.shape[-1] != 1:
            raise ShapeError(f"view(dtype): the last dim must be contiguous (stride 1) to view {arr.dtype} as {dt} "
                             f"(element sizes {old} and {new}), but its stride is {arr.strides[-1] // old}")
        if (arr.shape[-1] * old) % new:
            raise ShapeError(f"view(dtype): the last dim's size {arr.shape[-1]} times {old} bytes must divide by {new} "
                             f"to view {arr.dtype} as {dt}")
        if arr.shape[-1] == 1 and arr.strides[-1] != old:  # a size-1 last dim of any stride: make it contiguous
            arr = arr.reshape(arr.shape)
    out = Tensor._from_op(arr.view(dt))
    out._version = x._version  # one memory: a change through either is seen by saved-tensor checks
    return out


def data_ptr(self: Tensor) -> int:
    """``Tensor.data_ptr()``: the address of the first element (0 for an empty tensor, as PyTorch)."""
    arr = self.array
    if arr.size == 0:
        return 0
    if type(arr) is np.ndarray:
        return int(arr.__array_interface__["data"][0])
    return int(arr.data.ptr)  # CuPy


def _check_inplace_view(self: Tensor, op: str) -> None:
    if self.requires_grad:
        raise RuntimeError(f"{op}(): not supported on a tensor that requires grad here; use the out-of-place form "
                           f"(e.g. x = x.{op[:-1]}(...))")
    if self._base is not None:
        raise RuntimeError(f"{op}(): not supported on a view of another tensor (its shape is tied to its base); "
                           f"use the out-of-place form or a clone()")


def _set_array(self: Tensor, arr) -> Tensor:
    self.array = arr
    self._bump_version()
    return self


def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """``Tensor.transpose_``: this tensor with dims ``dim0`` and ``dim1`` swapped, in place (a new view of its
    memory). Raises IndexError for a dim out of range, RuntimeError for a tensor that requires grad."""
    _check_inplace_view(self, "transpose_")
    n = max(self.ndim, 1)
    a, b = normalize_dim(dim0, n, "transpose_"), normalize_dim(dim1, n, "transpose_")
    return _set_array(self, self.array.swapaxes(a, b) if self.ndim else self.array)


def t_(self: Tensor) -> Tensor:
    """``Tensor.t_``: a matrix transposed in place (a 0-d or 1-d tensor stays as it is), as PyTorch."""
    if self.ndim > 2:
        raise ShapeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return transpose_(self, 0, 1) if self.ndim == 2 else (_check_inplace_view(self, "t_") or self)


def squeeze_(self: Tensor, dim=None) -> Tensor:
    """``Tensor.squeeze_``: size-1 dims (all, or ``dim``) removed in place."""
    _check_inplace_view(self, "squeeze_")
    return _set_array(self, self.squeeze(dim).array if dim is not None else self.squeeze().array)


def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    """``Tensor.unsqueeze_``: a size-1 dim inserted at ``dim`` in place."""
    _check_inplace_view(self, "unsqueeze_")
    return _set_array(self, self.unsqueeze(dim).array)


def apply_(self: Tensor, callable) -> Tensor:  # noqa: A002 - PyTorch's argument name
    """``Tensor.apply_(fn)``: each element replaced by ``fn(element)`` (a Python number), in place; CPU only, slow
    (one Python call per element), as PyTorch. Raises RuntimeError for a tensor that requires grad or on the GPU."""
    if self.requires_grad:
        raise RuntimeError("Can't call apply_() on a tensor that requires grad. Use x.detach().apply_() instead.")
    arr = self.array
    if type(arr) is not np.ndarray:
        raise RuntimeError("apply_() is only implemented on CPU tensors")
    if arr.dtype.kind == "V":
        raise DtypeError("apply_(): bfloat16 tensors are not supported")
    flat = arr.reshape(-1) if arr.flags.c_contiguous else None
    it = np.nditer(arr, flags=["refs_ok", "zerosize_ok"], op_flags=["readwrite"]) if flat is None else None
    if flat is not None:
        for i in range(flat.size):
            flat[i] = callable(flat[i].item())
    else:
        with it:
            for v in it:
                v[...] = callable(v.item())
    self._bump_version()
    return self

"""Dtype conversions as Tensor methods: ``type``, ``type_as``, ``short``, ``byte``, ``char``.

Each is :func:`~minitorch_ln.ops.conversion.cast` (differentiable between float dtypes; an integer
or bool result carries no gradient, as PyTorch), returning the tensor itself when nothing changes.
"""

from __future__ import annotations

import builtins

import numpy as np

from .. import backend
from ..tensor import Tensor
from .conversion import cast, to_device

# torch's legacy tensor type names, per dtype ('torch.FloatTensor', 'torch.cuda.FloatTensor')
_TYPE_NAMES = {
    np.dtype(np.float16): "HalfTensor", np.dtype(np.float32): "FloatTensor", np.dtype(np.float64): "DoubleTensor",
    np.dtype(np.uint8): "ByteTensor", np.dtype(np.int8): "CharTensor", np.dtype(np.int16): "ShortTensor",
    np.dtype(np.int32): "IntTensor", np.dtype(np.int64): "LongTensor", np.dtype(np.bool_): "BoolTensor",
}
_NAME_TO_DTYPE = {v: k for k, v in _TYPE_NAMES.items()}


def _check_tensor(x, op):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {builtins.type(x).__name__}")


def type_name(x: Tensor) -> str:
    """``x``'s PyTorch type name: ``'torch.FloatTensor'``, ``'torch.cuda.LongTensor'``, ..."""
    _check_tensor(x, "type")
    return "torch." + ("cuda." if x.device.type == "cuda" else "") + _TYPE_NAMES[x.dtype]


def _parse_type_string(s: str):
    """``'torch.DoubleTensor'`` -> (float64, None); ``'torch.cuda.FloatTensor'`` -> (float32, 'cuda')."""
    parts = s.split(".")
    dev = None
    if len(parts) == 3 and parts[0] == "torch" and parts[1] == "cuda":
        dev, parts = "cuda", [parts[0], parts[2]]
    if len(parts) != 2 or parts[0] != "torch" or parts[1] not in _NAME_TO_DTYPE:
        raise ValueError(f"invalid type: {s!r}; expected a tensor type name such as 'torch.FloatTensor' or "
                         f"'torch.cuda.LongTensor' (names: {sorted(_NAME_TO_DTYPE)}), or a dtype")
    return _NAME_TO_DTYPE[parts[1]], dev


def type(x: Tensor, dtype=None, non_blocking: bool = False, **kwargs):  # noqa: A001 - PyTorch's name
    """``x.type()``: the type name string (``'torch.FloatTensor'``); ``x.type(dtype)``: ``x`` cast
    to ``dtype`` (a dtype, or a type name such as ``'torch.DoubleTensor'``; ``'torch.cuda.*'`` also
    moves it to the GPU), ``x`` itself when it already has that type (as ``torch.Tensor.type``).

    Raises:
        ValueError: a string that is not a tensor type name (PyTorch rejects ``'torch.float64'`` too).
        TypeError: a ``dtype`` that is not a dtype, or bfloat16 (not supported; see ``minitorch_ln.dtypes``).
    """
    _check_tensor(x, "type")
    if dtype is None:
        return type_name(x)
    dev = None
    if isinstance(dtype, str):
        dt, dev = _parse_type_string(dtype)
    else:
        dt = backend.as_dtype(dtype)
    out = x if x.dtype == dt else cast(x, dt)
    if dev is not None and out.device.type != "cuda":
        out = to_device(out, backend.device(dev))
    elif dev is None and isinstance(dtype, str) and out.device.type == "cuda":
        out = to_device(out, backend.device("cpu"))  # 'torch.FloatTensor' names a CPU tensor
    return out


def type_as(x: Tensor, other: Tensor) -> Tensor:
    """``x`` cast to ``other``'s dtype (``x`` itself when equal), as ``torch.Tensor.type_as``; ``x``
    stays on its device. Raises TypeError when ``other`` is not a Tensor."""
    _check_tensor(x, "type_as")
    if not isinstance(other, Tensor):
        raise TypeError(f"type_as: expected a Tensor as other, got {builtins.type(other).__name__}")
    return x if x.dtype == other.dtype else cast(x, other.dtype)


def short(x: Tensor) -> Tensor:
    """``x`` as int16 (``torch.Tensor.short``); float values truncate toward zero."""
    return cast(x, np.int16)


def byte(x: Tensor) -> Tensor:
    """``x`` as uint8 (``torch.Tensor.byte``); out-of-range values wrap, as a C cast."""
    return cast(x, np.uint8)


def char(x: Tensor) -> Tensor:
    """``x`` as int8 (``torch.Tensor.char``); out-of-range values wrap, as a C cast."""
    return cast(x, np.int8)

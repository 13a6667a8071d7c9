"""Argument checks shared by the index ops (scatter.py, index_ops.py, searching.py): an index Tensor's
dtype and its bounds."""

from __future__ import annotations

import numpy as np

from .. import backend
from ..backend import get_array_module
from ..errors import DtypeError, IndexOutOfRangeError
from ..tensor import Tensor

IndexDtypeError = DtypeError  # minitorch_ln/errors.py


def index_array(index, ref: Tensor, op: str, dtypes=("int64", "int32"), name: str = "index"):
    """``index``'s array on ``ref``'s device, after checking it is a Tensor of one of ``dtypes``."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): expected {name} to be a Tensor of dtype {'/'.join(dtypes)}, got {type(index).__name__}")
    if str(index.dtype) not in dtypes:
        raise IndexDtypeError(f"{op}(): expected {name} of dtype {' or '.join(dtypes)}, got {index.dtype}")
    return backend.to_device(index.array, ref.device)


def check_bounds(index, size: int, dim: int, op: str, negative: bool = False):
    """``index`` as int64 in ``[0, size)``; negative entries count from the end only where ``negative``.

    Raises IndexOutOfRangeError (an IndexError and a RuntimeError) naming the first bad index.
    """
    xp = get_array_module(index)
    index = index.astype(np.int64, copy=False)
    if index.size == 0:
        return index
    lo = -size if negative else 0
    bad = (index < lo) | (index >= size)
    if bool(bad.any()):
        first = int(index.reshape(-1)[int(xp.argmax(bad.reshape(-1)))])
        allowed = f"[{lo}, {size})" if size else "none: the dimension is empty"
        raise IndexOutOfRangeError(
            f"{op}(): index {first} is out of bounds for dimension {dim} with size {size} (allowed: {allowed})")
    return xp.where(index < 0, index + size, index) if negative else index

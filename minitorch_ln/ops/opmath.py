"""Operands read in float32 ("opmath") for float16 and bfloat16 tensors, as PyTorch's CPU kernels read them.

``ops/_util.number_operands`` keeps a Python number in float32 for ``mul``/``div`` of a half-precision tensor; this
module does the same for a 0-d float tensor operand. The op then computes in float32 and rounds once
(``autograd/bfloat16.py``).
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..tensor import Tensor
from .conversion import cast

__all__ = ["HALF_DTYPES", "zero_d_opmath_operands"]

HALF_DTYPES = (np.dtype(np.float16), backend.BFLOAT16)
_HALF = HALF_DTYPES


def zero_d_opmath_operands(a, b):
    """``mul``/``div`` of a float16 or bfloat16 tensor with a 0-d float tensor of another float dtype
    (``x * torch.tensor(0.1)``) or a NumPy float scalar (``x * np.float64(0.1)``): ``(a, b)`` with the 0-d one cast to float32, so that the op computes in
    float32 and rounds once to the tensor's dtype (``autograd/bfloat16.py``), as ``number_operands`` does
    for a Python number; None otherwise (then :func:`promote`, which would round the 0-d value to the
    tensor's dtype first). PyTorch reads the 0-d value in float32 too when it is the second operand; when
    it is the first, PyTorch rounds it to half precision first: here both orders keep the float32 value,
    the more accurate result. The cast is an op of its own, so a 0-d tensor that requires grad gets its
    gradient in its own dtype."""
    if isinstance(a, Tensor) and isinstance(b, np.floating) or isinstance(b, Tensor) and isinstance(a, np.floating):
        t = a if isinstance(a, Tensor) else b  # a NumPy float scalar is a Python number to PyTorch: read in float32
        if t.array.dtype not in _HALF:
            return None
        return (a, np.float32(b)) if t is a else (np.float32(a), b)
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        return None
    da, db = a.array, b.array
    if da.ndim and not db.ndim and da.dtype in _HALF:
        half, zero, zero_first = da.dtype, db.dtype, False
    elif db.ndim and not da.ndim and db.dtype in _HALF:
        half, zero, zero_first = db.dtype, da.dtype, True
    else:
        return None
    if zero == half or not (zero.kind == "f" or zero in _HALF):
        return None
    if zero_first:
        return (a if zero == _F32_DT else cast(a, _F32_DT)), b
    return a, (b if zero == _F32_DT else cast(b, _F32_DT))


_F32_DT = np.dtype(np.float32)

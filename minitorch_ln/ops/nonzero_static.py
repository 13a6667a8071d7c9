"""``nonzero_static``: the indices of the non-zero elements in a result of fixed size (``torch.nonzero_static``).

Like ``nonzero`` (row-major order, one row of coordinates per element, ``(count, ndim)`` int64), but with exactly
``size`` rows: extra non-zeros are dropped, missing rows are filled with ``fill_value`` (PyTorch's
definition; it exists so that a compiled graph has a static shape). No gradient (integer output).
"""

from __future__ import annotations

import numbers

from ..backend import get_array_module
from ..tensor import Tensor

__all__ = ["nonzero_static"]


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """``(size, input.ndim)`` int64: the first ``size`` coordinates of ``input``'s non-zero elements, padded with
    ``fill_value``. Raises ValueError for a negative ``size``, TypeError for a non-int ``size``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"nonzero_static(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if not isinstance(size, numbers.Integral) or isinstance(size, bool):
        raise TypeError(f"nonzero_static(): size must be an int, got {size!r}")
    if size < 0:
        raise ValueError(f"nonzero_static(): 'size' must be an non-negative integer, got {size}")
    xp = get_array_module(input.array)
    a = input.array.reshape(1) if input.ndim == 0 else input.array
    coords = xp.stack(xp.nonzero(a), axis=1) if a.ndim else xp.zeros((0, 0), dtype="int64")  # (count, ndim)
    ndim = input.ndim
    out = xp.full((size, ndim), fill_value, dtype="int64")  # (size, ndim)
    n = min(size, coords.shape[0])
    if ndim:
        out[:n] = coords[:n, :ndim]
    return Tensor._from_op(out)

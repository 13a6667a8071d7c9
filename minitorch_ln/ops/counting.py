"""Counting and membership: ``bincount``, ``isin``, ``unique_consecutive`` (as ``torch.*``).

They return counts, masks and indices, which have no gradient (PyTorch defines none for
``bincount``'s weights either), so each is a plain computation on arrays with ``xp``: no
``Function``, and the result never requires grad.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..backend import get_array_module
from ..errors import DtypeError, OptionError, ShapeError
from ..tensor import Tensor
from ._util import normalize_dim

__all__ = ["bincount", "isin", "unique_consecutive"]


def _need_tensor(x, op: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): expected input to be a Tensor, got {type(x).__name__}")


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:  # noqa: A002
    """How often each value ``0 .. max(input)`` occurs in the 1-D non-negative integer ``input`` (``torch.bincount``).

    Shape ``(max(max(input) + 1, minlength),)``; int64, or with ``weights`` (1-D, as long as ``input``)
    the sum of the weights at each value: float32 for float32 weights, float64 otherwise, as PyTorch.
    No gradient flows to ``weights`` (PyTorch has none either).

    Raises:
        DtypeError: a float or bool ``input``. ShapeError: ``input`` not 1-D, or ``weights`` of
        another length. OptionError (a ValueError): a negative value or ``minlength``.
    """
    _need_tensor(input, "bincount")
    a = input.array
    if a.dtype.kind not in "iu":
        raise DtypeError(f"bincount only supports 1-d non-negative integral inputs, got dtype {a.dtype}")
    if a.ndim != 1:
        raise ShapeError(f"bincount only supports 1-d non-negative integral inputs, got shape {tuple(a.shape)}")
    if not isinstance(minlength, numbers.Integral) or minlength < 0:
        raise OptionError(f"bincount: minlength should be an int >= 0, got {minlength!r}")
    xp = get_array_module(a)
    if a.size and int(a.min()) < 0:
        raise OptionError(f"bincount only supports 1-d non-negative integral inputs, got the value {int(a.min())}")
    w = None
    if weights is not None:
        w = weights.array if isinstance(weights, Tensor) else xp.asarray(weights)
        if w.ndim != 1 or w.shape[0] != a.shape[0]:
            raise ShapeError(f"bincount: weights should be 1-d and have the same length as input ({a.shape[0]}), "
                             f"got shape {tuple(w.shape)}")
        w = w.astype(np.float32 if w.dtype == np.float32 else np.float64, copy=False)
    out = xp.bincount(a.astype(np.int64, copy=False), weights=w, minlength=int(minlength))  # (max(max+1, minlength),)
    return Tensor._from_op(out.astype(np.int64 if w is None else w.dtype, copy=False))


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """A bool mask of ``elements``' shape: True where the entry occurs in ``test_elements`` (``torch.isin``).

    Either argument may be a Python number (not both); values compare after type promotion, so
    ``1 == 1.0``. ``invert=True`` gives the complement; ``assume_unique`` is a speed hint and does not
    change the result.

    Raises:
        TypeError: neither argument a Tensor.
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(f"isin(): expected elements or test_elements to be a Tensor, got "
                        f"{type(elements).__name__} and {type(test_elements).__name__}")
    ref = elements if isinstance(elements, Tensor) else test_elements
    xp = get_array_module(ref.array)
    e = elements.array if isinstance(elements, Tensor) else xp.asarray(elements)
    t = test_elements.array if isinstance(test_elements, Tensor) else xp.asarray(test_elements)
    out = xp.isin(e, t.reshape(-1), invert=bool(invert))  # (*elements.shape)
    return Tensor._from_op(xp.asarray(out, dtype=np.bool_))


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
                       dim: int | None = None):
    """Collapse runs of equal consecutive entries (or, with ``dim``, equal consecutive slices along
    ``dim``) to one, as ``torch.unique_consecutive``.

    Without ``dim`` the input is flattened: ``(N,)`` values; the inverse (with ``return_inverse``) has
    the input's shape and maps each entry to its run; the counts (``return_counts``) are each run's
    length, int64. NaN never equals NaN, so each NaN is its own run. Returns the values alone, or a
    tuple ``(values, inverse?, counts?)`` with what was asked for.

    Raises:
        IndexError: ``dim`` out of range. ShapeError: with ``dim``, another dim of size 0.
    """
    _need_tensor(input, "unique_consecutive")
    a = input.array
    xp = get_array_module(a)
    if dim is None:
        flat = a.reshape(-1)  # (N,)
        starts = xp.ones(flat.shape, dtype=np.bool_)
        starts[1:] = flat[1:] != flat[:-1]
        values, inverse_shape = flat[starts], a.shape
    else:
        d = normalize_dim(dim, max(a.ndim, 1), "unique_consecutive")
        if any(n == 0 for i, n in enumerate(a.shape) if i != d):
            raise ShapeError("unique_consecutive: there are 0 sized dimensions, and they aren't selected, so unique "
                             f"cannot be applied (shape {tuple(a.shape)}, dim {dim})")
        moved = xp.moveaxis(a.reshape(1) if a.ndim == 0 else a, d, 0)  # (L, ...)
        rows = moved.reshape(moved.shape[0], int(np.prod(moved.shape[1:])))  # (L, rest)
        starts = xp.ones((rows.shape[0],), dtype=np.bool_)
        starts[1:] = (rows[1:] != rows[:-1]).any(axis=1)
        values, inverse_shape = xp.moveaxis(moved[starts], 0, d), (rows.shape[0],)
    out = [Tensor._from_op(xp.ascontiguousarray(values))]
    if return_inverse:
        out.append(Tensor._from_op((xp.cumsum(starts) - 1).astype(np.int64).reshape(inverse_shape)))
    if return_counts:
        bounds = xp.concatenate([xp.nonzero(starts)[0], xp.asarray([starts.shape[0]])])  # (R + 1,)
        out.append(Tensor._from_op(xp.diff(bounds).astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)

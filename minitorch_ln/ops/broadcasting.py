"""Shape arithmetic under broadcasting and flat indices: ``broadcast_shapes``, ``broadcast_tensors``,
``Tensor.sum_to_size``, ``ravel``, ``unravel_index``.

``broadcast_tensors`` expands each input to the common shape (views, gradient summed back by ``expand``'s
backward); ``sum_to_size`` is ``expand``'s adjoint (``shape.sum_to``); ``ravel`` is ``reshape(-1)``;
``unravel_index`` is NumPy's ``unravel_index`` on int64 arrays (no gradient: integer results). Broadcasting
is NumPy's and PyTorch's rule: sizes aligned from the right, each pair equal or one of them 1.
"""

from __future__ import annotations

import numbers

from ..backend import get_array_module
from ..errors import DtypeError, ShapeError
from ..tensor import Tensor
from ._util import broadcast_shape
from .shape import expand, reshape, sum_to

__all__ = ["broadcast_shapes", "broadcast_tensors", "ravel", "unravel_index"]


def _as_shape(s, op: str) -> tuple:
    if isinstance(s, numbers.Integral) and not isinstance(s, bool):
        return (int(s),)
    if isinstance(s, (tuple, list)) and all(isinstance(n, numbers.Integral) and not isinstance(n, bool) for n in s):
        if any(n < 0 for n in s):
            raise RuntimeError(f"{op}: trying to create a tensor with negative dimension in shape {tuple(s)}")
        return tuple(int(n) for n in s)
    raise TypeError(f"{op}: expected a shape (an int or a sequence of ints), got {s!r}")


def broadcast_shapes(*shapes) -> tuple:
    """The shape the given shapes broadcast to, e.g. ``(2, 1), (3,)`` → ``(2, 3)`` (a plain tuple; an int
    counts as a 1-D shape). Raises ShapeError (a RuntimeError) for shapes that do not broadcast."""
    out: tuple = ()
    for s in shapes:
        out = broadcast_shape(out, _as_shape(s, "broadcast_shapes()"), "broadcast_shapes()")
    return out


def broadcast_tensors(*tensors) -> tuple:
    """Each tensor expanded to the common broadcast shape (views; gradients summed back to each input's
    shape). Raises ShapeError for shapes that do not broadcast, TypeError for a non-Tensor argument."""
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"broadcast_tensors(): argument {i} must be a Tensor, not {type(t).__name__}")
    shape = broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(t if tuple(t.shape) == shape else expand(t, *shape) for t in tensors)


def sum_to_size(self: Tensor, *size) -> Tensor:
    """``Tensor.sum_to_size``: ``self`` summed over the dims where ``size`` has 1 (or lacks them), so that
    it has shape ``size``; ``self`` must be expandable from ``size``. Raises ShapeError otherwise."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    size = _as_shape(size, "sum_to_size()")
    try:
        fits = broadcast_shape(size, tuple(self.shape), "sum_to_size()") == tuple(self.shape)
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(f"sum_to_size(): size {list(size)} is not expandable to size {list(self.shape)}")
    return sum_to(self, size)


def ravel(input: Tensor) -> Tensor:
    """``input`` flattened to 1-D in row-major order, ``(numel,)`` (a view when the memory allows)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"ravel(): argument 'input' must be a Tensor, not {type(input).__name__}")
    return reshape(input, -1)


def unravel_index(indices: Tensor, shape) -> tuple:
    """The coordinates of flat ``indices`` in a row-major tensor of ``shape``: a tuple of ``len(shape)`` int64
    tensors of ``indices``' shape. Negative indices count from the end (``-1`` is the last element).

    Raises DtypeError for non-integer ``indices`` ("expected 'indices' to be integer dtype", PyTorch's
    words) and IndexError for an index outside ``[-numel, numel)`` (PyTorch wraps it silently).
    """
    if not isinstance(indices, Tensor):
        raise TypeError(f"unravel_index(): argument 'indices' must be a Tensor, not {type(indices).__name__}")
    if indices.dtype.kind not in "iu":
        raise DtypeError(f"unravel_index(): expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = _as_shape(shape, "unravel_index()")
    xp = get_array_module(indices.array)
    numel = 1
    for n in shape:
        numel *= n
    flat = indices.array.astype("int64")  # (*indices.shape)
    if flat.size and (int(flat.min()) < -numel or int(flat.max()) >= numel):
        raise IndexError(f"unravel_index(): indices must be in [-{numel}, {numel}) for shape {shape}, got "
                         f"values from {int(flat.min())} to {int(flat.max())}")
    flat = xp.where(flat < 0, flat + numel, flat)
    coords = xp.unravel_index(flat, shape) if shape else ()
    return tuple(Tensor._from_op(c.astype("int64")) for c in coords)

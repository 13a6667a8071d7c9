"""``Size``: the type of ``Tensor.shape`` and ``Tensor.size()``, as ``torch.Size``.

A tuple of ints (it equals and hashes as the plain tuple, and NumPy takes it wherever it takes a
shape) that prints as PyTorch's (``torch.Size([2, 3])``), has ``numel()``, and stays a ``Size``
when concatenated or repeated. Unlike PyTorch's, a slice (``x.shape[1:]``) is a plain tuple: indexing
stays tuple's own C code, because ops index ``x.shape`` on every call (a Python ``__getitem__``
costs about 1 us each time). Making one from an array's shape is a single ``tuple.__new__``
(``_size``), with no checks.
"""

from __future__ import annotations

import functools
import math
import operator

__all__ = ["Size"]


class Size(tuple):
    """``Size([2, 3])`` or ``Size()``: a tuple of ints, as ``torch.Size``.

    Raises TypeError when an item is not an int (a one-element integer tensor counts as its int).
    """

    __slots__ = ()

    def __new__(cls, sizes=()):
        items = []
        for i, n in enumerate(sizes):
            try:
                items.append(operator.index(n))
            except TypeError:
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is "
                                f"'{type(n).__name__}')") from None
        return tuple.__new__(cls, items)

    def numel(self) -> int:
        """The number of elements of a tensor of this shape (1 for ``Size([])``)."""
        return math.prod(self)

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(map(str, self))}])"

    __str__ = __repr__

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return tuple.__new__(Size, tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return tuple.__new__(Size, tuple.__add__(other, self))

    def __mul__(self, n):
        return tuple.__new__(Size, tuple.__mul__(self, n))

    __rmul__ = __mul__

    def __reduce__(self):
        return Size, (tuple(self),)


# _size(shape): an array's shape as a Size, with no checks (the items are ints already); a partial in
# C, so ``x.shape`` adds no Python frame to the ops that read it
_size = functools.partial(tuple.__new__, Size)

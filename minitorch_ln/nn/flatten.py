"""``Flatten`` and ``Unflatten``: reshapes as layers (views where the input's layout allows), as in PyTorch."""

from __future__ import annotations

import numbers

from ..ops._util import normalize_dim
from .module import Module


class Flatten(Module):
    """Flatten dims ``start_dim..end_dim`` into one: ``(N, C, H, W)`` → ``(N, C·H·W)`` by default.

    Raises (from ``Tensor.flatten``) IndexError for dims out of range and RuntimeError when
    ``start_dim`` comes after ``end_dim``.
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):  # noqa: A002 - PyTorch's name
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


def _require_tuple_int(sizes) -> None:
    if not isinstance(sizes, (tuple, list)):
        raise TypeError(f"unflattened_size must be a tuple of ints, but found type {type(sizes).__name__}")
    for i, s in enumerate(sizes):
        if not isinstance(s, numbers.Integral) or isinstance(s, bool):
            raise TypeError(f"unflattened_size must be tuple of ints, but found element of type "
                            f"{type(s).__name__} at pos {i}")


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size`` (one entry may be -1): ``(N, 12)`` → ``(N, 3, 4)``.

    Raises:
        TypeError: ``unflattened_size`` not a tuple/list of ints (at construction, PyTorch's message).
        RuntimeError: sizes whose product is not the size of ``dim``, or more than one -1.
        IndexError: ``dim`` out of range.
    """

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        _require_tuple_int(unflattened_size)
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):  # noqa: A002
        d = normalize_dim(self.dim, input.ndim, "unflatten")
        sizes = [int(s) for s in self.unflattened_size]
        n = input.shape[d] if input.ndim else 1
        if not sizes:
            raise RuntimeError("unflatten: sizes must be non-empty")
        if sizes.count(-1) > 1:
            raise RuntimeError(f"unflatten: only one dimension can be inferred (-1), got sizes {sizes}")
        known = 1
        for s in sizes:
            known *= s if s != -1 else 1
        if -1 in sizes:
            if known == 0 or n % known:
                raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim "
                                   f"{self.dim} ({n}) in the input tensor")
            sizes[sizes.index(-1)] = n // known
        elif known != n:
            raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {self.dim} "
                               f"({n}) in the input tensor")
        return input.reshape(*input.shape[:d], *sizes, *input.shape[d + 1:])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"

"""The ``*_copy`` twins of the view ops (``expand_copy``, ``permute_copy``, ``view_copy``, ``diagonal_copy``,
``narrow_copy``, ...), and the splits PyTorch lists under other names (``split_with_sizes``, ``unsafe_split``,
``unsafe_chunk``, ``split_with_sizes_copy``, ``unbind_copy``).

A ``*_copy`` op is its view op followed by ``clone``: the same values, shape and gradient, in memory of its
own (PyTorch's functionalization names them so; an in-place change of the result never reaches the input).
``unsafe_split``/``unsafe_chunk`` are ``split``/``chunk`` (PyTorch's "unsafe" only skips view tracking, which
changes no value). The arguments and errors are those of the view op each wraps.
"""

from __future__ import annotations

from ..tensor import Tensor
from .shape import expand, permute, reshape, squeeze, transpose, unsqueeze
from .stacking import chunk, split
from .strided_views import as_strided, unfold_windows
from .view_ops import diagonal, narrow, unbind

__all__ = [
    "alias_copy", "as_strided_copy", "diagonal_copy", "expand_copy", "narrow_copy", "permute_copy",
    "split_with_sizes", "split_with_sizes_copy", "squeeze_copy", "t_copy", "transpose_copy", "unbind_copy",
    "unfold_copy", "unsafe_chunk", "unsafe_split", "unsqueeze_copy", "view_copy",
]


def _need_tensor(op: str, input) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, not {type(input).__name__}")


def alias_copy(input: Tensor) -> Tensor:
    """A copy of ``input`` (``torch.alias_copy``): same values, dtype and gradient, its own memory."""
    _need_tensor("alias_copy", input)
    return input.clone()


def expand_copy(input: Tensor, size, *, implicit: bool = False) -> Tensor:
    """``input.expand(size)`` as a tensor of its own (``-1`` keeps a size); raises as ``expand``."""
    _need_tensor("expand_copy", input)
    return expand(input, *size).clone()


def permute_copy(input: Tensor, dims) -> Tensor:
    """``input.permute(dims)`` as a tensor of its own; raises as ``permute``."""
    _need_tensor("permute_copy", input)
    return permute(input, *dims).clone()


def view_copy(input: Tensor, size) -> Tensor:
    """``input.view(size)`` as a tensor of its own; unlike ``view`` it takes any layout (PyTorch's ``view_copy``
    reshapes a non-contiguous input too). Raises as ``reshape``; a dtype for ``size`` is refused."""
    _need_tensor("view_copy", input)
    if not isinstance(size, (tuple, list, int)):
        raise TypeError(f"view_copy(): size must be a tuple of ints, got {type(size).__name__}")
    return reshape(input, size).clone()


def diagonal_copy(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """``diagonal(input, offset, dim1, dim2)`` as a tensor of its own; raises as ``diagonal``."""
    _need_tensor("diagonal_copy", input)
    return diagonal(input, offset, dim1, dim2).clone()


def as_strided_copy(input: Tensor, size, stride, storage_offset=None) -> Tensor:
    """``as_strided(input, size, stride, storage_offset)`` as a tensor of its own; raises as ``as_strided``."""
    _need_tensor("as_strided_copy", input)
    return as_strided(input, size, stride, storage_offset).clone()


def squeeze_copy(input: Tensor, dim=None) -> Tensor:
    """``squeeze(input, dim)`` as a tensor of its own; raises as ``squeeze``."""
    _need_tensor("squeeze_copy", input)
    return squeeze(input, dim).clone()


def unsqueeze_copy(input: Tensor, dim: int) -> Tensor:
    """``unsqueeze(input, dim)`` as a tensor of its own; raises as ``unsqueeze``."""
    _need_tensor("unsqueeze_copy", input)
    return unsqueeze(input, dim).clone()


def t_copy(input: Tensor) -> Tensor:
    """``input.t()`` (at most 2-D) as a tensor of its own; raises as ``Tensor.t``."""
    _need_tensor("t_copy", input)
    return input.t().clone()


def transpose_copy(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """``transpose(input, dim0, dim1)`` as a tensor of its own; raises as ``transpose``."""
    _need_tensor("transpose_copy", input)
    return transpose(input, dim0, dim1).clone()


def unfold_copy(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """``input.unfold(dimension, size, step)`` (windows along a dim) as a tensor of its own."""
    _need_tensor("unfold_copy", input)
    return unfold_windows(input, dimension, size, step).clone()


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``narrow(input, dim, start, length)`` as a tensor of its own; raises as ``narrow``."""
    _need_tensor("narrow_copy", input)
    return narrow(input, dim, start, length).clone()


def unbind_copy(input: Tensor, dim: int = 0) -> tuple:
    """``unbind(input, dim)``, each piece a tensor of its own."""
    _need_tensor("unbind_copy", input)
    return tuple(p.clone() for p in unbind(input, dim))


def split_with_sizes(input: Tensor, split_sizes, dim: int = 0) -> tuple:
    """``split(input, split_sizes, dim)`` with a list of sizes that must sum to the dim's size (views).

    Raises ShapeError when they do not, TypeError when ``split_sizes`` is not a sequence of ints.
    """
    _need_tensor("split_with_sizes", input)
    if isinstance(split_sizes, int) or not all(isinstance(s, int) for s in split_sizes):
        raise TypeError(f"split_with_sizes(): split_sizes must be a sequence of ints, got {split_sizes!r}")
    return split(input, list(split_sizes), dim)


def split_with_sizes_copy(input: Tensor, split_sizes, dim: int = 0) -> tuple:
    """:func:`split_with_sizes`, each piece a tensor of its own."""
    return tuple(p.clone() for p in split_with_sizes(input, split_sizes, dim))


def unsafe_split(tensor: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """``split`` (PyTorch's "unsafe" variant skips view tracking only; the pieces are the same)."""
    _need_tensor("unsafe_split", tensor)
    return split(tensor, split_size_or_sections, dim)


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """``chunk`` (PyTorch's "unsafe" variant skips view tracking only; the pieces are the same)."""
    _need_tensor("unsafe_chunk", input)
    return chunk(input, chunks, dim)

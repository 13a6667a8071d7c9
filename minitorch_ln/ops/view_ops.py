"""More views, as PyTorch's: ``diagonal``, ``movedim``, ``swapaxes``/``swapdims``, ``narrow``, ``select``,
``unbind``, ``unflatten``, ``view_as``, ``reshape_as``; and the in-place forms of the scatter family
(``scatter_``, ``scatter_add_``, ``scatter_reduce_``, ``index_add_``, ``index_copy_``, ``index_fill_``,
``index_put_``, ``masked_scatter_``).

Each view is built from the view ops of ``shape.py`` and ``indexing.py`` (permute, reshape, slicing),
so it shares memory and the version counter with its base and an in-place op on it rewrites the
base's history (``autograd/views.py``); ``diagonal`` is a strided view of its own. Each in-place
op runs its out-of-place twin through ``Tensor._inplace`` (``ops/inplace.py``), so the version
checks, the leaf rule and views of views behave as for ``add_``.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..autograd.function import Function
from ..autograd.views import make_view
from ..backend import get_array_module
from ..errors import IndexOutOfRangeError, ShapeError
from ..tensor import Tensor
from ._util import normalize_dim
from .autocast_policies import autocast
from .indexing import IndexBackward, _normalize_index
from .index_ops import index_add, index_copy, index_fill, masked_scatter
from .scatter import scatter, scatter_add, scatter_reduce
from .shape import permute, reshape, view

__all__ = [
    "diagonal", "index_put", "moveaxis", "movedim", "narrow", "select", "swapaxes", "swapdims", "unbind",
    "unflatten"
]


# ==================================================================================================
# diagonal: a strided view of the diagonal of two dims
# ==================================================================================================


def _diagonal_array(a, offset, d1, d2):
    """The writable strided view of ``a``'s diagonal over dims ``d1 < d2``, moved last (as PyTorch)."""
    xp = get_array_module(a)
    n1, n2 = a.shape[d1], a.shape[d2]
    n = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    start = [0] * a.ndim
    if n:
        start[d1], start[d2] = (0, offset) if offset >= 0 else (-offset, 0)
    keep = [i for i in range(a.ndim) if i not in (d1, d2)]
    shape = tuple(a.shape[i] for i in keep) + (n,)
    strides = tuple(a.strides[i] for i in keep) + (a.strides[d1] + a.strides[d2],)
    base = a[tuple(slice(s, None) for s in start)] if n else a
    if xp is np:
        return np.lib.stride_tricks.as_strided(base, shape, strides, writeable=a.flags.writeable)
    return xp.lib.stride_tricks.as_strided(base, shape, strides)  # pragma: no cover - needs a GPU


class Diagonal(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, x, offset, d1, d2):
        ctx.shape, ctx.args = x.shape, (offset, d1, d2)
        return _diagonal_array(x, offset, d1, d2)

    @staticmethod
    def backward(ctx, dy):
        return DiagonalBackward.apply(dy, ctx.shape, *ctx.args), None, None, None


class DiagonalBackward(Function):
    """The adjoint of :class:`Diagonal`: ``dy`` written onto the diagonal of zeros of the input's shape."""

    supports_complex = True

    @staticmethod
    def forward(ctx, dy, shape, offset, d1, d2):
        ctx.args = (offset, d1, d2)
        dx = get_array_module(dy).zeros(shape, dtype=dy.dtype)
        _diagonal_array(dx, offset, d1, d2)[...] = dy
        return dx

    @staticmethod
    def backward(ctx, ddx):
        return Diagonal.apply(ddx, *ctx.args), None, None, None, None


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:  # noqa: A002
    """The diagonal of ``input`` over ``dim1`` and ``dim2`` (a view, as PyTorch's), those dims removed and
    the diagonal appended last: ``(3, 4, 5)`` with ``dim1=1, dim2=2`` → ``(3, 4)``; ``offset`` > 0 above.

    Raises:
        IndexOutOfRangeError: a dim out of range. ShapeError: ``dim1 == dim2``.
    """
    if input.ndim < 2:
        raise ShapeError(f"diagonal: expected a tensor with at least 2 dims, got shape {tuple(input.shape)}")
    d1, d2 = normalize_dim(dim1, input.ndim, "diagonal"), normalize_dim(dim2, input.ndim, "diagonal")
    if d1 == d2:
        raise ShapeError(f"diagonal: dim1 and dim2 cannot be the same dimension, got {dim1} and {dim2}")
    offset = int(offset)
    if d1 > d2:
        d1, d2, offset = d2, d1, -offset
    out = Diagonal.apply(input, offset, d1, d2)
    return make_view(out, input, lambda t: Diagonal.apply(t, offset, d1, d2))


# ==================================================================================================
# Views composed from permute, reshape and slicing
# ==================================================================================================


def _dims(d, ndim, op) -> tuple:
    d = (d,) if isinstance(d, numbers.Integral) else tuple(d)
    out = tuple(normalize_dim(i, ndim, op) for i in d)
    if len(set(out)) != len(out):
        raise ShapeError(f"{op}: repeated dim in {d}")
    return out


def movedim(input: Tensor, source, destination) -> Tensor:  # noqa: A002
    """Move dims ``source`` to positions ``destination`` (ints or sequences of one length), keeping the
    order of the others: ``(2, 3, 4)`` with ``movedim(0, -1)`` → ``(3, 4, 2)``. A view.

    Raises:
        ShapeError: source and destination of different lengths, or a repeated dim.
    """
    src, dst = _dims(source, input.ndim, "movedim"), _dims(destination, input.ndim, "movedim")
    if len(src) != len(dst):
        raise ShapeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain "
                         f"the same number of dims as destination ({list(dst)} dims)")
    order = [i for i in range(input.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, *order)


moveaxis = movedim


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:  # noqa: A002
    """``transpose(input, axis0, axis1)`` (NumPy's name, as ``torch.swapaxes``). A view."""
    return input.transpose(axis0, axis1)


swapdims = swapaxes


def narrow(input: Tensor, dim: int, start, length: int) -> Tensor:  # noqa: A002
    """``input`` restricted to ``[start, start + length)`` along ``dim`` (a view).

    Raises:
        IndexOutOfRangeError: ``start`` outside ``[-size, size]`` or ``start + length`` past the end.
    """
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = normalize_dim(dim, input.ndim, "narrow")
    size = input.shape[d]
    if isinstance(start, Tensor) and (start.ndim != 0 or start.dtype.kind not in "iu"):
        raise RuntimeError(f"narrow(): start must be an 0-dim integral Tensor, got shape {tuple(start.shape)} "
                           f"{start.dtype}")
    start = int(start.item() if isinstance(start, Tensor) else start)
    if not -size <= start <= size:
        raise IndexOutOfRangeError(f"narrow: start ({start}) is out of bounds for dimension {dim} of size {size}")
    start = start % size if size and start < 0 else start
    if length < 0 or start + length > size:
        raise IndexOutOfRangeError(f"narrow: start ({start}) + length ({length}) exceeds dimension size ({size})")
    return input[(slice(None),) * d + (slice(start, start + length),)]


def select(input: Tensor, dim: int, index: int) -> Tensor:  # noqa: A002
    """``input`` at ``index`` along ``dim``, that dim removed (a view): ``x.select(1, 0)`` is ``x[:, 0]``.

    Raises:
        IndexOutOfRangeError: ``index`` outside ``[-size, size)``.
    """
    d = normalize_dim(dim, input.ndim, "select")
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexOutOfRangeError(f"select(): index {index} out of range for tensor of size "
                                   f"{list(input.shape)} at dimension {dim}")
    return input[(slice(None),) * d + (int(index),)]


def unbind(input: Tensor, dim: int = 0) -> tuple:  # noqa: A002
    """The slices along ``dim``, each a view with that dim removed: ``(3, 4)`` → three ``(4,)``."""
    d = normalize_dim(dim, input.ndim, "unbind")
    return tuple(select(input, d, i) for i in range(input.shape[d]))


def unflatten(input: Tensor, dim: int, sizes) -> Tensor:  # noqa: A002
    """Split dim ``dim`` into ``sizes`` (one may be -1): ``(2, 12)`` with ``unflatten(1, (3, 4))`` →
    ``(2, 3, 4)``. A view where ``reshape`` gives one.

    Raises:
        ShapeError: sizes whose product is not the dim's size.
    """
    d = normalize_dim(dim, input.ndim, "unflatten")
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise ShapeError("unflatten: sizes must be non-empty")
    known = int(np.prod([s for s in sizes if s != -1]))
    if sizes.count(-1) > 1 or (-1 not in sizes and known != input.shape[d]) or (
            -1 in sizes and (known == 0 or input.shape[d] % known)):
        raise ShapeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                         f"({input.shape[d]}) in the input tensor")
    return reshape(input, *input.shape[:d], *sizes, *input.shape[d + 1:])


def view_as(self: Tensor, other: Tensor) -> Tensor:
    return view(self, *other.shape)


def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    return reshape(self, *other.shape)


# ==================================================================================================
# In-place forms of the scatter family: the out-of-place op, written back (ops/inplace.py)
# ==================================================================================================


@autocast("index_put")
def index_put(input: Tensor, indices, values, accumulate: bool = False) -> Tensor:  # noqa: A002
    """``input`` with ``values`` put at ``input[indices]``, or added there when ``accumulate`` (repeated
    positions then add up, as PyTorch), out of place; ``indices`` is a tuple of index tensors.

    Raises:
        ShapeError: ``indices`` not a tuple or list; IndexError as ``input[indices]``.
    """
    if not isinstance(indices, (tuple, list)):
        raise ShapeError(f"index_put: indices must be a tuple of tensors, got {type(indices).__name__}")
    idx = tuple(slice(None) if i is None else i for i in indices)
    if not isinstance(values, Tensor):
        values = Tensor._from_op(get_array_module(input.array).asarray(values, dtype=input.dtype))
    if not accumulate:
        out = input.clone()
        out[idx] = values
        return out
    index, basic = _normalize_index(input, idx)
    picked = input[idx]                                   # only for its shape (and the index checks)
    return input + IndexBackward.apply(values.expand(*picked.shape), input.shape, index, basic)


class _InPlaceScatter:
    def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
        return self._inplace("scatter_", lambda s: scatter(s, dim, index, src, value=value, reduce=reduce)
                             if value is not None else scatter(s, dim, index, src, reduce=reduce), src)

    def scatter_add_(self, dim, index, src):
        return self._inplace("scatter_add_", lambda s: scatter_add(s, dim, index, src), src)

    def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
        return self._inplace("scatter_reduce_", lambda s: scatter_reduce(s, dim, index, src, reduce,
                                                                         include_self=include_self), src)

    def index_add_(self, dim, index, source, *, alpha=1):
        return self._inplace("index_add_", lambda s: index_add(s, dim, index, source, alpha=alpha), source)

    def index_copy_(self, dim, index, source):
        return self._inplace("index_copy_", lambda s: index_copy(s, dim, index, source), source)

    def index_fill_(self, dim, index, value):
        return self._inplace("index_fill_", lambda s: index_fill(s, dim, index, value))

    def index_put_(self, indices, values, accumulate=False):
        return self._inplace("index_put_", lambda s: index_put(s, indices, values, accumulate), values)

    def masked_scatter_(self, mask, source):
        return self._inplace("masked_scatter_", lambda s: masked_scatter(s, mask, source), source)

"""Stacking and splitting helpers: ``atleast_1d/2d/3d``, ``hstack``, ``vstack``/``row_stack``, ``dstack``,
``column_stack``, ``block_diag``, ``tensor_split``, ``hsplit``, ``vsplit``, ``dsplit`` (NumPy's names), and
``split``, ``chunk`` (PyTorch's, views through indexing.py's ``Split``).

All are compositions: the stacks reshape each input to enough dims and call ``cat``; the splits
return slices ``x[.., a:b, ..]`` (views of ``x`` once indexing returns views), so their gradients are
those of ``cat`` and of indexing. ``block_diag`` is one Function: it writes the blocks into zeros and
its gradient reads them back out of ``dy``.
"""

from __future__ import annotations

import itertools
import numbers

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..backend import get_array_module
from ..autograd.views import make_view
from ..errors import DtypeError, IndexOutOfRangeError, OptionError, ShapeError
from ..tensor import Tensor
from ._util import axis_alias, normalize_dim
from .conversion import cast
from .indexing import GetItem
from .joining import Split, cat
from .shape import reshape, unsqueeze

__all__ = [
    "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "chunk", "column_stack", "dsplit", "dstack", "hsplit",
    "hstack", "row_stack", "split", "tensor_split", "vsplit", "vstack"
]


def _tensor_list(tensors, op: str, allow_empty: bool = False) -> list:
    """``tensors`` (a list or tuple of Tensors) as a list; TypeError / ShapeError naming what came."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): expected a list or tuple of Tensors, got {type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): expected a list or tuple of Tensors, got {type(t).__name__} at position {i}")
    if not tensors and not allow_empty:
        raise ShapeError(f"{op}(): expects a non-empty list of tensors, got an empty one")
    return list(tensors)


def _cat(tensors, dim: int, op: str) -> Tensor:
    """``cat`` after checking (with a ShapeError naming both shapes) that the shapes agree off ``dim``."""
    ref = tensors[0]
    for i, t in enumerate(tensors[1:], 1):
        if t.ndim != ref.ndim:
            raise ShapeError(f"{op}(): tensors must have the same number of dimensions: tensor 0 has shape "
                             f"{tuple(ref.shape)}, tensor {i} has shape {tuple(t.shape)}")
        if any(a != b for d, (a, b) in enumerate(zip(t.shape, ref.shape)) if d != dim):
            raise ShapeError(f"{op}(): sizes of tensors must match except in dimension {dim}: tensor 0 has shape "
                             f"{tuple(ref.shape)}, tensor {i} has shape {tuple(t.shape)}")
    return cat(tensors, dim)


# ==================================================================================================
# atleast_1d, atleast_2d, atleast_3d
# ==================================================================================================


def _atleast(tensors, op: str, fn):
    """One Tensor in, one out; several (or one list) in, a tuple out (as PyTorch)."""
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return fn(tensors[0])
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    return tuple(fn(t) for t in _tensor_list(tensors, op, allow_empty=True))


def _as_1d(t: Tensor) -> Tensor:
    return reshape(t, (1,)) if t.ndim == 0 else t  # () -> (1,)


def _as_2d(t: Tensor) -> Tensor:
    return reshape(t, (1, -1)) if t.ndim < 2 else t  # () -> (1, 1), (n,) -> (1, n)


def _as_3d(t: Tensor) -> Tensor:
    if t.ndim == 0:
        return reshape(t, (1, 1, 1))
    if t.ndim == 1:
        return reshape(t, (1, t.shape[0], 1))  # (n,) -> (1, n, 1)
    return unsqueeze(t, 2) if t.ndim == 2 else t  # (m, n) -> (m, n, 1)


def atleast_1d(*tensors):
    """Each input with at least 1 dim: ``()`` → ``(1,)``; others unchanged (the same Tensor).

    One Tensor gives a Tensor; several Tensors, or one list/tuple of them, give a tuple.
    """
    return _atleast(tensors, "atleast_1d", _as_1d)


def atleast_2d(*tensors):
    """Each input with at least 2 dims: ``()`` → ``(1, 1)``, ``(n,)`` → ``(1, n)``. Returns as :func:`atleast_1d`."""
    return _atleast(tensors, "atleast_2d", _as_2d)


def atleast_3d(*tensors):
    """Each input with at least 3 dims: ``()`` → ``(1, 1, 1)``, ``(n,)`` → ``(1, n, 1)``, ``(m, n)`` → ``(m, n, 1)``.

    Returns as :func:`atleast_1d`.
    """
    return _atleast(tensors, "atleast_3d", _as_3d)


# ==================================================================================================
# hstack, vstack, row_stack, dstack, column_stack
# ==================================================================================================


def hstack(tensors) -> Tensor:
    """Join along the columns: 1-D (and 0-d) inputs end to end along dim 0, others along dim 1.

    ``[(2, 3), (2, 1)]`` → ``(2, 4)``; ``[(3,), ()]`` → ``(4,)``. Dtypes promote as for ``cat``.
    Raises ShapeError (RuntimeError) for an empty list or shapes that do not fit (naming both);
    TypeError for anything but a list/tuple of Tensors.
    """
    tensors = [_as_1d(t) for t in _tensor_list(tensors, "hstack")]
    return _cat(tensors, 0 if tensors[0].ndim == 1 else 1, "hstack")


def vstack(tensors) -> Tensor:
    """Join along the rows after :func:`atleast_2d`: ``[(3,), (3,)]`` → ``(2, 3)``; ``[(2, 3), (1, 3)]`` → ``(3, 3)``.

    Raises as :func:`hstack`.
    """
    return _cat([_as_2d(t) for t in _tensor_list(tensors, "vstack")], 0, "vstack")


def row_stack(tensors) -> Tensor:
    """An alias of :func:`vstack` (as PyTorch)."""
    return _cat([_as_2d(t) for t in _tensor_list(tensors, "row_stack")], 0, "row_stack")


def dstack(tensors) -> Tensor:
    """Join along the depth (dim 2) after :func:`atleast_3d`: ``[(2, 3), (2, 3)]`` → ``(2, 3, 2)``.

    Raises as :func:`hstack`.
    """
    return _cat([_as_3d(t) for t in _tensor_list(tensors, "dstack")], 2, "dstack")


def column_stack(tensors) -> Tensor:
    """Join as columns along dim 1: 0-d and 1-D ``(n,)`` inputs become columns ``(n, 1)`` first.

    ``[(3,), (3,)]`` → ``(3, 2)``; ``[(2, 3), (2,)]`` → ``(2, 4)``. Raises as :func:`hstack`.
    """
    cols = [reshape(t, (t.numel(), 1)) if t.ndim < 2 else t for t in _tensor_list(tensors, "column_stack")]
    return _cat(cols, 1, "column_stack")


# ==================================================================================================
# block_diag
# ==================================================================================================


class BlockDiag(Function):
    supports_complex = True  # moves or copies elements only: the same backward for complex (docs/complex.md)

    @staticmethod
    def forward(ctx, *blocks):
        xp = get_array_module(*blocks)
        rows, cols = [b.shape[0] for b in blocks], [b.shape[1] for b in blocks]
        ctx.rows, ctx.cols = np.cumsum([0] + rows).tolist(), np.cumsum([0] + cols).tolist()
        out = xp.zeros((ctx.rows[-1], ctx.cols[-1]), dtype=blocks[0].dtype)  # (sum rows, sum cols)
        for i, b in enumerate(blocks):
            out[ctx.rows[i]:ctx.rows[i + 1], ctx.cols[i]:ctx.cols[i + 1]] = b
        return out

    @staticmethod
    def backward(ctx, dy):
        r, c = ctx.rows, ctx.cols
        return tuple(dy[r[i]:r[i + 1], c[i]:c[i + 1]] if need else None
                     for i, need in enumerate(ctx.needs_input_grad))


def block_diag(*tensors) -> Tensor:
    """The block-diagonal matrix of the inputs: ``(m1, n1), (m2, n2)`` → ``(m1 + m2, n1 + n2)``, zeros off the blocks.

    Each input is 0-d (a ``(1, 1)`` block), 1-D ``(n,)`` (a ``(1, n)`` block) or 2-D. Dtypes promote as
    for ``+``. No inputs give a ``(1, 0)`` float tensor (as PyTorch). The gradient of each input is its
    block of ``dy``.

    Raises:
        ShapeError (RuntimeError): an input with more than 2 dims.  TypeError: an input not a Tensor.
    """
    tensors = _tensor_list(tensors, "block_diag", allow_empty=True)
    if not tensors:
        return Tensor._from_op(np.zeros((1, 0), dtype=backend.default_float_dtype()))
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise ShapeError(f"block_diag(): input tensors must have 2 or fewer dimensions, got input {i} of shape "
                             f"{tuple(t.shape)}")
    dt = tensors[0].dtype
    for t in tensors[1:]:
        dt = backend.result_dtype(dt, False, t.dtype, False)
    blocks = [_as_2d(cast(t, dt)) for t in tensors]
    return BlockDiag.apply(*blocks)


# ==================================================================================================
# tensor_split, hsplit, vsplit, dsplit
# ==================================================================================================


def _slices(input: Tensor, dim: int, bounds) -> tuple:
    """``input[.., a:b, ..]`` at ``dim`` for consecutive ``(a, b)`` of ``bounds`` (Python slice rules)."""
    lead = (slice(None),) * dim
    return tuple(input[lead + (slice(a, b),)] for a, b in itertools.pairwise(bounds))


@axis_alias
def tensor_split(input: Tensor, indices_or_sections, dim: int = 0) -> tuple:
    """Split ``input`` along ``dim`` into slices (NumPy's ``array_split``); returns a tuple of Tensors.

    ``indices_or_sections``: an int ``n`` (n pieces; the first ``size % n`` one longer, some empty when
    ``n > size``), a list/tuple of indices (pieces ``[0:i0], [i0:i1], .., [ik:]`` with Python's slice
    rules: negative indices count from the end, indices past the end give empty pieces), or an int64
    Tensor (0-d: sections, 1-D: indices).

    Raises:
        ShapeError (RuntimeError): a 0-d input, sections < 1, or a Tensor of more than 1 dim.
        DtypeError (TypeError): a Tensor of another dtype than int64.  IndexOutOfRangeError: dim out of range.
        TypeError: anything else as ``indices_or_sections``.
    """
    op = "tensor_split"
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): expected input to be a Tensor, got {type(input).__name__}")
    if input.ndim == 0:
        raise ShapeError(f"{op}(): expected at least a 1-dimensional tensor, got a 0-d tensor")
    d = _dim(dim, input.ndim, op)
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        if spec.dtype != np.int64:
            raise DtypeError(f"{op}(): expected indices_or_sections of dtype int64, got {spec.dtype}")
        if spec.ndim > 1:
            raise ShapeError(f"{op}(): expected indices_or_sections to be a 0-d or 1-d tensor, got shape "
                             f"{tuple(spec.shape)}")
        spec = int(spec.item()) if spec.ndim == 0 else [int(i) for i in spec.tolist()]
    size = input.shape[d]
    if isinstance(spec, numbers.Integral) and not isinstance(spec, bool):
        if spec <= 0:
            raise ShapeError(f"{op}(): number of sections must be larger than 0, got {spec}")
        q, r = divmod(size, int(spec))
        bounds = [0] + np.cumsum([q + 1] * r + [q] * (int(spec) - r)).tolist()
    elif isinstance(spec, (list, tuple)) and all(isinstance(i, numbers.Integral) and not isinstance(i, bool)
                                                 for i in spec):
        bounds = [0, *(int(i) for i in spec), None]
    else:
        raise TypeError(f"{op}(): expected indices_or_sections to be an int, a tuple of ints or an int64 Tensor, "
                        f"got {spec!r}")
    return _slices(input, d, bounds)


def _dim(dim, ndim: int, op: str) -> int:
    if not isinstance(dim, numbers.Integral) or isinstance(dim, bool):
        raise TypeError(f"{op}(): expected dim to be an int, got {type(dim).__name__}")
    if not -ndim <= dim < ndim:
        raise IndexOutOfRangeError(f"{op}(): dimension {dim} is out of range for a tensor with {ndim} dimension(s) "
                                   f"(expected a value in [{-ndim}, {ndim - 1}])")
    return int(dim) % ndim


def _split_nd(input: Tensor, spec, min_dims: int, dim: int, op: str) -> tuple:
    """``tensor_split`` along ``dim`` where an int ``spec`` must divide the size evenly (NumPy's ``split``)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): expected input to be a Tensor, got {type(input).__name__}")
    if input.ndim < min_dims:
        raise ShapeError(f"{op}(): requires a tensor with at least {min_dims} dimension(s), got a tensor of shape "
                         f"{tuple(input.shape)}")
    if isinstance(spec, numbers.Integral) and not isinstance(spec, bool):
        size = input.shape[dim]
        if spec == 0 or size % spec != 0:
            raise ShapeError(f"{op}(): attempted to split dimension {dim} of size {size} into {spec} equal sections: "
                             f"{size} is not divisible by {spec} (pass a list of indices for unequal pieces)")
    elif not isinstance(spec, (list, tuple)):
        raise TypeError(f"{op}(): expected an int (sections) or a list/tuple of indices, got {type(spec).__name__}")
    return tensor_split(input, spec, dim)


def hsplit(input: Tensor, indices_or_sections) -> tuple:
    """Split along the columns: dim 1 for 2-D and more, dim 0 for 1-D. An int must divide the size evenly.

    Raises ShapeError (a 0-d input; sections that do not divide the size); others as :func:`tensor_split`.
    """
    dim = 1 if isinstance(input, Tensor) and input.ndim > 1 else 0
    return _split_nd(input, indices_or_sections, 1, dim, "hsplit")


def vsplit(input: Tensor, indices_or_sections) -> tuple:
    """Split along the rows (dim 0) of an input with at least 2 dims. Raises as :func:`hsplit`."""
    return _split_nd(input, indices_or_sections, 2, 0, "vsplit")


def dsplit(input: Tensor, indices_or_sections) -> tuple:
    """Split along the depth (dim 2) of an input with at least 3 dims. Raises as :func:`hsplit`."""
    return _split_nd(input, indices_or_sections, 3, 2, "dsplit")


def as_split_method(fn):
    """``fn`` (hsplit, vsplit, dsplit) as a Tensor method: ``x.hsplit(2)``, ``x.hsplit([1, 2])``, ``x.hsplit(1, 2)``."""
    def split_method(self, *indices_or_sections):
        spec = indices_or_sections  # x.hsplit(2), x.hsplit([1, 2]) and x.hsplit(1, 2) alike
        return fn(self, spec[0] if len(spec) == 1 else list(spec))

    split_method.__name__ = fn.__name__
    split_method.__doc__ = fn.__doc__
    return split_method


# ==================================================================================================
# split, chunk (views of the input)
# ==================================================================================================


def split(tensor: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """Split along ``dim`` into pieces of ``split_size_or_sections`` (the last may be smaller) or of the listed sizes.

    Returns a tuple of Tensors, each a view of ``tensor`` (its memory and version counter; an
    in-place op on a piece rewrites ``tensor``'s history, which PyTorch refuses but the math allows).
    Raises ValueError when ``split_size`` is not positive and ShapeError when listed sizes do not
    sum to the dimension's size.
    """
    d = normalize_dim(dim, tensor.ndim, "split")
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, numbers.Integral):
        step = int(split_size_or_sections)
        if step <= 0:
            raise OptionError(f"split: split_size must be a positive integer, got {step}")
        sizes = [min(step, n - s) for s in range(0, n, step)] or [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if any(s < 0 for s in sizes) or sum(sizes) != n:
            raise ShapeError(
                f"split: sizes {sizes} must be non-negative and sum to {n}, the size of dimension {d} of "
                f"shape {tuple(tensor.shape)}"
            )
    if len(sizes) == 1:
        return (tensor,)
    pieces = Split.apply(tensor, sizes, d)
    start = 0
    for p, size in zip(pieces, sizes):  # the pieces are views of the input, as in PyTorch
        index = (slice(None),) * d + (slice(start, start + size),)
        make_view(p, tensor, lambda t, index=index: GetItem.apply(t, index, True))
        start += size
    return pieces


@axis_alias
def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:  # noqa: A002
    """Split into ``chunks`` pieces of ``ceil(size / chunks)`` along ``dim`` (fewer when that covers it, as PyTorch)."""
    if not isinstance(chunks, numbers.Integral) or chunks <= 0:
        raise OptionError(f"chunk: chunks must be a positive integer, got {chunks!r}")
    d = normalize_dim(dim, input.ndim, "chunk")
    n = input.shape[d]
    step = max(-(-n // chunks), 1)
    return split(input, step, d)

"""Diagonals, triangles and index grids: ``diag``, ``diag_embed``, ``diagflat``, ``triu``, ``tril``,
``meshgrid``, ``cartesian_prod``, ``combinations``, ``tril_indices``, ``triu_indices``.

Reading a diagonal and writing one into zeros are each other's adjoint: ``DiagTake``'s gradient
writes ``dy`` onto the diagonal of zeros of the input's shape, and ``DiagEmbed``'s reads the
diagonal of ``dy`` back. ``meshgrid`` and ``cartesian_prod`` are reshapes and broadcasts (their
gradients sum over the broadcast axes); ``combinations`` indexes, so its gradient scatter-adds.
"""

from __future__ import annotations

import itertools
import numbers
import warnings

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import DtypeError, IndexOutOfRangeError, OptionError, ShapeError
from ..tensor import Tensor
from .joining import stack
from .shape import broadcast_to, reshape

__all__ = [
    "cartesian_prod", "combinations", "diag", "diag_embed", "diagflat", "meshgrid", "tril", "tril_indices", "triu",
    "triu_indices"
]


def _need_tensor(x, op: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): expected input to be a Tensor, got {type(x).__name__}")


def _int(v, op: str, name: str) -> int:
    if not isinstance(v, numbers.Integral) or isinstance(v, bool):
        raise TypeError(f"{op}(): expected {name} to be an int, got {type(v).__name__}")
    return int(v)


def _dim(d, ndim: int, op: str) -> int:
    d = _int(d, op, "dim")
    if not -ndim <= d < ndim:
        raise IndexOutOfRangeError(f"{op}(): dimension {d} is out of range for {ndim} dimension(s) "
                                   f"(expected a value in [{-ndim}, {ndim - 1}])")
    return d % ndim


# ==================================================================================================
# The diagonal of dims (dim1, dim2), read out and written in
# ==================================================================================================


def _diag_place(length: int, offset: int, xp):
    """Row and column indices of the ``offset``-th diagonal (above the main one for ``offset > 0``)."""
    rows = xp.arange(length) + max(-offset, 0)  # (L,)
    return rows, rows + offset


class DiagTake(Function):
    """``y[..., i] = x[.., i + max(-offset, 0), .., i + max(offset, 0), ..]``: a copy, the diagonal last."""

    supports_complex = True

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2):
        ctx.in_shape, ctx.offset, ctx.dim1, ctx.dim2 = x.shape, offset, dim1, dim2
        return get_array_module(x).diagonal(x, offset, dim1, dim2).copy()  # (*other dims, L)

    @staticmethod
    def backward(ctx, dy):
        return DiagEmbed.apply(dy, ctx.in_shape, ctx.offset, ctx.dim1, ctx.dim2), None, None, None


class DiagEmbed(Function):
    """Zeros of ``shape`` with ``v`` ``(*other dims, L)`` written on the ``offset``-th diagonal of ``(dim1, dim2)``."""

    supports_complex = True

    @staticmethod
    def forward(ctx, v, shape, offset, dim1, dim2):
        xp = get_array_module(v)
        ctx.offset, ctx.dim1, ctx.dim2 = offset, dim1, dim2
        out = xp.zeros(shape, dtype=v.dtype)  # (*shape)
        planes = xp.moveaxis(out, (dim1, dim2), (-2, -1))  # a writable view: (*other dims, n1, n2)
        rows, cols = _diag_place(v.shape[-1], offset, xp)
        planes[..., rows, cols] = v
        return out

    @staticmethod
    def backward(ctx, dy):
        return DiagTake.apply(dy, ctx.offset, ctx.dim1, ctx.dim2), None, None, None, None


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A vector ``(n,)`` → the matrix ``(n + |k|, n + |k|)`` with it on diagonal ``k``; a matrix ``(m, n)`` →
    a copy of its diagonal ``k`` (``(L,)``, empty when ``k`` is past the corner).

    ``k = diagonal``: 0 is the main diagonal, ``k > 0`` above it, ``k < 0`` below. Dtype of ``input``
    (integers and bool too). Gradients: the diagonal of ``dy``, or ``dy`` written onto a zero matrix.

    Raises ShapeError (RuntimeError) for an input that is not 1-D or 2-D; TypeError for a non-int k.
    """
    _need_tensor(input, "diag")
    k = _int(diagonal, "diag", "diagonal")
    if input.ndim == 1:
        n = input.shape[0] + abs(k)
        return DiagEmbed.apply(input, (n, n), k, 0, 1)
    if input.ndim == 2:
        return DiagTake.apply(input, k, 0, 1)
    raise ShapeError(f"diag(): supports 1-D or 2-D tensors, got a {input.ndim}-D tensor of shape {tuple(input.shape)}")


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Batched diagonal matrices: ``input`` ``(*B, L)`` → ``(*B, N, N)`` with ``N = L + |offset|`` (defaults).

    The last dim of ``input`` goes onto the ``offset``-th diagonal of the planes ``(dim1, dim2)`` of the
    result (``dim1``/``dim2`` count in the result's ``input.ndim + 1`` dims); the other dims keep their
    order. Gradient: ``dy``'s diagonal.

    Raises:
        ShapeError (RuntimeError): ``dim1`` and ``dim2`` name the same dim.
        IndexOutOfRangeError (IndexError): a dim out of range (a 0-d input has no room for two).
    """
    _need_tensor(input, "diag_embed")
    offset = _int(offset, "diag_embed", "offset")
    nd = input.ndim + 1
    d1, d2 = _dim(dim1, nd, "diag_embed"), _dim(dim2, nd, "diag_embed")
    if d1 == d2:
        raise ShapeError(f"diag_embed(): diagonal dimensions cannot be identical: dim1={dim1}, dim2={dim2} are both "
                         f"dim {d1} of the result's {nd}")
    n = input.shape[-1] + abs(offset)
    rest = iter(input.shape[:-1])
    shape = tuple(n if d in (d1, d2) else next(rest) for d in range(nd))
    return DiagEmbed.apply(input, shape, offset, d1, d2)


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """``diag`` of the flattened input: ``(*)`` with ``n`` entries → ``(n + |offset|, n + |offset|)``."""
    _need_tensor(input, "diagflat")
    return diag(reshape(input, (-1,)), _int(offset, "diagflat", "offset"))


# ==================================================================================================
# meshgrid, cartesian_prod, combinations
# ==================================================================================================


def _vectors(tensors, op: str) -> list:
    """``f(a, b)`` and ``f([a, b])`` alike: a non-empty list of Tensors of one dtype."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    tensors = list(tensors)
    if not tensors:
        raise ShapeError(f"{op}(): expects a non-empty list of tensors, got none")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): expected Tensors, got {type(t).__name__} at position {i}")
        if t.dtype != tensors[0].dtype:
            raise DtypeError(f"{op}(): expects all tensors to have the same dtype, got {tensors[0].dtype} (tensor 0) "
                             f"and {t.dtype} (tensor {i})")
    return tensors


def meshgrid(*tensors, indexing=None) -> tuple:
    """Coordinate grids: ``k`` tensors of sizes ``n1, .., nk`` (each 0-d or 1-D) → ``k`` tensors of shape ``(n1, .., nk)``.

    ``indexing='ij'`` (matrix indexing): output ``i`` varies along dim ``i``. ``'xy'`` (Cartesian): the
    first two dims are swapped, shape ``(n2, n1, n3, ..)``. Without ``indexing`` it is ``'ij'`` with the
    UserWarning PyTorch gives. The outputs broadcast their inputs (their gradients sum over the grid).

    Raises:
        ShapeError (RuntimeError): no tensors, or one with more than 1 dim.  DtypeError: different dtypes.
        OptionError (RuntimeError, ValueError): ``indexing`` not ``'ij'`` or ``'xy'``.
    """
    if indexing is None:
        warnings.warn("meshgrid: in an upcoming release, it will be required to pass the indexing argument "
                      "(as PyTorch warns); indexing='ij' is used", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise OptionError(f"meshgrid(): indexing must be one of 'xy' or 'ij', got {indexing!r}")
    tensors = _vectors(tensors, "meshgrid")
    for i, t in enumerate(tensors):
        if t.ndim > 1:
            raise ShapeError(f"meshgrid(): expected 0-d or 1-d tensors, got tensor {i} of shape {tuple(t.shape)}")
    k = len(tensors)
    pos = list(range(k))
    if indexing == "xy" and k >= 2:
        pos[0], pos[1] = 1, 0
    sizes = [0] * k
    for i, t in enumerate(tensors):
        sizes[pos[i]] = t.numel()
    grid = tuple(sizes)  # (n1, .., nk); 'xy': (n2, n1, ..)
    out = []
    for i, t in enumerate(tensors):
        shape = [1] * k
        shape[pos[i]] = -1 if t.numel() else 0
        out.append(broadcast_to(reshape(t, tuple(shape)), grid))
    return tuple(out)


def cartesian_prod(*tensors) -> Tensor:
    """All tuples of one entry from each 1-D input, in lexicographic order: sizes ``n1, .., nk`` → ``(n1*..*nk, k)``.

    One input is returned as it is (1-D, as PyTorch). Like ``itertools.product``; differentiable.
    Raises ShapeError for an input that is not 1-D (or no inputs), DtypeError for mixed dtypes.
    """
    tensors = _vectors(tensors, "cartesian_prod")
    for i, t in enumerate(tensors):
        if t.ndim != 1:
            raise ShapeError(f"cartesian_prod(): expected 1-d vectors, got tensor {i} of shape {tuple(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([reshape(g, (-1,)) for g in grids], dim=1)  # (n1*..*nk, k)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """All length-``r`` combinations of the entries of a 1-D ``input`` ``(n,)``, as rows: ``(C(n, r), r)``.

    In ``itertools.combinations`` order (``combinations_with_replacement`` with ``with_replacement``).
    ``r = 0`` gives an empty ``(0,)`` tensor (as PyTorch). Differentiable (an entry used in several
    rows gets the sum of their gradients).

    Raises ShapeError (RuntimeError) for an input that is not 1-D, OptionError (RuntimeError, ValueError)
    for ``r < 0``.
    """
    _need_tensor(input, "combinations")
    r = _int(r, "combinations", "r")
    if input.ndim != 1:
        raise ShapeError(f"combinations(): expected a 1-d vector, got a tensor of shape {tuple(input.shape)}")
    if r < 0:
        raise OptionError(f"combinations(): expected a non-negative r, got {r}")
    if r == 0:
        return Tensor._from_op(get_array_module(input.array).zeros((0,), dtype=input.dtype))
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    index = np.array(list(pick(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)  # (C(n, r), r)
    return input[Tensor._from_op(index)]


# ==================================================================================================
# tril_indices, triu_indices
# ==================================================================================================


def _triangle_indices(row, col, offset, dtype, device, upper: bool) -> Tensor:
    op = "triu_indices" if upper else "tril_indices"
    row, col, offset = _int(row, op, "row"), _int(col, op, "col"), _int(offset, op, "offset")
    if row < 0 or col < 0:
        raise ShapeError(f"{op}(): row and col must be non-negative, got row={row}, col={col}")
    dt = np.dtype(np.int64) if dtype is None else backend.as_dtype(dtype)
    if dt not in (np.int64, np.int32):
        raise DtypeError(f"{op}(): expected dtype int64 or int32, got {dt}")
    rows, cols = (np.triu_indices if upper else np.tril_indices)(row, offset, col)  # row-major order, as PyTorch
    out = np.stack([rows, cols]).astype(dt).reshape(2, -1)  # (2, N)
    return Tensor._from_op(backend.to_device(out, device or "cpu"))


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
    """The ``(2, N)`` row and column indices of the lower triangle of a ``(row, col)`` matrix (``offset`` as ``tril``).

    Row-major order, as PyTorch. ``dtype``: int64 (default) or int32. ``layout`` is accepted and ignored
    (only strided tensors exist). Raises ShapeError for negative sizes, DtypeError for another dtype.
    """
    return _triangle_indices(row, col, offset, dtype, device, upper=False)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
    """The ``(2, N)`` row and column indices of the upper triangle of a ``(row, col)`` matrix. As :func:`tril_indices`."""
    return _triangle_indices(row, col, offset, dtype, device, upper=True)


# ==================================================================================================
# triu, tril
# ==================================================================================================


class Triangle(Function):
    """Keep the upper (``triu``) or lower (``tril``) triangle of the last two dims; the gradient is masked the same way."""

    supports_complex = True

    @staticmethod
    def forward(ctx, x, diagonal, upper):
        xp = get_array_module(x)
        ctx.diagonal, ctx.upper = diagonal, upper
        return xp.triu(x, diagonal) if upper else xp.tril(x, diagonal)

    @staticmethod
    def backward(ctx, dy):
        return (Triu if ctx.upper else Tril).apply(dy, ctx.diagonal, ctx.upper), None, None


class Tril(Triangle):
    """``tril``: recorded as PyTorch's ``TrilBackward0``."""


class Triu(Triangle):
    """``triu``: recorded as PyTorch's ``TriuBackward0``."""


def _triangle(x: Tensor, diagonal, upper):
    name = "triu" if upper else "tril"
    if x.ndim < 2:
        raise ValueError(f"{name}: expected a tensor with at least 2 dimensions, got shape {tuple(x.shape)}")
    if not isinstance(diagonal, numbers.Integral):
        raise TypeError(f"{name}: diagonal must be an int, got {diagonal!r}")
    return (Triu if upper else Tril).apply(x, int(diagonal), upper)


def triu(input: Tensor, diagonal: int = 0) -> Tensor:  # noqa: A002
    """Zero the elements below the ``diagonal``-th diagonal of the last two dims ``(*, m, n)``."""
    return _triangle(input, diagonal, True)


def tril(input: Tensor, diagonal: int = 0) -> Tensor:  # noqa: A002
    """Zero the elements above the ``diagonal``-th diagonal of the last two dims ``(*, m, n)``."""
    return _triangle(input, diagonal, False)

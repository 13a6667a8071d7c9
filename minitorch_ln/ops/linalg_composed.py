"""``torch.linalg`` functions composed of other ops, so their gradients come from those ops: ``norm``,
``matrix_power``, ``multi_dot``, ``vecdot``, ``tensorinv``, ``tensorsolve``, ``cond``, ``diagonal``."""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import ShapeError
from ..tensor import Tensor
from .complex_parts import conj
from .linalg_decomp import svdvals
from .linalg_norms import linalg_matrix_norm, linalg_vector_norm
from .linalg_ops import check_matrix, inv, solve
from .matmul import matmul
from .view_ops import diagonal as _diagonal


def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``torch.linalg.norm``: a matrix norm (:func:`linalg_matrix_norm`) when ``dim`` is a 2-tuple, or when
    ``dim`` is None, ``ord`` is given and ``A`` is 2-D; otherwise a vector norm (:func:`linalg_vector_norm`)
    over ``dim`` (all elements, flattened, for ``dim=None`` and ``ord=None``). ``ord=None`` is the 2-norm
    of vectors and Frobenius of matrices. Raises (RuntimeError) when ``ord`` is given with ``dim=None``
    and ``A`` is not 1-D or 2-D, as PyTorch."""
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg.norm(): expected A to be a Tensor, got {type(A).__name__}")
    if isinstance(dim, numbers.Integral):
        dim = (int(dim),)
    if dim is None and ord is not None:
        if A.ndim not in (1, 2):
            raise ShapeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                             f"Got {A.ndim}D.")
        dim = tuple(range(A.ndim))
    if dim is not None and len(dim) == 2:
        return linalg_matrix_norm(A, "fro" if ord is None else ord, tuple(dim), keepdim, dtype=dtype)
    if dim is not None and len(dim) != 1:
        raise ShapeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    if isinstance(ord, str):
        raise ShapeError(f"linalg.norm: ord={ord!r} is a matrix norm; it needs a 2-D input or a 2-tuple dim")
    return linalg_vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


class _IdentityLike(Function):
    """The identity matrices of ``A``'s shape, with a zero gradient for ``A`` (PyTorch's ``matrix_power(A, 0)``)."""

    supports_complex = True  # a constant

    @staticmethod
    def forward(ctx, a):
        xp = get_array_module(a)
        return xp.ascontiguousarray(xp.broadcast_to(xp.eye(a.shape[-1], dtype=a.dtype), a.shape))  # (*, n, n)

    @staticmethod
    def backward(ctx, dy):
        return dy * 0.0


def matrix_power(A: Tensor, n: int) -> Tensor:
    """``Aⁿ`` for square ``A`` ``(*, m, m)`` by repeated squaring: the identity for ``n = 0``, ``(A⁻¹)^|n|``
    for ``n < 0`` (floating or complex only then); integer dtypes for ``n >= 0``. Gradient through the
    products. Raises ShapeError for a non-square input, TypeError for a non-integer ``n``."""
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg.matrix_power(): expected A to be a Tensor, got {type(A).__name__}")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"linalg.matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ShapeError(f"linalg.matrix_power: A must be batches of square matrices, got shape {tuple(A.shape)}")
    if n == 0:
        return _IdentityLike.apply(A)
    if n < 0:
        check_matrix("linalg.matrix_power", A, complex_ok=True)
        A, n = inv(A), -n
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


def multi_dot(tensors) -> Tensor:
    """``tensors[0] @ tensors[1] @ ...``: the first may be 1-D ``(n,)`` (a row), the last 1-D (a column),
    the others 2-D; the result drops the 1-D dims as PyTorch. Multiplied left to right (PyTorch picks the
    cheapest order; values agree up to rounding). Raises (RuntimeError) for fewer than two tensors or
    other ranks."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise ShapeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        ok = t.ndim == 2 or (t.ndim == 1 and i in (0, len(tensors) - 1))
        if not ok:
            where = "first and last" if t.ndim == 1 else ""
            raise ShapeError(f"multi_dot(): tensor {i} must be 2D{' (1D only as the ' + where + ' tensor)' if where else ''} "
                             f"but got {t.ndim}D")
    first, last = tensors[0], tensors[-1]
    mats = [first.unsqueeze(0) if first.ndim == 1 else first, *tensors[1:-1],
            last.unsqueeze(-1) if last.ndim == 1 else last]
    for a, b in zip(mats, mats[1:]):
        if a.shape[-1] != b.shape[0]:
            raise ShapeError(f"multi_dot(): tensors cannot be multiplied: shapes {tuple(a.shape)} and {tuple(b.shape)}")
    out = mats[0]
    for m in mats[1:]:
        out = matmul(out, m)
    if first.ndim == 1:
        out = out.squeeze(0)
    if last.ndim == 1:
        out = out.squeeze(-1)
    return out


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """``Σ conj(x)·y`` over ``dim`` after broadcasting (``conj`` is a no-op on real tensors). Raises ShapeError
    when the shapes do not broadcast."""
    if not isinstance(x, Tensor) or not isinstance(y, Tensor):
        raise TypeError("linalg.vecdot(): expected x and y to be Tensors")
    try:
        shape = np.broadcast_shapes(tuple(x.shape), tuple(y.shape))
    except ValueError:
        shape = ()
    if not shape:
        raise ShapeError(f"linalg.vecdot: x and y must broadcast to a shape of at least 1 dim, "
                         f"got shapes {tuple(x.shape)} and {tuple(y.shape)}")
    return (conj(x) * y).sum(dim)


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """The inverse of ``A`` seen as a linear map from its last dims to its first ``ind`` dims: ``A`` reshaped
    to ``(prod(shape[:ind]), prod(shape[ind:]))`` (square), inverted, reshaped to
    ``shape[ind:] + shape[:ind]``. Raises ShapeError when the two products differ or ``ind <= 0``."""
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg.tensorinv(): expected A to be a Tensor, got {type(A).__name__}")
    if ind <= 0:
        raise ShapeError(f"linalg.tensorinv: Expected a strictly positive integer for 'ind', but got {ind}")
    out_shape, in_shape = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    rows, cols = math.prod(out_shape), math.prod(in_shape)
    if rows != cols:
        raise ShapeError(f"linalg.tensorinv: Expected self to satisfy the requirement "
                         f"prod(self.shape[ind:]) == prod(self.shape[:ind]), but got {cols} != {rows}")
    return inv(A.reshape(rows, cols)).reshape(*in_shape, *out_shape)


def tensorsolve(A: Tensor, B: Tensor, dims=None) -> Tensor:
    """``X`` with ``tensordot(A, X, X.ndim) = B``: ``A`` (with ``dims`` moved to the end) reshaped to
    ``(B.numel(), rest)``, solved; ``X`` has shape ``A.shape[B.ndim:]``. Raises ShapeError when they do not fit."""
    if not isinstance(A, Tensor) or not isinstance(B, Tensor):
        raise TypeError("linalg.tensorsolve(): expected A and B to be Tensors")
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        A = A.permute(*[d for d in range(A.ndim) if d not in dims], *dims)
    x_shape = tuple(A.shape[B.ndim:])
    rows, cols = B.numel(), math.prod(x_shape)
    if math.prod(A.shape[:B.ndim]) != rows or rows != cols:
        raise ShapeError(f"linalg.tensorsolve: Expected self to satisfy the requirement "
                         f"prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]) with "
                         f"self.shape[:other.ndim] == other.shape; got shapes {tuple(A.shape)} and {tuple(B.shape)}")
    return solve(A.reshape(rows, cols), B.reshape(rows)).reshape(*x_shape)


def cond(A: Tensor, p=None) -> Tensor:
    """The condition number ``‖A‖_p·‖A⁻¹‖_p``: for ``p`` in (None, 2, -2) the ratio of the largest to the
    smallest singular value (``A`` ``(*, m, n)``), otherwise from :func:`linalg_matrix_norm` of ``A`` and
    ``inv(A)`` (square ``A``)."""
    if p is None or p in (2, -2):
        check_matrix("linalg.cond", A, square=False, complex_ok=True)
        s = svdvals(A)  # (*, k), descending
        return s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
    check_matrix("linalg.cond", A, complex_ok=True)
    return linalg_matrix_norm(A, p) * linalg_matrix_norm(inv(A), p)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """``torch.linalg.diagonal``: :func:`torch.diagonal` with the last two dims as the default (a view)."""
    return _diagonal(A, offset, dim1, dim2)

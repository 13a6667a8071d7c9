"""PyTorch's older ``torch.*`` linear-algebra API on top of ``torch.linalg``'s: ``cholesky``, ``cholesky_solve``,
``cholesky_inverse``, ``qr`` (``some=``), ``svd`` (``some=``/``compute_uv=``, returning ``V``, not ``Vh``),
``pinverse``, ``triangular_solve``, ``logdet``; and ``linalg.vander``.

Each reduces to the ``linalg`` factorizations and triangular solves (``ops/linalg_decomp.py``,
``ops/linalg_solvers.py``), whose backwards are derived there (Cholesky: Murray 2016, "Differentiation of the
Cholesky decomposition"; QR and SVD: PyTorch's FunctionsManual / Seeger et al. 2017), so gradients are
compositions of those and differentiable again. ``cholesky_solve``: ``A = L Lᵀ`` gives ``X = L⁻ᵀ (L⁻¹ B)``;
``logdet = log|det A| + log(sign)`` (NaN for a negative determinant, -inf for a singular matrix).
"""

from __future__ import annotations

import math
import numbers
from collections import namedtuple

from ..backend import get_array_module
from ..errors import ShapeError
from ..tensor import Tensor
from . import linalg_decomp, linalg_ops, linalg_solvers
from ._util import broadcast_shape
from .conversion import cast
from .linalg_ops import check_matrix
from .scan import cumprod
from .shape import broadcast_to
from .stacking import _cat

__all__ = ["cholesky", "cholesky_inverse", "cholesky_solve", "logdet", "pinverse", "qr", "svd", "triangular_solve"]

TorchSVDResult = namedtuple("svd", ["U", "S", "V"])  # torch.return_types.svd
TriangularSolveResult = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])


def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """``L`` with ``input = L Lᵀ`` (or ``U`` with ``input = Uᵀ U`` when ``upper``), ``(*, n, n)``: ``torch.cholesky``,
    which is ``torch.linalg.cholesky(input, upper=upper)``; raises as that for a matrix that is not positive-definite."""
    return linalg_decomp.cholesky(input, upper=upper)


def _batch_pair(op: str, A: Tensor, B: Tensor):
    """``A`` ``(*, n, n)`` and ``B`` ``(*, n, k)`` broadcast over their batch dims."""
    check_matrix(op, A, name="A", complex_ok=True)
    check_matrix(op, B, square=False, name="B", complex_ok=True)
    if A.shape[-1] != B.shape[-2]:
        raise ShapeError(f"{op}(): incompatible shapes of A {tuple(A.shape)} and B {tuple(B.shape)}: A's size "
                         f"{A.shape[-1]} must equal B's rows {B.shape[-2]}")
    if A.dtype != B.dtype:
        raise TypeError(f"{op}(): expected both inputs to have the same dtype, got {A.dtype} and {B.dtype}")
    batch = broadcast_shape(tuple(A.shape[:-2]), tuple(B.shape[:-2]), f"{op}()")
    return broadcast_to(A, batch + tuple(A.shape[-2:])), broadcast_to(B, batch + tuple(B.shape[-2:]))


def _factor_product(L: Tensor, upper: bool) -> Tensor:
    """``A = L Lᵀ`` (``Uᵀ U`` when ``upper``) from the factor's triangle, with PyTorch's gradient convention: the
    factor counts as a full matrix (``dL = -(S L)`` with ``S`` symmetric, FunctionsManual
    ``cholesky_solve_backward``), so the other triangle gets a gradient too, though its values are not read."""
    other = L.triu(1) if not upper else L.tril(-1)
    F = L - other.detach()  # the triangle's values; the identity's gradient on every entry  # (*, n, n)
    return F.mH @ F if upper else F @ F.mH  # A = L Lᴴ for complex L


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    """``X`` with ``A X = B`` for ``A = L Lᵀ`` (``Uᵀ U`` when ``upper``), given the Cholesky factor: ``B`` ``(*, n, k)``,
    ``L`` ``(*, n, n)``, batch dims broadcasting. Only ``L``'s triangle is read; its gradient is PyTorch's (the
    factor as a full matrix, see :func:`_factor_product`).

    Raises ShapeError for non-matrices or sizes that do not fit, TypeError for mixed dtypes.
    """
    L, B = _batch_pair("cholesky_solve", L, B)
    if B.numel() == 0:
        return B * 0.0 + L.sum() * 0.0  # empty: zeros, connected to both inputs
    return linalg_ops.solve(_factor_product(L, upper), B)


def cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:
    """``A⁻¹`` for ``A = L Lᵀ`` (``Uᵀ U`` when ``upper``) given its Cholesky factor ``(*, n, n)``; gradient as
    :func:`cholesky_solve`'s. Raises ShapeError for a non-square input."""
    check_matrix("cholesky_inverse", L, name="input", complex_ok=True)
    if L.numel() == 0:
        return L * 0.0
    return linalg_ops.inv(_factor_product(L, upper))


def qr(input: Tensor, some: bool = True):
    """``(Q, R)`` of ``input`` ``(*, m, n)``: ``torch.qr``, which is ``torch.linalg.qr`` with mode ``"reduced"``
    (``some=True``) or ``"complete"``."""
    return linalg_decomp.qr(input, mode="reduced" if some else "complete")


def svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> TorchSVDResult:
    """``(U, S, V)`` with ``input = U diag(S) Vᴴ`` (``V``, not ``Vh``, as ``torch.svd``; ``Vᵀ`` for real input); ``some=True`` gives the
    reduced factors ``(*, m, k)``, ``(*, k)``, ``(*, n, k)``. With ``compute_uv=False``, ``U`` and ``V`` are
    zero-filled ``(*, m, m)`` and ``(*, n, n)`` and only ``S`` is computed (PyTorch's rule)."""
    check_matrix("svd", input, square=False, name="input", complex_ok=True)
    if not compute_uv:
        xp = get_array_module(input.array)
        batch, (m, n) = tuple(input.shape[:-2]), tuple(input.shape[-2:])
        U = Tensor._from_op(xp.zeros(batch + (m, m), dtype=input.dtype))  # (*, m, m)
        V = Tensor._from_op(xp.zeros(batch + (n, n), dtype=input.dtype))  # (*, n, n)
        return TorchSVDResult(U, linalg_decomp.svdvals(input), V)
    U, S, Vh = linalg_decomp.svd(input, full_matrices=not some)
    return TorchSVDResult(U, S, Vh.mH)  # V = Vhᴴ (Vhᵀ for real input)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """The Moore-Penrose pseudo-inverse ``(*, n, m)`` of ``input`` ``(*, m, n)``, singular values below
    ``rcond · σ_max`` dropped: ``torch.linalg.pinv(input, rcond=rcond)``."""
    return linalg_solvers.pinv(input, rcond=rcond)


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> TriangularSolveResult:
    """``(X, A')`` with ``op(A) X = b``, ``op(A) = Aᵀ`` when ``transpose``; ``A`` ``(*, n, n)`` triangular (only that
    triangle is read; its diagonal taken as ones when ``unitriangular``), ``b`` ``(*, n, k)``, batch dims
    broadcasting; ``A'`` is ``A`` copied at the broadcast batch shape (PyTorch's ``cloned_coefficient``)."""
    A, b = _batch_pair("triangular_solve", A, b)
    if b.numel() == 0:
        return TriangularSolveResult(b * 0.0 + A.sum() * 0.0, A.clone())
    op = A.mT if transpose else A
    X = linalg_solvers.solve_triangular(op, b, upper=upper != transpose, unitriangular=unitriangular)
    return TriangularSolveResult(X, A.clone())


def logdet(input: Tensor) -> Tensor:
    """``log det(input)`` for square ``(*, n, n)`` → ``(*)``: NaN where the determinant is negative, -inf where it
    is 0 (PyTorch's); complex input: the complex ``log det``. The gradient is ``input⁻ᴴ`` times that of
    ``log det`` (slogdet's). Raises ShapeError for a non-square input."""
    sign, logabs = linalg_decomp.slogdet(input)
    if sign.dtype.kind == "c":  # complex: log det = log|det| + i·arg(det), principal branch (as PyTorch)
        return logabs + 1j * sign.angle()
    xp = get_array_module(sign.array)
    log_sign = xp.where(sign.array < 0, math.nan, 0.0).astype(logabs.dtype)  # log(+1) = 0, log(-1) = NaN
    return logabs + Tensor._from_op(log_sign)


def vander(x: Tensor, N: int | None = None) -> Tensor:
    """``torch.linalg.vander``: ``(*, n)`` → ``(*, n, N)`` with columns ``x⁰, x¹, ..., x^(N-1)`` (increasing powers;
    ``N`` defaults to ``n``), the powers a running product so the gradient is exact. Raises ShapeError for a
    0-d ``x`` without ``N`` or ``N < 2`` (PyTorch's "N must be greater than 1"); a 0-d ``x`` with ``N`` is one point."""
    if not isinstance(x, Tensor):
        raise TypeError(f"linalg.vander(): argument 'x' must be a Tensor, not {type(x).__name__}")
    if x.ndim == 0 and N is None:
        raise ShapeError("linalg.vander(): N must be greater than 1 (a 0-d x has no size to take it from)")
    x = x.reshape(1) if x.ndim == 0 else x  # PyTorch takes a 0-d x as one point
    N = x.shape[-1] if N is None else N
    if not isinstance(N, numbers.Integral) or N <= 1:
        raise ShapeError(f"linalg.vander(): N must be greater than 1, got {N!r}")
    if x.dtype.kind == "b":
        x = cast(x, "int64")
    col = x.unsqueeze(-1)  # (*, n, 1)
    powers = cumprod(col.expand(*col.shape[:-1], N - 1), -1)  # (*, n, N - 1): x, x², ...
    ones = Tensor._from_op(get_array_module(col.array).ones(tuple(col.shape), dtype=col.dtype))  # x⁰, also at inf/NaN
    return _cat([ones, powers], x.ndim, "linalg.vander")  # (*, n, N)

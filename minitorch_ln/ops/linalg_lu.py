"""LU with partial pivoting: ``linalg.lu``, ``linalg.lu_factor(_ex)``, ``linalg.lu_solve``, and the older ``torch.lu``,
``lu_unpack``, ``lu_solve``.

``A = P L U`` for ``A`` ``(*, m, n)``, ``k = min(m, n)``: ``P`` ``(*, m, m)`` a permutation, ``L`` ``(*, m, k)`` unit
lower triangular, ``U`` ``(*, k, n)`` upper triangular. The factorization is LAPACK's ``getrf`` (through
``scipy.linalg.lu_factor``, one matrix at a time); PyTorch's packed form is ``LU = L - I + U`` with 1-based
``int32`` pivots (row ``i`` was swapped with row ``pivots[i] - 1``).

Backward of ``(L, U)`` (PyTorch's FunctionsManual ``linalg_lu_backward``, from ``dA = P (dL U + L dU)``, the
strictly lower part of ``L⁻¹ dA U⁻¹`` being ``L⁻¹ dL`` and the upper part ``dU U⁻¹``): for square ``A``,
``dA = P L⁻ᴴ [tril₋₁(Lᴴ gL) + triu(gU Uᴴ)] U⁻ᴴ``, with the wide and tall cases splitting ``U = [U1 U2]`` or
``L = [L1; L2]``. It is written with triangular solves and products, so it is differentiable again;
``lu_factor``, ``lu_unpack`` and ``lu_solve`` are compositions of it and get their gradients from it.
"""

from __future__ import annotations

import warnings
from collections import namedtuple

import numpy as np

from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import ShapeError
from ..tensor import Tensor
from . import linalg_solvers
from .linalg_ops import check_matrix
from .stacking import _cat

__all__ = ["lu", "lu_solve", "lu_unpack"]

LUResult = namedtuple("LUResult", ["P", "L", "U"])  # torch.return_types.linalg_lu / lu_unpack
LUFactorResult = namedtuple("LUFactorResult", ["LU", "pivots"])
LUFactorExResult = namedtuple("LUFactorExResult", ["LU", "pivots", "info"])


def _host_getrf(a: np.ndarray):
    """``(LU, pivots (1-based int32), info)`` of each matrix of ``a`` ``(*, m, n)``."""
    from scipy.linalg import lu_factor as getrf  # noqa: PLC0415 - SciPy is a dependency; imported where used

    m, n = a.shape[-2:]
    k = min(m, n)
    batch = int(np.prod(a.shape[:-2], dtype=np.int64))
    flat = a.reshape((batch, m, n))  # (B, m, n)
    lu = np.empty_like(flat)
    piv = np.empty((flat.shape[0], k), dtype=np.int32)
    for b in range(flat.shape[0]):
        if k == 0:
            lu[b] = flat[b]
            continue
        with warnings.catch_warnings():  # a singular matrix: LAPACK's info > 0, reported by lu_factor_ex
            warnings.simplefilter("ignore")
            lu[b], p = getrf(flat[b], check_finite=False)
        piv[b] = p[:k] + 1
    lu = lu.reshape(a.shape)
    piv = piv.reshape(a.shape[:-2] + (k,))
    diag = np.diagonal(lu, axis1=-2, axis2=-1)  # (*, k)
    zero = diag == 0
    info = np.where(zero.any(-1), zero.argmax(-1) + 1, 0).astype(np.int32)  # first zero pivot, 1-based
    return lu, piv, info


def _perm_matrix(piv: np.ndarray, m: int, dtype) -> np.ndarray:
    """``P`` ``(*, m, m)`` with ``A = P L U`` from 1-based LAPACK pivots ``(*, k)``."""
    flat = piv.reshape((int(np.prod(piv.shape[:-1], dtype=np.int64)), piv.shape[-1]))
    P = np.zeros((flat.shape[0], m, m), dtype=dtype)
    for b, row in enumerate(flat):
        perm = np.arange(m)
        for i, p in enumerate(row):
            perm[[i, p - 1]] = perm[[p - 1, i]]
        P[b, perm, np.arange(m)] = 1
    return P.reshape(piv.shape[:-1] + (m, m))


def _unpack_arrays(lu: np.ndarray, xp):
    m, n = lu.shape[-2:]
    k = min(m, n)
    L = xp.tril(lu[..., :, :k], -1) + xp.eye(m, k, dtype=lu.dtype)  # (*, m, k)
    U = xp.triu(lu[..., :k, :])  # (*, k, n)
    return L, U


class LinalgLU(Function):
    """``(L, U)`` of ``A = P L U``; ``P`` is kept on ``ctx`` (a constant of the factorization)."""

    supports_complex = True  # lu_backward conjugate-transposes L and U

    @staticmethod
    def forward(ctx, a):
        xp = get_array_module(a)
        lu_, piv, _ = _host_getrf(np.asarray(a.get() if xp.__name__ == "cupy" else a))
        L, U = _unpack_arrays(xp.asarray(lu_), xp)
        ctx.P = xp.asarray(_perm_matrix(piv, a.shape[-2], a.dtype))  # (*, m, m)
        ctx.piv = xp.asarray(piv)
        ctx.save_for_backward(L, U)
        return L, U

    @staticmethod
    def backward(ctx, dL, dU):
        L, U = ctx.saved_tensors
        return lu_backward(dL, dU, Tensor._from_op(ctx.P), L, U)


def _solve_tri(A, B, *, upper, left=True, unitriangular=False):
    return linalg_solvers.solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)


def lu_backward(dL: Tensor, dU: Tensor, P: Tensor, L: Tensor, U: Tensor) -> Tensor:
    """``dA`` from ``dL``, ``dU`` (PyTorch's FunctionsManual ``linalg_lu_backward``; ``ᴴ`` for complex factors)."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        gA = L.mH @ dL
        gA = gA.tril(-1) + (dU @ U.mH).triu()  # (*, n, n)
        gA = _solve_tri(U.mH, gA, upper=False, left=False)
        gA = _solve_tri(L.mH, gA, upper=True, unitriangular=True)
    elif m < n:  # wide: U = [U1 U2], U1 (k, k)
        U1, dU1, dU2 = U[..., :, :k], dU[..., :, :k], dU[..., :, k:]
        gA = (L.mH @ dL - dU.triu() @ U.mH).tril(-1)  # (*, k, k)
        gA = _solve_tri(U1.mH, gA, upper=False, left=False)
        gA = _cat([gA + dU1.triu(), dU2], gA.ndim - 1, "linalg.lu")  # (*, k, n)
        gA = _solve_tri(L.mH, gA, upper=True, unitriangular=True)
    else:  # tall: L = [L1; L2], L1 (k, k)
        L1, dL1, dL2 = L[..., :k, :], dL[..., :k, :], dL[..., k:, :]
        gA = (dU @ U.mH - L.mH @ dL.tril(-1)).triu()  # (*, k, k)
        gA = _solve_tri(L1.mH, gA, upper=True, unitriangular=True)
        gA = _cat([gA + dL1.tril(-1), dL2], gA.ndim - 2, "linalg.lu")  # (*, m, k)
        gA = _solve_tri(U.mH, gA, upper=False, left=False)
    return P @ gA


def _check_pivot(op: str, pivot: bool) -> None:
    if not pivot:
        raise RuntimeError(f"{op}: LU without pivoting is not implemented on the CPU")


def linalg_lu(A: Tensor, *, pivot: bool = True) -> LUResult:
    """``(P, L, U)`` with ``A = P L U`` for ``A`` ``(*, m, n)`` float32/float64/complex (see the module docstring);
    ``P`` carries no gradient. Raises ShapeError for fewer than 2 dims, DtypeError for other dtypes,
    RuntimeError for ``pivot=False`` (PyTorch's CPU refuses it too)."""
    check_matrix("linalg.lu", A, square=False, complex_ok=True)
    _check_pivot("linalg.lu", pivot)
    L, U = LinalgLU.apply(A)
    P = _perm_matrix(_host_getrf(np.asarray(A.detach().cpu().array))[1], A.shape[-2], A.dtype)
    return LUResult(Tensor._from_op(get_array_module(A.array).asarray(P)), L, U)


def _pack(L: Tensor, U: Tensor) -> Tensor:
    """``LU = L - I + U`` in ``(*, m, n)``, padding ``L``'s strict lower part (tall) or ``U`` (wide) as needed."""
    m, k, n = L.shape[-2], L.shape[-1], U.shape[-1]
    low = L.tril(-1)  # (*, m, k)
    if n > k:
        zeros = Tensor._from_op(get_array_module(L.array).zeros(tuple(L.shape[:-2]) + (m, n - k), dtype=L.dtype))
        low = _cat([low, zeros], low.ndim - 1, "linalg.lu_factor")
    up = U
    if m > k:
        zeros = Tensor._from_op(get_array_module(U.array).zeros(tuple(U.shape[:-2]) + (m - k, n), dtype=U.dtype))
        up = _cat([U, zeros], U.ndim - 2, "linalg.lu_factor")
    return low + up


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False) -> LUFactorExResult:
    """``(LU, pivots, info)``: the packed factorization, 1-based int32 pivots ``(*, k)``, and LAPACK's ``info``
    ``(*)`` int32 (0, or the 1-based index of the first zero pivot of a singular matrix). ``check_errors``
    raises RuntimeError for a nonzero ``info``."""
    check_matrix("linalg.lu_factor_ex", A, square=False, complex_ok=True)
    _check_pivot("linalg.lu_factor_ex", pivot)
    L, U = LinalgLU.apply(A)
    _, piv, info = _host_getrf(np.asarray(A.detach().cpu().array))
    if check_errors and info.any():
        raise RuntimeError(f"linalg.lu_factor_ex: U[{int(info.max())}, {int(info.max())}] is zero, singular U.")
    xp = get_array_module(A.array)
    return LUFactorExResult(_pack(L, U), Tensor._from_op(xp.asarray(piv)), Tensor._from_op(xp.asarray(info)))


def lu_factor(A: Tensor, *, pivot: bool = True) -> LUFactorResult:
    """``(LU, pivots)`` of :func:`lu_factor_ex` (no error for a singular matrix, as PyTorch)."""
    LU, piv, _ = lu_factor_ex(A, pivot=pivot)
    return LUFactorResult(LU, piv)


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False):
    """``torch.lu``: ``(LU, pivots)``, with ``infos`` too when ``get_infos``."""
    LU, piv, info = lu_factor_ex(A, pivot=pivot)
    return (LU, piv, info) if get_infos else (LU, piv)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True) -> LUResult:
    """``(P, L, U)`` from a packed factorization; ``L`` and ``U`` are differentiable in ``LU_data``. A part not
    asked for (``unpack_data``/``unpack_pivots`` False) is an empty tensor, as PyTorch."""
    check_matrix("lu_unpack", LU_data, square=False, name="LU_data", complex_ok=True)
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    xp = get_array_module(LU_data.array)
    empty = Tensor._from_op(xp.zeros((0,), dtype=LU_data.dtype))
    if unpack_data:
        eye = Tensor._from_op(xp.eye(m, k, dtype=LU_data.dtype))
        L, U = LU_data[..., :, :k].tril(-1) + eye, LU_data[..., :k, :].triu()
    else:
        L = U = empty
    if unpack_pivots:
        piv = np.asarray(LU_pivots.detach().cpu().array)
        if piv.shape[-1] != k or piv.size and (piv.min() < 1 or piv.max() > m):
            raise ShapeError(f"lu_unpack: expected LU_pivots of shape (*, {k}) with values in [1, {m}], got shape "
                             f"{tuple(piv.shape)}")
        P = Tensor._from_op(xp.asarray(_perm_matrix(piv.astype(np.int64), m, LU_data.dtype)))
    else:
        P = empty
    return LUResult(P, L, U)


def linalg_lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False) -> Tensor:
    """``X`` with ``A X = B`` (``X A = B`` when not ``left``; ``Aᴴ`` for ``A`` when ``adjoint``), ``A = P L U``
    given packed: ``LU`` ``(*, n, n)``, ``B`` ``(*, n, k)`` (``(*, k, n)`` when not ``left``), batch dims
    broadcasting. Differentiable in ``LU`` and ``B``. Raises ShapeError for shapes that do not fit."""
    check_matrix("linalg.lu_solve", LU, name="LU", complex_ok=True)
    check_matrix("linalg.lu_solve", B, square=False, name="B", complex_ok=True)
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise ShapeError(f"linalg.lu_solve: incompatible shapes of LU {tuple(LU.shape)} and B {tuple(B.shape)}")
    P, L, U = lu_unpack(LU, pivots)
    if B.numel() == 0:
        return B * 0.0 + LU.sum() * 0.0
    if left and not adjoint:  # L U X = Pᵀ B
        return _solve_tri(U, _solve_tri(L, P.mT @ B, upper=False, unitriangular=True), upper=True)
    if left:  # Uᴴ Lᴴ Pᵀ X = B (P is real)
        Y = _solve_tri(L.mH, _solve_tri(U.mH, B, upper=False), upper=True, unitriangular=True)
        return P @ Y
    if not adjoint:  # X P L U = B
        Y = _solve_tri(L, _solve_tri(U, B, upper=True, left=False), upper=False, left=False, unitriangular=True)
        return Y @ P.mT
    # X Uᴴ Lᴴ Pᵀ = B
    return _solve_tri(U.mH, _solve_tri(L.mH, B @ P, upper=True, left=False, unitriangular=True), upper=False,
                      left=False)


def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """``torch.lu_solve``: :func:`linalg_lu_solve` with the arguments in the old order."""
    return linalg_lu_solve(LU_data, LU_pivots, b)

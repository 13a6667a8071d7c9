"""``torch.linalg``'s triangular solve, pseudo-inverse, least squares, rank and the ``*_ex`` variants
(``solve_triangular``, ``pinv``, ``lstsq``, ``matrix_rank``, ``cholesky_ex``, ``inv_ex``, ``solve_ex``).

Forwards on arrays: the triangular solve is BLAS ``trsm`` per matrix (SciPy; it does not check for a
zero on the diagonal, so a singular triangle gives inf/NaN as in PyTorch); ``pinv`` is the SVD with
the singular values ``<= max(atol, rtol·σ_max)`` dropped (``eigh`` for ``hermitian=True``). Backwards
(PyTorch's ``FunctionsManual.cpp``), in Tensor ops so they differentiate again; ``ᴴ`` is the conjugate
transpose (``ᵀ`` for real matrices: complex ones take the same formulas with every transpose conjugated,
as PyTorch writes them, docs/complex.md):

- ``X = A⁻¹B``, A triangular: ``dB = A⁻ᴴ dX`` (a triangular solve), ``dA = -dB Xᴴ`` on A's triangle
- ``P = pinv(A)`` (m <= n): ``K = dPᴴ P``; ``dA = -(P K)ᴴ + K Pᴴ - A P K Pᴴ + Pᴴ P (dPᴴ - K A)``
  (the conjugate-transposed form for m > n)
- ``lstsq``'s solution is ``pinv(A) B``, so its gradient is ``pinv``'s (exact for full-rank A).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import DtypeError, ShapeError
from ..tensor import Tensor
from .linalg_decomp import cholesky
from .linalg_ops import LinAlgError, check_matrix, inv, solve
from .selection import where


def _host(a):
    """``a`` as a NumPy array (SciPy's LAPACK/BLAS run on the host; a CuPy array is copied)."""
    return a if isinstance(a, np.ndarray) else a.get()  # pragma: no branch


def _real_dtype(a):
    """The dtype of ``a``'s real parts (float32 for complex64): tolerances and singular values are real."""
    return np.finfo(a.dtype).dtype


def _check_pair(op: str, A, B) -> None:
    check_matrix(op, A, square=False, complex_ok=True)
    if not isinstance(B, Tensor):
        raise TypeError(f"{op}(): expected B to be a Tensor, got {type(B).__name__}")
    if A.dtype != B.dtype:
        raise DtypeError(f"{op}: Expected A and B to have the same dtype, but found A of type {A.dtype} "
                         f"and B of type {B.dtype} instead")


# ==================================================================================================
# solve_triangular
# ==================================================================================================


class SolveTriangular(Function):
    """``X = A⁻¹ B`` for triangular ``A`` ``(*, n, n)`` and ``B`` ``(*, n, k)`` of the same batch dims."""

    supports_complex = True

    @staticmethod
    def forward(ctx, a, b, upper, unitriangular):
        import scipy.linalg  # noqa: PLC0415

        xp = get_array_module(a)
        ha, hb = _host(a), _host(b)
        trsm = scipy.linalg.get_blas_funcs("trsm", (ha, hb))
        if hb.size == 0:  # no right-hand side, no batch or n = 0: nothing to solve (reshape(-1, ...) can't infer)
            x = np.empty(hb.shape, hb.dtype)
        else:
            nb = int(np.prod(hb.shape[:-2], dtype=np.int64))
            flat_a, flat_b = ha.reshape(nb, *ha.shape[-2:]), hb.reshape(nb, *hb.shape[-2:])
            with np.errstate(all="ignore"):
                x = [trsm(1.0, m, r, lower=not upper, diag=int(unitriangular)) for m, r in zip(flat_a, flat_b)]
            x = np.stack(x).reshape(hb.shape)  # (*, n, k)
        X = xp.asarray(x.astype(hb.dtype, copy=False))
        ctx.save_for_backward(a, X)
        ctx.flags = (upper, unitriangular)
        return X

    @staticmethod
    def backward(ctx, dx):
        a, x = ctx.saved_tensors
        upper, unit = ctx.flags
        db = SolveTriangular.apply(a.mH, dx, not upper, unit)  # (*, n, k): A⁻ᴴ dX
        da = None
        if ctx.needs_input_grad[0]:
            da = -(db @ x.mH)  # (*, n, n), on A's triangle only
            da = (da.triu(1 if unit else 0)) if upper else da.tril(-1 if unit else 0)
        return da, db if ctx.needs_input_grad[1] else None, None, None


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False) -> Tensor:
    """The solution ``X`` of ``A X = B`` (``left``) or ``X A = B`` for triangular ``A`` ``(*, n, n)``
    (only its ``upper`` or lower triangle is read; its diagonal is taken as ones for ``unitriangular``),
    ``B`` ``(*, n, k)`` (``(*, k, n)`` for ``left=False``); batch dims broadcast; float32/float64/complex. A
    zero on the diagonal gives inf/NaN (no error, as PyTorch). Gradients: ``dB = A⁻ᴴ dX``, ``dA = -dB Xᴴ`` on
    the triangle read. Raises ShapeError/DtypeError/TypeError for bad shapes, dtypes or arguments."""
    check_matrix("linalg.solve_triangular", A, complex_ok=True)
    _check_pair("linalg.solve_triangular", A, B)
    if B.ndim < 2:
        raise ShapeError(f"linalg.solve_triangular: The input tensor B must have at least 2 dimensions, got {tuple(B.shape)}")
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise ShapeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                         f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    try:
        batch = np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    except ValueError:
        raise ShapeError(f"linalg.solve_triangular: batch dims of A {tuple(A.shape)} and B {tuple(B.shape)} "
                         "do not broadcast") from None
    A = A.expand(*batch, n, n)
    B = B.expand(*batch, *B.shape[-2:])
    if left:
        return SolveTriangular.apply(A, B, bool(upper), bool(unitriangular))
    return SolveTriangular.apply(A.mT, B.mT, not upper, bool(unitriangular)).mT


# ==================================================================================================
# pinv, matrix_rank
# ==================================================================================================


def _tol_array(t, xp, dtype):
    if t is None:
        return None
    return xp.asarray(t.array if isinstance(t, Tensor) else t, dtype=dtype)


def _tolerance(s, m, n, atol, rtol, xp):
    """``max(atol, rtol·σ_max)`` per matrix, with PyTorch's defaults (``rtol = eps·max(m, n)`` when neither
    is given, 0 when only a positive ``atol`` is), shape ``(*, 1)``."""
    if rtol is None:
        rtol = 0.0 if atol is not None and bool(xp.all(atol > 0)) else np.finfo(s.dtype).eps * max(m, n)
    atol = 0.0 if atol is None else atol
    smax = s.max(-1) if s.shape[-1] else xp.zeros(s.shape[:-1], s.dtype)  # (*,)
    return xp.maximum(atol, rtol * smax)[..., None]  # (*, 1)


class Pinv(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, a, atol, rtol, hermitian):
        xp = get_array_module(a)
        m, n = a.shape[-2:]
        if hermitian:
            w, v = xp.linalg.eigh(a)  # (*, n), (*, n, n)
            tol = _tolerance(xp.abs(w), m, n, atol, rtol, xp)
            with np.errstate(all="ignore"):
                winv = xp.where(xp.abs(w) > tol, 1 / w, 0)  # (*, n)
            p = (v * winv[..., None, :]) @ xp.conj(xp.swapaxes(v, -1, -2))  # V diag(1/λ) Vᴴ
        else:
            u, s, vh = xp.linalg.svd(a, full_matrices=False)  # (*, m, k), (*, k), (*, k, n)
            tol = _tolerance(s, m, n, atol, rtol, xp)
            with np.errstate(all="ignore"):
                sinv = xp.where(s > tol, 1 / s, 0)  # (*, k)
            p = (xp.conj(xp.swapaxes(vh, -1, -2)) * sinv[..., None, :]) @ xp.conj(xp.swapaxes(u, -1, -2))  # V S⁺ Uᴴ
        p = p.astype(a.dtype, copy=False)  # (*, n, m)
        ctx.save_for_backward(a, p)
        return p

    @staticmethod
    def backward(ctx, dp):
        A, P = ctx.saved_tensors  # (*, m, n), (*, n, m)
        m, n = A.shape[-2:]
        Pt, dpt = P.mH, dp.mH
        if m <= n:
            K = dpt @ P  # (*, m, m)
            KPt = K @ Pt
            return -(P @ K).mH + KPt - (A @ P) @ KPt + (Pt @ P) @ (dpt - K @ A), None, None, None
        K = P @ dpt  # (*, n, n)
        PtK = Pt @ K
        return -(K @ P).mH + PtK - PtK @ P @ A + (dpt - A @ K) @ P @ Pt, None, None, None


def pinv(A: Tensor, rcond=None, hermitian: bool = False, *, atol=None, rtol=None) -> Tensor:
    """The Moore-Penrose pseudo-inverse ``(*, n, m)`` of ``A`` ``(*, m, n)``, float32/float64: singular values
    ``<= max(atol, rtol·σ_max)`` count as zero (``rtol = eps·max(m, n)`` by default; ``rcond`` is the old
    name of ``rtol``). ``hermitian=True`` uses ``eigh`` (the lower triangle). Gradient: PyTorch's
    ``pinv_backward`` (see the module docstring). Raises as :func:`linalg_ops.inv` for bad input."""
    check_matrix("linalg.pinv", A, square=hermitian, complex_ok=True)
    xp = get_array_module(A.array)
    rtol = rcond if rcond is not None and rtol is None else rtol
    rd = _real_dtype(A)
    return Pinv.apply(A, _tol_array(atol, xp, rd), _tol_array(rtol, xp, rd), bool(hermitian))


def matrix_rank(A: Tensor, tol=None, hermitian: bool = False, *, atol=None, rtol=None) -> Tensor:
    """The number of singular values ``> max(atol, rtol·σ_max)`` of each matrix of ``A`` ``(*, m, n)``, an
    int64 tensor of shape ``(*)`` (defaults as :func:`pinv`; ``tol`` is the old name of ``atol``, with
    ``rtol = 0``). No gradient."""
    check_matrix("linalg.matrix_rank", A, square=hermitian, complex_ok=True)
    xp = get_array_module(A.array)
    if tol is not None:
        atol, rtol = tol, 0.0 if rtol is None else rtol
    a = A.array
    s = xp.abs(xp.linalg.eigvalsh(a)) if hermitian else xp.linalg.svd(a, compute_uv=False)  # (*, k)
    rd = _real_dtype(a)
    tolv = _tolerance(s, a.shape[-2], a.shape[-1], _tol_array(atol, xp, rd), _tol_array(rtol, xp, rd), xp)
    return Tensor._from_op((s > tolv).sum(-1).astype(np.int64))


# ==================================================================================================
# lstsq
# ==================================================================================================

LstsqResult = namedtuple("LstsqResult", ["solution", "residuals", "rank", "singular_values"])
_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A: Tensor, B: Tensor, rcond=None, *, driver=None) -> LstsqResult:
    """The least-squares solution of ``A X = B``: ``(solution, residuals, rank, singular_values)`` as PyTorch's
    CPU drivers (default ``'gelsy'``). ``A`` ``(*, m, n)``, ``B`` ``(*, m, k)`` or ``(*, m)``, batch dims
    broadcast. ``solution`` ``(*, n, k)`` is ``pinv(A, rtol=rcond) B`` (the minimum-norm solution; equal to
    the drivers' for full-rank A), differentiable in A and B; ``residuals`` ``(*, k)``, the squared
    column norms of ``AX - B``, when ``m > n`` for ``gels``, and also all matrices full rank for
    ``gelsd``/``gelss`` (empty otherwise); ``rank`` (int64 ``(*)``) for all drivers but ``gels``;
    ``singular_values`` ``(*, min(m, n))`` for ``gelsd``/``gelss``. Raises (RuntimeError) for an unknown driver."""
    _check_pair("linalg.lstsq", A, B)
    driver = "gelsy" if driver is None else driver
    if driver not in _DRIVERS:
        raise ValueError_(f"torch.linalg.lstsq: parameter `driver` should be one of ({', '.join(_DRIVERS)})")
    m, n = A.shape[-2:]
    vector = B.ndim == A.ndim - 1
    B2 = B.unsqueeze(-1) if vector else B
    if B2.ndim < 2 or B2.shape[-2] != m:
        raise ShapeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2) "
                         f"(A {tuple(A.shape)}, B {tuple(B.shape)})")
    xp = get_array_module(A.array)
    eps_rtol = None if rcond is None or rcond < 0 else rcond
    X = pinv(A, rtol=eps_rtol) @ B2  # (*, n, k)
    rd = _real_dtype(A)
    s = xp.linalg.svd(A.array, compute_uv=False) if m * n else xp.zeros((*A.shape[:-2], 0), rd)  # (*, k)
    rank = (s > _tolerance(s, m, n, None, _tol_array(eps_rtol, xp, rd), xp)).sum(-1).astype(np.int64)
    full = bool(xp.all(rank == min(m, n)))
    empty = Tensor._from_op(xp.zeros((0,), rd))
    residuals = X.reshape(-1)[:0]  # empty, but part of the graph as PyTorch's (real: |.| for complex A)
    residuals = residuals.abs() if residuals.dtype.kind == "c" else residuals
    if m > n and (driver == "gels" or (driver in ("gelsd", "gelss") and full)):
        r = A @ X - B2  # (*, m, k)
        residuals = ((r.abs() if r.dtype.kind == "c" else r) ** 2).sum(-2)  # (*, k), real for complex A
    rank_t = Tensor._from_op(xp.zeros((0,), np.int64)) if driver == "gels" else Tensor._from_op(rank)
    svals = Tensor._from_op(s.astype(rd, copy=False)) if driver in ("gelsd", "gelss") else empty
    return LstsqResult(X.squeeze(-1) if vector else X, residuals, rank_t, svals)


class ValueError_(RuntimeError, ValueError):
    """A bad argument: RuntimeError as PyTorch, and ValueError."""


# ==================================================================================================
# cholesky_ex, inv_ex, solve_ex: the info codes of LAPACK's potrf/getrf
# ==================================================================================================

CholeskyExResult = namedtuple("CholeskyExResult", ["L", "info"])
InvExResult = namedtuple("InvExResult", ["inverse", "info"])
SolveExResult = namedtuple("SolveExResult", ["result", "info"])


def _lapack_info(name: str, a):
    """LAPACK ``name`` (``potrf`` or ``getrf``) on each matrix of ``a``: (factors, int32 info of shape ``(*)``)."""
    import scipy.linalg  # noqa: PLC0415

    ha = _host(a)
    fn = scipy.linalg.get_lapack_funcs(name, (ha,))
    if ha.size == 0:  # no matrices, or 0 x 0 ones: nothing can fail
        return ha.copy(), np.zeros(ha.shape[:-2], np.int32)
    outs = [fn(m, lower=1, clean=1) if name == "potrf" else fn(m) for m in ha.reshape(-1, *ha.shape[-2:])]
    info = np.array([o[-1] for o in outs], dtype=np.int32).reshape(ha.shape[:-2])
    factors = np.stack([o[0] for o in outs]).reshape(ha.shape) if outs else ha.copy()
    return factors, np.maximum(info, 0)


def _raise_info(op: str, info, what: str) -> None:
    bad = np.flatnonzero(info)
    if bad.size:
        batch = f" (Batch element {bad[0]})" if info.ndim else ""
        raise LinAlgError(f"{op}:{batch} {what.format(int(info.reshape(-1)[bad[0]]))}")


def _identity_where(A: Tensor, bad) -> Tensor:
    """``A`` with the matrices where ``bad`` (``(*)``) replaced by identities, so a factorization succeeds."""
    if not bad.any():
        return A
    xp = get_array_module(A.array)
    eye = Tensor._from_op(xp.eye(A.shape[-1], dtype=A.dtype))  # (n, n)
    return where(Tensor._from_op(xp.asarray(bad)[..., None, None]), eye, A)


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False) -> CholeskyExResult:
    """:func:`cholesky` with an int32 ``info`` ``(*)``: 0, or the order of the first leading minor that is
    not positive-definite (LAPACK's ``potrf``); there ``L`` is ``potrf``'s partial factor, as PyTorch's.
    ``check_errors=True`` raises LinAlgError instead."""
    check_matrix("linalg.cholesky_ex", A, complex_ok=True)
    factors, info = _lapack_info("potrf", A.array)
    if check_errors:
        _raise_info("linalg.cholesky_ex", info, "The factorization could not be completed because the input is "
                    "not positive-definite (the leading minor of order {} is not positive-definite).")
    xp = get_array_module(A.array)
    if not info.any():
        return CholeskyExResult(cholesky(A, upper=upper), Tensor._from_op(xp.asarray(info)))
    L = Tensor._from_op(xp.asarray(np.tril(factors)))
    return CholeskyExResult(L.mH if upper else L, Tensor._from_op(xp.asarray(info)))


def inv_ex(A: Tensor, *, check_errors: bool = False) -> InvExResult:
    """:func:`inv` with an int32 ``info`` ``(*)``: 0, or the 1-based index of the first zero pivot of LAPACK's
    ``getrf`` (a singular matrix); the inverse of a singular matrix is NaN (PyTorch: inf/NaN).
    ``check_errors=True`` raises LinAlgError instead."""
    check_matrix("linalg.inv_ex", A, complex_ok=True)
    _, info = _lapack_info("getrf", A.array)
    if check_errors:
        _raise_info("linalg.inv_ex", info, "The diagonal element {} is zero, the inversion could not be "
                    "completed because the input matrix is singular.")
    xp = get_array_module(A.array)
    Y = inv(_identity_where(A, info > 0))
    if info.any():
        Y = Y.masked_fill(Tensor._from_op(xp.asarray(info > 0)[..., None, None]), float("nan"))
    return InvExResult(Y, Tensor._from_op(xp.asarray(info)))


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False) -> SolveExResult:
    """:func:`solve` with an int32 ``info`` ``(*)`` of A's batch shape, as :func:`inv_ex`; the solution for a
    singular matrix is NaN (PyTorch: inf/NaN)."""
    check_matrix("linalg.solve_ex", A, complex_ok=True)
    _, info = _lapack_info("getrf", A.array)
    if check_errors:
        _raise_info("linalg.solve_ex", info, "The solver failed because the input matrix is singular "
                    "(the diagonal element {} is zero).")
    xp = get_array_module(A.array)
    X = solve(_identity_where(A, info > 0), B, left=left)
    if info.any():
        bad = Tensor._from_op(xp.asarray(info > 0))
        vector = X.ndim < A.ndim
        bad = bad.reshape(*bad.shape, *([1] * (1 if vector else 2)))
        X = X.masked_fill(bad, float("nan"))
    return SolveExResult(X, Tensor._from_op(xp.asarray(info)))

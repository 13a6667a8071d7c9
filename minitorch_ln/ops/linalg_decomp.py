"""``torch.linalg``'s factorizations, ``cholesky``, ``qr``, ``svd``, ``svdvals``, ``eigh``, ``eigvalsh``,
and ``det``/``slogdet``
(whose gradient at a singular matrix needs the SVD).

Forwards are ``xp.linalg``, batched over leading dims. Backwards in Tensor ops so they differentiate
again. Complex matrices take the same formulas with every transpose ``ᵀ`` of a saved matrix the conjugate
transpose ``ᴴ`` (PyTorch's ``FunctionsManual.cpp`` writes them so; Giles 2008 §3 for the holomorphic ones)
plus the diagonal terms below that are zero for real matrices; each is derived in docs/complex.md
("Linear algebra") and gradchecked with complex inputs in tests/test_complex_linalg.py:

- Cholesky ``A = L Lᵀ`` (Murray, "Differentiation of the Cholesky decomposition", arXiv:1602.07527,
  as PyTorch's ``cholesky_backward``): ``P = Φ(Lᵀ dL)`` with ``Φ`` = lower triangle, diagonal
  halved, mirrored to a symmetric matrix; ``dA = L⁻ᵀ P L⁻¹`` (symmetric, as PyTorch's).
- QR ``A = Q R``, ``m >= n`` (reduced; or square): ``M = R dRᵀ - dQᵀ Q``,
  ``dA = (dQ + Q copyltu(M)) R⁻ᵀ`` with ``copyltu(M) = tril(M) + tril(M, -1)ᵀ`` (Walter & Lehmann
  2018; Liao et al. 2019). ``m < n``: split ``A = [X | Y]``, ``R = [U | V]``: ``dY = Q dV`` and
  ``dX`` is the square rule with ``dQ + Y dVᵀ`` and ``dU``. Not differentiable for
  ``mode='complete'`` with ``m > n`` or ``mode='r'``: the backward raises PyTorch's error.
- SVD ``A = U S Vh``, ``k = min(m, n)`` (PyTorch's ``svd_backward``): with
  ``E_ij = s_j² - s_i²`` (1 on the diagonal), ``J = skew(Uᵀ dU) S / E + S skew(Vh dVhᵀ) / E + diag(dS)``,
  ``dA = U J Vh`` plus the terms for the complement of ``U`` (``m > n``) or ``V`` (``m < n``).
  With ``full_matrices=True`` the extra columns of ``U``/rows of ``Vh`` get no gradient (they are
  an arbitrary basis), as in PyTorch. Repeated singular values give inf/nan where the loss depends
  on the singular vectors (the gradient does not exist), as in PyTorch; a 0/0 there (the vectors
  are not used) gives 0. Losses must not depend on the signs of the singular vectors.
- ``d = det A``: ``dA = dd · d · A⁻ᵀ``; for a singular ``A`` the cofactor matrix from the SVD
  ``A = U S Vᵀ``: ``dA = dd · det(U) det(V) · U diag(Π_{j≠i} s_j) Vᵀ`` (det is a polynomial: its
  gradient exists everywhere; PyTorch 2.13 returns zeros there, which is wrong).
- ``log|det A|``: ``dA = dlogabsdet · A⁻ᵀ``.
"""

from __future__ import annotations

from collections import namedtuple

from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import OptionError
from ..tensor import Tensor
from .complex_parts import cj
from .einsum import einsum
from .linalg_ops import check_matrix, eye_mask, inv, lapack, solve
from .selection import where

__all__ = ["det", "slogdet"]

QRResult = namedtuple("QRResult", ["Q", "R"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])


def _copyltu(M: Tensor) -> Tensor:
    """``tril(M, -1) + tril(M, -1)ᴴ + Re diag(M)``: the strict lower triangle mirrored to the upper one, the
    real part of the diagonal (for real ``M``: ``tril(M) + tril(M, -1)ᵀ``). Complex: R's diagonal is real
    (LAPACK's), so ``Qᴴ dQ`` keeps only the imaginary part of the diagonal, docs/complex.md."""
    if M.dtype.kind != "c":
        return M.tril() + M.tril(-1).mT
    return M.tril(-1) + M.tril(-1).mH + where(eye_mask(M.shape[-1], M), M.real, 0.0)


# ==================================================================================================
# cholesky
# ==================================================================================================


class Cholesky(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, a):
        L = lapack("linalg.cholesky", get_array_module(a).linalg.cholesky, a,
                   message="The factorization could not be completed because the input is not positive-definite.")
        ctx.save_for_backward(L)
        return L  # (*, n, n), lower

    @staticmethod
    def backward(ctx, dL):
        (L,) = ctx.saved_tensors
        P = (L.mH @ dL).tril()  # (*, n, n)
        P = 0.5 * (P + P.tril(-1).mH)  # Φ, Hermitian off the diagonal: P/2 on it, mirrored off it
        Y = solve(L.mH, P)  # L⁻ᴴ P
        return solve(L, Y, left=False)  # L⁻ᴴ P L⁻¹


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """``L`` (lower, ``A = L Lᵀ``) or with ``upper=True`` ``U = Lᵀ`` (``A = Uᵀ U``); ``A`` ``(*, n, n)``
    symmetric positive-definite (only its lower triangle is read). Raises LinAlgError (RuntimeError)
    when ``A`` is not positive-definite, ShapeError/DtypeError as :func:`linalg_ops.inv`."""
    check_matrix("linalg.cholesky", A, complex_ok=True)
    L = Cholesky.apply(A)
    return L.mH if upper else L


# ==================================================================================================
# qr
# ==================================================================================================


class QR(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, a, mode):
        xp = get_array_module(a)
        ctx.mode = mode
        if mode == "r":
            r = xp.linalg.qr(a, mode="r")
            ctx.save_for_backward()
            return xp.zeros((0,), dtype=a.dtype), r
        q, r = xp.linalg.qr(a, mode=mode)  # (*, m, k), (*, k, n)
        ctx.save_for_backward(q, r)
        return q, r

    @staticmethod
    def backward(ctx, dQ, dR):
        if ctx.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
                               "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
        Q, R = ctx.saved_tensors
        m, n = Q.shape[-2], R.shape[-1]
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        if m >= n:
            return _qr_backward_tall(Q, R, dQ, dR), None
        U, V = R[..., :, :m], R[..., :, m:]  # (*, m, m), (*, m, n - m)
        dU, dV = dR[..., :, :m], dR[..., :, m:]
        Y = Q @ V  # (*, m, n - m): the columns of A beyond the first m
        dX = _qr_backward_tall(Q, U, dQ + Y @ dV.mH, dU)  # (*, m, m)
        dY = Q @ dV  # (*, m, n - m)
        return _cat_last(dX, dY), None


def _qr_backward_tall(Q, R, dQ, dR):
    """``dA`` for ``A = Q R`` with ``Q`` ``(*, m, n)``, ``R`` ``(*, n, n)`` (``m >= n``)."""
    M = R @ dR.mH - dQ.mH @ Q  # (*, n, n)
    return solve(R.mH, dQ + Q @ _copyltu(M), left=False)  # (dQ + Q copyltu(M)) R⁻ᴴ


def _cat_last(a: Tensor, b: Tensor) -> Tensor:
    """``[a | b]`` along the last dim, built from the stable ops (pad each with zeros, add)."""
    xp = get_array_module(a.array)
    ka, kb = a.shape[-1], b.shape[-1]
    left = Tensor._from_op(xp.eye(ka, ka + kb, dtype=a.dtype))  # (ka, ka + kb): [I | 0]
    right = Tensor._from_op(xp.eye(kb, ka + kb, k=ka, dtype=a.dtype))  # (kb, ka + kb): [0 | I]
    return einsum("...ij,jk->...ik", a, left) + einsum("...ij,jk->...ik", b, right)


def qr(A: Tensor, mode: str = "reduced") -> QRResult:
    """``A = Q R`` for ``A`` ``(*, m, n)``, ``k = min(m, n)``: ``mode='reduced'`` gives ``Q`` ``(*, m, k)``,
    ``R`` ``(*, k, n)``; ``'complete'`` gives ``Q`` ``(*, m, m)``, ``R`` ``(*, m, n)``; ``'r'`` gives an
    empty ``Q`` and ``R`` only. Signs as LAPACK's (not forced positive, as in PyTorch).

    Raises:
        OptionError (ValueError, RuntimeError): an unknown mode.  ShapeError/DtypeError as :func:`linalg_ops.inv`.
        RuntimeError in backward: ``mode='r'``, or ``'complete'`` with ``m > n`` (PyTorch's messages).
    """
    if mode not in ("reduced", "complete", "r"):
        raise OptionError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                          "or 'complete'")
    check_matrix("linalg.qr", A, square=False, complex_ok=True)
    return QRResult(*QR.apply(A, mode))


# ==================================================================================================
# svd, svdvals
# ==================================================================================================


class SVD(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, a, full_matrices):
        u, s, vh = lapack("linalg.svd", get_array_module(a).linalg.svd, a, full_matrices=full_matrices,
                          message="The algorithm failed to converge because the input matrix is ill-conditioned.")
        ctx.save_for_backward(u, s, vh)
        ctx.full = full_matrices
        return u, s, vh  # (*, m, m or k), (*, k), (*, n or k, n)

    @staticmethod
    def backward(ctx, dU, dS, dVh):
        U, S, Vh = ctx.saved_tensors
        if ctx.full:  # the extra basis vectors are arbitrary: no gradient flows from them
            k = S.shape[-1]
            U, dU, Vh, dVh = U[..., :, :k], dU[..., :, :k], Vh[..., :k, :], dVh[..., :k, :]
        return svd_backward(dU, dS, dVh, U, S, Vh), None


def svd_backward(dU, dS, dVh, U, S, Vh):
    """PyTorch's ``svd_backward`` for reduced factors ``U`` ``(*, m, k)``, ``S`` ``(*, k)``, ``Vh`` ``(*, k, n)``;
    complex ones need a loss that does not depend on the phases of the singular vectors (as PyTorch)."""
    m, n, k = U.shape[-2], Vh.shape[-1], S.shape[-1]
    skew = lambda X: X - X.mH
    UhdU = skew(U.mH @ dU)  # (*, k, k)
    VhdV = skew(Vh @ dVh.mH)  # (*, k, k)
    S2 = S * S
    eye = eye_mask(k, S)
    E = where(eye, 1.0, S2.unsqueeze(-2) - S2.unsqueeze(-1))  # (*, k, k): s_j² - s_i², 1 on the diagonal
    num = UhdU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhdV
    J = where(num.array == 0, 0.0, num / E)  # 0/0 (unused vectors of a repeated value) -> 0
    J = J + where(eye, dS.unsqueeze(-1), 0.0)  # + diag(dS)
    if U.dtype.kind == "c":  # the phases: i Im diag(Uᴴ dU) / S (num's diagonal is 0 for a phase-invariant loss)
        J = J + where(eye, (1j * (U.mH @ dU).diagonal(0, -2, -1).imag / S).unsqueeze(-1), 0.0)
    if m > n:  # dA = [U J + (I - U Uᴴ) dU S⁻¹] Vh
        dUSinv = dU / S.unsqueeze(-2)
        return (U @ J + dUSinv - U @ (U.mH @ dUSinv)) @ Vh
    if m < n:  # dA = U [J Vh + S⁻¹ dVh (I - V Vᴴ)]
        SinvdVh = dVh / S.unsqueeze(-1)
        return U @ (J @ Vh + SinvdVh - (SinvdVh @ Vh.mH) @ Vh)
    return U @ J @ Vh


def svd(A: Tensor, full_matrices: bool = True) -> SVDResult:
    """``A = U diag(S) Vh`` for ``A`` ``(*, m, n)``, ``k = min(m, n)``: ``U`` ``(*, m, m)`` (``(*, m, k)``
    with ``full_matrices=False``), ``S`` ``(*, k)`` descending, ``Vh`` ``(*, n, n)`` (``(*, k, n)``).
    The signs of the singular vectors are LAPACK's (unspecified, as in PyTorch). Raises
    ShapeError/DtypeError as :func:`linalg_ops.inv`, LinAlgError when LAPACK does not converge."""
    check_matrix("linalg.svd", A, square=False, complex_ok=True)
    if not isinstance(full_matrices, bool):
        raise TypeError(f"linalg.svd(): full_matrices must be a bool, got {type(full_matrices).__name__}")
    return SVDResult(*SVD.apply(A, full_matrices))


class SVDVals(Function):
    supports_complex = True  # s_i = Re(u_iᴴ A v_i): dA = U diag(dS) Vh for complex A too

    @staticmethod
    def forward(ctx, a):
        s = lapack("linalg.svdvals", get_array_module(a).linalg.svd, a, compute_uv=False,
                   message="The algorithm failed to converge because the input matrix is ill-conditioned.")
        ctx.save_for_backward(a)
        return s  # (*, k)

    @staticmethod
    def backward(ctx, dS):
        (a,) = ctx.saved_tensors
        U, _, Vh = svd(a, full_matrices=False)  # recomputed as Tensors, so this backward differentiates again
        return U @ (dS.unsqueeze(-1) * Vh)  # U diag(dS) Vh


def svdvals(A: Tensor) -> Tensor:
    """The singular values of ``A`` ``(*, m, n)``, ``(*, min(m, n))``, descending; gradient
    ``U diag(dS) Vh`` (well defined for repeated values too). Raises as :func:`svd`."""
    check_matrix("linalg.svdvals", A, square=False, complex_ok=True)
    return SVDVals.apply(A)


# ==================================================================================================
# det, slogdet
# ==================================================================================================


class Det(Function):
    supports_complex = True  # holomorphic: dA = dd · conj(det A) · A⁻ᴴ

    @staticmethod
    def forward(ctx, a):
        d = get_array_module(a).linalg.det(a)  # (*,)
        ctx.save_for_backward(a, d)
        return d

    @staticmethod
    def backward(ctx, dd):
        a, d = ctx.saved_tensors
        scale = (dd * cj(d)).unsqueeze(-1).unsqueeze(-1)  # (*, 1, 1)
        if a.shape[-1] and bool((d.array == 0).any()):
            return dd.unsqueeze(-1).unsqueeze(-1) * _cofactor(a)
        return scale * inv(a).mH  # (*, n, n)


def _cofactor(a: Tensor) -> Tensor:
    """``d det(A) / dA`` from the SVD, defined for singular matrices too."""
    U, S, Vh = svd(a, full_matrices=False)  # (*, n, n), (*, n), (*, n, n)
    n = a.shape[-1]
    others = where(eye_mask(n, a), 1.0, S.unsqueeze(-2).expand(*S.shape[:-1], n, n))  # row i: S with s_i -> 1
    p = others.prod(-1)  # (*, n): Π_{j≠i} s_j
    # ±1 (a unit complex number for complex A), locally constant; conjugated as the derivative is
    sign = cj(Det.apply(U.detach()) * Det.apply(Vh.detach())).unsqueeze(-1).unsqueeze(-1)
    return sign * ((U * p.unsqueeze(-2)) @ Vh)


def det(A: Tensor) -> Tensor:
    """``det A`` for ``A`` of shape ``(*, n, n)`` → ``(*,)``, float32/float64 (1 for ``n = 0``).

    The gradient is ``det(A) A⁻ᵀ``, and the cofactor matrix (via the SVD) where ``A`` is singular.
    Raises ShapeError (not square, < 2 dims) and DtypeError (not float32/float64).
    """
    check_matrix("linalg.det", A, complex_ok=True)
    return Det.apply(A)


class Slogdet(Function):
    """Complex ``A``: ``sign = det/|det|`` (complex), ``logabsdet`` real. With ``log det A = logabsdet + iθ``
    (holomorphic, derivative ``A⁻ᵀ``) and ``sign = e^{iθ}``, the gradient of ``log det`` is
    ``g = dlogabsdet + i·Im(dsign·conj(sign))`` and ``dA = g · A⁻ᴴ`` (for real ``A`` the sign is constant)."""

    supports_complex = True

    @staticmethod
    def forward(ctx, a):
        sign, logabsdet = get_array_module(a).linalg.slogdet(a)  # (*,), (*,)
        ctx.save_for_backward(a, sign if a.dtype.kind == "c" else None)
        return sign.astype(a.dtype, copy=False), logabsdet.astype(a.real.dtype, copy=False)

    @staticmethod
    def backward(ctx, dsign, dlogabsdet):
        a, sign = ctx.saved_tensors
        g = dlogabsdet if sign is None else dlogabsdet + 1j * (dsign * cj(sign)).imag  # (*,)
        return g.unsqueeze(-1).unsqueeze(-1) * inv(a).mH  # (*, n, n)


def slogdet(A: Tensor) -> SlogdetResult:
    """``(sign, logabsdet)`` with ``det A = sign · exp(logabsdet)``, each ``(*,)``; ``sign`` is 0 and
    ``logabsdet`` ``-inf`` for a singular matrix. Gradient (through ``logabsdet``): ``A⁻ᵀ``; it raises
    LinAlgError for a singular ``A``. Raises as :func:`det`."""
    check_matrix("linalg.slogdet", A, complex_ok=True)
    return SlogdetResult(*Slogdet.apply(A))


# ==================================================================================================
# eigh, eigvalsh
# ==================================================================================================


class Eigh(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, a, uplo):
        w, v = get_array_module(a).linalg.eigh(a, UPLO=uplo)  # (*, n) ascending, (*, n, n)
        ctx.save_for_backward(w, v)
        return w, v

    @staticmethod
    def backward(ctx, dL, dV):
        L, V = ctx.saved_tensors
        VhdV = V.mH @ dV  # (*, n, n)
        skew = 0.5 * (VhdV - VhdV.mH)  # the part that changes under a rotation of V
        eye = eye_mask(L.shape[-1], L)
        E = where(eye, 1.0, L.unsqueeze(-2) - L.unsqueeze(-1))  # (*, n, n): λ_j - λ_i, 1 on the diagonal
        # 0/0 -> 0; the diagonal is diag(dλ) (skew's diagonal, i Im diag(Vᴴ dV) for complex V, is the phase
        # of the eigenvectors, which a well-defined loss does not depend on: dropped, as PyTorch)
        J = where(eye, dL.unsqueeze(-1), where(skew.array == 0, 0.0, skew / E))
        return V @ J @ V.mH, None


def eigh(A: Tensor, UPLO: str = "L") -> EighResult:
    """Eigenvalues (ascending, ``(*, n)``) and orthonormal eigenvectors (columns, ``(*, n, n)``) of a
    symmetric ``A`` ``(*, n, n)``, of which only the ``UPLO`` triangle is read. Gradient (PyTorch's
    ``linalg_eig_backward``): ``dA = V (diag(dλ) + skew(Vᵀ dV) / E) Vᵀ`` with ``E_ij = λ_j - λ_i``:
    inf/nan where eigenvalues repeat and the loss uses their vectors, as in PyTorch. Raises
    OptionError for a ``UPLO`` other than 'L'/'U', ShapeError/DtypeError as :func:`linalg_ops.inv`."""
    if UPLO not in ("L", "U"):
        raise OptionError(f"linalg.eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    check_matrix("linalg.eigh", A, complex_ok=True)
    return EighResult(*Eigh.apply(A, UPLO))


class EigvalsH(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, a, uplo):
        ctx.uplo = uplo
        ctx.save_for_backward(a)
        return get_array_module(a).linalg.eigvalsh(a, UPLO=uplo)  # (*, n)

    @staticmethod
    def backward(ctx, dL):
        (a,) = ctx.saved_tensors
        _, V = eigh(a, ctx.uplo)  # recomputed as Tensors, so this backward differentiates again
        return (V * dL.unsqueeze(-2)) @ V.mH, None  # V diag(dλ) Vᴴ


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues of a symmetric ``A`` ``(*, n, n)``, ascending, ``(*, n)``; gradient ``V diag(dλ) Vᵀ``
    (defined for repeated eigenvalues too). Raises as :func:`eigh`."""
    if UPLO not in ("L", "U"):
        raise OptionError(f"linalg.eigvalsh: UPLO must be 'L' or 'U', got {UPLO!r}")
    check_matrix("linalg.eigvalsh", A, complex_ok=True)
    return EigvalsH.apply(A, UPLO)

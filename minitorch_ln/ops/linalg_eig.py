"""``torch.linalg.eig`` and ``torch.linalg.eigvals``: the eigendecomposition of a general square matrix.

``A V = V diag(λ)``, ``A`` ``(*, n, n)`` real or complex; ``λ`` ``(*, n)`` and ``V`` ``(*, n, n)`` are always
complex (a real matrix may have complex eigenvalues), in LAPACK's ``geev`` order, each eigenvector (column of
``V``) of Euclidean norm 1 with its largest component real, as PyTorch's and NumPy's (both call ``geev``).

Backward (PyTorch's ``linalg_eig_backward``, described in our own words; derivation: Giles 2008, "An extended
collection of matrix derivative results", section 3.1, with the normalisation term of Boeddeker et al. 2017):
with ``E_ij = conj(λ_j - λ_i)`` (1 on the diagonal) and the gradients ``gλ``, ``gV`` (conjugate-Wirtinger,
the convention of every complex op here),

    M  = Vᴴ gV - Vᴴ V diag(Re diag(Vᴴ gV))      (the columns' unit norm removes a real multiple of each)
    gA = V⁻ᴴ (M / E  with  diag ← gλ) Vᴴ        (a solve with Vᴴ, not an inverse)

and for a real ``A`` the real part of ``gA``. An eigenvector is fixed only up to a phase ``e^{iφ}``: a loss
that depends on that phase has no gradient, and PyTorch's check (``Im diag(Vᴴ gV)`` not close to 0) raises
the same RuntimeError here instead of returning a number. Repeated eigenvalues make ``E`` vanish: inf/NaN
where the loss uses their vectors, as PyTorch. ``eigvals``' backward is the ``gV = 0`` case,
``V⁻ᴴ diag(gλ) Vᴴ``, with ``V`` recomputed.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..autograd.function import Function
from ..backend import get_array_module
from .linalg_ops import LinAlgError, check_matrix, eye_mask, lapack, solve
from .selection import where

__all__: list = []  # torch.linalg names only (minitorch_ln/linalg.py), none at torch.*

EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])


def _complex_dtype(dtype):
    return np.result_type(dtype, np.complex64)


def _eig_arrays(a):
    xp = get_array_module(a)
    if xp is not np:  # CuPy has no general (non-symmetric) eigensolver
        from ..backend import DeviceError

        raise DeviceError("linalg.eig: not available on the GPU (CuPy has no geev); move the matrix to the CPU")
    if not np.isfinite(a).all():
        raise LinAlgError("linalg.eig: input tensor should not contain infs or NaNs.")
    # NumPy returns real arrays when every eigenvalue is real: always complex here
    w, v = lapack("linalg.eig", np.linalg.eig, a, message="The algorithm failed to converge because the input matrix "
                  "is ill-conditioned or has too many repeated eigenvalues (error code: geev).")
    cdt = _complex_dtype(a.dtype)
    return w.astype(cdt, copy=False), v.astype(cdt, copy=False)


def _conjugate_by_v(V, G, real_input: bool):
    """``V⁻ᴴ G Vᴴ`` (``Vᴴ X = G Vᴴ`` solved), its real part for a real input."""
    gA = solve(V.mH, G @ V.mH)
    return gA.real if real_input else gA


class Eig(Function):
    supports_complex = True  # its backward conjugates (docs/complex.md)

    @staticmethod
    def forward(ctx, a):
        w, v = _eig_arrays(a)
        ctx.real_input = a.dtype.kind != "c"
        ctx.save_for_backward(w, v)
        return w, v

    @staticmethod
    def backward(ctx, gL, gV):
        L, V = ctx.saved_tensors
        VhgV = V.mH @ gV  # (*, n, n)
        diag = VhgV.diagonal(0, -2, -1)
        if not np.allclose(np.asarray(diag.imag.array), 0.0, rtol=1e-2, atol=1e-2):
            raise RuntimeError("linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                               "multiplication by e^{i phi}. The specified loss function depends on this quantity, "
                               "so it is ill-defined.")
        VhgV = VhgV - V.mH @ (V * diag.real.unsqueeze(-2))  # remove what the unit-norm columns do not allow
        eye = eye_mask(L.shape[-1], L)
        Lc = L.conj()
        E = where(eye, 1.0, Lc.unsqueeze(-2) - Lc.unsqueeze(-1))  # (*, n, n): conj(λ_j - λ_i), 1 on the diagonal
        G = where(eye, gL.unsqueeze(-1), VhgV / E)  # diag ← gλ
        return _conjugate_by_v(V, G, ctx.real_input)


def eig(A):
    """``(eigenvalues (*, n), eigenvectors (*, n, n))`` of a square ``A`` ``(*, n, n)``, both complex
    (complex64 for float32/complex64 input, complex128 for float64/complex128). Raises ShapeError for a
    non-square or 1-D input, DtypeError for an integer one, LinAlgError for inf/NaN entries or where LAPACK
    does not converge,
    DeviceError on the GPU. Gradient: see the module docstring."""
    check_matrix("linalg.eig", A, complex_ok=True)
    return EigResult(*Eig.apply(A))


class Eigvals(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, a):
        w, _ = _eig_arrays(a)
        ctx.real_input = a.dtype.kind != "c"
        ctx.save_for_backward(a)
        return w

    @staticmethod
    def backward(ctx, gL):
        (a,) = ctx.saved_tensors
        _, V = eig(a)  # recomputed as Tensors, so this backward differentiates again
        return _conjugate_by_v(V, where(eye_mask(gL.shape[-1], gL), gL.unsqueeze(-1), 0.0), ctx.real_input)


def eigvals(A):
    """The eigenvalues of a square ``A`` ``(*, n, n)``, complex ``(*, n)`` in LAPACK's order. Raises as
    :func:`eig`; gradient ``V⁻ᴴ diag(gλ) Vᴴ`` (real part for a real ``A``)."""
    check_matrix("linalg.eigvals", A, complex_ok=True)
    return Eigvals.apply(A)

"""Complex inputs of the linear algebra ops whose NumPy forward is complex-ready: values and gradients against
PyTorch (random complex upstream gradients), complex gradcheck (finite differences on the real and the
imaginary part of every entry, docs/complex.md), cases that catch a missing conjugate (the transpose ᵀ where
the conjugate transpose ᴴ belongs), a Hypothesis property and bad input."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, t64
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import GradcheckError, gradcheck, gradgradcheck
from minitorch_ln.errors import DtypeError
from minitorch_ln.ops import linalg_ops

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(5)
DTYPES = (np.complex128, np.complex64)


def cx(*shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def well_conditioned(n, dtype=np.complex128, batch=()):
    return (cx(*batch, n, n) + 3 * np.eye(n)).astype(dtype)


def hermitian_pd(n, dtype=np.complex128):
    b = cx(n, n)
    return (b @ b.conj().T + n * np.eye(n)).astype(dtype)


# ---------------------------------------------------------------- values and gradients against PyTorch


@pytest.mark.parametrize("dtype", DTYPES)
def test_inverse_solve_det_family_match_torch(dtype):
    A, B = well_conditioned(3, dtype, (2,)), cx(2, 3, 2, dtype=dtype)
    compare_with_torch(mt.linalg.inv, torch.linalg.inv, [A])
    compare_with_torch(mt.linalg.solve, torch.linalg.solve, [A, B])
    compare_with_torch(lambda a, b: mt.linalg.solve(a, b, left=False), lambda a, b: torch.linalg.solve(a, b, left=False),
                       [A, cx(2, 4, 3, dtype=dtype)])
    compare_with_torch(mt.linalg.det, torch.linalg.det, [A])
    compare_with_torch(mt.linalg.slogdet, torch.linalg.slogdet, [A])  # upstream gradients into sign and logabsdet
    compare_with_torch(mt.logdet, torch.logdet, [A])
    for n in (3, -2, 0):
        compare_with_torch(lambda a: mt.linalg.matrix_power(a, n), lambda a: torch.linalg.matrix_power(a, n), [A])


@pytest.mark.parametrize("dtype", DTYPES)
def test_factorizations_match_torch(dtype):
    H = hermitian_pd(3, dtype)
    compare_with_torch(mt.linalg.cholesky, torch.linalg.cholesky, [H])
    compare_with_torch(lambda a: mt.linalg.cholesky(a, upper=True), lambda a: torch.linalg.cholesky(a, upper=True), [H])
    compare_with_torch(mt.linalg.eigvalsh, torch.linalg.eigvalsh, [H])
    for shape in ((3, 3), (4, 2), (2, 4)):
        A = cx(*shape, dtype=dtype)
        compare_with_torch(mt.linalg.qr, torch.linalg.qr, [A])
        compare_with_torch(mt.linalg.lu, torch.linalg.lu, [A])
        compare_with_torch(mt.linalg.svdvals, torch.linalg.svdvals, [A])
        compare_with_torch(mt.linalg.pinv, torch.linalg.pinv, [A])


@pytest.mark.parametrize("dtype", DTYPES)
def test_solvers_and_norms_match_torch(dtype):
    A, B = well_conditioned(3, dtype), cx(3, 2, dtype=dtype)
    compare_with_torch(lambda a, b: mt.linalg.solve_triangular(a, b, upper=True),
                       lambda a, b: torch.linalg.solve_triangular(a, b, upper=True), [A, B])
    compare_with_torch(lambda a, b: mt.linalg.lu_solve(*mt.linalg.lu_factor(a), b, adjoint=True),
                       lambda a, b: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b, adjoint=True), [A, B])
    compare_with_torch(lambda a, b: mt.linalg.lstsq(a, b).solution, lambda a, b: torch.linalg.lstsq(a, b).solution,
                       [cx(4, 2, dtype=dtype), cx(4, 3, dtype=dtype)])
    for ord_ in ("fro", "nuc", 2, -2, 1, float("inf")):
        compare_with_torch(lambda a: mt.linalg.matrix_norm(a, ord_), lambda a: torch.linalg.matrix_norm(a, ord_),
                           [cx(2, 3, 4, dtype=dtype)])
    compare_with_torch(mt.linalg.cond, torch.linalg.cond, [A])


def test_gauge_invariant_losses_of_svd_and_eigh_match_torch():
    # singular vectors and eigenvectors are defined up to a phase e^{iφ} per column; u_k v_kᴴ, |U| and
    # v v^H are not, so their gradients are defined (and need the Im diag(Uᴴ dU) / S term for the SVD)
    for shape in ((3, 3), (4, 2), (2, 4)):
        A = cx(*shape)

        def loss(lib, a):
            U, S, Vh = lib.linalg.svd(a, full_matrices=False)
            return (U[..., :, :1] * Vh[..., :1, :]).abs().sum() + (U.abs() ** 2 * S).sum()

        ours, theirs = t64(A), torch.tensor(A, requires_grad=True)
        loss(mt, ours).backward()
        loss(torch, theirs).backward()
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-9, atol=1e-12)
    H = hermitian_pd(3)

    def eig_loss(lib, a):
        w, v = lib.linalg.eigh(a)
        return (w * w).sum() + (v[:, :1] * v[:, :1].conj().T).real.sum()

    ours, theirs = t64(H), torch.tensor(H, requires_grad=True)
    eig_loss(mt, ours).backward()
    eig_loss(torch, theirs).backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------- complex gradcheck


def test_gradcheck_holomorphic_ops_complex():
    gradcheck_noncontiguous(mt.linalg.inv, [well_conditioned(3)], gg=True)
    gradcheck_noncontiguous(mt.linalg.solve, [well_conditioned(3), cx(3, 2)], gg=True)
    gradcheck_noncontiguous(mt.linalg.det, [cx(3, 3)], gg=True)
    assert gradcheck(mt.linalg.slogdet, (t64(cx(3, 3)),))
    assert gradcheck(mt.logdet, (t64(cx(3, 3)),))
    assert gradcheck(lambda a: mt.linalg.matrix_power(a, -3), (t64(well_conditioned(2)),))
    singular = cx(3, 3)
    singular[2] = singular[0] + 2j * singular[1]
    assert gradcheck(mt.linalg.det, (t64(singular),))  # the cofactor matrix via the SVD


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)])
def test_gradcheck_factorizations_complex(shape):
    A = cx(*shape)
    assert gradcheck(mt.linalg.qr, (t64(A),))
    assert gradcheck(lambda a: mt.linalg.lu(a)[1:], (t64(A),))
    assert gradcheck(mt.linalg.pinv, (t64(A),))
    assert gradcheck(mt.linalg.svdvals, (t64(A),))
    assert gradcheck(lambda a: (lambda U, S, Vh: (U.abs(), S, Vh.abs(), U[..., :1] * Vh[..., :1, :]))(
        *mt.linalg.svd(a, full_matrices=False)), (t64(A),))


def test_gradcheck_hermitian_ops_complex():
    # these read one triangle of a Hermitian matrix: checked as functions of B through B Bᴴ + 3I
    def herm(b):
        return b @ b.mH + 3 * mt.eye(3, dtype=mt.complex128)

    B = cx(3, 3)
    assert gradcheck(lambda b: mt.linalg.cholesky(herm(b)), (t64(B),))
    assert gradgradcheck(lambda b: mt.linalg.cholesky(herm(b)), (t64(B),))
    assert gradcheck(lambda b: mt.linalg.eigvalsh(herm(b)), (t64(B),))
    assert gradcheck(lambda b: (lambda w, v: (w, v.abs(), v[:, :1] * v[:, :1].mH))(*mt.linalg.eigh(herm(b))), (t64(B),))
    assert gradcheck(lambda b, c: mt.cholesky_solve(c, mt.linalg.cholesky(herm(b))), (t64(B), t64(cx(3, 2))))
    assert gradcheck(lambda a, b: mt.linalg.solve_triangular(a.triu() + 3 * mt.eye(3), b, upper=True),
                     (t64(cx(3, 3)), t64(cx(3, 2))))


def test_a_missing_conjugate_is_caught(monkeypatch):
    """inv's backward with the plain transpose (the real formula, -Yᵀ dY Yᵀ) passes gradcheck on real
    matrices and fails on complex ones: the complex check sees the missing conjugate."""
    A = well_conditioned(3)

    def transposed_backward(ctx, dy):
        (y,) = ctx.saved_tensors
        return -(y.mT @ dy @ y.mT)

    assert gradcheck(mt.linalg.inv, (t64(A),))
    monkeypatch.setattr(linalg_ops.Inv, "backward", staticmethod(transposed_backward))
    assert gradcheck(mt.linalg.inv, (t64(A.real),))
    with pytest.raises(GradcheckError):
        gradcheck(mt.linalg.inv, (t64(A),))


# ---------------------------------------------------------------- property


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 4), st.integers(0, 2**31 - 1), st.complex_numbers(max_magnitude=3, allow_nan=False,
                                                                         allow_infinity=False))
def test_property_det_gradient_is_conjugate_cofactor(n, seed, c):
    """For L = Re(c·det A): grad_A = conj(c · det(A) · A⁻ᵀ) (Jacobi's formula, conjugated by the convention)."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n)) + 2 * np.eye(n)
    x = t64(A)
    (mt.linalg.det(x) * c).real.backward()
    want = np.conj(c * np.linalg.det(A) * np.linalg.inv(A).T)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(mt.linalg.inv(mt.tensor(A)).numpy() @ A, np.eye(n), atol=1e-10)


# ---------------------------------------------------------------- bad input


def test_bad_input():
    with pytest.raises(DtypeError, match="float32, float64, complex64 or complex128 tensor as input, got int64"):
        mt.linalg.inv(mt.eye(2, dtype=mt.int64))
    with pytest.raises(DtypeError, match="same dtype"):
        mt.linalg.solve(mt.tensor(well_conditioned(2)), mt.tensor(cx(2, dtype=np.complex64)))
    with pytest.raises(RuntimeError, match="singular"):
        mt.linalg.inv(mt.zeros(2, 2, dtype=mt.complex128))
    with pytest.raises(RuntimeError, match="positive-definite"):
        mt.linalg.cholesky(mt.tensor(-hermitian_pd(2)))

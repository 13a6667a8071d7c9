"""linalg: inv, solve (ops/linalg_ops.py); cholesky, qr, svd, svdvals, det, slogdet (ops/linalg_decomp.py):
gradcheck to second order, PyTorch comparison, properties, bad input, singular and edge inputs."""

import numpy as np
import pytest
from helpers import compare_with_torch, t64, torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch_ln as mt
from minitorch_ln import linalg
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.errors import DtypeError, OptionError, ShapeError
from minitorch_ln.ops.linalg_decomp import (
    cholesky,
    det,
    eigh,
    eigvalsh,
    qr,
    slogdet,
    svd,
    svdvals,
)
from minitorch_ln.ops.linalg_ops import LinAlgError, inv, solve

# ---------------------------------------------------------------------------------------------------
# Strategies and input builders (this file only)
# ---------------------------------------------------------------------------------------------------

batch_shapes = hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3)


def well_conditioned(rng, shape):
    """A random ``(*, n, n)`` matrix plus ``n·I``: far from singular, so float32 agrees with torch."""
    n = shape[-1]
    return rng.standard_normal(shape) + n * np.eye(n)


def spd(a):
    """``A Aᵀ + I`` for a Tensor of either library: symmetric positive-definite, built inside the function."""
    n = a.shape[-1]
    eye = mt.tensor(np.eye(n, dtype=str(a.dtype))) if isinstance(a, mt.Tensor) else torch.eye(n, dtype=a.dtype)
    return a @ a.mT + eye


def gauge_fixed(U, S, Vh):
    """The SVD with each singular pair's sign fixed (first row of U non-negative), so a loss on it
    is a function of A (the signs LAPACK returns are arbitrary); the sign is a constant (detached)."""
    k = S.shape[-1]
    sign = U[..., :1, :k].detach().sign()  # (*, 1, k)
    return U[..., :, :k] * sign, S, Vh[..., :k, :] * sign.mT


def eig_fixed(L, V):
    """Eigenvectors with their signs fixed (first row non-negative; a detached constant), as :func:`gauge_fixed`."""
    return L, V * V[..., :1, :].detach().sign()


# ---------------------------------------------------------------------------------------------------
# One table: (name, ours, torch's, input shapes, input builder)
# ---------------------------------------------------------------------------------------------------

OPS = [
    ("inv", inv, torch.linalg.inv, [(3, 3)]),
    ("inv_batched", inv, torch.linalg.inv, [(2, 3, 3)]),
    ("det", det, torch.linalg.det, [(2, 3, 3)]),
    ("slogdet", slogdet, torch.linalg.slogdet, [(2, 3, 3)]),
    ("solve", solve, torch.linalg.solve, [(2, 3, 3), (2, 3, 2)]),
    ("solve_bcast", solve, torch.linalg.solve, [(2, 1, 3, 3), (3, 3, 2)]),
    ("solve_vector", solve, torch.linalg.solve, [(2, 3, 3), (2, 3)]),
    ("solve_1d", solve, torch.linalg.solve, [(2, 3, 3), (3,)]),
    ("solve_right", lambda a, b: solve(a, b, left=False), lambda a, b: torch.linalg.solve(a, b, left=False),
     [(3, 3), (2, 2, 3)]),
    ("cholesky", lambda a: cholesky(spd(a)), lambda a: torch.linalg.cholesky(spd(a)), [(2, 3, 3)]),
    ("cholesky_upper", lambda a: cholesky(spd(a), upper=True), lambda a: torch.linalg.cholesky(spd(a), upper=True),
     [(3, 3)]),
    ("qr_tall", qr, torch.linalg.qr, [(2, 4, 3)]),
    ("qr_square_complete", lambda a: qr(a, "complete"), lambda a: torch.linalg.qr(a, "complete"), [(3, 3)]),
    ("qr_wide", qr, torch.linalg.qr, [(3, 5)]),
    ("qr_wide_complete", lambda a: qr(a, "complete"), lambda a: torch.linalg.qr(a, "complete"), [(2, 3, 4)]),
    ("svd_tall", lambda a: gauge_fixed(*svd(a, full_matrices=False)),
     lambda a: gauge_fixed(*torch.linalg.svd(a, full_matrices=False)), [(2, 4, 3)]),
    ("svd_wide", lambda a: gauge_fixed(*svd(a, full_matrices=False)),
     lambda a: gauge_fixed(*torch.linalg.svd(a, full_matrices=False)), [(3, 5)]),
    ("svd_full", lambda a: gauge_fixed(*svd(a)), lambda a: gauge_fixed(*torch.linalg.svd(a)), [(4, 3)]),
    ("svd_square", lambda a: gauge_fixed(*svd(a)), lambda a: gauge_fixed(*torch.linalg.svd(a)), [(3, 3)]),
    ("svdvals", svdvals, torch.linalg.svdvals, [(2, 3, 4)]),
    ("eigh", lambda a: eig_fixed(*eigh(a + a.mT)), lambda a: eig_fixed(*torch.linalg.eigh(a + a.mT)), [(2, 3, 3)]),
    ("eigh_upper", lambda a: eig_fixed(*eigh(a + a.mT, UPLO="U")),
     lambda a: eig_fixed(*torch.linalg.eigh(a + a.mT, UPLO="U")), [(3, 3)]),
    ("eigvalsh", lambda a: eigvalsh(a + a.mT), lambda a: torch.linalg.eigvalsh(a + a.mT), [(2, 3, 3)]),
]
IDS = [o[0] for o in OPS]


def _inputs(rng, shapes):
    first = well_conditioned(rng, shapes[0]) if shapes[0][-1] == shapes[0][-2] else rng.standard_normal(shapes[0])
    return [first] + [rng.standard_normal(s) for s in shapes[1:]]


@pytest.mark.parametrize("name,ours,theirs,shapes", OPS, ids=IDS)
def test_linalg_gradcheck_and_gradgradcheck(name, ours, theirs, shapes, rng):
    args = tuple(t64(a) for a in _inputs(rng, shapes))
    assert gradcheck(ours, args)
    assert gradgradcheck(ours, args)


@pytest.mark.parametrize("name,ours,theirs,shapes", OPS, ids=IDS)
def test_linalg_gradcheck_non_contiguous(name, ours, theirs, shapes, rng):
    # the first operand is built transposed (last two dims) from a contiguous leaf
    arrays = _inputs(rng, shapes)
    first = t64(np.ascontiguousarray(np.swapaxes(arrays[0], -1, -2)))
    rest = tuple(t64(a) for a in arrays[1:])
    assert gradcheck(lambda a, *r: ours(a.mT, *r), (first, *rest))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs,shapes", OPS, ids=IDS)
def test_linalg_matches_torch(name, ours, theirs, shapes, dtype, rng, device):
    arrays = [a.astype(dtype) for a in _inputs(rng, shapes)]
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == np.float32 else {}  # LAPACK orders float32 sums differently
    compare_with_torch(ours, theirs, arrays, device=device, **tol)


def test_qr_mode_r_forward_and_its_backward_raises(rng):
    a = rng.standard_normal((4, 3))
    Q, R = qr(t64(a), mode="r")
    Qt, Rt = torch.linalg.qr(torch.tensor(a), mode="r")
    assert Q.shape == tuple(Qt.shape) == (0,)
    np.testing.assert_allclose(R.detach().numpy(), Rt.numpy(), atol=1e-12)
    with pytest.raises(RuntimeError, match="depends on Q, which is not computed when mode='r'"):
        R.sum().backward()


def test_qr_complete_tall_backward_raises_like_torch(rng):
    Q, R = qr(t64(rng.standard_normal((4, 3))), mode="complete")
    assert Q.shape == (4, 4) and R.shape == (4, 3)
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete' and nrows > ncols"):
        (Q.sum() + R.sum()).backward()


def test_det_of_singular_matrix_has_the_cofactor_gradient():
    # det is a polynomial: its gradient (the cofactor matrix) exists at singular matrices too.
    # PyTorch 2.13 is wrong here: it returns zeros (det · A⁻ᵀ with det = 0) for all three; the
    # finite differences agree with the cofactor matrix, so they decide.
    for a in (np.array([[1.0, 2.0], [2.0, 4.0]]), np.zeros((3, 3)), np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 0]])):
        assert gradcheck(det, (t64(a),))
        np.testing.assert_allclose(det(mt.tensor(a)).numpy(), torch.linalg.det(torch.tensor(a)).numpy(), atol=1e-12)
    x = t64(np.array([[1.0, 2.0], [2.0, 4.0]]))
    det(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)  # adj(A)ᵀ


def test_svdvals_gradient_with_repeated_singular_values_is_finite():
    # S of the identity is repeated; svdvals' gradient U diag(dS) Vh is still defined (as in torch)
    compare_with_torch(svdvals, torch.linalg.svdvals, [np.eye(3)])
    # and svd with unused singular vectors does not turn 0/0 into nan
    x = t64(np.eye(3))
    svd(x)[1].sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.eye(3), atol=1e-12)


def test_eigvalsh_gradient_with_repeated_eigenvalues_is_finite():
    compare_with_torch(eigvalsh, torch.linalg.eigvalsh, [np.eye(3)])
    x = t64(np.eye(3))
    eigh(x)[0].sum().backward()  # eigenvectors unused: no 0/0 nan
    np.testing.assert_allclose(x.grad.numpy(), np.eye(3), atol=1e-12)


def test_empty_and_edge_matrices():
    assert inv(mt.zeros(0, 0, dtype="float64")).shape == (0, 0)
    assert float(det(mt.zeros(0, 0, dtype="float64"))) == 1.0
    assert det(mt.zeros(2, 0, 0, dtype="float64")).tolist() == [1.0, 1.0]
    sign, logabsdet = slogdet(mt.zeros(2, 2, dtype="float64"))
    assert float(sign) == 0.0 and float(logabsdet) == -np.inf
    np.testing.assert_allclose(inv(t64(np.diag([1e-150, 1e150]))).detach().numpy(), np.diag([1e150, 1e-150]))
    assert np.isnan(inv(t64(np.array([[np.nan, 0.0], [0.0, 1.0]]))).detach().numpy()[0, 0])
    U, S, Vh = svd(mt.ones(0, 3, dtype="float64"))
    assert U.shape == (0, 0) and S.shape == (0,) and Vh.shape == (3, 3)


def test_singular_and_not_positive_definite_raise_linalg_error():
    assert issubclass(LinAlgError, RuntimeError) and linalg.LinAlgError is LinAlgError
    with pytest.raises(LinAlgError, match="linalg.inv: .*singular"):
        inv(mt.zeros(2, 2))
    with pytest.raises(LinAlgError, match="linalg.inv: .*singular"):
        inv(mt.tensor(np.stack([np.eye(2), np.zeros((2, 2))])))  # one singular matrix in the batch
    with pytest.raises(LinAlgError, match="torch.linalg.solve: The solver failed because the input matrix is singular"):
        solve(mt.zeros(2, 2), mt.ones(2))
    with pytest.raises(LinAlgError, match="linalg.cholesky: .*not positive-definite"):
        cholesky(-mt.eye(3))
    with pytest.raises(RuntimeError):  # as torch.linalg.LinAlgError, a RuntimeError
        torch.linalg.cholesky(-torch.eye(3))


def test_bad_input_names_what_came():
    with pytest.raises(ShapeError, match=r"A must be batches of square matrices, but they are 2 by 3 matrices"):
        inv(mt.ones(2, 3))
    with pytest.raises(ShapeError, match=r"must have at least 2 dimensions, got shape \(3,\)"):
        det(mt.ones(3))
    with pytest.raises(DtypeError, match="Expected a float32, float64, complex64 or complex128 tensor as input, got int64"):
        inv(mt.ones(2, 2, dtype="int64"))
    with pytest.raises(DtypeError, match="got float16"):
        cholesky(mt.ones(2, 2, dtype="float16"))
    with pytest.raises(ShapeError, match=r"Incompatible shapes of A and B for the equation AX = B \(3x3 and 4x1"):
        solve(mt.eye(3), mt.ones(4, 1))
    with pytest.raises(ShapeError, match=r"equation XA = B \(3x3 and 3x1"):
        solve(mt.eye(3), mt.ones(3), left=False)
    with pytest.raises(ShapeError, match="Incompatible shapes"):
        solve(mt.ones(2, 3, 3), mt.ones(4, 3, 1))  # batch dims that do not broadcast
    with pytest.raises(DtypeError, match="A of type float64 and B of type float32"):
        solve(mt.eye(3, dtype="float64"), mt.ones(3))
    with pytest.raises(OptionError, match="unrecognized mode 'x' but expected one of 'reduced'"):
        qr(mt.ones(3, 2), mode="x")
    with pytest.raises(OptionError, match="UPLO must be 'L' or 'U', got 'X'"):
        eigh(mt.eye(2), UPLO="X")
    with pytest.raises(TypeError, match="expected A to be a Tensor, got ndarray"):
        svd(np.ones((2, 2)))


def test_namespace_and_tensor_methods(rng):
    a = mt.tensor(well_conditioned(rng, (3, 3)))
    np.testing.assert_allclose(a.inverse().numpy(), np.linalg.inv(a.numpy()), rtol=1e-5)
    np.testing.assert_allclose(float(a.det()), np.linalg.det(a.numpy()), rtol=1e-5)
    for name in ("inv", "det", "slogdet", "solve", "cholesky", "qr", "svd", "svdvals", "eigh", "eigvalsh", "cross"):
        assert callable(getattr(linalg, name))
    U, _, Vh = linalg.svd(a)
    assert linalg.svd(a).S.shape == (3,) and U.shape == Vh.shape == (3, 3)  # a named tuple, as in torch
    assert linalg.qr(a).Q.shape == (3, 3) and linalg.slogdet(a).logabsdet.shape == ()


# ---------------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------------


@given(batch_shapes, st.integers(1, 4), st.integers(1, 3), st.booleans())
def test_property_solve_solves_and_matches_torch(batch, n, k, left):
    rng = np.random.default_rng(n * 10 + k)
    a = well_conditioned(rng, (*batch, n, n))
    b = rng.standard_normal((*batch, n, k) if left else (*batch, k, n))
    x = solve(mt.tensor(a), mt.tensor(b), left=left).numpy()
    np.testing.assert_allclose(a @ x if left else x @ a, b, atol=1e-10)
    compare_with_torch(lambda p, q: solve(p, q, left=left), lambda p, q: torch.linalg.solve(p, q, left=left), [a, b])


@given(batch_shapes, st.integers(1, 4), st.integers(1, 4))
def test_property_decompositions_reconstruct(batch, m, n):
    rng = np.random.default_rng(m * 10 + n)
    a = rng.standard_normal((*batch, m, n))
    Q, R = qr(mt.tensor(a))
    np.testing.assert_allclose(Q.numpy() @ R.numpy(), a, atol=1e-10)
    U, S, Vh = svd(mt.tensor(a), full_matrices=False)
    np.testing.assert_allclose((U.numpy() * S.numpy()[..., None, :]) @ Vh.numpy(), a, atol=1e-10)
    np.testing.assert_allclose(svdvals(mt.tensor(a)).numpy(), S.numpy(), atol=1e-10)
    sq = well_conditioned(rng, (*batch, n, n))
    np.testing.assert_allclose(inv(mt.tensor(sq)).numpy() @ sq, np.broadcast_to(np.eye(n), sq.shape), atol=1e-10)
    sign, logabsdet = slogdet(mt.tensor(sq))
    np.testing.assert_allclose(sign.numpy() * np.exp(logabsdet.numpy()), det(mt.tensor(sq)).numpy(), rtol=1e-10)
    sym = sq + np.swapaxes(sq, -1, -2)
    w, V = eigh(mt.tensor(sym))
    np.testing.assert_allclose((V.numpy() * w.numpy()[..., None, :]) @ np.swapaxes(V.numpy(), -1, -2), sym, atol=1e-10)
    np.testing.assert_allclose(eigvalsh(mt.tensor(sym)).numpy(), w.numpy(), atol=1e-10)
    L = cholesky(mt.tensor(sq @ np.swapaxes(sq, -1, -2)))
    np.testing.assert_allclose(L.numpy() @ np.swapaxes(L.numpy(), -1, -2), sq @ np.swapaxes(sq, -1, -2), rtol=1e-8)

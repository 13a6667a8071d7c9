"""geqrf, linalg.householder_product, ormqr, linalg.ldl_factor(_ex), linalg.ldl_solve (ops/linalg_householder.py):
gradcheck of householder_product and ormqr (non-contiguous too), PyTorch in float64/float32, Hypothesis
properties (Q orthogonal, A = QR; LDL solves), bad input, edge values."""

import numpy as np
import pytest
from helpers import assert_close, compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt


def test_gradcheck_householder_product_and_ormqr(rng):
    a, tau = rng.standard_normal((4, 3)), rng.uniform(0.5, 1.5, 2)
    gradcheck_noncontiguous(mt.linalg.householder_product, [a, tau], gg=True)
    other = rng.standard_normal((4, 2))
    gradcheck_noncontiguous(lambda a, t, o: mt.ormqr(a, t, o, transpose=True), [a, tau, other])
    gradcheck_noncontiguous(lambda a, t, o: mt.ormqr(a, t, o, left=False), [a, tau, other.T])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_torch(dtype, rng):
    a = rng.standard_normal((2, 5, 3)).astype(dtype)
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == np.float32 else {}
    qr, tau = mt.geqrf(mt.tensor(a))
    tq, tt = torch.geqrf(torch.tensor(a))
    assert_close(qr, tq, dtype, "geqrf a", **tol)
    assert_close(tau, tt, dtype, "geqrf tau", **tol)
    compare_with_torch(mt.linalg.householder_product, torch.linalg.householder_product, [qr.numpy(), tau.numpy()], **tol)
    c = rng.standard_normal((2, 5, 2)).astype(dtype)
    compare_with_torch(mt.ormqr, torch.ormqr, [qr.numpy(), tau.numpy(), c], **tol)
    s = rng.standard_normal((3, 4, 4)).astype(dtype)
    s = s + np.swapaxes(s, -1, -2)
    LD, piv, _ = mt.linalg.ldl_factor_ex(mt.tensor(s))
    tLD, tpiv, _ = torch.linalg.ldl_factor_ex(torch.tensor(s))
    assert_close(LD, tLD, dtype, "LD", **tol)
    np.testing.assert_array_equal(piv.numpy(), tpiv.numpy())
    b = rng.standard_normal((3, 4, 2)).astype(dtype)
    assert_close(mt.linalg.ldl_solve(LD, piv, mt.tensor(b)), torch.linalg.ldl_solve(tLD, tpiv, torch.tensor(b)),
                 dtype, "ldl_solve", **tol)


def test_edge_values():
    q = mt.linalg.householder_product(mt.zeros(3, 2), mt.zeros(0))  # no reflectors: the identity's columns
    np.testing.assert_array_equal(q.numpy(), np.eye(3, 2))
    _, _, info = mt.linalg.ldl_factor_ex(mt.zeros(2, 2))  # a zero matrix: D singular, LAPACK's info > 0
    assert info.item() > 0
    assert mt.geqrf(mt.zeros(0, 3, 2)).tau.shape == (0, 2)


@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 5), n=st.integers(1, 5), seed=st.integers(0, 10**6))
def test_property_geqrf_reflectors_rebuild_A(m, n, seed):
    a = np.random.default_rng(seed).standard_normal((max(m, n), n))
    qr, tau = mt.geqrf(mt.tensor(a))
    Q = mt.linalg.householder_product(qr, tau).numpy()  # (m, n), orthonormal columns
    np.testing.assert_allclose(Q.T @ Q, np.eye(n), atol=1e-12)
    np.testing.assert_allclose(Q @ np.triu(qr.numpy()[:n]), a, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 5), seed=st.integers(0, 10**6))
def test_property_ldl_solve_solves(n, seed):
    r = np.random.default_rng(seed)
    s = r.standard_normal((n, n))
    s = s + s.T + 2 * n * np.eye(n)
    b = r.standard_normal((n, 2))
    LD, piv = mt.linalg.ldl_factor(mt.tensor(s))
    np.testing.assert_allclose(s @ mt.linalg.ldl_solve(LD, piv, mt.tensor(b)).numpy(), b, atol=1e-10)


def test_bad_input_names_what_came():
    with pytest.raises(RuntimeError, match=r"input.shape\[-2\] must be greater than or equal to input.shape\[-1\]"):
        mt.linalg.householder_product(mt.ones(2, 3), mt.ones(1))
    with pytest.raises(RuntimeError, match=r"tau must have shape \(\*, k\) with k <= 2"):
        mt.linalg.householder_product(mt.ones(3, 2), mt.ones(3))
    with pytest.raises(RuntimeError, match="other must be a matrix with 3 rows"):
        mt.ormqr(mt.ones(3, 2), mt.ones(2), mt.ones(2, 2))
    with pytest.raises(RuntimeError, match=r"incompatible shapes of LD \(2, 2\) and B \(3, 1\)"):
        mt.linalg.ldl_solve(mt.eye(2), mt.tensor([1, 2], dtype="int32"), mt.ones(3, 1))
    with pytest.raises(RuntimeError, match="square"):
        mt.linalg.ldl_factor(mt.ones(2, 3))

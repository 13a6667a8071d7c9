"""torch.cholesky, cholesky_solve, cholesky_inverse, qr, svd (V, some=, compute_uv=), pinverse, triangular_solve,
logdet and linalg.vander (ops/linalg_torch.py): float64 gradcheck (non-contiguous leaves too), PyTorch in
float64/float32 with random upstream gradients, Hypothesis properties, bad input, edge values."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt


def _spd(rng, n, batch=()):
    a = rng.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _lower(rng, n, batch=()):
    return np.linalg.cholesky(_spd(rng, n, batch))


# name, ours, theirs, arrays maker (rng -> list of float64 arrays)
CASES = [
    ("cholesky", mt.cholesky, torch.cholesky, lambda r: [_spd(r, 3)]),
    ("cholesky_upper", lambda a: mt.cholesky(a, upper=True), lambda a: torch.cholesky(a, upper=True),
     lambda r: [_spd(r, 3, (2,))]),
    ("cholesky_solve", mt.cholesky_solve, torch.cholesky_solve,
     lambda r: [r.standard_normal((2, 3, 2)), _lower(r, 3)]),
    ("cholesky_solve_upper", lambda b, u: mt.cholesky_solve(b, u, upper=True),
     lambda b, u: torch.cholesky_solve(b, u, upper=True), lambda r: [r.standard_normal((3, 1)), _lower(r, 3).T]),
    ("cholesky_inverse", mt.cholesky_inverse, torch.cholesky_inverse, lambda r: [_lower(r, 3, (2,))]),
    ("qr_complete", lambda a: mt.qr(a, some=False), lambda a: torch.qr(a, some=False), lambda r: [r.standard_normal((3, 4))]),
    ("pinverse", mt.pinverse, torch.pinverse, lambda r: [r.standard_normal((3, 5))]),
    ("triangular_solve", lambda b, a: mt.triangular_solve(b, a, upper=False, transpose=True),
     lambda b, a: torch.triangular_solve(b, a, upper=False, transpose=True),
     lambda r: [r.standard_normal((2, 3, 2)), np.tril(r.standard_normal((3, 3))) + 3 * np.eye(3)]),
    ("triangular_solve_unit", lambda b, a: mt.triangular_solve(b, a, unitriangular=True),
     lambda b, a: torch.triangular_solve(b, a, unitriangular=True),
     lambda r: [r.standard_normal((3, 2)), np.triu(r.standard_normal((3, 3)))]),
    ("logdet", mt.logdet, torch.logdet, lambda r: [_spd(r, 3, (2,))]),
    ("vander", lambda x: mt.linalg.vander(x, N=4), lambda x: torch.linalg.vander(x, N=4),
     lambda r: [r.standard_normal((2, 3))]),
]


@pytest.mark.parametrize("name,ours,theirs,make", CASES, ids=[c[0] for c in CASES])
def test_gradcheck_contiguous_and_noncontiguous(name, ours, theirs, make, rng):
    arrays = make(rng)
    fn = ours
    if name.startswith("cholesky_solve") or name == "cholesky_inverse":
        # PyTorch's convention: the factor counts as a full matrix; checked on triangular inputs, as its OpInfo
        upper = name.endswith("upper")
        tri = (lambda t: t.triu()) if upper else (lambda t: t.tril())
        fn = (lambda b, f: ours(b, tri(f))) if name.startswith("cholesky_solve") else (lambda f: ours(tri(f)))
    if name in ("cholesky", "cholesky_upper"):  # cholesky of a symmetric input: symmetrize first
        fn = lambda a: ours((a + a.mT) * 0.5)
    gradcheck_noncontiguous(fn, arrays, gg=name in ("logdet", "vander"))


@pytest.mark.parametrize("name,ours,theirs,make", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_torch(name, ours, theirs, make, dtype, rng):
    tol = {"rtol": 2e-4, "atol": 2e-4} if dtype == np.float32 else {}
    compare_with_torch(ours, theirs, [a.astype(dtype) for a in make(rng)], **tol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_svd_returns_v_and_zero_factors_without_uv(dtype, rng):
    a = rng.standard_normal((2, 4, 3)).astype(dtype)
    U, S, V = mt.svd(mt.tensor(a))
    assert U.shape == (2, 4, 3) and V.shape == (2, 3, 3)
    np.testing.assert_allclose((U.numpy() * S.numpy()[..., None, :]) @ np.swapaxes(V.numpy(), -1, -2), a,
                               atol=1e-5 if dtype == np.float32 else 1e-12)
    np.testing.assert_allclose(S.numpy(), torch.svd(torch.tensor(a)).S.numpy(), rtol=1e-5)
    U, S, V = mt.svd(mt.tensor(a), some=False, compute_uv=False)
    assert U.shape == (2, 4, 4) and V.shape == (2, 3, 3) and not U.numpy().any() and not V.numpy().any()
    assert mt.svd(mt.tensor(a), some=False).U.shape == (2, 4, 4)


def test_svd_gradient_of_a_gauge_invariant_loss(rng):
    # U diag(S) Vᵀ rebuilt: invariant under the per-column sign of U and V, so its gradient is well defined
    a = rng.standard_normal((4, 3))
    def rebuilt(t):
        u, s, v = mt.svd(t)
        return (u * s) @ v.mT

    gradcheck_noncontiguous(rebuilt, [a])


def test_edge_values_by_the_math():
    assert np.isnan(mt.logdet(mt.tensor([[0.0, 1.0], [1.0, 0.0]])).item())  # det = -1: log is NaN
    assert mt.logdet(mt.zeros(2, 2)).item() == -np.inf  # singular
    assert mt.logdet(mt.eye(3, dtype="float64") * 1e200).item() == pytest.approx(600 * np.log(10))  # det overflows
    assert mt.cholesky_solve(mt.zeros(0, 0), mt.zeros(0, 0)).shape == (0, 0)
    assert mt.triangular_solve(mt.zeros(2, 0), mt.eye(2)).solution.shape == (2, 0)
    np.testing.assert_array_equal(mt.linalg.vander(mt.tensor(3.0), N=3).numpy(), [[1.0, 3.0, 9.0]])
    np.testing.assert_array_equal(mt.linalg.vander(mt.tensor([2, -1])).numpy(), [[1, 2], [1, -1]])
    v = mt.linalg.vander(mt.tensor([np.inf, np.nan]), N=3).numpy()
    assert v[0].tolist() == [1.0, np.inf, np.inf] and v[1, 0] == 1.0 and np.isnan(v[1, 1:]).all()


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 4), k=st.integers(1, 3), seed=st.integers(0, 10**6), upper=st.booleans())
def test_property_cholesky_solve_solves(n, k, seed, upper):
    r = np.random.default_rng(seed)
    A, B = _spd(r, n), r.standard_normal((n, k))
    F = mt.cholesky(mt.tensor(A), upper=upper)
    np.testing.assert_allclose(A @ mt.cholesky_solve(mt.tensor(B), F, upper=upper).numpy(), B, atol=1e-9)
    np.testing.assert_allclose(mt.cholesky_inverse(F, upper=upper).numpy() @ A, np.eye(n), atol=1e-9)


def test_bad_input_names_what_came():
    with pytest.raises(RuntimeError, match=r"cholesky_solve\(\): incompatible shapes of A \(3, 3\) and B \(2, 1\)"):
        mt.cholesky_solve(mt.ones(2, 1), mt.eye(3))
    with pytest.raises(TypeError, match="same dtype"):
        mt.triangular_solve(mt.ones(2, 1, dtype="float64"), mt.eye(2))
    with pytest.raises(RuntimeError, match=r"N must be greater than 1, got 1"):
        mt.linalg.vander(mt.ones(3), N=1)
    with pytest.raises(RuntimeError, match="square"):
        mt.logdet(mt.ones(2, 3))
    with pytest.raises(RuntimeError):
        mt.cholesky(mt.tensor([[1.0, 2.0], [2.0, 1.0]]))  # not positive-definite

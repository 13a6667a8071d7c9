"""torch.linalg.eig / eigvals (ops/linalg_eig.py): against PyTorch (values, dtypes, gradients through losses that
do not depend on the eigenvectors' phases), hand-worked spectra, A V = V diag(λ) as a Hypothesis property,
float64 gradcheck on non-contiguous inputs, and the errors (including PyTorch's for a phase-dependent loss)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt

torch = pytest.importorskip("torch")


def _phase_free(lib):
    # λ and |V|²: what a loss may use (V's columns are fixed only up to e^{iφ})
    def f(A):
        w, v = lib.linalg.eig(A)
        return w, v.abs() ** 2
    return f


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64])
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (1, 1)])
def test_eig_and_eigvals_match_torch(dtype, shape):
    rng = np.random.default_rng(0)
    A = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        A = A + 1j * rng.standard_normal(shape)
    A = A.astype(dtype)
    compare_with_torch(_phase_free(mt), _phase_free(torch), [A])
    compare_with_torch(mt.linalg.eigvals, torch.linalg.eigvals, [A])


def test_hand_worked_spectra():
    w, v = mt.linalg.eig(mt.tensor([[2.0, 0.0], [0.0, 3.0]]))
    assert str(w.dtype) == "complex64" and str(v.dtype) == "complex64"  # always complex, as PyTorch
    np.testing.assert_allclose(w.numpy(), [2, 3])
    np.testing.assert_allclose(v.numpy(), np.eye(2))
    # the rotation by 90°: λ = ±i, eigenvectors (1, ∓i)/√2 with the largest component real
    w = mt.linalg.eigvals(mt.tensor([[0.0, -1.0], [1.0, 0.0]], dtype=mt.float64)).numpy()
    np.testing.assert_allclose(sorted(w, key=lambda z: z.imag), [-1j, 1j], atol=1e-15)


def test_gradcheck_non_contiguous_and_the_gradient_of_lambda_by_hand():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((4, 4))
    gradcheck_noncontiguous(lambda a: mt.view_as_real(mt.linalg.eigvals(a)), [A])
    gradcheck_noncontiguous(lambda a: (mt.linalg.eig(a)[1].abs() ** 2), [A])
    # dλ_k/dA = u_k v_kᵀ / (u_k · v_k) (left and right eigenvectors): for a diagonal A, dλ_k/dA = e_k e_kᵀ
    D = mt.tensor(np.diag([1.0, 2.0, 5.0]), requires_grad=True)
    mt.linalg.eigvals(D).real[1].backward()
    np.testing.assert_allclose(D.grad.numpy(), np.diag([0.0, 1.0, 0.0]), atol=1e-14)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 5), seed=st.integers(0, 2**16), cplx=st.booleans())
def test_av_equals_v_lambda(n, seed, cplx):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n)) + (1j * rng.standard_normal((n, n)) if cplx else 0)
    w, v = mt.linalg.eig(mt.tensor(A))
    w, v = w.numpy(), v.numpy()
    np.testing.assert_allclose(A @ v, v * w, atol=1e-10 * max(1.0, np.abs(A).max() * n))
    np.testing.assert_allclose(np.linalg.norm(v, axis=0), 1.0, rtol=1e-12)  # unit columns, as geev


def test_errors():
    with pytest.raises(RuntimeError, match="square"):
        mt.linalg.eig(mt.zeros(2, 3))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        mt.linalg.eigvals(mt.zeros(3))
    with pytest.raises(RuntimeError, match="Expected a float32, float64, complex64 or complex128"):
        mt.linalg.eig(mt.zeros(2, 2, dtype=mt.int64))
    with pytest.raises(RuntimeError, match="infs or NaNs"):
        mt.linalg.eig(mt.tensor([[1.0, float("nan")], [0.0, 1.0]]))
    A = mt.tensor(np.random.default_rng(2).standard_normal((3, 3)), requires_grad=True)
    with pytest.raises(RuntimeError, match="e\\^\\{i phi\\}"):  # Re(V).sum() depends on the phases: no gradient
        mt.linalg.eig(A)[1].real.sum().backward()


def test_edge_values_against_the_math():
    # the zero matrix: λ = 0 (twice), V = I; diagonal matrices of huge and tiny entries: λ the diagonal, V = I;
    # empty matrices: empty results, as PyTorch's; float16 refused (PyTorch: not implemented for 'Half')
    w, v = mt.linalg.eig(mt.zeros(2, 2, dtype=mt.float64))
    np.testing.assert_array_equal(w.numpy(), 0)
    np.testing.assert_array_equal(v.numpy(), np.eye(2))
    for scale in (1e300, 1e-300):
        w, v = mt.linalg.eig(mt.tensor(np.diag([scale, 2 * scale])))
        np.testing.assert_allclose(w.numpy(), [scale, 2 * scale], rtol=1e-15)
        np.testing.assert_array_equal(v.numpy(), np.eye(2))
    w, v = mt.linalg.eig(mt.zeros(0, 0))
    assert tuple(w.shape) == (0,) and tuple(v.shape) == (0, 0) and str(w.dtype) == "complex64"
    assert tuple(mt.linalg.eigvals(mt.zeros(3, 0, 0)).shape) == (3, 0)
    with pytest.raises(RuntimeError, match="float32, float64, complex64 or complex128"):
        mt.linalg.eig(mt.zeros(2, 2, dtype=mt.float16))
    with pytest.raises(RuntimeError, match="infs or NaNs"):
        mt.linalg.eigvals(mt.tensor([[1.0, float("inf")], [0.0, 1.0]]))


def test_a_view_changed_in_place_after_eigvals_is_refused_by_backward():
    b = mt.tensor(np.random.default_rng(3).standard_normal((4, 4)), requires_grad=True)
    v = b * 1.0
    out = mt.linalg.eigvals(v[:3, :3])  # saves the view
    v.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        (out * mt.tensor(np.arange(1, 4) + 1j)).real.sum().backward()

"""matrix_exp (ops/matrix_exp.py): float64 gradcheck and gradgradcheck (also non-contiguous), PyTorch in
float64/float32 with random upstream gradients, Hypothesis properties, bad input, edge values."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt


@pytest.mark.parametrize("shape", [(3, 3), (2, 2, 2)])
def test_gradcheck_and_gradgradcheck(shape, rng):
    gradcheck_noncontiguous(mt.matrix_exp, [rng.standard_normal(shape)], gg=shape == (2, 2, 2))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (1, 1)])
def test_matches_torch(shape, dtype, rng):
    compare_with_torch(mt.matrix_exp, torch.matrix_exp, [rng.standard_normal(shape).astype(dtype)],
                       rtol=1e-4 if dtype == np.float32 else None)


def test_hand_worked_values():
    # a rotation generator: exp([[0, -t], [t, 0]]) = [[cos t, -sin t], [sin t, cos t]]
    t = 0.7
    out = mt.matrix_exp(mt.tensor([[0.0, -t], [t, 0.0]], dtype="float64")).numpy()
    np.testing.assert_allclose(out, [[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]], atol=1e-15)
    # nilpotent: exp([[0, 1], [0, 0]]) = I + N
    np.testing.assert_allclose(mt.matrix_exp(mt.tensor([[0.0, 1.0], [0.0, 0.0]])).numpy(), [[1, 1], [0, 1]])
    assert mt.matrix_exp(mt.zeros(0, 3, 3)).shape == (0, 3, 3)
    assert mt.matrix_exp(mt.tensor([[800.0]], dtype="float64")).item() == np.inf  # e^800 overflows
    assert np.isnan(mt.matrix_exp(mt.tensor([[np.nan]], dtype="float64")).item())


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 4), seed=st.integers(0, 10**6))
def test_property_exp_of_a_diagonalizable_matrix(n, seed):
    r = np.random.default_rng(seed)
    d = r.uniform(-2, 2, n)
    q, _ = np.linalg.qr(r.standard_normal((n, n)))
    a = q @ np.diag(d) @ q.T  # symmetric: e^A = Q e^D Qᵀ
    np.testing.assert_allclose(mt.matrix_exp(mt.tensor(a)).numpy(), q @ np.diag(np.exp(d)) @ q.T, atol=1e-12)
    # e^A e^(-A) = I
    np.testing.assert_allclose(mt.matrix_exp(mt.tensor(a)).numpy() @ mt.matrix_exp(mt.tensor(-a)).numpy(), np.eye(n),
                               atol=1e-12)


def test_bad_input_names_what_came():
    with pytest.raises(RuntimeError, match="must be batches of square matrices, but they are 2 by 3"):
        mt.matrix_exp(mt.ones(2, 3))
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        mt.matrix_exp(mt.ones(3))
    with pytest.raises(TypeError, match="Expected a float32 or float64 tensor as input, got int64"):
        mt.matrix_exp(mt.tensor([[1, 2], [3, 4]]))

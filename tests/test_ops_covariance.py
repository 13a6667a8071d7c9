"""cov and corrcoef (ops/covariance.py): gradcheck (also non-contiguous, and in float aweights), PyTorch in
float64/float32 with weights, a Hypothesis property against NumPy, bad input, edge values."""

import warnings

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt


def test_gradcheck_input_and_aweights(rng):
    x, a = rng.standard_normal((3, 5)), rng.uniform(0.5, 2.0, 5)
    gradcheck_noncontiguous(mt.cov, [x], gg=True)
    gradcheck_noncontiguous(lambda x, a: mt.cov(x, correction=2, aweights=a), [x, a])
    gradcheck_noncontiguous(mt.corrcoef, [x])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_torch_with_and_without_weights(dtype, rng):
    x = rng.standard_normal((3, 6)).astype(dtype)
    f = rng.integers(0, 4, 6)
    a = rng.uniform(0.1, 2.0, 6).astype(dtype)
    compare_with_torch(mt.cov, torch.cov, [x])
    compare_with_torch(lambda x: mt.cov(x, correction=0), lambda x: torch.cov(x, correction=0), [x])
    compare_with_torch(lambda x, f, a: mt.cov(x, fweights=f, aweights=a),
                       lambda x, f, a: torch.cov(x, fweights=f, aweights=a), [x, f, a], requires_grad=[True, False, True])
    compare_with_torch(mt.corrcoef, torch.corrcoef, [x])
    compare_with_torch(mt.cov, torch.cov, [x[0]])  # one variable: 0-d


def test_edges_by_the_math():
    # hand-worked: rows [1, 2, 4] and [3, 1, 0]: means 7/3 and 4/3; cov = Σ (x - μ)(y - ν) / 2
    c = mt.cov(mt.tensor([[1.0, 2.0, 4.0], [3.0, 1.0, 0.0]], dtype="float64")).numpy()
    np.testing.assert_allclose(c, [[7 / 3, -13 / 6], [-13 / 6, 7 / 3]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(mt.cov(mt.tensor([[1.0]])).item())  # one observation, correction 1: 0/0
    r = mt.corrcoef(mt.tensor([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]])).numpy()  # a constant row: NaN, as NumPy
    assert np.isnan(r[0]).all() and r[1, 1] == 1.0
    assert mt.cov(mt.tensor([1, 2, 4])).dtype == np.float32
    assert np.isnan(mt.cov(mt.tensor([1.0, np.nan, 2.0])).item())
    assert mt.cov(mt.tensor([1e200, -1e200], dtype="float64")).item() == np.inf


@settings(max_examples=40, deadline=None)
@given(v=st.integers(1, 4), n=st.integers(2, 6), seed=st.integers(0, 10**6), correction=st.integers(0, 1))
def test_property_is_numpys_cov(v, n, seed, correction):
    r = np.random.default_rng(seed)
    x, f, a = r.standard_normal((v, n)), r.integers(1, 4, n), r.uniform(0.1, 2.0, n)
    got = mt.cov(mt.tensor(x), correction=correction, fweights=mt.tensor(f), aweights=mt.tensor(a)).numpy()
    np.testing.assert_allclose(got, np.cov(x, ddof=correction, fweights=f, aweights=a), rtol=1e-10, atol=1e-12)


def test_bad_input_names_what_came():
    with pytest.raises(RuntimeError, match="expected input to have two or fewer dimensions but got an input with 3"):
        mt.cov(mt.ones(2, 2, 2))
    with pytest.raises(TypeError, match="expected fweights to have integral dtype but got fweights with float32"):
        mt.cov(mt.ones(2, 3), fweights=mt.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="fweights cannot be negative"):
        mt.cov(mt.ones(2, 3), fweights=mt.tensor([-1, 2, 3]))
    with pytest.raises(RuntimeError, match=r"expected aweights to have one element per observation \(3\)"):
        mt.cov(mt.ones(2, 3), aweights=mt.tensor([1.0, 2.0]))

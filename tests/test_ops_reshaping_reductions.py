"""nanquantile, renorm, constant_pad_nd (ops/reshaping_reductions.py): gradcheck (non-contiguous too), PyTorch in
float64/float32 with random upstream gradients, Hypothesis against NumPy, bad input, edge values."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import array_and_dim

import minitorch_ln as mt


def _with_nans(a, rng):
    a = a.copy()
    a[rng.random(a.shape) < 0.25] = np.nan
    return a


CASES = [
    ("nanquantile", lambda x: mt.nanquantile(x, 0.3, dim=1), lambda x: torch.nanquantile(x, 0.3, dim=1), (3, 5)),
    ("nanquantile_q", lambda x: mt.nanquantile(x, mt.tensor([0.1, 0.9], dtype=x.dtype), dim=0, keepdim=True,
                                               interpolation="midpoint"),
     lambda x: torch.nanquantile(x, torch.tensor([0.1, 0.9], dtype=x.dtype), dim=0, keepdim=True,
                                 interpolation="midpoint"), (4, 3)),
    ("renorm", lambda x: mt.renorm(x, 2, 1, 1.5), lambda x: torch.renorm(x, 2, 1, 1.5), (3, 4)),
    ("renorm_p1", lambda x: mt.renorm(x, 1.0, 0, 2.0), lambda x: torch.renorm(x, 1.0, 0, 2.0), (3, 2, 2)),
    ("constant_pad_nd", lambda x: mt.constant_pad_nd(x, (1, -1, 2, 0), 0.5),
     lambda x: torch.constant_pad_nd(x, (1, -1, 2, 0), 0.5), (2, 3, 4)),
]


@pytest.mark.parametrize("name,ours,theirs,shape", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_torch(name, ours, theirs, shape, dtype, rng):
    a = rng.standard_normal(shape) * 2
    a = _with_nans(a, rng) if name.startswith("nanquantile") else a
    compare_with_torch(ours, theirs, [a.astype(dtype)])


@pytest.mark.parametrize("name,ours,theirs,shape", CASES, ids=[c[0] for c in CASES])
def test_gradcheck(name, ours, theirs, shape, rng):
    a = rng.standard_normal(shape) * 2
    if name == "renorm":  # keep every slice's norm away from maxnorm, where the scale switches on
        a = a * 1.5 / np.linalg.norm(a, axis=0) * np.array([0.5, 2.0, 0.7, 3.0])
    gradcheck_noncontiguous(ours, [a], gg=name == "constant_pad_nd")


def test_nanquantile_gradient_in_q_matches_torch(rng):
    a = _with_nans(rng.standard_normal((3, 6)), rng)
    compare_with_torch(lambda x, q: mt.nanquantile(x, q, dim=1), lambda x, q: torch.nanquantile(x, q, dim=1),
                       [a, np.array([0.25, 0.6])])


def test_edge_values():
    assert np.isnan(mt.nanquantile(mt.tensor([np.nan, np.nan]), 0.5).item())  # nothing left: NaN
    assert mt.nanquantile(mt.tensor([np.nan, 1.0, 3.0]), 0.5).item() == 2.0  # median of [1, 3]
    assert mt.nanquantile(mt.tensor([np.inf, 1.0]), 1.0).item() == np.inf
    out = mt.renorm(mt.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0).numpy()  # row 0: norm 5 -> 1; row 1 kept
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)
    assert mt.constant_pad_nd(mt.ones(2, dtype="float16"), (1, 1), np.inf).tolist() == [np.inf, 1.0, 1.0, np.inf]


@settings(max_examples=40, deadline=None)
@given(ad=array_and_dim(), q=st.floats(0.0, 1.0))
def test_property_nanquantile_is_numpys(ad, q):
    a, dim = ad
    a = a.copy()
    a.flat[::3] = np.nan
    want = np.nanquantile(a, q, axis=dim) if not np.isnan(a).all(axis=dim).any() else None
    if want is not None:
        np.testing.assert_allclose(mt.nanquantile(mt.tensor(a), q, dim=dim).numpy(), want, rtol=1e-10, atol=1e-12)


def test_bad_input_names_what_came():
    with pytest.raises(RuntimeError, match=r"q values must be in the range \[0, 1\], got \[1.5\]"):
        mt.nanquantile(mt.ones(3), 1.5)
    with pytest.raises(TypeError, match="input tensor must be either float or double dtype, got int64"):
        mt.nanquantile(mt.tensor([1, 2]), 0.5)
    with pytest.raises(ValueError, match="interpolation must be one of"):
        mt.nanquantile(mt.ones(3), 0.5, interpolation="cubic")
    with pytest.raises(RuntimeError, match="non-positive-norm not supported, got p=0"):
        mt.renorm(mt.ones(2, 2), 0, 0, 1.0)
    with pytest.raises(RuntimeError, match="expected maxnorm to be >= 0 but got -1"):
        mt.renorm(mt.ones(2, 2), 2, 0, -1)
    with pytest.raises(RuntimeError, match="input needs at least 2 dimensions"):
        mt.renorm(mt.ones(2), 2, 0, 1.0)

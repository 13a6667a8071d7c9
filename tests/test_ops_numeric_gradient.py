"""torch.gradient (ops/numeric_gradient.py): PyTorch in float64/float32 for uniform and coordinate spacings and
both edge orders (gradients under a random upstream gradient), gradcheck (non-contiguous too), a Hypothesis
property against NumPy, bad input, edge values."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import array_and_dim

import minitorch_ln as mt

COORDS = np.array([0.0, 0.5, 1.7, 2.0, 3.5])
CASES = [
    ("default", {}),
    ("spacing_dim", {"spacing": 2.0, "dim": 1, "edge_order": 2}),
    ("per_dim", {"spacing": [0.5, 2.0], "dim": (0, 1)}),
    ("coords", {"coords": True, "dim": 1}),
    ("coords_order2", {"coords": True, "dim": 1, "edge_order": 2}),
]


def _call(lib, x, kw):
    kw = dict(kw)
    if kw.pop("coords", False):
        kw["spacing"] = (lib.tensor(COORDS),)
    return lib.gradient(x, **kw)


@pytest.mark.parametrize("name,kw", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_torch(name, kw, dtype, rng):
    x = rng.standard_normal((4, 5)).astype(dtype)
    compare_with_torch(lambda t: _call(mt, t, kw), lambda t: _call(torch, t, kw), [x],
                       rtol=1e-4 if dtype == np.float32 else None)


@pytest.mark.parametrize("name,kw", CASES, ids=[c[0] for c in CASES])
def test_gradcheck(name, kw, rng):
    gradcheck_noncontiguous(lambda t: _call(mt, t, kw), [rng.standard_normal((4, 5))], gg=name == "coords")


def test_hand_worked_values_and_edges():
    # f = x² at x = 0..3: interior (f[i+1] - f[i-1]) / 2 = 2x; ends (1 - 0) = 1 and (9 - 4) = 5
    (g,) = mt.gradient(mt.tensor([0.0, 1.0, 4.0, 9.0]))
    assert g.tolist() == [1.0, 2.0, 4.0, 5.0]
    (g,) = mt.gradient(mt.tensor([0.0, 1.0, 4.0, 9.0]), edge_order=2)  # exact for a quadratic: 2x everywhere
    assert g.tolist() == [0.0, 2.0, 4.0, 6.0]
    assert mt.gradient(mt.tensor([1, 4, 9]))[0].dtype == np.float32  # integers: the default float dtype
    (g,) = mt.gradient(mt.tensor([0.0, np.inf, 1.0]))
    assert g.numpy()[0] == np.inf and g.numpy()[1] == 0.5 and g.numpy()[2] == -np.inf


@settings(max_examples=40, deadline=None)
@given(ad=array_and_dim(), h=st.floats(0.1, 3.0), edge_order=st.sampled_from([1, 2]))
def test_property_is_numpys_gradient(ad, h, edge_order):
    a, dim = ad
    if a.shape[dim] < edge_order + 1:
        return
    (g,) = mt.gradient(mt.tensor(a), spacing=h, dim=dim, edge_order=edge_order)
    np.testing.assert_allclose(g.numpy(), np.gradient(a, h, axis=dim, edge_order=edge_order), rtol=1e-10, atol=1e-10)


def test_bad_input_names_what_came():
    with pytest.raises(RuntimeError, match="expected each dimension size to be at least edge_order\\+1, got size 2"):
        mt.gradient(mt.ones(2), edge_order=2)
    with pytest.raises(RuntimeError, match="only supports edge_order=1 and edge_order=2, got 3"):
        mt.gradient(mt.ones(5), edge_order=3)
    with pytest.raises(RuntimeError, match="a list of length 2 \\(one per dim\\), but got a list of length 1"):
        mt.gradient(mt.ones(3, 3), spacing=[1.0])
    with pytest.raises(RuntimeError, match="to be 1-D with 3 coordinates"):
        mt.gradient(mt.ones(3), spacing=(mt.ones(2),))

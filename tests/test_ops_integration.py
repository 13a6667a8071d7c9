"""trapezoid, trapz, cumulative_trapezoid (ops/integration.py): gradcheck in y and x (also non-contiguous),
PyTorch in float64/float32, a Hypothesis property against NumPy, bad input, edge values."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import array_and_dim

import minitorch_ln as mt

CASES = [
    ("trapezoid", mt.trapezoid, torch.trapezoid, [(3, 5)], {}),
    ("trapezoid_x1d", lambda y, x: mt.trapezoid(y, x, dim=0), lambda y, x: torch.trapezoid(y, x, dim=0),
     [(4, 3), (4,)], {}),
    ("trapezoid_xbcast", mt.trapezoid, torch.trapezoid, [(2, 4), (1, 4)], {}),
    ("trapz_dx", lambda y: mt.trapz(y, dx=0.5, dim=1), lambda y: torch.trapz(y, dx=0.5, dim=1), [(2, 3, 2)], {}),
    ("cumulative_trapezoid", mt.cumulative_trapezoid, torch.cumulative_trapezoid, [(2, 5), (5,)], {}),
    ("cumulative_trapezoid_dx", lambda y: mt.cumulative_trapezoid(y, dx=2.0, dim=0),
     lambda y: torch.cumulative_trapezoid(y, dx=2.0, dim=0), [(4, 2)], {}),
]


@pytest.mark.parametrize("name,ours,theirs,shapes,kw", CASES, ids=[c[0] for c in CASES])
def test_gradcheck_in_y_and_x(name, ours, theirs, shapes, kw, rng):
    gradcheck_noncontiguous(ours, [rng.standard_normal(s) for s in shapes], gg=name == "trapezoid_x1d")


@pytest.mark.parametrize("name,ours,theirs,shapes,kw", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_torch(name, ours, theirs, shapes, kw, dtype, rng):
    compare_with_torch(ours, theirs, [rng.standard_normal(s).astype(dtype) for s in shapes])


def test_hand_worked_values_and_edges():
    # y = [0, 1, 2] at x = [0, 1, 3]: panels (0+1)/2*1 + (1+2)/2*2 = 0.5 + 3 = 3.5
    assert mt.trapezoid(mt.tensor([0.0, 1.0, 2.0]), mt.tensor([0.0, 1.0, 3.0])).item() == 3.5
    np.testing.assert_array_equal(mt.cumulative_trapezoid(mt.tensor([0.0, 1.0, 2.0])).numpy(), [0.5, 2.0])
    assert mt.trapezoid(mt.ones(2, 0)).tolist() == [0.0, 0.0]  # no panels: 0, as PyTorch
    assert mt.trapezoid(mt.tensor([1.0])).item() == 0.0 and mt.cumulative_trapezoid(mt.tensor([1.0])).shape == (0,)
    assert mt.trapezoid(mt.tensor([1, 2])).dtype == np.float32  # integer samples integrate in the default dtype
    assert np.isnan(mt.trapezoid(mt.tensor([np.inf, -np.inf, 0.0])).item())  # inf + -inf
    assert mt.trapezoid(mt.tensor([1e38, 1e38], dtype="float32"), dx=10.0).item() == np.inf  # float32 overflow
    assert mt.trapezoid(mt.tensor([1.0, 3.0], dtype="float16")).item() == 2.0


@settings(max_examples=40, deadline=None)
@given(ad=array_and_dim(), dx=st.floats(0.1, 3.0))
def test_property_is_numpys_trapezoid(ad, dx):
    a, dim = ad
    np.testing.assert_allclose(mt.trapezoid(mt.tensor(a), dx=dx, dim=dim).numpy(),
                               np.trapezoid(a, dx=dx, axis=dim) if hasattr(np, "trapezoid") else np.trapz(a, dx=dx, axis=dim),
                               rtol=1e-12, atol=1e-12)
    c = mt.cumulative_trapezoid(mt.tensor(a), dx=dx, dim=dim).numpy()
    if a.shape[dim] > 1:  # the last running sum is the whole integral
        np.testing.assert_allclose(np.take(c, -1, axis=dim), mt.trapezoid(mt.tensor(a), dx=dx, dim=dim).numpy(),
                                   rtol=1e-12, atol=1e-12)


def test_bad_input_names_what_came():
    with pytest.raises(RuntimeError, match="There must be one `x` value for each sample point: x has 2, y has 3"):
        mt.trapezoid(mt.ones(3), mt.ones(2))
    with pytest.raises(TypeError, match=r"pass either x or dx, not both"):
        mt.trapz(mt.ones(3), mt.ones(3), dx=1.0)
    with pytest.raises(TypeError, match=r"dx must be a number or a 0-d tensor, got 'a'"):
        mt.cumulative_trapezoid(mt.ones(3), dx="a")
    with pytest.raises(TypeError, match=r"argument 'y' must be a Tensor, not list"):
        mt.trapezoid([1.0, 2.0])

"""clamp_min / clamp_max (ops/selection.py): the op added by following docs/custom_op.md.

The standard checks: float64 gradcheck (also at a non-contiguous leaf), PyTorch comparison in float64
and float32 with a random upstream gradient, a Hypothesis property, and bad input.
"""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import arrays, shapes

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck

OPS = [("clamp_min", mt.clamp_min, torch.clamp_min), ("clamp_max", mt.clamp_max, torch.clamp_max)]


def _away_from(a, bound, gap=0.1):
    """``a`` with every value within ``gap`` of ``bound`` moved away (no finite difference across the kink)."""
    near = np.abs(a - bound) < gap
    return np.where(near, bound + np.where(a >= bound, gap, -gap), a)


@pytest.mark.parametrize("name,ours,theirs", OPS)
def test_gradcheck_contiguous_and_noncontiguous(name, ours, theirs, rng):
    a = _away_from(rng.standard_normal((3, 4)), 0.25)
    assert gradcheck(lambda t: ours(t, 0.25), (t64(a),))
    gradcheck_noncontiguous(lambda t: ours(t, 0.25), [a])


@pytest.mark.parametrize("name,ours,theirs", OPS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_torch_with_a_number_and_a_tensor_bound(name, ours, theirs, dtype, rng):
    a = _away_from(rng.standard_normal((4, 5)), -0.3).astype(dtype)
    compare_with_torch(lambda x: ours(x, -0.3), lambda x: theirs(x, -0.3), [a])
    bound = rng.standard_normal((5,)).astype(dtype)
    a = a + np.where(np.abs(a - bound) < 0.1, 0.5, 0.0).astype(dtype)  # no ties with the bound tensor
    compare_with_torch(ours, theirs, [a, bound])


def test_grad_fn_names_are_pytorchs():
    x = mt.tensor([1.0, -2.0], requires_grad=True)
    assert mt.clamp_min(x, 0.0).grad_fn.name() == "ClampMinBackward0"
    assert x.clamp_max(0.0).grad_fn.name() == "ClampMaxBackward0"


@settings(max_examples=40, deadline=None)
@given(shape=shapes, data=st.data(), bound=st.floats(-2.0, 2.0))
def test_property_bounds_hold_and_equal_clamp(shape, data, bound):
    a = data.draw(arrays(shape))
    x = mt.tensor(a)
    lo, hi = mt.clamp_min(x, bound), x.clamp_max(bound)
    assert (lo.numpy() >= bound).all() and (hi.numpy() <= bound).all()
    np.testing.assert_array_equal(lo.numpy(), mt.clamp(x, min=bound).numpy())
    np.testing.assert_array_equal(hi.numpy(), mt.clamp(x, max=bound).numpy())
    np.testing.assert_array_equal(np.maximum(lo.numpy(), hi.numpy()), np.maximum(a, bound))


@pytest.mark.parametrize("name,ours,theirs", OPS)
def test_bad_input_names_what_came(name, ours, theirs):
    with pytest.raises(TypeError, match=f"{name}\\(\\): argument 'input' must be Tensor, not list"):
        ours([1.0, 2.0], 0.0)
    with pytest.raises(TypeError, match=f"{name}\\(\\): argument '(min|max)' must be a number or a Tensor, not NoneType"):
        ours(mt.tensor([1.0]), None)
    with pytest.raises(TypeError, match="not str"):
        ours(mt.tensor([1.0]), "0")

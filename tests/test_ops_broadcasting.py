"""broadcast_shapes, broadcast_tensors, Tensor.sum_to_size, ravel, unravel_index (ops/broadcasting.py): gradcheck
(also non-contiguous), PyTorch in float64/float32, Hypothesis against NumPy, bad input, edge values."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import broadcastable_pair

import minitorch_ln as mt

CASES = [
    ("broadcast_tensors", lambda a, b: mt.broadcast_tensors(a, b), lambda a, b: torch.broadcast_tensors(a, b),
     [(3, 1), (1, 4)]),
    ("sum_to_size", lambda a: a.sum_to_size(1, 4), lambda a: a.sum_to_size(1, 4), [(3, 4)]),
    ("sum_to_size_tuple", lambda a: a.sum_to_size((2, 1, 1)), lambda a: a.sum_to_size((2, 1, 1)), [(2, 3, 5)]),
    ("ravel", mt.ravel, torch.ravel, [(2, 3, 2)]),
]


@pytest.mark.parametrize("name,ours,theirs,shapes", CASES, ids=[c[0] for c in CASES])
def test_gradcheck_contiguous_and_noncontiguous(name, ours, theirs, shapes, rng):
    gradcheck_noncontiguous(ours, [rng.standard_normal(s) for s in shapes], gg=name == "sum_to_size")


@pytest.mark.parametrize("name,ours,theirs,shapes", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_torch(name, ours, theirs, shapes, dtype, rng):
    compare_with_torch(ours, theirs, [rng.standard_normal(s).astype(dtype) for s in shapes])


def test_broadcast_shapes_and_unravel_index_match_torch(rng):
    assert mt.broadcast_shapes((2, 1), (3,), 1) == tuple(torch.broadcast_shapes((2, 1), (3,), 1)) == (2, 3)
    assert mt.broadcast_shapes() == ()
    idx = rng.integers(-24, 24, (3, 2))
    ours = mt.unravel_index(mt.tensor(idx), (2, 3, 4))
    theirs = torch.unravel_index(torch.tensor(idx), (2, 3, 4))
    for o, t in zip(ours, theirs, strict=True):
        assert o.dtype == np.int64
        np.testing.assert_array_equal(o.numpy(), t.numpy())
    assert [t.item() for t in mt.unravel_index(mt.tensor(5), (2, 4))] == [1, 1]  # 5 = 1*4 + 1


@settings(max_examples=40, deadline=None)
@given(pair=broadcastable_pair())
def test_property_broadcast_shapes_is_numpys(pair):
    a, b = pair
    assert mt.broadcast_shapes(a, b) == np.broadcast_shapes(a, b)
    x, y = mt.broadcast_tensors(mt.zeros(*a), mt.ones(*b))
    assert tuple(x.shape) == tuple(y.shape) == np.broadcast_shapes(a, b)


@settings(max_examples=40, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, max_side=5), data=st.data())
def test_property_unravel_index_inverts_ravel_multi_index(shape, data):
    numel = int(np.prod(shape))
    flat = data.draw(hnp.arrays(np.int64, 5, elements=st.integers(0, numel - 1)))
    coords = [c.numpy() for c in mt.unravel_index(mt.tensor(flat), shape)]
    np.testing.assert_array_equal(np.ravel_multi_index(coords, shape), flat)


def test_edge_values():
    x = mt.tensor([[np.inf, np.nan], [-np.inf, 1.0]], dtype="float64")
    np.testing.assert_array_equal(mt.ravel(x).numpy(), [np.inf, np.nan, -np.inf, 1.0])
    s = x.sum_to_size(1, 2).numpy()  # inf + -inf = nan, nan + 1 = nan
    assert np.isnan(s).all()
    assert mt.ravel(mt.tensor(3.0, dtype="float16")).shape == (1,)
    assert mt.unravel_index(mt.tensor([-1]), (2, 3))[1].item() == 2  # -1 is the last element: (1, 2)


def test_bad_input_names_what_came():
    with pytest.raises(RuntimeError, match=r"shapes \(2,\) and \(3,\) do not broadcast"):
        mt.broadcast_shapes((2,), (3,))
    with pytest.raises(RuntimeError, match=r"size \[2, 2\] is not expandable to size \[2, 3\]"):
        mt.ones(2, 3).sum_to_size(2, 2)
    with pytest.raises(TypeError, match=r"expected 'indices' to be integer dtype, but got float32"):
        mt.unravel_index(mt.tensor([1.0]), (2, 2))
    with pytest.raises(IndexError, match=r"indices must be in \[-4, 4\) for shape \(2, 2\), got values from 0 to 9"):
        mt.unravel_index(mt.tensor([0, 9]), (2, 2))
    with pytest.raises(TypeError, match=r"broadcast_tensors\(\): argument 1 must be a Tensor, not list"):
        mt.broadcast_tensors(mt.ones(2), [1.0])
    with pytest.raises(RuntimeError, match="negative dimension"):
        mt.broadcast_shapes((2, -1))

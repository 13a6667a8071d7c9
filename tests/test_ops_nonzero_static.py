"""nonzero_static (ops/nonzero_static.py): PyTorch in float64/float32/int/bool, a Hypothesis property against
NumPy, bad input, edge values. Integer output: no gradient to check."""

import numpy as np
import pytest
from helpers import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch_ln as mt


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.bool_])
@pytest.mark.parametrize("size", [0, 2, 7])
def test_matches_torch(dtype, size, rng):
    a = (rng.standard_normal((3, 4)) > 0.3).astype(dtype) * (1 if dtype == np.bool_ else 3)
    for arr in (a, a[0], np.asarray(a[0, 0])):
        ours = mt.nonzero_static(mt.tensor(arr), size=size, fill_value=-5)
        theirs = torch.nonzero_static(torch.tensor(arr), size=size, fill_value=-5)
        assert ours.dtype == np.int64
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_edge_values():
    x = mt.tensor([0.0, np.nan, -np.inf, 0.0, 1e-300], dtype="float64")  # NaN, inf and a tiny value are non-zero
    assert mt.nonzero_static(x, size=4).tolist() == [[1], [2], [4], [-1]]


@settings(max_examples=40, deadline=None)
@given(a=hnp.arrays(np.int8, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), elements=st.integers(-1, 1)),
       size=st.integers(0, 10))
def test_property_is_nonzero_truncated_or_padded(a, size):
    want = np.argwhere(a)[:size]
    got = mt.nonzero_static(mt.tensor(a), size=size).numpy()
    np.testing.assert_array_equal(got[: len(want)], want)
    assert (got[len(want):] == -1).all() and got.shape == (size, a.ndim)


def test_bad_input_names_what_came():
    with pytest.raises(ValueError, match="'size' must be an non-negative integer, got -1"):
        mt.nonzero_static(mt.ones(2), size=-1)
    with pytest.raises(TypeError, match="size must be an int, got 2.0"):
        mt.nonzero_static(mt.ones(2), size=2.0)
    with pytest.raises(TypeError, match="argument 'input' must be a Tensor, not list"):
        mt.nonzero_static([1], size=1)

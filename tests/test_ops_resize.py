"""Tensor.resize_ / resize_as_ and Tensor.H / mH (ops/resize.py): PyTorch in float64/float32, gradients of H/mH
(gradcheck, non-contiguous too), a Hypothesis property, bad input, edge values."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_torch(dtype, rng):
    a = rng.standard_normal((3, 4)).astype(dtype)
    compare_with_torch(lambda t: t.H, lambda t: t.H, [a])
    compare_with_torch(lambda t: t.mH, lambda t: t.mH, [rng.standard_normal((2, 3, 4)).astype(dtype)])
    ours, theirs = mt.tensor(a).resize_(2, 5), torch.tensor(a).resize_(2, 5)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    ours = mt.resize_as_(mt.tensor(a), mt.ones(6))
    np.testing.assert_array_equal(ours.numpy(), torch.resize_as_(torch.tensor(a), torch.ones(6)).numpy())


def test_gradcheck_adjoint_views(rng):
    gradcheck_noncontiguous(lambda t: t.H, [rng.standard_normal((3, 2))])
    gradcheck_noncontiguous(lambda t: t.mH, [rng.standard_normal((2, 3, 2))], gg=True)


def test_resize_is_in_place_and_bumps_the_version():
    x = mt.tensor([[1.0, np.inf], [np.nan, 4.0]], dtype="float16")
    v = x._version[0]
    assert x.resize_(3) is x and x.shape == (3,) and x._version[0] == v + 1
    assert x.numpy()[1] == np.inf and np.isnan(x.numpy()[2]) and x.dtype == np.float16
    assert x.resize_(0).shape == (0,)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 24), data=st.data())
def test_property_resize_keeps_the_row_major_prefix(n, data):
    k = data.draw(st.integers(0, n))
    x = mt.arange(n, dtype="float64")
    np.testing.assert_array_equal(x.resize_(k, 1).numpy().ravel(), np.arange(k))


def test_bad_input_names_what_came():
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        mt.ones(2, requires_grad=True).resize_(1)
    with pytest.raises(RuntimeError, match="growing a tensor of 2 elements to 3 is not supported"):
        mt.ones(2).resize_(3)
    with pytest.raises(RuntimeError, match="cannot resize a view"):
        mt.ones(2, 2)[0].resize_(1)
    with pytest.raises(RuntimeError, match=r"tensor.H is only supported on matrices \(2-D tensors\). Got 3-D"):
        mt.ones(2, 2, 2).H  # noqa: B018 - the property raises
    with pytest.raises(RuntimeError, match="tensor.mH is only supported on matrices or batches of matrices"):
        mt.ones(2).mH  # noqa: B018

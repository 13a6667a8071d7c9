"""The padding modules and Softmax2d: each against PyTorch's module (float64 and float32, random
upstream gradient), gradcheck at a non-contiguous input, Hypothesis over pads, bad input."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt

RNG = np.random.default_rng(5)
MODES = ["ReflectionPad", "ReplicationPad", "CircularPad", "ZeroPad", "ConstantPad"]


def _pair(name, n, padding):
    args = (padding, 2.5) if name == "ConstantPad" else (padding,)
    return getattr(mt.nn, f"{name}{n}d")(*args), getattr(torch.nn, f"{name}{n}d")(*args)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("name", MODES)
def test_padding_modules_match_torch(name, n, dtype):
    padding = (2, 1, 0, 2, 1, 1)[:2 * n]
    ours, theirs = _pair(name, n, padding)
    for shape in ((2, 3) + (3,) * n, (3,) + (4,) * n):  # batched and unbatched
        compare_with_torch(ours, theirs, [RNG.standard_normal(shape).astype(dtype)])
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("name", MODES)
def test_padding_modules_gradcheck_noncontiguous(name):
    ours, _ = _pair(name, 2, (1, 2, 2, 0))
    gradcheck_noncontiguous(ours, [RNG.standard_normal((2, 3, 4))], gg=True)


def test_constant_and_zero_pad_crop_with_negative_pads_and_keep_inf_nan():
    x = np.array([[1.0, np.nan, np.inf, -np.inf]])
    # hand-worked: crop one on the left, add two 7s on the right
    np.testing.assert_array_equal(mt.nn.ConstantPad1d((-1, 2), 7.0)(mt.tensor(x)).numpy(),
                                  [[np.nan, np.inf, -np.inf, 7.0, 7.0]])
    np.testing.assert_array_equal(mt.nn.ZeroPad1d((1, -3))(mt.tensor(x)).numpy(), [[0.0, 1.0]])
    y = mt.nn.ReflectionPad1d(1)(mt.tensor(x.astype(np.float16)))
    assert y.dtype == mt.float16 and np.isnan(y.numpy()[0, 0])  # reflects x[1] = NaN to the front


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(MODES), st.integers(1, 3), st.lists(st.integers(0, 3), min_size=6, max_size=6),
       st.integers(0, 2**31 - 1))
def test_padding_modules_property_match_torch(name, n, pads, seed):
    x = np.random.default_rng(seed).standard_normal((2,) + (4,) * n)
    ours, theirs = _pair(name, n, tuple(pads[:2 * n]))
    np.testing.assert_array_equal(ours(mt.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy())


def test_softmax2d_matches_torch_and_refuses_other_ranks():
    for shape in ((2, 3, 4, 5), (3, 4, 5)):
        compare_with_torch(mt.nn.Softmax2d(), torch.nn.Softmax2d(), [RNG.standard_normal(shape)])
    gradcheck_noncontiguous(mt.nn.Softmax2d(), [RNG.standard_normal((3, 2, 2))])
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
        mt.nn.Softmax2d()(mt.zeros(3, 4))


def test_padding_modules_bad_input():
    with pytest.raises(ValueError, match="CircularPad2d: expected 3D or 4D input \\(got 1D input\\)"):
        mt.nn.CircularPad2d(1)(mt.zeros(3))
    with pytest.raises(ValueError, match="padding must be an int or a tuple of 4 ints"):
        mt.nn.ReflectionPad2d((1, 2, 3))
    with pytest.raises(RuntimeError, match="padding size should be less than the corresponding input dimension"):
        mt.nn.ReflectionPad1d(3)(mt.zeros(1, 2, 3))
    with pytest.raises(RuntimeError, match="Padding length should be less than or equal to two times"):
        mt.nn.ZeroPad2d(1)(mt.zeros(3))

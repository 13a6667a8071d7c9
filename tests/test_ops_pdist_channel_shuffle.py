"""pdist, channel_shuffle (+ nn.ChannelShuffle), upsample_nearest/upsample_bilinear: PyTorch comparison
(float64/float32, random upstream gradient), gradcheck at non-contiguous inputs, hand-worked values,
zero distances, Hypothesis, bad input."""

import warnings

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt

F = torch.nn.functional
RNG = np.random.default_rng(31)
PS = [2.0, 1.0, 0.0, np.inf, 0.5, 3.0, 1.5]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("p", PS)
def test_pdist_matches_torch_with_ties_and_equal_rows(p, dtype):
    x = RNG.standard_normal((5, 3)).astype(dtype)
    x[3] = x[1]  # a zero distance: gradient 0 there (ATen's rule)
    x[4, 0] = x[4, 1] + (x[0, 0] - x[0, 1])  # not a tie in general; plus an exact tie for inf below
    x[2] = x[0] + np.array([1.0, -1.0, 0.5], dtype=dtype)  # |diff| ties at 1 for p = inf
    compare_with_torch(lambda a: mt.nn.functional.pdist(a, p), lambda a: F.pdist(a, p), [x])


def test_pdist_hand_worked_and_gradcheck():
    # rows [0, 0], [3, 4], [0, 1]: distances (0,1) = 5, (0,2) = 1, (1,2) = sqrt(9 + 9) = 4.2426...
    y = mt.nn.functional.pdist(mt.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
    np.testing.assert_allclose(y.numpy(), [5.0, 1.0, np.sqrt(18.0)])
    assert mt.nn.functional.pdist(mt.zeros(1, 3)).shape == (0,)
    for p in (2.0, 1.0, np.inf, 3.0):
        gradcheck_noncontiguous(lambda a, p=p: mt.nn.functional.pdist(a, p), [RNG.standard_normal((4, 3))],
                                gg=p in (2.0, 3.0))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape, groups", [((2, 6, 3), 3), ((1, 4, 2, 2), 2), ((2, 6, 1, 2, 2), 6), ((3, 5, 2), 1)])
def test_channel_shuffle_matches_torch(shape, groups, dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    compare_with_torch(lambda a: mt.nn.functional.channel_shuffle(a, groups), lambda a: F.channel_shuffle(a, groups), [x])
    compare_with_torch(mt.nn.ChannelShuffle(groups), torch.nn.ChannelShuffle(groups), [x])
    gradcheck_noncontiguous(lambda a: mt.nn.functional.channel_shuffle(a, groups), [x.astype(np.float64)])


def test_channel_shuffle_hand_worked_and_int():
    # 6 channels in 2 groups [0 1 2 | 3 4 5] -> [0 3 1 4 2 5]
    x = mt.arange(6).reshape(1, 6, 1)
    assert mt.nn.functional.channel_shuffle(x, 2).reshape(-1).tolist() == [0, 3, 1, 4, 2, 5]
    assert repr(mt.nn.ChannelShuffle(2)) == "ChannelShuffle(groups=2)"


def test_upsample_wrappers_match_torch():
    x = RNG.standard_normal((1, 2, 3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare_with_torch(lambda a: mt.nn.functional.upsample_nearest(a, scale_factor=2),
                           lambda a: F.upsample_nearest(a, scale_factor=2), [x])
        compare_with_torch(lambda a: mt.nn.functional.upsample_bilinear(a, size=(5, 7)),
                           lambda a: F.upsample_bilinear(a, size=(5, 7)), [x])
    with pytest.warns(UserWarning, match="upsample_nearest` is deprecated"):
        mt.nn.functional.upsample_nearest(mt.tensor(x), size=3)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 5), st.integers(1, 4), st.sampled_from(PS), st.integers(0, 2**31 - 1))
def test_pdist_property_matches_torch(n, m, p, seed):
    x = np.random.default_rng(seed).standard_normal((n, m))
    np.testing.assert_allclose(mt.nn.functional.pdist(mt.tensor(x), p).numpy(), F.pdist(torch.tensor(x), p).numpy(),
                               rtol=1e-12, atol=1e-12)


def test_bad_input():
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 1D"):
        mt.nn.functional.pdist(mt.zeros(4))
    with pytest.raises(RuntimeError, match="pdist only supports non-negative p values"):
        mt.nn.functional.pdist(mt.zeros(4, 3), -1)
    with pytest.raises(RuntimeError, match="Number of channels must be divisible by groups. Got 5 channels and 2"):
        mt.nn.functional.channel_shuffle(mt.zeros(2, 5, 3), 2)
    with pytest.raises(RuntimeError, match="Number of groups to divide channels in must be positive"):
        mt.nn.functional.channel_shuffle(mt.zeros(2, 4, 3), 0)
    with pytest.raises(RuntimeError, match="channel_shuffle expects input with > 2 dims"):
        mt.nn.functional.channel_shuffle(mt.zeros(4, 3), 1)

"""max_unpool1d/2d/3d and MaxUnpool1d/2d/3d: round trips with max_pool, PyTorch comparison (float64/float32,
random upstream gradients, output_size, unbatched), gradcheck at non-contiguous inputs, repeated
indices (last write wins, gradient gathered), Hypothesis, bad input."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt

F = torch.nn.functional
RNG = np.random.default_rng(37)


def _pooled(nd, shape, k, s):
    x = torch.tensor(RNG.standard_normal(shape))
    y, idx = getattr(F, f"max_pool{nd}d")(x, k, s, return_indices=True)
    return y.numpy(), idx.numpy()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("nd, shape, k, s, out", [(1, (2, 3, 9), 3, 2, None), (2, (2, 3, 6, 5), 2, 2, (7, 5)),
                                                  (3, (1, 2, 4, 4, 4), 2, 2, None), (2, (3, 5, 5), 3, 1, None)])
def test_max_unpool_matches_torch(nd, shape, k, s, out, dtype):
    y, idx = _pooled(nd, shape, k, s)
    name = f"max_unpool{nd}d"
    compare_with_torch(lambda a, i: getattr(mt.nn.functional, name)(a, i, k, s, output_size=out),
                       lambda a, i: getattr(F, name)(a, i, k, s, output_size=out), [y.astype(dtype), idx])
    ours, theirs = getattr(mt.nn, f"MaxUnpool{nd}d")(k, s), getattr(torch.nn, f"MaxUnpool{nd}d")(k, s)
    compare_with_torch(lambda a, i: ours(a, i, out), lambda a, i: theirs(a, i, out), [y.astype(dtype), idx])
    assert repr(ours) == repr(theirs)


def test_round_trip_hand_worked_and_repeated_indices():
    # max_pool1d of [1, 5, 2, 7] with k = 2: values [5, 7] at [1, 3]; unpool puts them back: [0, 5, 0, 7]
    y = mt.nn.functional.max_unpool1d(mt.tensor([[[5.0, 7.0]]]), mt.tensor([[[1, 3]]]), 2)
    assert y.numpy().tolist() == [[[0.0, 5.0, 0.0, 7.0]]]
    # overlapping windows pick index 1 twice: the last write wins, each input's gradient reads dy there
    x = mt.tensor([[[2.0, 3.0]]], requires_grad=True)
    out = mt.nn.functional.max_unpool1d(x, mt.tensor([[[1, 1]]]), 2, 1)
    assert out.detach().numpy().tolist() == [[[0.0, 3.0, 0.0]]]
    out.backward(mt.tensor([[[10.0, 20.0, 30.0]]]))
    assert x.grad.numpy().tolist() == [[[20.0, 20.0]]]


def test_gradcheck_noncontiguous():
    y, idx = _pooled(2, (1, 2, 4, 4), 2, 2)
    gradcheck_noncontiguous(lambda a, i: mt.nn.functional.max_unpool2d(a, i, 2), [y, idx], gg=True)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(0, 4), st.integers(0, 2**31 - 1))
def test_round_trip_property(k, s, extra, seed):
    n = k + extra
    x = np.random.default_rng(seed).permutation(2 * n).reshape(1, 2, n).astype(np.float64)
    y, idx = F.max_pool1d(torch.tensor(x), k, s, return_indices=True)
    ours = mt.nn.functional.max_unpool1d(mt.tensor(y.numpy()), mt.tensor(idx.numpy()), k, s, output_size=(n,))
    np.testing.assert_array_equal(ours.numpy(), F.max_unpool1d(y, idx, k, s, output_size=(n,)).numpy())
    # every kept maximum is back where it came from
    kept = ours.numpy() != 0
    np.testing.assert_array_equal(ours.numpy()[kept], x[kept])


def test_bad_input():
    x, i = mt.zeros(1, 1, 2), mt.tensor([[[0, 1]]])
    with pytest.raises(RuntimeError, match="elements in indices should be type int64"):
        mt.nn.functional.max_unpool1d(x, i.int(), 2)
    with pytest.raises(RuntimeError, match="Expected shape of indices to be same as that of the input"):
        mt.nn.functional.max_unpool1d(x, mt.tensor([[[0]]]), 2)
    with pytest.raises(RuntimeError, match="Found an invalid max index: 9"):
        mt.nn.functional.max_unpool1d(x, mt.tensor([[[0, 9]]]), 2)
    with pytest.raises(ValueError, match="output_size should be a sequence containing 2 or 4 elements"):
        mt.nn.functional.max_unpool2d(mt.zeros(1, 1, 2, 2), mt.zeros(1, 1, 2, 2, dtype=mt.int64), 2, output_size=(3,))
    with pytest.raises(ValueError, match="invalid output_size"):
        mt.nn.functional.max_unpool1d(x, i, 2, output_size=(9,))
    with pytest.raises(RuntimeError, match="should be a 3d or 4d Tensor"):
        mt.nn.functional.max_unpool2d(mt.zeros(2, 2), mt.zeros(2, 2, dtype=mt.int64), 2)

"""index_reduce (prod/mean/amax/amin, include_self) and put (ops/index_reduce.py), with their in-place methods:
gradcheck (non-contiguous too), PyTorch in float64/float32 with random upstream gradients, Hypothesis against a
loop, bad input, edge values."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt

IDX = np.array([2, 0, 2, 1])  # target slice 2 gets two sources; every target is hit


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_index_reduce_matches_torch(reduce, include_self, dtype, rng):
    x, src = rng.standard_normal((3, 5)).astype(dtype), rng.standard_normal((4, 5)).astype(dtype)
    compare_with_torch(lambda x, s, i: mt.index_reduce(x, 0, i, s, reduce, include_self=include_self),
                       lambda x, s, i: torch.index_reduce(x, 0, i, s, reduce, include_self=include_self),
                       [x, src, IDX], requires_grad=[True, True, False])


@pytest.mark.parametrize("reduce", ["prod", "mean"])
def test_index_reduce_gradcheck(reduce, rng):
    idx = mt.tensor(IDX)
    gradcheck_noncontiguous(lambda x, s: mt.index_reduce(x, 1, idx, s, reduce),
                            [rng.standard_normal((2, 3)), rng.standard_normal((2, 4))])


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_put_matches_torch(accumulate, dtype, rng):
    x, src = rng.standard_normal((2, 3)).astype(dtype), rng.standard_normal((2, 2)).astype(dtype)
    idx = np.array([[0, -1], [4, 2]]) if not accumulate else np.array([[0, 5], [5, 2]])
    compare_with_torch(lambda x, i, s: mt.put(x, i, s, accumulate), lambda x, i, s: torch.put(x, i, s, accumulate),
                       [x, idx, src], requires_grad=[True, False, True])
    gradcheck_noncontiguous(lambda x, s: mt.put(x, mt.tensor(idx), s, accumulate), [x.astype(np.float64),
                                                                                   src.astype(np.float64)])


def test_in_place_methods_and_edges():
    x = mt.ones(3, 2)
    same = x.index_reduce_(0, mt.tensor([1, 1]), mt.tensor([[2.0, 3.0], [4.0, 5.0]]), "prod")
    assert same is x and x.tolist() == [[1.0, 1.0], [8.0, 15.0], [1.0, 1.0]]  # 1·2·4, 1·3·5
    y = mt.zeros(4)
    y.put_(mt.tensor([3, 3]), mt.tensor([1.0, 2.0]), accumulate=True)
    assert y.tolist() == [0.0, 0.0, 0.0, 3.0]
    # amax over an infinite and a NaN source: NaN propagates, as in PyTorch's scatter_reduce
    z = mt.index_reduce(mt.zeros(2), 0, mt.tensor([0, 1]), mt.tensor([np.inf, np.nan]), "amax")
    assert z.numpy()[0] == np.inf and np.isnan(z.numpy()[1])
    # mean without self over a slot nobody writes keeps the input
    m = mt.index_reduce(mt.tensor([5.0, 7.0]), 0, mt.tensor([0, 0]), mt.tensor([1.0, 3.0]), "mean", include_self=False)
    assert m.tolist() == [2.0, 7.0]


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 4), k=st.integers(1, 5), seed=st.integers(0, 10**6), reduce=st.sampled_from(["amax", "amin"]))
def test_property_index_reduce_is_the_loop(n, k, seed, reduce):
    r = np.random.default_rng(seed)
    x, src, idx = r.standard_normal((n, 2)), r.standard_normal((k, 2)), r.integers(0, n, k)
    want = x.copy()
    for i, t in enumerate(idx):
        want[t] = (np.maximum if reduce == "amax" else np.minimum)(want[t], src[i])
    got = mt.index_reduce(mt.tensor(x), 0, mt.tensor(idx), mt.tensor(src), reduce).numpy()
    np.testing.assert_array_equal(got, want)


def test_bad_input_names_what_came():
    with pytest.raises(ValueError, match="reduce argument must be either prod, mean, amax or amin, got 'sum'"):
        mt.index_reduce(mt.ones(2), 0, mt.tensor([0]), mt.ones(1), "sum")
    with pytest.raises(RuntimeError, match=r"index has 2 entries, source has 1 slices along dim 0"):
        mt.index_reduce(mt.ones(2), 0, mt.tensor([0, 1]), mt.ones(1), "prod")
    with pytest.raises(RuntimeError, match="expected source and index to have the same number of elements"):
        mt.put(mt.ones(3), mt.tensor([0, 1]), mt.ones(3))
    with pytest.raises(IndexError, match="index out of range for a tensor of 3 elements"):
        mt.put(mt.ones(3), mt.tensor([3]), mt.ones(1))
    with pytest.raises(TypeError, match="index must be an integer tensor, got float32"):
        mt.put(mt.ones(3), mt.tensor([0.0]), mt.ones(1))

"""torch.masked (minitorch_ln/masked.py): every op against PyTorch in float64 and float32 with a broadcast mask
and a fully masked row, gradients under a random upstream gradient, float64 gradcheck (non-contiguous too), a
Hypothesis property against NumPy, bad input, edge values."""

import math

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln import masked

# name, kwargs (besides mask); the mask (4, 1, 5) broadcasts to the input (4, 3, 5); its row 1 is all False
CASES = [
    ("sum", {"dim": 2}), ("sum", {"dim": (0, 2), "keepdim": True}), ("prod", {"dim": 2}), ("cumsum", {"dim": 2}),
    ("cumprod", {"dim": 0}), ("amax", {"dim": 2}), ("amin", {"dim": (1, 2)}), ("argmax", {"dim": 2}),
    ("argmin", {"dim": 0, "keepdim": True}), ("mean", {"dim": 2}), ("median", {"dim": 2}), ("norm", {"ord": 3.0, "dim": 2}),
    ("norm", {"ord": -math.inf, "dim": 2}), ("var", {"dim": 2}), ("std", {"dim": 2, "correction": 0}),
    ("softmax", {"dim": 2}), ("log_softmax", {"dim": 2}), ("softmin", {"dim": 2}), ("normalize", {"ord": 2.0, "dim": 2}),
    ("logsumexp", {"dim": 2}),
]


def _mask():
    m = np.random.default_rng(7).random((4, 1, 5)) > 0.4
    m[1] = False  # a fully masked row
    return m


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_torch_with_a_broadcast_mask(name, kw, dtype, rng):
    x = rng.standard_normal((4, 3, 5)).astype(dtype)
    grad = name not in ("argmax", "argmin", "amax", "amin", "median")  # ties at the identity: compared forward only
    compare_with_torch(lambda x, m: getattr(masked, name)(x, mask=m, **kw),
                       lambda x, m: getattr(torch.masked, name)(x, mask=m, **kw), [x, _mask()],
                       requires_grad=[grad, False], rtol=1e-4 if dtype == np.float32 else None)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_logaddexp_and_no_mask_match_torch(dtype, rng):
    a, b = rng.standard_normal((3, 4)).astype(dtype), rng.standard_normal((3, 4)).astype(dtype)
    ma, mb = rng.random((3, 4)) > 0.5, rng.random((4,)) > 0.5
    compare_with_torch(lambda a, b, ma, mb: masked.logaddexp(a, b, input_mask=ma, other_mask=mb),
                       lambda a, b, ma, mb: torch.masked.logaddexp(a, b, input_mask=ma, other_mask=mb),
                       [a, b, ma, mb], requires_grad=[True, True, False, False])
    compare_with_torch(lambda a: masked.var(a, 1), lambda a: torch.masked.var(a, 1), [a])


@pytest.mark.parametrize("name,kw", [("sum", {"dim": 1}), ("mean", {"dim": 0}), ("softmax", {"dim": 1}),
                                     ("std", {"dim": 1}), ("normalize", {"ord": 2.0, "dim": 1}), ("prod", {})])
def test_gradcheck_kept_elements(name, kw, rng):
    x = rng.standard_normal((3, 4)) + 0.1
    m = mt.tensor(np.array([[True, False, True, True], [True, True, True, True], [False, True, True, False]]))
    gradcheck_noncontiguous(lambda t: getattr(masked, name)(t, mask=m, **kw), [x], gg=name == "softmax")


def test_fully_masked_rows_give_the_identities():
    x = mt.tensor([[1.0, 2.0], [3.0, 4.0]])
    m = mt.tensor([[False, False], [True, False]])
    assert masked.sum(x, 1, mask=m).tolist() == [0.0, 3.0]
    assert masked.prod(x, 1, mask=m).tolist() == [1.0, 3.0]
    assert masked.amax(x, 1, mask=m).tolist() == [-math.inf, 3.0]
    assert masked.amin(x, 1, mask=m).tolist() == [math.inf, 3.0]
    mean = masked.mean(x, 1, mask=m).numpy()
    assert np.isnan(mean[0]) and mean[1] == 3.0  # 0 / 0
    assert np.isnan(masked.softmax(x, 1, mask=m).numpy()[0]).all()
    assert masked.softmax(x, 1, mask=m).numpy()[1].tolist() == [1.0, 0.0]
    assert masked.sum(mt.tensor([1, 2], dtype="int8"), mask=mt.tensor([True, True])).dtype == np.int64
    with pytest.raises(ValueError, match="masked median expects no fully masked out rows"):
        masked.median(mt.tensor([[1, 2]]), 1, mask=mt.tensor([[False, False]]))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), shape=st.sampled_from([(3,), (2, 4), (3, 2, 2)]))
def test_property_masked_sum_and_mean_are_over_the_kept_elements(seed, shape):
    r = np.random.default_rng(seed)
    x, m = r.standard_normal(shape), r.random(shape) > 0.5
    np.testing.assert_allclose(masked.sum(mt.tensor(x), mask=mt.tensor(m)).item(), x[m].sum(), atol=1e-12)
    got = masked.mean(mt.tensor(x), mask=mt.tensor(m)).item()
    assert (math.isnan(got) and not m.any()) or got == pytest.approx(x[m].mean(), abs=1e-12)


def test_bad_input_names_what_came():
    with pytest.raises(IndexError, match="mask dimensionality higher than of the input"):
        masked.sum(mt.ones(3), mask=mt.ones(2, 3, dtype="bool"))
    with pytest.raises(TypeError, match="Could not infer output dtype. Input dtype must be either a floating point"):
        masked.mean(mt.tensor([1, 2]))
    with pytest.raises(TypeError, match="argument 'input' must be a Tensor, not list"):
        masked.amax([1.0])
    with pytest.raises(ValueError, match="only one of unbiased and correction"):
        masked.var(mt.ones(3), unbiased=True, correction=1)
    with pytest.raises(RuntimeError):
        masked.sum(mt.ones(2, 3), mask=mt.ones(2, dtype="bool"))  # (2,) does not broadcast to (2, 3)

"""fractional_max_pool2d/3d and FractionalMaxPool2d/3d: with PyTorch's own samples the same windows,
values, indices and gradients (float64/float32); the interval formula by hand; gradcheck at a
non-contiguous input; Hypothesis over sizes; bad input."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.ops.pooling_fractional import _intervals

F = torch.nn.functional
RNG = np.random.default_rng(53)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("nd, shape, k, kw", [(2, (2, 3, 9, 11), (2, 3), {"output_size": (4, 5)}),
                                              (2, (3, 7, 7), 2, {"output_ratio": (0.5, 0.5)}),
                                              (3, (2, 2, 7, 9, 8), (2, 3, 2), {"output_ratio": (0.5, 0.6, 0.7)}),
                                              (3, (2, 5, 5, 6), 2, {"output_size": 3})])
def test_matches_torch_given_the_samples(nd, shape, k, kw, dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    n = 1 if len(shape) == nd + 1 else shape[0]
    s = RNG.random((n, shape[-nd - 1], nd)).astype(dtype)
    name = f"fractional_max_pool{nd}d"
    compare_with_torch(lambda a, u: getattr(mt.nn.functional, name)(a, k, **kw, return_indices=True, _random_samples=u),
                       lambda a, u: getattr(F, name)(a, k, **kw, return_indices=True, _random_samples=u), [x, s],
                       requires_grad=[True, False])
    ours = getattr(mt.nn, f"FractionalMaxPool{nd}d")(k, **kw, _random_samples=mt.tensor(s))
    theirs = getattr(torch.nn, f"FractionalMaxPool{nd}d")(k, **kw, _random_samples=torch.tensor(s))
    compare_with_torch(ours, theirs, [x])


def test_intervals_by_hand_and_random_draws_have_the_right_shape():
    # I = 10, k = 2, O = 5, u = 0.5: α = 8/4 = 2; starts ⌊(o + .5)·2⌋ - ⌊1⌋ = 0, 2, 4, 6 and the last I - k = 8
    assert _intervals(np.array(0.5), 10, 5, 2, np.dtype(np.float64)).tolist() == [0, 2, 4, 6, 8]
    y, i = mt.nn.functional.fractional_max_pool2d(mt.randn(2, 3, 8, 8), 2, output_size=5, return_indices=True)
    assert tuple(y.shape) == tuple(i.shape) == (2, 3, 5, 5) and i.dtype == mt.int64


def test_gradcheck_noncontiguous():
    x = RNG.permutation(2 * 36).reshape(1, 2, 6, 6) / 5.0  # distinct: no ties
    s = RNG.random((1, 2, 2))
    gradcheck_noncontiguous(lambda a, u: mt.nn.functional.fractional_max_pool2d(a, 2, output_size=3, _random_samples=u),
                            [x, s], gg=True)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.integers(1, 4), st.integers(0, 3), st.integers(0, 2**31 - 1))
def test_property_matches_torch(k, o, extra, seed):
    rng = np.random.default_rng(seed)
    n = o + k - 1 + extra
    x, s = rng.standard_normal((1, 2, n, n)), rng.random((1, 2, 2))
    ours = mt.nn.functional.fractional_max_pool2d(mt.tensor(x), k, output_size=o, _random_samples=mt.tensor(s))
    theirs = F.fractional_max_pool2d(torch.tensor(x), k, output_size=o, _random_samples=torch.tensor(s))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_bad_input():
    x = mt.zeros(1, 2, 5, 5)
    with pytest.raises(ValueError, match="requires specifying either an output_size or an output_ratio"):
        mt.nn.functional.fractional_max_pool2d(x, 2)
    with pytest.raises(RuntimeError, match="too large relative to input size 5 and output size 5"):
        mt.nn.functional.fractional_max_pool2d(x, 2, output_size=5)
    with pytest.raises(RuntimeError, match="expected _random_samples of shape"):
        mt.nn.functional.fractional_max_pool2d(x, 2, output_size=3, _random_samples=mt.zeros(1, 3, 2))
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
        mt.nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(ValueError, match="only one of output_size and output_ratio may be specified"):
        mt.nn.FractionalMaxPool3d(2, output_size=2, output_ratio=0.5)
    with pytest.raises(TypeError):
        mt.nn.functional.fractional_max_pool2d(mt.zeros(1, 2, 5, 5, dtype=mt.int64), 2, output_size=3)

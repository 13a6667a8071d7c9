"""bilinear / nn.Bilinear and lp_pool1d/2d/3d / nn.LPPool*: PyTorch comparison (float64/float32, random
upstream gradients), gradcheck at non-contiguous inputs, hand-worked values, Hypothesis, bad input."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt

F = torch.nn.functional
RNG = np.random.default_rng(17)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("lead", [(5,), (2, 3), ()])
def test_bilinear_matches_torch(lead, dtype):
    x1, x2 = RNG.standard_normal(lead + (4,)).astype(dtype), RNG.standard_normal(lead + (3,)).astype(dtype)
    w, b = RNG.standard_normal((2, 4, 3)).astype(dtype), RNG.standard_normal(2).astype(dtype)
    compare_with_torch(mt.nn.functional.bilinear, F.bilinear, [x1, x2, w, b])
    compare_with_torch(mt.nn.functional.bilinear, F.bilinear, [x1, x2, w])


def test_bilinear_module_matches_torch_and_hand_worked_value():
    torch.manual_seed(0)
    theirs = torch.nn.Bilinear(3, 2, 4).double()
    ours = mt.nn.Bilinear(3, 2, 4).double()
    ours.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    compare_with_torch(ours, theirs, [RNG.standard_normal((5, 3)), RNG.standard_normal((5, 2))])
    assert repr(ours) == repr(theirs)
    # hand-worked: x1 = [1, 2], x2 = [3], W[0] = [[1], [10]], b = [0.5]: 1·1·3 + 2·10·3 + 0.5 = 63.5
    y = mt.nn.functional.bilinear(mt.tensor([[1.0, 2.0]]), mt.tensor([[3.0]]), mt.tensor([[[1.0], [10.0]]]),
                                  mt.tensor([0.5]))
    assert y.numpy().tolist() == [[63.5]]


def test_bilinear_gradcheck_noncontiguous():
    arrays = [RNG.standard_normal((3, 4)), RNG.standard_normal((3, 2)), RNG.standard_normal((2, 4, 2)),
              RNG.standard_normal(2)]
    gradcheck_noncontiguous(mt.nn.functional.bilinear, arrays, gg=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("nd, p, kw", [(1, 2.0, {"kernel_size": 3, "stride": 2}), (2, 3.0, {"kernel_size": (2, 3)}),
                                       (3, 1.5, {"kernel_size": 2, "ceil_mode": True}),
                                       (2, np.inf, {"kernel_size": 2}), (1, -np.inf, {"kernel_size": 2})])
def test_lp_pool_matches_torch(nd, p, kw, dtype):
    x = (RNG.random((2, 3) + (5,) * nd) + 0.1).astype(dtype)  # positive: x^p is real for fractional p
    fn = f"lp_pool{nd}d"
    compare_with_torch(lambda a: getattr(mt.nn.functional, fn)(a, p, **kw), lambda a: getattr(F, fn)(a, p, **kw), [x])
    m = getattr(mt.nn, f"LPPool{nd}d")(p, **kw)
    compare_with_torch(m, getattr(torch.nn, f"LPPool{nd}d")(p, **kw), [x[0]])  # unbatched


def test_lp_pool_hand_worked_and_gradcheck():
    # p = 2, window [3, 4]: sqrt(9 + 16) = 5
    assert mt.nn.functional.lp_pool1d(mt.tensor([[[3.0, 4.0]]]), 2, 2).item() == pytest.approx(5.0)
    x = RNG.random((1, 2, 4, 4)) + 0.5
    gradcheck_noncontiguous(lambda a: mt.nn.functional.lp_pool2d(a, 3.0, 2), [x], gg=True)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.sampled_from([1.0, 2.0, 3.0]), st.booleans(),
       st.integers(0, 2**31 - 1))
def test_lp_pool_property_matches_torch(k, s, p, ceil_mode, seed):
    x = np.random.default_rng(seed).standard_normal((1, 2, 6))
    ours = mt.nn.functional.lp_pool1d(mt.tensor(x), p, k, s, ceil_mode).numpy()
    np.testing.assert_allclose(ours, F.lp_pool1d(torch.tensor(x), p, k, s, ceil_mode).numpy(), rtol=1e-10, atol=1e-10)


def test_bad_input():
    with pytest.raises(RuntimeError, match="input dimensions do not match: got 2 and 1"):
        mt.nn.functional.bilinear(mt.zeros(2, 3), mt.zeros(2), mt.zeros(1, 3, 2))
    with pytest.raises(RuntimeError, match="input1 size does not match weight size: got 3 but expected 4"):
        mt.nn.functional.bilinear(mt.zeros(2, 3), mt.zeros(2, 2), mt.zeros(1, 4, 2))
    with pytest.raises(RuntimeError, match="input batch dimensions do not match"):
        mt.nn.functional.bilinear(mt.zeros(2, 3), mt.zeros(3, 2), mt.zeros(1, 3, 2))
    with pytest.raises(RuntimeError, match="bias size does not match weight size"):
        mt.nn.functional.bilinear(mt.zeros(2, 3), mt.zeros(2, 2), mt.zeros(1, 3, 2), mt.zeros(2))
    with pytest.raises(ValueError, match="in1_features must be > 0"):
        mt.nn.Bilinear(0, 2, 3)
    with pytest.raises(ValueError, match="norm_type must be a non-zero number"):
        mt.nn.functional.lp_pool2d(mt.zeros(1, 2, 2), 0, 2)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        mt.nn.functional.lp_pool1d(mt.zeros(1, 1, 2), 2.0, 3)

"""linear_cross_entropy and nn.LinearCrossEntropyLoss: against PyTorch (float64/float32, random upstream
gradient; class indices, probabilities, K-dim outputs, weights, ignore_index, label smoothing), against
the explicit composition, gradcheck at non-contiguous inputs, Hypothesis, bad input."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt

F = torch.nn.functional
RNG = np.random.default_rng(41)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kw", [{}, {"reduction": "sum", "label_smoothing": 0.1}, {"reduction": "none",
                                                                                  "ignore_index": 1}])
def test_matches_torch(kw, dtype):
    x, w, b = (RNG.standard_normal(s).astype(dtype) for s in ((5, 4), (3, 4), (3,)))
    cw = RNG.random(3).astype(dtype)
    t = RNG.integers(0, 3, 5)
    compare_with_torch(lambda a, v, c, e, y: mt.nn.functional.linear_cross_entropy(a, v, y, linear_bias=c, weight=e, **kw),
                       lambda a, v, c, e, y: F.linear_cross_entropy(a, v, y, linear_bias=c, weight=e, **kw),
                       [x, w, b, cw, t], requires_grad=[True, True, True, False, False])


def test_k_dim_probabilities_and_unbatched_match_torch():
    x, w, b = RNG.standard_normal((4, 3)), RNG.standard_normal((5, 2, 3)), RNG.standard_normal((5, 2))
    t = RNG.integers(0, 5, (4, 2))
    compare_with_torch(lambda a, v, c, y: mt.nn.functional.linear_cross_entropy(a, v, y, linear_bias=c),
                       lambda a, v, c, y: F.linear_cross_entropy(a, v, y, linear_bias=c), [x, w, b, t],
                       requires_grad=[True, True, True, False])
    p = RNG.random((4, 5))
    p /= p.sum(1, keepdims=True)
    compare_with_torch(lambda a, v, y: mt.nn.functional.linear_cross_entropy(a, v, y),
                       lambda a, v, y: F.linear_cross_entropy(a, v, y), [x, w[:, 0], p],
                       requires_grad=[True, True, False])
    compare_with_torch(lambda a, v, y: mt.nn.functional.linear_cross_entropy(a, v, y),
                       lambda a, v, y: F.linear_cross_entropy(a, v, y), [x[0], w[:, 0], np.array(2)],
                       requires_grad=[True, True, False])


def test_equals_the_composition_and_gradcheck():
    x, w, t = mt.randn(6, 4, dtype=mt.float64), mt.randn(3, 4, dtype=mt.float64), mt.tensor([0, 2, 1, 1, 0, 2])
    np.testing.assert_allclose(mt.nn.functional.linear_cross_entropy(x, w, t).item(),
                               mt.nn.functional.cross_entropy(x @ w.T, t).item(), rtol=1e-14)
    gradcheck_noncontiguous(lambda a, v, y: mt.nn.functional.linear_cross_entropy(a, v, y, label_smoothing=0.2),
                            [RNG.standard_normal((3, 4)), RNG.standard_normal((2, 4)), np.array([0, 1, 1])], gg=True)


def test_module_matches_torch():
    torch.manual_seed(0)
    theirs = torch.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True).double()
    ours = mt.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True).double()
    ours.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    compare_with_torch(ours, theirs, [RNG.standard_normal((5, 4)), RNG.integers(0, 3, (5, 2))],
                       requires_grad=[True, False])
    assert repr(ours) == repr(theirs)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 5), st.integers(1, 4), st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_property_matches_torch(n, c, d, seed):
    rng = np.random.default_rng(seed)
    x, w, t = rng.standard_normal((n, d)), rng.standard_normal((c, d)), rng.integers(0, c, n)
    np.testing.assert_allclose(mt.nn.functional.linear_cross_entropy(mt.tensor(x), mt.tensor(w), mt.tensor(t)).item(),
                               F.linear_cross_entropy(torch.tensor(x), torch.tensor(w), torch.tensor(t)).item(),
                               rtol=1e-12)


def test_bad_input():
    x, w, t = mt.zeros(2, 3), mt.zeros(4, 3), mt.tensor([0, 1])
    with pytest.raises(RuntimeError, match="expected input with dimensionality 1 or 2, got 3"):
        mt.nn.functional.linear_cross_entropy(mt.zeros(1, 2, 3), w, t)
    with pytest.raises(RuntimeError, match="expected equal input and linear_weight last dimensions"):
        mt.nn.functional.linear_cross_entropy(x, mt.zeros(4, 2), t)
    with pytest.raises(RuntimeError, match="expected linear_bias shape \\(4,\\), got \\(3,\\)"):
        mt.nn.functional.linear_cross_entropy(x, w, t, linear_bias=mt.zeros(3))
    with pytest.raises(RuntimeError, match="requires batched input"):
        mt.nn.functional.linear_cross_entropy(mt.zeros(3), mt.zeros(4, 2, 3), mt.tensor(0))
    with pytest.raises(RuntimeError, match="ignore_index cannot be specified when target contains probabilities"):
        mt.nn.functional.linear_cross_entropy(x, w, mt.zeros(2, 4), ignore_index=0)
    with pytest.raises(RuntimeError, match="expected label_smoothing to be in range"):
        mt.nn.LinearCrossEntropyLoss(3, 4, label_smoothing=2.0)

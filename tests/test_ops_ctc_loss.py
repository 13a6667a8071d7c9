"""ctc_loss / nn.CTCLoss: forward by the alpha recursion in log space, backward by alpha-beta (Graves et al.
2006). Checked against PyTorch (float64/float32, every reduction, zero_infinity, blank, padded and
concatenated targets, unbatched, random upstream gradients), against float64 finite differences through
log_softmax, against a hand-enumerated path sum, Hypothesis, bad input."""

import itertools

import numpy as np
import pytest
from helpers import compare_with_torch, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck

F = torch.nn.functional
RNG = np.random.default_rng(43)


def _log_probs(T, N, C, rng=RNG, dtype=np.float64):
    z = rng.standard_normal((T, N, C))
    return (z - np.log(np.exp(z).sum(-1, keepdims=True))).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_matches_torch(reduction, zero_infinity, dtype):
    lp = _log_probs(12, 4, 5, dtype=dtype)
    targets = np.array([[1, 2, 2, 0], [3, 1, 4, 4], [2, 2, 1, 3], [1, 1, 1, 1]])
    il, tl = [12, 10, 7, 3], [3, 4, 2, 4]  # the last is impossible (4 repeated labels need 7 frames): inf
    kw = {"reduction": reduction, "zero_infinity": zero_infinity}
    compare_with_torch(lambda a, t: mt.nn.functional.ctc_loss(a, t, il, tl, **kw),
                       lambda a, t: F.ctc_loss(a, t, il, tl, **kw), [lp, targets], requires_grad=[True, False])


def test_blank_concatenated_targets_unbatched_and_module_match_torch():
    lp = _log_probs(9, 2, 4)
    flat, tl = np.array([0, 1, 1, 2, 0]), np.array([2, 3])
    compare_with_torch(lambda a, t, n: mt.nn.functional.ctc_loss(a, t, mt.tensor([9, 8]), n, blank=3),
                       lambda a, t, n: F.ctc_loss(a, t, torch.tensor([9, 8]), n, blank=3), [lp, flat, tl],
                       requires_grad=[True, False, False])
    compare_with_torch(lambda a, t: mt.nn.functional.ctc_loss(a, t, 9, 3, reduction="none"),
                       lambda a, t: F.ctc_loss(a, t, torch.tensor(9), torch.tensor(3), reduction="none"),
                       [lp[:, 0], np.array([1, 2, 1])], requires_grad=[True, False])
    compare_with_torch(lambda a, t: mt.nn.CTCLoss(blank=1)(a, t, [9, 9], [2, 2]),
                       lambda a, t: torch.nn.CTCLoss(blank=1)(a, t, [9, 9], [2, 2]), [lp, np.array([[0, 2], [2, 2]])],
                       requires_grad=[True, False])


def test_hand_enumerated_path_sum():
    # T = 3, C = 2 (blank 0), target [1]: the alignments are every length-3 path that collapses to "1":
    # 1__ is not one; the valid ones are {011, 001, 110, 100, 010, 111} -- -log of their summed probabilities
    lp = _log_probs(3, 1, 2)[:, 0]
    total = 0.0
    for path in itertools.product([0, 1], repeat=3):
        collapsed = [k for k, _ in itertools.groupby(path) if k != 0]
        if collapsed == [1]:
            total += np.exp(sum(lp[t, c] for t, c in enumerate(path)))
    ours = mt.nn.functional.ctc_loss(mt.tensor(lp[:, None]), mt.tensor([[1]]), [3], [1], reduction="sum").item()
    assert ours == pytest.approx(-np.log(total), rel=1e-12)


def test_gradcheck_through_log_softmax():
    # PyTorch's (and our) gradient is exact for log-probabilities that come out of a log_softmax
    z = mt.tensor(RNG.standard_normal((6, 2, 4)), requires_grad=True)
    t = mt.tensor([[1, 2, 2], [3, 1, 0]])
    for reduction in ("none", "mean"):
        assert gradcheck(lambda a, r=reduction: mt.nn.functional.ctc_loss(mt.log_softmax(a, 2), t, [6, 5], [3, 2],
                                                                          reduction=r), (z,))
    zt = mt.tensor(RNG.standard_normal((4, 6, 2)), requires_grad=True).transpose(0, 1)  # non-contiguous (6, 4, 2)
    assert gradcheck(lambda a: mt.nn.functional.ctc_loss(mt.log_softmax(a.transpose(1, 2), 2), t, [6, 6], [3, 2]),
                     (zt,))


def test_second_derivative_refused_as_torch():
    lp = mt.tensor(_log_probs(4, 1, 3), requires_grad=True)
    loss = mt.nn.functional.ctc_loss(lp, mt.tensor([[1]]), [4], [1])
    (g,) = mt.autograd.grad(loss, [lp], create_graph=True)
    with pytest.raises(RuntimeError, match="derivative for ctc_loss_backward is not implemented"):
        g.sum().backward()


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 8), st.integers(1, 3), st.integers(2, 5), st.integers(0, 2**31 - 1))
def test_property_matches_torch(T, N, C, seed):
    rng = np.random.default_rng(seed)
    lp = _log_probs(T, N, C, rng)
    tl = rng.integers(0, 4, N)
    targets = rng.integers(1, C, (N, 4))
    il = rng.integers(1, T + 1, N)
    ours = mt.nn.functional.ctc_loss(mt.tensor(lp), mt.tensor(targets), mt.tensor(il), mt.tensor(tl),
                                     reduction="none").numpy()
    theirs = F.ctc_loss(torch.tensor(lp), torch.tensor(targets), torch.tensor(il), torch.tensor(tl),
                        reduction="none").numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)


def test_bad_input():
    lp, t = mt.tensor(_log_probs(5, 2, 4)), mt.tensor([[1, 2], [1, 1]])
    with pytest.raises(RuntimeError, match="Expected input_lengths to have value at most 5, but got value 6"):
        mt.nn.functional.ctc_loss(lp, t, [6, 5], [2, 2])
    with pytest.raises(RuntimeError, match="Expected tensor to have size at least 3 at dimension 1"):
        mt.nn.functional.ctc_loss(lp, t, [5, 5], [3, 2])
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        mt.nn.functional.ctc_loss(lp, t, [5, 5], [2, 2], blank=4)
    with pytest.raises(RuntimeError, match="input_lengths must be of size batch_size"):
        mt.nn.functional.ctc_loss(lp, t, [5], [2, 2])
    with pytest.raises(RuntimeError, match="Expected tensor to have size 4 at dimension 0, but got size 3"):
        mt.nn.functional.ctc_loss(lp, mt.tensor([1, 2, 1]), [5, 5], [2, 2])
    with pytest.raises(RuntimeError, match="Expected target_lengths to have value at least 0"):
        mt.nn.functional.ctc_loss(lp, t, [5, 5], [-1, 2])
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        mt.nn.functional.ctc_loss(lp, t, [5, 5], [2, 2], reduction="x")
    with pytest.raises(TypeError):
        mt.nn.functional.ctc_loss(mt.zeros(5, 2, 4, dtype=mt.int64), t, [5, 5], [2, 2])

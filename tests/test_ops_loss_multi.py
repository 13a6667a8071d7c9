"""multi_margin_loss, multilabel_margin_loss, multilabel_soft_margin_loss, hinge_embedding_loss,
triplet_margin_with_distance_loss and their modules: PyTorch comparison (float64/float32, every
reduction, random upstream gradients), gradcheck at non-contiguous inputs, hand-worked values,
Hypothesis over shapes and targets, edge values, bad input."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt

F = torch.nn.functional
RNG = np.random.default_rng(11)
REDUCTIONS = ["mean", "sum", "none"]


def _ml_target(rng, n, c):
    """Multi-label targets: a few distinct classes per row, then -1 (and junk after it, which is ignored)."""
    t = rng.integers(-1, c, size=(n, c))
    for row in t:
        k = rng.integers(0, c + 1)
        row[:k] = rng.permutation(c)[:k]
        if k < c:
            row[k] = -1
    return t


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p, margin, weighted", [(1, 1.0, False), (2, 0.5, True), (1, 2.0, True)])
def test_multi_margin_loss_matches_torch(p, margin, weighted, reduction, dtype):
    x, w = RNG.standard_normal((5, 4)).astype(dtype), RNG.random(4).astype(dtype)
    y = RNG.integers(0, 4, 5)
    kw = {"p": p, "margin": margin, "reduction": reduction}
    arrays = [x, y, w] if weighted else [x, y]
    compare_with_torch(lambda *a: mt.nn.functional.multi_margin_loss(*a[:2], weight=a[2] if weighted else None, **kw),
                       lambda *a: F.multi_margin_loss(*a[:2], weight=a[2] if weighted else None, **kw), arrays,
                       requires_grad=[True, False, False][:len(arrays)])
    compare_with_torch(lambda a, b: mt.nn.functional.multi_margin_loss(a, b, **kw),
                       lambda a, b: F.multi_margin_loss(a, b, **kw), [x[0], np.array(y[0])])  # unbatched


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss_matches_torch(reduction, dtype):
    x, y = RNG.standard_normal((6, 5)).astype(dtype), _ml_target(RNG, 6, 5)
    kw = {"reduction": reduction}
    compare_with_torch(lambda a, b: mt.nn.functional.multilabel_margin_loss(a, b, **kw),
                       lambda a, b: F.multilabel_margin_loss(a, b, **kw), [x, y])
    compare_with_torch(lambda a, b: mt.nn.functional.multilabel_margin_loss(a, b, **kw),
                       lambda a, b: F.multilabel_margin_loss(a, b, **kw), [x[0], y[0]])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_soft_margin_and_hinge_embedding_match_torch(reduction, dtype):
    x, t = RNG.standard_normal((4, 3)).astype(dtype), RNG.integers(0, 2, (4, 3)).astype(dtype)
    w = RNG.random(3).astype(dtype)
    compare_with_torch(lambda a, b, c: mt.nn.functional.multilabel_soft_margin_loss(a, b, c, reduction=reduction),
                       lambda a, b, c: F.multilabel_soft_margin_loss(a, b, c, reduction=reduction), [x, t, w])
    y = np.where(t > 0, 1.0, -1.0).astype(dtype)
    y[0, 0] = 0.0  # neither 1 nor -1: ATen adds both terms
    compare_with_torch(lambda a, b: mt.nn.functional.hinge_embedding_loss(a, b, 0.7, reduction=reduction),
                       lambda a, b: F.hinge_embedding_loss(a, b, 0.7, reduction=reduction), [x, y],
                       requires_grad=[True, False])


@pytest.mark.parametrize("swap", [False, True])
def test_triplet_margin_with_distance_loss_matches_torch(swap):
    a, p, n = (RNG.standard_normal((4, 3)) for _ in range(3))
    for ours_d, theirs_d in ((None, None),
                             (lambda u, v: 1 - mt.cosine_similarity(u, v), lambda u, v: 1 - F.cosine_similarity(u, v))):
        compare_with_torch(
            lambda *t, d=ours_d: mt.nn.functional.triplet_margin_with_distance_loss(*t, distance_function=d, swap=swap),
            lambda *t, d=theirs_d: F.triplet_margin_with_distance_loss(*t, distance_function=d, swap=swap), [a, p, n])


def test_hand_worked_values():
    # multi_margin: x = [0.1, 0.2, 0.4, 0.8], y = 3: (max(0, 1-0.8+0.1) + max(0, 1-0.8+0.2) + max(0, 1-0.8+0.4)) / 4
    #             = (0.3 + 0.4 + 0.6) / 4 = 0.325  (PyTorch's documented example)
    x = mt.tensor([[0.1, 0.2, 0.4, 0.8]])
    assert mt.nn.functional.multi_margin_loss(x, mt.tensor([3])).item() == pytest.approx(0.325)
    # multilabel_margin: targets {3, 0} (then -1): over i in {1, 2}:
    # [(1-(0.1-0.2)) + (1-(0.1-0.4)) + (1-(0.8-0.2)) + (1-(0.8-0.4))] / 4 = (1.1+1.3+0.4+0.6)/4 = 0.85
    assert mt.nn.functional.multilabel_margin_loss(x, mt.tensor([[3, 0, -1, 1]])).item() == pytest.approx(0.85)
    # hinge embedding: x = [0.3, 2.0], y = [1, -1], margin 1: (0.3 + max(0, 1-2)) / 2 = 0.15
    assert mt.nn.functional.hinge_embedding_loss(mt.tensor([0.3, 2.0]), mt.tensor([1.0, -1.0])).item() == pytest.approx(0.15)


def test_gradcheck_noncontiguous():
    x, y = RNG.standard_normal((3, 4)), RNG.integers(0, 4, 3)
    gradcheck_noncontiguous(lambda a, b: mt.nn.functional.multi_margin_loss(a, b, p=2, reduction="none"), [x, y],
                            gg=True)
    gradcheck_noncontiguous(lambda a, b: mt.nn.functional.multilabel_margin_loss(a, b), [x, _ml_target(RNG, 3, 4)],
                            gg=True)
    t = RNG.random((3, 4))
    gradcheck_noncontiguous(lambda a, b: mt.nn.functional.multilabel_soft_margin_loss(a, b), [x, t], gg=True)
    gradcheck_noncontiguous(lambda a: mt.nn.functional.hinge_embedding_loss(a, mt.tensor(np.sign(t - 0.5))), [x],
                            gg=True)
    gradcheck_noncontiguous(lambda a, p, n: mt.nn.functional.triplet_margin_with_distance_loss(a, p, n, margin=3.0),
                            [x, t, RNG.standard_normal((3, 4))])


def test_edge_values():
    # an infinite score: every hinge against it is inf (multi-margin) or 0; NaN propagates, as the math
    x = mt.tensor([[np.inf, 0.0, 1.0]])
    assert mt.nn.functional.multi_margin_loss(x, mt.tensor([1])).item() == np.inf
    assert mt.nn.functional.multi_margin_loss(x, mt.tensor([0])).item() == 0.0
    assert np.isnan(mt.nn.functional.multilabel_margin_loss(mt.tensor([[np.nan, 0.0]]), mt.tensor([[1, -1]])).item())
    # soft margin stays finite for huge scores (log σ computed stably), as PyTorch's
    big = np.array([[1e30, -1e30]])
    ours = mt.nn.functional.multilabel_soft_margin_loss(mt.tensor(big), mt.tensor([[1.0, 0.0]])).item()
    assert ours == F.multilabel_soft_margin_loss(torch.tensor(big), torch.tensor([[1.0, 0.0]])).item() == 0.0
    h = mt.nn.functional.multi_margin_loss(mt.tensor([[1.0, 2.0]], dtype=mt.float16), mt.tensor([0]))
    assert h.dtype == mt.float16 and h.item() == pytest.approx(1.0)  # (1 - 1 + 2) / 2


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 4), st.integers(1, 5), st.integers(0, 2**31 - 1), st.sampled_from(REDUCTIONS))
def test_property_match_torch(n, c, seed, reduction):
    rng = np.random.default_rng(seed)
    x, y, ml = rng.standard_normal((n, c)), rng.integers(0, c, n), _ml_target(rng, n, c)
    for ours, theirs, args in ((mt.nn.functional.multi_margin_loss, F.multi_margin_loss, (x, y)),
                               (mt.nn.functional.multilabel_margin_loss, F.multilabel_margin_loss, (x, ml))):
        got = ours(*(mt.tensor(a) for a in args), reduction=reduction).numpy()
        np.testing.assert_allclose(got, theirs(*(torch.tensor(a) for a in args), reduction=reduction).numpy(),
                                   rtol=1e-12, atol=1e-12)


def test_modules_match_torch():
    x, y, ml = RNG.standard_normal((4, 3)), RNG.integers(0, 3, 4), _ml_target(RNG, 4, 3)
    w = RNG.random(3)
    pairs = [((mt.nn.MultiMarginLoss(p=2, weight=mt.tensor(w)), torch.nn.MultiMarginLoss(p=2, weight=torch.tensor(w))),
              [x, y]),
             ((mt.nn.MultiLabelMarginLoss(reduction="sum"), torch.nn.MultiLabelMarginLoss(reduction="sum")), [x, ml]),
             ((mt.nn.MultiLabelSoftMarginLoss(), torch.nn.MultiLabelSoftMarginLoss()), [x, (x > 0).astype(float)]),
             ((mt.nn.HingeEmbeddingLoss(2.0), torch.nn.HingeEmbeddingLoss(2.0)), [x, np.sign(x)]),
             ((mt.nn.TripletMarginWithDistanceLoss(margin=2.0), torch.nn.TripletMarginWithDistanceLoss(margin=2.0)),
              [x, x[::-1].copy(), np.abs(x)])]
    for (ours, theirs), arrays in pairs:
        compare_with_torch(ours, theirs, arrays, requires_grad=[True] + [False] * (len(arrays) - 1))


def test_bad_input():
    x = mt.zeros(2, 3)
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        mt.nn.functional.multi_margin_loss(x, mt.tensor([0, 1]), p=3)
    with pytest.raises(RuntimeError, match="target out of range"):
        mt.nn.functional.multi_margin_loss(x, mt.tensor([0, 3]))
    with pytest.raises(RuntimeError, match="Expected target size \\[2\\], but got \\[3\\]"):
        mt.nn.functional.multi_margin_loss(x, mt.tensor([0, 1, 1]))
    with pytest.raises(RuntimeError, match="inconsistent weight size, expected 3 but got \\[4\\]"):
        mt.nn.functional.multi_margin_loss(x, mt.tensor([0, 1]), weight=mt.ones(4))
    with pytest.raises(RuntimeError, match="Expected non-empty vector or matrix"):
        mt.nn.functional.multi_margin_loss(mt.zeros(2, 3, 1), mt.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="expected an integer \\(int64\\) target"):
        mt.nn.functional.multi_margin_loss(x, mt.tensor([0.0, 1.0]))
    with pytest.raises(RuntimeError, match="inconsistent target size: \\[1, 3\\] for input of size: \\[2, 3\\]"):
        mt.nn.functional.multilabel_margin_loss(x, mt.tensor([[0, 1, -1]]))
    with pytest.raises(RuntimeError, match="target index out of range"):
        mt.nn.functional.multilabel_margin_loss(x, mt.tensor([[0, 5, -1], [0, -1, 1]]))
    with pytest.raises(ValueError, match="margin must be greater than 0, got 0"):
        mt.nn.functional.triplet_margin_with_distance_loss(x, x, x, margin=0)
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        mt.nn.functional.hinge_embedding_loss(x, x, reduction="avg")
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        mt.nn.MultiMarginLoss(p=0)

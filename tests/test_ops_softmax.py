"""softmax, log_softmax and the losses: cross_entropy (fused), nll_loss, mse_loss."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck

import strategies as S
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch

# every test runs on both CPU kernel choices: softmax rows compiled (kernels/cpu_softmax.py) and in NumPy
pytestmark = pytest.mark.usefixtures("cpu_kernels")

F = torch.nn.functional


@pytest.mark.parametrize("fn,tfn", [(mt.softmax, F.softmax), (mt.log_softmax, F.log_softmax)], ids=["softmax", "log_softmax"])
def test_softmax_gradcheck_and_gradgradcheck(fn, tfn, rng):
    x = t64(rng.standard_normal((2, 3, 4)))
    for dim in (0, -1):
        assert gradcheck(lambda t: fn(t, dim), (x,))
    assert gradgradcheck(lambda t: fn(t, 1), (t64(rng.standard_normal((2, 3))),))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fn,tfn", [(mt.softmax, F.softmax), (mt.log_softmax, F.log_softmax)], ids=["softmax", "log_softmax"])
def test_softmax_matches_torch(fn, tfn, dtype, rng, device):
    for dim in (0, 1, -1):
        compare_with_torch(lambda t: fn(t, dim), lambda t: tfn(t, dim), [rng.standard_normal((3, 4, 5)).astype(dtype)],
                           device=device)
    compare_with_torch(lambda t: t.softmax(-1), lambda t: t.softmax(-1), [rng.standard_normal(5).astype(dtype)])


@given(S.array_and_dim())
def test_property_softmax_rows_sum_to_one_and_match_torch(a_dim):
    a, dim = a_dim
    y = mt.softmax(t64(a), dim)
    np.testing.assert_allclose(y.detach().numpy().sum(axis=dim), 1.0, rtol=1e-12)
    compare_with_torch(lambda t: mt.log_softmax(t, dim), lambda t: F.log_softmax(t, dim), [a])
    # shift invariance: softmax(x + c) = softmax(x)
    np.testing.assert_allclose(mt.softmax(t64(a + 123.0), dim).detach().numpy(), y.detach().numpy(), atol=1e-12)


def test_softmax_is_stable_for_huge_logits():
    for dtype in ("float32", "float64"):
        x = mt.tensor([[1e4, 0.0, -1e4], [3e38 if dtype == "float32" else 1e308, 1.0, 2.0]], dtype=dtype,
                      requires_grad=True)
        y = mt.softmax(x, -1)
        np.testing.assert_allclose(y.detach().numpy(), [[1, 0, 0], [1, 0, 0]])
        ls = mt.log_softmax(x, -1)
        assert ls.detach().numpy()[0, 0] == 0.0 and np.isfinite(ls.detach().numpy()).all()
        # a non-constant upstream gradient: with y.sum() softmax's input gradient is identically 0
        r = mt.tensor([[0.3, -1.2, 2.0], [1.5, 0.4, -0.7]], dtype=dtype)
        (((y * r).sum()) + ls[:, 0].sum()).backward()
        assert np.isfinite(x.grad.numpy()).all()


def test_fully_masked_row_gives_zeros_and_no_nan_anywhere():
    # attention: a row whose every key is masked. PyTorch gives NaN here; we give zeros on purpose.
    scores = t64([[1.0, 2.0, 3.0], [0.5, 0.1, 0.2]])
    mask = mt.tensor([[False, True, False], [True, True, True]])
    p = scores.masked_fill(mask, float("-inf")).softmax(-1)
    np.testing.assert_array_equal(p.detach().numpy()[1], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(p.detach().numpy()[0].sum(), 1.0)
    lp = scores.masked_fill(mask, float("-inf")).log_softmax(-1)
    assert np.all(lp.detach().numpy()[1] == -np.inf)
    (p * t64([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], False)).sum().backward()
    g = scores.grad.numpy()
    assert np.isfinite(g).all() and np.all(g[1] == 0.0)


# ---------------------------------------------------------------------------------------- cross_entropy

CE_CASES = [
    ("plain", {}),
    ("sum", {"reduction": "sum"}),
    ("none", {"reduction": "none"}),
    ("smoothing", {"label_smoothing": 0.2}),
    ("weight", {"weight": "w"}),
    ("weight_smoothing_ignore", {"weight": "w", "label_smoothing": 0.1, "ignore_index": 1}),
    ("ignore_none", {"ignore_index": 0, "reduction": "none"}),
]


def _ce_args(kw, w, lib):
    kw = dict(kw)
    if kw.get("weight") == "w":
        kw["weight"] = mt.tensor(w) if lib == "mt" else torch.from_numpy(w)
    return kw


@pytest.mark.parametrize("shape", [(4, 5), (3, 5, 2), (5,)], ids=str)
@pytest.mark.parametrize("name,kw", CE_CASES, ids=[c[0] for c in CE_CASES])
def test_cross_entropy_gradcheck(name, kw, shape, rng):
    x = rng.standard_normal(shape)
    tshape = shape[:1] + shape[2:] if len(shape) > 1 else ()
    t = rng.integers(0, 5, tshape)
    w = rng.random(5) + 0.5
    target = mt.tensor(t)
    assert gradcheck(lambda a: mt.cross_entropy(a, target, **_ce_args(kw, w, "mt")), (t64(x),))


def test_cross_entropy_gradgradcheck(rng):
    t = mt.tensor([0, 2, 1])
    assert gradgradcheck(lambda a: mt.cross_entropy(a, t, label_smoothing=0.1), (t64(rng.standard_normal((3, 3))),))
    probs = rng.random((2, 3))
    probs /= probs.sum(1, keepdims=True)
    assert gradgradcheck(lambda a, p: mt.cross_entropy(a, p, reduction="none"),
                         (t64(rng.standard_normal((2, 3))), t64(probs)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(6, 5), (3, 5, 2, 2), (5,)], ids=str)
@pytest.mark.parametrize("name,kw", CE_CASES, ids=[c[0] for c in CE_CASES])
def test_cross_entropy_matches_torch(name, kw, shape, dtype, rng, device):
    x = rng.standard_normal(shape).astype(dtype)
    t = rng.integers(0, 5, shape[:1] + shape[2:] if len(shape) > 1 else ())
    if t.ndim:
        t.reshape(-1)[0] = kw.get("ignore_index", -100)  # one ignored target
    w = (rng.random(5) + 0.5).astype(dtype)
    compare_with_torch(lambda a: mt.cross_entropy(a, mt.tensor(t, device=device), **_ce_args(kw, w, "mt")),
                       lambda a: F.cross_entropy(a, torch.from_numpy(t).to(a.device), **_ce_args(kw, w, "torch")),
                       [x], device=device)


@pytest.mark.parametrize("kw", [{}, {"label_smoothing": 0.3}, {"weight": "w", "reduction": "sum"}, {"reduction": "none"}],
                         ids=str)
def test_cross_entropy_probability_targets_match_torch(kw, rng):
    x = rng.standard_normal((4, 5, 2))
    p = rng.random((4, 5, 2))
    p /= p.sum(1, keepdims=True)
    w = rng.random(5) + 0.5
    compare_with_torch(lambda a, b: mt.cross_entropy(a, b, **_ce_args(kw, w, "mt")),
                       lambda a, b: F.cross_entropy(a, b, **_ce_args(kw, w, "torch")), [x, p])
    assert gradcheck(lambda a, b: mt.cross_entropy(a, b, **_ce_args(kw, w, "mt")), (t64(x[:2, :, :1]), t64(p[:2, :, :1])))


@given(st.integers(1, 6), st.integers(2, 6), st.floats(0.0, 1.0), st.sampled_from(["mean", "sum", "none"]),
       st.integers(0, 2**31 - 1))
def test_property_cross_entropy_matches_torch(n, c, smoothing, reduction, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c)) * 5
    t = rng.integers(0, c, n)
    t[rng.random(n) < 0.2] = -100
    if (t == -100).all() and reduction == "mean":
        t[0] = 0  # all ignored gives NaN in both; checked separately
    compare_with_torch(lambda a: mt.cross_entropy(a, mt.tensor(t), reduction=reduction, label_smoothing=smoothing),
                       lambda a: F.cross_entropy(a, torch.from_numpy(t), reduction=reduction, label_smoothing=smoothing),
                       [x], rtol=1e-9, atol=1e-10)


def test_cross_entropy_is_one_fused_node_and_equals_log_softmax_nll(rng):
    x = t64(rng.standard_normal((4, 3)))
    t = mt.tensor([0, 2, 1, 2])
    loss = mt.cross_entropy(x, t)
    # one node (CrossEntropy), printed under PyTorch's name for cross_entropy's last node, as scripts print it
    assert loss.grad_fn.fn.__name__ == "CrossEntropy"
    assert loss.grad_fn.name() == "NllLossBackward0" == torch.nn.functional.cross_entropy(
        torch.zeros(1, 2, requires_grad=True), torch.tensor([0])).grad_fn.name()
    assert loss.grad_fn.next_edges[0][0].name() == "AccumulateGrad"  # x feeds it directly
    composed = mt.nll_loss(mt.log_softmax(x, 1), t)
    assert loss.item() == pytest.approx(composed.item(), abs=1e-14)
    loss.backward()
    p = mt.softmax(x, 1).detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), (p - np.eye(3)[[0, 2, 1, 2]]) / 4, atol=1e-15)  # (softmax - onehot)/N


def test_cross_entropy_huge_logits_and_all_ignored():
    x = t64([[1e4, -1e4, 0.0], [0.0, 0.0, 0.0]])
    loss = mt.cross_entropy(x, mt.tensor([0, 1]))
    assert loss.item() == pytest.approx(np.log(3) / 2)
    loss.backward()
    assert np.isfinite(x.grad.numpy()).all()
    nan = mt.cross_entropy(t64([[1.0, 2.0]]), mt.tensor([-100]))
    assert np.isnan(nan.item())  # mean over no targets: NaN, as PyTorch
    assert mt.cross_entropy(t64([[1.0, 2.0]]), mt.tensor([-100]), reduction="sum").item() == 0.0


def test_nll_and_mse_gradcheck_and_torch(rng):
    x = rng.standard_normal((4, 3, 2))
    t = rng.integers(0, 3, (4, 2))
    w = rng.random(3) + 0.5
    for reduction in ("mean", "sum", "none"):
        assert gradcheck(lambda a: mt.nll_loss(a, mt.tensor(t), weight=mt.tensor(w), reduction=reduction), (t64(x),))
        for dtype in (np.float64, np.float32):
            compare_with_torch(
                lambda a: mt.nll_loss(a, mt.tensor(t), weight=mt.tensor(w.astype(dtype)), reduction=reduction),
                lambda a: F.nll_loss(a, torch.from_numpy(t), weight=torch.from_numpy(w.astype(dtype)), reduction=reduction),
                [x.astype(dtype)])
            compare_with_torch(lambda a, b: mt.mse_loss(a, b, reduction=reduction),
                               lambda a, b: F.mse_loss(a, b, reduction=reduction),
                               [x.astype(dtype), rng.standard_normal(x.shape).astype(dtype)])
        assert gradcheck(lambda a, b: mt.mse_loss(a, b, reduction=reduction), (t64(x[:2]), t64(x[2:])))


def test_loss_bad_input():
    x = mt.randn(4, 3)
    with pytest.raises(ValueError, match=r"class-index target must have shape \(4,\), got \(3,\)"):
        mt.cross_entropy(x, mt.tensor([0, 1, 2]))
    with pytest.raises(IndexError, match=r"target 3 is out of bounds: expected a class index in \[0, 2\]"):
        mt.cross_entropy(x, mt.tensor([0, 1, 2, 3]))
    with pytest.raises(IndexError, match="target -1 is out of bounds"):
        mt.nll_loss(x, mt.tensor([0, 1, 2, -1]))
    with pytest.raises(TypeError, match="expected a floating point tensor"):
        mt.cross_entropy(mt.tensor([[1, 2]]), mt.tensor([0]))
    with pytest.raises(TypeError, match="target must hold class indices"):
        mt.cross_entropy(x, mt.tensor([True, False, True, True]))
    with pytest.raises(ValueError, match=r"probability targets must have the input's shape \(4, 3\)"):
        mt.cross_entropy(x, mt.rand(4, 2))
    with pytest.raises(ValueError, match="reduction must be one of"):
        mt.cross_entropy(x, mt.tensor([0, 1, 2, 0]), reduction="avg")
    with pytest.raises(ValueError, match="label_smoothing must be in"):
        mt.cross_entropy(x, mt.tensor([0, 1, 2, 0]), label_smoothing=1.5)
    with pytest.raises(ValueError, match=r"weight must be a Tensor of shape \(3,\)"):
        mt.cross_entropy(x, mt.tensor([0, 1, 2, 0]), weight=mt.ones(4))
    with pytest.raises(ValueError, match=r"shapes \(4, 3\) and \(4, 2\) do not broadcast"):
        mt.mse_loss(x, mt.rand(4, 2))
    with pytest.raises(IndexError, match="dimension 2 is out of range"):
        mt.softmax(x, 2)
    with pytest.raises(TypeError, match="expected a floating point tensor"):
        mt.softmax(mt.tensor([1, 2]), 0)


# ==================================================================================================
# gradcheck on non-contiguous leaves (issue 13): the leaf's own .array is strided and axis-reversed
# ==================================================================================================
@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("fn", [mt.softmax, mt.log_softmax], ids=["softmax", "log_softmax"])
def test_softmax_gradcheck_noncontiguous_leaf(fn, dim, rng):
    gradcheck_noncontiguous(lambda t: fn(t, dim), [rng.standard_normal((2, 3, 4))])
    gradcheck_noncontiguous(lambda t: fn(t, dim), [rng.standard_normal((2, 3))], gg=True)


@pytest.mark.parametrize("shape", [(4, 5), (3, 5, 2)], ids=str)
@pytest.mark.parametrize("name,kw", CE_CASES, ids=[c[0] for c in CE_CASES])
def test_cross_entropy_gradcheck_noncontiguous_leaf(name, kw, shape, rng):
    t = mt.tensor(rng.integers(0, 5, shape[:1] + shape[2:]))
    w = rng.random(5) + 0.5
    gradcheck_noncontiguous(lambda a: mt.cross_entropy(a, t, **_ce_args(kw, w, "mt")), [rng.standard_normal(shape)])
    probs = rng.random(shape)
    probs /= probs.sum(1, keepdims=True)  # class probabilities as a non-contiguous target too
    gradcheck_noncontiguous(lambda a, p: mt.cross_entropy(a, p, reduction="none"), [rng.standard_normal(shape), probs])


def test_nll_and_mse_gradcheck_noncontiguous_leaves(rng):
    x, t, w = rng.standard_normal((4, 3, 2)), mt.tensor(rng.integers(0, 3, (4, 2))), mt.tensor(rng.random(3) + 0.5)
    for reduction in ("mean", "sum", "none"):
        gradcheck_noncontiguous(lambda a: mt.nll_loss(a, t, weight=w, reduction=reduction), [x])
        gradcheck_noncontiguous(lambda a, b: mt.mse_loss(a, b, reduction=reduction), [x[:2], x[2:]])


def test_softmax_and_log_softmax_of_a_0d_tensor_as_torch():
    # a 0-d tensor is one entry along dim 0 (or -1): softmax 1, log_softmax 0, both with gradient 0
    # (dx = y·(dy - y·dy) = 0 and dy - e^0·dy = 0). They crashed (ZeroDivisionError, IndexError).
    F = mt.nn.functional
    for dim in (0, -1):
        for ours, theirs in [(lambda x, d=dim: F.softmax(x, d), lambda x, d=dim: torch.nn.functional.softmax(x, d)),
                             (lambda x, d=dim: F.softmin(x, d), lambda x, d=dim: torch.nn.functional.softmin(x, d)),
                             (lambda x, d=dim: F.log_softmax(x, d),
                              lambda x, d=dim: torch.nn.functional.log_softmax(x, d)),
                             (lambda x, d=dim: mt.nn.Softmax(d)(x), lambda x, d=dim: torch.nn.Softmax(d)(x)),
                             (lambda x, d=dim: x.log_softmax(d), lambda x, d=dim: x.log_softmax(d))]:
            for dtype in (np.float64, np.float32):
                compare_with_torch(ours, theirs, [np.array(2.5, dtype)])
    assert F.softmax(mt.tensor(2.5), 0).item() == 1.0 and F.log_softmax(mt.tensor(2.5), -1).item() == 0.0
    for bad in (1, -2):
        with pytest.raises(IndexError, match="out of range"):
            F.softmax(mt.tensor(2.5), bad)

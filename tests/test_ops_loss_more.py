"""Losses of ops/loss_regression.py and ops/loss_margin.py: gradcheck, PyTorch comparison, properties, bad input, edges."""

import warnings

import numpy as np
import pytest
from helpers import compare_with_torch, t64, torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.ops.loss_margin import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    margin_ranking_loss,
    one_hot,
    soft_margin_loss,
    triplet_margin_loss,
)
from minitorch_ln.ops.loss_regression import (
    gaussian_nll_loss,
    huber_loss,
    kl_div,
    l1_loss,
    poisson_nll_loss,
    smooth_l1_loss,
)

F = torch.nn.functional if torch is not None else None

# ---------------------------------------------------------------------------------------------------
# Strategies for this file
# ---------------------------------------------------------------------------------------------------

small_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


# ---------------------------------------------------------------------------------------------------
# The ops in one table: name, ours, theirs, arrays(rng, dtype) (float arrays get gradients), gradgradcheck
# ---------------------------------------------------------------------------------------------------


def _n(r, dt, *shape):
    return r.standard_normal(shape).astype(dt)


def _prob(r, dt, *shape):
    return r.uniform(0.05, 0.95, shape).astype(dt)


def _sign(r, *shape):
    return np.where(r.standard_normal(shape) > 0, 1.0, -1.0)


def _both(name):
    """(ours, theirs) for a function of the same name and call in both."""
    mine = globals()[name]
    return mine, getattr(F, name)


RED = ["mean", "sum", "none"]
OPS = []
for red in RED:
    OPS += [
        (f"l1_{red}", lambda x, t, red=red: l1_loss(x, t, reduction=red),
         lambda x, t, red=red: F.l1_loss(x, t, reduction=red), lambda r, dt: [_n(r, dt, 3, 4), _n(r, dt, 3, 4)], False),
        (f"smooth_l1_{red}", lambda x, t, red=red: smooth_l1_loss(x, t, reduction=red, beta=0.7),
         lambda x, t, red=red: F.smooth_l1_loss(x, t, reduction=red, beta=0.7),
         lambda r, dt: [_n(r, dt, 3, 4), _n(r, dt, 3, 4)], True),
        (f"huber_{red}", lambda x, t, red=red: huber_loss(x, t, reduction=red, delta=0.8),
         lambda x, t, red=red: F.huber_loss(x, t, reduction=red, delta=0.8),
         lambda r, dt: [_n(r, dt, 3, 4), _n(r, dt, 3, 4)], True),
        (f"bce_{red}", lambda x, t, w, red=red: binary_cross_entropy(x, t, w.detach(), reduction=red),
         lambda x, t, w, red=red: F.binary_cross_entropy(x, t, w.detach(), reduction=red),
         lambda r, dt: [_prob(r, dt, 3, 4), _prob(r, dt, 3, 4), _prob(r, dt, 4)], True),
        (f"bce_logits_{red}", lambda x, t, red=red: binary_cross_entropy_with_logits(x, t, reduction=red),
         lambda x, t, red=red: F.binary_cross_entropy_with_logits(x, t, reduction=red),
         lambda r, dt: [_n(r, dt, 3, 4), _prob(r, dt, 3, 4)], True),
        (f"kl_{red}", lambda x, t, red=red: kl_div(x, t, reduction=red),
         lambda x, t, red=red: F.kl_div(x, t, reduction=red), lambda r, dt: [_n(r, dt, 3, 4), _prob(r, dt, 3, 4)], True),
        (f"soft_margin_{red}", lambda x, t, red=red: soft_margin_loss(x, t, reduction=red),
         lambda x, t, red=red: F.soft_margin_loss(x, t, reduction=red),
         lambda r, dt: [_n(r, dt, 3, 4), _sign(r, 3, 4).astype(dt)], True),
        (f"cosine_embedding_{red}", lambda a, b, y, red=red: cosine_embedding_loss(a, b, y, 0.1, reduction=red),
         lambda a, b, y, red=red: F.cosine_embedding_loss(a, b, y, 0.1, reduction=red),
         lambda r, dt: [_n(r, dt, 5, 3), _n(r, dt, 5, 3), _sign(r, 5).astype(np.int64)], True),
        (f"margin_ranking_{red}", lambda a, b, y, red=red: margin_ranking_loss(a, b, y, 0.3, reduction=red),
         lambda a, b, y, red=red: F.margin_ranking_loss(a, b, y, 0.3, reduction=red),
         lambda r, dt: [_n(r, dt, 6), _n(r, dt, 6), _sign(r, 6).astype(dt)], True),
        (f"triplet_{red}", lambda a, p, n, red=red: triplet_margin_loss(a, p, n, reduction=red),
         lambda a, p, n, red=red: F.triplet_margin_loss(a, p, n, reduction=red),
         lambda r, dt: [_n(r, dt, 5, 3), _n(r, dt, 5, 3), _n(r, dt, 5, 3)], True),
    ]
OPS += [
    ("l1_weight", lambda x, t, w: l1_loss(x, t, weight=w), lambda x, t, w: F.l1_loss(x, t, weight=w),
     lambda r, dt: [_n(r, dt, 3, 4), _n(r, dt, 3, 4), _prob(r, dt, 3, 4)], False),
    ("huber_weight", lambda x, t, w: huber_loss(x, t, weight=w), lambda x, t, w: F.huber_loss(x, t, weight=w),
     lambda r, dt: [_n(r, dt, 3, 4), _n(r, dt, 3, 4), _prob(r, dt, 3, 4)], True),
    ("smooth_l1_beta0", lambda x, t: smooth_l1_loss(x, t, beta=0.0), lambda x, t: F.smooth_l1_loss(x, t, beta=0.0),
     lambda r, dt: [_n(r, dt, 3, 4), _n(r, dt, 3, 4)], False),
    ("bce_logits_w_pw", lambda x, t, w, pw: binary_cross_entropy_with_logits(x, t, w.detach(), pos_weight=pw.detach()),
     lambda x, t, w, pw: F.binary_cross_entropy_with_logits(x, t, w.detach(), pos_weight=pw.detach()),
     lambda r, dt: [_n(r, dt, 3, 4) * 3, _prob(r, dt, 3, 4), _prob(r, dt, 3, 1), _prob(r, dt, 4) * 3], True),
    ("kl_batchmean_log_target", lambda x, t: kl_div(x, t, reduction="batchmean", log_target=True),
     lambda x, t: F.kl_div(x, t, reduction="batchmean", log_target=True),
     lambda r, dt: [_n(r, dt, 3, 4), _n(r, dt, 3, 4)], True),
    ("triplet_swap_p1", lambda a, p, n: triplet_margin_loss(a, p, n, margin=2.0, p=1, swap=True),
     lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=2.0, p=1, swap=True),
     lambda r, dt: [_n(r, dt, 5, 3), _n(r, dt, 5, 3), _n(r, dt, 5, 3)], False),
    ("cosine_embedding_unbatched", lambda a, b, y: cosine_embedding_loss(a, b, y, -0.5),
     lambda a, b, y: F.cosine_embedding_loss(a, b, y, -0.5),
     lambda r, dt: [_n(r, dt, 4), _n(r, dt, 4), np.array(-1)], True),
    ("poisson_log", lambda x, t: poisson_nll_loss(x, t), lambda x, t: F.poisson_nll_loss(x, t),
     lambda r, dt: [_n(r, dt, 3, 4), r.uniform(0, 4, (3, 4)).astype(dt)], True),
    ("poisson_full", lambda x, t: poisson_nll_loss(x, t, log_input=False, full=True, reduction="sum"),
     lambda x, t: F.poisson_nll_loss(x, t, log_input=False, full=True, reduction="sum"),
     lambda r, dt: [r.uniform(0.5, 3, (3, 4)).astype(dt), r.uniform(1.5, 4, (3, 4)).astype(dt)], True),
    ("gaussian_nll", lambda x, t, v: gaussian_nll_loss(x, t, v), lambda x, t, v: F.gaussian_nll_loss(x, t, v),
     lambda r, dt: [_n(r, dt, 3, 4), _n(r, dt, 3, 4), _prob(r, dt, 3, 4)], True),
    ("gaussian_nll_homosc", lambda x, t, v: gaussian_nll_loss(x, t, v, full=True, reduction="none"),
     lambda x, t, v: F.gaussian_nll_loss(x, t, v, full=True, reduction="none"),
     lambda r, dt: [_n(r, dt, 3, 4), _n(r, dt, 3, 4), _prob(r, dt, 3)], True),
]
IDS = [o[0] for o in OPS]


def _rg(name, arrays):
    """requires_grad per array: float arrays, except the weights, which have no gradient (as PyTorch)."""
    const = ([2, 3] if name == "bce_logits_w_pw" else [2] if name.startswith("bce_") and "logits" not in name
             else [1] if name.startswith("soft_margin") else [])
    return [a.dtype.kind == "f" and i not in const for i, a in enumerate(arrays)]


def _mt(arrays, name=""):
    return [t64(a, rg) if a.dtype.kind == "f" else mt.tensor(a) for a, rg in zip(arrays, _rg(name, arrays))]


@pytest.mark.parametrize("name,ours,theirs,make,gg", OPS, ids=IDS)
def test_gradcheck(name, ours, theirs, make, gg, rng):
    args = _mt(make(rng, np.float64), name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gradcheck(ours, tuple(args))
        if gg:
            assert gradgradcheck(ours, tuple(args))


@pytest.mark.parametrize("name,ours,theirs,make,gg", [o for o in OPS if o[0].endswith("none")],
                         ids=[i for i in IDS if i.endswith("none")])
def test_gradcheck_non_contiguous_input(name, ours, theirs, make, gg, rng):
    arrays = make(rng, np.float64)
    x = t64(np.ascontiguousarray(np.swapaxes(arrays[0], 0, -1)))  # a contiguous leaf; the op sees its transpose
    rest = _mt(arrays, name)[1:]
    assert gradcheck(lambda xt, *r: ours(xt.transpose(0, -1) if xt.ndim >= 2 else xt, *r), (x, *rest))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs,make,gg", OPS, ids=IDS)
def test_matches_torch(name, ours, theirs, make, gg, dtype, rng):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        arrays = make(rng, dtype)
        compare_with_torch(ours, theirs, arrays, requires_grad=_rg(name, arrays))


# ---------------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------------


@given(shape=small_shapes, seed=st.integers(0, 2**31 - 1), delta=st.floats(0.1, 3.0))
def test_huber_family_properties(shape, seed, delta):
    r = np.random.default_rng(seed)
    x, t = mt.tensor(np.asarray(r.standard_normal(shape) * 3)), mt.tensor(np.asarray(r.standard_normal(shape) * 3))
    h = huber_loss(x, t, reduction="none", delta=delta).array
    s = smooth_l1_loss(x, t, reduction="none", beta=delta).array
    l1 = l1_loss(x, t, reduction="none").array
    np.testing.assert_allclose(h, delta * s, rtol=1e-12, atol=1e-12)  # huber = β·smooth_l1
    assert np.all(h <= delta * l1 + 1e-12) and np.all(h >= 0)
    np.testing.assert_allclose(l1_loss(x, t, reduction="sum").array, l1.sum(), rtol=1e-12, atol=1e-12)


@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), seed=st.integers(0, 2**31 - 1),
       scale=st.sampled_from([1.0, 30.0, 1e3]))
def test_bce_with_logits_equals_bce_of_sigmoid_and_stays_finite(shape, seed, scale):
    r = np.random.default_rng(seed)
    x, t = r.standard_normal(shape) * scale, r.uniform(0, 1, shape)
    ours = binary_cross_entropy_with_logits(mt.tensor(x), mt.tensor(t), reduction="none").array
    assert np.all(np.isfinite(ours))
    ref = F.binary_cross_entropy_with_logits(torch.tensor(x), torch.tensor(t), reduction="none").numpy()
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-10 * max(1.0, scale))
    if scale == 1.0:
        p = 1 / (1 + np.exp(-x))
        np.testing.assert_allclose(binary_cross_entropy(mt.tensor(p), mt.tensor(t), reduction="none").array, ours,
                                   rtol=1e-8, atol=1e-10)


@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), seed=st.integers(0, 2**31 - 1))
def test_kl_div_is_nonnegative_for_distributions(shape, seed):
    r = np.random.default_rng(seed)
    p, q = r.dirichlet(np.ones(shape[-1]), shape[:-1]), r.dirichlet(np.ones(shape[-1]), shape[:-1])
    v = kl_div(mt.tensor(np.log(q)), mt.tensor(p), reduction="batchmean").item()
    assert v >= -1e-12
    assert abs(kl_div(mt.tensor(np.log(p)), mt.tensor(p), reduction="sum").item()) < 1e-12


@given(shape=small_shapes, n=st.integers(1, 5), seed=st.integers(0, 2**31 - 1))
def test_one_hot_property(shape, n, seed):
    idx = np.random.default_rng(seed).integers(0, n, shape)
    out = one_hot(mt.tensor(idx), n)
    assert out.dtype == np.int64 and out.shape == (*shape, n)
    np.testing.assert_array_equal(out.array, F.one_hot(torch.tensor(idx), n).numpy())
    if idx.size:
        np.testing.assert_array_equal(out.array.argmax(-1), idx)


# ---------------------------------------------------------------------------------------------------
# Edges: kinks, extremes, empty, dtypes, legacy arguments
# ---------------------------------------------------------------------------------------------------


def test_kinks_match_torch():
    x = np.array([0.0, 0.5, -0.5, 1.0, -1.0, 2.0])
    t = np.zeros(6)
    for ours, theirs in [(lambda a, b: l1_loss(a, b, reduction="none"), lambda a, b: F.l1_loss(a, b, reduction="none")),
                         (lambda a, b: smooth_l1_loss(a, b, reduction="none", beta=0.5),
                          lambda a, b: F.smooth_l1_loss(a, b, reduction="none", beta=0.5)),
                         (lambda a, b: huber_loss(a, b, reduction="none"), lambda a, b: F.huber_loss(a, b, reduction="none")),
                         (lambda a, b: margin_ranking_loss(a, b, -mt.ones(6, dtype=mt.float64), 0.5, reduction="none"),
                          lambda a, b: F.margin_ranking_loss(a, b, -torch.ones(6, dtype=torch.float64), 0.5,
                                                             reduction="none"))]:
        compare_with_torch(ours, theirs, [x, t])


def test_bce_clamps_and_extremes_match_torch():
    x, t = np.array([0.0, 1.0, 0.0, 1.0, 0.5]), np.array([0.0, 1.0, 1.0, 0.0, 0.5])
    compare_with_torch(lambda a, b: binary_cross_entropy(a, b, reduction="none"),
                       lambda a, b: F.binary_cross_entropy(a, b, reduction="none"), [x, t], rtol=1e-8)  # dx ~ 1e12
    out = binary_cross_entropy(mt.tensor(x), mt.tensor(t), reduction="none").array
    np.testing.assert_allclose(out[2:4], [100.0, 100.0])  # log 0 clamped at -100, as PyTorch


def test_bce_with_logits_huge_logits():
    x, t = np.array([-1e4, 1e4, -800.0, 800.0, 0.0]), np.array([1.0, 0.0, 0.0, 1.0, 0.5])
    compare_with_torch(lambda a, b: binary_cross_entropy_with_logits(a, b, reduction="none"),
                       lambda a, b: F.binary_cross_entropy_with_logits(a, b, reduction="none"), [x, t])
    compare_with_torch(lambda a, b: binary_cross_entropy_with_logits(a, b, reduction="none"),
                       lambda a, b: F.binary_cross_entropy_with_logits(a, b, reduction="none"),
                       [x.astype(np.float32), t.astype(np.float32)])


def test_soft_margin_stays_finite_where_torch_overflows():
    # log1p(exp(800)) overflows in PyTorch (inf); the loss is 800 + log1p(e^-800) = 800.
    out = soft_margin_loss(mt.tensor([-800.0, 800.0]), mt.tensor([1.0, 1.0]), reduction="none").array
    np.testing.assert_allclose(out, [800.0, 0.0], atol=1e-300)
    assert torch.isinf(F.soft_margin_loss(torch.tensor([-800.0]), torch.tensor([1.0])))


def test_kl_div_zero_and_negative_targets_match_torch():
    x, t = np.array([-1.0, 0.3, 1.0, 0.2]), np.array([0.0, 0.7, 1.0, -1.0])
    compare_with_torch(lambda a, b: kl_div(a, b, reduction="none"), lambda a, b: F.kl_div(a, b, reduction="none"),
                       [x, t], requires_grad=[True, False])


def test_kl_div_target_gradient_at_zero_is_nan_as_torch():
    x, t = np.array([-1.0, 0.3]), np.array([0.0, 0.7])
    compare_with_torch(lambda a, b: kl_div(a, b, reduction="sum"), lambda a, b: F.kl_div(a, b, reduction="sum"), [x, t])


def test_poisson_full_target_gradient_at_zero_follows_the_math():
    # Stirling's term is 0 for target <= 1, so d loss / d target = -input there; PyTorch gives
    # NaN at target = 0 (0·log 0 in the masked branch). Finite differences decide.
    x = mt.tensor([0.5, 0.3, 1.0], dtype=mt.float64)
    t = t64([0.0, 0.7, 3.0])
    poisson_nll_loss(x, t, full=True, reduction="sum").backward()
    np.testing.assert_allclose(t.grad.array[:2], [-0.5, -0.3])
    assert gradcheck(lambda b: poisson_nll_loss(x, b, full=True, reduction="sum"), (t64([0.2, 0.7, 3.0]),))
    tt = torch.tensor([0.0, 0.7, 3.0], dtype=torch.float64, requires_grad=True)
    F.poisson_nll_loss(torch.tensor([0.5, 0.3, 1.0], dtype=torch.float64), tt, full=True, reduction="sum").backward()
    assert torch.isnan(tt.grad[0])  # PyTorch's NaN; when it is fixed, drop this line


def test_empty_inputs_match_torch():
    e = np.zeros((0, 3))
    for red in RED:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for ours, theirs in [(l1_loss, F.l1_loss), (smooth_l1_loss, F.smooth_l1_loss), (huber_loss, F.huber_loss),
                                 (binary_cross_entropy_with_logits, F.binary_cross_entropy_with_logits),
                                 (kl_div, F.kl_div), (soft_margin_loss, F.soft_margin_loss)]:
                compare_with_torch(lambda a, b, o=ours, red=red: o(a, b, reduction=red),
                                   lambda a, b, o=theirs, red=red: o(a, b, reduction=red), [e, e],
                                   requires_grad=[True, False])
    compare_with_torch(lambda a, b: kl_div(a, b, reduction="batchmean"),
                       lambda a, b: F.kl_div(a, b, reduction="batchmean"), [e, e])


def test_float16_and_mixed_dtypes_match_torch(rng):
    x, t = rng.standard_normal((3, 4)).astype(np.float16), rng.standard_normal((3, 4)).astype(np.float16)
    compare_with_torch(lambda a, b: huber_loss(a, b), lambda a, b: F.huber_loss(a, b), [x, t])
    compare_with_torch(lambda a, b: l1_loss(a, b), lambda a, b: F.l1_loss(a, b),
                       [x.astype(np.float32), t.astype(np.float64)])


def test_legacy_size_average_reduce_map_as_torch(rng):
    x, t = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    for sa, rd in [(False, None), (None, False), (True, True), (False, True)]:
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            ours = l1_loss(mt.tensor(x), mt.tensor(t), size_average=sa, reduce=rd)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = F.l1_loss(torch.tensor(x), torch.tensor(t), size_average=sa, reduce=rd)
        np.testing.assert_allclose(ours.array, theirs.numpy(), rtol=1e-12)


def test_warnings_as_torch():
    with pytest.warns(UserWarning, match=r"target size \(4,\) that is different to the input size \(3, 4\)"):
        l1_loss(mt.zeros(3, 4), mt.zeros(4))
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        kl_div(mt.zeros(3, 4), mt.zeros(3, 4))


# ---------------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------------


def test_bad_input():
    z = mt.zeros(3, 2)
    with pytest.raises(ValueError, match="'avg' is not a valid value for reduction"):
        l1_loss(z, z, reduction="avg")
    with pytest.raises(RuntimeError, match=r"shapes \(3, 2\) and \(4, 2\) do not broadcast"), \
            pytest.warns(UserWarning, match="different to the input size"):
        l1_loss(z, mt.zeros(4, 2))
    with pytest.raises(TypeError, match="expected a floating point tensor.*got int64"):
        l1_loss(mt.tensor([1, 2]), mt.tensor([1, 2]))
    with pytest.raises(TypeError, match="target must be a Tensor, got list"):
        l1_loss(z, [1.0])
    with pytest.raises(RuntimeError, match="negative values for beta, got beta=-1.0"):
        smooth_l1_loss(z, z, beta=-1)
    with pytest.raises(RuntimeError, match="non-positive values for delta, got delta=0.0"):
        huber_loss(z, z, delta=0)
    with pytest.raises(ValueError, match=r"Weights and input must have the same size: input \(3, 2\), weight \(2,\)"):
        l1_loss(z, z, weight=mt.ones(2))
    with pytest.raises(RuntimeError, match="between 0 and 1, got 1.5"):
        binary_cross_entropy(mt.tensor([1.5]), mt.tensor([1.0]))
    with pytest.raises(RuntimeError, match="between 0 and 1, got nan"):
        binary_cross_entropy(mt.tensor([float("nan")]), mt.tensor([1.0]))
    with pytest.raises(ValueError, match=r"Target size \(2,\) must be the same as input size \(3, 2\)"):
        binary_cross_entropy_with_logits(z, mt.zeros(2))
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'pos_weight'"):
        binary_cross_entropy_with_logits(z, z, pos_weight=mt.ones(2, requires_grad=True))
    with pytest.raises(RuntimeError, match=r"shapes \(3, 2\) and \(3,\) do not broadcast"):
        binary_cross_entropy_with_logits(z, z, pos_weight=mt.ones(3))
    with pytest.raises(RuntimeError, match=r"pos_weight of shape \(2, 2\) does not broadcast to the input's shape \(1, 2\)"):
        binary_cross_entropy_with_logits(mt.zeros(1, 2), mt.zeros(1, 2), pos_weight=mt.ones(2, 2))
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'target'"):
        soft_margin_loss(z, mt.ones(3, 2, requires_grad=True))
    with pytest.raises(RuntimeError, match="1D target tensor expects 2D input tensors.*\\[3\\] and \\[3\\]"):
        cosine_embedding_loss(mt.zeros(3), mt.zeros(3), mt.ones(1))
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected, .* got a 2D target"):
        cosine_embedding_loss(z, z, z)
    with pytest.raises(RuntimeError, match=r"same dimension .*target: \(2,\)"):
        margin_ranking_loss(z, z, mt.zeros(2))
    with pytest.raises(RuntimeError, match="anchor 2D, positive 2D, and negative 1D"):
        triplet_margin_loss(z, z, mt.zeros(2))
    with pytest.raises(ValueError, match="margin must be greater than 0, got 0"):
        triplet_margin_loss(z, z, z, margin=0)
    with pytest.raises(ValueError, match="var has negative"):
        gaussian_nll_loss(z, z, -1.0)
    with pytest.raises(ValueError, match=r"var is of incorrect size: input \(3, 2\), var \(2,\)"):
        gaussian_nll_loss(z, z, mt.ones(2))
    with pytest.raises(RuntimeError, match="type LongTensor, got int32"):
        one_hot(mt.tensor(np.array([1], dtype=np.int32)))
    with pytest.raises(RuntimeError, match="empty tensor"):
        one_hot(mt.tensor(np.zeros(0, dtype=np.int64)))
    with pytest.raises(RuntimeError, match="non-negative, got -1"):
        one_hot(mt.tensor([-1]))
    with pytest.raises(RuntimeError, match=r"smaller than num_classes \(3\), got 3"):
        one_hot(mt.tensor([3]), 3)

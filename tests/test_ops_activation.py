"""Activation ops: gradcheck (also non-contiguous), gradgradcheck, PyTorch comparison (float64/float32,
at the kinks too), properties, extreme values against the math, dtypes, and bad input."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln import ops as A  # every activation is an op of the package

import strategies as S
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch

F = torch.nn.functional

# ================================================================================ strategies (this file)


# ================================================================================ the table

def _away(*kinks, gap=0.02):
    """Push values within ``gap`` of a kink away from it (finite differences must not straddle one)."""
    def f(a):
        for k in kinks:
            a = np.where(np.abs(a - k) < gap, a + 3 * gap, a)
        return a
    return f


def _scaled(s, *kinks):
    return lambda a: _away(*kinks)(a * s)


# name, ours, theirs, domain for finite differences, kinks (checked against PyTorch exactly)
OPS = [
    ("silu", A.silu, F.silu, None, []),
    ("mish", A.mish, F.mish, None, []),
    ("softplus", A.softplus, F.softplus, None, []),
    ("softplus_beta_thr", lambda x: A.softplus(x, beta=2.0, threshold=3.0),
     lambda x: F.softplus(x, beta=2.0, threshold=3.0), _away(1.5), [1.5]),
    ("softplus_neg_beta", lambda x: A.softplus(x, -1.5, 4.0), lambda x: F.softplus(x, -1.5, 4.0), _away(-4 / 1.5),
     [-4 / 1.5]),
    ("logsigmoid", A.logsigmoid, F.logsigmoid, None, []),
    ("softsign", A.softsign, F.softsign, _away(0.0), [0.0]),
    ("tanhshrink", A.tanhshrink, F.tanhshrink, None, []),
    ("elu", A.elu, F.elu, _away(0.0), [0.0]),
    ("elu_alpha", lambda x: A.elu(x, alpha=0.5), lambda x: F.elu(x, alpha=0.5), _away(0.0), [0.0]),
    ("selu", A.selu, F.selu, _away(0.0), [0.0]),
    ("celu", lambda x: A.celu(x, 2.0), lambda x: F.celu(x, 2.0), _away(0.0), [0.0]),
    ("leaky_relu", A.leaky_relu, F.leaky_relu, _away(0.0), [0.0]),
    ("leaky_relu_0.2", lambda x: A.leaky_relu(x, 0.2), lambda x: F.leaky_relu(x, 0.2), _away(0.0), [0.0]),
    ("rrelu_eval", A.rrelu, F.rrelu, _away(0.0), [0.0]),
    ("hardtanh", A.hardtanh, F.hardtanh, _scaled(2, -1, 1), [-1.0, 1.0]),
    ("hardtanh_args", lambda x: A.hardtanh(x, -2.0, 0.5), lambda x: F.hardtanh(x, -2.0, 0.5),
     _scaled(2, -2, 0.5), [-2.0, 0.5]),
    ("relu6", A.relu6, F.relu6, _scaled(4, 0, 6), [0.0, 6.0]),
    ("hardsigmoid", A.hardsigmoid, F.hardsigmoid, _scaled(3, -3, 3), [-3.0, 3.0]),
    ("hardswish", A.hardswish, F.hardswish, _scaled(3, -3, 3), [-3.0, 3.0]),
    ("threshold", lambda x: A.threshold(x, 0.1, 20.0), lambda x: F.threshold(x, 0.1, 20.0), _away(0.1), [0.1]),
    ("softshrink", A.softshrink, F.softshrink, _away(-0.5, 0.5), [-0.5, 0.5]),
    ("softshrink_1", lambda x: A.softshrink(x, 1.0), lambda x: F.softshrink(x, 1.0), _away(-1, 1), [-1.0, 1.0]),
    ("hardshrink", A.hardshrink, F.hardshrink, _away(-0.5, 0.5), [-0.5, 0.5]),
    ("glu", A.glu, F.glu, None, []),
    ("glu_dim0", lambda x: A.glu(x, 0), lambda x: F.glu(x, 0), None, []),
    ("softmin", lambda x: A.softmin(x, 1), lambda x: F.softmin(x, 1), None, []),
    ("softmin_neg", lambda x: A.softmin(x, -1), lambda x: F.softmin(x, -1), None, []),
]
IDS = [o[0] for o in OPS]
ELEMENTWISE = [o for o in OPS if not o[0].startswith(("glu", "softmin"))]


# PyTorch's float64 hardsigmoid backward multiplies by the float32 constant 1/6 (0.16666667163...),
# 3e-8 off; ours uses 1/6 in the input's dtype (float64 finite differences agree with ours), so the
# float64 comparison allows that much.
TORCH_F64_TOL = {"hardsigmoid": 1e-7}


def _tol(name, dtype):
    t = TORCH_F64_TOL.get(name) if np.dtype(dtype) == np.float64 else None
    return {"rtol": t, "atol": t}


def _input(rng, shape, domain, dtype=np.float64):
    a = rng.standard_normal(shape)
    return (domain(a) if domain else a).astype(dtype)


# ================================================================================ 1. finite differences


@pytest.mark.parametrize("name,ours,theirs,domain,kinks", OPS, ids=IDS)
def test_gradcheck_and_gradgradcheck(name, ours, theirs, domain, kinks, rng):
    x = t64(_input(rng, (4, 2), domain))
    assert gradcheck(ours, (x,))
    assert gradcheck(lambda t: ours(t.transpose(0, 1)), (x,))  # non-contiguous (2, 4) view
    assert gradgradcheck(ours, (x,))


# ================================================================================ 2. against PyTorch


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs,domain,kinks", OPS, ids=IDS)
def test_matches_torch(name, ours, theirs, domain, kinks, dtype, rng, device):
    compare_with_torch(ours, theirs, [_input(rng, (4, 3, 6), lambda a: a * 3, dtype)], device=device, **_tol(name, dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs,domain,kinks", [o for o in ELEMENTWISE if o[4]], ids=lambda v: str(v)[:20])
def test_gradient_at_the_kinks_is_pytorchs(name, ours, theirs, domain, kinks, dtype):
    # Exactly at each kink (and just beside it): values and gradients equal PyTorch's.
    pts = [p for k in kinks for p in (k - 1e-3, k, k + 1e-3)]
    compare_with_torch(ours, theirs, [np.array(pts, dtype=dtype)], **_tol(name, dtype))


def test_second_derivative_matches_torch(rng):
    for name, ours, theirs, domain, _ in OPS:
        a = _input(rng, (4, 6), domain)
        x, xt = t64(a), torch.tensor(a, requires_grad=True)
        v = rng.standard_normal(ours(x).shape)
        (g,) = mt.autograd.grad(ours(x), x, mt.tensor(v), create_graph=True)
        (gt,) = torch.autograd.grad(theirs(xt), xt, torch.tensor(v), create_graph=True)
        try:
            (ggt,) = torch.autograd.grad((gt * gt).sum(), xt)
        except RuntimeError:  # "derivative for aten::hardsigmoid_backward is not implemented"
            continue
        if not g.requires_grad:
            # piecewise linear (leaky_relu, hardtanh, shrink...): dx = dy·const has no path back to
            # x here, where PyTorch keeps one that gives zeros; the second derivative is 0 either way
            assert np.all(ggt.numpy() == 0), name
            continue
        (gg,) = mt.autograd.grad((g * g).sum(), x)
        np.testing.assert_allclose(gg.array, ggt.numpy(), rtol=1e-9, atol=1e-12, err_msg=name)


def test_prelu_matches_torch_for_shared_and_per_channel_weights(rng, device):
    for xs, ws in [((2, 3, 4, 5), (3,)), ((2, 3), (1,)), ((2, 3), ()), ((5,), (1,)), ((), (1,)), ((4, 3, 2), (3,))]:
        for dtype in (np.float64, np.float32):
            x = np.asarray(rng.standard_normal(xs) * 2, dtype=dtype)
            x.flat[0] = 0.0  # the kink: dx = weight, dweight += 0 (as PyTorch)
            w = np.asarray(rng.uniform(-0.5, 0.5, ws), dtype=dtype)
            compare_with_torch(A.prelu, F.prelu, [x, w], device=device)


def test_prelu_gradcheck_both_inputs_and_method():
    rng = np.random.default_rng(3)
    x, w = t64(_away(0.0)(rng.standard_normal((2, 3, 4)))), t64(rng.uniform(0.1, 0.5, 3))
    assert gradcheck(A.prelu, (x, w))
    assert gradgradcheck(A.prelu, (x, w))
    assert gradcheck(lambda t, w: A.prelu(t.transpose(0, 2).transpose(1, 2), w), (t64(rng.standard_normal((3, 2, 4))), w))
    np.testing.assert_array_equal(x.prelu(w).array, A.prelu(x, w).array)


def test_hardshrink_method_and_rrelu_training_noise():
    x = mt.tensor([-1.0, -0.2, 0.3, 2.0], dtype="float64")
    np.testing.assert_array_equal(x.hardshrink(0.25).array, [-1.0, 0.0, 0.3, 2.0])
    mt.manual_seed(5)
    xr = mt.tensor(-np.linspace(0.5, 3, 200), requires_grad=True)
    y = A.rrelu(xr, 0.1, 0.3, training=True)
    y.sum().backward()
    slope = y.array / xr.array
    assert np.all((slope >= 0.1) & (slope <= 0.3)) and slope.std() > 0.03  # one slope per element
    np.testing.assert_allclose(xr.grad.array, slope, rtol=1e-6)  # the gradient is the drawn slope
    mt.manual_seed(5)
    np.testing.assert_array_equal(A.rrelu(xr, 0.1, 0.3, training=True).array, y.array)  # seeded
    np.testing.assert_array_equal(A.rrelu(mt.tensor([1.0, 2.0]), training=True).array, [1.0, 2.0])


# ================================================================================ 3. properties


@given(st.sampled_from(ELEMENTWISE).flatmap(lambda op: st.tuples(st.just(op), S.array_with_kinks(op[4] or [0.0]))))
def test_property_matches_torch_on_any_shape_including_kinks(op_and_array):
    (name, ours, theirs, _, _), a = op_and_array
    compare_with_torch(ours, theirs, [a], **_tol(name, a.dtype))


@given(S.nonscalar_shapes.flatmap(lambda s: S.arrays(s, min_value=-50, max_value=50)))
def test_property_bounds_and_identities(a):
    x = mt.tensor(a)
    assert np.all(np.abs(A.softsign(x).array) < 1)
    assert np.all((A.hardsigmoid(x).array >= 0) & (A.hardsigmoid(x).array <= 1))
    assert np.all(A.softplus(x).array >= np.maximum(a, 0))  # log(1 + e^x) >= max(x, 0)
    np.testing.assert_allclose(A.logsigmoid(x).array, -A.softplus(-x).array, atol=1e-12)
    np.testing.assert_allclose(A.relu6(x).array, A.hardtanh(x, 0.0, 6.0).array)
    np.testing.assert_allclose(A.celu(x, 1.0).array, A.elu(x).array, atol=1e-12)
    np.testing.assert_allclose(A.hardswish(x).array, a * A.hardsigmoid(x).array, atol=1e-12)
    np.testing.assert_allclose(A.softshrink(x, 0.3).array + np.clip(a, -0.3, 0.3), a, atol=1e-12)


@given(S.array_and_dim())
def test_property_glu_and_softmin_along_any_dim(a_dim):
    a, dim = a_dim
    a = np.concatenate([a, a[::-1] * 0.5], axis=dim)  # even along dim
    compare_with_torch(lambda x: A.glu(x, dim), lambda x: F.glu(x, dim), [a])
    compare_with_torch(lambda x: A.softmin(x, dim), lambda x: F.softmin(x, dim), [a])


# ================================================================================ edge values


# The limits of the math at ±inf where PyTorch returns NaN (value or gradient); ours must give these.
INF_LIMITS = {  # name: (y(-inf), y(inf), y'(-inf), y'(inf)); None = as PyTorch
    "silu": (0.0, None, 0.0, 1.0),  # x·σ(x) → 0 at -inf; σ(x)(1 + x(1 - σ(x))) → 0, 1
    "mish": (0.0, None, 0.0, 1.0),  # x·tanh(softplus(x)) ~ x·e^x → 0
    "softsign": (-1.0, 1.0, 0.0, 0.0),  # x/(1 + |x|) → ±1, 1/(1 + |x|)² → 0
    "hardswish": (0.0, None, None, None),  # 0 for every x <= -3
}


@pytest.mark.parametrize("name,ours,theirs,domain,kinks", ELEMENTWISE, ids=[o[0] for o in ELEMENTWISE])
def test_huge_and_infinite_inputs_give_the_limits_without_nan(name, ours, theirs, domain, kinks):
    pts = np.array([-np.inf, -1e4, -100.0, 100.0, 1e4, np.inf])
    for dtype in (np.float32, np.float64):
        x = mt.tensor(pts.astype(dtype), requires_grad=True)
        dy = np.array([0.7, -1.3, 2.1, -0.4, 1.9, -2.5])  # a non-uniform upstream gradient, the same for both
        with np.errstate(over="raise", invalid="raise", divide="raise"):  # none outside the guarded spots
            y = ours(x)
            y.backward(mt.tensor(dy.astype(dtype)))
        xt = torch.tensor(pts, requires_grad=True)  # float64 reference
        yt = theirs(xt)
        yt.backward(torch.tensor(dy))
        want_y, want_g = yt.detach().numpy().copy(), xt.grad.numpy().copy()
        limits = INF_LIMITS.get(name, (None,) * 4)
        for (i, arr, scale), lim in zip([(0, want_y, 1.0), (5, want_y, 1.0), (0, want_g, dy[0]), (5, want_g, dy[5])],
                                        limits):
            if lim is not None:  # the limits of y and of dy/dx; the gradient is dy times the latter
                assert math.isnan(arr[i]) or arr[i] == lim * scale, f"{name}: PyTorch now agrees with the math?"
                arr[i] = lim * scale
        assert not np.isnan(y.array).any() and not np.isnan(x.grad.array).any(), name
        assert y.dtype == dtype and x.grad.dtype == dtype
        tiny = 1e-37 if dtype == np.float32 else 1e-300  # float32 denormals round differently
        np.testing.assert_allclose(y.array, want_y, rtol=1e-6, atol=tiny, err_msg=f"{name} values")
        np.testing.assert_allclose(x.grad.array, want_g, rtol=1e-6, atol=tiny, err_msg=f"{name} grads")


def test_stable_forms_are_exact_far_out():
    x = mt.tensor(np.array([-1e4, -200.0, 200.0, 1e4], dtype=np.float32))
    np.testing.assert_array_equal(A.softplus(x).array, [0.0, 0.0, 200.0, 1e4])
    np.testing.assert_array_equal(A.logsigmoid(x).array, [-1e4, -200.0, 0.0, 0.0])
    np.testing.assert_allclose(A.softplus(mt.tensor([-30.0], dtype="float64")).array, [math.exp(-30)], rtol=1e-12)
    np.testing.assert_allclose(A.logsigmoid(mt.tensor([30.0], dtype="float64")).array, [-math.exp(-30)], rtol=1e-12)
    # leaky_relu with slope 0 is relu: 0 at -inf (PyTorch: -inf·0 = NaN)
    np.testing.assert_array_equal(A.leaky_relu(mt.tensor([-np.inf, -1.0, 2.0]), 0.0).array, [0.0, 0.0, 2.0])


def test_nan_propagates_and_its_gradient_follows_torchs_comparisons():
    # e.g. hardtanh'(NaN) = 1 and leaky_relu'(NaN) = negative_slope, as PyTorch's kernels decide
    for name, ours, theirs, _, _ in ELEMENTWISE:
        compare_with_torch(ours, theirs, [np.array([np.nan, 1.0, -2.0])], **_tol(name, np.float64))


def test_relu_passes_the_gradient_at_nan_as_torch():
    # relu'(NaN) has no mathematical value; PyTorch's threshold_backward keeps dy where not x <= 0, NaN
    # included (this was 0: a NaN input got a clean zero gradient). relu(NaN) is NaN in both.
    for relu in (mt.relu, mt.nn.functional.relu, lambda x: x.relu()):
        compare_with_torch(relu, torch.relu, [np.array([np.nan, 1.0, -2.0, 0.0, -0.0, np.inf, -np.inf])])
    x = mt.tensor([np.nan, -1.0], requires_grad=True)
    mt.nn.ReLU()(x).backward(mt.tensor([3.0, 5.0]))
    assert x.grad.array.tolist() == [3.0, 0.0]


def test_sign_and_abs_at_nan_stay_nan_on_purpose():
    # docs/torch_compat.md: sign(NaN) and abs'(NaN) are NaN here (the math), 0 in PyTorch
    x = mt.tensor([np.nan, -2.0, 0.0, 3.0], requires_grad=True)
    assert np.isnan(mt.sign(x).array[0]) and mt.sign(x).array[1:].tolist() == [-1.0, 0.0, 1.0]
    mt.abs(x).sum().backward()
    assert np.isnan(x.grad.array[0]) and x.grad.array[1:].tolist() == [-1.0, 0.0, 1.0]


def test_zero_d_empty_and_float16():
    for name, ours, theirs, _, _ in ELEMENTWISE:
        compare_with_torch(ours, theirs, [np.array(-0.7)], **_tol(name, np.float64))
        compare_with_torch(ours, theirs, [np.zeros((0, 3))])
        compare_with_torch(ours, theirs, [np.linspace(-4, 4, 9).astype(np.float16)])  # fp16 in, fp16 out
    compare_with_torch(A.glu, F.glu, [np.zeros((2, 0))])
    compare_with_torch(lambda x: A.glu(x, 0), lambda x: F.glu(x, 0), [np.zeros((0, 4))])


def test_integer_inputs_as_pytorch():
    a = np.array([-3, -1, 0, 2, 7])
    for ours, theirs in [(A.hardtanh, F.hardtanh), (A.relu6, F.relu6), (A.softsign, F.softsign),
                         (A.tanhshrink, F.tanhshrink), (lambda x: A.hardtanh(x, -1.5, 2.5), lambda x: F.hardtanh(x, -1.5, 2.5)),
                         (lambda x: A.threshold(x, 1.5, 0.5), lambda x: F.threshold(x, 1.5, 0.5))]:
        compare_with_torch(ours, theirs, [a])  # keeps int64 (hardtanh, relu6, threshold) or gives float32


# ================================================================================ 4. bad input


@pytest.mark.parametrize("name,ours,theirs,domain,kinks", [o for o in OPS if not o[0].startswith(
    ("hardtanh", "relu6", "threshold", "softsign", "tanhshrink"))], ids=lambda v: str(v)[:20])
def test_integer_input_raises_naming_the_dtype(name, ours, theirs, domain, kinks):
    with pytest.raises(TypeError, match="expected a floating point tensor.*got int64"):
        ours(mt.tensor([[1, 2], [3, 4]]))
    with pytest.raises(NotImplementedError):  # PyTorch code catching NotImplementedError/RuntimeError works
        ours(mt.tensor([[1, 2], [3, 4]]))


def test_bad_arguments_name_what_was_expected():
    x = mt.randn(2, 3)
    with pytest.raises(TypeError, match=r"silu\(\): argument 'input' must be a Tensor, got float"):
        A.silu(1.0)
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is size 3"):
        A.glu(x)
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        A.glu(mt.tensor(1.0))
    with pytest.raises(IndexError, match="dimension 2 is out of range"):
        A.glu(mt.randn(2, 4), 2)
    with pytest.raises(TypeError, match="dim must be an int"):
        A.glu(mt.randn(2, 4), 1.0)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        A.hardtanh(x, 1.0, -1.0)
    with pytest.raises(RuntimeError, match="Bool inputs not supported for hardtanh"):
        A.relu6(mt.tensor([True]))
    with pytest.raises(TypeError, match="bool"):
        A.threshold(mt.tensor([True]), 0.0, 1.0)
    with pytest.raises(RuntimeError, match="alpha cannot be 0 for CELU"):
        A.celu(x, 0.0)
    with pytest.raises(RuntimeError, match="lambda must be greater or equal to 0, but found to be -1"):
        A.softshrink(x, -1.0)
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper bound"):
        A.rrelu(x, 0.5, 0.1)
    with pytest.raises(TypeError, match="argument 'negative_slope' must be a number, got str"):
        A.leaky_relu(x, "0.1")
    with pytest.raises(TypeError, match="argument 'beta' must be a number, got NoneType"):
        A.softplus(x, None)
    with pytest.raises(TypeError, match="floating point tensor.*int64"):
        A.softmin(mt.tensor([1, 2]), 0)
    np.testing.assert_allclose(A.softmin(mt.tensor([1, 2]), 0, dtype="float32").array, [0.7310586, 0.2689414], rtol=1e-6)
    assert A.softmin(x, 1, dtype="float64").dtype == np.float64


def test_prelu_bad_weight_names_sizes_dims_and_dtypes():
    x = mt.randn(2, 3)
    with pytest.raises(RuntimeError, match="Found parameter numbers = 4 and channel size = 3"):
        A.prelu(x, mt.randn(4))
    with pytest.raises(RuntimeError, match="Found parameter numbers = 4 and channel size = 1"):
        A.prelu(mt.randn(4), mt.randn(4))  # under 2-D there is one channel (as PyTorch)
    with pytest.raises(RuntimeError, match="Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2"):
        A.prelu(x, mt.randn(3, 1))
    with pytest.raises(RuntimeError, match="Type promoting not supported. Got float32 and float64"):
        A.prelu(x, mt.randn(3, dtype="float64"))
    with pytest.raises(TypeError, match="argument 'weight' must be a Tensor, got float"):
        A.prelu(x, 0.25)


def test_softmin_without_dim_warns_and_uses_pytorchs_legacy_dim():
    a = np.random.default_rng(0).standard_normal((2, 3, 4))
    for arr in (a, a[0], a[0, 0]):
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
            ours = A.softmin(mt.tensor(arr))
        with pytest.warns(UserWarning):
            theirs = F.softmin(torch.tensor(arr))
        np.testing.assert_allclose(ours.array, theirs.numpy(), rtol=1e-12)


# ==================================================================================================
# gradcheck on non-contiguous leaves (issue 13): the leaf's own .array is strided and axis-reversed
# ==================================================================================================
@pytest.mark.parametrize("name,ours,theirs,domain,kinks", OPS, ids=IDS)
def test_gradcheck_noncontiguous_leaf(name, ours, theirs, domain, kinks, rng):
    gradcheck_noncontiguous(ours, [_input(rng, (4, 2), domain)], gg=True)


def test_prelu_gradcheck_noncontiguous_leaves(rng):
    gradcheck_noncontiguous(A.prelu, [_away(0.0)(rng.standard_normal((3, 4, 2))), rng.uniform(0.1, 0.5, 4)], gg=True)

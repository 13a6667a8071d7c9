"""Complex inputs of the elementwise ops, activations, log-sum-exp family, interpolation, norms-based ops and
random draws: values and gradients against PyTorch (random complex upstream gradients), complex gradcheck
(docs/complex.md), edge values, a Hypothesis property per family and bad input."""

import math

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, t64
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import complex_arrays

import minitorch_ln as mt
import minitorch_ln.nn.functional as F
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.errors import DtypeError

torch = pytest.importorskip("torch")
TF = torch.nn.functional
RNG = np.random.default_rng(11)
DTYPES = (np.complex128, np.complex64)


def cx(*shape, dtype=np.complex128, scale=1.0):
    return ((RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)) * scale).astype(dtype)


UNARY = [
    ("silu", F.silu, TF.silu), ("softsign", F.softsign, TF.softsign), ("tanhshrink", F.tanhshrink, TF.tanhshrink),
    ("sinc", mt.sinc, torch.sinc), ("asinh", mt.asinh, torch.asinh), ("atan", mt.atan, torch.atan),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,ours,theirs", UNARY, ids=[u[0] for u in UNARY])
def test_unary_match_torch(dtype, name, ours, theirs):
    x = cx(3, 4, dtype=dtype, scale=1.5)
    x[0, 0] = 0  # sinc's removable point, softsign's kink of |z|
    # PyTorch's complex silu has no autograd ("does not support automatic differentiation"): values only;
    # ours has the composed gradient, checked by gradcheck below
    compare_with_torch(ours, theirs, [x], requires_grad=[name != "silu"])


@pytest.mark.parametrize("name,ours,theirs", UNARY, ids=[u[0] for u in UNARY])
def test_unary_gradcheck_complex(name, ours, theirs):
    gradcheck_noncontiguous(ours, [cx(2, 3)], gg=name in ("silu", "sinc", "atan"))


def test_edge_values_against_torch():
    # zeros, large and tiny parts, infinities and NaN: each as PyTorch (every one is its own composite/kernel)
    vals = np.array([0, 1e-30 + 1e-30j, 1e3 - 2e3j, -40 + 1j, complex(np.inf, 0), complex(0, np.nan), 2 + 0.5j])
    for name, ours, theirs in UNARY:
        if name in ("asinh", "atan", "sinc"):  # NumPy's and PyTorch's complex inf handling agree only where finite
            v = vals[np.isfinite(vals)]
        else:
            v = vals[:4]
        got, want = ours(mt.tensor(v)).numpy(), theirs(torch.tensor(v)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300, err_msg=name)
    z = mt.tensor(np.array([0j, 1j]), requires_grad=True)
    mt.sinc(z).sum().real.backward()
    assert z.grad.tolist()[0] == 0  # sinc'(0) = 0, not 0/0


# ---------------------------------------------------------------- log-sum-exp family


@pytest.mark.parametrize("dtype", DTYPES)
def test_logsumexp_logcumsumexp_logaddexp_match_torch(dtype):
    x = cx(3, 5, dtype=dtype, scale=3)
    compare_with_torch(lambda t: mt.logsumexp(t, 1), lambda t: torch.logsumexp(t, 1), [x])
    compare_with_torch(lambda t: mt.logsumexp(t, (0, 1), keepdim=True), lambda t: torch.logsumexp(t, (0, 1), keepdim=True), [x])
    compare_with_torch(lambda t: mt.logcumsumexp(t, 1), lambda t: torch.logcumsumexp(t, 1), [x])
    compare_with_torch(mt.logaddexp, torch.logaddexp, [x, cx(5, dtype=dtype, scale=3)])


def test_logsumexp_of_huge_values_does_not_overflow():
    x = np.array([800 + 1j, 800 - 2j, -5 + 0j])
    want = torch.logsumexp(torch.tensor(x), 0).numpy()
    np.testing.assert_allclose(mt.logsumexp(mt.tensor(x), 0).numpy(), want, rtol=1e-14)
    np.testing.assert_allclose(mt.logaddexp(mt.tensor(x[:1]), mt.tensor(x[1:2])).numpy(),
                               torch.logaddexp(torch.tensor(x[:1]), torch.tensor(x[1:2])).numpy(), rtol=1e-14)


def test_logcumsumexp_keeps_torchs_branch():
    # PyTorch's scan leaves the imaginary part unwrapped (3 + 3 > π here): same values, same branch
    x = np.array([0.1 + 3j, 0.2 + 3j, -0.5 + 3.1j, 1 - 3j])
    np.testing.assert_allclose(mt.logcumsumexp(mt.tensor(x), 0).numpy(),
                               torch.logcumsumexp(torch.tensor(x), 0).numpy(), rtol=1e-13)


def test_log_family_gradcheck_complex():
    gradcheck_noncontiguous(lambda t: mt.logsumexp(t, 0), [cx(3, 2)], gg=True)
    gradcheck_noncontiguous(lambda t: mt.logcumsumexp(t, 1), [cx(2, 4)])
    gradcheck_noncontiguous(mt.logaddexp, [cx(2, 3), cx(3)], gg=True)


def test_logcumsumexp_refuses_a_range_that_would_underflow():
    with pytest.raises(DtypeError, match="span more than"):
        mt.logcumsumexp(mt.tensor(np.array([-1000 + 0j, 0j])), 0)


@settings(max_examples=25, deadline=None)
@given(complex_arrays(max_dims=2, max_side=4, magnitude=20.0))
def test_property_exp_of_logsumexp_is_sum_of_exp(a):
    # exp(logsumexp(z)) = Σ exp(z), and each logcumsumexp prefix likewise, whatever the branch
    z = mt.tensor(a)
    np.testing.assert_allclose(np.exp(mt.logsumexp(z, tuple(range(a.ndim))).numpy()), np.exp(a).sum(), rtol=1e-9)
    if a.ndim:
        np.testing.assert_allclose(np.exp(mt.logcumsumexp(z, 0).numpy()), np.cumsum(np.exp(a), 0), rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------- binary ops


@pytest.mark.parametrize("dtype", DTYPES)
def test_lerp_ldexp_float_power_logical_match_torch(dtype):
    a, b = cx(3, 4, dtype=dtype), cx(4, dtype=dtype)
    compare_with_torch(lambda s, e, w: mt.lerp(s, e, w), lambda s, e, w: torch.lerp(s, e, w), [a, b, cx(3, 1, dtype=dtype)])
    compare_with_torch(lambda s, e: mt.lerp(s, e, 0.7 - 0.4j), lambda s, e: torch.lerp(s, e, 0.7 - 0.4j), [a, b])
    compare_with_torch(lambda s, e: mt.lerp(s, e, 0.25), lambda s, e: torch.lerp(s, e, 0.25), [a, b])
    exps = RNG.integers(0, 4, (3, 4))  # negative int exponents: PyTorch's complex gradient is 0 there (below)
    compare_with_torch(lambda s: mt.ldexp(s, mt.tensor(exps)), lambda s: torch.ldexp(s, torch.tensor(exps)), [a])
    compare_with_torch(mt.float_power, torch.float_power, [a, b])
    compare_with_torch(lambda s: mt.float_power(s, 2.5), lambda s: torch.float_power(s, 2.5), [a])
    z = a.copy()
    z[0, :2] = 0
    for op in ("logical_and", "logical_or"):
        got = getattr(mt, op)(mt.tensor(z), mt.tensor(b)).numpy()
        np.testing.assert_array_equal(got, getattr(torch, op)(torch.tensor(z), torch.tensor(b)).numpy())


def test_ldexp_gradient_with_negative_int_exponent_is_the_math():
    # d(z·2^e)/dz = 2^e = 1/8 for e = -3; PyTorch's complex ldexp backward gives 0 there (2^e in integers)
    z = mt.tensor(np.array([1 + 1j, 2 - 1j]), requires_grad=True)
    up = np.array([1 - 2j, 0.5 + 1j])
    mt.ldexp(z, mt.tensor([-3, 2])).backward(mt.tensor(up))
    np.testing.assert_allclose(z.grad.numpy(), up * np.array([0.125, 4.0]), rtol=1e-15)
    assert gradcheck(lambda t: mt.ldexp(t, mt.tensor([-3, 2])), (t64(np.array([1 + 1j, 2 - 1j])),))


def test_lerp_and_float_power_gradcheck_catch_missing_conjugates():
    # every operand non-real, so a backward without the conjugates fails these (real inputs could not tell)
    gradcheck_noncontiguous(lambda s, e, w: mt.lerp(s, e, w), [cx(2, 3), cx(2, 3), cx(2, 3)], gg=True)
    gradcheck_noncontiguous(mt.float_power, [cx(2, 2) + 2, cx(2, 2)])
    assert gradcheck(lambda s: mt.lerp(s, s * 2, 0.3 + 0.8j), (t64(cx(3)),))


@settings(max_examples=25, deadline=None)
@given(complex_arrays(max_dims=2, max_side=4), st.floats(-2, 2), st.floats(-2, 2))
def test_property_lerp_is_affine(a, wr, wi):
    w = complex(wr, wi)
    b = np.conj(a) * 2 + 1
    got = mt.lerp(mt.tensor(a), mt.tensor(b), w).numpy()
    np.testing.assert_allclose(got, a + w * (b - a), rtol=1e-10, atol=1e-10)


# ---------------------------------------------------------------- norms-based


@pytest.mark.parametrize("dtype", DTYPES)
def test_normalize_pairwise_distance_renorm_match_torch(dtype):
    x = cx(3, 4, dtype=dtype)
    for p in (2.0, 1.0, 3.0):
        compare_with_torch(lambda t: F.normalize(t, p=p, dim=1), lambda t: TF.normalize(t, p=p, dim=1), [x])
        compare_with_torch(lambda a, b: F.pairwise_distance(a, b, p), lambda a, b: TF.pairwise_distance(a, b, p),
                           [x, cx(4, dtype=dtype)])
    compare_with_torch(lambda t: mt.renorm(t, 2, 0, 1.5), lambda t: torch.renorm(t, 2, 0, 1.5), [x * 2])


def test_norm_based_gradcheck_complex():
    gradcheck_noncontiguous(lambda t: F.normalize(t, dim=0), [cx(3, 2)], gg=True)
    gradcheck_noncontiguous(F.pairwise_distance, [cx(2, 3), cx(2, 3)])
    gradcheck_noncontiguous(lambda t: mt.renorm(t, 2, 1, 1.0), [cx(2, 3) * 2])


# ---------------------------------------------------------------- random draws


@pytest.mark.parametrize("dtype,tdtype", [(mt.complex64, "complex64"), (mt.complex128, "complex128")])
def test_complex_draws_follow_torchs_stream(dtype, tdtype):
    for n in (5, 37):  # under and over PyTorch's 16-element vectorized path
        torch.manual_seed(3)
        mt.manual_seed(3)
        want = torch.randn(n, dtype=getattr(torch, tdtype)).numpy()
        got = mt.randn(n, dtype=dtype)
        assert got.dtype == dtype
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6 if dtype == mt.complex64 else 1e-12)
        torch.manual_seed(4)
        mt.manual_seed(4)
        np.testing.assert_array_equal(mt.rand_like(got).numpy(), torch.rand_like(torch.tensor(want)).numpy())


def test_complex_normal_has_variance_one_half_per_part():
    mt.manual_seed(0)
    z = mt.randn(100_000, dtype=mt.complex128).numpy()
    # each part N(0, 1/2): sample variances within 4 standard errors (sd of a variance estimate: 0.5·√(2/n))
    se = 0.5 * math.sqrt(2 / z.size)
    assert abs(z.real.var() - 0.5) < 4 * se and abs(z.imag.var() - 0.5) < 4 * se
    assert abs(np.mean(z.real * z.imag)) < 4 * 0.5 / math.sqrt(z.size)  # independent parts


# ---------------------------------------------------------------- bad input


def test_bad_input():
    with pytest.raises(TypeError, match="weight must be a number or a Tensor"):
        mt.lerp(mt.zeros(2), mt.ones(2), 0.5j)  # a complex weight needs complex tensors
    with pytest.raises(TypeError, match="expected complex or floating point"):
        mt.logaddexp(mt.tensor([1, 2]), mt.tensor([3, 4]))
    with pytest.raises(RuntimeError, match="lerp"):
        mt.lerp(mt.tensor(cx(2)), mt.tensor(cx(2, dtype=np.complex64)), 0.5)
    assert gradgradcheck(lambda t: F.silu(t), (t64(cx(2)),))

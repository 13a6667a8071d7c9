"""torch.special and the top-level special functions (ops/special_fns.py, minitorch_ln/special.py):
PyTorch comparison (float64/float32, random upstream gradients), gradcheck (non-contiguous, second order),
edge values against the math, a Hypothesis property per family, bad input, and the torch alias."""

import math

import numpy as np
import pytest
import scipy.special as sp
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln import special
from minitorch_ln.autograd import gradcheck, gradgradcheck


def positive(rng, shape):
    return rng.uniform(0.3, 4.0, shape)


def anywhere(rng, shape):
    return rng.standard_normal(shape) * 2


def unit(rng, shape):
    return rng.uniform(0.05, 0.95, shape)


def signed_unit(rng, shape):
    return rng.uniform(-0.9, 0.9, shape)


def away_from_zero(rng, shape):
    x = rng.uniform(0.2, 3.0, shape)
    return x * rng.choice([-1.0, 1.0], shape)


# name, ours, torch's, inputs (one builder per input)
OPS = [
    ("lgamma", mt.lgamma, torch.lgamma, [positive]),
    ("lgamma_negative", mt.lgamma, torch.lgamma, [lambda r, s: -positive(r, s) + 0.5]),
    ("gammaln", special.gammaln, torch.special.gammaln, [positive]),
    ("digamma", mt.digamma, torch.digamma, [positive]),
    ("psi_method", lambda x: x.digamma(), lambda x: x.digamma(), [positive]),
    ("polygamma1", lambda x: mt.polygamma(1, x), lambda x: torch.polygamma(1, x), [positive]),
    ("polygamma3_method", lambda x: x.polygamma(3), lambda x: x.polygamma(3), [positive]),
    ("mvlgamma", lambda x: mt.mvlgamma(x + 2, 3), lambda x: torch.mvlgamma(x + 2, 3), [positive]),
    ("multigammaln", lambda x: special.multigammaln(x + 1, 2), lambda x: torch.special.multigammaln(x + 1, 2),
     [positive]),
    ("i0", mt.i0, torch.i0, [anywhere]),
    ("i0e", special.i0e, torch.special.i0e, [anywhere]),
    ("i1", special.i1, torch.special.i1, [anywhere]),
    ("i1e", special.i1e, torch.special.i1e, [anywhere]),
    ("ndtr", special.ndtr, torch.special.ndtr, [anywhere]),
    ("ndtri", special.ndtri, torch.special.ndtri, [unit]),
    ("log_ndtr", special.log_ndtr, torch.special.log_ndtr, [anywhere]),
    ("erfcx", special.erfcx, torch.special.erfcx, [anywhere]),
    ("logit", mt.logit, torch.logit, [unit]),
    ("logit_eps", lambda x: special.logit(x, eps=0.2), lambda x: torch.special.logit(x, eps=0.2), [unit]),
    ("logit_method", lambda x: x.logit(), lambda x: x.logit(), [unit]),
    ("sinc", mt.sinc, torch.sinc, [anywhere]),
    ("entr", special.entr, torch.special.entr, [positive]),
    ("xlog1py", special.xlog1py, torch.special.xlog1py, [anywhere, positive]),
    ("xlogy", special.xlogy, torch.special.xlogy, [anywhere, positive]),
    ("erf", special.erf, torch.special.erf, [anywhere]),
    ("erfc", special.erfc, torch.special.erfc, [anywhere]),
    ("erfinv", special.erfinv, torch.special.erfinv, [signed_unit]),
    ("expit", special.expit, torch.special.expit, [anywhere]),
    ("exp2", special.exp2, torch.special.exp2, [anywhere]),
    ("expm1", special.expm1, torch.special.expm1, [anywhere]),
    ("log1p", special.log1p, torch.special.log1p, [positive]),
    ("logsumexp", lambda x: special.logsumexp(x, 1), lambda x: torch.special.logsumexp(x, 1), [anywhere]),
    ("softmax", lambda x: special.softmax(x, 0), lambda x: torch.special.softmax(x, 0), [anywhere]),
    ("log_softmax_dtype", lambda x: special.log_softmax(x, 1, dtype=mt.float64),
     lambda x: torch.special.log_softmax(x, 1, dtype=torch.float64), [anywhere]),
]
IDS = [o[0] for o in OPS]
SHAPE = (3, 4)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs,builders", OPS, ids=IDS)
def test_matches_torch(name, ours, theirs, builders, dtype, rng):
    arrays = [b(rng, SHAPE).astype(dtype) for b in builders]
    tol = {"rtol": 2e-5, "atol": 2e-5} if dtype == np.float32 else {"rtol": 1e-9, "atol": 1e-9}
    compare_with_torch(ours, theirs, arrays, **tol)


@pytest.mark.parametrize("name,ours,theirs,builders", OPS, ids=IDS)
def test_gradcheck_non_contiguous(name, ours, theirs, builders, rng):
    arrays = [b(rng, SHAPE) for b in builders]
    if name == "logit_eps":  # gradcheck's step must not cross the clamp
        arrays = [np.where(np.abs(a - 0.2) < 0.01, 0.5, np.where(np.abs(a - 0.8) < 0.01, 0.5, a)) for a in arrays]
    gradcheck_noncontiguous(ours, arrays)


@pytest.mark.parametrize("name", ["lgamma", "digamma", "polygamma1", "i0", "i1", "i1e", "ndtri", "log_ndtr", "erfcx",
                                  "logit", "sinc", "entr", "xlog1py", "mvlgamma"])
def test_gradgradcheck(name, rng):
    _, ours, _, builders = OPS[IDS.index(name)]
    assert gradgradcheck(ours, tuple(t64(b(rng, (2, 3))) for b in builders))


def test_integer_inputs_give_float32_and_float16_stays_float16():
    ints = mt.tensor([1, 2, 3])
    for fn in (mt.lgamma, mt.digamma, mt.i0, mt.sinc, mt.logit, special.ndtr, special.i1e, special.entr):
        assert fn(ints).dtype == mt.float32
    h = mt.tensor(np.array([0.5, 1.5, 2.5], dtype=np.float16))
    for fn, tfn in ((mt.lgamma, torch.lgamma), (mt.digamma, torch.digamma), (special.ndtr, torch.special.ndtr)):
        ours, want = fn(h), tfn(torch.tensor(h.array))
        assert ours.dtype == mt.float16
        np.testing.assert_allclose(ours.array.astype(np.float64), want.numpy().astype(np.float64), rtol=2e-3)


# ---------------------------------------------------------------------------------------------------
# Edge values, by the math
# ---------------------------------------------------------------------------------------------------


def _a(x, dtype=np.float64):
    return mt.tensor(np.array(x, dtype=dtype))


def test_gamma_family_poles():
    inf, nan = math.inf, math.nan
    assert mt.lgamma(_a([0.0, -0.0, -1.0, -2.0, inf, -inf])).array.tolist() == [inf, inf, inf, inf, inf, inf]
    np.testing.assert_allclose(mt.lgamma(_a([1.0, 2.0, 0.5])).array, [0, 0, math.log(math.pi) / 2], atol=1e-15)
    d = mt.digamma(_a([0.0, -0.0, -1.0, -3.0, 1.0, inf])).array
    assert d[0] == -inf and d[1] == inf and np.isnan(d[2]) and np.isnan(d[3]) and d[5] == inf
    np.testing.assert_allclose(d[4], -np.euler_gamma)  # ψ(1) = -γ
    np.testing.assert_allclose(mt.polygamma(1, _a([1.0])).array, [math.pi**2 / 6])  # ψ'(1) = ζ(2)
    assert mt.polygamma(1, _a([0.0, -1.0])).array.tolist() == [inf, inf]  # poles, where torch's float32 is finite
    assert np.isnan(mt.lgamma(_a([nan])).array).all() and np.isnan(mt.digamma(_a([nan])).array).all()
    # the gradients at the poles: digamma and polygamma, not finite
    x = _a([0.5, 3.0]).requires_grad_()
    mt.lgamma(x).sum().backward()
    np.testing.assert_allclose(x.grad.array, sp.psi([0.5, 3.0]))


def test_erfinv_and_ndtri_at_the_ends():
    assert special.erfinv(_a([-1.0, 1.0, 0.0, -0.0, 2.0])).array.tolist()[:2] == [-math.inf, math.inf]
    e = special.erfinv(_a([0.0, -0.0, 2.0])).array
    assert e[0] == 0 and np.signbit(e[1]) and np.isnan(e[2])
    n = special.ndtri(_a([0.0, 1.0, 0.5, -0.1])).array
    assert n[0] == -math.inf and n[1] == math.inf and n[2] == 0 and np.isnan(n[3])
    np.testing.assert_allclose(special.log_ndtr(_a([-40.0])).array, sp.log_ndtr(-40.0))  # far tail, no -inf
    assert special.log_ndtr(_a([-40.0])).array[0] > -1e3


def test_xlogy_and_xlog1py_at_zero():
    nan, inf = math.nan, math.inf
    y = special.xlogy(_a([0.0, 0.0, 0.0, 1.0]), _a([0.0, nan, -1.0, 0.0])).array
    assert y[0] == 0 and np.isnan(y[1]) and y[2] == 0 and y[3] == -inf
    z = special.xlog1py(_a([0.0, 0.0, 0.0, 0.0, 2.0]), _a([-1.0, nan, -3.0, inf, -1.0])).array
    assert z[0] == 0 and np.isnan(z[1]) and z[2] == 0 and z[3] == 0 and z[4] == -inf
    x, y = _a([0.0, 0.0, 2.0]).requires_grad_(), _a([-1.0, 1.0, 1.0]).requires_grad_()
    special.xlog1py(x, y).sum().backward()
    tx, ty = torch.tensor([0.0, 0.0, 2.0], dtype=torch.float64, requires_grad=True), torch.tensor(
        [-1.0, 1.0, 1.0], dtype=torch.float64, requires_grad=True)
    torch.special.xlog1py(tx, ty).sum().backward()
    np.testing.assert_allclose(x.grad.array, tx.grad.numpy())
    # d/dy at x = 0 is 0 (the function is 0 along x = 0); PyTorch's x/(1 + y) gives 0/0 = NaN at y = -1
    np.testing.assert_allclose(y.grad.array, [0.0, 0.0, 1.0])
    np.testing.assert_allclose(y.grad.array[1:], ty.grad.numpy()[1:])


def test_logit_at_0_and_1_with_and_without_eps():
    l = mt.logit(_a([0.0, 1.0, -0.5, 1.5, 0.5])).array
    assert l[0] == -math.inf and l[1] == math.inf and np.isnan(l[2:4]).all() and l[4] == 0
    np.testing.assert_allclose(mt.logit(_a([0.0, 1.0]), eps=1e-6).array, [math.log(1e-6 / (1 - 1e-6)),
                                                                           math.log((1 - 1e-6) / 1e-6)])
    for eps in (None, 0.1):
        x = _a([0.0, 0.05, 0.5, 1.0, 1.5]).requires_grad_()
        tx = torch.tensor(x.array, requires_grad=True)
        mt.logit(x, eps).sum().backward()
        torch.logit(tx, eps).sum().backward()
        np.testing.assert_array_equal(x.grad.array, tx.grad.numpy())


def test_sinc_entr_bessel_edges():
    s = mt.sinc(_a([0.0, 1.0, 0.5, math.inf])).array
    assert s[0] == 1 and abs(s[1]) < 1e-16 and np.isclose(s[2], 2 / math.pi) and np.isnan(s[3])
    e = special.entr(_a([0.0, 1.0, -1.0, math.inf, math.nan])).array
    assert e[0] == 0 and e[1] == 0 and e[2] == -math.inf and e[3] == -math.inf and np.isnan(e[4])
    assert mt.i0(_a([0.0])).array[0] == 1 and special.i1(_a([0.0])).array[0] == 0
    assert np.isfinite(special.i0e(_a([1e4])).array).all()  # scaled: no overflow where i0 is inf
    assert mt.i0(_a([1e4])).array[0] == math.inf
    x = _a([0.0]).requires_grad_()
    special.i1(x).backward(_a([1.0]))
    assert x.grad.array[0] == 0.5  # i1'(0) = 1/2


def test_bad_inputs():
    with pytest.raises(ValueError, match="negative n"):
        mt.polygamma(-1, _a([1.0]))
    with pytest.raises(RuntimeError, match="negative n"):
        mt.polygamma(1.5, _a([1.0]))
    with pytest.raises(RuntimeError, match="greater than or equal to 1"):
        mt.mvlgamma(_a([3.0]), 0)
    with pytest.raises(ValueError, match=r"greater than \(p-1\)/2"):
        mt.mvlgamma(_a([0.5]), 2)
    with pytest.raises(TypeError, match="Tensor"):
        mt.lgamma([1.0, 2.0])
    with pytest.raises(TypeError):
        special.i0e(mt.tensor(np.array([1 + 1j])))


def test_torch_alias_resolves_special():
    from minitorch_ln.interop.torch_alias import torch_alias

    with torch_alias():
        import torch as alias  # noqa: PLC0415

        assert alias.special.xlogy is special.xlogy and alias.special.gammaln.__wrapped__ is mt.lgamma.__wrapped__
        assert alias.lgamma is mt.lgamma and alias.linalg.lstsq is mt.linalg.lstsq


@settings(deadline=None, max_examples=40)
@given(st.floats(0.05, 30.0))
def test_property_gamma_recurrences(x):
    # log Γ(x + 1) = log Γ(x) + log x;  ψ(x + 1) = ψ(x) + 1/x
    t = _a([x, x + 1])
    lg, dg = mt.lgamma(t).array, mt.digamma(t).array
    np.testing.assert_allclose(lg[1], lg[0] + math.log(x), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dg[1], dg[0] + 1 / x, rtol=1e-10, atol=1e-10)


@settings(deadline=None, max_examples=40)
@given(st.floats(-6.0, 6.0))
def test_property_inverse_pairs(x):
    p = special.ndtr(_a([x]))
    np.testing.assert_allclose(special.ndtri(p).array, [x], rtol=1e-8, atol=1e-8)
    y = special.expit(_a([x]))
    np.testing.assert_allclose(special.logit(y).array, [x], rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(special.i0e(_a([x])).array, np.exp(-abs(x)) * mt.i0(_a([x])).array, rtol=1e-12)
    np.testing.assert_allclose(special.log_ndtr(_a([x])).array, np.log(p.array), rtol=1e-9, atol=1e-15)


def test_gradcheck_at_kinks_excluded_logit_clamped_region_is_zero():
    x = t64([0.01, 0.99])
    assert gradcheck(lambda t: special.logit(t, eps=0.1), (x,))

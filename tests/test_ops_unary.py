"""Unary math (ops/unary.py): gradcheck, PyTorch comparison (float64/float32), properties, edge values, dtypes, bad input."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln import ops as U  # the unary ops (ops/unary.py, ops/unary_trig.py)

import strategies as S
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch

# ---------------------------------------------------------------------------------------- strategies / domains
# (new strategies for this file only)

special_values = st.sampled_from([0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5, 1e-38, -1e-38, 1e38, -1e38,
                                  math.inf, -math.inf, math.nan])


def _off_grid(a):  # k/2 + 0.2: at least 0.2 from any integer and 0.3 from any half
    return np.round(a * 2.0) / 2.0 + 0.2


def _positive(a):
    return np.abs(a) + 0.5


def _unit(a):  # inside (-1, 1), away from the ends
    return np.tanh(a) * 0.9


def _above_one(a):
    return np.abs(a) + 1.2


def _finite_mixed(a):
    b = a.copy()
    b.flat[0], b.flat[-1] = np.nan, np.inf
    return b


# name, ours, theirs, domain, twice differentiable (gradgradcheck)
UNARY = [
    ("floor", U.floor, torch.floor, _off_grid, False),
    ("ceil", U.ceil, torch.ceil, _off_grid, False),
    ("round", U.round, torch.round, _off_grid, False),
    ("round_2", lambda x: U.round(x, 2), lambda x: torch.round(x, decimals=2), lambda a: _off_grid(a) + 0.003, False),
    ("round_m1", lambda x: U.round(x, decimals=-1), lambda x: torch.round(x, decimals=-1), lambda a: a * 10 + 2.0, False),
    ("trunc", U.trunc, torch.trunc, _off_grid, False),
    ("frac", U.frac, torch.frac, _off_grid, False),
    ("sign", U.sign, torch.sign, _off_grid, False),
    ("sgn", U.sgn, torch.sign, _off_grid, False),  # torch.sgn's zero gradient is a ZeroTensor the helper cannot read
    ("reciprocal", U.reciprocal, torch.reciprocal, _positive, True),
    ("square", U.square, torch.square, None, True),
    ("log2", U.log2, torch.log2, _positive, True),
    ("log10", U.log10, torch.log10, _positive, True),
    ("log1p", U.log1p, torch.log1p, _positive, True),
    ("exp2", U.exp2, torch.exp2, None, True),
    ("expm1", U.expm1, torch.expm1, None, True),
    ("tan", U.tan, torch.tan, _unit, True),
    ("asin", U.asin, torch.asin, _unit, True),
    ("acos", U.acos, torch.acos, _unit, True),
    ("atan", U.atan, torch.atan, None, True),
    ("sinh", U.sinh, torch.sinh, None, True),
    ("cosh", U.cosh, torch.cosh, None, True),
    ("asinh", U.asinh, torch.asinh, None, True),
    ("acosh", U.acosh, torch.acosh, _above_one, True),
    ("atanh", U.atanh, torch.atanh, _unit, True),
    ("erfc", U.erfc, torch.erfc, None, True),
    ("erfinv", U.erfinv, torch.erfinv, _unit, True),
    ("nan_to_num", U.nan_to_num, torch.nan_to_num, None, False),
    ("nan_to_num_args", lambda x: U.nan_to_num(x, 1.0, 2.0, -3.0), lambda x: torch.nan_to_num(x, 1.0, 2.0, -3.0),
     _finite_mixed, False),
]
PREDICATES = [("isinf", U.isinf, torch.isinf), ("isposinf", U.isposinf, torch.isposinf),
              ("isneginf", U.isneginf, torch.isneginf), ("isreal", U.isreal, torch.isreal),
              ("signbit", U.signbit, torch.signbit)]
IDS = [u[0] for u in UNARY]
SMOOTH = [u for u in UNARY if u[0] != "nan_to_num_args"]


def _input(rng, shape, domain, dtype=np.float64):
    a = rng.standard_normal(shape)
    return (domain(a) if domain else a).astype(dtype)


@pytest.mark.parametrize("name,ours,theirs,domain,gg", SMOOTH, ids=[u[0] for u in SMOOTH])
def test_gradcheck_contiguous_and_transposed(name, ours, theirs, domain, gg, rng):
    x = t64(_input(rng, (2, 3), domain))
    assert gradcheck(ours, (x,))
    assert gradcheck(lambda t: ours(t.transpose(0, 1)), (x,))  # a non-contiguous view inside the function
    if gg:
        assert gradgradcheck(ours, (x,))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs,domain,gg", UNARY, ids=IDS)
def test_matches_torch(name, ours, theirs, domain, gg, dtype, rng, device):
    compare_with_torch(ours, theirs, [_input(rng, (3, 4, 5), domain, dtype)], device=device)


@given(S.nonscalar_shapes.flatmap(lambda s: S.arrays(s)), st.sampled_from(SMOOTH))
def test_property_matches_torch_over_shapes(a, op):
    name, ours, theirs, domain, _ = op
    compare_with_torch(ours, theirs, [domain(a) if domain else a])


@given(S.nonscalar_shapes.flatmap(lambda s: S.arrays(s)))
def test_property_identities(a):
    x = t64(a, requires_grad=False)
    np.testing.assert_allclose((U.cosh(x) ** 2 - U.sinh(x) ** 2).numpy(), 1.0, atol=1e-9 * np.cosh(a).max() ** 2)
    np.testing.assert_allclose(U.asinh(U.sinh(x)).numpy(), a, atol=1e-12)
    np.testing.assert_array_equal((U.trunc(x) + U.frac(x)).numpy(), a)
    assert (U.floor(x).numpy() <= a).all() and (U.ceil(x).numpy() >= a).all()


# ---------------------------------------------------------------------------------------- edge values, dtypes


def _special(dtype):
    with np.errstate(over="ignore"):  # ±1e38 is ±inf in float16
        return np.array([0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5, 1e-38, -1e-38, 1e38, -1e38, np.inf, -np.inf, np.nan],
                        dtype=np.float64).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("name,ours,theirs,domain,gg", UNARY, ids=IDS)
def test_edge_values_match_torch(name, ours, theirs, domain, gg, dtype):
    a = _special(dtype)
    with np.errstate(all="ignore"):
        expect = theirs(torch.from_numpy(a)).numpy()
    got = ours(mt.tensor(a)).numpy()
    assert got.dtype == expect.dtype
    if name in ("sign", "sgn"):  # deviation: sign(NaN) is NaN (array API standard); PyTorch says 0
        assert np.isnan(got[-1]) and expect[-1] == 0
        got, expect = got[:-1], expect[:-1]
    if name == "round_2" and dtype != np.float64:  # deviation: PyTorch overflows x·100 to inf; the math is x
        over = np.isinf(expect) & np.isfinite(a)
        np.testing.assert_array_equal(got[over], a[over])
        got, expect = got[~over], expect[~over]
    np.testing.assert_allclose(got.astype(np.float64), expect.astype(np.float64), rtol=2e-3 if dtype == np.float16 else 1e-6)
    assert (np.signbit(got) == np.signbit(expect))[~np.isnan(expect)].all(), "signs of zero differ"


@pytest.mark.parametrize("name,ours,theirs", PREDICATES, ids=[p[0] for p in PREDICATES])
def test_predicates_match_torch_on_every_dtype(name, ours, theirs):
    for a in [_special(np.float32), _special(np.float16), np.array([-3, 0, 7], np.int32), np.array([True, False])]:
        got, expect = ours(mt.tensor(a)), theirs(torch.from_numpy(a))
        assert got.dtype == np.bool_ and not got.requires_grad
        np.testing.assert_array_equal(got.numpy(), expect.numpy())


@pytest.mark.parametrize("name,ours,theirs,domain,gg", UNARY, ids=IDS)
def test_integer_and_bool_inputs_give_torchs_dtype(name, ours, theirs, domain, gg):
    for a in [np.array([-3, 0, 2, 7], np.int32), np.array([1, 4], np.int64), np.array([True, False])]:
        try:
            expect = theirs(torch.from_numpy(a))
        except (NotImplementedError, RuntimeError):  # PyTorch has no kernel: ours raises TypeError
            with pytest.raises(TypeError, match=r"expected .*got (int|bool)"):
                ours(mt.tensor(a))
            continue
        got = ours(mt.tensor(a))
        assert str(got.dtype) == str(expect.dtype).replace("torch.", ""), (got.dtype, expect.dtype)
        np.testing.assert_allclose(got.numpy().astype(np.float64), expect.numpy().astype(np.float64), rtol=1e-6)


def test_derivatives_do_not_overflow_in_float32():
    x = mt.tensor(np.float32([1e20, -1e20, 3e38]), requires_grad=True)
    dy = np.float32([0.7, -1.3, 2.0])  # a non-uniform upstream gradient
    U.asinh(x).backward(mt.tensor(dy))  # 1/√(x² + 1): PyTorch's x² overflows to 0; the math is 1/|x|
    np.testing.assert_allclose(x.grad.numpy(), dy * np.float32([1e-20, 1e-20, 1 / 3e38]), rtol=1e-6)
    x = mt.tensor(np.float32([1e20, -1e20]), requires_grad=True)
    U.atan(x).backward(mt.tensor(dy[:2]))  # 1/(1 + x²) = 1e-40, a float32 subnormal
    np.testing.assert_allclose(x.grad.numpy(), dy[:2] * np.float32([1e-40, 1e-40]), rtol=1e-2)
    x = mt.tensor(np.float32([1e20]), requires_grad=True)
    U.acosh(x).backward(mt.tensor(dy[:1]))
    np.testing.assert_allclose(x.grad.numpy(), dy[:1] * np.float32([1e-20]), rtol=1e-6)


def test_log1p_expm1_accurate_near_zero_with_gradients():
    x = t64([1e-12, -1e-15, 1e-300])
    np.testing.assert_allclose(U.log1p(x).detach().numpy(), [1e-12 - 5e-25, -1e-15, 1e-300], rtol=1e-15)
    np.testing.assert_allclose(U.expm1(x).detach().numpy(), [1e-12 + 5e-25, -1e-15, 1e-300], rtol=1e-15)
    dy = np.array([0.7, -1.3, 2.1])  # a non-uniform upstream gradient
    (U.log1p(x) + U.expm1(x)).backward(mt.tensor(dy))
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * dy, rtol=1e-11)  # 1/(1 + x) + e^x = 2 near 0


def test_zero_gradients_of_rounding_and_sign_and_nan_to_num_mask():
    x = t64([1.5, -2.5, 0.0, 3.0])
    for fn in (U.floor, U.ceil, U.round, U.trunc, U.sign, U.sgn, lambda t: U.round(t, 1)):
        y = fn(x)
        assert y.requires_grad
        (g,) = mt.autograd.grad(y.sum(), [x])
        np.testing.assert_array_equal(g.numpy(), 0.0)
    x = t64([np.nan, np.inf, -np.inf, 2.0])
    U.nan_to_num(x).backward(mt.tensor(np.array([0.7, -1.3, 2.1, -0.4])))
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0, -0.4])  # passes only where x is finite


def test_round_half_to_even_and_decimals():
    x = mt.tensor([0.5, 1.5, 2.5, -0.5, -2.5, 3.5])
    np.testing.assert_array_equal(U.round(x).numpy(), [0.0, 2.0, 2.0, -0.0, -2.0, 4.0])
    np.testing.assert_array_equal(U.round(mt.tensor([15.0, 25.0, -25.0]), decimals=-1).numpy(), [20.0, 20.0, -20.0])
    np.testing.assert_array_equal(U.round(mt.tensor([1.0, -3e38]), decimals=-39).numpy(), [0.0, -0.0])
    np.testing.assert_array_equal(U.round(mt.tensor([0.1, 1e38]), decimals=50).numpy(), np.float32([0.1, 1e38]))


def test_empty_and_0d_and_methods():
    for name, ours, theirs, _, _ in UNARY:
        assert ours(mt.zeros(0, 3)).shape == (0, 3)
        assert ours(mt.tensor(0.25)).shape == ()
    x = mt.tensor([0.25, -0.5])
    np.testing.assert_array_equal(x.log1p().numpy(), U.log1p(x).numpy())
    np.testing.assert_array_equal(x.arctanh().numpy(), U.atanh(x).numpy())
    np.testing.assert_array_equal(x.round(decimals=1).numpy(), U.round(x, 1).numpy())
    assert x.isposinf().dtype == np.bool_ and x.fix().shape == (2,)


def test_bad_input_raises_clear_errors():
    with pytest.raises(TypeError, match=r"floor: expected an integer or floating point tensor, got bool"):
        U.floor(mt.tensor([True]))
    with pytest.raises(TypeError, match=r"frac: expected a floating point tensor, got int64"):
        U.frac(mt.tensor([1, 2]))
    with pytest.raises(TypeError, match=r"round: decimals=1 expected a floating point tensor, got int64"):
        U.round(mt.tensor([1, 2]), decimals=1)
    with pytest.raises(TypeError, match=r"round: decimals must be an int, got float"):
        U.round(mt.tensor([1.0]), decimals=1.5)
    with pytest.raises(TypeError, match=r"log2: expected a Tensor as input, got list"):
        U.log2([1.0, 2.0])
    with pytest.raises(TypeError, match=r"nan_to_num: nan must be a number or None, got str"):
        U.nan_to_num(mt.tensor([1.0]), nan="zero")


# ==================================================================================================
# gradcheck on non-contiguous leaves (issue 13): the leaf's own .array is strided and axis-reversed
# ==================================================================================================
@pytest.mark.parametrize("name,ours,theirs,domain,gg", SMOOTH, ids=[u[0] for u in SMOOTH])
def test_gradcheck_noncontiguous_leaf(name, ours, theirs, domain, gg, rng):
    gradcheck_noncontiguous(ours, [_input(rng, (3, 4), domain)], gg)

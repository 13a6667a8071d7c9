"""Binary math (ops/binary.py): gradcheck, PyTorch comparison (float64/float32, broadcasting), properties,
edge values, integer semantics, operators, bad input."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln import ops as B  # the binary ops (ops/binary.py, ops/division.py)

import strategies as S
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch

# ---------------------------------------------------------------------------------------- domains
# (new strategies for this file only)

int_pairs = st.tuples(st.lists(st.integers(-50, 50), min_size=1, max_size=8),
                      st.lists(st.integers(-9, 9).filter(lambda v: v != 0), min_size=1, max_size=8))


def _domain(a, b, kind):
    if kind == "b_away":  # divisor away from 0, quotient away from integers (jumps of fmod/remainder)
        b = np.sign(b) * (np.abs(b) + 0.5) + 0.0
        q = a / b
        a = (np.round(q) + 0.3) * b
    if kind == "b_positive":
        b = np.abs(b) + 0.5
    if kind == "a_positive":
        a = np.abs(a) + 0.5
    return a, b


# name, ours, theirs, domain, twice differentiable, torch has a gradient
BINARY = [
    ("atan2", B.atan2, torch.atan2, None, True, True),
    ("hypot", B.hypot, torch.hypot, None, True, True),
    ("fmod", B.fmod, torch.fmod, "b_away", False, True),
    ("remainder", B.remainder, torch.remainder, "b_away", False, True),
    ("floor_divide", B.floor_divide, torch.floor_divide, "b_away", False, False),
    ("div_trunc", lambda a, b: B.div_rounding(a, b, rounding_mode="trunc"),
     lambda a, b: torch.div(a, b, rounding_mode="trunc"), "b_away", False, True),
    ("div_floor", lambda a, b: B.div_rounding(a, b, "floor"), lambda a, b: torch.div(a, b, rounding_mode="floor"),
     "b_away", False, True),
    ("div_none", lambda a, b: B.div_rounding(a, b), torch.div, "b_away", True, True),
    ("true_divide", B.true_divide, torch.true_divide, "b_away", True, True),
    ("copysign", B.copysign, torch.copysign, None, False, True),
    ("xlogy", B.xlogy, torch.xlogy, "b_positive", True, True),
    ("float_power", B.float_power, torch.float_power, "a_positive", True, True),
    ("logaddexp", B.logaddexp, torch.logaddexp, None, True, True),
    ("logaddexp2", B.logaddexp2, torch.logaddexp2, None, True, True),
    ("fmax", B.fmax, torch.fmax, None, False, True),
    ("fmin", B.fmin, torch.fmin, None, False, True),
    ("lerp_scalar", lambda a, b: B.lerp(a, b, 0.3), lambda a, b: torch.lerp(a, b, 0.3), None, True, True),
    ("lerp_tensor", lambda a, b: B.lerp(a, b, a * b), lambda a, b: torch.lerp(a, b, a * b), None, True, True),
    ("heaviside", B.heaviside, torch.heaviside, None, False, False),
    ("mod_op", lambda a, b: a % b, lambda a, b: a % b, "b_away", False, True),
    ("floordiv_op", lambda a, b: a // b, lambda a, b: a // b, "b_away", False, False),
]
IDS = [b[0] for b in BINARY]
SHAPE_PAIRS = [((2, 3), (2, 3)), ((3, 1, 5), (4, 5)), ((4, 1), (3,)), ((), (2, 3)), ((2, 1, 1), (1, 3, 1))]


def _inputs(rng, sa, sb, kind, dtype=np.float64):
    a, b = _domain(rng.standard_normal(sa), rng.standard_normal(sb), kind)
    return np.asarray(a).astype(dtype), np.asarray(b).astype(dtype)


@pytest.mark.parametrize("name,ours,theirs,domain,gg,tg", BINARY, ids=IDS)
def test_gradcheck_with_broadcasting_and_transposed(name, ours, theirs, domain, gg, tg, rng):
    a, b = _inputs(rng, (2, 1, 3), (4, 3), domain)
    assert gradcheck(ours, (t64(a), t64(b)))
    a, b = _inputs(rng, (3, 2), (3, 2), domain)
    assert gradcheck(lambda x, y: ours(x.transpose(0, 1), y.transpose(0, 1)), (t64(a), t64(b)))
    if gg:
        a, b = _inputs(rng, (2, 1, 2), (2, 2), domain)
        assert gradgradcheck(ours, (t64(a), t64(b)))


@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs,domain,gg,tg", BINARY, ids=IDS)
def test_matches_torch(name, ours, theirs, domain, gg, tg, dtype, shapes, rng, device):
    # PyTorch raises "derivative not implemented" for floor_divide and heaviside: compare values only
    rg = None if tg else [False, False]
    compare_with_torch(ours, theirs, list(_inputs(rng, *shapes, domain, dtype)), requires_grad=rg, device=device)


@given(S.broadcastable_arrays(), st.sampled_from(BINARY))
def test_property_broadcasting_matches_torch(ab, op):
    name, ours, theirs, domain, _, tg = op
    # tiny magnitudes make PyTorch's a² + b² underflow (atan2's 1/b becomes 0): kept out here, checked below
    a, b = _domain(*(np.where(np.abs(x) < 1e-3, 0.5, x) for x in ab), domain)
    compare_with_torch(ours, theirs, [np.asarray(a), np.asarray(b)], requires_grad=None if tg else [False, False])


@given(int_pairs)
def test_property_integer_division_identities_match_python(ab):
    a, b = ab
    n = min(len(a), len(b))
    x, y = mt.tensor(np.array(a[:n], np.int32)), mt.tensor(np.array(b[:n], np.int32))
    q, r = B.floor_divide(x, y), B.remainder(x, y)
    assert q.dtype == np.int32 and r.dtype == np.int32
    np.testing.assert_array_equal(q.numpy(), [u // v for u, v in zip(a, b)])
    np.testing.assert_array_equal(r.numpy(), [u % v for u, v in zip(a, b)])
    np.testing.assert_array_equal(B.div_rounding(x, y, "trunc").numpy(), [int(u / v) for u, v in zip(a, b)])
    np.testing.assert_array_equal(B.fmod(x, y).numpy(), torch.fmod(torch.tensor(a[:n]), torch.tensor(b[:n])).numpy())


# ---------------------------------------------------------------------------------------- edge values, dtypes

SPECIAL = np.array([0.0, -0.0, 1.5, -1.5, 3.0, 1e-38, 1e38, -1e38, np.inf, -np.inf, np.nan])


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("name,ours,theirs,domain,gg,tg", BINARY, ids=IDS)
def test_edge_values_match_torch(name, ours, theirs, domain, gg, tg, dtype):
    with np.errstate(over="ignore"):  # ±1e38 is ±inf in float16
        a, b = (x.astype(dtype) for x in np.meshgrid(SPECIAL, SPECIAL))
    with np.errstate(all="ignore"):
        expect = theirs(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    got = ours(mt.tensor(a), mt.tensor(b)).numpy()
    assert got.dtype == expect.dtype
    if name == "heaviside":  # deviation: NaN input gives NaN (NumPy); PyTorch says 0
        nan = np.isnan(a)
        assert np.isnan(got[nan]).all()
        got, expect = got[~nan], expect[~nan]
    if name in ("fmod", "remainder", "mod_op") and dtype == np.float32:  # fmod is exact (C99): PyTorch's
        wrong = np.isnan(expect) & np.isfinite(a) & np.isfinite(b) & (b != 0)  # float32 kernel gives NaN for 1e38 % 1e-38
        np.testing.assert_array_equal(got[wrong], np.fmod(a[wrong], b[wrong]) if name == "fmod" else got[wrong])
        assert (np.abs(got[wrong]) < np.abs(b[wrong])).all()
        got, expect = got[~wrong], expect[~wrong]
    if name.startswith("lerp") and dtype != np.float64:  # computed in float64: no overflow of end - input
        ok = np.isfinite(expect)
        got, expect = got[ok], expect[ok]
    np.testing.assert_allclose(got.astype(np.float64), expect.astype(np.float64), rtol=2e-3 if dtype == np.float16 else 1e-6)
    assert (np.signbit(got) == np.signbit(expect))[~np.isnan(expect)].all(), "signs of zero differ"


@pytest.mark.parametrize("name,ours,theirs,domain,gg,tg", BINARY, ids=IDS)
def test_integer_operands_give_torchs_dtype(name, ours, theirs, domain, gg, tg):
    a, b = np.array([-7, 0, 5, 9], np.int32), np.array([2, -3, 4, -2], np.int32)
    try:
        expect = theirs(torch.from_numpy(a), torch.from_numpy(b))
    except (NotImplementedError, RuntimeError):
        with pytest.raises(TypeError, match=r"expected .*got int32"):
            ours(mt.tensor(a), mt.tensor(b))
        return
    got = ours(mt.tensor(a), mt.tensor(b))
    assert str(got.dtype) == str(expect.dtype).replace("torch.", "")
    np.testing.assert_allclose(got.numpy().astype(np.float64), expect.numpy().astype(np.float64), rtol=1e-6)
    # a Python int keeps the tensor's integer dtype; a Python float gives float32 (as PyTorch)
    if name in ("fmod", "remainder", "floor_divide", "div_trunc", "div_floor", "mod_op", "floordiv_op"):
        assert ours(mt.tensor(a), 3).dtype == theirs(torch.from_numpy(a), 3).dtype.__str__().replace("torch.", "")
        assert ours(mt.tensor(a), 2.5).dtype == np.float32


def test_gradients_at_the_origin_and_huge_values():
    x, y = mt.tensor(np.float32([0.0, 1e20]), requires_grad=True), mt.tensor(np.float32([0.0, 1e20]), requires_grad=True)
    dy = np.float32([0.7, -1.3])  # a non-uniform upstream gradient
    B.atan2(x, y).backward(mt.tensor(dy))  # b/(a² + b²) = 5e-21: a² overflows float32 in PyTorch's formula
    np.testing.assert_allclose(x.grad.numpy(), dy * np.float32([0.0, 5e-21]), rtol=1e-6)
    np.testing.assert_allclose(y.grad.numpy(), dy * np.float32([0.0, -5e-21]), rtol=1e-6)
    x, y = t64([0.0, 3.0]), t64([0.0, 4.0])
    B.hypot(x, y).backward(mt.tensor(np.array([0.7, -1.3])))  # deviation: 0 at the origin (PyTorch: NaN)
    np.testing.assert_allclose(x.grad.numpy(), [0.0, -1.3 * 0.6])  # x/hypot = 3/5, times dy
    np.testing.assert_allclose(y.grad.numpy(), [0.0, -1.3 * 0.8])
    np.testing.assert_allclose(B.logaddexp(mt.tensor([1e38]), mt.tensor([1e38])).numpy(), [1e38])


def test_zero_gradients_of_quotients_and_heaviside_values_gradient():
    a, b = t64([1.5, -2.5, 7.0]), t64([0.7, 0.6, -2.0])
    for fn in (B.floor_divide, lambda u, v: u // v, lambda u, v: B.div_rounding(u, v, "trunc")):
        ga, gb = mt.autograd.grad(fn(a, b).sum(), [a, b])
        np.testing.assert_array_equal(ga.numpy(), 0.0)
        np.testing.assert_array_equal(gb.numpy(), 0.0)
    x, v = t64([-1.0, 0.0, 2.0, 0.0]), t64([0.5])
    assert gradcheck(lambda t: B.heaviside(x.detach(), t), (v,))
    (gv,) = mt.autograd.grad(B.heaviside(x, v).sum(), [v])
    np.testing.assert_array_equal(gv.numpy(), [2.0])


def test_closeness_and_equality_match_torch():
    a = np.array([np.inf, np.nan, -np.inf, 1e10, 1.0, 0.0], np.float32)
    b = np.array([np.inf, np.nan, np.inf, 1.00001e10, 1.0 + 1e-6, 1e-9], np.float32)
    for kw in ({}, {"equal_nan": True}, {"rtol": 0.0, "atol": 0.0}, {"rtol": 0.1, "atol": 1.0}):
        np.testing.assert_array_equal(B.isclose(mt.tensor(a), mt.tensor(b), **kw).numpy(),
                                      torch.isclose(torch.from_numpy(a), torch.from_numpy(b), **kw).numpy())
        assert B.allclose(mt.tensor(a[3:]), mt.tensor(b[3:]), **kw) == torch.allclose(torch.from_numpy(a[3:]),
                                                                                      torch.from_numpy(b[3:]), **kw)
    np.testing.assert_array_equal(B.isclose(mt.tensor([100]), mt.tensor([101]), rtol=0.01, atol=0).numpy(), [True])
    assert type(B.allclose(mt.tensor([1.0]), mt.tensor([1.0]))) is bool
    assert B.equal(mt.tensor([1.0, 2.0]), mt.tensor([1, 2])) is True
    assert B.equal(mt.tensor([1.0, 2.0]), mt.tensor([1.0])) is False
    assert B.equal(mt.tensor([np.nan]), mt.tensor([np.nan])) is False
    assert mt.tensor([1.0, 2.0]).equal(mt.tensor([1.0, 2.0]))


def test_operators_and_methods_match_torch():
    a, b = np.array([-7, 0, 5, 9], np.int64), np.array([2, -3, 4, -2], np.int64)
    ta, tb, ma, mb = torch.from_numpy(a), torch.from_numpy(b), mt.tensor(a), mt.tensor(b)
    for ours, theirs in [(ma % mb, ta % tb), (ma // mb, ta // tb), (7 % mb, 7 % tb), (7 // mb, 7 // tb),
                         (ma % 3, ta % 3), (ma // -4, ta // -4), (5.5 % mt.tensor([2.0, -3.0]), 5.5 % torch.tensor([2.0, -3.0])),
                         (ma.remainder(mb), ta.remainder(tb)), (ma.fmod(3), ta.fmod(3)), (ma.divide(mb, rounding_mode="floor"), ta.divide(tb, rounding_mode="floor"))]:
        assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    x = mt.tensor([0.5, 2.0])
    assert x.atan2(x).shape == (2,) and x.lerp(x, 0.5).shape == (2,) and x.float_power(2).dtype == np.float64
    # float_power: the gradient comes back in the input's own dtype
    x = mt.tensor(np.float32([1.5]), requires_grad=True)
    B.float_power(x, 2.0).sum().backward()
    assert x.grad.dtype == np.float32 and x.grad.numpy()[0] == pytest.approx(3.0)


def test_bad_input_raises_clear_errors():
    with pytest.raises(TypeError, match=r"hypot: expected floating point tensors, got int64"):
        B.hypot(mt.tensor([1]), mt.tensor([2]))
    with pytest.raises(RuntimeError, match=r"ZeroDivisionError"):
        B.fmod(mt.tensor([1, 2]), mt.tensor([1, 0]))
    with pytest.raises(ZeroDivisionError):
        _ = mt.tensor([1, 2]) // 0
    with pytest.raises(ValueError, match=r"rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'"):
        B.div_rounding(mt.tensor([1.0]), 2.0, rounding_mode="round")
    with pytest.raises(RuntimeError, match=r"lerp: expected dtype float32 for `end` but got dtype float64"):
        B.lerp(mt.tensor([1.0]), t64([2.0]), 0.5)
    with pytest.raises(TypeError, match=r"lerp: weight must be a number or a Tensor, got str"):
        B.lerp(mt.tensor([1.0]), mt.tensor([2.0]), "half")
    with pytest.raises(TypeError, match=r"isclose: float32 did not match float64"):
        B.isclose(mt.tensor([1.0]), t64([1.0]))
    with pytest.raises(ValueError, match=r"rtol must be greater than or equal to zero, but got -1"):
        B.isclose(mt.tensor([1.0]), mt.tensor([1.0]), rtol=-1)
    with pytest.raises(RuntimeError, match=r"heaviside is not yet implemented for tensors with different dtypes"):
        B.heaviside(mt.tensor([1.0]), t64([0.5]))
    with pytest.raises(ValueError, match=r"atan2: shapes \(2,\) and \(3,\) do not broadcast"):
        B.atan2(mt.tensor([1.0, 2.0]), mt.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match=r"equal: other must be a Tensor, got float"):
        B.equal(mt.tensor([1.0]), 1.0)
    with pytest.raises(TypeError, match=r"remainder: expected floating point or integer tensors, got bool"):
        B.remainder(mt.tensor([True]), mt.tensor([True]))


# ==================================================================================================
# gradcheck on non-contiguous leaves (issue 13): the leaf's own .array is strided and axis-reversed
# ==================================================================================================
@pytest.mark.parametrize("name,ours,theirs,domain,gg,tg", BINARY, ids=IDS)
def test_gradcheck_noncontiguous_leaves(name, ours, theirs, domain, gg, tg, rng):
    gradcheck_noncontiguous(ours, list(_inputs(rng, (2, 1, 3), (4, 3), domain)))  # broadcasting as well
    gradcheck_noncontiguous(ours, list(_inputs(rng, (2, 2), (2, 2), domain)), gg)


def test_fmin_fmax_refuse_a_python_int_outside_the_integer_dtype():
    # fmin(int32 tensor, 2**31) wrapped the bound to -2**31 and answered -2**31 everywhere; PyTorch takes no
    # Python number here at all, and minimum/maximum/clamp already refuse the out-of-range bound
    x = mt.tensor(np.array([-5, 0, 7], dtype=np.int32))
    for fn, v in ((B.fmin, 2**31), (B.fmax, -(2**31) - 1), (B.fmin, -(2**31) - 1)):
        with pytest.raises(RuntimeError, match=f"value {v} cannot be converted to type int32"):
            fn(x, v)
    assert B.fmin(x, 2**31 - 1).array.tolist() == [-5, 0, 7]  # in range: exact
    assert B.fmax(x, -(2**31)).array.tolist() == [-5, 0, 7]

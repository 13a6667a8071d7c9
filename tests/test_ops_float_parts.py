"""frexp, ldexp, nextafter, gcd, lcm, positive, deg2rad, rad2deg (ops/float_parts.py): gradcheck where there is a
gradient, PyTorch in float64/float32 (and integer dtypes for gcd/lcm), Hypothesis, bad input, edge values."""

import math

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import arrays, shapes

import minitorch_ln as mt

DIFFERENTIABLE = [
    ("frexp_mantissa", lambda x: mt.frexp(x).mantissa, lambda x: torch.frexp(x).mantissa, [(3, 4)]),
    ("ldexp", mt.ldexp, torch.ldexp, [(3, 4), (4,)]),
    ("nextafter", mt.nextafter, torch.nextafter, [(3, 4), (3, 1)]),
    ("positive", mt.positive, torch.positive, [(2, 3)]),
    ("deg2rad", mt.deg2rad, torch.deg2rad, [(2, 3)]),
    ("rad2deg", mt.rad2deg, torch.rad2deg, [(2, 3)]),
]


@pytest.mark.parametrize("name,ours,theirs,shp", DIFFERENTIABLE, ids=[c[0] for c in DIFFERENTIABLE])
def test_gradcheck_contiguous_and_noncontiguous(name, ours, theirs, shp, rng):
    if name == "nextafter":  # a step of one ulp: finite differences see the identity in x, nothing in other
        x = mt.tensor(rng.standard_normal(shp[0]), requires_grad=True)
        o = mt.tensor(rng.standard_normal(shp[1]), requires_grad=True)
        up = rng.standard_normal(shp[0])
        mt.nextafter(x, o).backward(mt.tensor(up))
        np.testing.assert_array_equal(x.grad.numpy(), up)
        np.testing.assert_array_equal(o.grad.numpy(), np.zeros(shp[1]))
        return
    arrs = [rng.standard_normal(s) for s in shp]
    if name == "frexp_mantissa":  # away from powers of two, where the exponent (held constant) jumps
        arrs[0] = np.sign(arrs[0]) * (0.6 + np.abs(arrs[0]) % 0.3) * 4.0
    gradcheck_noncontiguous(ours, arrs, gg=name in ("ldexp", "deg2rad"))


@pytest.mark.parametrize("name,ours,theirs,shp", DIFFERENTIABLE, ids=[c[0] for c in DIFFERENTIABLE])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_torch(name, ours, theirs, shp, dtype, rng):
    arrs = [(rng.standard_normal(s) * 10).astype(dtype) for s in shp]
    compare_with_torch(ours, theirs, arrs)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_gcd_lcm_and_frexp_exponent_match_torch(dtype, rng):
    a = rng.integers(-60, 60, (4, 5)).astype(dtype)
    b = rng.integers(-60, 60, (5,)).astype(dtype)
    for ours, theirs in ((mt.gcd, torch.gcd), (mt.lcm, torch.lcm)):
        compare_with_torch(ours, theirs, [a, b], requires_grad=[False, False])
    x = rng.standard_normal(7) * 1e3
    np.testing.assert_array_equal(mt.frexp(mt.tensor(x)).exponent.numpy(), torch.frexp(torch.tensor(x)).exponent.numpy())
    assert mt.frexp(mt.tensor(x)).exponent.dtype == np.int32


def test_edge_values_follow_the_math():
    inf, nan = math.inf, math.nan
    m, e = mt.frexp(mt.tensor([0.0, -3.0, inf, nan, 1e-310], dtype="float64"))
    # C99: frexp(0) = (0, 0); frexp(-3) = (-0.75, 2); inf and nan keep their value with exponent 0; the
    # subnormal 1e-310 = 0.5753... * 2^-1029
    np.testing.assert_array_equal(e.numpy(), [0, 2, 0, 0, -1029])
    np.testing.assert_allclose(m.numpy()[:2], [0.0, -0.75])
    assert m.numpy()[2] == inf and np.isnan(m.numpy()[3]) and m.numpy()[4] == pytest.approx(1e-310 * 2.0 ** 1000 * 2.0 ** 29)
    assert mt.frexp(mt.tensor([3.0], dtype="float16")).mantissa.dtype == np.float16
    assert mt.nextafter(mt.tensor([1.0], dtype="float32"), mt.tensor([2.0], dtype="float32")).item() == float(
        np.nextafter(np.float32(1), np.float32(2)))
    assert mt.nextafter(mt.tensor([0.0], dtype="float64"), mt.tensor([1.0], dtype="float64")).item() == 5e-324
    assert mt.ldexp(mt.tensor([1.0]), mt.tensor([200])).item() == inf  # 2^200 overflows float32
    assert mt.gcd(mt.tensor([0]), mt.tensor([0])).item() == 0 and mt.lcm(mt.tensor([0]), mt.tensor([5])).item() == 0
    assert mt.deg2rad(mt.tensor([180], dtype="int32")).item() == pytest.approx(math.pi)
    assert mt.rad2deg(mt.tensor([inf, -inf])).tolist() == [inf, -inf]


@settings(max_examples=40, deadline=None)
@given(data=st.data(), shape=shapes)
def test_property_frexp_ldexp_round_trip(data, shape):
    a = data.draw(arrays(shape, min_value=-1e6, max_value=1e6))
    m, e = mt.frexp(mt.tensor(a))
    np.testing.assert_array_equal(mt.ldexp(m, e).numpy(), a)  # exact: scaling by powers of two
    nz = a != 0
    assert (np.abs(m.numpy()[nz]) >= 0.5).all() and (np.abs(m.numpy()[nz]) < 1).all()


@settings(max_examples=40, deadline=None)
@given(a=hnp.arrays(np.int64, 6, elements=st.integers(-10**6, 10**6)),
       b=hnp.arrays(np.int64, 6, elements=st.integers(-10**6, 10**6)))
def test_property_gcd_times_lcm_is_the_product(a, b):
    g, m = mt.gcd(mt.tensor(a), mt.tensor(b)).numpy(), mt.lcm(mt.tensor(a), mt.tensor(b)).numpy()
    np.testing.assert_array_equal(g * m, np.abs(a * b))
    assert (g >= 0).all()


def test_bad_input_names_what_came():
    with pytest.raises(TypeError, match=r"frexp\(\): only supports floating-point dtypes, got int64"):
        mt.frexp(mt.tensor([1]))
    with pytest.raises(TypeError, match=r"gcd\(\): not implemented for float32; expected integer tensors"):
        mt.gcd(mt.tensor([1.0]), mt.tensor([2]))
    with pytest.raises(TypeError, match=r"nextafter\(\): not implemented for int64"):
        mt.nextafter(mt.tensor([1]), mt.tensor([2]))
    with pytest.raises(TypeError, match="The `\\+` operator, on a bool tensor is not supported"):
        mt.positive(mt.tensor([True]))
    with pytest.raises(TypeError, match=r"ldexp\(\): argument 'other' must be a Tensor, not int"):
        mt.ldexp(mt.tensor([1.0]), 3)


def test_ldexp_takes_the_power_in_the_result_dtype():
    # regression: 2^-898 through a float32 power was 0 (silently wrong); PyTorch gives 0.5 * 2^-898 in float64
    out = mt.ldexp(mt.tensor([0.5], dtype="float64"), mt.tensor([-898], dtype="int32"))
    assert out.dtype == np.float64 and out.item() == 0.5 * 2.0 ** -898
    assert mt.ldexp(mt.tensor([0.5]), mt.tensor([-140])).item() == np.float32(0.5 * 2.0 ** -140)  # float32 subnormal

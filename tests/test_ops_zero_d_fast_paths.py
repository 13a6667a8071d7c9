"""Session 6's small fast paths (issue 26), each run against the general path it skips.

- ``x ** n`` with a Python number and a real float ``x`` goes straight to ``PowScalar``; the general branch is
  what a NumPy-scalar exponent takes (same values, dtype, node, gradients, second derivatives).
- ``log`` of a positive 0-d real skips ``Quiet`` (no floating-point error is possible): values bit for bit those
  of the ``Quiet`` path (a 1-element 1-d input takes it), no warning, and a caller's ``np.errstate(all="raise")``
  still untouched by ``log(0)`` (which keeps ``Quiet``).
- ``relu`` compares with a read-only 0-d zero of ``x``'s dtype: output and mask equal NumPy's Python-0 forms.
- ``torch.log(...)`` etc. call the autocast wrapper's op directly while no region is on; inside a region autocast
  still applies through the ``out=`` wrapper.
"""

import warnings

import numpy as np
import pytest
from helpers import compare_with_torch, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.ops.activation import ReLU
from minitorch_ln.ops.elementwise import Log, PowScalar

EXPONENTS = [2, 3, -1, 0, 1, 0.5, -1.5, 2.0, 1e-3, 40]
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e-30, 3e38, np.inf, -np.inf, np.nan, 1e-45]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("p", EXPONENTS)
def test_pow_number_fast_branch_equals_the_general_one(p, dtype):
    x = np.array([0.0, -0.0, 0.5, -2.0, 3.0, np.inf, np.nan], dtype=dtype)
    ours = mt.tensor(x, requires_grad=True)
    general = mt.tensor(x, requires_grad=True)
    with np.errstate(all="ignore"):
        y, z = ours ** p, general ** np.float64(p)  # a NumPy scalar: the general branch
    assert y.dtype == z.dtype == dtype and y.grad_fn.fn is z.grad_fn.fn is PowScalar and y.grad_fn.p == z.grad_fn.p
    np.testing.assert_array_equal(y.detach().numpy(), z.detach().numpy(), strict=True)
    up = mt.tensor(np.linspace(-1, 1, x.size).astype(dtype))
    (gy,) = mt.autograd.grad(y, ours, up)
    (gz,) = mt.autograd.grad(z, general, up)
    np.testing.assert_array_equal(gy.numpy(), gz.numpy(), strict=True)


def test_pow_number_fast_branch_leaves_others_to_the_general_one():
    assert (mt.tensor([2, 3]) ** 2).dtype == np.int64  # integer base: general branch
    assert (mt.tensor([2, 3]) ** 2.0).dtype == np.float32
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        mt.tensor([2]) ** -1
    assert (mt.tensor([True]) ** 2).dtype == np.int64
    assert mt.tensor([1 + 1j]) ** 2 is not None


def test_pow_number_matches_torch_and_gradchecks(rng):
    compare_with_torch(lambda t: t ** 2 + t ** -1.5, lambda t: t ** 2 + t ** -1.5, [rng.uniform(0.5, 2, (3, 4))])
    compare_with_torch(lambda t: t ** 3, lambda t: t ** 3, [np.array(1.5, dtype=np.float32)])
    x = mt.tensor(rng.uniform(0.5, 2, (4, 3)), requires_grad=True)
    assert gradcheck(lambda t: t.t() ** 2.5, (x,)) and gradgradcheck(lambda t: t.t() ** 3, (x,))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("v", SPECIAL)
def test_log_0d_equals_the_quiet_path_bit_for_bit(v, dtype):
    with np.errstate(over="ignore"):  # 3e38 is inf in float16
        x0 = np.array(v).astype(dtype)  # 0-d: the fast path where v > 0
    x1 = x0.reshape(1)  # 1-d: always under Quiet
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y0 = mt.log(mt.tensor(x0))
        y1 = mt.log(mt.tensor(x1))
    assert y0.shape == () and y0.dtype == dtype
    np.testing.assert_array_equal(y0.numpy().reshape(1), y1.numpy(), strict=True)


def test_log_keeps_the_callers_error_state():
    with np.errstate(all="raise"):
        assert mt.log(mt.tensor(0.0)).item() == -np.inf  # under Quiet: no FloatingPointError
        assert np.isnan(mt.log(mt.tensor(-1.0)).item())
        assert mt.log(mt.tensor(2.0)).item() == np.log(np.float32(2.0))
        with pytest.raises(FloatingPointError):
            np.log(np.float64(0.0))  # and the caller's state is back afterwards
    ctx = type("Ctx", (), {"save_for_backward": lambda self, *a: None})()
    assert type(Log.forward(ctx, np.array(2.0))) is np.float64  # the same NumPy scalar as before


@settings(max_examples=60, deadline=None)
@given(v=st.floats(allow_nan=True, allow_infinity=True), dtype=st.sampled_from([np.float16, np.float32, np.float64]))
def test_property_log_and_relu_0d_equal_their_1d_forms(v, dtype):
    with np.errstate(over="ignore"):
        x0 = np.array(v).astype(dtype)
    t0, t1 = mt.tensor(x0, requires_grad=True), mt.tensor(x0.reshape(1), requires_grad=True)
    for f in (mt.log, mt.relu):
        y0, y1 = f(t0), f(t1)
        np.testing.assert_array_equal(y0.detach().numpy().reshape(1), y1.detach().numpy(), strict=True)
        (g0,) = mt.autograd.grad(y0, t0, mt.tensor(np.array(1.5, dtype)))
        (g1,) = mt.autograd.grad(y1, t1, mt.tensor(np.array([1.5], dtype)))
        np.testing.assert_array_equal(g0.numpy().reshape(1), g1.numpy(), strict=True)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32])
@pytest.mark.parametrize("shape", [(), (7,), (2, 3)])
def test_relu_zero_equals_numpys_python_zero(shape, dtype):
    vals = np.array(SPECIAL if dtype != np.int32 else [0, -3, 5, 1, -1, 2, 7], dtype=np.float64)
    with np.errstate(all="ignore"):
        x = np.resize(vals, shape if shape else (1,)).astype(dtype).reshape(shape)
    ctx = type("Ctx", (), {})()
    y = ReLU.forward(ctx, x)
    want = np.where(x < 0, x.dtype.type(0), x)  # PyTorch's select with the Python 0: x kept where not x < 0 (-0, NaN)
    np.testing.assert_array_equal(np.asarray(y), want, strict=True)
    np.testing.assert_array_equal(np.signbit(y), np.signbit(want))
    np.testing.assert_array_equal(ctx.mask, ~(x <= 0), strict=True)


def test_relu_matches_torch(rng):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    x[0, 0] = 0.0
    compare_with_torch(mt.relu, torch.relu, [x])
    compare_with_torch(lambda t: t.relu() * 2, lambda t: t.relu() * 2, [np.array(-0.5)])


def test_out_wrapper_still_autocasts_inside_a_region():
    a, b = mt.ones(2, 3), mt.ones(3, 2)
    assert mt.mm(a, b).dtype == np.float32
    with mt.autocast("cpu", dtype=mt.bfloat16):
        assert mt.mm(a, b).dtype == mt.bfloat16  # through out=None: the autocast wrapper, not the plain op
    out = mt.empty(2, 2)
    mt.mm(a, b, out=out)
    np.testing.assert_array_equal(out.numpy(), np.full((2, 2), 3.0, np.float32))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("v", SPECIAL + [20.0, -20.0, 1e4, -1e4, -1e-40])
def test_sigmoids_of_0d_arrays_equal_the_where_forms(v, dtype):
    from minitorch_ln.ops.fused_backward import sigmoid_array, sigmoid_pair_array  # noqa: PLC0415

    with np.errstate(all="ignore"):
        x = np.array(v).astype(dtype)

        def where_form(t):  # the n-d form, which a 1-element 1-d array still takes
            return sigmoid_array(t.reshape(1)).reshape(())

        want = (where_form(x), where_form(-x))
        got = (sigmoid_array(x), sigmoid_array(-x)), sigmoid_pair_array(x)
    for pair in got:
        for g, w in zip(pair, want):
            assert type(g) is np.ndarray and g.shape == () and g.dtype == dtype
            np.testing.assert_array_equal(g, w, strict=True)
            assert np.signbit(g) == np.signbit(w)


def test_out_wrapper_skips_only_an_autocast_wrapper_it_wraps_itself():
    # torch.sum is keepdims_alias(autocast(sum)): functools.wraps copies the autocast attribute outward, and the
    # out= wrapper must still go through the alias layer
    assert mt.sum(mt.ones(2, 3), 1, keepdims=True).shape == (2, 1)
    assert mt.log(mt.tensor(2.0)).item() == np.log(np.float32(2.0))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.int32, np.uint8, np.int64])
@pytest.mark.parametrize("ufunc", ["add", "subtract", "multiply"])
def test_inplace_ufunc_into_a_0d_array_equals_out(ufunc, dtype):
    from minitorch_ln.ops.inplace import _ufunc_into  # noqa: PLC0415

    info = np.finfo(dtype) if np.dtype(dtype).kind == "f" else np.iinfo(dtype)
    values = [0, 1, 3, info.max, info.min] + ([-0.0, 0.5, np.inf, np.nan] if np.dtype(dtype).kind == "f" else [])
    for v in values:
        for w in values:
            base = np.zeros((2, 3), dtype)
            with np.errstate(all="ignore"):
                base[1, 2], operand = v, np.asarray(w).astype(dtype)
            view, want = base[1, 2, ...], np.array(base[1, 2], dtype)
            with warnings.catch_warnings(record=True) as got_warnings, np.errstate(all="warn"):
                warnings.simplefilter("always")
                _ufunc_into(np, ufunc, view, operand)  # a 0-d view: writes through to base
            with warnings.catch_warnings(record=True) as want_warnings, np.errstate(all="warn"):
                warnings.simplefilter("always")
                getattr(np, ufunc)(want, operand, out=want)
            np.testing.assert_array_equal(base[1, 2], want, strict=False)
            assert base[1, 2].dtype == want.dtype and np.signbit(base[1, 2]) == np.signbit(want)
            assert [str(x.message) for x in got_warnings] == [str(x.message) for x in want_warnings]

"""Op edges where minitorch_ln was silently different from PyTorch (session 7): each against PyTorch through the one
comparison helper, and against values worked out by hand (the comment beside each says how).

1. ``x ** p`` with a Python-float exponent keeps ``p`` a double (``ops/scalar_pow.py``); ``x ** -0.5`` is
   ``1/sqrt(x)`` at -0 and -inf; ``float_power``; integer bases; the fast paths.
2. ``relu``/``clamp``/``leaky_relu`` keep -0 and NaN; relu refuses bool; hardtanh refuses negative limits on uint8.
3. ``add``/``sub`` ``alpha`` checked against the result dtype, as PyTorch's ``alpha_check``.
4. Numbers written into a tensor checked as PyTorch's ``checked_convert`` (``ops/fill_values.py``).
5. ``item()`` of a tensor without exactly one element: PyTorch's RuntimeError.
6. float64 -> float16/bfloat16 keeps the single, correctly rounded IEEE rounding (PyTorch double-rounds).
"""

import math
from unittest import mock

import numpy as np
import pytest
from helpers import compare_with_torch, torch

import minitorch_ln as mt
import minitorch_ln.nn.functional as F
from minitorch_ln.autograd import engine, gradcheck, gradgradcheck
from minitorch_ln.errors import ValueOverflowError

ODD = float(2**24 + 1)  # odd, and not a float32: float32 rounds it to the even 2**24
SPECIAL_P = [0.0, 0.5, -0.5, 1.0, 2.0, -1.0, 3.0]
EDGES = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, math.inf, -math.inf, math.nan]


def _bits(t):
    return t.dtype, tuple(t.shape), np.asarray(t.detach().numpy()).tobytes()


# ====================================================================================== 1. pow


def test_pow_keeps_a_python_float_exponent_double_worked_by_hand():
    # (-1)^(2^24+1) = -1 (odd exponent); (-2)^p = -2^p = -inf (overflow, sign of an odd power); (-0.5)^p = -0
    # (underflow, sign kept); 0^1e-300 = 0 (positive exponent), 2^1e-300 = 1, (-2)^1e-300 = NaN (not an integer)
    y = mt.tensor([-1.0, -2.0, -0.5, 2.0]) ** ODD
    assert y.tolist()[:2] == [-1.0, -math.inf] and y.tolist()[3] == math.inf
    assert y.tolist()[2] == 0.0 and math.copysign(1, y.tolist()[2]) == -1
    z = (mt.tensor([0.0, 2.0, -2.0]) ** 1e-300).tolist()
    assert z[:2] == [0.0, 1.0] and math.isnan(z[2])
    compare_with_torch(lambda t: t ** ODD, lambda t: t ** ODD, [np.array([-1.0, 1.0, 0.0], np.float32)])
    compare_with_torch(lambda t: t ** 1e-300, lambda t: t ** 1e-300, [np.array([0.0, 2.0, 3.0], np.float32)])


def test_pow_minus_half_at_minus_zero_and_minus_inf():
    # PyTorch computes x ** -0.5 as rsqrt(x) = 1/sqrt(x); IEEE sqrt(-0) = -0, so 1/sqrt(-0) = -inf, and
    # sqrt(-inf) = NaN. C99's pow(-0, -0.5) is +inf (and pow(-inf, -0.5) = +0): the rsqrt reading is kept, as
    # x ** 0.5 here already is sqrt(x) (-0 at -0) and rsqrt(-0) is -inf (IEEE 754-2008 rSqrt(±0) = ±inf)
    for dt in ("float16", "float32", "float64", "bfloat16"):
        y = (mt.tensor([-0.0, -math.inf, 0.0, 4.0], dtype=dt) ** -0.5).float().tolist()
        assert y[0] == -math.inf and math.isnan(y[1]) and y[2] == math.inf and y[3] == 0.5, dt
        assert (mt.tensor(-0.0, dtype=dt) ** -0.5).item() == -math.inf  # 0-d
        assert (mt.tensor([-0.0], dtype=dt) ** -0.5).item() == mt.rsqrt(mt.tensor([-0.0], dtype=dt)).item()
    for dt in (np.float32, np.float64):  # PyTorch's Half kernel does not dispatch -0.5 to rsqrt: +inf there
        compare_with_torch(lambda t: t ** -0.5, lambda t: t ** -0.5, [np.array([-0.0, -np.inf, 4.0, 0.25], dt)],
                           requires_grad=[False])
        assert np.signbit((mt.tensor(np.array([-0.0], dt)) ** -0.5).numpy()).all()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_and_bfloat16_bases_take_the_exponent_as_written(dtype):
    # PyTorch rounds the exponent to the base's dtype (float16: 2**24+1 overflows, a RuntimeError; bfloat16:
    # 2**24, even, so +1); the math is (-1)^(2^24+1) = -1, and 1e4^1.1 = 10^4.4 = 25118.86 (float16: 25120, its
    # nearest; the float16 exponent 1.0996 would give 10^4.3984 = 25026)
    assert (mt.tensor([-1.0], dtype=dtype) ** ODD).float().tolist() == [-1.0]
    if dtype == "float16":
        assert (mt.tensor([1e4], dtype=dtype) ** 1.1).float().tolist() == [25120.0]


def test_integer_bases_float_and_int_exponents_against_torch():
    x = np.array([-2, -1, 0, 1, 3])
    for p in (2, 3, 0, 1, 2.0, 0.5, ODD, True, False):
        compare_with_torch(lambda t: t ** p, lambda t: t ** p, [x], requires_grad=[False])
    compare_with_torch(lambda t: t ** 2, lambda t: t ** 2, [x.astype(np.int8)], requires_grad=[False])
    for dt in (np.int64, np.int8, np.uint8):
        for lib in (mt, torch):
            with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
                lib.tensor(np.array([1, 2], dt)) ** -1
    for lib in (mt, torch):  # the exponent does not fit the base's dtype: RuntimeError, not NumPy's OverflowError
        with pytest.raises(RuntimeError, match="cannot be converted to type .*int8.* without overflow"):
            lib.tensor(np.array([1, 2], np.int8)) ** 300


def test_pow_scalar_tensor_rpow_pow_and_zero_d_against_torch():
    t = np.array([-0.0, -1.0, 2.0, 0.0, 3.0], np.float32)
    compare_with_torch(lambda e: mt.pow(2, e), lambda e: torch.pow(2, e), [t])
    compare_with_torch(lambda e: mt.pow(-1.5, e), lambda e: torch.pow(-1.5, e), [t], requires_grad=[False])
    compare_with_torch(lambda e: 0.5 ** e, lambda e: 0.5 ** e, [t])
    compare_with_torch(lambda e: (-0.0) ** e, lambda e: (-0.0) ** e, [np.array([-0.5, -1.0, 0.5, 3.0])],
                       requires_grad=[False])
    compare_with_torch(lambda e: 2.5 ** e, lambda e: 2.5 ** e, [np.array([1, -2, 3])], requires_grad=[False])
    compare_with_torch(lambda x: x ** ODD, lambda x: x ** ODD, [np.array(-1.0, np.float32)], requires_grad=[False])
    compare_with_torch(lambda x: x.clone().pow_(ODD), lambda x: x.clone().pow_(ODD), [np.array([-1.0, -0.0], np.float32)],
                       requires_grad=[False])
    assert (mt.tensor([-1.0]).pow_(ODD)).tolist() == [-1.0]  # odd power of -1
    # float_power computes in float64 with the exponent as written: (-1)^(2^24+1) = -1 (it gave +1)
    compare_with_torch(lambda x: mt.float_power(x, ODD), lambda x: torch.float_power(x, ODD),
                       [np.array([-1.0, 2.0], np.float32)])
    assert mt.float_power(mt.tensor([-1.0]), ODD).tolist() == [-1.0]


@pytest.mark.parametrize("p", SPECIAL_P)
def test_pow_gradients_at_the_special_exponents(p):
    rng = np.random.default_rng(7)
    x = rng.uniform(0.3, 2.0, (3, 4))  # positive: every p is differentiable there
    assert gradcheck(lambda t: t ** p, (mt.tensor(x, requires_grad=True),))
    assert gradgradcheck(lambda t: t ** p, (mt.tensor(x, requires_grad=True),))
    if float(p).is_integer():  # integer exponents: negative bases too
        assert gradcheck(lambda t: t ** p, (mt.tensor(-x, requires_grad=True),))
    for dt in (np.float32, np.float64):
        compare_with_torch(lambda t: t ** p, lambda t: t ** p, [x.astype(dt)])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_pow_number_fast_path_is_the_numpy_scalar_path_bit_for_bit(dtype):
    # x ** <Python number> goes straight to PowScalar; a NumPy-scalar exponent takes pow's general branch
    x = np.array(EDGES + [1e-30, 3.0, 0.3])
    for p in SPECIAL_P + [ODD, 1e-300, -1e-300, 1.1, -2.0, 2, 3]:
        with np.errstate(all="ignore"):
            fast = mt.tensor(x, dtype=dtype) ** p
            general = mt.tensor(x, dtype=dtype) ** (np.float64(p) if isinstance(p, float) else np.int64(p))
        assert _bits(fast) == _bits(general), (dtype, p)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_pow_array_backward_is_the_tensor_op_backward_bit_for_bit(dtype):
    x = np.array([-1.0, -0.0, 0.0, 0.5, 2.0, 3.0]).astype(dtype)
    dy = np.array([0.3, -1.2, 0.7, 2.0, -0.4, 1.1]).astype(dtype)
    for p in SPECIAL_P + [ODD, 1.1, -2.0]:
        grads = []
        for fast in (True, False):  # the engine's array backward (ops/fast_backward.py) against PowScalarBackward
            t = mt.tensor(x, requires_grad=True)
            with mock.patch.object(engine, "_FAST_ON", fast), np.errstate(all="ignore"):
                (t ** p).backward(mt.tensor(dy))
            grads.append(_bits(t.grad))
        assert grads[0] == grads[1], (dtype, p)


# ====================================================================================== 2. relu and friends


def test_relu_keeps_minus_zero_and_nan_and_refuses_bool():
    # PyTorch's relu is a select, x < 0 ? 0 : x: -0 is not < 0, so -0 stays -0; NaN < 0 is false, so NaN stays
    for dt in ("float16", "float32", "float64", "bfloat16"):
        for x in (mt.tensor([-0.0, math.nan, -1.0, 2.0], dtype=dt), mt.tensor(-0.0, dtype=dt)):
            y = np.asarray(mt.relu(x).float().numpy()).reshape(-1)
            assert np.signbit(y[0]) and y[0] == 0, dt
            if y.size > 1:
                assert math.isnan(y[1]) and y[2] == 0 and not np.signbit(y[2]) and y[3] == 2, dt
    compare_with_torch(mt.relu, torch.relu, [np.array([-0.0, np.nan, -1.0, 2.0, 0.0], np.float32)])
    for lib, fn in ((mt, mt.relu), (torch, torch.relu), (mt, F.relu), (torch, torch.nn.functional.relu)):
        with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
            fn(lib.tensor([True, False]))
    assert mt.relu(mt.tensor([-3, 4])).tolist() == [0, 4]  # integers keep their dtype, as PyTorch


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_relu_keeps_minus_zero_at_every_array_length_and_position(dt):
    # ReLU.forward is NumPy's maximum(x, 0) (+0 for -0: its tie gives the second operand) with the -0 entries put
    # back: checked for the SIMD body and the scalar tail of NumPy's loop (lengths 1..70 and 4097, -0 and NaN at the
    # ends and the middle) and a non-contiguous input. (maximum(0, x) keeps -0 in one pass but takes NumPy's slower
    # scalar-first loop: 1.1 ms against 0.85 ms for 2^20 float32.)
    for n in [*range(1, 71), 4097]:
        for pos in {0, n // 2, n - 1}:
            for special in (-0.0, math.nan):
                a = np.arange(1.0, n + 1.0, dtype=dt) * np.where(np.arange(n) % 2, 1, -1)
                a[pos] = special
                for x in (mt.tensor(a), mt.tensor(np.repeat(a, 2))[::2]):
                    y = mt.relu(x).numpy()
                    assert np.signbit(y[pos]) if special == 0 else math.isnan(y[pos]), (n, pos, special)
                    np.testing.assert_array_equal(np.delete(y, pos), np.maximum(np.delete(a, pos), 0))


def test_relu_fast_paths_are_the_general_path():
    # the 0-d branch of ReLU.forward against its array branch (same values, sign bits and NaN), and Function.apply's
    # one-tensor path against the general one (a no-op tracer turns it off)
    from minitorch_ln.autograd import function

    for dt in ("float16", "float32", "float64"):
        for v in EDGES:
            with np.errstate(all="ignore"):
                zero_d, one_d = mt.relu(mt.tensor(v, dtype=dt)), mt.relu(mt.tensor([v], dtype=dt))
            assert zero_d.numpy().tobytes() == one_d.numpy().tobytes() and zero_d.dtype == one_d.dtype, (dt, v)
        x = mt.tensor(EDGES, dtype=dt)
        outs = []
        for tracer in (None, lambda *a: None):
            with mock.patch.object(function, "_tracer", tracer):
                outs.append(_bits(mt.relu(x)))
        assert outs[0] == outs[1]
        g = []
        for fast in (True, False):  # the array backward against ReLU.backward
            t = mt.tensor(EDGES, dtype=dt, requires_grad=True)
            with mock.patch.object(engine, "_FAST_ON", fast):
                mt.relu(t).backward(mt.tensor(np.linspace(-1, 1, len(EDGES)), dtype=dt))
            g.append(_bits(t.grad))
        assert g[0] == g[1]


def test_clamp_relu6_hardtanh_leaky_relu_on_minus_zero_nan_and_bool():
    x = np.array([-0.0, np.nan, -1.0, 7.0, 0.0, -np.inf], np.float32)
    for ours, theirs in [(lambda t: mt.clamp(t, min=0), lambda t: torch.clamp(t, min=0)),
                         (lambda t: mt.clamp(t, max=0.0), lambda t: torch.clamp(t, max=0.0)),
                         (lambda t: mt.clamp_min(t, 0.0), lambda t: torch.clamp_min(t, 0.0)),
                         (lambda t: mt.clamp(t, -0.0, 0.0), lambda t: torch.clamp(t, -0.0, 0.0)),
                         (F.relu6, torch.nn.functional.relu6), (F.hardtanh, torch.nn.functional.hardtanh),
                         (lambda t: F.leaky_relu(t, 0.0), lambda t: torch.nn.functional.leaky_relu(t, 0.0))]:
        o, t = compare_with_torch(ours, theirs, [x[:5]])  # -inf apart: leaky_relu(-inf, 0) is 0 here, NaN there
        assert (np.signbit(o[0]) == np.signbit(t[0])).all()
    # by hand: clamp(-0, min=0) keeps x (-0 is not < 0); leaky_relu(x, 0) = x·0: NaN stays NaN (it gave 0),
    # -1·0 = -0, -0·0 = -0; its documented limit at -inf is 0
    assert np.signbit(mt.clamp(mt.tensor([-0.0]), min=0).numpy()).all()
    y = F.leaky_relu(mt.tensor([math.nan, -1.0, -0.0, -math.inf]), 0.0).numpy()
    assert math.isnan(y[0]) and (y[1:] == 0).all() and np.signbit(y[1:3]).all() and not np.signbit(y[3])
    compare_with_torch(lambda t: mt.clamp_min(t, 0.5), lambda t: torch.clamp_min(t, 0.5), [np.array([0, 3])],
                       requires_grad=[False])  # an integer tensor with a float bound is float32
    for lib, f in ((mt, F.hardtanh), (torch, torch.nn.functional.hardtanh)):
        with pytest.raises(RuntimeError, match="unsigned type with negative limits"):
            f(lib.tensor([0, 7], dtype=lib.uint8))
        with pytest.raises(RuntimeError, match="Bool inputs not supported for hardtanh"):
            f(lib.tensor([True]))


# ====================================================================================== 3. add/sub alpha


def test_alpha_checked_against_the_result_dtype_as_torch():
    F32, B = np.array([1.0, 2.0], np.float32), np.array([True, False])
    for alpha, msg in ((True, "Boolean alpha only supported for Boolean results"),
                       (1j, "alpha must not be a complex number"), (1 + 0j, "alpha must not be a complex number")):
        for lib in (mt, torch):
            for f in (lambda a, b: lib.add(a, b, alpha=alpha), lambda a, b: lib.sub(a, b, alpha=alpha),
                      lambda a, b: a.add(b, alpha=alpha), lambda a, b: lib.add(a, 2.0, alpha=alpha)):
                with pytest.raises(RuntimeError, match=msg):
                    f(lib.tensor(F32), lib.tensor(F32))
    for lib in (mt, torch):
        with pytest.raises(RuntimeError, match="alpha must not be a floating point number"):
            lib.add(lib.tensor([1, 2]), lib.tensor([1, 2]), alpha=2.5)  # integers with a float alpha (as before)
        with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool tensors"):
            lib.sub(lib.tensor(B), lib.tensor(B), alpha=2)
        with pytest.raises(TypeError):
            lib.add(lib.tensor(F32), lib.tensor(F32), alpha=None)
    # a bool result converts alpha to bool (PyTorch): [T, F] + 2·[T, T] = [T, F] or [T, T] = [T, T]; alpha 0: a
    for alpha, want in ((2, [True, True]), (-1, [True, True]), (0, [True, False]), (True, [True, True])):
        o, _ = compare_with_torch(lambda a, b: mt.add(a, b, alpha=alpha), lambda a, b: torch.add(a, b, alpha=alpha),
                                  [B, np.array([True, True])])
        assert o[0].dtype == np.bool_ and o[0].tolist() == want
    compare_with_torch(lambda a, b: mt.add(a, b, alpha=-2), lambda a, b: torch.add(a, b, alpha=-2), [F32, F32])
    compare_with_torch(lambda a: mt.sub(a, 1.5, alpha=2), lambda a: torch.sub(a, 1.5, alpha=2), [F32])
    compare_with_torch(lambda a, b: mt.add(a, b, alpha=2j), lambda a, b: torch.add(a, b, alpha=2j),
                       [F32.astype(np.complex64), F32.astype(np.complex64)])


def test_alpha_number_fast_path_is_the_general_path():
    # a float tensor with a Python number takes number_operands' fast path; a 0-d tensor operand the general one
    x = np.array([1.0, -0.0, np.inf, np.nan], np.float32)
    for alpha in (2, -1, 0, 0.5):
        for op in (mt.add, mt.sub):
            fast = op(mt.tensor(x), 1.5, alpha=alpha)
            general = op(mt.tensor(x), mt.tensor(np.float32(1.5)), alpha=alpha)
            assert _bits(fast) == _bits(general), (op, alpha)
    for alpha in (True, 1j):  # the same error, class and message, on both paths
        errs = []
        for b in (1.5, mt.tensor(np.float32(1.5))):
            with pytest.raises(RuntimeError) as e:
                mt.add(mt.tensor(x), b, alpha=alpha)
            errs.append((type(e.value), str(e.value)))
        assert errs[0] == errs[1]


def test_inplace_add_alpha_is_checked():
    # add_/sub_ take add/sub's alpha checks (the alpha == 1 fast path only for the int 1, not True or 1.0)
    for lib in (mt, torch):
        with pytest.raises(RuntimeError, match="Boolean alpha"):
            lib.ones(2).add_(lib.ones(2), alpha=True)
        with pytest.raises(RuntimeError):
            lib.ones(2, dtype=lib.int64).sub_(lib.ones(2, dtype=lib.int64), alpha=2.5)
    assert mt.ones(2).add_(mt.ones(2), alpha=2.5).tolist() == [3.5, 3.5]  # 1 + 2.5·1
    assert mt.ones(2).sub_(1, alpha=2).tolist() == [-1.0, -1.0]  # 1 - 2·1
    assert mt.tensor([True]).add_(mt.tensor([True]), alpha=2).dtype == mt.bool


def test_fill_refuses_none_and_strings():
    for lib in (mt, torch):  # fill_(None) wrote NaN
        for v in (None, "a"):
            with pytest.raises(TypeError):
                lib.zeros(2).fill_(v)


# ====================================================================================== 4. values written in


@pytest.mark.parametrize("write", ["setitem_int", "setitem_slice", "setitem_mask", "setitem_2d", "masked_fill",
                                   "masked_fill_", "index_fill", "full", "fill", "fill_"])
def test_numbers_written_into_a_tensor_are_checked_as_torch(write):
    def do(lib, dtype, v):
        t = lib.zeros(3, dtype=getattr(lib, dtype))
        if write == "setitem_int":
            t[0] = v
        elif write == "setitem_slice":
            t[0:2] = v
        elif write == "setitem_mask":
            t[lib.tensor([True, False, True])] = v
        elif write == "setitem_2d":
            t = lib.zeros(2, 3, dtype=getattr(lib, dtype))
            t[0, 1] = v
        elif write in ("masked_fill", "masked_fill_"):
            t = getattr(t, write)(lib.tensor([True, False, True]), v)
        elif write == "index_fill":
            t = t.index_fill(0, lib.tensor([0, 2]), v)
        elif write == "full":
            t = lib.full((3,), v, dtype=getattr(lib, dtype))
        elif write == "fill_":
            t.fill_(v)
        else:
            t = lib.fill(t, v)
        return t.tolist()

    for dtype, v, err in [("float32", None, TypeError), ("float32", "a", TypeError), ("float32", "1.5", TypeError),
                          ("int8", 300, RuntimeError), ("int8", -129, RuntimeError), ("uint8", 300, RuntimeError),
                          ("int8", math.nan, RuntimeError), ("int64", math.inf, RuntimeError),
                          ("float32", 1e40, RuntimeError), ("float32", np.float64(1e40), RuntimeError),
                          ("int8", np.int64(300), RuntimeError), ("float32", 1j, RuntimeError)]:
        if write == "index_fill" and err is TypeError or write in ("fill", "fill_") and v is None:
            continue  # PyTorch's argument parser words these (the class is the same)
        for lib in (mt, torch):
            with pytest.raises(err):
                do(lib, dtype, v)
        if err is RuntimeError:  # ours is also Python's OverflowError, naming value and dtype
            with pytest.raises(ValueOverflowError, match=f"value .* cannot be converted to type {dtype} without"):
                do(mt, dtype, v)
    # written as PyTorch: uint8 -1 wraps to 256 - 1 = 255, -129 to 256 - 129 = 127; int8 1.5 truncates to 1; any
    # number is True in a bool tensor (NaN and 1j too); (1 + 0j) is 1 in a real tensor; NaN and inf in floats
    for dtype, v in [("uint8", -1), ("uint8", -129), ("int8", 1.5), ("int8", -1.9), ("bool", math.nan),
                     ("bool", 300), ("float32", math.inf), ("float32", math.nan), ("int64", 1 + 0j),
                     ("complex64", 1j)]:
        if write == "index_fill" and isinstance(v, complex):
            continue  # PyTorch's index_fill refuses complex numbers outright
        ours, theirs = do(mt, dtype, v), do(torch, dtype, v)
        assert str(ours) == str(theirs), (dtype, v)
    assert do(mt, "uint8", -1)[0] in (255, [0, 255, 0])
    # float16 is checked against float32's range, as PyTorch's fill_ and full: 65519 rounds to 65504 (the midpoint
    # to inf is 65520), 70000 to inf; PyTorch's setitem and masked_fill refuse 65519 instead (not followed)
    assert do(mt, "float16", 65519.0)[0] in (65504.0, [0.0, 65504.0, 0.0])
    assert do(mt, "float16", 70000.0)[0] in (math.inf, [0.0, math.inf, 0.0])


def test_setitem_int_fast_index_is_the_general_index():
    # t[0] takes the Python-int index fast path; t[np.int64(0)] the general normalization: same values, same errors
    for v in (2.5, -0.0, math.nan, True):
        a, b = mt.zeros(3), mt.zeros(3)
        a[0], b[np.int64(0)] = v, v
        assert _bits(a) == _bits(b)
    for v in (None, "a", 1e40):
        errs = []
        for idx in (0, np.int64(0)):
            with pytest.raises((TypeError, RuntimeError)) as e:
                mt.zeros(3).__setitem__(idx, v)
            errs.append((type(e.value), str(e.value)))
        assert errs[0] == errs[1]


# ====================================================================================== 5. item


def test_item_of_many_elements_is_a_runtime_error_and_still_a_value_error():
    for shape in ((3,), (0,), (2, 2)):
        n = int(np.prod(shape))
        for lib in (mt, torch):
            with pytest.raises(RuntimeError, match=f"a Tensor with {n} elements cannot be converted to Scalar"):
                lib.ones(*shape).item()
        with pytest.raises(ValueError):  # code written for the old error keeps catching it
            mt.ones(*shape).item()
    compare_with_torch(lambda t: t.sum() * 1.0, lambda t: t.sum() * 1.0, [np.array([1.5, 2.0])])
    assert mt.tensor([2.5]).item() == 2.5 and mt.tensor(-0.0).item() == 0.0


# ====================================================================================== 6. float64 -> half casts


def test_float64_to_half_and_bfloat16_round_once_as_ieee():
    # float16 keeps 10 fraction bits: near 1 its spacing is 2**-10, the midpoint 1 + 2**-11. x = 1 + 2**-11 + 2**-40
    # lies above it, so the nearest float16 is 1 + 2**-10 = 1.0009765625. PyTorch first rounds to float32 (23
    # bits): 2**-40 is lost, x becomes the midpoint itself, a tie, rounded to even: 1.0. bfloat16 (7 bits): the
    # same with 1 + 2**-8 + 2**-40 -> 1 + 2**-7 = 1.0078125 (PyTorch: 1.0)
    h, b = 1 + 2**-11 + 2**-40, 1 + 2**-8 + 2**-40
    assert mt.tensor([h], dtype=mt.float64).half().tolist() == [1 + 2**-10]
    assert mt.tensor([h], dtype=mt.float64).to(mt.float16).tolist() == [1.0009765625]
    assert mt.tensor([b], dtype=mt.float64).bfloat16().float().tolist() == [1.0078125]
    assert torch.tensor([h], dtype=torch.float64).half().tolist() == [1.0]  # PyTorch's double rounding
    assert torch.tensor([b], dtype=torch.float64).bfloat16().float().tolist() == [1.0]
    assert np.float16(h) == 1 + 2**-10  # NumPy's direct rounding agrees with the hand computation
    # away from midpoints the two agree
    compare_with_torch(lambda t: t.half(), lambda t: t.half(), [np.array([0.1, 1.5, -3.25, 65504.0, 1e5])],
                       requires_grad=[False])

"""Integer tensors and dtype promotion (issue 13): results' dtypes and values as PyTorch 2.13.

PyTorch's rule (``c10/core/ScalarType.h``, ``TensorIterator``'s ``compute_types``): the highest
category (bool < integer < float) decides; within it a dimensioned tensor decides before a 0-d
tensor, which decides before a Python number; a Python float that decides gives the default float
dtype (float32). The math: integer values are exact, so each value is also checked by hand.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import minitorch_ln as mt
from helpers import compare_with_torch, torch
from minitorch_ln import backend

# ---------------------------------------------------------------------- strategies (this file)

INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8"]
small_ints = st.lists(st.integers(0, 9), min_size=1, max_size=6)


def _both(values, dtype):
    return mt.tensor(np.array(values, dtype)), torch.tensor(np.array(values, dtype))


def _same(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", ""), f"{ours.dtype} vs torch {theirs.dtype}"
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# ------------------------------------------------------------------------------ int with floats


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_int_with_python_float_gives_float32(dtype):
    m, t = _both([1, 2, 3], dtype)
    for f in (lambda x: x + 0.5, lambda x: 0.5 + x, lambda x: x * 0.5, lambda x: x - 0.5, lambda x: x / 2,
              lambda x: x**2.0, lambda x: x**0.5, lambda x: 2.0**x, lambda x: x + np.float64(0.5)):
        _same(f(m), f(t))
    np.testing.assert_array_equal((m + 0.5).numpy(), [1.5, 2.5, 3.5])  # exact in float32
    np.testing.assert_array_equal((m**2.0).numpy(), [1.0, 4.0, 9.0])


def test_int_pow_keeps_integers_with_integer_exponents():
    m, t = _both([2, 3], "int64")
    _same(m**2, t**2)
    _same(2 ** m, 2**t)
    _same(m ** mt.tensor([3, 1]), t ** torch.tensor([3, 1]))
    np.testing.assert_array_equal((m**2).numpy(), [4, 9])
    mb, tb = _both([True, False], "bool")
    _same(mb**2, tb**2)  # bool ** int -> int64


def test_int_pow_negative_integer_exponent_raises_as_torch():
    m, t = _both([2, 3], "int64")
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        t**-1
    with pytest.raises(RuntimeError, match=r"Integers to negative integer powers are not allowed \(base int64"):
        m**-1
    # a tensor exponent is PyTorch's integer kernel, not an error: 2^1 = 2, 3^-2 = 1/9 truncated to 0
    _same(m ** mt.tensor([1, -2]), t ** torch.tensor([1, -2]))
    np.testing.assert_array_equal((m ** mt.tensor([1, -2])).numpy(), [2, 0])
    # 1^-k = 1, (-1)^-k = ±1 by parity, anything else 0 (0 included), as PyTorch; and 2 ** [-1, 0, 2]
    base, expo = [2, 1, -1, -1, 0, -3], [-1, -5, -3, -2, -1, -2]
    _same(mt.tensor(base) ** mt.tensor(expo), torch.tensor(base) ** torch.tensor(expo))
    np.testing.assert_array_equal((mt.tensor(base) ** mt.tensor(expo)).numpy(), [0, 1, -1, 1, 0, 0])
    _same(2 ** mt.tensor([-1, 0, 2]), 2 ** torch.tensor([-1, 0, 2]))
    np.testing.assert_allclose((m.float() ** -1).numpy(), [0.5, 1 / 3])  # a float base is fine


def test_zero_dim_tensors_rank_between_tensors_and_numbers():
    i, ti = _both([2, 3], "int64")
    for dt in ("float64", "float16"):
        z, tz = mt.tensor(np.array(0.5, dt)), torch.tensor(np.array(0.5, dt))
        _same(i + z, ti + tz)  # the 0-d float tensor's dtype decides: float64 / float16
    h, th = _both([1.0, 2.0], "float16")
    z, tz = mt.tensor(np.array(0.5, "float64")), torch.tensor(np.array(0.5, "float64"))
    _same(h * z, th * tz)  # same category: the dimensioned tensor decides (float16)
    _same(h * np.float64(0.5), th * np.float64(0.5))
    z16 = mt.tensor(np.array(2.0, "float16"))
    _same(z16 + np.float64(0.5), torch.tensor(np.array(2.0, "float16")) + np.float64(0.5))


def test_result_dtype_table():
    # (a dtype, a is 0-d, b dtype, b is 0-d, a is a number, b is a number) -> PyTorch's result
    rd = backend.result_dtype
    assert rd(np.int64, False, np.float64, True, a_is_number=False, b_is_number=True) == np.float32
    assert rd(np.int64, False, np.float64, True, a_is_number=False, b_is_number=False) == np.float64
    assert rd(np.float16, True, np.float64, True, a_is_number=False, b_is_number=True) == np.float16
    assert rd(np.bool_, False, np.int64, True, a_is_number=False, b_is_number=True) == np.int64
    assert rd(np.int8, False, np.int64, True, a_is_number=False, b_is_number=False) == np.int8
    assert rd(np.int32, False, np.float16, False) == np.float16


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_int_with_python_int_keeps_the_dtype(dtype):
    m, t = _both([1, 2, 3], dtype)
    _same(m + 1, t + 1)
    _same(m * 2, t * 2)
    mb, tb = _both([True, False], "bool")
    _same(mb + 1, tb + 1)  # bool with a Python int -> int64


def test_float_gradients_through_promotion_match_torch():
    # an int tensor times a float leaf: the float32 leaf's gradient is the int values
    compare_with_torch(lambda w: w * mt.tensor(np.array([1, 2, 3])), lambda w: w * torch.tensor([1, 2, 3]),
                       [np.array([0.5, -1.0, 2.0], np.float32)])
    compare_with_torch(lambda w: mt.tensor(np.array([1, 2])) ** w, lambda w: torch.tensor([1, 2]) ** w,
                       [np.array([0.5, 2.0], np.float32)])


# --------------------------------------------------------------------------- bitwise operators


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8"])
def test_bitwise_operators_are_bitwise_on_integers(dtype):
    a_vals, b_vals = [5, 3, 12, 0], [3, 6, 10, 7]
    (ma, ta), (mb, tb) = _both(a_vals, dtype), _both(b_vals, dtype)
    _same(ma & mb, ta & tb)
    _same(ma | mb, ta | tb)
    _same(ma ^ mb, ta ^ tb)
    _same(~ma, ~ta)
    _same(ma << 1, ta << 1)
    _same(ma >> 1, ta >> 1)
    _same(ma & 6, ta & 6)
    _same(6 | ma, 6 | ta)
    # by hand: 5 & 3 = 0b101 & 0b011 = 1, 5 | 3 = 7, 5 ^ 3 = 6, 12 >> 1 = 6
    np.testing.assert_array_equal((ma & mb).numpy()[0], 1)
    np.testing.assert_array_equal((ma | mb).numpy()[0], 7)
    np.testing.assert_array_equal((ma ^ mb).numpy()[0], 6)
    np.testing.assert_array_equal((ma >> 1).numpy()[2], 6)


def test_bitwise_operators_call_the_bitwise_ops():
    from minitorch_ln.ops import bitwise

    a = mt.tensor(np.array([5, -2], np.int32))
    assert (a & a).dtype == np.int32 and (~a).numpy().tolist() == [-6, 1]  # ~x = -x - 1
    for op, fn in (("__and__", bitwise.bitwise_and), ("__or__", bitwise.bitwise_or), ("__xor__", bitwise.bitwise_xor),
                   ("__lshift__", bitwise.bitwise_left_shift), ("__rshift__", bitwise.bitwise_right_shift)):
        np.testing.assert_array_equal(getattr(a, op)(a).numpy(), fn(a, a).numpy())
    with pytest.raises(TypeError, match="not implemented for dtype float32: expected integer or bool"):
        mt.ones(2) & mt.ones(2)


@given(small_ints, small_ints, st.sampled_from(INT_DTYPES))
def test_property_int_arithmetic_dtypes_match_torch(xs, ys, dtype):
    n = min(len(xs), len(ys))
    (ma, ta), (mb, tb) = _both(xs[:n], dtype), _both(ys[:n], dtype)
    _same(ma + mb, ta + tb)
    _same(ma & mb, ta & tb)
    _same(ma + 0.25, ta + 0.25)
    _same(ma**2.0, ta**2.0)
    _same(ma * mb.float(), ta * tb.float())

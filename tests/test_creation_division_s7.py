"""Silently wrong results found by the session-7 break-it run: integer division by out-of-range numbers, the
legacy ``Tensor(...)`` constructors, random fills (integer dtypes, negative std, non-contiguous targets),
``arange``/``linspace`` rounding and dtypes, and the dtype of ``full``/``tensor`` and friends.

Each is compared with PyTorch through ``helpers`` and pinned by a hand-worked value at the edge.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_ln as mt
from helpers import assert_close, compare_with_torch

torch = pytest.importorskip("torch")

U8 = np.array([3, 250], dtype=np.uint8)
I8 = np.array([3, -100], dtype=np.int8)


# ================================================================ 1. integer true division by any number

# (name, f(lib, x)): a uint8/int8 tensor with a number or 0-d tensor that the int dtype cannot hold
TRUE_DIV = {
    "u8/256": (U8, lambda lib, x: x / 256),
    "u8/300": (U8, lambda lib, x: x / 300),
    "i8/200": (I8, lambda lib, x: x / 200),
    "u8/tensor(-7)": (U8, lambda lib, x: x / lib.tensor(-7)),
    "u8/tensor(256)": (U8, lambda lib, x: x / lib.tensor(256)),
    "u8/np.int64(256)": (U8, lambda lib, x: x / np.int64(256)),
    "300/u8": (U8, lambda lib, x: 300 / x),
    "-7/u8": (U8, lambda lib, x: -7 / x),
    "i16/70000": (np.array([3, 250], np.int16), lambda lib, x: x / 70000),
    "i32/(2**31+5)": (np.array([3, -250], np.int32), lambda lib, x: x / (2**31 + 5)),
    "i32/2**40": (np.array([3, -250], np.int32), lambda lib, x: x / 2**40),
    "i8/tensor(200, int16)": (I8, lambda lib, x: x / lib.tensor(200, dtype=lib.int16)),
    "true_divide": (U8, lambda lib, x: lib.true_divide(x, 256)),
    "Tensor.true_divide": (U8, lambda lib, x: x.true_divide(300)),
    "div(rounding_mode=None)": (U8, lambda lib, x: lib.div(x, 256, rounding_mode=None)),
    "divide": (U8, lambda lib, x: lib.divide(x, 256)),
    "Tensor.div": (U8, lambda lib, x: x.div(lib.tensor(-7))),
    "bool/256": (np.array([True, False]), lambda lib, x: x / 256),
    "u8/True": (U8, lambda lib, x: x / True),
}


@pytest.mark.parametrize("name", sorted(TRUE_DIV))
def test_integer_true_division_divides_the_real_values(name):
    x, f = TRUE_DIV[name]
    compare_with_torch(lambda a: f(mt, a), lambda a: f(torch, a), [x])


def test_integer_true_division_hand_worked():
    # 3/256 and 250/256 are exact binary fractions (0.01171875, 0.9765625); the old code cast 256 to uint8 (0)
    # first and gave [inf, inf]
    assert (mt.tensor(U8) / 256).tolist() == [0.01171875, 0.9765625]
    # -100/200 = -0.5 exactly (200 as int8 is -56: the old result was 1.7857...)
    assert (mt.tensor(I8) / 200).tolist()[1] == -0.5
    # 250 / -7 in float32: -35.714287 (the old code read -7 as uint8 249)
    assert (mt.tensor(U8) / mt.tensor(-7)).numpy()[1] == np.float32(250) / np.float32(-7)
    out = mt.tensor(U8) / 256
    assert out.dtype == mt.float32


def test_integer_true_division_by_an_int_beyond_uint64_raises_overflow_error_as_torch():
    for big in (2**64, -(2**63) - 1, 2**70):
        with pytest.raises(OverflowError):
            torch.tensor([3]) / big
        with pytest.raises(OverflowError, match="int too big"):
            mt.tensor([3]) / big
    # 2**63 still fits PyTorch's unsigned reading: 3 / 2**63 = 3·2**-63
    assert (mt.tensor([3]) / 2**63).item() == float(np.float32(3 * 2.0**-63))


# the rounding divisions keep the integer dtype, so the number wraps into it first, as PyTorch (checked above
# for true division that it must not)
ROUNDING = {
    "u8//300": (U8, lambda lib, x: x // 300),
    "u8%300": (U8, lambda lib, x: x % 300),
    "u8%-7": (U8, lambda lib, x: x % -7),
    "floor_divide": (U8, lambda lib, x: lib.floor_divide(x, 300)),
    "remainder": (U8, lambda lib, x: lib.remainder(x, -7)),
    "remainder(-300)": (U8, lambda lib, x: x.remainder(-300)),
    "fmod(u8, 300)": (U8, lambda lib, x: lib.fmod(x, 300)),
    "fmod(i8, 200)": (I8, lambda lib, x: lib.fmod(x, 200)),
    "fmod(u8, tensor(300))": (U8, lambda lib, x: x.fmod(lib.tensor(300))),
    "div floor": (U8, lambda lib, x: lib.div(x, 300, rounding_mode="floor")),
    "div trunc": (I8, lambda lib, x: lib.div(x, 200, rounding_mode="trunc")),
    "div floor -7": (I8, lambda lib, x: lib.div(x, -7, rounding_mode="floor")),
    "div trunc tensor(-200)": (I8, lambda lib, x: x.div(lib.tensor(-200), rounding_mode="trunc")),
    "u8//tensor(-7)": (U8, lambda lib, x: x // lib.tensor(-7)),
    "-7//u8": (U8, lambda lib, x: -7 // x),
    "300//u8": (U8, lambda lib, x: 300 // x),
    "300%u8": (U8, lambda lib, x: 300 % x),
    "u8//256.0": (U8, lambda lib, x: x // 256.0),
    "u8%2.5": (U8, lambda lib, x: x % 2.5),
}


@pytest.mark.parametrize("name", sorted(ROUNDING))
def test_rounding_divisions_by_out_of_range_numbers_match_torch(name):
    x, f = ROUNDING[name]
    compare_with_torch(lambda a: f(mt, a), lambda a: f(torch, a), [x])


def test_rounding_division_by_a_number_that_wraps_to_zero_raises_as_torch():
    # 256 wraps to uint8 0 and -256 to int8 0: PyTorch's RuntimeError ZeroDivisionError
    for x, n in ((U8, 256), (I8, -256)):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            torch.tensor(x) // n
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            mt.tensor(x) // n
    # hand-worked: 250 // (300 mod 256 = 44) = 5, 250 % 44 = 30
    assert (mt.tensor(U8) // 300).tolist() == [0, 5] and (mt.tensor(U8) % 300).tolist() == [3, 30]

"""Bitwise ops and logical_xor (ops/bitwise.py): PyTorch comparison over integer/bool dtypes, shift edge
amounts, promotion with Python scalars, operators, properties, bad input. (No gradients: results are
integer or bool tensors, which never require grad; that is checked instead of gradcheck.)"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis.extra import numpy as hnp

import minitorch_ln as mt
from minitorch_ln.ops import bitwise as W

import strategies as S
from helpers import torch

# ---------------------------------------------------------------------------------------- strategies
# (new strategies for this file only)

INT_DTYPES = [np.int8, np.uint8, np.int16, np.int32, np.int64]


BINARY = [("bitwise_and", W.bitwise_and, torch.bitwise_and), ("bitwise_or", W.bitwise_or, torch.bitwise_or),
          ("bitwise_xor", W.bitwise_xor, torch.bitwise_xor),
          ("bitwise_left_shift", W.bitwise_left_shift, torch.bitwise_left_shift),
          ("bitwise_right_shift", W.bitwise_right_shift, torch.bitwise_right_shift),
          ("logical_xor", W.logical_xor, torch.logical_xor)]
IDS = [b[0] for b in BINARY]


def _same(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", ""), (ours.dtype, theirs.dtype)
    assert not ours.requires_grad
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("dtype", INT_DTYPES + [np.bool_])
@pytest.mark.parametrize("name,ours,theirs", BINARY, ids=IDS)
def test_matches_torch_per_dtype_with_broadcasting(name, ours, theirs, dtype, rng):
    if dtype == np.bool_:
        a, b = rng.random((3, 1, 4)) > 0.5, rng.random((2, 4)) > 0.5
    else:
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, (3, 1, 4), endpoint=True).astype(dtype)
        b = rng.integers(0, 12, (2, 4)).astype(dtype) if "shift" in name else rng.integers(info.min, info.max, (2, 4)).astype(dtype)
    if dtype == np.bool_ and "shift" in name:
        with pytest.raises(TypeError, match=rf"{name}: not implemented for dtype bool: expected integer tensors"):
            ours(mt.tensor(a), mt.tensor(b))
        return
    _same(ours(mt.tensor(a), mt.tensor(b)), theirs(torch.from_numpy(a), torch.from_numpy(b)))


@given(S.int_arrays_and_shifts())
def test_property_shifts_match_torch_at_any_amount(a_s):
    a, s = a_s  # negative shifts and shifts past the bit width included
    for ours, theirs in ((W.bitwise_left_shift, torch.bitwise_left_shift), (W.bitwise_right_shift, torch.bitwise_right_shift)):
        _same(ours(mt.tensor(a), mt.tensor(s)), theirs(torch.from_numpy(a), torch.from_numpy(s)))


@given(hnp.arrays(np.int32, hnp.array_shapes(max_dims=3, max_side=4)), hnp.arrays(np.int32, hnp.array_shapes(max_dims=3, max_side=4)))
def test_property_de_morgan_and_xor_identities(a, b):
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return
    x, y = mt.tensor(a), mt.tensor(b)
    np.testing.assert_array_equal(W.bitwise_not(W.bitwise_and(x, y)).numpy(),
                                  W.bitwise_or(W.bitwise_not(x), W.bitwise_not(y)).numpy())
    np.testing.assert_array_equal(W.bitwise_xor(W.bitwise_xor(x, y), y).numpy(), np.broadcast_to(a, np.broadcast_shapes(a.shape, b.shape)))


def test_shift_edges_and_bitwise_not_match_torch():
    for dtype in INT_DTYPES:
        a = np.array([np.iinfo(dtype).min, -1 if dtype != np.uint8 else 1, 0, 1, np.iinfo(dtype).max], dtype)
        bits = np.dtype(dtype).itemsize * 8
        for s in ([bits - 1] * 5, [bits] * 5, [bits + 3] * 5, [0] * 5):
            s = np.array(s, dtype)
            for ours, theirs in ((W.bitwise_left_shift, torch.bitwise_left_shift), (W.bitwise_right_shift, torch.bitwise_right_shift)):
                _same(ours(mt.tensor(a), mt.tensor(s)), theirs(torch.from_numpy(a), torch.from_numpy(s)))
        _same(W.bitwise_not(mt.tensor(a)), torch.bitwise_not(torch.from_numpy(a)))
    _same(W.bitwise_not(mt.tensor([True, False])), torch.bitwise_not(torch.tensor([True, False])))


def test_python_scalars_keep_the_tensors_dtype_and_operators():
    a = np.array([-7, 0, 5, 12], np.int32)
    x, t = mt.tensor(a), torch.from_numpy(a)
    b = np.array([True, False, True])
    for ours, theirs in [(W.bitwise_and(x, 3), torch.bitwise_and(t, 3)), (W.bitwise_or(6, x), torch.bitwise_or(6, t)),
                         (x ^ 5, t ^ 5), (5 ^ x, 5 ^ t), (x << 2, t << 2), (1 << mt.tensor(np.int32([0, 3])), 1 << torch.tensor([0, 3], dtype=torch.int32)),
                         (x >> 1, t >> 1), (64 >> mt.tensor(np.int32([1, 2])), 64 >> torch.tensor([1, 2], dtype=torch.int32)),
                         (3 & x, 3 & t), (3 | x, 3 | t), (mt.tensor(b) ^ True, torch.from_numpy(b) ^ True),
                         (W.bitwise_and(mt.tensor(b), 1), torch.bitwise_and(torch.from_numpy(b), 1)),
                         (W.bitwise_left_shift(mt.tensor(b), 1), torch.bitwise_left_shift(torch.from_numpy(b), 1)),
                         (x.bitwise_xor(x), t.bitwise_xor(t)), (x.bitwise_not(), t.bitwise_not()),
                         (x.bitwise_left_shift(1), t.bitwise_left_shift(1))]:
        _same(ours, theirs)


def test_logical_xor_on_floats_and_nan():
    a, b = np.array([1.5, 0.0, np.nan, 0.0]), np.array([0.0, 0.0, 0.0, -2.0])
    _same(W.logical_xor(mt.tensor(a, requires_grad=True), mt.tensor(b)), torch.logical_xor(torch.from_numpy(a), torch.from_numpy(b)))
    _same(mt.tensor(a).logical_xor(mt.tensor(b)), torch.from_numpy(a).logical_xor(torch.from_numpy(b)))
    assert W.logical_xor(mt.zeros(0, 2), mt.zeros(0, 2)).shape == (0, 2)


def test_bad_input_raises_clear_errors():
    with pytest.raises(TypeError, match=r"bitwise_and: not implemented for dtype float32: expected integer or bool tensors"):
        W.bitwise_and(mt.tensor([1.0]), mt.tensor([1.0]))
    with pytest.raises(TypeError, match=r"bitwise_xor: not implemented for dtype float32"):
        _ = mt.tensor([1, 2]) ^ 2.5  # an int tensor with a Python float promotes to float32 (as PyTorch)
    with pytest.raises(TypeError, match=r"bitwise_left_shift: not implemented for dtype float32: expected integer tensors"):
        _ = mt.tensor([1.0]) << 1
    with pytest.raises(TypeError, match=r"bitwise_not: not implemented for dtype float64: expected an integer or bool tensor"):
        W.bitwise_not(mt.tensor(np.array([1.0])))
    with pytest.raises(ValueError, match=r"bitwise_or: shapes \(2,\) and \(3,\) do not broadcast"):
        W.bitwise_or(mt.tensor([1, 2]), mt.tensor([1, 2, 3]))
    with pytest.raises(TypeError, match=r"expected at least one Tensor, got int and int"):
        W.bitwise_and(1, 2)

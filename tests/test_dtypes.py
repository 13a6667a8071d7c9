"""The dtype API against PyTorch: small integer dtypes through creation, arithmetic, comparisons and
argmax; ``promote_types``/``result_type``/``can_cast`` over every pair; ``finfo``/``iinfo``;
``set_default_dtype``; ``Tensor.type``/``type_as``/``short``/``byte``/``char``; bfloat16 made and named
(its arithmetic: tests/test_bfloat16.py).

Table-driven: a new dtype, op or case is one entry in DTYPES / BINARY_OPS / the case lists.
"""

import itertools

import numpy as np
import pytest
from hypothesis import given, strategies as st

import minitorch_ln as mt
from helpers import compare_with_torch, t64, torch
from minitorch_ln import dtypes as D
from minitorch_ln.autograd import gradcheck
from minitorch_ln.ops import dtype_ops  # noqa: F401 - attaches Tensor.type, type_as, short, byte, char
from minitorch_ln.ops.reduction import argmax

# ---- strategies of this file ------------------------------------------------------------------
# (ours, torch's) for every supported dtype
DTYPES = [
    (mt.bool, torch.bool), (mt.uint8, torch.uint8), (mt.int8, torch.int8), (mt.int16, torch.int16),
    (mt.int32, torch.int32), (mt.int64, torch.int64), (mt.float16, torch.float16),
    (mt.float32, torch.float32), (mt.float64, torch.float64),
]
PAIRS = list(itertools.product(DTYPES, DTYPES))
dtype_pairs = st.sampled_from(PAIRS)
small_ints = st.lists(st.integers(0, 5), min_size=1, max_size=6)

# (name, ours(a, b), torch's(a, b)); values 0..5 are exact in every dtype
BINARY_OPS = [
    ("add", lambda a, b: a + b, lambda a, b: a + b),
    ("mul", lambda a, b: a * b, lambda a, b: a * b),
    ("div", lambda a, b: a / (b + 1), lambda a, b: a / (b + 1)),
    ("eq", lambda a, b: a == b, lambda a, b: a == b),
    ("lt", lambda a, b: a < b, lambda a, b: a < b),
    ("maximum", mt.maximum, torch.maximum),
]


def _pair_id(p):
    return f"{p[0][0]}-{p[1][0]}"


def _arr(vals, dt):
    return np.asarray(vals).astype(dt)


def _same(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", ""), (ours.dtype, theirs.dtype)
    np.testing.assert_array_equal(ours.numpy().astype(np.float64), theirs.numpy().astype(np.float64))


@pytest.fixture
def restore_default_dtype():
    yield
    D.set_default_dtype(mt.float32)


@pytest.mark.parametrize("name,ours,theirs", BINARY_OPS, ids=[o[0] for o in BINARY_OPS])
@pytest.mark.parametrize("pair", PAIRS, ids=_pair_id)
def test_binary_promotion_matches_torch(pair, name, ours, theirs):
    (ma, ta), (mb, tb) = pair
    a, b = [0, 1, 2, 5], [1, 1, 3, 0]
    _same(ours(mt.tensor(_arr(a, ma)), mt.tensor(_arr(b, mb))), theirs(torch.tensor(a, dtype=ta), torch.tensor(b, dtype=tb)))


@pytest.mark.parametrize("pair", PAIRS, ids=_pair_id)
def test_promote_types_and_can_cast_match_torch(pair):
    (ma, ta), (mb, tb) = pair
    assert str(D.promote_types(ma, mb)) == str(torch.promote_types(ta, tb)).replace("torch.", "")
    assert D.can_cast(ma, mb) == torch.can_cast(ta, tb)


# scalars for result_type and tensor-with-number arithmetic
SCALARS = [True, 3, 2.5]


@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: str(d[0]))
def test_result_type_and_scalar_arithmetic_match_torch(dt, scalar):
    m, t = dt
    mx, tx = mt.tensor(_arr([0, 1, 2], m)), torch.tensor([0, 1, 2], dtype=t)
    expect = str(torch.result_type(tx, scalar)).replace("torch.", "")
    assert str(D.result_type(mx, scalar)) == expect
    assert str(D.result_type(scalar, mx)) == expect
    assert str(D.result_type(mx[0], mt.tensor(_arr([1], m)))) == str(torch.result_type(tx[0], tx)).replace("torch.", "")
    if not (m == mt.bool and scalar is True):  # bool + True is bool in both; values checked below anyway
        _same(mx * scalar, tx * scalar)
    _same(mx == scalar, tx == scalar)


@pytest.mark.parametrize("a,b", list(itertools.product(SCALARS, SCALARS)))
def test_result_type_of_two_numbers(a, b):
    assert str(D.result_type(a, b)) == str(torch.result_type(a, b)).replace("torch.", "")


@pytest.mark.parametrize("dt", DTYPES[1:6], ids=lambda d: str(d[0]))
def test_small_int_creation_and_argmax_match_torch(dt):
    m, t = dt
    _same(mt.zeros(2, 3, dtype=m), torch.zeros(2, 3, dtype=t))
    _same(mt.ones(4, dtype=m) * 3, torch.ones(4, dtype=t) * 3)
    _same(mt.arange(5, dtype=m), torch.arange(5, dtype=t))
    _same(mt.full((2,), 7, dtype=m), torch.full((2,), 7, dtype=t))
    vals = [[3, 1, 4], [1, 5, 5]]
    _same(argmax(mt.tensor(vals, dtype=m)), torch.argmax(torch.tensor(vals, dtype=t)))
    _same(argmax(mt.tensor(vals, dtype=m), 1), torch.argmax(torch.tensor(vals, dtype=t), 1))
    _same(mt.tensor(vals, dtype=m) > 2, torch.tensor(vals, dtype=t) > 2)


@given(dtype_pairs, small_ints)
def test_add_property_matches_torch(pair, vals):
    (ma, ta), (mb, tb) = pair
    a, b = vals, list(reversed(vals))
    _same(mt.tensor(_arr(a, ma)) + mt.tensor(_arr(b, mb)), torch.tensor(a, dtype=ta) + torch.tensor(b, dtype=tb))


def test_out_of_range_int_comparisons_follow_the_math():
    # PyTorch wraps the number into uint8 first (-1 -> 255: `u > -1` is all False); the math says True
    u = mt.tensor([0, 200], dtype=mt.uint8)
    assert (u > -1).tolist() == [True, True]
    assert (u == 256).tolist() == [False, False] and (u != 256).tolist() == [True, True]
    assert (u < 300).tolist() == [True, True]
    assert (mt.tensor([-128, 127], dtype=mt.int8) >= -129).tolist() == [True, True]
    assert (mt.tensor([5], dtype=mt.int16) > 40000).tolist() == [False]


# (name, ours(x), torch's(x)) of the conversion methods, on a float64 input
METHOD_CASES = [
    ("short", lambda x: x.short(), lambda x: x.short()),
    ("byte", lambda x: x.byte(), lambda x: x.byte()),
    ("char", lambda x: x.char(), lambda x: x.char()),
    ("type_int16", lambda x: x.type(mt.int16), lambda x: x.type(torch.int16)),
    ("type_float32", lambda x: x.type(mt.float32), lambda x: x.type(torch.float32)),
    ("type_str", lambda x: x.type("torch.FloatTensor"), lambda x: x.type("torch.FloatTensor")),
    ("type_as_int8", lambda x: x.type_as(mt.tensor([1], dtype=mt.int8)),
     lambda x: x.type_as(torch.tensor([1], dtype=torch.int8))),
    ("type_as_f32", lambda x: x.type_as(mt.tensor([1.0])), lambda x: x.type_as(torch.tensor([1.0]))),
]


@pytest.mark.parametrize("name,ours,theirs", METHOD_CASES, ids=[c[0] for c in METHOD_CASES])
def test_conversion_methods_match_torch(name, ours, theirs):
    x = np.array([[0.5, 3.7, 100.2], [7.9, 2.0, 126.0]])  # non-negative: float -> uint8 is defined
    compare_with_torch(ours, theirs, [x], requires_grad=[True])


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: str(d[0]))
def test_type_name_matches_torch(dt):
    m, t = dt
    x = mt.tensor(_arr([1, 0], m))
    assert x.type() == torch.tensor([1, 0], dtype=t).type()
    assert x.type(m) is x and x.type(x.type()) is x and x.type_as(x) is x


def test_type_is_differentiable():
    gradcheck(lambda t: t.transpose(0, 1).type(mt.float64) * 2, (t64(np.arange(6.0).reshape(2, 3)),))
    y = mt.tensor([1.5, 2.5], dtype=mt.float32, requires_grad=True)
    y.type(mt.float64).sum().backward()
    assert y.grad.dtype == mt.float32 and y.grad.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("dt", DTYPES[6:], ids=lambda d: str(d[0]))
def test_finfo_matches_torch(dt):
    m, t = dt
    ours, theirs = D.finfo(m), torch.finfo(t)
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("dt", DTYPES[1:6], ids=lambda d: str(d[0]))
def test_iinfo_matches_torch(dt):
    m, t = dt
    ours, theirs = D.iinfo(m), torch.iinfo(t)
    for attr in ("bits", "max", "min", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert repr(ours) == repr(theirs)


def test_default_dtype(restore_default_dtype):
    assert D.get_default_dtype() == mt.float32 and D.finfo().dtype == "float32"
    D.set_default_dtype(mt.float64)
    assert D.get_default_dtype() == mt.float64 and D.finfo().bits == 64
    assert mt.tensor([1.5]).dtype == mt.float64 and mt.zeros(2).dtype == mt.float64
    assert mt.randn(2).dtype == mt.float64 and mt.arange(0.5, 2).dtype == mt.float64
    assert (mt.tensor([1]) * 1.5).dtype == mt.float64
    assert (mt.tensor([1.0], dtype=mt.float32) * 1.5).dtype == mt.float32  # a number does not widen
    assert D.result_type(1, 2.0) == mt.float64
    D.set_default_dtype(mt.float16)  # PyTorch allows it too
    assert mt.tensor([0.1]).dtype == mt.float16


def test_bfloat16_is_made_and_named_as_pytorch(restore_default_dtype):
    torch = pytest.importorskip("torch")
    for make, theirs in ((lambda: mt.zeros(2, dtype=D.bfloat16), torch.zeros(2, dtype=torch.bfloat16)),
                         (lambda: mt.tensor([1.0], dtype="bfloat16"), torch.tensor([1.0], dtype=torch.bfloat16)),
                         (lambda: mt.ones(2).to(D.bfloat16), torch.ones(2).to(torch.bfloat16)),
                         (lambda: mt.ones(2).type(D.bfloat16), torch.ones(2).type(torch.bfloat16))):
        assert repr(make()) == repr(theirs)
    D.set_default_dtype(D.bfloat16)  # allowed, as PyTorch
    assert mt.tensor([1.5]).dtype == D.bfloat16 and D.get_default_dtype() == D.bfloat16
    assert repr(D.bfloat16) == "dtype(bfloat16)" and str(D.bfloat16) == "bfloat16"


def test_bad_input(restore_default_dtype):
    x = mt.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="only floating point types are supported as the default type, got int32"):
        D.set_default_dtype(mt.int32)
    with pytest.raises(TypeError, match="set_default_dtype: expected a dtype such as float32 or int64, got None"):
        D.set_default_dtype(None)
    with pytest.raises(TypeError, match="finfo: expected a floating point dtype .* got int32; use iinfo"):
        D.finfo(mt.int32)
    with pytest.raises(TypeError, match="iinfo: expected an integer dtype .* got float32; use finfo"):
        D.iinfo(mt.float32)
    with pytest.raises(TypeError, match="iinfo: expected an integer dtype .* got bool"):
        D.iinfo(mt.bool)
    with pytest.raises(TypeError, match="promote_types: expected a dtype .* got 3"):
        D.promote_types(mt.float32, 3)
    with pytest.raises(TypeError, match="result_type: expected a Tensor or a number .* got list"):
        D.result_type(x, [1, 2])
    assert D.result_type(x, 1j) == mt.complex64  # complex numbers are supported now: the default complex dtype
    assert not D.can_cast(np.complex64, mt.float32) and D.can_cast(mt.float32, mt.complex64)  # as torch.can_cast
    with pytest.raises(TypeError, match="dtype complex256 is not supported|expected a dtype"):
        D.can_cast(np.clongdouble, mt.float32)
    with pytest.raises(ValueError, match="invalid type: 'torch.float64'; expected a tensor type name"):
        x.type("torch.float64")
    with pytest.raises(TypeError, match="type_as: expected a Tensor as other, got str"):
        x.type_as("float32")
    with pytest.raises(TypeError, match="type: expected a Tensor, got list"):
        dtype_ops.type([1.0])

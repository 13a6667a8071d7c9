"""Reduction arguments as PyTorch's: ``axis=`` for ``dim=``, ``sum(dtype=)``, ``mean(dtype=)``,
``keepdim``; ``where(condition)`` and ``where(cond, scalar, scalar)``.

Table-driven: one line per case in CASES / DTYPE_CASES / WHERE_CASES, each compared with PyTorch
(values, dtype, requires_grad and gradients through ``compare_with_torch``).
"""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import minitorch_ln as mt
from helpers import compare_with_torch, t64, torch
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.ops import reduction as R, variance as V
from minitorch_ln.ops.comparison import all as all_, any as any_
from minitorch_ln.ops.selection import where

# ---- strategies of this file ------------------------------------------------------------------
shapes_2d = st.tuples(st.integers(1, 4), st.integers(1, 4))

rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4))
INTS = rng.integers(-5, 6, size=(3, 4))

# (name, ours(x), torch's(x), input): float inputs also compare gradients
CASES = [
    ("sum_axis", lambda x: R.sum(x, axis=1), lambda x: torch.sum(x, axis=1), X),
    ("sum_axis_tuple_keep", lambda x: R.sum(x, axis=(0, 1), keepdim=True),
     lambda x: torch.sum(x, axis=(0, 1), keepdim=True), X),
    ("mean_axis_keep", lambda x: R.mean(x, axis=-1, keepdim=True), lambda x: torch.mean(x, axis=-1, keepdim=True), X),
    ("var_axis", lambda x: V.var(x, axis=0), lambda x: torch.var(x, axis=0), X),
    ("std_axis_keep", lambda x: V.std(x, axis=1, keepdim=True), lambda x: torch.std(x, axis=1, keepdim=True), X),
    ("amax_axis", lambda x: R.amax(x, axis=0), lambda x: torch.amax(x, axis=0), X),
    ("amin_axis_keep", lambda x: R.amin(x, axis=1, keepdim=True), lambda x: torch.amin(x, axis=1, keepdim=True), X),
    ("max_axis", lambda x: tuple(R.max(x, axis=1)), lambda x: tuple(torch.max(x, axis=1)), X),
    ("min_axis_keep", lambda x: tuple(R.min(x, axis=0, keepdim=True)),
     lambda x: tuple(torch.min(x, axis=0, keepdim=True)), X),
    ("logsumexp_axis", lambda x: R.logsumexp(x, axis=1), lambda x: torch.logsumexp(x, axis=1), X),
    ("topk_axis", lambda x: tuple(R.topk(x, 2, axis=0)), lambda x: tuple(torch.topk(x, 2, axis=0)), X),
    ("argmax_axis", lambda x: R.argmax(x, axis=1), lambda x: torch.argmax(x, axis=1), X),
    ("argmin_axis_keep", lambda x: R.argmin(x, axis=0, keepdim=True),
     lambda x: torch.argmin(x, axis=0, keepdim=True), X),
    ("any_axis", lambda x: any_(x > 0, axis=1), lambda x: torch.any(x > 0, axis=1), X),
    ("all_axis_keep", lambda x: all_(x > -1, axis=0, keepdim=True),
     lambda x: torch.all(x > -1, axis=0, keepdim=True), X),
    ("method_any_uint8", lambda x: any_(x), lambda x: torch.any(x), INTS.astype(np.uint8)),
    ("all_uint8_dim", lambda x: all_(x, 1), lambda x: torch.all(x, 1), INTS.astype(np.uint8)),
    ("any_int8", lambda x: any_(x, 0), lambda x: torch.any(x, 0), INTS.astype(np.int8)),
    ("argmax_int16", lambda x: R.argmax(x), lambda x: torch.argmax(x), INTS.astype(np.int16)),
    ("argmax_uint8_dim", lambda x: R.argmax(x, 1), lambda x: torch.argmax(x, 1), INTS.astype(np.uint8)),
    ("max_int8_dim", lambda x: tuple(R.max(x, 0)), lambda x: tuple(torch.max(x, 0)), INTS.astype(np.int8)),
]

# (name, ours(x), torch's(x), input): sum/mean with dtype=
DTYPE_CASES = [
    ("sum_int8", lambda x: R.sum(x), lambda x: torch.sum(x), INTS.astype(np.int8)),
    ("sum_uint8_dim", lambda x: R.sum(x, 0), lambda x: torch.sum(x, 0), INTS.astype(np.uint8)),
    ("sum_bool", lambda x: R.sum(x > 0, 1), lambda x: torch.sum(x > 0, 1), X),
    ("sum_int8_as_int8", lambda x: R.sum(x * 40, dtype=mt.int8), lambda x: torch.sum(x * 40, dtype=torch.int8),
     INTS.astype(np.int8)),  # wraps on overflow, as PyTorch
    ("sum_int8_as_float16", lambda x: R.sum(x, 1, dtype=mt.float16), lambda x: torch.sum(x, 1, dtype=torch.float16),
     INTS.astype(np.int8)),
    ("sum_float_as_int32", lambda x: R.sum(x * 3, dtype=mt.int32), lambda x: torch.sum(x * 3, dtype=torch.int32), X),
    ("sum_bool_as_bool", lambda x: R.sum(x > 0, 0, dtype=mt.bool), lambda x: torch.sum(x > 0, 0, dtype=torch.bool), X),
    ("sum_f32_as_f64", lambda x: R.sum(x, 0, True, dtype=mt.float64), lambda x: torch.sum(x, 0, True, dtype=torch.float64),
     X.astype(np.float32)),
    ("mean_int_as_f64", lambda x: R.mean(x, dtype=mt.float64), lambda x: torch.mean(x, dtype=torch.float64),
     INTS.astype(np.int16)),
    ("mean_uint8_as_f32_axis", lambda x: R.mean(x, axis=1, dtype=mt.float32),
     lambda x: torch.mean(x, axis=1, dtype=torch.float32), INTS.astype(np.uint8)),
    ("mean_bool_as_f32", lambda x: R.mean(x > 0, 0, dtype=mt.float32), lambda x: torch.mean(x > 0, 0, dtype=torch.float32), X),
    ("mean_f32_as_f64", lambda x: R.mean(x, 1, True, dtype=mt.float64),
     lambda x: torch.mean(x, 1, True, dtype=torch.float64), X.astype(np.float32)),
    ("mean_f16_as_f32", lambda x: R.mean(x, dtype=mt.float32), lambda x: torch.mean(x, dtype=torch.float32),
     X.astype(np.float16)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs,x", CASES, ids=[c[0] for c in CASES])
def test_axis_alias_matches_torch(name, ours, theirs, x, dtype):
    arr = x.astype(dtype) if x.dtype.kind == "f" else x
    compare_with_torch(ours, theirs, [arr])


@pytest.mark.parametrize("name,ours,theirs,x", DTYPE_CASES, ids=[c[0] for c in DTYPE_CASES])
def test_dtype_argument_matches_torch(name, ours, theirs, x):
    # PyTorch refuses an integer dtype= for an input that requires grad; ours gives no gradient
    compare_with_torch(ours, theirs, [x], requires_grad=[False] if name == "sum_float_as_int32" else None)


# (name, ours, torch's): where with numbers; the condition is X > 0
WHERE_CASES = [
    ("float_float", lambda c: where(c, 1.0, 0.0), lambda c: torch.where(c, 1.0, 0.0)),
    ("int_int", lambda c: where(c, 1, 0), lambda c: torch.where(c, 1, 0)),
    ("int_float", lambda c: where(c, 1, -0.5), lambda c: torch.where(c, 1, -0.5)),
    ("bool_bool", lambda c: where(c, True, False), lambda c: torch.where(c, True, False)),
    ("bool_int", lambda c: where(c, True, 3), lambda c: torch.where(c, True, 3)),
    ("int8_tensor_float", lambda c: where(c, mt.ones(3, 4, dtype=mt.int8), 2.5),
     lambda c: torch.where(c, torch.ones(3, 4, dtype=torch.int8), 2.5)),
    ("uint8_tensor_int", lambda c: where(c, mt.ones(4, dtype=mt.uint8), 7),
     lambda c: torch.where(c, torch.ones(4, dtype=torch.uint8), 7)),
    ("f64_0d_int", lambda c: where(c, mt.tensor(1.0, dtype=mt.float64), 2),
     lambda c: torch.where(c, torch.tensor(1.0, dtype=torch.float64), 2)),
    ("nonzero_2d", lambda c: where(c), lambda c: torch.where(c)),
    ("nonzero_row", lambda c: where(c[0]), lambda c: torch.where(c[0])),
    ("nonzero_0d", lambda c: where(c[0, 0]), lambda c: torch.where(c[0, 0])),
    ("nonzero_empty", lambda c: where(c[:0]), lambda c: torch.where(c[:0])),
    ("nonzero_float", lambda c: where(c.float() * 2), lambda c: torch.where(c.float() * 2)),
]


@pytest.mark.parametrize("name,ours,theirs", WHERE_CASES, ids=[c[0] for c in WHERE_CASES])
def test_where_matches_torch(name, ours, theirs):
    compare_with_torch(ours, theirs, [X > 0])


def test_where_scalars_gradient_to_the_tensor():
    compare_with_torch(lambda x: where(x > 0, x, 0.0), lambda x: torch.where(x > 0, x, 0.0), [X])


def test_where_scalars_follow_default_dtype():
    from minitorch_ln.dtypes import set_default_dtype
    try:
        set_default_dtype(mt.float64)
        assert where(mt.tensor(X) > 0, 1.0, 0).dtype == mt.float64
    finally:
        set_default_dtype(mt.float32)


def test_gradcheck_through_axis_and_dtype():
    x = t64(X)
    gradcheck(lambda t: R.sum(t, axis=1), (x,))
    gradcheck(lambda t: R.mean(t.transpose(0, 1), axis=0, keepdim=True), (x,))  # non-contiguous
    gradcheck(lambda t: V.std(t.transpose(0, 1), axis=1), (x,))
    gradcheck(lambda t: R.sum(t, 0, dtype=mt.float64), (x,))
    gradgradcheck(lambda t: V.var(t, axis=0) * R.mean(t, axis=0, dtype=mt.float64), (x,))
    gradgradcheck(lambda t: R.logsumexp(t.transpose(0, 1), axis=0), (x,))


def test_mean_dtype_casts_before_reducing():
    # float16 values whose sum overflows float16: with dtype=float32 the mean is finite (as the math)
    x = mt.tensor(np.full(8, 60000.0, dtype=np.float16))
    assert float(R.mean(x, dtype=mt.float32)) == 60000.0
    assert float(R.sum(x, dtype=mt.float32)) == 480000.0
    assert R.sum(mt.tensor(np.zeros((0, 3), np.int8)), 0, dtype=mt.int8).tolist() == [0, 0, 0]  # empty


@given(shapes_2d, st.integers(-2, 1), st.booleans())
def test_axis_is_dim(shape, d, keepdim):
    x = mt.tensor(np.arange(np.prod(shape), dtype=np.float64).reshape(shape))
    for fn in (R.sum, R.mean, R.amax, R.amin, R.argmax, R.argmin, R.logsumexp, any_, all_):
        a, b = fn(x, axis=d, keepdim=keepdim), fn(x, dim=d, keepdim=keepdim)
        assert a.dtype == b.dtype and np.array_equal(a.numpy(), b.numpy()), fn.__name__


@pytest.mark.parametrize("fn", [R.sum, R.mean, V.var, V.std, R.amax, R.amin, R.max, R.min, R.argmax, R.argmin,
                                R.logsumexp, any_, all_], ids=lambda f: f.__name__)
def test_dim_and_axis_both_given_is_type_error(fn):
    with pytest.raises(TypeError, match=r"both dim=0 and its alias axis=1"):
        fn(mt.tensor(X), dim=0, axis=1)
    with pytest.raises(TypeError, match="both dim=1"):
        R.topk(mt.tensor(X), 1, dim=1, axis=0)


def test_bad_input():
    i = mt.tensor(INTS)
    with pytest.raises(TypeError, match="expected a floating point tensor, got dtype int64; pass dtype=float32"):
        R.mean(i)
    with pytest.raises(RuntimeError, match="dtype= must be a floating point dtype, got int64"):
        R.mean(mt.tensor(X), dtype=mt.int64)
    with pytest.raises(TypeError, match="unknown dtype 'float128'"):
        R.sum(i, dtype="float128")
    assert R.sum(mt.tensor(X), dtype="bfloat16").dtype == mt.bfloat16  # as PyTorch (a storage dtype; float32 inside)
    with pytest.raises(IndexError, match="dimension 2 is out of range"):
        R.sum(i, axis=2)
    with pytest.raises(TypeError, match="give both input and other, or neither"):
        where(mt.tensor(X) > 0, mt.tensor(X))
    with pytest.raises(TypeError, match="condition must be a bool tensor, got dtype float64"):
        where(mt.tensor(X), 1.0, 0.0)
    with pytest.raises(TypeError, match="expected input and other to be Tensors or numbers .* got str"):
        where(mt.tensor(X) > 0, "a", 0.0)
    with pytest.raises(TypeError, match=r"where\(condition\): expected a Tensor, got list"):
        where([True, False])
    with pytest.raises(TypeError, match="any: expected a Tensor, got list"):
        any_([1, 0])

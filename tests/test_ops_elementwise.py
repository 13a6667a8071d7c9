"""Elementwise ops: gradcheck, PyTorch comparison (float64/float32, broadcasting), properties, bad input, promotion."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck

import strategies as S
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch

F = torch.nn.functional


def _positive(a):
    return np.abs(a) + 0.5


def _away_from_zero(a):
    return np.where(np.abs(a) < 0.1, 0.5, a)


def _away_from_clamp_edges(a):
    return np.where(np.abs(np.abs(a) - 0.5) < 0.05, 0.2, a)


# name, ours, theirs, input transform (domain), in the gradgradcheck set
UNARY = [
    ("neg", lambda x: -x, lambda x: -x, None, False),
    ("exp", mt.exp, torch.exp, None, True),
    ("log", mt.log, torch.log, _positive, True),
    ("sqrt", mt.sqrt, torch.sqrt, _positive, False),
    ("rsqrt", mt.rsqrt, torch.rsqrt, _positive, True),
    ("abs", mt.abs, torch.abs, _away_from_zero, False),
    ("sin", mt.sin, torch.sin, None, True),
    ("cos", mt.cos, torch.cos, None, False),
    ("erf", mt.erf, torch.erf, None, True),
    ("tanh", mt.tanh, torch.tanh, None, True),
    ("sigmoid", mt.sigmoid, torch.sigmoid, None, True),
    ("relu", mt.relu, torch.relu, _away_from_zero, False),
    ("gelu", mt.gelu, F.gelu, None, True),
    ("gelu_tanh", lambda x: mt.gelu(x, approximate="tanh"), lambda x: F.gelu(x, approximate="tanh"), None, True),
    ("square", lambda x: x**2, lambda x: x**2, None, True),
    ("pow_half", lambda x: x**0.5, lambda x: x**0.5, _positive, False),
    ("pow_neg", lambda x: x ** -1.5, lambda x: x ** -1.5, _positive, True),
    ("rpow", lambda x: 2.0**x, lambda x: 2.0**x, None, False),
    ("clamp", lambda x: x.clamp(-0.5, 0.5), lambda x: x.clamp(-0.5, 0.5), _away_from_clamp_edges, False),
    ("clamp_min", lambda x: x.clamp(min=0.3), lambda x: x.clamp(min=0.3), _away_from_clamp_edges, False),
    ("scalar_ops", lambda x: (3.0 - x) / 2.0 + 1.5 * x - 1.0 / (x + 5.0), lambda x: (3.0 - x) / 2.0 + 1.5 * x - 1.0 / (x + 5.0),
     None, False),
]


def _input(rng, shape, transform, dtype=np.float64):
    a = rng.standard_normal(shape)
    return (transform(a) if transform else a).astype(dtype)


@pytest.mark.parametrize("name,ours,theirs,domain,gg", UNARY, ids=[u[0] for u in UNARY])
def test_unary_gradcheck(name, ours, theirs, domain, gg, rng):
    x = t64(_input(rng, (2, 3), domain))
    assert gradcheck(ours, (x,))
    if gg:
        assert gradgradcheck(ours, (x,))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs,domain,gg", UNARY, ids=[u[0] for u in UNARY])
def test_unary_matches_torch(name, ours, theirs, domain, gg, dtype, rng, device):
    compare_with_torch(ours, theirs, [_input(rng, (3, 4, 5), domain, dtype)], device=device)


@given(S.nonscalar_shapes.flatmap(lambda s: S.arrays(s)), st.sampled_from(UNARY))
def test_unary_property_matches_torch_over_shapes(a, op):
    name, ours, theirs, domain, _ = op
    compare_with_torch(ours, theirs, [domain(a) if domain else a])


# ---------------------------------------------------------------------------------------- binary

BINARY = [
    ("add", lambda a, b: a + b, lambda a, b: a + b, None, False),
    ("sub", lambda a, b: a - b, lambda a, b: a - b, None, False),
    ("mul", lambda a, b: a * b, lambda a, b: a * b, None, True),
    ("div", lambda a, b: a / b, lambda a, b: a / b, "b_away", True),
    ("pow", lambda a, b: a**b, lambda a, b: a**b, "a_positive", True),
    ("maximum", mt.maximum, torch.maximum, None, False),
    ("minimum", mt.minimum, torch.minimum, None, False),
]


def _binary_inputs(rng, sa, sb, domain, dtype=np.float64):
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    if domain == "b_away":
        b = np.sign(b) * (np.abs(b) + 0.5)
    if domain == "a_positive":
        a = np.abs(a) + 0.5
    return a.astype(dtype), b.astype(dtype)


SHAPE_PAIRS = [((2, 3), (2, 3)), ((3, 1, 5), (4, 5)), ((4, 1), (3,)), ((), (2, 3)), ((2, 1, 1), (1, 3, 1))]


@pytest.mark.parametrize("name,ours,theirs,domain,gg", BINARY, ids=[b[0] for b in BINARY])
def test_binary_gradcheck_with_broadcasting(name, ours, theirs, domain, gg, rng):
    a, b = _binary_inputs(rng, (2, 1, 3), (4, 3), domain)
    assert gradcheck(ours, (t64(a), t64(b)))
    if gg:
        assert gradgradcheck(ours, (t64(a[:, :, :2]), t64(b[:2, :2])))


@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs,domain,gg", BINARY, ids=[b[0] for b in BINARY])
def test_binary_matches_torch(name, ours, theirs, domain, gg, dtype, shapes, rng, device):
    compare_with_torch(ours, theirs, list(_binary_inputs(rng, *shapes, domain, dtype)), device=device)


@given(S.broadcastable_arrays(), st.sampled_from(BINARY))
def test_binary_property_broadcasting_matches_torch(ab, op):
    name, ours, theirs, domain, _ = op
    a, b = ab
    if domain == "b_away":
        b = np.asarray(np.where(b < 0, b - 0.5, b + 0.5))
    if domain == "a_positive":
        a = np.asarray(np.abs(a) + 0.5)
    compare_with_torch(ours, theirs, [a, b])  # ties in maximum/minimum: both split the gradient evenly


@given(S.broadcastable_arrays())
def test_property_gradient_of_broadcast_input_has_its_shape_and_sums(ab):
    a, b = ab
    x, y = t64(a), t64(b)
    (x + y).sum().backward()
    out_size = int(np.prod(np.broadcast_shapes(a.shape, b.shape)))
    assert x.grad.shape == a.shape and y.grad.shape == b.shape
    assert x.grad.numpy().sum() == pytest.approx(out_size) and y.grad.numpy().sum() == pytest.approx(out_size)


def test_maximum_ties_split_gradient_evenly_as_torch():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([1.0, 5.0, 3.0])
    compare_with_torch(mt.maximum, torch.maximum, [a, b])
    compare_with_torch(mt.minimum, torch.minimum, [a, b])


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8])
def test_minimum_maximum_at_the_integer_extremes_as_torch(dtype):
    # minimum was -maximum(-a, -b): -(-2**31) overflows back to -2**31 in int32 and an unsigned
    # dtype wraps (-255 is 1 in uint8), so minimum(x, int32 min) gave x. The extremes are exact answers:
    # minimum(x, lo) = lo and maximum(x, hi) = hi for every x; minimum(x, hi) = x = maximum(x, lo).
    info = np.iinfo(dtype)
    x = np.array([0, 5, info.min, info.max, info.min + 1], dtype=dtype)
    for v in (info.min, info.max):
        for other in (np.full(5, v, dtype=dtype), np.array(v, dtype=dtype)):
            for fn in ("minimum", "maximum"):
                for a, b in ((x, other), (other, x)):
                    ours = getattr(mt, fn)(mt.tensor(a), mt.tensor(b))
                    theirs = getattr(torch, fn)(torch.from_numpy(a.copy()), torch.from_numpy(b.copy()))
                    assert ours.dtype == dtype and ours.array.tolist() == theirs.tolist(), (fn, v, ours, theirs)
        ours = mt.minimum(mt.tensor(x), v)  # a Python int in range stays exact too
        assert ours.array.tolist() == np.minimum(x, np.asarray(v, dtype)).tolist()
    assert mt.minimum(mt.tensor(x), mt.tensor(info.min, dtype=dtype)).array.tolist() == [info.min] * 5


def test_clamp_of_an_integer_tensor_has_torchs_result_type():
    # clamp's result type is PyTorch's result type of x and the bounds: [1, 5] clamped to max 2.5 is
    # float32 [1.0, 2.5]; casting the bound to x's int64 made it [1, 2] (a bound of 2, silently)
    a = np.array([1, 5])
    for ours, theirs in [
        (lambda x: x.clamp(max=2.5), lambda x: x.clamp(max=2.5)),
        (lambda x: x.clip(min=2.5), lambda x: x.clip(min=2.5)),
        (lambda x: mt.clamp(x, 2, 2.5), lambda x: torch.clamp(x, 2, 2.5)),
        (lambda x: x.clamp(min=1.5, max=4), lambda x: x.clamp(min=1.5, max=4)),
        (lambda x: x.clamp(max=3), lambda x: x.clamp(max=3)),  # an int bound keeps int64
        (lambda x: x.clamp(min=mt.tensor([2.5, 2.5])), lambda x: x.clamp(min=torch.tensor([2.5, 2.5]))),
        (lambda x: x.clamp(max=mt.tensor(2.5, dtype=mt.float64)),
         lambda x: x.clamp(max=torch.tensor(2.5, dtype=torch.float64))),
    ]:
        compare_with_torch(ours, theirs, [a])
        compare_with_torch(ours, theirs, [a.astype(np.int32)])
        compare_with_torch(ours, theirs, [a > 2])  # bool
    assert mt.tensor([1, 5]).clamp(max=2.5).array.tolist() == [1.0, 2.5]
    with pytest.raises(RuntimeError, match="can't be cast"):  # in place, as PyTorch: no room for the float
        mt.tensor([1, 5]).clamp_(max=2.5)
    with pytest.raises(RuntimeError, match="300 cannot be converted to type uint8"):
        mt.tensor(np.array([1, 5], np.uint8)).clamp(max=300)


def test_clamp_with_tensor_bounds_and_gradient_at_bounds():
    compare_with_torch(lambda x, lo: x.clamp(min=lo), lambda x, lo: x.clamp(min=lo),
                       [np.array([-1.0, 0.5, 2.0]), np.array([0.0, 0.0, 3.0])])
    x = t64([0.0, 1.0, 2.0])
    x.clamp(0.0, 1.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0, 0.0])  # boundary values pass the gradient


# ---------------------------------------------------------------------------------------- where, masked_fill


def test_where_and_masked_fill_match_torch(rng, device):
    cond = rng.random((3, 1, 5)) > 0.5
    for dtype in (np.float64, np.float32):
        a, b = rng.standard_normal((3, 4, 5)).astype(dtype), rng.standard_normal((4, 5)).astype(dtype)
        compare_with_torch(lambda x, y: mt.where(mt.tensor(cond, device=device), x, y),
                           lambda x, y: torch.where(torch.from_numpy(cond).to(x.device), x, y), [a, b], device=device)
        compare_with_torch(lambda x: x.masked_fill(mt.tensor(cond, device=device), -1e9),
                           lambda x: x.masked_fill(torch.from_numpy(cond).to(x.device), -1e9), [a], device=device)


def test_where_masked_fill_gradcheck():
    cond = mt.tensor([[True, False, True]])
    a, b = t64(np.arange(6.0).reshape(2, 3)), t64([1.0, 2.0, 3.0])
    assert gradcheck(lambda x, y: mt.where(cond, x, y), (a, b))
    assert gradcheck(lambda x: x.masked_fill(cond, 0.0), (a,))
    assert gradgradcheck(lambda x, y: mt.where(cond, x * y, y), (a, b))


def test_masked_fill_with_inf_has_no_nan_gradient():
    x = t64([1.0, 2.0, 3.0])
    y = x.masked_fill(mt.tensor([False, True, False]), float("-inf"))
    y.exp().sum().backward()
    assert np.isfinite(x.grad.numpy()).all() and x.grad.numpy()[1] == 0.0


# ---------------------------------------------------------------------------------------- comparisons, cast


def test_comparisons_give_bool_without_grad():
    a, b = t64([1.0, 2.0, 3.0]), t64([2.0])
    for op, expect in [(a == b, [0, 1, 0]), (a != b, [1, 0, 1]), (a < b, [1, 0, 0]), (a <= b, [1, 1, 0]),
                       (a > b, [0, 0, 1]), (a >= b, [0, 1, 1]), (a > 1.5, [0, 1, 1])]:
        assert op.dtype == np.bool_ and not op.requires_grad and op.grad_fn is None
        np.testing.assert_array_equal(op.numpy(), np.array(expect, dtype=bool))
    m = (a > 1.5) & ~(a > 2.5) | (a < 0)
    np.testing.assert_array_equal(m.numpy(), [False, True, False])


def test_cast_is_differentiable_between_floats():
    x = t64([1.5, -2.0])
    y = x.float()
    assert y.dtype == np.float32 and y.grad_fn is not None
    (y * 2).sum().backward()
    assert x.grad.dtype == np.float64
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])
    assert x.long().dtype == np.int64 and x.long().tolist() == [1, -2]


# ---------------------------------------------------------------------------------------- type promotion


def test_add_sub_mul_of_two_numbers_as_torch():
    # torch.add(2.0, 3.0) is a 0-d tensor: the first number becomes a tensor of its PyTorch dtype (float ->
    # float32, int -> int64, bool -> bool) and promotes with the second. It crashed (AttributeError).
    for fn, a, b in [("add", 2.0, 3.0), ("sub", 2.0, 3.0), ("add", 2, 3), ("sub", 2, 3.5), ("mul", 2.0, 3),
                     ("add", True, False), ("mul", True, 3)]:
        ours, theirs = getattr(mt, fn)(a, b), getattr(torch, fn)(a, b)
        assert ours.shape == () and ours.dtype == theirs.numpy().dtype and ours.item() == theirs.item(), (fn, a, b)
    assert mt.add(2.0, 3.0).item() == 5.0 and mt.sub(2, 3.5).item() == -1.5
    with pytest.raises(TypeError, match="expected a Tensor or two numbers"):
        mt.add("a", 2)


def test_float32_with_numpy_scalar_stays_float32():
    x = mt.ones(3, requires_grad=True)
    y = x / np.sqrt(2)
    assert y.dtype == np.float32
    for z in (x * np.float64(2.0), x + 1, 2.5 - x, x ** np.float64(2.0), np.float64(3.0) * x, x * mt.tensor(2.0, dtype="float64")):
        assert z.dtype == np.float32, z
    y.sum().backward()
    assert x.grad.dtype == np.float32


def test_promotion_rules():
    i = mt.tensor([1, 2, 3])
    f32, f64 = mt.ones(3), mt.ones(3, dtype="float64")
    assert (i * 0.5).dtype == np.float32
    assert (i * 2).dtype == np.int64
    assert (i / 2).dtype == np.float32
    assert (f32 + f64).dtype == np.float64
    assert (i + f32).dtype == np.float32
    assert (mt.tensor([True, False]) + 1).dtype == np.int64
    assert (i > 1).dtype == np.bool_
    np.testing.assert_allclose((i * 0.5).numpy(), [0.5, 1.0, 1.5])


def test_mixed_float_gradients_flow_back_in_each_dtype():
    a, b = mt.ones(2, requires_grad=True), mt.ones(2, dtype="float64", requires_grad=True)
    (a * b * 3).sum().backward()
    assert a.grad.dtype == np.float32 and b.grad.dtype == np.float64
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 3.0])


# ---------------------------------------------------------------------------------------- bad input


def test_shapes_that_do_not_broadcast_name_both():
    a, b = mt.ones(3, 4), mt.ones(2, 4)
    for op in (lambda: a + b, lambda: a * b, lambda: a - b, lambda: a / b, lambda: mt.maximum(a, b), lambda: a == b):
        with pytest.raises(ValueError, match=r"\(3, 4\) and \(2, 4\) do not broadcast"):
            op()


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "sin", "cos", "erf"])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.bool_])
def test_integer_tensors_in_float_math_give_the_default_float_as_torch(name, dtype):
    # PyTorch computes float-only math of an integer/bool tensor in the default float dtype:
    # sqrt(tensor([1, 4])) is float32 [1., 2.] (these raised a TypeError here)
    compare_with_torch(getattr(mt, name), getattr(torch, name), [np.array([1, 4, 0, 3]).astype(dtype)])
    assert mt.sqrt(mt.tensor([1, 4])).array.tolist() == [1.0, 2.0] and mt.sqrt(mt.tensor([1, 4])).dtype == np.float32


def test_integer_tensors_where_floats_are_needed():
    with pytest.raises(TypeError, match="expected a floating point tensor.*int64"):  # as PyTorch's gelu
        mt.gelu(mt.tensor([1, 2]))


def test_other_bad_arguments():
    x = mt.ones(2)
    with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh'"):
        mt.gelu(x, approximate="fast")
    with pytest.raises(ValueError, match="at least one of min and max"):
        x.clamp()
    with pytest.raises(TypeError, match="unsupported operand of type str"):
        x + "a"
    with pytest.raises(TypeError, match="mask must be a bool tensor"):
        x.masked_fill(mt.tensor([1, 0]), 0.0)
    with pytest.raises(ValueError, match=r"mask of shape \(3,\) does not broadcast|do not broadcast"):
        x.masked_fill(mt.tensor([True, False, True]), 0.0)
    with pytest.raises(TypeError, match="condition must be a bool"):
        mt.where(mt.tensor([1.0, 0.0]), x, x)


def test_sigmoid_is_stable_for_huge_inputs():
    x = t64([-1000.0, 0.0, 1000.0])
    y = mt.sigmoid(x)
    np.testing.assert_allclose(y.detach().numpy(), [0.0, 0.5, 1.0])
    y.sum().backward()
    assert np.isfinite(x.grad.numpy()).all()


def test_gelu_exact_value():
    # GELU(1) = 1 · Φ(1) = 0.5 (1 + erf(1/√2))
    assert mt.gelu(t64([1.0])).item() == pytest.approx(0.5 * (1 + math.erf(1 / math.sqrt(2))), abs=1e-15)


# ==================================================================================================
# gradcheck on non-contiguous leaves (issue 13): the leaf's own .array is strided and axis-reversed
# ==================================================================================================
@pytest.mark.parametrize("name,ours,theirs,domain,gg", UNARY, ids=[u[0] for u in UNARY])
def test_unary_gradcheck_noncontiguous_leaf(name, ours, theirs, domain, gg, rng):
    gradcheck_noncontiguous(ours, [_input(rng, (3, 4), domain)], gg)


@pytest.mark.parametrize("name,ours,theirs,domain,gg", BINARY, ids=[b[0] for b in BINARY])
def test_binary_gradcheck_noncontiguous_leaves_with_broadcasting(name, ours, theirs, domain, gg, rng):
    gradcheck_noncontiguous(ours, list(_binary_inputs(rng, (2, 1, 3), (4, 3), domain)))
    if gg:
        gradcheck_noncontiguous(ours, list(_binary_inputs(rng, (2, 2), (2, 2), domain)), gg=True)


def test_where_masked_fill_gradcheck_noncontiguous_leaves(rng):
    cond = mt.tensor([[True, False, True]])
    a, b = rng.standard_normal((2, 3)), rng.standard_normal(3)
    gradcheck_noncontiguous(lambda x, y: mt.where(cond, x * y, y), [a, b], gg=True)
    gradcheck_noncontiguous(lambda x: x.masked_fill(cond, 0.0), [a])


def test_abs_of_a_bool_tensor_is_refused_as_torch():
    # PyTorch: '"abs_cpu" not implemented for 'Bool''; here it was NumPy's bare _UFuncNoLoopError from sign
    t = mt.tensor([True, False])
    for call in (lambda: mt.abs(t), lambda: t.abs(), lambda: abs(t)):
        with pytest.raises(RuntimeError, match="not implemented for 'Bool'"):
            call()
    np.testing.assert_array_equal(mt.abs(mt.tensor([-2, 3], dtype=mt.int8)).numpy(), [2, 3])

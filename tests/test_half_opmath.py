"""float16 and bfloat16 compute in float32 and round once (``autograd/bfloat16.py``), as PyTorch's CPU kernels.

Before, a float16 op made of several NumPy ufuncs rounded after each: ``sinc`` was off by up to half its value
near its zeros, ``sigmoid``/``silu``/``mish`` by 2-3 units in the last place, and ``x * 0.1`` rounded 0.1 to
float16 first (a third of the products differed from PyTorch's by one unit).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import minitorch_ln as mt
import minitorch_ln.nn.functional as F
from helpers import compare_with_torch

torch = pytest.importorskip("torch")

X = np.concatenate([np.linspace(-12.0, 12.0, 2001), np.random.default_rng(0).standard_normal(500) * 3])

# name -> (our function, the float64 math as NumPy, the domain of x)
UNARY = {
    "sigmoid": (mt.sigmoid, lambda x: 1.0 / (1.0 + np.exp(-x)), X),
    "sinc": (mt.sinc, np.sinc, X),
    "silu": (F.silu, lambda x: x / (1.0 + np.exp(-x)), X),
    "softplus": (F.softplus, lambda x: np.logaddexp(0.0, x), X),
    "mish": (F.mish, lambda x: x * np.tanh(np.logaddexp(0.0, x)), X),
    "logsigmoid": (F.logsigmoid, lambda x: -np.logaddexp(0.0, -x), X),
    "hardswish": (F.hardswish, lambda x: x * np.clip(x + 3.0, 0.0, 6.0) / 6.0, X),
    "rsqrt": (mt.rsqrt, lambda x: 1.0 / np.sqrt(x), np.abs(X) + 1e-3),
    "deg2rad": (mt.deg2rad, lambda x: x * (math.pi / 180.0), X * 100),
    "tanhshrink": (F.tanhshrink, lambda x: x - np.tanh(x), X),
    "softsign": (F.softsign, lambda x: x / (1.0 + np.abs(x)), X),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_float16_unary_is_the_float32_result_rounded_once(name):
    fn, _, x = UNARY[name]
    x16 = x.astype(np.float16)
    ours = fn(mt.tensor(x16)).numpy()
    once = fn(mt.tensor(x16.astype(np.float32))).numpy().astype(np.float16)  # float32 math, one rounding
    assert ours.dtype == np.float16
    np.testing.assert_array_equal(ours.view(np.uint16), once.view(np.uint16))


@pytest.mark.parametrize("name", sorted(UNARY))
def test_float16_unary_is_within_one_unit_of_the_math(name):
    # |ours - f(x)| <= one float16 unit at f(x) (float32 math rounded once is within 0.5 unit + float32's
    # error); the multi-rounding form was up to 3 units off (sinc: thousands near its zeros)
    fn, math_fn, x = UNARY[name]
    x16 = x.astype(np.float16)
    truth = math_fn(x16.astype(np.float64))
    ours = fn(mt.tensor(x16)).numpy().astype(np.float64)
    unit = np.spacing(np.abs(truth).astype(np.float16)).astype(np.float64)
    unit = np.maximum(unit, np.float64(2.0**-24))  # float16's smallest subnormal
    finite = np.isfinite(truth) & (np.abs(truth) < 65504)
    assert np.all(np.abs(ours - truth)[finite] <= unit[finite]), name


@pytest.mark.parametrize("name", sorted(UNARY))
def test_float16_unary_against_pytorch_with_gradients(name):
    fn, _, x = UNARY[name]
    theirs = {"sigmoid": torch.sigmoid, "sinc": torch.sinc, "silu": torch.nn.functional.silu,
              "softplus": torch.nn.functional.softplus, "mish": torch.nn.functional.mish,
              "logsigmoid": torch.nn.functional.logsigmoid, "hardswish": torch.nn.functional.hardswish,
              "rsqrt": torch.rsqrt, "deg2rad": torch.deg2rad, "tanhshrink": torch.nn.functional.tanhshrink,
              "softsign": torch.nn.functional.softsign}[name]
    compare_with_torch(fn, theirs, [x[::25].astype(np.float16)])


def test_float16_gradient_is_computed_in_float32():
    # sigmoid's gradient dy·σ(x)σ(-x) from float32 operands, rounded once to float16
    x16 = X[::10].astype(np.float16)
    g16 = np.random.default_rng(1).standard_normal(x16.shape).astype(np.float16)
    x = mt.tensor(x16, requires_grad=True)
    mt.sigmoid(x).backward(mt.tensor(g16))
    x32 = x16.astype(np.float64)
    s = 1.0 / (1.0 + np.exp(-x32))
    truth = g16.astype(np.float64) * s * (1.0 - s)
    assert x.grad.dtype == mt.float16
    unit = np.maximum(np.spacing(np.abs(truth).astype(np.float16)).astype(np.float64), 2.0**-24)
    assert np.all(np.abs(x.grad.numpy().astype(np.float64) - truth) <= unit)


def test_the_fast_paths_leave_float16_to_the_general_path():
    # the lean apply paths (autograd/recorded.py, unrecorded.py) and the engine's array backwards
    # (ops/fast_backward.py) compute in the array's own dtype; for float16 they must step aside
    x16 = X[::7].astype(np.float16)
    plain = mt.tanh(mt.tensor(x16)).numpy()  # one tensor without history: the unrecorded path's case
    x = mt.tensor(x16, requires_grad=True)
    y = mt.tanh(x)  # recorded
    np.testing.assert_array_equal(plain.view(np.uint16), y.detach().numpy().view(np.uint16))
    g = np.random.default_rng(2).standard_normal(x16.shape).astype(np.float16)
    y.backward(mt.tensor(g))
    x2 = mt.tensor(x16, requires_grad=True)
    mt.tanh(x2).backward(mt.tensor(g), create_graph=True)  # create_graph: never the array backwards
    np.testing.assert_array_equal(x.grad.numpy().view(np.uint16), x2.grad.detach().numpy().view(np.uint16))


HALF = ["float16", "bfloat16"]
SCALARS = [0.1, 1.0 / 3.0, math.pi, 1e-3, 7.0, 2.0**40]


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("op", ["mul", "div", "add", "sub", "rmul", "radd", "rsub"])
def test_half_tensor_with_a_python_number_equals_pytorch_bit_for_bit(dtype, op):
    # PyTorch reads a scalar operand of mul/div in float32 (x·0.1f rounded once) and rounds it to the
    # tensor's dtype for add/sub; both are what PyTorch computes, so the bits must agree
    x16 = np.linspace(-100.0, 100.0, 4001).astype(np.float32)
    f = {"mul": lambda a, s: a * s, "div": lambda a, s: a / s, "add": lambda a, s: a + s, "sub": lambda a, s: a - s,
         "rmul": lambda a, s: s * a, "radd": lambda a, s: s + a, "rsub": lambda a, s: s - a}[op]
    for s in SCALARS:
        ours = f(mt.tensor(x16).to(getattr(mt, dtype)), s)
        theirs = f(torch.tensor(x16).to(getattr(torch, dtype)), s)
        assert str(ours.dtype) == dtype
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy(), err_msg=f"{op} {s}")


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("zero_d", ["float32", "float64"])
def test_half_tensor_with_a_0d_float_tensor_equals_pytorch(dtype, zero_d):
    x = np.linspace(-100.0, 100.0, 4001).astype(np.float32)
    for s in (0.1, 1.0 / 3.0):
        for f in (lambda a, b: a * b, lambda a, b: a / b):
            ours = f(mt.tensor(x).to(getattr(mt, dtype)), mt.tensor(s, dtype=getattr(mt, zero_d)))
            theirs = f(torch.tensor(x).to(getattr(torch, dtype)), torch.tensor(s, dtype=getattr(torch, zero_d)))
            assert str(ours.dtype) == dtype
            np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())


def test_half_times_0d_tensor_gradients_against_pytorch():
    a = np.linspace(-3, 3, 13).astype(np.float16)
    compare_with_torch(lambda x, s: x * s, lambda x, s: x * s, [a, np.array(0.1, np.float64)])
    # the 0-d divisor's gradient sums 13 float16-sized terms -dy·x/s² (true sum 126.385 for the helper's
    # upstream gradient): PyTorch gives 126.4375, minitorch_ln 126.3125, each within float16's rounding of
    # the terms (one unit at 10 is 0.0078), so float16's tolerance applies, not float32's
    compare_with_torch(lambda x, s: x / s, lambda x, s: x / s, [a, np.array(0.3, np.float32)], rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("dtype", HALF)
def test_half_inplace_mul_div_by_a_number_equals_pytorch(dtype):
    x = np.linspace(-100.0, 100.0, 4001).astype(np.float32)
    for s in SCALARS:
        for method in ("mul_", "div_", "__imul__", "__itruediv__", "add_", "__iadd__"):
            ours, theirs = mt.tensor(x).to(getattr(mt, dtype)), torch.tensor(x).to(getattr(torch, dtype))
            with np.errstate(over="ignore"):
                ours = getattr(ours, method)(s)
            theirs = getattr(theirs, method)(s)
            np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy(), err_msg=f"{method} {s}")


def test_number_divided_by_half_tensor_is_rounded_once():
    # s / x: float32(s) / float32(x) rounded once to float16, the correctly rounded quotient here.
    # PyTorch computes reciprocal(x) (rounded to float16) times s, rounding twice: about a quarter of its
    # quotients are one unit off. The math decides (DESIGN: PyTorch is a reference, not an oracle).
    x16 = np.linspace(-100.0, 100.0, 4001).astype(np.float16)
    x16 = x16[x16 != 0]
    for s in (0.1, 7.0):
        ours = (s / mt.tensor(x16)).numpy()
        truth = (np.float32(s) / x16.astype(np.float32)).astype(np.float16)
        np.testing.assert_array_equal(ours.view(np.uint16), truth.view(np.uint16))
        exact = (s / x16.astype(np.float64))
        assert np.all(np.abs(ours.astype(np.float64) - exact) <= np.spacing(np.abs(ours)).astype(np.float64) / 2 * 1.001)


@pytest.mark.parametrize("make", [
    lambda m: m.ones(3, dtype=m.float16) * m.tensor(0.1),             # dimensioned half, 0-d float32: half
    lambda m: m.tensor(1.0, dtype=m.float16) + m.tensor(1.0),         # two 0-d: float32
    lambda m: m.ones(2, dtype=m.float16) + m.ones(2, dtype=m.bfloat16),  # two halves: float32
    lambda m: m.arange(3) * m.tensor(0.5, dtype=m.float16),           # int tensor, 0-d half: half
    lambda m: m.ones(2, dtype=m.float16) + m.ones(2),                 # half with float32: float32
    lambda m: m.ones(2, dtype=m.bfloat16) * m.tensor(2.0, dtype=m.float16),  # bf16 with a 0-d f16: bf16
    lambda m: m.tensor(2.0, dtype=m.float16) * m.tensor(3.0, dtype=m.bfloat16),  # two 0-d halves: float32
    lambda m: (m.ones(2, dtype=m.float16) * 3).sum(),                 # a reduction stays half
    lambda m: m.ones(2, 2, dtype=m.float16) @ m.ones(2, 2, dtype=m.float16),
])
def test_half_result_dtypes_follow_pytorch(make):
    ours, theirs = make(mt), make(torch)
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())


def test_float16_overflow_rounds_to_inf_without_a_warning():
    import warnings

    x = mt.tensor(np.array([300.0, -300.0, 1.0], np.float16))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = x * x * x  # 2.7e7 > 65504
    assert y.numpy()[0] == np.inf and y.numpy()[1] == -np.inf and y.numpy()[2] == 1.0


def test_bfloat16_deg2rad_is_supported():
    x = np.array([0.0, 90.0, 180.0, -45.0], np.float32)
    compare_with_torch(lambda t: mt.deg2rad(t.to(mt.bfloat16)).float(), lambda t: torch.deg2rad(t.bfloat16()).float(), [x])
    with pytest.raises(RuntimeError, match="real"):
        mt.deg2rad(mt.tensor([1 + 1j]))


@pytest.mark.parametrize("dtype", HALF)
def test_half_tensor_with_a_numpy_float_scalar_equals_pytorch(dtype):
    # a NumPy float scalar is a Python number to PyTorch (read in float32 by mul/div); it was rounded to half first
    x = np.linspace(-100.0, 100.0, 4001).astype(np.float32)
    for s in (np.float64(0.1), np.float32(1.0 / 3.0), np.float16(0.1)):
        for f in (lambda a, b: a * b, lambda a, b: a / b):
            ours = f(mt.tensor(x).to(getattr(mt, dtype)), s)
            theirs = f(torch.tensor(x).to(getattr(torch, dtype)), s)
            assert str(ours.dtype) == dtype
            np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())

"""complex64/complex128: dtypes and promotion, the complex ops (complex_parts.py, complex_math.py), the
complex backward of the arithmetic, and gradcheck of complex functions -- every value and gradient
against PyTorch (tests/helpers.py, random complex upstream gradients) and float64 finite differences."""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, t64
from hypothesis import given, settings
from strategies import complex_arrays

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.autograd.function import Function
from minitorch_ln.errors import DtypeError

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def cx(*shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def real(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------- dtypes


def test_dtype_names_and_defaults():
    assert mt.complex64 is mt.cfloat and mt.complex128 is mt.cdouble
    assert mt.tensor([1 + 2j]).dtype == mt.complex64  # follows the default float dtype, as PyTorch
    mt.set_default_dtype(mt.float64)
    try:
        assert mt.tensor([1j]).dtype == mt.complex128
        assert (mt.arange(3) + 1j).dtype == mt.complex128
    finally:
        mt.set_default_dtype(mt.float32)
    assert mt.zeros(2).cfloat().dtype == mt.complex64 and mt.zeros(2).cdouble().dtype == mt.complex128
    assert mt.is_complex(mt.tensor([1j])) and mt.tensor([1j]).is_complex() and not mt.zeros(1).is_complex()
    assert mt.finfo(mt.complex64).eps == mt.finfo(mt.float32).eps  # a complex dtype's parts (as PyTorch)


@pytest.mark.parametrize("a, b", [
    ("complex64", "float64"), ("complex64", "complex128"), ("float32", "complex64"), ("int64", "complex64"),
    ("bool", "complex128"), ("float64", "complex64"),
])
def test_promotion_matches_torch(a, b):
    for a_shape, b_shape in [((2,), (2,)), ((2,), ()), ((), (2,))]:  # dimensioned vs 0-d operands
        x, y = mt.zeros(a_shape, dtype=getattr(mt, a)), mt.zeros(b_shape, dtype=getattr(mt, b))
        tx, ty = torch.zeros(a_shape, dtype=getattr(torch, a)), torch.zeros(b_shape, dtype=getattr(torch, b))
        assert str((x + y).dtype) == str((tx + ty).dtype).replace("torch.", ""), (a, b, a_shape, b_shape)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex64", "complex128"])
def test_python_complex_scalar_promotion_matches_torch(dtype):
    x, tx = mt.ones(2, dtype=getattr(mt, dtype)), torch.ones(2, dtype=getattr(torch, dtype))
    assert str((x * 1j).dtype) == str((tx * 1j).dtype).replace("torch.", "")
    assert str((x + 1.5).dtype) == str((tx + 1.5).dtype).replace("torch.", "")
    assert mt.result_type(x, 2j) == getattr(mt, str(torch.result_type(tx, 2j)).replace("torch.", ""))


def test_float16_with_complex_is_refused_clearly():
    with pytest.raises(TypeError, match="complex32"):
        mt.ones(2, dtype=mt.float16) * 1j


def test_printing_matches_torch():
    for v in ([1 + 2j, -3 + 0.5j], [[1.5 + 2j, 3 - 4.25j], [0j, 1e5 + 1j]]):
        assert repr(mt.tensor(v)) == repr(torch.tensor(v))


def test_complex_requires_grad_and_real_loss_rule():
    z = mt.tensor([1 + 1j], requires_grad=True)
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        (z * z).sum().backward()  # PyTorch: grad can be implicitly created only for real scalar outputs


# ---------------------------------------------------------------- the complex ops against PyTorch

UNARY = ["exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "abs", "sgn", "angle", "real", "imag", "neg",
         "conj_physical", "tan", "sinh", "cosh", "asin", "acos", "acosh", "atanh", "log2", "log10", "log1p", "exp2",
         "expm1", "reciprocal", "square", "sigmoid"]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_unary_matches_torch(name, dtype):
    compare_with_torch(getattr(mt, name), getattr(torch, name), [cx(3, 4, dtype=dtype)])


BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "pow": lambda a, b: a ** b, "matmul": lambda a, b: a @ b.transpose(-1, -2),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_binary_matches_torch(name, dtype):
    fn = BINARY[name]
    compare_with_torch(fn, fn, [cx(3, 4, dtype=dtype), cx(3, 4, dtype=dtype)])


@pytest.mark.parametrize("name", sorted(set(BINARY) - {"matmul"}))  # torch's matmul refuses mixed dtypes
def test_real_with_complex_gets_the_real_part_of_the_gradient(name):
    # a real input of a complex op receives Re(...) (PyTorch's handle_r_to_c), a float64 gradient
    fn = BINARY[name]
    compare_with_torch(fn, fn, [np.abs(real(3, 4)) + 0.5, cx(3, 4)])
    compare_with_torch(fn, fn, [cx(3, 4), real(3, 4)])


@pytest.mark.parametrize("expr", [
    lambda z: z ** 2, lambda z: z ** 2.5, lambda z: z ** (1 + 1j), lambda z: 2.0 / z, lambda z: z * 1j - 3,
    lambda z: z.sum(1), lambda z: z.sum(), lambda z: z.mean(0), lambda z: z.prod(1), lambda z: z.prod(),
    lambda z: z.cumsum(1), lambda z: z.cumprod(0), lambda z: z.reshape(4, 3).T[1:], lambda z: z[[0, 2], 1:],
    lambda z: z.flip(0), lambda z: z[:, None].expand(3, 2, 4), lambda z: z.conj() * z,
])
def test_compositions_match_torch(expr):
    compare_with_torch(expr, expr, [cx(3, 4)])


@pytest.mark.parametrize("name", ["dot", "vdot", "outer", "mv", "einsum"])
def test_products_match_torch(name):
    fns = {"dot": lambda m, a, b: m.dot(a[0], b[0]), "vdot": lambda m, a, b: m.vdot(a[0], b[0]),
           "outer": lambda m, a, b: m.outer(a[0], b[1]), "mv": lambda m, a, b: m.mv(a, b[0]),
           "einsum": lambda m, a, b: m.einsum("ij,kj->ik", a, b)}
    compare_with_torch(lambda a, b: fns[name](mt, a, b), lambda a, b: fns[name](torch, a, b), [cx(3, 4), cx(3, 4)])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_complex_polar_view_as_complex_match_torch(dtype):
    compare_with_torch(mt.complex, torch.complex, [real(3, 1, dtype=dtype), real(4, dtype=dtype)])
    compare_with_torch(mt.polar, torch.polar, [np.abs(real(3, 4, dtype=dtype)), real(3, 4, dtype=dtype)])
    compare_with_torch(mt.view_as_complex, torch.view_as_complex, [real(3, 2, dtype=dtype)])
    compare_with_torch(mt.view_as_real, torch.view_as_real, [cx(3, dtype=np.complex64 if dtype == np.float32
                                                                 else np.complex128)])
    compare_with_torch(mt.angle, torch.angle, [real(5, dtype=dtype)])


def test_parts_are_views_sharing_memory():
    z = mt.tensor([1 + 2j, 3 - 4j], dtype=mt.complex128)
    r = mt.view_as_real(z)
    r[0, 1] = 7.0
    assert z.tolist()[0] == 1 + 7j
    z.real.mul_(2)
    z.imag[1] = 0.5
    assert z.tolist() == [2 + 7j, 6 + 0.5j]
    x = mt.zeros(3, 2)
    c = mt.view_as_complex(x)
    c.add_(1j)
    assert x.tolist() == [[0.0, 1.0]] * 3
    z.real = mt.tensor([9.0, 9.0], dtype=mt.float64)  # the property's setter writes the parts
    assert z.tolist() == [9 + 7j, 9 + 0.5j]


def test_view_ops_refuse_clearly():
    with pytest.raises(RuntimeError, match="only supported for complex"):
        mt.view_as_real(mt.zeros(2))
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        mt.view_as_complex(mt.zeros(3, 3))
    with pytest.raises(RuntimeError, match="stride 1"):
        mt.view_as_complex(mt.zeros(2, 4)[:, ::2])
    with pytest.raises(RuntimeError, match="float and double"):
        mt.view_as_complex(mt.zeros(3, 2, dtype=mt.float16))
    with pytest.raises(RuntimeError, match="non-complex"):
        mt.imag(mt.zeros(2))
    with pytest.raises(RuntimeError, match="one dtype"):
        mt.complex(mt.zeros(2), mt.zeros(2, dtype=mt.float64))
    with pytest.raises(TypeError, match="float or double"):
        mt.polar(mt.zeros(2, dtype=mt.int64), mt.zeros(2, dtype=mt.int64))


@pytest.mark.parametrize("op", [
    lambda z: z < 1j, lambda z: z >= 1, lambda z: z.max(), lambda z: z.argmax(), lambda z: z.sort(),
    lambda z: z.clamp(0, 1), lambda z: mt.maximum(z, z), lambda z: z.topk(1), lambda z: z.amin(),
])
def test_ordering_ops_refuse_complex(op):
    # PyTorch raises for these; NumPy would order complex numbers lexicographically (silently)
    with pytest.raises(RuntimeError, match="complex"):
        op(mt.tensor([1 + 1j, 2 - 1j]))


def test_ops_without_complex_support_refuse_naming_op_and_dtype():
    z = mt.tensor([1 + 1j, 2 - 1j])
    with pytest.raises(DtypeError, match="Relu.*complex64"):
        mt.relu(z)
    with pytest.raises(TypeError, match="complex"):
        mt.erf(z)


def test_isreal_and_comparisons_for_equality():
    z = mt.tensor([1 + 0j, 2 - 1j])
    assert mt.isreal(z).tolist() == [True, False]
    assert (z == mt.tensor([1 + 0j, 2 + 1j])).tolist() == [True, False]


def test_edge_values_against_the_math():
    # |z| of huge parts does not overflow (hypot), sgn(0) = 0, angle of the axes and of -0.0 as PyTorch
    z = mt.tensor([3e38 + 4e38j, 0j, -1 + 0j, complex(-1.0, -0.0), complex(np.nan, 1), complex(np.inf, 0)],
                  dtype=mt.complex128)
    tz = torch.tensor(z.numpy())
    for fn in ("abs", "angle", "sgn", "exp", "sqrt"):
        np.testing.assert_allclose(getattr(mt, fn)(z).numpy(), getattr(torch, fn)(tz).numpy(), rtol=1e-12)
    assert mt.abs(z).numpy()[0] == 5e38
    assert mt.sgn(mt.tensor([0j])).tolist() == [0j]


# ---------------------------------------------------------------- gradcheck on complex inputs


@pytest.mark.parametrize("fn", [
    lambda a, b: a * b, lambda a, b: a / b, lambda a, b: a ** b, lambda a, b: mt.exp(a) * mt.sin(b),
    lambda a, b: (a @ b.T).tanh(), lambda a, b: mt.vdot(a.reshape(-1), b.reshape(-1)),
    lambda a, b: mt.view_as_real(a * mt.sgn(b)), lambda a, b: mt.angle(a) + mt.abs(b),
    lambda a, b: a.cumprod(1) + b.prod(0), lambda a, b: mt.log(a) - mt.sqrt(b) + mt.rsqrt(a),
])
def test_gradcheck_complex(fn):
    a, b = t64(cx(3, 4)), t64(cx(3, 4))
    assert gradcheck(fn, (a, b))
    gradcheck_noncontiguous(fn, [cx(3, 4), cx(3, 4)])


def test_gradgradcheck_complex():
    assert gradgradcheck(lambda a, b: a * b.exp() / (a + 3), (t64(cx(2, 3)), t64(cx(2, 3))))


def test_gradcheck_real_to_complex_functions():
    r, th = t64(np.abs(real(3)) + 0.5), t64(real(3))
    assert gradcheck(mt.polar, (r, th)) and gradcheck(mt.complex, (r, th))
    assert gradcheck(lambda x: mt.view_as_complex(x), (t64(real(3, 2)),))


class _MulWithoutConj(Function):
    """``a * b`` with the holomorphic derivative unconjugated: the mistake the complex check must catch."""

    supports_complex = True

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, dy):
        a, b = ctx.saved_tensors
        return dy * b, dy * a  # should be dy·conj(b), dy·conj(a)


def test_gradcheck_catches_a_wrong_complex_backward():
    a, b = t64(cx(2, 3)), t64(cx(2, 3))
    assert gradcheck(lambda x, y: x * y, (a, b))
    with pytest.raises(mt.autograd.GradcheckError if hasattr(mt.autograd, "GradcheckError") else Exception):
        gradcheck(_MulWithoutConj.apply, (a, b))
    assert not gradcheck(_MulWithoutConj.apply, (a, b), raise_exception=False)
    # on real inputs the same backward is right: only the complex check can see the missing conjugate
    assert gradcheck(_MulWithoutConj.apply, (t64(real(2, 3)), t64(real(2, 3))))


# ---------------------------------------------------------------- properties


@settings(max_examples=25, deadline=None)
@given(complex_arrays())
def test_property_view_as_real_round_trip_and_abs(a):
    z = mt.tensor(a)
    r = mt.view_as_real(z)
    assert r.shape == (*a.shape, 2)
    np.testing.assert_array_equal(mt.view_as_complex(r).numpy(), a)
    np.testing.assert_allclose(mt.abs(z).numpy(), np.hypot(a.real, a.imag), rtol=1e-15)
    np.testing.assert_allclose((z * z.conj()).real.numpy(), np.abs(a) ** 2, rtol=1e-12, atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(complex_arrays(max_dims=2, max_side=3))
def test_property_mul_grad_is_conjugate(a):
    # d(sum(Re(conj(g)·z·w)))/dz = g·conj(w) for any z: PyTorch's convention, hand-worked
    z, w = mt.tensor(a, requires_grad=True), mt.tensor(np.flip(a).copy() + 1j)
    g = a + 2.0
    (z * w).backward(mt.tensor(g))
    np.testing.assert_allclose(z.grad.numpy(), g * np.conj(np.flip(a) + 1j), rtol=1e-12, atol=1e-12)


def test_creation_and_predicates_never_drop_the_imaginary_part():
    assert mt.full((2,), 1 + 2j).tolist() == [1 + 2j] * 2 and mt.full((2,), 1 + 2j).dtype == mt.complex64
    assert mt.full_like(mt.zeros(2, dtype=mt.complex128), 1j).dtype == mt.complex128
    with pytest.raises(RuntimeError, match="imaginary part"):
        mt.full_like(mt.zeros(2), 1j)  # a float tensor cannot hold 1j
    for draw in (lambda: mt.tensor([1j]).normal_(), lambda: mt.tensor([1j]).uniform_()):
        with pytest.raises(TypeError, match="complex"):
            draw()  # never a complex tensor whose imaginary parts are all zero
    # randn / rand / *_like draw both parts, as PyTorch (tests/test_complex_elementwise.py checks the stream)
    assert (mt.randn(8, dtype=mt.complex64).imag.numpy() != 0).all()
    assert (mt.rand_like(mt.tensor([1j] * 8)).imag.numpy() != 0).all()
    z = mt.tensor([1 + 1j, complex(np.inf, 0), complex(0, -np.inf), complex(np.nan, 0)])
    assert mt.isinf(z).tolist() == torch.isinf(torch.tensor(z.numpy())).tolist()  # either part infinite
    assert mt.isnan(z).tolist() == torch.isnan(torch.tensor(z.numpy())).tolist()
    with pytest.raises(TypeError, match="complex"):
        mt.isposinf(z)


@pytest.mark.parametrize("expr", [
    lambda m, z: m.linalg.vector_norm(z), lambda m, z: m.linalg.vector_norm(z, 1, dim=1), lambda m, z: z.norm(),
    lambda m, z: m.linalg.vector_norm(z, float("inf"), dim=0), lambda m, z: m.var(z), lambda m, z: z.var(1),
    lambda m, z: z.std(0, correction=0), lambda m, z: m.var_mean(z, 1), lambda m, z: m.std_mean(z),
])
def test_norms_and_spreads_of_complex_are_real_and_match_torch(expr):
    # |z| underneath: a vector norm and a variance of complex numbers are real (float64 for complex128)
    compare_with_torch(lambda z: expr(mt, z), lambda z: expr(torch, z), [cx(3, 4)])


def test_inplace_through_a_dtype_changing_view_of_a_graph_is_refused_before_writing():
    w = mt.tensor([1 + 2j, 3 - 4j], requires_grad=True)
    y = w * 1
    with pytest.raises(RuntimeError, match="another dtype"):
        y.real.mul_(2)
    assert y.tolist() == [1 + 2j, 3 - 4j]  # refused before anything was written
    with mt.no_grad():  # no graph to rewrite: the shared memory changes, as in PyTorch
        y.imag.zero_()
    assert y.tolist() == [1 + 0j, 3 + 0j]
    c, t = mt.zeros(2, dtype=mt.complex64), mt.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="another dtype"):
        c.real.copy_(t)  # a value with a history, written into a plain tensor's real parts
    assert c.tolist() == [0j, 0j]

"""``out=`` (ops/out_variants.py), the generated in-place methods (ops/inplace_variants.py), the method forms
and PyTorch's alias names (ops/method_aliases.py, ops/aliases.py): each against PyTorch, and the rules a
fast or generated path must keep (versions, dtypes, views, errors)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.ops import inplace_variants, method_aliases, out_variants

torch = pytest.importorskip("torch")


# ------------------------------------------------------------------------------------------ out=

def test_out_writes_in_place_and_returns_out():
    a, b = mt.tensor([1.0, 2.0]), mt.tensor([3.0, 4.0])
    out = mt.empty(2)
    v0 = out._version[0]
    assert mt.add(a, b, out=out) is out
    np.testing.assert_array_equal(out.numpy(), [4.0, 6.0])
    assert out._version[0] == v0 + 1


def test_out_of_another_shape_is_resized_with_pytorchs_warning():
    out = mt.empty(3)
    with pytest.warns(UserWarning, match="resized"):
        mt.mul(mt.tensor([1.0, 2.0]), 3.0, out=out)
    assert out.shape == (2,)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an empty out is resized silently, as in PyTorch
        mt.mul(mt.tensor([1.0, 2.0]), 3.0, out=mt.empty(0))


def test_out_that_is_a_view_cannot_be_resized():
    base = mt.zeros(4)
    with pytest.raises(RuntimeError, match="view"):
        mt.add(mt.ones(3), 1.0, out=base[:2])
    np.testing.assert_array_equal(base.numpy(), np.zeros(4))  # nothing written


def test_out_view_of_the_right_shape_writes_into_the_base():
    base = mt.zeros(2, 3)
    mt.exp(mt.zeros(3), out=base[1])
    np.testing.assert_array_equal(base.numpy(), [[0, 0, 0], [1, 1, 1]])


@pytest.mark.parametrize("op, args, out_dtype", [
    ("add", ([1.5, 2.5], [1.0, 1.0]), "int64"),  # float result into integers: PyTorch refuses
    ("sin", ([1.0],), "int32"),
])
def test_out_refuses_a_dtype_the_result_cannot_be_cast_to(op, args, out_dtype):
    ours = [mt.tensor(a) for a in args]
    theirs = [torch.tensor(a) for a in args]
    with pytest.raises(RuntimeError, match=re.escape("can't be cast to the desired output type")):
        getattr(mt, op)(*ours, out=mt.zeros(len(args[0]), dtype=getattr(mt, out_dtype)))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        getattr(torch, op)(*theirs, out=torch.zeros(len(args[0]), dtype=getattr(torch, out_dtype)))


def test_out_casts_within_a_kind_as_pytorch():
    a = np.array([1.0 / 3, 2.0 / 3])
    out_m, out_t = mt.empty(2, dtype=mt.float32), torch.empty(2, dtype=torch.float32)
    mt.mul(mt.tensor(a), 3.0, out=out_m)
    torch.mul(torch.tensor(a), 3.0, out=out_t)
    np.testing.assert_array_equal(out_m.numpy(), out_t.numpy())


def test_factories_take_outs_dtype():
    out = mt.empty(0, dtype=mt.int64)
    mt.zeros(3, out=out)
    assert out.dtype == mt.int64 and out.tolist() == [0, 0, 0]
    t = torch.empty(0, dtype=torch.int64)
    torch.arange(5, out=t)
    assert mt.arange(5, out=mt.empty(0, dtype=mt.int64)).tolist() == t.tolist()


def test_out_with_several_results_takes_a_tuple():
    x = np.array([[1.0, 5.0, 3.0], [7.0, 2.0, 0.0]])
    values, indices = mt.empty(0), mt.empty(0, dtype=mt.int64)
    res = mt.max(mt.tensor(x), 1, out=(values, indices))
    tv, ti = torch.max(torch.tensor(x), 1)
    assert res.values is values and res.indices is indices
    np.testing.assert_array_equal(values.numpy(), tv.numpy())
    np.testing.assert_array_equal(indices.numpy(), ti.numpy())
    with pytest.raises(TypeError, match="tuple of 2 Tensors"):
        mt.max(mt.tensor(x), 1, out=values)


def test_out_refuses_autograd_as_pytorch():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        mt.sin(x, out=mt.empty(2))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        torch.sin(torch.tensor([1.0, 2.0], requires_grad=True), out=torch.empty(2))
    with mt.no_grad():
        np.testing.assert_allclose(mt.sin(x, out=mt.empty(2)).numpy(), np.sin([1.0, 2.0]), rtol=1e-6)
    leaf = mt.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        mt.sin(mt.tensor([1.0, 2.0]), out=leaf)


def test_out_in_linalg_special_and_div():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    out = mt.empty(0, dtype=mt.float64)
    assert mt.linalg.inv(mt.tensor(a), out=out) is out
    np.testing.assert_allclose(out.numpy(), np.linalg.inv(a))
    out = mt.empty(0)
    mt.special.expit(mt.tensor([0.0]), out=out)
    assert out.tolist() == [0.5]
    out = mt.empty(0, dtype=mt.int64)
    mt.div(mt.tensor([7, -7]), 2, rounding_mode="floor", out=out)
    assert out.tolist() == torch.div(torch.tensor([7, -7]), 2, rounding_mode="floor").tolist()


def test_out_names_are_pytorchs():
    # every name given out= has an out= overload in PyTorch's own operator schemas
    for name in out_variants.OUT_NAMES:
        schemas = torch._C._jit_get_schemas_for_operator("aten::" + name)
        assert any(a.is_out for s in schemas for a in s.arguments), f"torch.{name} has no out= overload"


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=6), st.integers(0, 8))
def test_out_equals_the_returned_result(values, out_len):
    x = mt.tensor(values, dtype=mt.float64)
    out = mt.empty(out_len, dtype=mt.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mt.tanh(x, out=out)
    np.testing.assert_array_equal(out.numpy(), mt.tanh(x).numpy())


# ------------------------------------------------------------------------------------------ in-place methods

@pytest.mark.parametrize("name, args", [
    ("sin", ()), ("exp", ()), ("clamp_min", (0.1,)), ("lt", (0.0,)), ("tril", ()), ("cumsum", (1,)),
    ("sigmoid", ()), ("xlogy", (2.0,)), ("lerp", ("end", 0.3)), ("round", ()), ("neg", ()), ("relu", ()),
])
def test_generated_inplace_method_matches_pytorch_values_and_gradient(name, args):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4))
    up = rng.standard_normal((3, 4))
    end = rng.standard_normal((3, 4))
    conv_m = [mt.tensor(end) if x == "end" else x for x in args]
    conv_t = [torch.tensor(end) if x == "end" else x for x in args]
    xm = mt.tensor(a, requires_grad=True)
    xt = torch.tensor(a, requires_grad=True)
    ym, yt = xm * 1.0, xt * 1.0  # a non-leaf: in place is allowed in grad mode
    rm = getattr(ym, name + "_")(*conv_m)
    getattr(yt, name + "_")(*conv_t)
    assert rm is ym
    np.testing.assert_allclose(ym.detach().numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-12)
    if yt.requires_grad:
        ym.backward(mt.tensor(up))
        yt.backward(torch.tensor(up))
        np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)
        if name not in ("xlogy", "lt"):  # XlogyBackward2: PyTorch numbers overloads; lt_: ours is a Where node
            assert ym.grad_fn.name() == yt.grad_fn.name()


def test_generated_inplace_keeps_the_inplace_rules():
    leaf = mt.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        leaf.sin_()
    ints = mt.tensor([1, 2])
    with pytest.raises(RuntimeError, match="can't be cast"):
        ints.sqrt_()
    assert ints.tolist() == [1, 2]  # a failed step loses nothing
    x = mt.tensor([0.5, 1.5])
    y = x * 1
    v = x._version[0]
    x.exp_()
    assert x._version[0] == v + 1
    base = mt.zeros(2, 3)
    base[0].add_(1.0).exp_()  # a view: written into the base
    np.testing.assert_allclose(base.numpy()[0], np.e)
    z = mt.tensor([1.0, 2.0], requires_grad=True) * 2
    w = z.exp()  # saves its output
    z.cos_()
    w2 = w * 1
    # exp saved z's value before cos_; changing z does not touch w's saved output, so backward works
    w2.sum().backward()
    del y


def test_float_power_in_place_needs_float64_as_pytorch():
    with pytest.raises(RuntimeError, match="float64"):
        mt.tensor([1.0, 2.0]).float_power_(2)
    with pytest.raises(RuntimeError):
        torch.tensor([1.0, 2.0]).float_power_(2)
    x = mt.tensor([1.0, 2.0], dtype=mt.float64)
    assert x.float_power_(2).tolist() == [1.0, 4.0]


def test_every_generated_inplace_method_is_pytorchs():
    for name in inplace_variants.INPLACE_OF:
        assert hasattr(torch.Tensor, name + "_"), name
        assert hasattr(mt.Tensor, name + "_"), name


def test_inplace_on_empty_tensor_is_allowed():
    x = mt.empty(1, 0, 3)
    assert x.sin_() is x


# ------------------------------------------------------------------------------------------ method forms, aliases

def test_method_forms_match_pytorch():
    a = np.array([[1.0, np.nan], [-np.inf, 2.0]])
    xm, xt = mt.tensor(a), torch.tensor(a)
    for name in method_aliases.FUNCTION_METHODS:
        args = () if name in ("isnan", "isfinite", "logical_not", "erf", "neg", "negative") else (1.0,)
        if name.startswith("logical"):
            args = args and (mt.tensor([True, False]),)
            targs = args and (torch.tensor([True, False]),)
        else:
            targs = args
        np.testing.assert_allclose(getattr(xm, name)(*args).numpy(), getattr(xt, name)(*targs).numpy(), rtol=1e-15)
    cond = np.array([[True, False], [False, True]])
    np.testing.assert_array_equal(xm.where(mt.tensor(cond), 0.0).numpy(), xt.where(torch.tensor(cond), 0.0).numpy())


def test_metadata_queries_match_pytorch():
    xm, xt = mt.zeros(3, 4, 5), torch.zeros(3, 4, 5)
    for vm, vt in [(xm, xt), (xm.transpose(0, 2), xt.transpose(0, 2)), (xm[1:, ::2], xt[1:, ::2])]:
        assert vm.stride() == vt.stride()
        assert vm.stride(-1) == vt.stride(-1)
        assert vm.storage_offset() == vt.storage_offset()
    assert xm.element_size() == xt.element_size() == 4
    assert xm.nbytes == xt.nbytes and xm.itemsize == xt.itemsize
    assert xm.ndimension() == 3 and xm.is_floating_point() and xm.is_signed()
    assert not mt.zeros(2, dtype=mt.uint8).is_signed() and not mt.zeros(2, dtype=mt.int64).is_floating_point()
    assert xm.is_cpu and not xm.is_cuda and xm.get_device() == xt.get_device() == -1
    assert mt.tensor([3.0]).is_nonzero() and not mt.tensor([0.0]).is_nonzero()
    with pytest.raises(RuntimeError, match="ambiguous"):
        mt.tensor([1.0, 2.0]).is_nonzero()
    with pytest.raises(IndexError, match="out of range"):
        xm.stride(3)
    assert xm.is_same_size(mt.ones(3, 4, 5)) and not xm.is_same_size(mt.ones(3, 4))


def test_pytorchs_alias_names_are_the_ops_themselves():
    assert mt.clip.__wrapped__ is mt.clamp.__wrapped__  # one function (each with out= added)
    assert mt.absolute(mt.tensor([-2.0])).tolist() == [2.0]
    assert mt.concat([mt.ones(1), mt.zeros(1)]).tolist() == [1.0, 0.0]
    assert mt.greater_equal(mt.tensor([1, 2]), 2).tolist() == [False, True]
    assert mt.fix(mt.tensor([-1.5, 1.5])).tolist() == torch.fix(torch.tensor([-1.5, 1.5])).tolist()


# ------------------------------------------------------------------------------------------ found by the variant walk

def test_nuclear_norm_second_derivative_is_pytorchs():
    # was silently zero: the singular vectors were kept as constants, so create_graph gave a gradient
    # without history (found by the gradgrad column of the op database walk)
    rng = np.random.default_rng(1)
    a, d = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    xm = mt.tensor(a, requires_grad=True)
    (gm,) = mt.autograd.grad(mt.linalg.matrix_norm(xm, "nuc"), xm, create_graph=True)
    (ggm,) = mt.autograd.grad((gm * mt.tensor(d)).sum(), xm)
    xt = torch.tensor(a, requires_grad=True)
    (gt,) = torch.autograd.grad(torch.linalg.matrix_norm(xt, "nuc"), xt, create_graph=True)
    (ggt,) = torch.autograd.grad((gt * torch.tensor(d)).sum(), xt)
    np.testing.assert_allclose(ggm.numpy(), ggt.numpy(), rtol=1e-8, atol=1e-10)
    assert mt.autograd.gradgradcheck(lambda x: mt.linalg.matrix_norm(x, "nuc"), (mt.tensor(a, requires_grad=True),))


@pytest.mark.parametrize("args, match", [((0, 3, 0), "step must be nonzero"), ((0, -3, 2), "inconsistent"),
                                         ((0, float("inf")), "unsupported range")])
def test_arange_refuses_as_pytorch(args, match):
    with pytest.raises(RuntimeError, match=match):
        mt.arange(*args)
    with pytest.raises(RuntimeError):
        torch.arange(*args)


def test_narrow_and_max_refuse_clearly():
    with pytest.raises(RuntimeError, match="0-dim"):
        mt.narrow(mt.tensor(1.0), 0, 0, 1)
    with pytest.raises(TypeError, match="must be Tensor"):
        mt.max(2, 3)


# ------------------------------------------------------------------------------------------ tensor() of NumPy scalars

@pytest.mark.parametrize("value", [np.float64(1.5), np.int32(3), np.float16(0.5), np.bool_(True), np.uint8(7)])
def test_numpy_scalars_keep_their_dtype_as_pytorch(value):
    # np.float64(1.5) became float32 (silently losing precision) and np.int32(3) int64 (found by the DDP work)
    ours, theirs = mt.tensor(value), torch.tensor(value)
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    assert ours.item() == theirs.item()


def test_python_int_past_int64_is_refused_as_pytorch():
    with pytest.raises(ValueError, match="Overflow"):  # PyTorch's type; ours is also a RuntimeError
        mt.tensor(2**63)  # NumPy made it uint64, then int64 wrapped it to -2**63: silently wrong
    with pytest.raises(ValueError, match="Overflow"):
        torch.tensor(2**63)


@pytest.mark.parametrize("fn", ["linspace", "logspace"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_linspace_into_complex_keeps_the_bounds(fn, dtype):
    # the float bounds were truncated as for an integer dtype (linspace(4.3, -3, 5) began at 4): found by the
    # complex samples of the op database walked in full
    ours = getattr(mt, fn)(4.3, -3.0 if fn == "linspace" else 1.2, 5, dtype=getattr(mt, dtype))
    theirs = getattr(torch, fn)(4.3, -3.0 if fn == "linspace" else 1.2, 5, dtype=getattr(torch, dtype))
    assert str(ours.dtype) == dtype
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


@pytest.mark.parametrize("fn", ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2"])
def test_two_dimensional_ffts_take_one_int_dim_as_pytorch(fn):
    # fft2(x, dim=0) raised a bare "'int' object is not iterable" (found by the op database walked in full)
    import minitorch_ln.fft  # noqa: F401, PLC0415

    x = np.random.default_rng(0).standard_normal((5, 6, 7))
    ours = getattr(mt.fft, fn)(mt.tensor(x), dim=0)
    theirs = getattr(torch.fft, fn)(torch.tensor(x), dim=0)
    np.testing.assert_allclose(ours.numpy(), theirs.resolve_conj().numpy(), rtol=1e-10, atol=1e-12)

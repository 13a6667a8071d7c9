"""PyTorch-shaped behaviour at small edges: ``register_hook``'s handle, operands that are not numbers,
casts of values an integer or float16 cannot hold (values as PyTorch's, without NumPy's warnings)."""

from __future__ import annotations

import decimal
import warnings

import numpy as np
import pytest

import minitorch_ln as mt

torch = pytest.importorskip("torch")


def test_register_hook_returns_a_handle_that_removes_it(rng):
    x = mt.tensor(rng.standard_normal(3), requires_grad=True)
    g = mt.tensor(rng.standard_normal(3))
    seen = []
    hook = lambda grad: seen.append(grad.numpy().copy())  # noqa: E731
    h1 = x.register_hook(hook)
    h2 = x.register_hook(hook)  # the same function twice: two registrations
    (x * 2).backward(g)
    assert len(seen) == 2
    np.testing.assert_array_equal(seen[0], 2 * g.numpy())
    h1.remove()
    h1.remove()  # a second remove does nothing (as PyTorch's)
    (x * 2).backward(g)
    assert len(seen) == 3  # h2's registration is still there
    h2.remove()
    (x * 2).backward(g)
    assert len(seen) == 3


def test_register_hook_handle_on_a_non_leaf_and_as_context_manager(rng):
    x = mt.tensor(rng.standard_normal(4), requires_grad=True)
    g = mt.tensor(rng.standard_normal(4))
    y = x * 3
    with y.register_hook(lambda grad: grad * 10):
        y.backward(g, retain_graph=True)
    np.testing.assert_allclose(x.grad.numpy(), 30 * g.numpy())  # 3 * 10 * g: the hook replaced dy
    x.grad = None
    y.backward(g)  # the with block removed it
    np.testing.assert_allclose(x.grad.numpy(), 3 * g.numpy())
    with pytest.raises(TypeError, match="expected a callable"):
        x.register_hook(3)


@pytest.mark.parametrize("other", [decimal.Decimal("1.5"), np.array(["a"]), object()])
def test_operands_that_are_not_numbers_raise_type_error(other):
    t = mt.tensor([1.0, 2.0])
    with pytest.raises(TypeError):
        t * other
    with pytest.raises(TypeError):
        other + t
    with pytest.raises(TypeError):
        torch.tensor([1.0, 2.0]) * other


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "bool"])
def test_float_to_integer_casts_of_unrepresentable_values_are_pytorchs_and_silent(dtype):
    values = [1e10, -1e10, float("nan"), float("inf"), -float("inf"), 3.7, -3.7, 0.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy's "invalid value encountered in cast" would fail here
        ours = mt.tensor(values).to(getattr(mt, dtype)).numpy()
    theirs = torch.tensor(values).to(getattr(torch, dtype)).numpy()
    np.testing.assert_array_equal(ours, theirs)
    assert ours.dtype == theirs.dtype


def test_float64_to_float16_overflow_is_inf_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = mt.tensor([1e10, -1e10, 1.0], dtype=mt.float64, requires_grad=True).to(mt.float16)
    np.testing.assert_array_equal(y.detach().numpy(), np.array([np.inf, -np.inf, 1.0], np.float16))


@pytest.mark.parametrize("op", [lambda t: t.relu(), lambda t: t.clamp(min=0), lambda t: t.clamp(max=0.5)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_an_inf_or_nan_gradient_at_a_unit_that_is_off_gives_zero(op, dtype):
    # PyTorch's threshold_backward / clamp_backward select: log(0) gives dy = inf at the off unit, and
    # dy * 0 would be NaN there; the gradient is 0 (relu and clamp do not depend on x where they are flat)
    values = [-1.0, 0.25, 2.0]
    for lib in (mt, torch):
        x = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
        out = op(x)
        (out.log() * lib.tensor([1.0, float("nan"), 3.0], dtype=getattr(lib, dtype))).sum().backward()
        if lib is mt:
            ours = x.grad.numpy()
        else:
            theirs = x.grad.numpy()
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_cat_of_one_tensor_is_a_new_tensor(rng):
    a = mt.tensor(rng.standard_normal(3))
    c = mt.cat([a])
    c += 1  # PyTorch's cat always copies: a is unchanged
    np.testing.assert_array_equal(c.numpy(), a.numpy() + 1)
    leaf = mt.tensor(rng.standard_normal(3), requires_grad=True)
    g = mt.tensor(rng.standard_normal(3))
    out = mt.cat([leaf])
    out.add_(1)  # in place on the copy, not on the leaf: allowed, as PyTorch
    out.backward(g)
    np.testing.assert_array_equal(leaf.grad.numpy(), g.numpy())

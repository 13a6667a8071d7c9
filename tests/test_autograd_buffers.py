"""Gradient buffers: ``.grad`` is a buffer of its own, seed gradients take their output's dtype, and a
graph that is never backwarded is freed by reference counting alone (minitorch_ln/autograd/engine.py,
function.py). Each test checks PyTorch 2.13 and a value worked out by hand.
"""

import gc
import weakref

import numpy as np
import pytest

import minitorch_ln as mt
from helpers import assert_close, t64, torch
from minitorch_ln.errors import ShapeError

# ==================================================================================================
# .grad never shares memory with anything else
# ==================================================================================================


def _shares(a, b):
    return np.shares_memory(a.array if isinstance(a, mt.Tensor) else a, b.array if isinstance(b, mt.Tensor) else b)


def test_grad_of_a_leaf_is_not_the_callers_gradient_argument():
    # before: x.backward(g) stored g itself in x.grad, and clip_grad_norm_ then rewrote the caller's g
    g = mt.tensor([3.0, 4.0])
    x = mt.tensor([1.0, 1.0], requires_grad=True)
    x.backward(g)
    assert not _shares(x.grad, g)
    mt.nn.utils.clip_grad_norm_([x], max_norm=1.0)  # |g| = 5: x.grad becomes g/5 = [0.6, 0.8]
    assert g.tolist() == [3.0, 4.0]
    np.testing.assert_allclose(x.grad.array, [0.6, 0.8], rtol=1e-6)
    tg, tx = torch.tensor([3.0, 4.0]), torch.tensor([1.0, 1.0], requires_grad=True)
    tx.backward(tg)
    torch.nn.utils.clip_grad_norm_([tx], max_norm=1.0)
    assert tg.tolist() == [3.0, 4.0]
    assert_close(x.grad, tx.grad, np.float32, "clipped grad")


def test_grad_passed_through_is_not_shared_with_the_seed_a_retained_grad_or_another_leaf():
    # y = x + 0 and z = a + b pass the seed through unchanged (dy/dx = 1): every buffer is its own
    rng = np.random.default_rng(0)
    G = rng.standard_normal(3)
    x, a, b = t64(np.ones(3)), t64(np.ones(3)), t64(np.ones(3))
    y = x + 0
    y.retain_grad()
    z = a + b + y
    g = mt.tensor(G)
    z.backward(g)
    buffers = [g, y.grad, x.grad, a.grad, b.grad]
    for i in range(len(buffers)):
        for j in range(i + 1, len(buffers)):
            assert not _shares(buffers[i], buffers[j]), (i, j)
    for t in buffers[1:]:
        np.testing.assert_array_equal(t.array, G)  # d(a + b + x + 0)/d each = 1
    x.grad.mul_(0.0)
    np.testing.assert_array_equal(y.grad.array, G)


def test_grad_is_not_a_saved_tensor_a_backward_returned():
    class TimesConst(mt.autograd.Function):  # d(x·c)/dx = c when dy is 1: returns the saved c itself
        @staticmethod
        def forward(ctx, x, c):
            ctx.save_for_backward(c)
            return x * c

        @staticmethod
        def backward(ctx, dy):
            (c,) = ctx.saved_tensors
            return c, None

    c = mt.tensor([2.0, 3.0])
    x = mt.tensor([1.0, 1.0], requires_grad=True)
    TimesConst.apply(x, c).backward(mt.ones(2))
    assert x.grad.tolist() == [2.0, 3.0] and not _shares(x.grad, c)
    x.grad.zero_()
    assert c.tolist() == [2.0, 3.0]


def test_second_backward_accumulates_into_the_leaf_buffer():
    # dx of Σ 2x twice = 4, the first buffer is not aliased by the second seed
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    first = x.grad
    (x * 2).sum().backward()
    assert x.grad.tolist() == [4.0, 4.0] and first is x.grad


def test_create_graph_grad_is_its_own_buffer_with_history():
    # x.backward(g, create_graph=True) with y = x + 0: x.grad = g, a copy that keeps the graph
    x = t64([1.0, 2.0])
    g = t64([0.5, -1.0])
    (x * x).backward(g, create_graph=True)  # x.grad = 2x·g = [1, -4], depends on x and g
    assert x.grad.tolist() == [1.0, -4.0] and x.grad.requires_grad
    y = t64([3.0, 4.0])
    (y + 0).backward(g, create_graph=True)
    assert not _shares(y.grad, g) and y.grad.tolist() == [0.5, -1.0]


# ==================================================================================================
# seed gradients: dtype and shape
# ==================================================================================================


def test_seed_of_another_dtype_is_cast_to_the_outputs_dtype():
    # before: a float64 seed made a float64 .grad on a float32 leaf
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    (x * 3).backward(mt.tensor([1.0, 0.5], dtype=mt.float64))
    assert x.grad.dtype == np.float32 and x.grad.tolist() == [3.0, 1.5]
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    (tx * 3).backward(torch.tensor([1.0, 0.5], dtype=torch.float64))
    assert tx.grad.dtype == torch.float32
    assert_close(x.grad, tx.grad, np.float32, "grad")
    (gx,) = mt.autograd.grad(x * 3, x, mt.tensor([1, 2]))  # an integer seed too
    assert gx.dtype == np.float32 and gx.tolist() == [3.0, 6.0]


def test_seed_of_another_shape_is_a_shape_error():
    x = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(ShapeError, match=r"gradient has shape \(2,\) but the output has shape \(3,\)"):
        (x * 2).backward(mt.ones(2))
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(mt.ones(1, 3))  # no broadcasting of seeds
    tx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (tx * 2).backward(torch.ones(2))


# ==================================================================================================
# graphs freed by reference counting alone
# ==================================================================================================


@pytest.fixture
def no_gc():
    gc.collect()
    gc.disable()
    yield
    gc.enable()


OUTPUT_SAVERS = {
    "exp": lambda t: t.exp(),
    "tanh": lambda t: t.tanh(),
    "sigmoid": lambda t: t.sigmoid(),
    "sqrt": lambda t: t.abs().sqrt(),
    "rsqrt": lambda t: (t.abs() + 1).rsqrt(),
    "softmax": lambda t: t.softmax(-1),
    "log_softmax": lambda t: t.log_softmax(-1),
    "relu": lambda t: t.relu(),
    "pow": lambda t: t.abs() ** 1.5,
    "chain": lambda t: (t.exp() * 2).tanh().reshape(-1).T.softmax(0),
}


@pytest.mark.parametrize("name", list(OUTPUT_SAVERS))
def test_a_graph_never_backwarded_is_freed_without_the_cyclic_gc(name, no_gc):
    x = mt.randn(4, 5, requires_grad=True)
    y = OUTPUT_SAVERS[name](x)
    node, out = weakref.ref(y.grad_fn), weakref.ref(y)
    saved = [weakref.ref(t.array) for t, _ in (y.grad_fn._saved or [])  # (x itself stays: the test holds it)
             if t is not None and t.array.ndim and t.array is not x.array]
    del y
    assert node() is None and out() is None, f"{name}: node or output kept alive by a reference cycle"
    assert all(r() is None for r in saved), f"{name}: a saved array outlived its node"


def test_a_leaf_and_its_graph_are_freed_without_the_cyclic_gc(no_gc):
    # the leaf holds its AccumulateGrad node only weakly (the node holds the leaf)
    x = mt.randn(3, requires_grad=True)
    y = (x * 2).exp()
    refs = [weakref.ref(x), weakref.ref(y.grad_fn), weakref.ref(x.array)]
    del x, y
    assert all(r() is None for r in refs)


def test_saved_outputs_still_give_second_derivatives():
    # y = exp(x): d²(Σ y·g)/dx² along v is exp(x)·g·v; the saved output is rebuilt with y's node
    rng = np.random.default_rng(1)
    X, G = rng.standard_normal(3), rng.standard_normal(3)
    x = t64(X)
    y = x.exp()
    (gx,) = mt.autograd.grad(y, x, mt.tensor(G), create_graph=True)
    (ggx,) = mt.autograd.grad(gx.sum(), x)
    np.testing.assert_allclose(ggx.array, np.exp(X) * G, rtol=1e-14)
    tx = torch.tensor(X, requires_grad=True)
    (tg,) = torch.autograd.grad(tx.exp(), tx, torch.tensor(G), create_graph=True)
    (tgg,) = torch.autograd.grad(tg.sum(), tx)
    assert_close(ggx, tgg, np.float64, "second derivative")


def test_a_changed_saved_output_still_raises_naming_the_op_and_both_versions():
    x = mt.tensor([0.5, 1.0], requires_grad=True)
    y = x.exp()
    y.add_(1.0)
    with pytest.raises(RuntimeError, match=r"needed by ExpBackward0 .* saved at version 0 and is now at version 1"):
        y.sum().backward()


def test_a_saved_array_that_views_an_input_shares_its_version_counter():
    class SaveTransposed(mt.autograd.Function):  # saves x.T (a NumPy view of x), not x
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x.T)
            return (x * x).sum()

        @staticmethod
        def backward(ctx, dy):
            (xt,) = ctx.saved_tensors
            return 2 * dy * xt.T

    x = mt.tensor([[1.0, 2.0]], requires_grad=True)
    a = x * 1
    out = SaveTransposed.apply(a)
    a.mul_(3.0)  # before: no error, and a gradient from the new values, 6x instead of 2x
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        out.backward()


def test_grad_is_not_a_saved_output_a_backward_returned():
    # a backward that hands back its own saved output: the leaf's .grad must not be that output's memory
    class Odd(mt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2.0
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, dy):
            (y,) = ctx.saved_tensors
            return y

    x = mt.tensor([1.0, 2.0], requires_grad=True)
    y = Odd.apply(x)
    y.backward(mt.ones(2))
    assert x.grad.tolist() == [2.0, 4.0] and not _shares(x.grad, y)


def test_a_fresh_gradient_is_adopted_without_a_copy_and_a_seed_is_copied():
    # the stored gradient of a leaf is the array the backward made (no copy: as PyTorch's AccumulateGrad
    # steals an unshared gradient), but never the caller's seed
    x = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    seed = mt.tensor([0.5, -1.0, 2.0])
    (x * 3.0).backward(seed)
    assert x.grad.tolist() == [1.5, -3.0, 6.0] and not _shares(x.grad, seed)
    z = mt.tensor([1.0, 2.0], requires_grad=True)
    seed2 = mt.tensor([4.0, 5.0])
    (z + 0.0).backward(seed2)  # Add hands the seed itself to the leaf: copied
    assert not _shares(z.grad, seed2)
    z.grad.zero_()
    assert seed2.tolist() == [4.0, 5.0]

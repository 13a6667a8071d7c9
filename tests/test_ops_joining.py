"""``stack`` as one node (ops/joining.py: ``Stack`` and its adjoint ``Unstack``); ``cat`` and ``Split`` moved
there from indexing.py (their cases stay in test_ops_indexing.py).

Gradcheck and gradgradcheck in float64 (contiguous and non-contiguous leaves), PyTorch comparison through the
one helper (float64, float32, mixed and integer dtypes, every dim), a Hypothesis property against ``np.stack``
and against the composed form it replaced (``unsqueeze`` + ``cat``), bad input with PyTorch's error classes.
"""

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import arrays

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck
from minitorch_ln.errors import ShapeError
from minitorch_ln.ops import indexing, joining

DIMS = [0, 1, 2, -1, -3]


@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_stack_matches_torch(dim, dtype, rng):
    xs = [rng.standard_normal((3, 4)).astype(dtype) for _ in range(3)]
    compare_with_torch(lambda *t: mt.stack(t, dim), lambda *t: torch.stack(t, dim), xs)
    compare_with_torch(lambda *t: mt.stack(list(t), dim=dim) * 2.0, lambda *t: torch.stack(list(t), dim=dim) * 2.0, xs)


def test_stack_of_one_tensor_and_of_0d_tensors_matches_torch(rng):
    compare_with_torch(lambda a: mt.stack([a], 1), lambda a: torch.stack([a], 1), [rng.standard_normal((2, 3))])
    compare_with_torch(lambda a, b: mt.stack([a, b, a]), lambda a, b: torch.stack([a, b, a]),
                       [np.array(1.5), np.array(-2.0)])


@pytest.mark.parametrize("pair", [(np.int32, np.float16), (np.int64, np.bool_), (np.float32, np.float64),
                                  (np.uint8, np.int8), (np.bool_, np.bool_), (np.int32, np.int32)])
def test_stack_promotes_as_torch(pair, rng):
    xs = [(rng.standard_normal(4) * 3).astype(d) for d in pair]
    ours = mt.stack([mt.tensor(x) for x in xs], 1)
    theirs = torch.stack([torch.from_numpy(x) for x in xs], 1)
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_stack_mixed_dtypes_gradient_matches_torch(rng):
    compare_with_torch(lambda a, b: mt.stack([a, b], -1), lambda a, b: torch.stack([a, b], -1),
                       [rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((2, 3))])


@pytest.mark.parametrize("dim", DIMS)
def test_stack_gradcheck_and_gradgradcheck(dim, rng):
    a, b = t64(rng.standard_normal((3, 4))), t64(rng.standard_normal((3, 4)))
    assert gradcheck(lambda x, y: mt.stack([x, y * x, y], dim), (a, b))
    assert gradgradcheck(lambda x, y: mt.stack([x * y, y], dim), (a, b))


def test_stack_gradcheck_noncontiguous_leaves(rng):
    gradcheck_noncontiguous(lambda x, y: mt.stack([x, y, x], 1), [rng.standard_normal((3, 4)),
                                                                  rng.standard_normal((3, 4))], gg=True)
    gradcheck_noncontiguous(lambda x: mt.stack([x.t(), x.t() * 2], -1), [rng.standard_normal((3, 4))])


def test_stack_is_one_node_and_its_backward_is_unstack():
    a, b = mt.ones(2, 3, requires_grad=True), mt.ones(2, 3, requires_grad=True)
    y = mt.stack([a, b], 1)
    assert type(y.grad_fn).__name__ == "Node" and y.grad_fn.fn is joining.Stack
    dy = mt.arange(12.0).reshape(2, 2, 3).requires_grad_()
    (ga, gb) = mt.autograd.grad(y, (a, b), dy, create_graph=True)
    np.testing.assert_array_equal(ga.detach().numpy(), [[0, 1, 2], [6, 7, 8]])
    np.testing.assert_array_equal(gb.detach().numpy(), [[3, 4, 5], [9, 10, 11]])
    assert ga.grad_fn.fn is joining.Unstack


def test_indexing_keeps_the_moved_names():
    assert indexing.cat is joining.cat and indexing.stack is joining.stack
    assert indexing.Cat is joining.Cat and indexing.Split is joining.Split


@settings(max_examples=40, deadline=None)
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4), k=st.integers(1, 4),
       data=st.data())
def test_stack_property_equals_numpy_and_the_composed_form(shape, k, data):
    xs = [data.draw(arrays(shape)) for _ in range(k)]
    dim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    leaves = [t64(x) for x in xs]
    y = mt.stack(leaves, dim)
    np.testing.assert_array_equal(y.detach().numpy(), np.stack(xs, dim))
    composed = mt.cat([t.unsqueeze(dim % (len(shape) + 1)) for t in leaves], dim % (len(shape) + 1))
    np.testing.assert_array_equal(y.detach().numpy(), composed.detach().numpy())
    dy = np.arange(y.numel(), dtype=np.float64).reshape(y.shape)
    got = mt.autograd.grad(y, leaves, mt.tensor(dy))
    want = mt.autograd.grad(composed, leaves, mt.tensor(dy))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_stack_bad_input():
    a = mt.ones(2)
    with pytest.raises(RuntimeError, match="stack expects a non-empty TensorList"):
        mt.stack([])
    with pytest.raises(TypeError, match=r"stack\(\): argument 'tensors' \(position 1\) must be tuple of Tensors, not Tensor"):
        mt.stack(mt.ones(3, 2))
    with pytest.raises(TypeError, match=r"argument 'dim' must be int, not float"):
        mt.stack([a, a], dim=1.0)
    with pytest.raises(TypeError, match=r"argument 'dim' must be int, not bool"):
        mt.stack([a, a], dim=True)
    with pytest.raises(TypeError, match="expected a sequence of Tensors, got list at position 1"):
        mt.stack([a, [1.0, 2.0]])
    with pytest.raises(RuntimeError, match=r"stack: tensor 1 has shape \(3,\) but tensor 0 has \(2,\)"):
        mt.stack([a, mt.ones(3)])
    with pytest.raises(IndexError, match="out of range"):
        mt.stack([a, a], dim=2)
    with pytest.raises(IndexError, match="out of range"):
        mt.stack([a, a], dim=-3)
    with pytest.raises(TypeError, match=r"cat\(\): argument 'tensors' \(position 1\) must be tuple of Tensors"):
        mt.cat(mt.ones(3, 2))
    for bad in ([], mt.ones(3, 2), [a, mt.ones(3)]):  # PyTorch refuses each with the same class
        with pytest.raises(Exception) as ours:
            mt.stack(bad)
        with pytest.raises(Exception) as theirs:
            torch.stack(torch.ones(3, 2) if isinstance(bad, mt.Tensor) else [torch.ones(2), torch.ones(3)][:len(bad)])
        assert isinstance(ours.value, type(theirs.value))

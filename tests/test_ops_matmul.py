"""matmul: 2-D, batched with broadcasting, 1-D operands; gradcheck, PyTorch, properties, errors."""

import numpy as np
import pytest
from hypothesis import given

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck

import strategies as S
from helpers import compare_with_torch, gradcheck_noncontiguous, t64, torch

SHAPES = [
    ((3, 4), (4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)),  # batch dims broadcast
    ((3, 4), (2, 4, 5)),  # a matrix times a batch
    ((4,), (4, 5)),  # vector @ matrix
    ((3, 4), (4,)),  # matrix @ vector
    ((4,), (4,)),  # dot product -> 0-d
    ((4,), (2, 4, 3)),
    ((2, 3, 4), (4,)),
]


@pytest.mark.parametrize("sa,sb", SHAPES, ids=str)
def test_matmul_gradcheck(sa, sb, rng):
    small = lambda s: tuple(min(d, 3) for d in s)  # noqa: E731 - keep the Jacobians small
    sa, sb = small(sa), small(sb)
    if len(sa) >= 1 and len(sb) >= 1:
        k = sa[-1]
        sb = (*sb[:-2], k, sb[-1]) if len(sb) >= 2 else (k,)
    assert gradcheck(mt.matmul, (t64(rng.standard_normal(sa)), t64(rng.standard_normal(sb))))


def test_matmul_gradgradcheck(rng):
    assert gradgradcheck(mt.matmul, (t64(rng.standard_normal((2, 3))), t64(rng.standard_normal((3, 2)))))
    assert gradgradcheck(mt.matmul, (t64(rng.standard_normal((2, 1, 2, 3))), t64(rng.standard_normal((2, 3, 2)))))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sa,sb", SHAPES, ids=str)
def test_matmul_matches_torch(sa, sb, dtype, rng, device):
    a, b = rng.standard_normal(sa).astype(dtype), rng.standard_normal(sb).astype(dtype)
    compare_with_torch(lambda x, y: x @ y, lambda x, y: x @ y, [a, b], device=device)


@given(S.matmul_shapes())
def test_property_matmul_matches_torch(shapes):
    sa, sb = shapes
    rng = np.random.default_rng(0)
    compare_with_torch(mt.matmul, torch.matmul, [rng.standard_normal(sa), rng.standard_normal(sb)])


def test_matmul_with_constant_array_and_linear_layer_gradient():
    x = t64(np.arange(6.0).reshape(2, 3))
    w = np.array([[2.0, 1.0, 0.0], [0.0, 2.0, -1.0], [3.0, 0.0, 2.0]])  # not symmetric: catches a missing .T
    y = x @ w
    np.testing.assert_allclose(y.detach().numpy(), np.arange(6.0).reshape(2, 3) @ w)
    up = np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]])  # non-constant upstream gradient
    y.backward(mt.tensor(up))
    np.testing.assert_allclose(x.grad.numpy(), up @ w.T)


def test_matmul_errors_name_both_shapes():
    with pytest.raises(ValueError, match=r"shapes \(2, 3\) and \(4, 5\) cannot be multiplied"):
        mt.ones(2, 3) @ mt.ones(4, 5)
    with pytest.raises(ValueError, match=r"shapes \(3,\) and \(4,\) cannot be multiplied"):
        mt.ones(3) @ mt.ones(4)
    with pytest.raises(ValueError, match=r"batch dimensions of shapes \(2, 2, 3\) and \(3, 3, 4\) do not broadcast"):
        mt.ones(2, 2, 3) @ mt.ones(3, 3, 4)
    with pytest.raises(ValueError, match="at least 1 dimension"):
        mt.matmul(mt.tensor(2.0), mt.ones(2))


def test_matmul_promotes_dtypes():
    assert (mt.ones(2, 2) @ mt.ones(2, 2, dtype="float64")).dtype == np.float64
    assert (mt.ones(2, 2, dtype="int64") @ mt.ones(2, 2, dtype="int64")).dtype == np.int64


# ---------------------------------------------------------------------------------- linear (fused)

F = mt.nn.functional
LINEAR_SHAPES = [((3, 4), True), ((2, 3, 4), True), ((4,), True), ((2, 3, 4), False), ((0, 4), True)]


@pytest.mark.parametrize("shape,with_bias", LINEAR_SHAPES, ids=str)
def test_linear_gradcheck_and_gradgradcheck(shape, with_bias, rng):
    x, w = t64(rng.standard_normal(shape)), t64(rng.standard_normal((5, shape[-1])))
    args = (x, w, t64(rng.standard_normal(5))) if with_bias else (x, w)
    assert gradcheck(F.linear, args)
    if x.numel():
        assert gradgradcheck(F.linear, args)  # the Tensor-op backward (create_graph=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape,with_bias", LINEAR_SHAPES, ids=str)
def test_linear_matches_torch(shape, with_bias, dtype, rng, device):
    arrays = [rng.standard_normal(shape), rng.standard_normal((5, shape[-1]))]
    arrays += [rng.standard_normal(5)] if with_bias else []
    compare_with_torch(F.linear, torch.nn.functional.linear, [a.astype(dtype) for a in arrays], device=device)


def test_linear_is_one_node_and_saves_only_what_its_gradients_need(rng):
    x = mt.tensor(rng.standard_normal((6, 4)).astype(np.float32))  # no grad for x: W is not saved
    w = mt.tensor(rng.standard_normal((3, 4)).astype(np.float32), requires_grad=True)
    b = mt.tensor(np.zeros(3, dtype=np.float32), requires_grad=True)
    y = F.linear(x, w, b)
    assert y.grad_fn.name() == "LinearBackward0" and y.dtype == np.float32
    assert [t is None for t in y.grad_fn.saved_tensors] == [False, True]


def test_linear_falls_back_to_promotion_for_mixed_dtypes(rng):
    x = t64(rng.standard_normal((2, 3)))
    w = mt.tensor(rng.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
    y = F.linear(x, w)
    assert y.dtype == np.float64
    y.sum().backward()
    assert w.grad.dtype == np.float32 and w.grad.shape == (4, 3)


def test_linear_bad_input():
    with pytest.raises(ValueError, match="has 3 features, but the weight of shape"):
        F.linear(t64(np.ones((2, 3))), t64(np.ones((4, 5))))


# ==================================================================================================
# gradcheck on non-contiguous leaves (issue 13): the leaf's own .array is strided and axis-reversed
# ==================================================================================================
@pytest.mark.parametrize("sa,sb", SHAPES, ids=str)
def test_matmul_gradcheck_noncontiguous_leaves(sa, sb, rng):
    small = lambda s: tuple(min(d, 3) for d in s)  # noqa: E731 - keep the Jacobians small
    sa, sb = small(sa), small(sb)
    if len(sa) >= 1 and len(sb) >= 1:
        k = sa[-1]
        sb = (*sb[:-2], k, sb[-1]) if len(sb) >= 2 else (k,)
    gradcheck_noncontiguous(mt.matmul, [rng.standard_normal(sa), rng.standard_normal(sb)], gg=len(sa) + len(sb) <= 4)


@pytest.mark.parametrize("shape,with_bias", LINEAR_SHAPES, ids=str)
def test_linear_gradcheck_noncontiguous_leaves(shape, with_bias, rng):
    arrays = [rng.standard_normal(shape), rng.standard_normal((5, shape[-1]))] + [rng.standard_normal(5)] * with_bias
    gradcheck_noncontiguous(F.linear, arrays, gg=bool(np.prod(shape)))

"""matmul: 2-D, batched with broadcasting, 1-D operands; gradcheck, PyTorch, properties, errors."""

import numpy as np
import pytest
from hypothesis import given

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck

import strategies as S
from helpers import compare_with_torch, t64, torch

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
    w = np.eye(3) * 2
    y = x @ w
    np.testing.assert_allclose(y.detach().numpy(), np.arange(6.0).reshape(2, 3) * 2)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3), 2.0))


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

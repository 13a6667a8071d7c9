"""Regressions from PyTorch's op database walked in float64/float32 (issue 24's target), continued from
``test_opdb_float_parity.py``: ``gather``/``scatter`` with an empty index of any dtype or shape, ``tensordot``
where a contracted dim of size 1 meets a larger one, and matrix norms of matrices with no rows or
columns -- each against PyTorch (``compare_with_torch``, float64
and float32, random upstream gradients) and against the math.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import compare_with_torch, gradcheck_noncontiguous

import minitorch_ln as mt

torch = pytest.importorskip("torch")
TF = torch.nn.functional


@pytest.fixture
def rng():
    return np.random.default_rng(24)

# ==================================================================================================
# gather / scatter with an empty index
# ==================================================================================================


@pytest.mark.parametrize("index_dtype", [np.uint8, np.int16, np.float32, np.int64])
@pytest.mark.parametrize("index_shape", [(0,), (2, 0)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gather_with_an_empty_index_of_any_dtype_is_empty_as_torch(index_dtype, index_shape, dtype, rng):
    x = rng.standard_normal(5).astype(dtype)
    idx = np.zeros(index_shape, index_dtype)
    ours, _ = compare_with_torch(lambda x, i: mt.gather(x, 0, i), lambda x, i: torch.gather(x, 0, i), [x, idx])
    assert ours[0].shape == index_shape
    xt = mt.tensor(x, requires_grad=True)
    mt.gather(xt, 0, mt.tensor(idx)).sum().backward()
    np.testing.assert_array_equal(xt.grad.numpy(), np.zeros(5))  # nothing read, nothing to differentiate


def test_gather_and_scatter_keep_refusing_a_nonempty_index_of_another_dtype():
    for call in (lambda: mt.gather(mt.ones(5), 0, mt.zeros(2, dtype=mt.uint8)),
                 lambda: mt.scatter(mt.ones(5), 0, mt.zeros(2, dtype=mt.uint8), mt.ones(2))):
        with pytest.raises(RuntimeError, match="expected index of dtype int64 or int32, got uint8"):
            call()
    with pytest.raises(IndexError, match="out of range"):  # the dim is still checked for an empty index
        mt.gather(mt.ones(5), 3, mt.zeros(0, dtype=mt.uint8))


@pytest.mark.parametrize("op", ["scatter", "scatter_add", "scatter_value"])
def test_scatter_with_an_empty_index_returns_the_input_as_torch(op, rng):
    x, src, idx = rng.standard_normal(5), rng.standard_normal(3), np.zeros(0, np.uint8)

    def call(lib):
        if op == "scatter_value":
            return lambda x, i, s: lib.scatter(x, 0, i, 2.0)
        return lambda x, i, s: getattr(lib, op)(x, 0, i, s)

    # src's gradient is not compared: PyTorch's backward raises for a src larger than the index (ours: zeros)
    ours, _ = compare_with_torch(call(mt), call(torch), [x, idx, src], requires_grad=[True, False, False])
    np.testing.assert_array_equal(ours[0], x)


# ==================================================================================================
# tensordot: a contracted dim of size 1 broadcasts
# ==================================================================================================


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shapes, dims", [
    (((1, 1, 1), (2, 1, 2)), ([0, 1], [2, 0])),   # the database's sample
    (((3, 2), (1, 5)), ([1], [0])),
    (((3, 1, 4), (4, 5, 2)), ([1, 2], [1, 0])),   # size 1 on a's side
    (((2, 3, 0), (1, 4)), ([2], [0])),            # size 1 against an empty dim: an empty sum, 0
])
def test_tensordot_broadcasts_a_size_one_contracted_dim_as_torch(shapes, dims, dtype, rng):
    a, b = (rng.standard_normal(s) for s in shapes)
    ours, _ = compare_with_torch(lambda a, b: mt.tensordot(a, b, dims), lambda a, b: torch.tensordot(a, b, dims),
                                 [a.astype(dtype), b.astype(dtype)])
    # the math: broadcast the size-1 dims to the partner's size, then an ordinary contraction
    a_full, b_full = a, b
    for i, j in zip(*dims):
        if b.shape[j] == 1:
            b_full = np.repeat(b_full, a.shape[i], axis=j)  # to a's size (0 included: an empty sum)
        elif a.shape[i] == 1:
            a_full = np.repeat(a_full, b.shape[j], axis=i)
    want = np.tensordot(a_full, b_full, dims)
    np.testing.assert_allclose(ours[0], want, rtol=1e-12 if dtype == np.float64 else 1e-5, atol=1e-6)


def test_tensordot_size_one_broadcast_gradcheck_noncontiguous(rng):
    gradcheck_noncontiguous(lambda a, b: mt.tensordot(a, b, ([0, 1], [2, 0])),
                            [rng.standard_normal((1, 3, 2)), rng.standard_normal((3, 2, 4))], gg=True)


def test_tensordot_still_refuses_sizes_that_neither_match_nor_broadcast():
    with pytest.raises(RuntimeError, match=r"contracted dimensions need to match, but a of shape \(3, 2\) has size 2 "
                                           r"in dim 1 and b of shape \(3, 5\) has size 3 in dim 0"):
        mt.tensordot(mt.ones(3, 2), mt.ones(3, 5), ([1], [0]))


# ==================================================================================================
# matrix norms of matrices with no rows or no columns
# ==================================================================================================

INF = math.inf


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(0, 0), (0, 5), (5, 0), (2, 0, 3), (2, 3, 0)])
@pytest.mark.parametrize("ord", [1, 2, INF, "fro", "nuc"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_matrix_norm_of_an_empty_matrix_is_zero_as_torch(shape, ord, keepdim, dtype):
    # every matrix norm of the zero map is 0; the max orders reduce over an empty set of non-negative sums
    a = np.zeros(shape, dtype)
    ours, _ = compare_with_torch(lambda a: mt.linalg.matrix_norm(a, ord, keepdim=keepdim),
                                 lambda a: torch.linalg.matrix_norm(a, ord, keepdim=keepdim), [a])
    np.testing.assert_array_equal(ours[0], 0.0)
    if len(shape) == 2:
        compare_with_torch(lambda a: mt.linalg.norm(a, ord, keepdim=keepdim),
                           lambda a: torch.linalg.norm(a, ord, keepdim=keepdim), [a])


@pytest.mark.parametrize("shape", [(0, 0), (0, 5), (5, 0), (2, 0, 3), (2, 3, 0)])
@pytest.mark.parametrize("ord", [-1, -2, -INF])
def test_matrix_norm_min_orders_of_an_empty_matrix_raise_as_torch(shape, ord):
    zeros = np.zeros(shape)
    try:
        want = torch.linalg.matrix_norm(torch.tensor(zeros), ord).numpy()  # a min over a non-empty dim
    except IndexError:
        with pytest.raises(IndexError, match="amin\\(\\): Expected reduction dim .* to have non-zero size"):
            mt.linalg.matrix_norm(mt.tensor(zeros), ord)
    else:
        np.testing.assert_array_equal(mt.linalg.matrix_norm(mt.tensor(zeros), ord).numpy(), want)

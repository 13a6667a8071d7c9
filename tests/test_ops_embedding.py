"""embedding (gather + scatter-add backward, padding_idx) and dropout (seeded mask, scaling)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.autograd import gradcheck, gradgradcheck

from minitorch_ln.kernels.scatter import scatter_add

from helpers import compare_with_torch, gradcheck_noncontiguous, noncontiguous_leaf, t64, torch

F = torch.nn.functional

IDS = np.array([[1, 3, 1], [0, 4, 1]])  # id 1 appears three times: its row's gradient is the sum


def test_embedding_gradcheck_and_gradgradcheck(rng):
    w = t64(rng.standard_normal((5, 3)))
    ids = mt.tensor(IDS)
    assert gradcheck(lambda t: mt.embedding(ids, t), (w,))
    assert gradgradcheck(lambda t: mt.embedding(ids, t) * mt.embedding(ids, t), (w,))
    # padding_idx freezes a row by definition (its true derivative is not zero): check the others
    assert gradcheck(lambda t: mt.embedding(ids, t, padding_idx=2), (w,))
    assert gradgradcheck(lambda t: mt.embedding(ids, t, padding_idx=1) ** 2, (w,))  # first derivative: padding row stays 0


@pytest.mark.parametrize("padding_idx", [None, 1, -1])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_embedding_matches_torch(padding_idx, dtype, rng, device):
    w = rng.standard_normal((5, 4)).astype(dtype)
    compare_with_torch(lambda t: mt.embedding(mt.tensor(IDS, device=device), t, padding_idx=padding_idx),
                       lambda t: F.embedding(torch.from_numpy(IDS).to(t.device), t, padding_idx=padding_idx),
                       [w], device=device)


def test_repeated_ids_sum_and_padding_row_gets_nothing():
    w = mt.ones(4, 2, dtype="float64", requires_grad=True)
    out = mt.embedding(mt.tensor([[2, 2, 0], [2, 3, 0]]), w, padding_idx=0)
    up = np.arange(1.0, 13.0).reshape(2, 3, 2)  # distinct upstream values: a wrong row/column shows
    out.backward(mt.tensor(up))
    row2 = up[0, 0] + up[0, 1] + up[1, 0]
    np.testing.assert_array_equal(w.grad.numpy(), [[0, 0], [0, 0], row2, up[1, 1]])


@given(st.integers(1, 8), st.integers(1, 4), st.lists(st.integers(0, 7), min_size=1, max_size=12))
def test_property_embedding_gradient_counts_occurrences(vocab, dim, ids):
    ids = np.array([i % vocab for i in ids])
    w = mt.zeros(vocab, dim, dtype="float64", requires_grad=True)
    out = mt.embedding(mt.tensor(ids), w)
    assert out.shape == (len(ids), dim)
    out.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy()[:, 0], np.bincount(ids, minlength=vocab))


def test_embedding_bad_input():
    w = mt.randn(5, 3)
    with pytest.raises(IndexError, match=r"token id 5 is out of range for a vocabulary of size 5"):
        mt.embedding(mt.tensor([0, 5]), w)
    with pytest.raises(IndexError, match=r"token id -1 is out of range for a vocabulary of size 5"):
        mt.embedding(mt.tensor([-1, 2]), w)
    with pytest.raises(TypeError, match="must be an integer tensor of token ids.*float32"):
        mt.embedding(mt.tensor([0.0, 1.0]), w)
    with pytest.raises(TypeError, match=r"weight must be a 2-D tensor.*\(5,\)"):
        mt.embedding(mt.tensor([0]), mt.randn(5))
    with pytest.raises(IndexError, match="padding_idx 7 must be an int in"):
        mt.embedding(mt.tensor([0]), w, padding_idx=7)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scatter_add_of_rows_equals_np_add_at_to_the_bit(dtype, rng):
    # the sparse-product fast path of backend.scatter_add against the reference np.add.at

    for V, n, D in [(7, 50, 3), (65, 300, 16), (1, 4, 2)]:
        ids = rng.integers(0, V, n)
        values = rng.standard_normal((n, D)).astype(dtype)
        fast, ref = np.zeros((V, D), dtype), np.zeros((V, D), dtype)  # as in the embedding's backward
        scatter_add(fast, ids, values)
        np.add.at(ref, ids, values)
        assert fast.dtype == dtype
        np.testing.assert_array_equal(fast, ref)
        as_tuple = np.zeros((V, D), dtype)  # x[(ids,)], as indexing passes it
        scatter_add(as_tuple, (ids,), values)
        np.testing.assert_array_equal(as_tuple, ref)
        start = rng.standard_normal((V, D)).astype(dtype)  # into a non-zero target: equal up to rounding
        fast, ref = start.copy(), start.copy()
        scatter_add(fast, ids, values)
        np.add.at(ref, ids, values)
        np.testing.assert_allclose(fast, ref, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)
    with pytest.raises(IndexError, match="index 3 is out of bounds"):  # out-of-range ids still raise (np.add.at)
        scatter_add(np.zeros((3, 2), dtype), np.array([0, 3]), np.ones((2, 2), dtype))


# ==================================================================================================
# gradcheck on non-contiguous leaves (issue 13): the leaf's own .array is strided and axis-reversed
# ==================================================================================================
def test_embedding_gradcheck_noncontiguous_weight(rng):
    # the weight leaf non-contiguous (a transposed, strided table) and the ids too; padding_idx freezes
    # its row by definition, so the first-order checks use an id that does not occur (as above)
    ids = mt.Tensor(np.asfortranarray(IDS))
    for padding_idx in (None, 2):
        gradcheck_noncontiguous(lambda t: mt.embedding(ids, t, padding_idx=padding_idx) ** 2,
                                 [rng.standard_normal((5, 3))], gg=True)
    w = noncontiguous_leaf(rng.standard_normal((5, 3)))
    assert gradgradcheck(lambda t: mt.embedding(ids, t, padding_idx=1) ** 2, (w,))


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_embedding_max_norm_renormalizes_looked_up_rows_in_place_as_torch(norm_type, dtype, rng):
    # PyTorch's embedding_renorm_: each looked-up row with norm > max_norm is scaled by
    # max_norm / (norm + 1e-7) in the weight itself, under no_grad; the others stay as they are.
    # Row 0 = [3, 4] (2-norm 5, max_norm 1): [0.6, 0.8]; row 1 = [0.3, 0.4] (norm 0.5): unchanged;
    # row 2 is never looked up: unchanged even though its norm is 10.
    w0 = np.concatenate([np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]]), rng.standard_normal((3, 2)) * 3])
    ids = np.array([[0, 1, 3], [0, 5, 4]])
    ours_w, theirs_w = mt.tensor(w0.astype(dtype), requires_grad=True), torch.tensor(w0.astype(dtype), requires_grad=True)
    ours = mt.nn.functional.embedding(mt.tensor(ids), ours_w, max_norm=1.0, norm_type=norm_type)
    theirs = torch.nn.functional.embedding(torch.from_numpy(ids), theirs_w, max_norm=1.0, norm_type=norm_type)
    tol = dict(rtol=1e-6, atol=1e-7) if dtype == np.float64 else dict(rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), **tol)
    np.testing.assert_allclose(ours_w.detach().numpy(), theirs_w.detach().numpy(), **tol)  # renormed in place
    np.testing.assert_array_equal(ours_w.detach().numpy()[2], w0[2].astype(dtype))
    if norm_type == 2.0:
        np.testing.assert_allclose(ours_w.detach().numpy()[:2], [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)
    g = rng.standard_normal(ours.shape).astype(dtype)
    ours.backward(mt.tensor(g))
    theirs.backward(torch.from_numpy(g))
    np.testing.assert_allclose(ours_w.grad.numpy(), theirs_w.grad.numpy(), **tol)  # the renorm has no gradient
    emb, ref = mt.nn.Embedding(6, 2, max_norm=1.0, norm_type=norm_type), torch.nn.Embedding(6, 2, max_norm=1.0,
                                                                                              norm_type=norm_type)
    with mt.no_grad():
        emb.weight.copy_(mt.tensor(w0.astype(np.float32)))
    with torch.no_grad():
        ref.weight.copy_(torch.from_numpy(w0.astype(np.float32)))
    np.testing.assert_allclose(emb(mt.tensor(ids)).detach().numpy(), ref(torch.from_numpy(ids)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(emb.weight.detach().numpy(), ref.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert repr(emb) == repr(ref)

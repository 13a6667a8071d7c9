"""Basic layers against PyTorch after loading PyTorch's weights: Linear, Embedding, Dropout, activations, init."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln import nn
from minitorch_ln.autograd import gradcheck

from helpers import compare_with_torch, t64, torch
from parity import module_parity

DTYPES = [np.float64, np.float32]


# ----------------------------------------------------------------------------------------------- Linear


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_pytorch_after_loading_its_weights(dtype, bias, device, rng):
    x = rng.standard_normal((2, 3, 5))
    module_parity(nn.Linear(5, 4, bias=bias), torch.nn.Linear(5, 4, bias=bias), [x], lambda m, x: m(x),
                  dtype=dtype, device=device)


def test_linear_gradcheck():
    m = nn.Linear(3, 2).double()
    x = t64(np.random.default_rng(0).standard_normal((4, 3)))
    assert gradcheck(lambda x, w, b: nn.functional.linear(x, w, b), (x, m.weight, m.bias))


def test_linear_default_init_is_pytorchs_uniform():
    m = nn.Linear(100, 50)
    bound = 1 / math.sqrt(100)
    for p in (m.weight, m.bias):
        assert p.dtype == np.float32 and np.abs(p.array).max() <= bound
        assert np.abs(p.array).max() > 0.9 * bound  # the whole range is used
    assert abs(m.weight.array.std() - bound / math.sqrt(3)) < 0.01  # uniform(-b, b) has std b/√3


def test_linear_bad_input_names_the_feature_counts():
    with pytest.raises(ValueError, match=r"shape \(4, 3\) has 3 features, but the weight of shape \(2, 5\) expects 5"):
        nn.Linear(5, 2)(mt.randn(4, 3))


# ----------------------------------------------------------------------------------------------- Embedding


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_embedding_matches_pytorch_with_repeated_ids_and_padding(dtype, padding_idx, device):
    ids = np.array([[0, 2, 2, 5], [5, 5, 1, 2]])  # repeated ids, and the padding id (2 or 5 = -1)
    module_parity(nn.Embedding(6, 3, padding_idx=padding_idx), torch.nn.Embedding(6, 3, padding_idx=padding_idx),
                  [ids], lambda m, i: m(i), dtype=dtype, device=device)


def test_embedding_repeated_ids_sum_and_padding_row_gets_nothing():
    emb = nn.Embedding(4, 2, padding_idx=0).double()
    ids = mt.tensor([[1, 1, 0], [3, 1, 0]])
    up = np.arange(12, dtype=np.float64).reshape(2, 3, 2)
    emb(ids).backward(mt.tensor(up))
    expected = np.zeros((4, 2))
    expected[1] = up[0, 0] + up[0, 1] + up[1, 1]
    expected[3] = up[1, 0]
    np.testing.assert_array_equal(emb.weight.grad.array, expected)


def test_embedding_init_is_standard_normal_with_zero_padding_row():
    emb = nn.Embedding(2000, 8, padding_idx=-2)
    assert emb.padding_idx == 1998
    assert np.all(emb.weight.array[1998] == 0)
    rest = np.delete(emb.weight.array, 1998, axis=0)
    assert abs(rest.mean()) < 0.02 and abs(rest.std() - 1) < 0.02


def test_embedding_gradcheck():
    # without padding_idx: the padding row's gradient is zero by design, not by calculus
    emb = nn.Embedding(5, 3).double()
    ids = mt.tensor([[0, 4, 1], [1, 1, 3]])
    assert gradcheck(lambda w: nn.functional.embedding(ids, w), (emb.weight,))


def test_embedding_from_pretrained_is_frozen_by_default():
    w = mt.randn(3, 2)
    emb = nn.Embedding.from_pretrained(w)
    assert not emb.weight.requires_grad
    np.testing.assert_array_equal(emb(mt.tensor([2, 0])).array, w.array[[2, 0]])
    assert nn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad


@given(st.data())
def test_embedding_lookup_and_gradient_property(data):
    vocab, dim = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 4))
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple))
    ids = np.array(data.draw(st.lists(st.integers(0, vocab - 1), min_size=int(np.prod(shape)),
                                      max_size=int(np.prod(shape))))).reshape(shape)
    emb = nn.Embedding(vocab, dim).double()
    out = emb(mt.tensor(ids))
    np.testing.assert_array_equal(out.array, emb.weight.array[ids])
    out.sum().backward()
    counts = np.bincount(ids.ravel(), minlength=vocab).astype(np.float64)  # each row: how often it was used
    np.testing.assert_array_equal(emb.weight.grad.array, np.repeat(counts[:, None], dim, axis=1))


def test_embedding_bad_input():
    emb = nn.Embedding(10, 4)
    with pytest.raises(IndexError, match=r"token id 10 is out of range for a vocabulary of size 10"):
        emb(mt.tensor([[1, 10]]))
    with pytest.raises(IndexError, match=r"token id -3 is out of range for a vocabulary of size 10"):
        emb(mt.tensor([-3, 2]))
    with pytest.raises(TypeError, match="integer tensor of token ids"):
        emb(mt.tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"padding_idx must be within \[-10, 10\)"):
        nn.Embedding(10, 4, padding_idx=10)
    with pytest.raises(ValueError, match="num_embeddings must be a positive int, got 0"):
        nn.Embedding(0, 4)


# ----------------------------------------------------------------------------------------------- Dropout


def test_dropout_training_zeroes_a_fraction_p_and_rescales_the_rest():
    drop = nn.Dropout(p=0.25)
    x = mt.ones(200, 500, requires_grad=True)
    y = drop(x)
    kept = y.array != 0
    assert abs(1 - kept.mean() - 0.25) < 0.01  # 100,000 draws: the standard error is 0.0014
    np.testing.assert_allclose(y.array[kept], 1 / 0.75, rtol=1e-6)
    y.backward(mt.full((200, 500), 2.0))
    np.testing.assert_allclose(x.grad.array, np.where(kept, 2 / 0.75, 0.0), rtol=1e-6)  # the same mask


def test_dropout_is_identity_in_eval_and_reproducible_with_a_seed():
    drop = nn.Dropout(0.5)
    x = mt.randn(4, 5)
    mt.manual_seed(3)
    a = drop(x).array.copy()
    mt.manual_seed(3)
    np.testing.assert_array_equal(drop(x).array, a)
    drop.eval()
    assert drop(x) is x
    assert np.all(nn.Dropout(1.0)(x).array == 0) and nn.Dropout(0.0)(x) is x


def test_dropout_gradcheck_with_fixed_mask():
    x = t64(np.random.default_rng(0).standard_normal((3, 4)))

    def f(x):
        mt.manual_seed(7)  # the same mask at every evaluation
        return nn.functional.dropout(x, 0.3)

    assert gradcheck(f, (x,))


def test_dropout_bad_p():
    with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.functional.dropout(mt.ones(2), -0.1)


# ----------------------------------------------------------------------------------------------- activations

ACTIVATIONS = [
    (lambda: nn.ReLU(), lambda: torch.nn.ReLU()),
    (lambda: nn.GELU(), lambda: torch.nn.GELU()),
    (lambda: nn.GELU("tanh"), lambda: torch.nn.GELU("tanh")),
    (lambda: nn.Tanh(), lambda: torch.nn.Tanh()),
    (lambda: nn.Sigmoid(), lambda: torch.nn.Sigmoid()),
    (lambda: nn.Softmax(dim=1), lambda: torch.nn.Softmax(dim=1)),
    (lambda: nn.LogSoftmax(dim=-1), lambda: torch.nn.LogSoftmax(dim=-1)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("make", ACTIVATIONS, ids=lambda m: repr(m[0]()))
def test_activations_match_pytorch(make, dtype, device, rng):
    x = (rng.standard_normal((3, 4, 5)) * 3).astype(dtype)
    ours, theirs = make[0](), make[1]()
    compare_with_torch(ours, theirs, [x], device=device)


@pytest.mark.parametrize("make", [m[0] for m in ACTIVATIONS])
def test_activations_gradcheck(make):
    x = t64(np.random.default_rng(1).standard_normal((3, 4)) + 0.05)  # away from ReLU's kink at 0
    assert gradcheck(make(), (x,))


@given(st.floats(-30, 30), st.integers(1, 6))
def test_activation_properties(value, n):
    x = mt.full((2, n), value, dtype="float64")
    assert np.all(nn.ReLU()(x).array >= 0)
    s = nn.Sigmoid()(x).array
    assert np.all((s >= 0) & (s <= 1))
    np.testing.assert_allclose(nn.Softmax(dim=1)(x).array.sum(1), 1.0)
    np.testing.assert_allclose(nn.Softmax(dim=1)(x).array, 1.0 / n)  # equal logits, equal shares
    g = nn.GELU()(x).array
    assert np.all(g >= -0.17) and np.all(np.abs(g) <= np.abs(value) + 1e-12)  # min of x·Φ(x) is ≈ -0.170


def test_activation_bad_input():
    with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh', got 'fast'"):
        nn.GELU("fast")
    with pytest.warns(UserWarning, match="Implicit dimension choice"):
        out = nn.Softmax()(mt.randn(2, 3))  # PyTorch's legacy rule: dim 1 for 2-D
    np.testing.assert_allclose(out.array.sum(1), 1.0, rtol=1e-6)
    with pytest.raises(TypeError, match="floating point"):
        nn.Softmax(dim=0)(mt.tensor([1, 2]))


# ----------------------------------------------------------------------------------------------- init


def test_init_bounds_and_gains_match_pytorch():
    for nl, param in [("relu", None), ("tanh", None), ("leaky_relu", 0.2), ("linear", None), ("sigmoid", None)]:
        assert nn.init.calculate_gain(nl, param) == pytest.approx(torch.nn.init.calculate_gain(nl, param))
    w = mt.empty(64, 32)
    nn.init.xavier_uniform_(w)
    assert np.abs(w.array).max() <= math.sqrt(6 / 96)
    nn.init.kaiming_normal_(w, nonlinearity="relu")
    assert abs(w.array.std() - math.sqrt(2 / 32)) < 0.02
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        nn.init.xavier_uniform_(mt.empty(3))


def test_trunc_normal_stays_in_bounds_and_other_init_errors():
    w = mt.empty(200, 50, dtype="float64")
    nn.init.trunc_normal_(w, std=0.02, a=-0.04, b=0.04)
    assert np.abs(w.array).max() <= 0.04 and abs(w.array.std() - 0.0176) < 0.001  # std of N truncated at ±2σ
    with pytest.raises(ValueError, match="a < b"):
        nn.init.trunc_normal_(w, a=1.0, b=0.0)
    with pytest.raises(ValueError, match="mode must be 'fan_in' or 'fan_out', got 'fan'"):
        nn.init.kaiming_uniform_(w, mode="fan")
    with pytest.raises(TypeError, match="floating point tensor, got dtype int64"):
        nn.init.normal_(mt.zeros(2, dtype="int64"))
    with pytest.raises(ValueError, match="unsupported nonlinearity 'swish'"):
        nn.init.calculate_gain("swish")
    with pytest.raises(ValueError, match="in_features must be a non-negative int, got -1"):
        nn.Linear(-1, 2)

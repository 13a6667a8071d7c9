"""GPT and GPTConfig: parity with the PyTorch twin, causality, sampling, configuration, bad input."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from helpers import torch
from minitorch_ln.autograd import gradcheck
from minitorch_ln.interop.torch_models import torch_gpt, torch_twin
from minitorch_ln.nn.gpt import GPT, GPTConfig, _sample
from parity import module_parity

V, BLOCK = 11, 8


def small_config(**kw):
    return GPTConfig(**{**dict(vocab_size=V, block_size=BLOCK, n_layer=2, n_head=2, d_model=8), **kw})


def _pair(cfg):
    torch.manual_seed(0)
    return GPT(cfg), torch_gpt(cfg)


# ==================================================================================================
# Configuration
# ==================================================================================================


def test_presets_and_dict_round_trip():
    tiny = GPTConfig.preset("tiny", vocab_size=65)
    assert (tiny.d_model, tiny.n_layer, tiny.n_head, tiny.block_size) == (128, 4, 4, 64)
    small = GPTConfig.preset("small", vocab_size=65, dropout=0.1)
    assert (small.d_model, small.n_layer, small.n_head, small.block_size, small.dropout) == (384, 6, 6, 256, 0.1)
    assert small.ff_dim == 4 * 384 and GPTConfig(vocab_size=5, dim_feedforward=7).ff_dim == 7
    assert GPTConfig.from_dict(small.to_dict()) == small
    assert tiny.to_dict()["norm_first"] is True and tiny.to_dict()["activation"] == "gelu"


def test_config_errors():
    with pytest.raises(ValueError, match="unknown preset 'huge'"):
        GPTConfig.preset("huge", vocab_size=5)
    with pytest.raises(ValueError, match="pass vocab_size"):
        GPTConfig.preset("tiny")
    with pytest.raises(ValueError, match="d_model must be divisible by n_head, got d_model=10 and n_head=4"):
        GPTConfig(vocab_size=5, d_model=10, n_head=4)
    with pytest.raises(ValueError, match="vocab_size must be a positive int, got 0"):
        GPTConfig(vocab_size=0)
    with pytest.raises(ValueError, match="activation must be 'relu' or 'gelu', got 'tanh'"):
        GPTConfig(vocab_size=5, activation="tanh")
    with pytest.raises(ValueError, match=r"unknown keys \['n_embd'\]"):
        GPTConfig.from_dict({"vocab_size": 5, "n_embd": 3})


# ==================================================================================================
# Structure and parity with the PyTorch twin
# ==================================================================================================


def test_structure_names_and_parameter_count():
    cfg = small_config()
    ours, theirs = _pair(cfg)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_children()] == ["tok_emb", "pos_emb", "drop", "blocks", "ln_f", "lm_head"]
    D, F_ = 8, 32
    per_block = 3 * D * D + 3 * D + D * D + D + D * F_ + F_ + F_ * D + D + 4 * D
    expected = V * D + BLOCK * D + 2 * per_block + 2 * D + V * D
    assert ours.num_parameters() == expected == theirs.num_parameters()
    assert ours.lm_head.bias is None
    # GPT-2 initialisation: residual projections scaled by 1/sqrt(2 n_layer)
    assert np.std(ours.blocks[0].linear2.weight.array) == pytest.approx(0.02 / 2, rel=0.2)
    assert np.std(ours.tok_emb.weight.array) == pytest.approx(0.02, rel=0.2)
    assert np.all(ours.blocks[1].self_attn.in_proj_bias.array == 0)


def test_tied_weights_appear_once():
    model = GPT(small_config(tie_weights=True))
    assert model.lm_head.weight is model.tok_emb.weight
    names = [n for n, _ in model.named_parameters()]
    assert "tok_emb.weight" in names and "lm_head.weight" not in names
    assert model.num_parameters() == GPT(small_config()).num_parameters() - V * 8


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("cfg_kw", [dict(), dict(norm_first=False), dict(tie_weights=True),
                                    dict(activation="relu", bias=False, dim_feedforward=12)],
                         ids=["pre_ln", "post_ln", "tied", "relu_nobias"])
def test_gpt_matches_torch_twin(rng, dtype, cfg_kw, device):
    cfg = small_config(**cfg_kw)
    ours, theirs = _pair(cfg)
    idx, targets = rng.integers(0, V, (3, 7)), rng.integers(0, V, (3, 7))
    targets[0, 2] = -100  # ignored, as in PyTorch
    module_parity(ours, theirs, [idx, targets], lambda m, i, t: m(i, t), dtype=dtype, device=device)


def test_torch_twin_copies_weights(rng):
    model = GPT(small_config()).double()
    twin = torch_twin(model)
    idx = rng.integers(0, V, (2, 5))
    np.testing.assert_allclose(model(mt.tensor(idx)).array, twin(torch.from_numpy(idx)).detach().numpy(), rtol=1e-10,
                               atol=1e-12)


def test_loss_gradcheck(rng):
    cfg = GPTConfig(vocab_size=5, block_size=4, n_layer=1, n_head=2, d_model=4, dim_feedforward=6)
    model = GPT(cfg).double()
    idx, tg = mt.tensor(rng.integers(0, 5, (2, 4))), mt.tensor(rng.integers(0, 5, (2, 4)))
    assert gradcheck(lambda *ps: model(idx, tg)[1], tuple(model.parameters()), fast_mode=True)


@given(t=st.integers(0, BLOCK - 2), seed=st.integers(0, 2**16))
def test_logits_at_t_ignore_later_tokens(t, seed):
    r = np.random.default_rng(seed)
    mt.manual_seed(seed)
    model = GPT(small_config()).double()
    idx = r.integers(0, V, (2, BLOCK))
    idx2 = idx.copy()
    idx2[:, t + 1 :] = r.integers(0, V, idx2[:, t + 1 :].shape)
    a, b = model(mt.tensor(idx)).array, model(mt.tensor(idx2)).array
    np.testing.assert_allclose(a[:, : t + 1], b[:, : t + 1], rtol=1e-12, atol=1e-12)


def test_overfits_one_batch(rng):
    from minitorch_ln.optim import AdamW

    model = GPT(small_config())
    opt = AdamW(model.parameters(), lr=1e-2)
    idx = rng.integers(0, V, (4, BLOCK + 1))
    x, y = mt.tensor(idx[:, :-1]), mt.tensor(idx[:, 1:])
    losses = []
    for _ in range(40):
        _, loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[0] == pytest.approx(np.log(V), rel=0.1)  # small init: near-uniform predictions
    assert losses[-1] < 0.5 * losses[0]


# ==================================================================================================
# Generation
# ==================================================================================================


def test_generate_shapes_prefix_determinism_and_mode(rng, device):
    model = GPT(small_config(dropout=0.2), device=device)
    model.train()
    idx = mt.tensor(rng.integers(0, V, (2, 5)), device=device)
    mt.manual_seed(3)
    out = model.generate(idx, 10, temperature=0.8, top_k=4)  # 15 > block_size: the context is cropped
    assert out.shape == (2, 15) and out.dtype == np.int64 and not out.requires_grad
    assert out.device == idx.device
    out_np = out.numpy()
    np.testing.assert_array_equal(out_np[:, :5], idx.numpy())
    assert out_np.min() >= 0 and out_np.max() < V
    assert model.training and model.blocks[0].dropout.training
    mt.manual_seed(3)
    np.testing.assert_array_equal(model.generate(idx, 10, temperature=0.8, top_k=4).numpy(), out_np)
    assert model.generate(idx, 0).shape == (2, 5)


def test_generate_greedy_is_argmax_of_forward(rng):
    model = GPT(small_config())
    model.eval()
    idx = rng.integers(0, V, (3, 4))
    out = model.generate(mt.tensor(idx), 1, temperature=0).array
    np.testing.assert_array_equal(out[:, -1], model(mt.tensor(idx)).array[:, -1].argmax(-1))
    np.testing.assert_array_equal(model.generate(mt.tensor(idx), 3, top_k=1).array,
                                  model.generate(mt.tensor(idx), 3, temperature=0).array)


def test_sampler_follows_softmax_and_top_k():
    gen = np.random.default_rng(0)
    logits = np.log(np.array([[0.1, 0.2, 0.3, 0.4, 0.0 + 1e-300]]))
    draws = np.concatenate([_sample(np, gen, np.repeat(logits, 4000, 0), 1.0, None) for _ in range(5)])
    freq = np.bincount(draws, minlength=5) / draws.size
    np.testing.assert_allclose(freq[:4], [0.1, 0.2, 0.3, 0.4], atol=0.015)
    assert freq[4] == 0
    top2 = _sample(np, gen, np.repeat(logits, 4000, 0), 1.0, 2)
    assert set(np.unique(top2)) == {2, 3}
    assert abs((top2 == 3).mean() - 4 / 7) < 0.03
    hot = _sample(np, gen, np.repeat(logits, 4000, 0), 0.25, None)  # p ∝ p_i^4: 256/354 for the largest
    assert abs((hot == 3).mean() - 256 / 354) < 0.03


# ==================================================================================================
# Bad input
# ==================================================================================================


def test_bad_input(rng):
    model = GPT(small_config())
    with pytest.raises(ValueError, match="T=9 is longer than the model's block_size=8"):
        model(mt.tensor(rng.integers(0, V, (2, 9))))
    with pytest.raises(ValueError, match=r"idx must be \(B, T\) token ids, got shape \(5,\)"):
        model(mt.tensor(rng.integers(0, V, 5)))
    with pytest.raises(TypeError, match="integer token ids, got dtype float32"):
        model(mt.zeros(2, 3))
    with pytest.raises(ValueError, match=r"targets of shape \(2, 4\) must match idx of shape \(2, 3\)"):
        model(mt.tensor(rng.integers(0, V, (2, 3))), mt.tensor(rng.integers(0, V, (2, 4))))
    with pytest.raises(IndexError, match="11"):
        model(mt.tensor(np.array([[1, 11]])))
    with pytest.raises(IndexError, match="-1"):
        model(mt.tensor(np.array([[1, -1]])))
    with pytest.raises(ValueError, match="temperature must be >= 0"):
        model.generate(mt.tensor(np.array([[1]])), 2, temperature=-1.0)
    with pytest.raises(ValueError, match="top_k must be a positive int"):
        model.generate(mt.tensor(np.array([[1]])), 2, top_k=0)
    with pytest.raises(TypeError, match="expected a GPTConfig"):
        GPT({"vocab_size": 5})

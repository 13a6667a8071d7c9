"""Transformer layers, stacks and the encoder-decoder model against torch.nn; gradchecks; causality."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from helpers import t64, torch
from minitorch_ln.autograd import gradcheck
from minitorch_ln.nn.transformer import (
    PositionalEncoding, Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
    TransformerEncoderLayer,
)
from parity import module_parity

pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")

D, NH, FF, B, L, S = 8, 2, 16, 3, 5, 6
DTYPES = [np.float64, np.float32]


def _seq(rng, bf, n, b=B, d=D):
    return rng.standard_normal((b, n, d) if bf else (n, b, d))


def _torch_and_ours(torch_cls, ours_cls, *args, **kw):
    torch.manual_seed(0)
    return ours_cls(*args, **kw), torch_cls(*args, **kw)


# ==================================================================================================
# Layers
# ==================================================================================================


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_layer_matches_torch(rng, dtype, norm_first, activation, batch_first, device):
    ours, theirs = _torch_and_ours(torch.nn.TransformerEncoderLayer, TransformerEncoderLayer, D, NH, FF, 0.0,
                                   activation, batch_first=batch_first, norm_first=norm_first)
    x = _seq(rng, batch_first, L)
    kpm = np.zeros((B, L), dtype=bool)
    kpm[0, -2:] = True
    module_parity(ours, theirs, [x, kpm], lambda m, x, kpm: m(x, src_key_padding_mask=kpm), dtype=dtype,
                  device=device)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_decoder_layer_matches_torch(rng, dtype, norm_first, activation, batch_first, device):
    ours, theirs = _torch_and_ours(torch.nn.TransformerDecoderLayer, TransformerDecoderLayer, D, NH, FF, 0.0,
                                   activation, batch_first=batch_first, norm_first=norm_first)
    tgt, mem = _seq(rng, batch_first, L), _seq(rng, batch_first, S)
    causal = np.triu(np.ones((L, L), dtype=bool), 1)
    mem_kpm = np.zeros((B, S), dtype=bool)
    mem_kpm[1, :2] = True
    module_parity(ours, theirs, [tgt, mem, causal, mem_kpm],
                  lambda m, t, mem, c, k: m(t, mem, tgt_mask=c, memory_key_padding_mask=k), dtype=dtype,
                  device=device)


def test_encoder_layer_float_mask_bias_false_and_callable_activation(rng):
    ours, theirs = _torch_and_ours(torch.nn.TransformerEncoderLayer, TransformerEncoderLayer, D, NH, FF, 0.0,
                                   bias=False, batch_first=True)
    assert "linear1.bias" not in ours.state_dict() and "norm1.bias" not in ours.state_dict()
    x = rng.standard_normal((B, L, D))
    am = rng.standard_normal((B * NH, L, L))
    module_parity(ours, theirs, [x, am], lambda m, x, am: m(x, src_mask=am), requires_grad=[True, False])

    ours = TransformerEncoderLayer(D, NH, FF, 0.0, activation=lambda t: mt.tanh(t) * 2.0, batch_first=True)
    torch.manual_seed(0)
    theirs = torch.nn.TransformerEncoderLayer(D, NH, FF, 0.0, activation=lambda t: torch.tanh(t) * 2.0,
                                              batch_first=True)
    module_parity(ours, theirs, [x], lambda m, x: m(x))


def test_encoder_layer_is_causal_without_mask_equals_causal_mask(rng):
    layer = TransformerEncoderLayer(D, NH, FF, 0.0, batch_first=True).double()
    x = mt.tensor(rng.standard_normal((B, L, D)))
    a = layer(x, is_causal=True).array
    b = layer(x, src_mask=Transformer.generate_square_subsequent_mask(L, dtype="float64")).array
    np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)


def test_unbatched_encoder_and_decoder_layers(rng):
    ours, theirs = _torch_and_ours(torch.nn.TransformerEncoderLayer, TransformerEncoderLayer, D, NH, FF, 0.0)
    module_parity(ours, theirs, [rng.standard_normal((L, D))], lambda m, x: m(x))
    ours, theirs = _torch_and_ours(torch.nn.TransformerDecoderLayer, TransformerDecoderLayer, D, NH, FF, 0.0,
                                   norm_first=True)
    module_parity(ours, theirs, [rng.standard_normal((L, D)), rng.standard_normal((S, D))], lambda m, t, s: m(t, s))


def test_layer_gradchecks(rng):
    enc = TransformerEncoderLayer(4, 2, 6, 0.0, "gelu", batch_first=True).double()
    dec = TransformerDecoderLayer(4, 2, 6, 0.0, "relu", batch_first=True, norm_first=True).double()
    x, mem = t64(rng.standard_normal((2, 3, 4))), t64(rng.standard_normal((2, 4, 4)))
    kpm = mt.tensor(np.array([[False, False, True], [False, False, False]]))
    assert gradcheck(lambda x, *ps: enc(x, src_key_padding_mask=kpm), (x,) + tuple(enc.parameters()))
    assert gradcheck(lambda x, mem, *ps: dec(x, mem, tgt_is_causal=True), (x, mem) + tuple(dec.parameters()))


def test_dropout_active_only_in_training(rng):
    layer = TransformerEncoderLayer(D, NH, FF, dropout=0.5, batch_first=True).double()
    x = mt.tensor(rng.standard_normal((B, L, D)))
    layer.eval()
    np.testing.assert_array_equal(layer(x).array, layer(x).array)
    # eval output is the dropout-free output, not just deterministic
    ref = TransformerEncoderLayer(D, NH, FF, dropout=0.0, batch_first=True).double()
    ref.load_state_dict(layer.state_dict())
    np.testing.assert_allclose(layer(x).array, ref(x).array, rtol=1e-12, atol=1e-12)
    layer.train()
    assert not np.allclose(layer(x).array, layer(x).array)


# ==================================================================================================
# Stacks and the full model
# ==================================================================================================


@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
def test_encoder_and_decoder_stacks_match_torch(rng, norm_first):
    torch.manual_seed(0)
    enc_t = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(D, NH, FF, 0.0, norm_first=norm_first),
                                        2, norm=torch.nn.LayerNorm(D), enable_nested_tensor=False)
    from minitorch_ln.nn.normalization import LayerNorm

    enc = TransformerEncoder(TransformerEncoderLayer(D, NH, FF, 0.0, norm_first=norm_first), 2, norm=LayerNorm(D))
    assert list(enc.state_dict()) == list(enc_t.state_dict())
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight  # deep copies
    kpm = np.zeros((B, L), dtype=bool)
    kpm[2, 0] = True
    module_parity(enc, enc_t, [_seq(rng, False, L), kpm], lambda m, x, k: m(x, src_key_padding_mask=k))

    torch.manual_seed(0)
    dec_t = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(D, NH, FF, 0.0, norm_first=norm_first), 2)
    dec = TransformerDecoder(TransformerDecoderLayer(D, NH, FF, 0.0, norm_first=norm_first), 2)
    assert list(dec.state_dict()) == list(dec_t.state_dict())
    causal = Transformer.generate_square_subsequent_mask(L, dtype="float64").numpy()
    module_parity(dec, dec_t, [_seq(rng, False, L), _seq(rng, False, S), causal],
                  lambda m, t, s, c: m(t, s, tgt_mask=c), requires_grad=[True, True, False])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
def test_transformer_matches_torch(rng, dtype, batch_first, norm_first):
    kw = dict(d_model=D, nhead=NH, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=FF, dropout=0.0,
              activation="gelu", batch_first=batch_first, norm_first=norm_first)
    ours, theirs = _torch_and_ours(torch.nn.Transformer, Transformer, **kw)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    src, tgt = _seq(rng, batch_first, S), _seq(rng, batch_first, L)
    tgt_mask = np.triu(np.ones((L, L), dtype=bool), 1)
    src_kpm = np.zeros((B, S), dtype=bool)
    src_kpm[0, -1] = True
    module_parity(ours, theirs, [src, tgt, tgt_mask, src_kpm],
                  lambda m, s, t, tm, k: m(s, t, tgt_mask=tm, src_key_padding_mask=k, memory_key_padding_mask=k),
                  dtype=dtype)


def test_transformer_init_and_square_subsequent_mask():
    m = Transformer(d_model=16, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=32)
    w = m.encoder.layers[0].linear1.weight.array  # xavier_uniform over (32, 16)
    bound = np.sqrt(6 / (16 + 32))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert np.all(m.decoder.norm.weight.array == 1)
    mask = Transformer.generate_square_subsequent_mask(4)
    ref = torch.nn.Transformer.generate_square_subsequent_mask(4).numpy()
    assert mask.dtype == np.float32
    np.testing.assert_array_equal(mask.numpy(), ref)


@given(t=st.integers(0, 4), seed=st.integers(0, 2**16), norm_first=st.booleans())
def test_causal_encoder_layer_ignores_later_positions(t, seed, norm_first):
    r = np.random.default_rng(seed)
    mt.manual_seed(seed)
    layer = TransformerEncoderLayer(6, 2, 12, 0.0, "gelu", batch_first=True, norm_first=norm_first).double()
    x = r.standard_normal((2, 5, 6))
    x2 = x.copy()
    x2[:, t + 1 :] = r.standard_normal(x2[:, t + 1 :].shape) * 3
    a, b = layer(mt.tensor(x), is_causal=True).array, layer(mt.tensor(x2), is_causal=True).array
    np.testing.assert_allclose(a[:, : t + 1], b[:, : t + 1], rtol=1e-12, atol=1e-12)


# ==================================================================================================
# Positional encoding
# ==================================================================================================


def test_positional_encoding_values_and_layouts(rng):
    pe = PositionalEncoding(6, dropout=0.0, max_len=10).double()
    table = pe.pe.array
    pos, i = 3, 1  # PE[pos, 2i] = sin(pos / 10000^(2i/D)), PE[pos, 2i+1] = cos(...)
    assert table[pos, 2 * i] == pytest.approx(np.sin(pos / 10000 ** (2 * i / 6)), rel=1e-6)
    assert table[pos, 2 * i + 1] == pytest.approx(np.cos(pos / 10000 ** (2 * i / 6)), rel=1e-6)
    assert "pe" not in pe.state_dict()
    x = rng.standard_normal((4, 2, 6))
    np.testing.assert_allclose(pe(mt.tensor(x)).array, x + table[:4, None], rtol=1e-12)
    pe_bf = PositionalEncoding(6, dropout=0.0, max_len=10, batch_first=True).double()
    np.testing.assert_allclose(pe_bf(mt.tensor(x)).array, x + table[None, :2], rtol=1e-12)
    odd = PositionalEncoding(5, dropout=0.0, max_len=4)  # an odd width keeps its last sine column
    assert odd.pe.shape == (4, 5) and np.all(np.isfinite(odd.pe.array))
    with pytest.raises(ValueError, match="sequence length 11 exceeds max_len 10"):
        pe(mt.zeros(11, 1, 6, dtype="float64"))


# ==================================================================================================
# Bad input
# ==================================================================================================


def test_bad_input(rng):
    with pytest.raises(ValueError, match="embed_dim must be divisible by num_heads, got embed_dim=10 and num_heads=4"):
        TransformerEncoderLayer(10, 4)
    with pytest.raises(ValueError, match="activation should be 'relu', 'gelu' or a callable, got 'swish'"):
        TransformerDecoderLayer(8, 2, activation="swish")
    layer = TransformerEncoderLayer(D, NH, FF, 0.0, batch_first=True)
    x = mt.tensor(rng.standard_normal((B, L, D)).astype(np.float32))
    with pytest.raises(ValueError, match=r"d_model = 8, got shape \(3, 5, 7\)"):
        layer(mt.zeros(B, L, 7))
    with pytest.raises(ValueError, match=r"attn_mask must have shape \(L, S\) = \(5, 5\).*got \(4, 4\)"):
        layer(x, src_mask=mt.zeros(4, 4))
    with pytest.raises(ValueError, match=r"key_padding_mask must have shape \(B, S\) = \(3, 5\), got \(3, 4\)"):
        layer(x, src_key_padding_mask=mt.zeros(3, 4, dtype=bool))
    model = Transformer(D, NH, 1, 1, FF, 0.0, batch_first=True)
    with pytest.raises(ValueError, match="different batch sizes 3 and 2"):
        model(x, mt.zeros(2, L, D))
    with pytest.raises(ValueError, match="sz must be a non-negative int"):
        Transformer.generate_square_subsequent_mask(-1)

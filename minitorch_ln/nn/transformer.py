"""Transformer layers with PyTorch's arguments, parameter names and Post-LN / Pre-LN switch.

A block adds two (encoder) or three (decoder) sublayers to a residual stream ``x``:

    Post-LN (``norm_first=False``, Vaswani et al. 2017):  x = LayerNorm(x + Sublayer(x))
    Pre-LN  (``norm_first=True``,  Xiong et al. 2020):    x = x + Sublayer(LayerNorm(x))

The sublayers are self-attention, cross-attention (decoder) and the feed-forward network
``linear2(dropout(activation(linear1(x))))``; each is followed by dropout. Parameter names match
``torch.nn.Transformer*`` (``self_attn``, ``multihead_attn``, ``linear1``, ``linear2``,
``norm1``..``norm3``, ``layers.N``, ``encoder.norm``/``decoder.norm``), so a PyTorch
``state_dict()`` loads as it is.
"""

from __future__ import annotations

import copy
import math

import numpy as np

from .. import backend, ops
from ..tensor import Tensor
from . import functional as F
from . import init
from .activation import Dropout
from .attention import MultiheadAttention
from .container import ModuleList
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


def _activation(activation):
    if callable(activation):
        return activation
    if activation in _ACTIVATIONS:
        return _ACTIVATIONS[activation]
    raise ValueError(f"activation should be 'relu', 'gelu' or a callable, got {activation!r}")


def _check_width(x, d_model: int, what: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{what} must be a Tensor, got {type(x).__name__}")
    if x.ndim not in (2, 3) or x.shape[-1] != d_model:
        raise ValueError(
            f"{what} must be (L, B, d_model), (B, L, d_model) or unbatched (L, d_model) with d_model = {d_model}, "
            f"got shape {tuple(x.shape)}"
        )


def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
    """The additive causal mask ``(sz, sz)``: 0 on and below the diagonal, -inf above (float32 default)."""
    if not isinstance(sz, (int, np.integer)) or sz < 0:
        raise ValueError(f"generate_square_subsequent_mask: sz must be a non-negative int, got {sz!r}")
    dt = backend.as_dtype(dtype) if dtype is not None else backend.default_float_dtype()
    mask = np.triu(np.full((sz, sz), -np.inf, dtype=dt), k=1)  # (sz, sz)
    return Tensor(mask, device=device)


class TransformerEncoderLayer(Module):
    """Self-attention then feed-forward, each in a residual branch (Post-LN or Pre-LN).

    Args:
        d_model: ``D``, the width of the residual stream; divisible by ``nhead``.
        nhead: attention heads.
        dim_feedforward: hidden width of the feed-forward network.
        dropout: dropout after attention weights, inside and after the feed-forward network.
        activation: ``"relu"``, ``"gelu"`` (exact, erf) or a callable.
        layer_norm_eps: LayerNorm's ``eps``.
        batch_first: ``(B, L, D)`` instead of ``(L, B, D)``.
        norm_first: Pre-LN when True, Post-LN when False.
        bias: biases in the linear layers, attention and LayerNorms.

    Raises:
        ValueError: ``d_model`` not divisible by ``nhead``, an unknown activation.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation="relu", layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        f = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **f)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **f)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **f)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **f)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **f)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)
        self.d_model = d_model

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False):
        """``src`` ``(L, B, D)`` (``(B, L, D)`` if batch_first, or ``(L, D)``) → same shape.

        ``src_mask`` ``(L, L)`` or ``(B·nhead, L, L)`` and ``src_key_padding_mask`` ``(B, L)`` follow
        :class:`MultiheadAttention` (bool True = blocked, or additive float). ``is_causal`` without a
        mask applies the cached causal mask.
        """
        _check_width(src, self.d_model, "TransformerEncoderLayer: src")
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """Self-attention, cross-attention to ``memory``, then feed-forward (Post-LN or Pre-LN).

    Arguments as :class:`TransformerEncoderLayer`; adds ``multihead_attn``, ``norm3``, ``dropout3``.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation="relu", layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        f = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **f)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                                 **f)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **f)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **f)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **f)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **f)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **f)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)
        self.d_model = d_model

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool = False, memory_is_causal: bool = False):
        """``tgt`` ``(T, B, D)`` attending to ``memory`` ``(S, B, D)`` (batch first if set) → ``tgt``'s shape.

        ``tgt_mask`` ``(T, T)``, ``memory_mask`` ``(T, S)`` (or ``(B·nhead, ...)``),
        ``tgt_key_padding_mask`` ``(B, T)``, ``memory_key_padding_mask`` ``(B, S)``: see
        :class:`MultiheadAttention`.
        """
        _check_width(tgt, self.d_model, "TransformerDecoderLayer: tgt")
        _check_width(memory, self.d_model, "TransformerDecoderLayer: memory")
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False, is_causal=is_causal)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


def _clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


class TransformerEncoder(Module):
    """``num_layers`` deep copies of ``encoder_layer`` (``layers.0`` ...), then ``norm`` if given.

    ``enable_nested_tensor`` and ``mask_check`` are accepted for PyTorch parity and have no effect
    (there are no nested tensors here).
    """

    def __init__(self, encoder_layer, num_layers: int, norm=None, enable_nested_tensor: bool = True,
                 mask_check: bool = True):
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        """``src`` as the layers take it → same shape; masks as :meth:`TransformerEncoderLayer.forward`."""
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
        return self.norm(x) if self.norm is not None else x


class TransformerDecoder(Module):
    """``num_layers`` deep copies of ``decoder_layer`` (``layers.0`` ...), then ``norm`` if given."""

    def __init__(self, decoder_layer, num_layers: int, norm=None):
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal: bool = False):
        """``tgt`` and ``memory`` as :meth:`TransformerDecoderLayer.forward` → ``tgt``'s shape."""
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=bool(tgt_is_causal),
                      memory_is_causal=memory_is_causal)
        return self.norm(x) if self.norm is not None else x


class Transformer(Module):
    """The encoder-decoder Transformer (Vaswani et al., 2017) with PyTorch's arguments and names.

    ``encoder`` = :class:`TransformerEncoder` of ``num_encoder_layers`` layers plus a final
    LayerNorm (``encoder.norm``); ``decoder`` likewise (``decoder.norm``). Every parameter with more
    than one dimension is re-initialised Xavier-uniform, as PyTorch does.

    Raises:
        ValueError: as the layers; ``src``/``tgt`` with different batch sizes or widths.
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation="relu", custom_encoder=None, custom_decoder=None, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        f = dict(device=device, dtype=dtype)
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                      bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(*layer_args, **f), num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **f))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(*layer_args, **f), num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **f))
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal: bool = False):
        """``src`` ``(S, B, D)`` and ``tgt`` ``(T, B, D)`` (batch first if set) → ``(T, B, D)``."""
        _check_width(src, self.d_model, "Transformer: src")
        _check_width(tgt, self.d_model, "Transformer: tgt")
        if src.ndim == 3:
            bdim = 0 if self.batch_first else 1
            if src.shape[bdim] != tgt.shape[bdim]:
                raise ValueError(
                    f"Transformer: src of shape {tuple(src.shape)} and tgt of shape {tuple(tgt.shape)} have different "
                    f"batch sizes {src.shape[bdim]} and {tgt.shape[bdim]}"
                )
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """The additive causal mask ``(sz, sz)``: 0 on and below the diagonal, -inf above."""
        return generate_square_subsequent_mask(sz, device=device, dtype=dtype)


class PositionalEncoding(Module):
    """Adds the sinusoidal position code of Vaswani et al. (2017), §3.5, then dropout.

    ``PE[pos, 2i] = sin(pos / 10000^(2i/D))``, ``PE[pos, 2i+1] = cos(pos / 10000^(2i/D))``.
    Input ``(L, B, D)`` (``(B, L, D)`` if ``batch_first``) → same shape. The table ``pe``
    ``(max_len, D)`` is a non-persistent buffer (recomputed, not saved in ``state_dict``).

    Raises:
        ValueError: a sequence longer than ``max_len`` or a width other than ``d_model``.
    """

    def __init__(self, d_model: int, dropout: float = 0.1, max_len: int = 5000, batch_first: bool = False,
                 device=None, dtype=None):
        super().__init__()
        dt = backend.as_dtype(dtype) if dtype is not None else backend.default_float_dtype()
        position = np.arange(max_len, dtype=np.float64)[:, None]  # (max_len, 1)
        div_term = np.exp(np.arange(0, d_model, 2, dtype=np.float64) * (-math.log(10000.0) / d_model))  # (ceil(D/2),)
        pe = np.zeros((max_len, d_model))  # (max_len, D)
        pe[:, 0::2] = np.sin(position * div_term)
        pe[:, 1::2] = np.cos(position * div_term[: d_model // 2])
        self.register_buffer("pe", Tensor(pe.astype(dt), device=device), persistent=False)
        self.dropout = Dropout(dropout)
        self.d_model, self.max_len, self.batch_first = d_model, max_len, batch_first

    def forward(self, x):
        if x.ndim != 3 or x.shape[-1] != self.d_model:
            layout = "(B, L, D)" if self.batch_first else "(L, B, D)"
            raise ValueError(f"PositionalEncoding: expected {layout} with D = {self.d_model}, got shape {tuple(x.shape)}")
        L = x.shape[1] if self.batch_first else x.shape[0]
        if L > self.max_len:
            raise ValueError(f"PositionalEncoding: sequence length {L} exceeds max_len {self.max_len}")
        pe = Tensor._from_op(self.pe.array[:L].astype(x.dtype, copy=False))  # (L, D)
        pe = pe if self.batch_first else ops.unsqueeze(pe, 1)  # (L, D) or (L, 1, D)
        return self.dropout(x + pe)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, max_len={self.max_len}, batch_first={self.batch_first}"

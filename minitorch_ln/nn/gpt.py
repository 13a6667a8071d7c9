"""A decoder-only Transformer language model (GPT; Radford et al. 2018, 2019), nanoGPT-sized.

    idx (B, T) → tok_emb(idx) + pos_emb(0..T-1) → dropout → n_layer causal blocks → ln_f → lm_head
    → logits (B, T, V)

Each block is a :class:`TransformerEncoderLayer` run with ``is_causal=True`` (Pre-LN by default,
as GPT-2; Post-LN with ``norm_first=False``). Weights start as GPT-2's: N(0, 0.02) for linear and
embedding weights, zero biases, and the two projections that write into the residual stream
(``self_attn.out_proj``, ``linear2``) scaled down by ``1/sqrt(2·n_layer)`` (Radford et al. 2019, §2.3).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass

import numpy as np

from .. import backend, random_torch
from ..autograd.grad_mode import no_grad
from ..backend import get_array_module
from ..ops.creation import arange
from ..tensor import Tensor, tensor
from . import functional as F
from . import init
from .activation import Dropout
from .container import ModuleList
from .linear import Linear
from .module import Module
from .normalization import LayerNorm
from .sparse import Embedding
from .transformer import TransformerEncoderLayer

PRESETS = {
    "tiny": dict(d_model=128, n_layer=4, n_head=4, block_size=64),
    "small": dict(d_model=384, n_layer=6, n_head=6, block_size=256),
}


@dataclass
class GPTConfig:
    """Hyper-parameters of :class:`GPT`; ``dim_feedforward=None`` means ``4 · d_model``.

    Raises:
        ValueError: a non-positive size, ``d_model`` not divisible by ``n_head``, ``dropout`` outside
            [0, 1), an activation other than ``"relu"``/``"gelu"``.
    """

    vocab_size: int
    block_size: int = 64
    n_layer: int = 4
    n_head: int = 4
    d_model: int = 128
    dim_feedforward: int | None = None
    dropout: float = 0.0
    bias: bool = True
    norm_first: bool = True
    tie_weights: bool = False
    activation: str = "gelu"
    layer_norm_eps: float = 1e-5

    def __post_init__(self):
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "d_model"):
            v = getattr(self, name)
            if not isinstance(v, numbers.Integral) or isinstance(v, bool) or v <= 0:
                raise ValueError(f"GPTConfig: {name} must be a positive int, got {v!r}")
        if self.dim_feedforward is not None and (not isinstance(self.dim_feedforward, numbers.Integral)
                                                 or self.dim_feedforward <= 0):
            raise ValueError(f"GPTConfig: dim_feedforward must be a positive int or None, got {self.dim_feedforward!r}")
        if self.d_model % self.n_head:
            raise ValueError(
                f"GPTConfig: d_model must be divisible by n_head, got d_model={self.d_model} and n_head={self.n_head}"
            )
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"GPTConfig: dropout must be in [0, 1), got {self.dropout}")
        if self.activation not in ("relu", "gelu"):
            raise ValueError(f"GPTConfig: activation must be 'relu' or 'gelu', got {self.activation!r}")

    @property
    def ff_dim(self) -> int:
        """The feed-forward width actually used."""
        return self.dim_feedforward if self.dim_feedforward is not None else 4 * self.d_model

    @classmethod
    def preset(cls, name: str, **overrides) -> "GPTConfig":
        """A named size (``"tiny"``: D 128, 4 layers, 4 heads, context 64; ``"small"``: D 384, 6 layers,
        6 heads, context 256) with ``overrides`` applied; ``vocab_size`` must be among them.

        Raises:
            ValueError: an unknown preset name or a missing ``vocab_size``.
        """
        if name not in PRESETS:
            raise ValueError(f"GPTConfig.preset: unknown preset {name!r}; expected one of {sorted(PRESETS)}")
        if "vocab_size" not in overrides:
            raise ValueError(f"GPTConfig.preset({name!r}): pass vocab_size=<size of your tokenizer's vocabulary>")
        return cls(**{**PRESETS[name], **overrides})

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "GPTConfig":
        """The inverse of :meth:`to_dict`. Raises ValueError naming unknown keys."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"GPTConfig.from_dict: unknown keys {unknown}; expected a subset of {sorted(known)}")
        return cls(**d)


class GPT(Module):
    """The language model; submodules ``tok_emb``, ``pos_emb``, ``drop``, ``blocks``, ``ln_f``, ``lm_head``.

    With ``config.tie_weights`` the head shares ``tok_emb.weight`` (Press & Wolf, 2017): one
    Parameter, listed once by ``parameters()``.
    """

    def __init__(self, config: GPTConfig, device=None, dtype=None):
        super().__init__()
        if not isinstance(config, GPTConfig):
            raise TypeError(f"GPT: expected a GPTConfig, got {type(config).__name__}")
        self.config = config
        c, f = config, dict(device=device, dtype=dtype)
        self.tok_emb = Embedding(c.vocab_size, c.d_model, **f)
        self.pos_emb = Embedding(c.block_size, c.d_model, **f)
        self.drop = Dropout(c.dropout)
        self.blocks = ModuleList([
            TransformerEncoderLayer(c.d_model, c.n_head, c.ff_dim, c.dropout, c.activation, c.layer_norm_eps,
                                    batch_first=True, norm_first=c.norm_first, bias=c.bias, **f)
            for _ in range(c.n_layer)
        ])
        self.ln_f = LayerNorm(c.d_model, eps=c.layer_norm_eps, bias=c.bias, **f)
        self.lm_head = Linear(c.d_model, c.vocab_size, bias=False, **f)
        if c.tie_weights:
            self.lm_head.weight = self.tok_emb.weight
        self._init_weights()

    def _init_weights(self) -> None:
        std, resid_std = 0.02, 0.02 / math.sqrt(2 * self.config.n_layer)
        for name, p in self.named_parameters():
            if name.endswith("out_proj.weight") or name.endswith("linear2.weight"):
                init.normal_(p, 0.0, resid_std)
            elif name.startswith("ln_f") or ".norm" in name:
                continue  # LayerNorm keeps weight 1, bias 0
            elif p.ndim >= 2:
                init.normal_(p, 0.0, std)
            else:
                init.zeros_(p)

    def num_parameters(self) -> int:
        """The number of learnable scalars (a tied weight counted once)."""
        return sum(p.numel() for p in self.parameters())

    # ------------------------------------------------------------------ forward
    def _as_ids(self, idx, name: str) -> Tensor:
        if not isinstance(idx, Tensor):
            idx = tensor(idx, device=self.tok_emb.weight.device)
        if idx.ndim != 2:
            raise ValueError(f"GPT: {name} must be (B, T) token ids, got shape {tuple(idx.shape)}")
        if idx.dtype.kind not in "iu":
            raise TypeError(f"GPT: {name} must hold integer token ids, got dtype {idx.dtype}")
        return idx

    def _hidden(self, idx: Tensor) -> Tensor:
        """The final hidden states ``(B, T, D)`` before ``ln_f``."""
        B, T = idx.shape
        if T > self.config.block_size:
            raise ValueError(
                f"GPT: sequence length T={T} is longer than the model's block_size={self.config.block_size}; "
                "crop the context to the last block_size tokens"
            )
        pos = arange(T, device=idx.device)  # (T,)
        x = self.drop(self.tok_emb(idx) + self.pos_emb(pos))  # (B, T, D)
        for block in self.blocks:
            x = block(x, is_causal=True)  # (B, T, D)
        return x

    def forward(self, idx, targets=None):
        """Logits ``(B, T, V)`` for token ids ``idx`` ``(B, T)`` (int64); with ``targets`` ``(B, T)``
        also the mean cross-entropy loss (targets equal to -100 are ignored, as in PyTorch).

        Raises:
            ValueError: ``T > block_size`` (naming both), ``idx``/``targets`` not ``(B, T)``.
            TypeError: non-integer ids.
            IndexError: an id outside ``[0, vocab_size)`` (from the embedding).
        """
        idx = self._as_ids(idx, "idx")
        logits = self.lm_head(self.ln_f(self._hidden(idx)))  # (B, T, V)
        if targets is None:
            return logits
        targets = self._as_ids(targets, "targets")
        if targets.shape != idx.shape:
            raise ValueError(f"GPT: targets of shape {tuple(targets.shape)} must match idx of shape {tuple(idx.shape)}")
        B, T, V = logits.shape
        loss = F.cross_entropy(logits.reshape(B * T, V), targets.reshape(B * T))
        return logits, loss

    # ------------------------------------------------------------------ sampling
    def generate(self, idx, max_new_tokens: int, temperature: float = 1.0, top_k: int | None = None) -> Tensor:
        """Append ``max_new_tokens`` sampled tokens to ``idx`` ``(B, T)`` → ``(B, T + max_new_tokens)`` int64.

        Runs under ``no_grad`` in eval mode (the previous mode is restored), feeding at most the last
        ``block_size`` tokens. Each token is drawn from ``softmax(logits / temperature)`` restricted
        to the ``top_k`` largest logits, with the device's seeded generator (so
        :func:`minitorch_ln.manual_seed` makes it reproducible); ``temperature=0`` takes the argmax.

        Raises:
            ValueError: a negative ``max_new_tokens`` or ``temperature``, ``top_k`` < 1.
        """
        if not isinstance(max_new_tokens, numbers.Integral) or max_new_tokens < 0:
            raise ValueError(f"GPT.generate: max_new_tokens must be a non-negative int, got {max_new_tokens!r}")
        if temperature < 0:
            raise ValueError(f"GPT.generate: temperature must be >= 0, got {temperature}")
        if top_k is not None and (not isinstance(top_k, numbers.Integral) or top_k < 1):
            raise ValueError(f"GPT.generate: top_k must be a positive int or None, got {top_k!r}")
        idx = self._as_ids(idx, "idx")
        out = idx.array.astype(np.int64)  # (B, T)
        xp = get_array_module(out)
        gen = backend.generator(idx.device)
        was_training = self.training
        self.eval()
        try:
            with no_grad():
                for _ in range(max_new_tokens):
                    ctx = Tensor._from_op(out[:, -self.config.block_size :])  # (B, T')
                    h = self._hidden(ctx)[:, -1:]  # (B, 1, D): only the last position is needed
                    logits = self.lm_head(self.ln_f(h)).array[:, 0].astype(np.float64)  # (B, V)
                    nxt = _sample(xp, gen, logits, temperature, top_k)  # (B,)
                    out = xp.concatenate([out, nxt[:, None]], axis=1)
        finally:
            self.train(was_training)
        return Tensor._from_op(out)


def _sample(xp, gen, logits, temperature, top_k):
    """One token per row of ``logits`` ``(B, V)`` (float64 array) → ``(B,)`` int64."""
    if temperature == 0:
        return logits.argmax(axis=-1).astype(np.int64)
    logits = logits / temperature
    V = logits.shape[-1]
    if top_k is not None and top_k < V:
        kth = xp.partition(logits, V - top_k, axis=-1)[:, V - top_k : V - top_k + 1]  # (B, 1)
        logits = xp.where(logits < kth, -np.inf, logits)
    probs = xp.exp(logits - logits.max(axis=-1, keepdims=True))  # (B, V)
    cdf = xp.cumsum(probs, axis=-1)  # (B, V), unnormalised
    u = random_torch.uniform(gen, (logits.shape[0], 1), np.float64) * cdf[:, -1:]  # (B, 1), on [0, total)
    # the first index whose cdf exceeds u; zero-probability tokens (cdf flat) are never chosen
    return (cdf <= u).sum(axis=-1).astype(np.int64)

"""PyTorch twins of minitorch_ln's models, built from ``torch.nn`` modules with identical names.

``torch_gpt(config)`` is :class:`minitorch_ln.nn.gpt.GPT` written in PyTorch: the same submodule
names and parameter layouts (so state dicts move between the two as they are), the same forward
(token + learned position embeddings, causal ``nn.TransformerEncoderLayer`` blocks, final
LayerNorm, head) and the same initialisation scheme. Tests and benchmarks compare against it.

PyTorch is imported on first use: importing this module does not need it.
"""

from __future__ import annotations

import math

from .torch import _torch

_CLASSES = {}


def _torch_gpt_class():
    """Define the PyTorch GPT class once (it needs ``torch.nn`` at class-creation time)."""
    if "GPT" in _CLASSES:
        return _CLASSES["GPT"]
    torch = _torch()
    nn, F = torch.nn, torch.nn.functional

    class TorchGPT(nn.Module):
        """``minitorch_ln.nn.gpt.GPT`` in PyTorch: ``tok_emb``, ``pos_emb``, ``drop``, ``blocks``, ``ln_f``, ``lm_head``."""

        def __init__(self, config, device=None, dtype=None):
            super().__init__()
            c, f = config, dict(device=device, dtype=dtype)
            self.config = c
            self.tok_emb = nn.Embedding(c.vocab_size, c.d_model, **f)
            self.pos_emb = nn.Embedding(c.block_size, c.d_model, **f)
            self.drop = nn.Dropout(c.dropout)
            self.blocks = nn.ModuleList([
                nn.TransformerEncoderLayer(c.d_model, c.n_head, c.ff_dim, c.dropout, c.activation, c.layer_norm_eps,
                                           batch_first=True, norm_first=c.norm_first, bias=c.bias, **f)
                for _ in range(c.n_layer)
            ])
            self.ln_f = nn.LayerNorm(c.d_model, eps=c.layer_norm_eps, bias=c.bias, **f)
            self.lm_head = nn.Linear(c.d_model, c.vocab_size, bias=False, **f)
            if c.tie_weights:
                self.lm_head.weight = self.tok_emb.weight
            std, resid_std = 0.02, 0.02 / math.sqrt(2 * c.n_layer)
            with torch.no_grad():
                for name, p in self.named_parameters():
                    if name.endswith("out_proj.weight") or name.endswith("linear2.weight"):
                        nn.init.normal_(p, 0.0, resid_std)
                    elif name.startswith("ln_f") or ".norm" in name:
                        continue
                    elif p.ndim >= 2:
                        nn.init.normal_(p, 0.0, std)
                    else:
                        nn.init.zeros_(p)
            self._masks = {}

        def num_parameters(self) -> int:
            return sum(p.numel() for p in self.parameters())

        def _causal(self, T, ref):
            key = (T, ref.device, ref.dtype)
            if key not in self._masks:
                self._masks[key] = nn.Transformer.generate_square_subsequent_mask(T, device=ref.device, dtype=ref.dtype)
            return self._masks[key]

        def forward(self, idx, targets=None):
            B, T = idx.shape
            if T > self.config.block_size:
                raise ValueError(f"sequence length T={T} is longer than block_size={self.config.block_size}")
            pos = torch.arange(T, device=idx.device)
            x = self.drop(self.tok_emb(idx) + self.pos_emb(pos))  # (B, T, D)
            mask = self._causal(T, x)
            for block in self.blocks:
                x = block(x, src_mask=mask, is_causal=True)
            logits = self.lm_head(self.ln_f(x))  # (B, T, V)
            if targets is None:
                return logits
            return logits, F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(B * T))

    _CLASSES["GPT"] = TorchGPT
    return TorchGPT


def torch_gpt(config, device=None, dtype=None):
    """A PyTorch GPT for ``config`` (a :class:`~minitorch_ln.nn.gpt.GPTConfig`), freshly initialised."""
    return _torch_gpt_class()(config, device=device, dtype=dtype)


def torch_twin(model, device=None):
    """The PyTorch twin of a minitorch_ln ``GPT``, holding a copy of its weights (same dtype)."""
    torch = _torch()
    from .torch import state_dict_to_torch  # noqa: PLC0415

    dtype = getattr(torch, str(model.tok_emb.weight.dtype))
    twin = torch_gpt(model.config, device=device, dtype=dtype)
    twin.load_state_dict(state_dict_to_torch(model.state_dict()))
    twin.train(model.training)
    return twin

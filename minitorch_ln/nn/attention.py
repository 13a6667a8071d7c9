"""``MultiheadAttention`` (Vaswani et al., 2017, §3.2.2) with PyTorch's parameters, arguments and masks.

The fused core (scaled dot-product attention, head splitting and merging, masks) is in
``ops/attention.py``.
"""

from __future__ import annotations

import math

from .. import ops
from ..backend import get_array_module
from ..ops.attention import MergeHeads, ScaledDotProductAttention, SplitHeads, _additive, _dropout_keep, causal_mask
from ..ops.creation import empty
from ..tensor import Tensor
from . import functional as F
from . import init
from .linear import Linear
from .module import Module
from .parameter import Parameter


# ==================================================================================================
# MultiheadAttention
# ==================================================================================================


class NonDynamicallyQuantizableLinear(Linear):
    """PyTorch's name for ``MultiheadAttention.out_proj``: a plain :class:`Linear`."""


class MultiheadAttention(Module):
    """Multi-head attention with PyTorch's parameters, arguments and mask conventions.

    ``MultiHead(Q, K, V) = Concat(head_1..head_H) W_O``, ``head_i = Attention(Q W_Qi, K W_Ki, V W_Vi)``
    (Vaswani et al., 2017, §3.2.2).

    Args:
        embed_dim: ``E``, the model width; must be divisible by ``num_heads``.
        num_heads: ``H``; each head has width ``E / H``.
        dropout: dropout on the attention weights (training mode only).
        bias: learn ``in_proj_bias`` ``(3E,)`` and ``out_proj.bias`` ``(E,)``.
        add_bias_kv: learn ``bias_k``, ``bias_v`` ``(1, 1, E)`` appended to the keys and values.
        add_zero_attn: append a zero key and value (after the biases).
        kdim, vdim: feature sizes of key and value (default ``E``); when they differ from ``E`` the
            projections are ``q_proj_weight`` ``(E, E)``, ``k_proj_weight`` ``(E, kdim)``,
            ``v_proj_weight`` ``(E, vdim)`` instead of the packed ``in_proj_weight`` ``(3E, E)``.
        batch_first: inputs and output are ``(B, L, E)`` instead of ``(L, B, E)``.

    Parameters are initialised as PyTorch does: Xavier-uniform in-projections, zero biases,
    ``out_proj.weight`` as a Linear's, ``bias_k``/``bias_v`` Xavier-normal.

    Raises:
        ValueError: ``embed_dim`` not divisible by ``num_heads`` (naming both).
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim=None, vdim=None,
                 batch_first: bool = False, device=None, dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be positive, got embed_dim={embed_dim}, num_heads={num_heads}")
        if embed_dim % num_heads:
            raise ValueError(
                f"embed_dim must be divisible by num_heads, got embed_dim={embed_dim} and num_heads={num_heads}"
            )
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        f = dict(device=device, dtype=dtype)
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, **f))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.register_parameter("in_proj_weight", None)
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, **f))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, **f))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, **f))
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **f))
        else:
            self.register_parameter("in_proj_bias", None)
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, **f))
            self.bias_v = Parameter(empty(1, 1, embed_dim, **f))
        else:
            self.register_parameter("bias_k", None)
            self.register_parameter("bias_v", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **f)
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}, batch_first={self.batch_first}"

    # ------------------------------------------------------------------ projections
    def _weights(self):
        """The query, key and value projection weights and biases (slices of the packed ones)."""
        E = self.embed_dim
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            ws = (w[:E], w[E : 2 * E], w[2 * E :])
        else:
            ws = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        b = self.in_proj_bias
        bs = (None, None, None) if b is None else (b[:E], b[E : 2 * E], b[2 * E :])
        return ws, bs

    def _project(self, query, key, value):
        """``q (B, H, L, Dh)``, ``k (B, H, S, Dh)``, ``v (B, H, S, Dh)`` from ``(B, L|S, E)`` inputs."""
        H = self.num_heads
        if self._qkv_same_embed_dim and query is key and key is value:
            # self-attention: one matmul for all three projections, one split into heads
            qkv = F.linear(query, self.in_proj_weight, self.in_proj_bias)  # (B, L, 3E)
            return SplitHeads.apply(qkv, 3, H)
        (wq, wk, wv), (bq, bk, bv) = self._weights()
        q = SplitHeads.apply(F.linear(query, wq, bq), 1, H)  # (B, H, L, Dh)
        if self._qkv_same_embed_dim and key is value:
            E = self.embed_dim
            w_kv = self.in_proj_weight[E:]
            b_kv = None if self.in_proj_bias is None else self.in_proj_bias[E:]
            k, v = SplitHeads.apply(F.linear(key, w_kv, b_kv), 2, H)  # (B, H, S, Dh) each
        else:
            k = SplitHeads.apply(F.linear(key, wk, bk), 1, H)  # (B, H, S, Dh)
            v = SplitHeads.apply(F.linear(value, wv, bv), 1, H)  # (B, H, S, Dh)
        return q, k, v

    # ------------------------------------------------------------------ forward
    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True, attn_mask=None,
                average_attn_weights: bool = True, is_causal: bool = False):
        """Attend from ``query`` to ``key``/``value``.

        Shapes (``B`` batch, ``L`` target length, ``S`` source length, ``E`` embed_dim):
            query ``(L, B, E)`` (``(B, L, E)`` if ``batch_first``) or unbatched ``(L, E)``;
            key ``(S, B, kdim)``, value ``(S, B, vdim)`` likewise;
            key_padding_mask ``(B, S)`` (unbatched ``(S,)``): bool, True = *ignore this key*, or additive float;
            attn_mask ``(L, S)`` or ``(B·H, L, S)`` (index ``b·H + h``): bool, True = *blocked*, or additive float;
            is_causal: when ``attn_mask`` is None, mask keys after the query with the cached causal mask
            (PyTorch requires ``attn_mask`` too and treats ``is_causal`` as a hint; here the hint is
            enough). With ``attn_mask`` given, ``attn_mask`` is used.

        Returns:
            ``(output, weights)``: output shaped like ``query`` (last dim ``E``); weights ``(B, L, S)``
            averaged over heads, ``(B, H, L, S)`` when ``average_attn_weights=False`` (unbatched:
            without ``B``), after dropout as in PyTorch, or ``None`` when ``need_weights=False``.

        Raises:
            ValueError: inputs or masks of the wrong shape (naming expected and actual shapes).
            TypeError: a mask neither bool nor float.
        """
        batched = query.ndim == 3
        self._check_inputs(query, key, value, batched)
        if not batched or not self.batch_first:
            # to (B, L, E): (L, E) -> (1, L, E), or (L, B, E) -> (B, L, E); keeping `query is key`
            # and `key is value`, which select the packed projection
            to_ble = (lambda t: ops.unsqueeze(t, 0)) if not batched else (lambda t: ops.transpose(t, 0, 1))
            same_qk, same_kv = query is key, key is value
            query = to_ble(query)
            key = query if same_qk else to_ble(key)
            value = key if same_kv else to_ble(value)
            if not batched and key_padding_mask is not None:
                key_padding_mask = _unsqueeze_mask(key_padding_mask)
        B, L, E = query.shape
        H, S = self.num_heads, key.shape[1]

        q, k, v = self._project(query, key, value)  # (B, H, L, Dh), (B, H, S, Dh) x2
        mask = self._merged_mask(attn_mask, key_padding_mask, is_causal, B, L, S, q.array)
        if self.bias_k is not None:
            bk = SplitHeads.apply(ops.expand(self.bias_k, B, 1, E), 1, H)  # (B, H, 1, Dh)
            bv = SplitHeads.apply(ops.expand(self.bias_v, B, 1, E), 1, H)  # (B, H, 1, Dh)
            k, v = ops.cat([k, bk], dim=2), ops.cat([v, bv], dim=2)  # (B, H, S+1, Dh)
            mask = _pad_last(mask, B, L, S)
            S += 1
        if self.add_zero_attn:
            zeros = Tensor._from_op(get_array_module(q.array).zeros((B, H, 1, self.head_dim), dtype=q.dtype))
            k, v = ops.cat([k, zeros], dim=2), ops.cat([v, zeros], dim=2)  # (B, H, S+1, Dh)
            mask = _pad_last(mask, B, L, S)
            S += 1

        p = self.dropout if self.training else 0.0
        keep = _dropout_keep((B, H, L, S), p, q.array) if p > 0 else None
        scale = 1.0 / math.sqrt(self.head_dim)
        res = ScaledDotProductAttention.apply(q, k, v, mask, keep, scale, need_weights)
        out, weights = res if need_weights else (res, None)  # (B, H, L, Dh), (B, H, L, S)
        out = self.out_proj(MergeHeads.apply(out))  # (B, L, E)

        if weights is not None:
            if keep is not None:
                weights = weights * Tensor._from_op(keep)  # PyTorch returns the weights after dropout
            if average_attn_weights:
                weights = ops.mean(weights, 1)  # (B, L, S)
            if not batched:
                weights = ops.squeeze(weights, 0)
        if not batched:
            out = ops.squeeze(out, 0)  # (L, E)
        elif not self.batch_first:
            out = ops.transpose(out, 0, 1)  # (L, B, E)
        return out, weights

    def _check_inputs(self, query, key, value, batched):
        for name, t in (("query", query), ("key", key), ("value", value)):
            if not isinstance(t, Tensor):
                raise TypeError(f"MultiheadAttention: {name} must be a Tensor, got {type(t).__name__}")
        layout = "(B, L, E)" if self.batch_first else "(L, B, E)"
        if query.ndim not in (2, 3):
            raise ValueError(
                f"MultiheadAttention: query must be {layout} or unbatched (L, E), got shape {tuple(query.shape)}"
            )
        for name, t, dim in (("query", query, self.embed_dim), ("key", key, self.kdim), ("value", value, self.vdim)):
            if t.ndim != query.ndim:
                raise ValueError(
                    f"MultiheadAttention: {name} has shape {tuple(t.shape)} but query has {tuple(query.shape)}: "
                    "query, key and value must all be batched (3-D) or all unbatched (2-D)"
                )
            if t.shape[-1] != dim:
                raise ValueError(
                    f"MultiheadAttention: {name} of shape {tuple(t.shape)} must have last dimension {dim}, got {t.shape[-1]}"
                )
        if key.shape[:-1] != value.shape[:-1]:
            raise ValueError(
                f"MultiheadAttention: key of shape {tuple(key.shape)} and value of shape {tuple(value.shape)} must "
                "agree on every dimension but the last"
            )
        if batched:
            bdim = 0 if self.batch_first else 1
            if query.shape[bdim] != key.shape[bdim]:
                raise ValueError(
                    f"MultiheadAttention: query of shape {tuple(query.shape)} and key of shape {tuple(key.shape)} "
                    f"have different batch sizes {query.shape[bdim]} and {key.shape[bdim]} (layout {layout})"
                )

    def _merged_mask(self, attn_mask, key_padding_mask, is_causal, B, L, S, like):
        """attn_mask and key_padding_mask as one additive mask broadcastable to ``(B, H, L, S)``."""
        H, dtype = self.num_heads, like.dtype
        mask = None
        if attn_mask is not None:
            shape = tuple(attn_mask.shape)
            if shape == (L, S):
                mask = _additive(attn_mask, dtype, True, "MultiheadAttention attn_mask")  # (L, S)
            elif shape == (B * H, L, S):
                mask = ops.reshape(_additive(attn_mask, dtype, True, "MultiheadAttention attn_mask"), B, H, L, S)
            else:
                raise ValueError(
                    f"MultiheadAttention: attn_mask must have shape (L, S) = {(L, S)} or (B*num_heads, L, S) = "
                    f"{(B * H, L, S)}, got {shape}"
                )
        elif is_causal:
            mask = Tensor._from_op(causal_mask(L, S, like))  # (L, S)
        if key_padding_mask is not None:
            if tuple(key_padding_mask.shape) != (B, S):
                raise ValueError(
                    f"MultiheadAttention: key_padding_mask must have shape (B, S) = {(B, S)}, got "
                    f"{tuple(key_padding_mask.shape)}"
                )
            kpm = ops.reshape(_additive(key_padding_mask, dtype, True, "MultiheadAttention key_padding_mask"), B, 1, 1, S)
            mask = kpm if mask is None else mask + kpm  # (B, 1|H, L, S)
        return mask


def _unsqueeze_mask(mask):
    if isinstance(mask, Tensor):
        return ops.unsqueeze(mask, 0)
    return mask[None]


def _pad_last(mask, B, L, S):
    """Extend an additive mask over one more key (a zero column: the appended key is visible)."""
    if mask is None:
        return None
    xp = get_array_module(mask.array)
    shape = tuple(mask.shape[:-1]) + (1,)
    zero = Tensor._from_op(xp.zeros(shape, dtype=mask.dtype))
    return ops.cat([mask, zero], dim=-1)

"""``multi_head_attention_forward`` (``torch.nn.functional``): :class:`~minitorch_ln.nn.attention.MultiheadAttention`'s
forward with the weights passed in, as PyTorch's module calls it.

The same code runs: a :class:`_Weights` object holds the given tensors under the module's attribute
names and borrows the module's methods (projection, masks, the fused attention), so the function and
the module cannot drift apart. Inputs are sequence-first ``(L, N, E)`` (or unbatched ``(L, E)``).
"""

from __future__ import annotations

from .attention import MultiheadAttention
from .functional import linear


class _Weights:
    """The attributes ``MultiheadAttention.forward`` reads, from the function's arguments."""

    _weights = MultiheadAttention._weights
    _project = MultiheadAttention._project
    _check_inputs = MultiheadAttention._check_inputs
    _merged_mask = MultiheadAttention._merged_mask
    forward = MultiheadAttention.forward

    def __init__(self, **attrs):
        self.__dict__.update(attrs)

    def out_proj(self, x):
        return linear(x, self.out_proj_weight, self.out_proj_bias)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Multi-head attention with explicit weights: ``query (L, N, E)``, ``key (S, N, kdim)``,
    ``value (S, N, vdim)`` (or unbatched ``(L, E)``, ...) → ``(output (L, N, E), weights)``, the weights
    ``(N, L, S)`` averaged over heads (``(N, H, L, S)`` if not ``average_attn_weights``) or None.
    Packed ``in_proj_weight (3E, E)`` or, with ``use_separate_proj_weight``, ``q/k/v_proj_weight``;
    masks, ``bias_k``/``bias_v``, ``add_zero_attn`` and dropout as :class:`MultiheadAttention`.

    Raises ValueError for an ``embed_dim_to_check`` other than the query's features, ``E`` not divisible
    by ``num_heads``, missing separate projection weights, or shapes as the module;
    NotImplementedError for ``static_k``/``static_v``.
    """
    E = query.shape[-1]
    if E != embed_dim_to_check:
        raise ValueError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {E}")
    if E % num_heads:
        raise ValueError(f"embed_dim {E} not divisible by num_heads {num_heads}")
    if static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: static_k/static_v are not supported by minitorch_ln "
                                  "(docs/torch_compat.md)")
    if use_separate_proj_weight and (q_proj_weight is None or k_proj_weight is None or v_proj_weight is None):
        raise ValueError("use_separate_proj_weight is True but q_proj_weight, k_proj_weight or v_proj_weight is None")
    if not use_separate_proj_weight and in_proj_weight is None:
        raise ValueError("use_separate_proj_weight is False but in_proj_weight is None")
    state = _Weights(embed_dim=E, num_heads=num_heads, head_dim=E // num_heads, batch_first=False,
                     kdim=key.shape[-1], vdim=value.shape[-1], _qkv_same_embed_dim=not use_separate_proj_weight,
                     in_proj_weight=in_proj_weight, in_proj_bias=in_proj_bias, q_proj_weight=q_proj_weight,
                     k_proj_weight=k_proj_weight, v_proj_weight=v_proj_weight, bias_k=bias_k, bias_v=bias_v,
                     add_zero_attn=add_zero_attn, dropout=dropout_p, training=training,
                     out_proj_weight=out_proj_weight, out_proj_bias=out_proj_bias)
    return state.forward(query, key, value, key_padding_mask, need_weights, attn_mask, average_attn_weights,
                         is_causal)

"""Scaled dot-product attention and ``MultiheadAttention`` (Vaswani et al., 2017, §3.2).

``Attention(Q, K, V) = softmax(Q Kᵀ · scale + M) V`` with ``scale = 1/sqrt(E)`` and ``M`` an
additive mask (0 where a query may look at a key, -inf where it may not).

The core is one fused :class:`ScaledDotProductAttention` function: its forward runs two batched
matmuls and an in-place softmax, and its backward is the hand-derived chain (``P`` the softmax,
``dO`` the upstream gradient)::

    dV = Pᵀ dO            dP = dO Vᵀ
    dS = P ⊙ (dP − rowsum(dP ⊙ P))          (softmax backward)
    dQ = dS K · scale     dK = dSᵀ Q · scale

A query row whose keys are all masked has ``P = 0`` (not NaN): its output is zero and it passes
zero gradient. Heads are batched: ``(B, L, E)`` is split into ``(B, H, L, E/H)`` by one function
(:class:`SplitHeads`) and merged back by its inverse (:class:`MergeHeads`); there is no Python
loop over the batch or the heads.
"""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..backend import device_of, generator, get_array_module
from ..ops.shape import unbroadcast
from ..tensor import Tensor, empty
from . import functional as F
from . import init
from .linear import Linear
from .module import Module
from .parameter import Parameter

# ==================================================================================================
# Masks
# ==================================================================================================

_CAUSAL = {}  # (device, dtype) -> the largest additive causal mask built so far, (N, N)


def causal_mask(L: int, S: int, like) -> "array":
    """The additive causal mask ``(L, S)``: 0 where key ``j <= i``, -inf above the diagonal.

    Built once per device and dtype at the largest size asked for; smaller sizes are views of its
    top-left corner (the causal mask of an ``(L, S)`` problem is the top-left block of a bigger
    one, as ``torch.ones(L, S).tril()``). ``like`` is an array giving the device and dtype.
    """
    xp = get_array_module(like)
    key = (str(device_of(like)), str(like.dtype))
    cached = _CAUSAL.get(key)
    if cached is None or cached.shape[0] < max(L, S):
        n = max(L, S, 64 if cached is None else 2 * cached.shape[0])
        blocked = xp.triu(xp.ones((n, n), dtype=bool), k=1)  # (n, n)
        cached = xp.where(blocked, like.dtype.type(-np.inf), like.dtype.type(0))  # (n, n)
        _CAUSAL[key] = cached
    return cached[:L, :S]


def _additive(mask, dtype, blocked_when: bool, what: str):
    """A bool or float mask as an additive float mask of ``dtype``.

    Bool entries equal to ``blocked_when`` become -inf, the others 0. A float mask is added as it
    is (a Tensor keeps its graph, so a learned additive bias gets its gradient).

    Raises:
        TypeError: for a mask that is neither bool nor floating point.
    """
    arr = mask.array if isinstance(mask, Tensor) else mask
    xp = get_array_module(arr)
    if not hasattr(arr, "dtype"):
        arr = xp.asarray(arr)
    if arr.dtype == np.bool_:
        blocked = arr if blocked_when else ~arr
        return Tensor._from_op(xp.where(blocked, dtype.type(-np.inf), dtype.type(0)))
    if arr.dtype.kind != "f":
        raise TypeError(f"{what}: only bool and floating point masks are supported, got dtype {arr.dtype}")
    if isinstance(mask, Tensor):
        return mask if mask.dtype == dtype else ops.cast(mask, dtype)
    return Tensor._from_op(arr.astype(dtype, copy=False))


def _dropout_keep(shape, p: float, like):
    """The scaled keep mask of inverted dropout: 1/(1-p) with probability 1-p, else 0. ``(*shape)``."""
    u = generator(device_of(like)).random(shape, dtype=like.dtype)  # (*shape)
    return (u >= p).astype(like.dtype) * like.dtype.type(1.0 / (1.0 - p))


# ==================================================================================================
# The fused attention core
# ==================================================================================================


def _softmax_rows_(s):
    """Softmax over the last axis of ``s``, in place; rows that are all -inf become 0 (not NaN)."""
    xp = get_array_module(s)
    m = s.max(axis=-1, keepdims=True)  # (..., L, 1)
    s -= xp.where(xp.isfinite(m), m, s.dtype.type(0))  # a fully masked row stays -inf ...
    xp.exp(s, out=s)  # ... and its exp is 0
    denom = s.sum(axis=-1, keepdims=True)  # (..., L, 1)
    s /= xp.where(denom == 0, s.dtype.type(1), denom)
    return s


class ScaledDotProductAttention(Function):
    """``O = dropout(softmax(Q Kᵀ · scale + M)) V``, forward and backward fused (module docstring).

    Inputs: ``q (..., L, E)``, ``k (..., S, E)``, ``v (..., S, Ev)``, ``mask`` an additive float
    mask broadcastable to ``(..., L, S)`` (or None), ``keep`` the scaled dropout keep mask
    ``(..., L, S)`` (or None), ``scale``, and ``need_weights``: when True the softmax ``P`` is a
    second, differentiable output.

    The first-order backward runs on raw arrays, in place (:func:`_attention_backward_arrays`);
    under ``create_graph=True`` the same formulas run in Tensor ops, so they can be differentiated
    again (``P`` is then recomputed with its history when it was not an output).
    """

    @staticmethod
    def forward(ctx, q, k, v, mask, keep, scale, need_weights):
        xp = get_array_module(q)
        s = xp.matmul(q * q.dtype.type(scale), xp.swapaxes(k, -1, -2))  # (..., L, S)
        if mask is not None:
            if np.broadcast_shapes(s.shape, mask.shape) == s.shape:
                s += mask
            else:
                s = s + mask  # the mask has batch dims the inputs lack
        p = _softmax_rows_(s)  # (..., L, S)
        out = xp.matmul(p * keep if keep is not None else p, v)  # (..., L, Ev)
        ctx.save_for_backward(q, k, v, p, mask, keep)
        ctx.scale, ctx.need_weights = scale, need_weights
        return (out, p) if need_weights else out

    @staticmethod
    def backward(ctx, dout, dweights=None):
        q, k, v, p, mask, keep = ctx.saved_tensors
        scale = ctx.scale
        if not is_grad_enabled():
            # first-order backward (no create_graph): the same formulas on raw arrays, in place
            grads = _attention_backward_arrays(
                q.array, k.array, v.array, p.array, None if keep is None else keep.array, scale, dout.array,
                None if dweights is None else dweights.array, None if mask is None or not ctx.needs_input_grad[3]
                else mask.shape)
            return tuple(None if g is None else Tensor._from_op(g) for g in grads) + (None, None, None)
        # differentiable backward (create_graph=True): the same formulas in Tensor ops
        if not ctx.need_weights:
            # Double backward: P was saved as a constant, so recompute it with its history.
            p = ScaledDotProductAttention.apply(q, k, v, mask, None, scale, True)[1]
        p_used = p * keep if keep is not None else p  # (..., L, S)
        dv = unbroadcast(ops.matmul(ops.transpose(p_used, -1, -2), dout), v.shape)  # (..., S, Ev)
        dp = ops.matmul(dout, ops.transpose(v, -1, -2))  # (..., L, S)
        if keep is not None:
            dp = dp * keep
        if dweights is not None:
            dp = dp + dweights
        ds = p * (dp - (dp * p).sum(-1, keepdim=True))  # softmax backward, (..., L, S)
        dq = unbroadcast(ops.matmul(ds, k), q.shape) * scale  # (..., L, E)
        dk = unbroadcast(ops.matmul(ops.transpose(ds, -1, -2), q), k.shape) * scale  # (..., S, E)
        dmask = unbroadcast(ds, mask.shape) if ctx.needs_input_grad[3] else None
        return dq, dk, dv, dmask, None, None, None


def _sum_to(a, shape):
    """Sum array ``a`` over the axes along which ``shape`` was broadcast to ``a.shape``."""
    if a.shape == tuple(shape):
        return a
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and a.shape[lead + i] != 1)
    return a.sum(axis=axes, keepdims=True).reshape(shape)


def _attention_backward_arrays(q, k, v, p, keep, scale, dout, dweights, mask_shape):
    """``dq, dk, dv, dmask`` of :class:`ScaledDotProductAttention` on raw arrays (formulas in the module docstring)."""
    xp = get_array_module(q)
    p_used = p * keep if keep is not None else p  # (..., L, S)
    dv = _sum_to(xp.matmul(xp.swapaxes(p_used, -1, -2), dout), v.shape)  # (..., S, Ev)
    dp = xp.matmul(dout, xp.swapaxes(v, -1, -2))  # (..., L, S)
    if keep is not None:
        dp *= keep
    if dweights is not None:
        dp += dweights
    dp -= xp.einsum("...ij,...ij->...i", dp, p)[..., None]  # dP - rowsum(dP ⊙ P), no (..., L, S) temporary
    dp *= p  # dS = P ⊙ (dP - rowsum(dP ⊙ P)), (..., L, S)
    ds = dp
    dq = _sum_to(xp.matmul(ds, k), q.shape)  # (..., L, E)
    dq *= q.dtype.type(scale)
    dk = _sum_to(xp.matmul(xp.swapaxes(ds, -1, -2), q), k.shape)  # (..., S, E)
    dk *= k.dtype.type(scale)
    dmask = _sum_to(ds, mask_shape) if mask_shape is not None else None
    return dq, dk, dv, dmask


def _check_qkv(query, key, value, what):
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{what}: {name} must be a Tensor, got {type(t).__name__}")
        if t.ndim < 2:
            raise ValueError(f"{what}: {name} needs at least 2 dimensions (..., length, features), got shape {tuple(t.shape)}")
        if t.dtype.kind != "f":
            raise TypeError(f"{what}: {name} must be floating point, got dtype {t.dtype}")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(
            f"{what}: query (shape {tuple(query.shape)}) and key (shape {tuple(key.shape)}) must have the same "
            f"last dimension E, got {query.shape[-1]} and {key.shape[-1]}"
        )
    if key.shape[-2] != value.shape[-2] or key.shape[:-2] != value.shape[:-2]:
        raise ValueError(
            f"{what}: key (shape {tuple(key.shape)}) and value (shape {tuple(value.shape)}) must agree on every "
            "dimension but the last (..., S, *)"
        )
    try:
        np.broadcast_shapes(query.shape[:-2], key.shape[:-2])
    except ValueError:
        raise ValueError(
            f"{what}: the batch dimensions of query {tuple(query.shape)} and key {tuple(key.shape)} do not broadcast"
        ) from None


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale=None) -> Tensor:
    """``softmax(query keyᵀ · scale + mask) value``, as ``torch.nn.functional.scaled_dot_product_attention``.

    Args:
        query: ``(..., L, E)``, float16/32/64.
        key: ``(..., S, E)``.
        value: ``(..., S, Ev)``.
        attn_mask: broadcastable to ``(..., L, S)``; bool (True = *may attend*, as PyTorch) or an
            additive float mask (a Tensor requiring grad gets its gradient).
        dropout_p: dropout on the attention weights (applied whenever > 0, as PyTorch).
        is_causal: mask out keys after the query (``tril(ones(L, S))``, aligned top-left).
        scale: defaults to ``1/sqrt(E)``.

    Returns:
        ``(..., L, Ev)``. A query whose keys are all masked gives zeros and passes zero gradient.

    Raises:
        TypeError: non-Tensor or non-float inputs, a mask neither bool nor float.
        ValueError: mismatched shapes, a mask that does not broadcast to ``(..., L, S)`` (naming
            both shapes), ``is_causal`` with ``attn_mask``, ``dropout_p`` outside [0, 1).

    Source: Vaswani et al. (2017), "Attention Is All You Need", eq. (1).
    """
    _check_qkv(query, key, value, "scaled_dot_product_attention")
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"scaled_dot_product_attention: dropout_p must be in [0, 1), got {dropout_p}")
    L, S = query.shape[-2], key.shape[-2]
    mask = None
    if is_causal:
        if attn_mask is not None:
            raise ValueError("scaled_dot_product_attention: pass either attn_mask or is_causal=True, not both")
        mask = causal_mask(L, S, query.array)
    elif attn_mask is not None:
        mask = _additive(attn_mask, query.dtype, blocked_when=False, what="scaled_dot_product_attention")
        scores_shape = tuple(np.broadcast_shapes(query.shape[:-2], key.shape[:-2])) + (L, S)
        try:
            np.broadcast_shapes(scores_shape, mask.shape)
        except ValueError:
            raise ValueError(
                f"scaled_dot_product_attention: attn_mask of shape {tuple(mask.shape)} does not broadcast to the "
                f"attention scores' shape {scores_shape} (..., L, S)"
            ) from None
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    out_batch = np.broadcast_shapes(query.shape[:-2], key.shape[:-2], () if mask is None else mask.shape[:-2])
    keep = _dropout_keep(tuple(out_batch) + (L, S), dropout_p, query.array) if dropout_p > 0 else None
    return ScaledDotProductAttention.apply(query, key, value, mask, keep, scale, False)


# ==================================================================================================
# Splitting and merging heads
# ==================================================================================================


class SplitHeads(Function):
    """``(B, L, n·H·Dh)`` → ``n`` arrays ``(B, H, L, Dh)``: the packed projections, one per head."""

    @staticmethod
    def forward(ctx, x, n, num_heads):
        xp = get_array_module(x)
        B, L, C = x.shape
        x5 = x.reshape(B, L, n, num_heads, C // (n * num_heads))  # (B, L, n, H, Dh)
        ctx.n, ctx.num_heads = n, num_heads
        outs = tuple(xp.ascontiguousarray(x5[:, :, i].transpose(0, 2, 1, 3)) for i in range(n))  # (B, H, L, Dh)
        return outs if n > 1 else outs[0]

    @staticmethod
    def backward(ctx, *douts):
        return MergeHeads.apply(*douts), None, None


class MergeHeads(Function):
    """``n`` arrays ``(B, H, L, Dh)`` → ``(B, L, n·H·Dh)``: the inverse of :class:`SplitHeads`."""

    @staticmethod
    def forward(ctx, *xs):
        xp = get_array_module(xs[0])
        B, H, L, Dh = xs[0].shape
        out = xp.empty((B, L, len(xs), H, Dh), dtype=xs[0].dtype)  # (B, L, n, H, Dh)
        for i, x in enumerate(xs):
            out[:, :, i] = x.transpose(0, 2, 1, 3)
        ctx.n, ctx.num_heads = len(xs), H
        return out.reshape(B, L, len(xs) * H * Dh)

    @staticmethod
    def backward(ctx, dy):
        d = SplitHeads.apply(dy, ctx.n, ctx.num_heads)
        return d if isinstance(d, tuple) else (d,)


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

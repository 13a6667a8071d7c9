"""Scaled dot-product attention, fused, and the head split/merge it needs (Vaswani et al., 2017, §3.2).

``MultiheadAttention``, the module around it, is in ``nn/attention.py``.

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

from ..kernels import softmax_dispatch
from ..autograd.composed import double_backward
from ..autograd.function import Function
from .. import backend
from ..backend import device_of, get_array_module
from ..tensor import Tensor
from .autocast_policies import autocast
from .conversion import cast
from .dropout import dropout_noise
from .shape import sum_to_array, unbroadcast

__all__ = ["scaled_dot_product_attention"]


# ==================================================================================================
# Masks
# ==================================================================================================

_CAUSAL = {}  # (device, dtype) -> the largest additive causal mask built so far, (N, N)


def causal_mask(L: int, S: int, like):
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
    if not backend.is_floating(arr.dtype):
        raise TypeError(f"{what}: only bool and floating point masks are supported, got dtype {arr.dtype}")
    if isinstance(mask, Tensor):
        return mask if mask.dtype == dtype else cast(mask, dtype)
    return Tensor._from_op(arr.astype(dtype, copy=False))


def _dropout_keep(shape, p: float, like):
    """The scaled keep mask of inverted dropout: 1/(1-p) with probability 1-p, else 0 (PyTorch's draws). ``(*shape)``."""
    return dropout_noise(shape, p, like)


# ==================================================================================================
# The fused attention core
# ==================================================================================================


def _softmax_rows_(s):
    """Softmax over the last axis of ``s``, in place; rows that are all -inf become 0 (not NaN).

    ``kernels/softmax.py`` (the whole-array form) or its compiled twin ``kernels/cpu_softmax.py``."""
    return softmax_dispatch.softmax_rows_for(s)(s)


class ScaledDotProductAttention(Function):
    """``O = dropout(softmax(Q Kᵀ · scale + M)) V``, forward and backward fused (module docstring).

    Inputs: ``q (..., L, E)``, ``k (..., S, E)``, ``v (..., S, Ev)``, ``mask`` an additive float
    mask broadcastable to ``(..., L, S)`` (or None), ``keep`` the scaled dropout keep mask
    ``(..., L, S)`` (or None), ``scale``, and ``need_weights``: when True the softmax ``P`` is a
    second, differentiable output.

    The backward is :class:`AttentionBackward`: the formulas on raw arrays, in place; its own
    backward (higher derivatives) runs them in Tensor ops, with ``P`` recomputed with its history.
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
        need_mask = mask is not None and ctx.needs_input_grad[3]
        grads = AttentionBackward.apply(dout, dweights, q, k, v, p, mask, keep, ctx.scale, need_mask)
        return (*grads[:3], grads[3] if need_mask else None, None, None, None)


def _attention_backward_composed(q, k, v, mask, dout, dweights, keep, scale):
    """``(dq, dk, dv, dS)`` of :class:`ScaledDotProductAttention` in Tensor ops, with ``P`` recomputed
    from ``q``, ``k`` and ``mask`` so that it carries their history (for higher derivatives)."""
    p = ScaledDotProductAttention.apply(q, k, v, mask, None, scale, True)[1]   # (..., L, S)
    p_used = p * keep if keep is not None else p                               # (..., L, S)
    dv = unbroadcast(p_used.transpose(-1, -2) @ dout, v.shape)                 # (..., S, Ev)
    dp = dout @ v.transpose(-1, -2)                                            # (..., L, S)
    if keep is not None:
        dp = dp * keep
    if dweights is not None:
        dp = dp + dweights
    ds = p * (dp - (dp * p).sum(-1, keepdim=True))                             # softmax backward, (..., L, S)
    dq = unbroadcast(ds @ k, q.shape) * scale                                  # (..., L, E)
    dk = unbroadcast(ds.transpose(-1, -2) @ q, k.shape) * scale                # (..., S, E)
    return dq, dk, dv, ds


class AttentionBackward(Function):
    """``(dO, dP, q, k, v, P, mask, keep) -> dq, dk, dv[, dmask]`` of :class:`ScaledDotProductAttention`
    on raw arrays, in place (formulas in the module docstring); its own backward differentiates
    :func:`_attention_backward_composed`."""

    @staticmethod
    def forward(ctx, dout, dweights, q, k, v, p, mask, keep, scale, need_mask):
        ctx.save_for_backward(dout, dweights, q, k, v, mask, keep)
        ctx.scale, ctx.need_mask = scale, need_mask
        grads = _attention_backward_arrays(q, k, v, p, keep, scale, dout, dweights, mask.shape if need_mask else None)
        return grads if need_mask else grads[:3]

    @staticmethod
    def backward(ctx, *cotangents):
        dout, dweights, q, k, v, mask, keep = ctx.saved_tensors
        scale, need_mask = ctx.scale, ctx.need_mask
        keep_t = keep  # a constant (the dropout draw)

        def composed(q_, k_, v_, mask_, dout_, dweights_):
            dq, dk, dv, ds = _attention_backward_composed(q_, k_, v_, mask_ if mask_ is not None else mask, dout_,
                                                          dweights_, keep_t, scale)
            return (dq, dk, dv, unbroadcast(ds, mask.shape)) if need_mask else (dq, dk, dv)

        cots = cotangents if need_mask else (*cotangents, None)
        inputs = (q, k, v, mask if need_mask else None, dout, dweights)
        gq, gk, gv, gmask, gdout, gdweights = double_backward(composed, inputs, tuple(c for c in cots if c is not None))
        return gdout, gdweights, gq, gk, gv, None, gmask, None, None, None


def _attention_backward_arrays(q, k, v, p, keep, scale, dout, dweights, mask_shape):
    """``dq, dk, dv, dmask`` of :class:`ScaledDotProductAttention` on raw arrays (formulas in the module docstring)."""
    xp = get_array_module(q)
    p_used = p * keep if keep is not None else p  # (..., L, S)
    dv = sum_to_array(xp.matmul(xp.swapaxes(p_used, -1, -2), dout), v.shape)  # (..., S, Ev)
    dp = xp.matmul(dout, xp.swapaxes(v, -1, -2))  # (..., L, S)
    if keep is not None:
        dp *= keep
    if dweights is not None:
        dp += dweights
    ds = softmax_dispatch.softmax_bwd_rows_for(dp)(dp, p)  # dS = P ⊙ (dP - rowsum(dP ⊙ P)), in place, (..., L, S)
    dq = sum_to_array(xp.matmul(ds, k), q.shape)  # (..., L, E)
    dq *= q.dtype.type(scale)
    dk = sum_to_array(xp.matmul(xp.swapaxes(ds, -1, -2), q), k.shape)  # (..., S, E)
    dk *= k.dtype.type(scale)
    dmask = sum_to_array(ds, mask_shape) if mask_shape is not None else None
    return dq, dk, dv, dmask


def _check_qkv(query, key, value, what):
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{what}: {name} must be a Tensor, got {type(t).__name__}")
        if t.ndim < 2:
            raise ValueError(f"{what}: {name} needs at least 2 dimensions (..., length, features), got shape {tuple(t.shape)}")
        if not backend.is_floating(t.dtype):
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


@autocast("scaled_dot_product_attention")
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

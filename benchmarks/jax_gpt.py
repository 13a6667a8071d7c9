"""The benchmark's GPT in JAX, with the same AdamW, for ``bench_train_step.py`` (an optional peer).

The model is :class:`minitorch_ln.nn.GPT` (and PyTorch's twin) written out in ``jax.numpy``:

    x = tok_emb[idx] + pos_emb[0..T-1]                                   (B, T, D)
    per block (Pre-LN, as ``nn.TransformerEncoderLayer(norm_first=True)``):
        x = x + out_proj(causal_attention(in_proj(LayerNorm1(x))))       H heads of D/H
        x = x + linear2(GELU(linear1(LayerNorm2(x))))                     exact GELU (erf)
    logits = LayerNorm_f(x) @ lm_head.weightᵀ                            untied head, no bias
    loss = mean cross-entropy over the B·T positions

Parameters are a flat dict keyed by the minitorch_ln ``state_dict`` names, so the weights are
copied from the minitorch_ln model and the gradients compared name by name. AdamW is PyTorch's
(``torch.optim.AdamW``, the defaults the benchmark uses: lr 1e-3, betas (0.9, 0.999), eps 1e-8,
weight decay 1e-2 on every parameter, bias-corrected moments). The whole step (forward, loss,
gradient, update) is one ``jax.jit``-compiled function; parameters and moments are donated, so
XLA updates them in place as the other two libraries do.

Import this module only where ``jax`` is installed; it is not a dependency of minitorch_ln.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["params_from_state_dict", "loss_fn", "make_train_step", "loss_and_grads"]

LR, BETAS, EPS, WEIGHT_DECAY = 1e-3, (0.9, 0.999), 1e-8, 1e-2


def params_from_state_dict(state_dict) -> dict:
    """``{name: jnp array}`` from a minitorch_ln ``state_dict`` (Tensors), float32 copies."""
    return {k: jnp.asarray(np.array(v.numpy(), dtype=np.float32)) for k, v in state_dict.items()}


def _layer_norm(x, w, b, eps):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)  # biased, as LayerNorm
    return (x - mean) * jax.lax.rsqrt(var + eps) * w + b


def _linear(x, p, name, bias=True):
    y = x @ p[f"{name}.weight"].T
    return y + p[f"{name}.bias"] if bias else y


def _attention(x, p, name, n_head):
    """Causal multi-head self-attention of ``x`` ``(B, T, D)``, packed in-projection as PyTorch's."""
    B, T, D = x.shape
    dh = D // n_head
    qkv = x @ p[f"{name}.in_proj_weight"].T + p[f"{name}.in_proj_bias"]  # (B, T, 3D)
    q, k, v = (a.reshape(B, T, n_head, dh).transpose(0, 2, 1, 3) for a in jnp.split(qkv, 3, axis=-1))
    s = (q @ k.transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(dh))  # (B, H, T, T)
    causal = jnp.tril(jnp.ones((T, T), dtype=bool))
    s = jnp.where(causal, s, -jnp.inf)
    y = jax.nn.softmax(s, axis=-1) @ v  # (B, H, T, dh)
    y = y.transpose(0, 2, 1, 3).reshape(B, T, D)
    return _linear(y, p, f"{name}.out_proj")


def _check_config(c):
    """This twin is the benchmark's configuration only: Pre-LN, GELU, biases, untied head, no dropout."""
    if not (c.norm_first and c.activation == "gelu" and c.bias and not c.tie_weights and c.dropout == 0.0):
        raise ValueError(f"jax_gpt: only a Pre-LN GELU GPT with biases, an untied head and no dropout, got {c}")


def loss_fn(p, idx, targets, config):
    """Mean cross-entropy of the model with parameters ``p`` on ``idx``/``targets`` ``(B, T)`` int."""
    _check_config(config)
    B, T = idx.shape
    eps = config.layer_norm_eps
    x = p["tok_emb.weight"][idx] + p["pos_emb.weight"][:T]
    for i in range(config.n_layer):
        b = f"blocks.{i}"
        h = _layer_norm(x, p[f"{b}.norm1.weight"], p[f"{b}.norm1.bias"], eps)
        x = x + _attention(h, p, f"{b}.self_attn", config.n_head)
        h = _layer_norm(x, p[f"{b}.norm2.weight"], p[f"{b}.norm2.bias"], eps)
        h = jax.nn.gelu(_linear(h, p, f"{b}.linear1"), approximate=False)
        x = x + _linear(h, p, f"{b}.linear2")
    x = _layer_norm(x, p["ln_f.weight"], p["ln_f.bias"], eps)
    logits = _linear(x, p, "lm_head", bias=False)  # (B, T, V)
    logp = jax.nn.log_softmax(logits.reshape(B * T, -1), axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, targets.reshape(B * T, 1), axis=-1))


def loss_and_grads(p, idx, targets, config):
    """``(loss, {name: grad})`` as NumPy, for the benchmark's same-work check."""
    loss, grads = jax.jit(jax.value_and_grad(lambda p_, i_, t_: loss_fn(p_, i_, t_, config)))(p, idx, targets)
    return float(loss), {k: np.asarray(g) for k, g in grads.items()}


def _adamw(p, g, m, v, step):
    """``torch.optim.AdamW``'s update of one parameter (step counted from 1)."""
    b1, b2 = BETAS
    p = p * (1.0 - LR * WEIGHT_DECAY)
    m = b1 * m + (1.0 - b1) * g
    v = b2 * v + (1.0 - b2) * g * g
    bc1, bc2 = 1.0 - b1 ** step, 1.0 - b2 ** step
    p = p - (LR / bc1) * m / (jnp.sqrt(v) / jnp.sqrt(bc2) + EPS)
    return p, m, v


def make_train_step(params, idx, targets, config):
    """A callable running one jitted training step per call (it keeps the state); returns the loss."""

    def step_fn(p, m, v, step, idx, targets):
        loss, grads = jax.value_and_grad(loss_fn)(p, idx, targets, config)
        step = step + 1.0
        new = {k: _adamw(p[k], grads[k], m[k], v[k], step) for k in p}
        return ({k: t[0] for k, t in new.items()}, {k: t[1] for k, t in new.items()},
                {k: t[2] for k, t in new.items()}, step, loss)

    jitted = jax.jit(step_fn, donate_argnums=(0, 1, 2))
    state = {"p": {k: jnp.array(a) for k, a in params.items()}, "m": {k: jnp.zeros_like(a) for k, a in params.items()},
             "v": {k: jnp.zeros_like(a) for k, a in params.items()}, "step": jnp.float32(0.0)}
    idx, targets = jnp.asarray(idx), jnp.asarray(targets)

    def train_step():
        p, m, v, step, loss = jitted(state["p"], state["m"], state["v"], state["step"], idx, targets)
        state.update(p=p, m=m, v=v, step=step)
        return loss.block_until_ready()

    return train_step

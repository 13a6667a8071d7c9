"""Exercise ``attention``: ``attention_backward(dout, q, k, v) -> (dq, dk, dv)``, causal scaled dot-product.

Forward: ``S = q kᵀ / sqrt(d)`` with the future masked to ``-inf``, ``P = softmax(S)``, ``out = P v``
(Vaswani et al. 2017; PyTorch's ``F.scaled_dot_product_attention(q, k, v, is_causal=True)``).
Backward, one matrix product per line (the softmax step is the softmax exercise)::

    dv = Pᵀ dout;  dP = dout vᵀ;  dS = P · (dP - Σ_j P·dP);  dq = dS k / sqrt(d);  dk = dSᵀ q / sqrt(d)
"""

from __future__ import annotations

import math

import numpy as np

from ...nn import functional as F
from ...ops.loss import mse_loss
from ...tensor import tensor
from .spec import Case, Exercise, Mistake, normal
from .train import TrainModel

SHAPES = """\
Causal scaled dot-product attention, one head per batch entry.

Forward (for reference):
    S = q @ k.transpose(0, 2, 1) / sqrt(d)           # (B, T, T)
    S[:, i, j] = -inf  for j > i                      # causal: no looking ahead
    P = softmax(S, axis=-1)                           # (B, T, T)
    out = P @ v                                       # (B, T, d)

Args:
    dout: (B, T, d) float64 (or float32): dL/dout
    q, k, v: (B, T, d)
Returns:
    dq, dk, dv: (B, T, d)
"""


def _forward(t):
    return F.scaled_dot_product_attention(t["q"], t["k"], t["v"], is_causal=True)


def _cases(rng):
    def inputs(B, T, d, std=1.0):
        return {"dout": normal(rng, (B, T, d)), "q": normal(rng, (B, T, d), std=std),
                "k": normal(rng, (B, T, d), std=std), "v": normal(rng, (B, T, d))}

    return [Case("random", inputs(2, 5, 4)),
            Case("peaked softmax", inputs(2, 4, 4, std=3.0)),
            Case("T = 1", inputs(2, 1, 3)),
            Case("d = 1", inputs(1, 6, 1))]


def pieces(i, causal=True, mask_upper=False, scale_power=1.0, full_softmax_bwd=True):
    q, k, v, dout = i["q"], i["k"], i["v"], i["dout"]
    T, d = q.shape[1], q.shape[2]
    s = 1.0 / math.sqrt(d)
    S = q @ k.transpose(0, 2, 1) * s                                        # (B, T, T)
    if causal:
        future = np.triu(np.ones((T, T), bool), 1)
        S = np.where(future.T if mask_upper else future, -np.inf, S)
    P = np.exp(S - S.max(-1, keepdims=True))
    P = P / P.sum(-1, keepdims=True)                                        # (B, T, T)
    dP = dout @ v.transpose(0, 2, 1)                                        # (B, T, T)
    dS = P * (dP - (P * dP).sum(-1, keepdims=True)) if full_softmax_bwd else P * dP
    f = s ** scale_power
    return {"P": P, "dS": dS, "dq": dS @ k * f, "dk": dS.transpose(0, 2, 1) @ q * f,
            "dv": P.transpose(0, 2, 1) @ dout}


def _on(outs, **kw):
    return lambda i: {o: pieces(i, **kw)[o] for o in outs}


MISTAKES = (
    Mistake("forgot the causal mask", _on(("dq", "dk", "dv"), causal=False)),
    Mistake("masked the wrong triangle (the past instead of the future)", _on(("dq", "dk", "dv"), mask_upper=True)),
    Mistake("forgot the 1/sqrt(d) scale in dq and dk", _on(("dq", "dk"), scale_power=0.0)),
    Mistake("applied the 1/sqrt(d) scale twice in dq and dk", _on(("dq", "dk"), scale_power=2.0)),
    Mistake("softmax backward without the Σ P·dP term", _on(("dq", "dk"), full_softmax_bwd=False)),
    Mistake("dv = P dout (P not transposed)", lambda i: {"dv": pieces(i)["P"] @ i["dout"]}),
    Mistake("dk = dS q (dS not transposed)", lambda i: {"dk": pieces(i)["dS"] @ i["q"] / math.sqrt(i["q"].shape[2])}),
    Mistake("the sign of dq is flipped", lambda i: {"dq": -pieces(i)["dq"]}),
    Mistake("dq = dS v (v where k belongs)", lambda i: {"dq": pieces(i)["dS"] @ i["v"] / math.sqrt(i["q"].shape[2])}),
)


def _model(rng):
    B, T, D = 8, 6, 8
    X = normal(rng, (B, T, D))                                 # (B, T, D)
    Y = np.cumsum(X, axis=1) / np.arange(1, T + 1)[:, None]    # (B, T, D) the running mean: causal
    params = {"wq": normal(rng, (D, D), std=0.3), "wk": normal(rng, (D, D), std=0.3),
              "wv": normal(rng, (D, D), std=0.3), "wo": normal(rng, (D, D), std=0.3)}

    def loss(op, P):
        x = tensor(X)
        out = op({"q": x @ P["wq"], "k": x @ P["wk"], "v": x @ P["wv"]})     # (B, T, D)
        return mse_loss(out @ P["wo"], tensor(Y))

    return TrainModel(params, loss)


EXERCISE = Exercise(
    name="attention", function="attention_backward", args=("dout", "q", "k", "v"), outputs=("dq", "dk", "dv"),
    wrt=("q", "k", "v"), shapes=SHAPES,
    derivation="matrix products and the softmax exercise (Vaswani et al. 2017; FlashAttention-2's backward, Alg. 2)",
    cases=_cases, forward=_forward, model=_model, mistakes=MISTAKES,
)

"""Exercise ``group_norm``: ``group_norm_backward(dy, x, num_groups, weight, eps) -> (dx, dweight, dbias)``.

GroupNorm normalizes each sample's channels in ``num_groups`` groups of ``C / num_groups`` channels
(all positions ``L`` of them together); ``weight`` and ``bias`` are per channel. Inside a group ``dx``
has LayerNorm's three terms (norm_common.py; Wu & He 2018).
"""

from __future__ import annotations

import numpy as np

from ...nn import functional as F
from ...ops.loss import mse_loss
from ...tensor import tensor
from .norm_common import group_terms, norm_hints, norm_mistakes, norm_terms
from .spec import Case, Exercise, normal
from .train import TrainModel

SHAPES = """\
GroupNorm: x (N, C, L) in G = num_groups groups of C // G channels.

Forward (for reference):
    xg   = x.reshape(N, G, C // G * L)                    # (N, G, M)
    mean = xg.mean(axis=2, keepdims=True)                 # (N, G, 1)
    var  = ((xg - mean)**2).mean(axis=2, keepdims=True)   # (N, G, 1)  biased
    rstd = 1 / sqrt(var + eps)                            # (N, G, 1)
    xhat = ((xg - mean) * rstd).reshape(N, C, L)          # (N, C, L)
    y    = xhat * weight[:, None] + bias[:, None]         # (N, C, L)

Args:
    dy:         (N, C, L) float64 (or float32): dL/dy
    x:          (N, C, L)
    num_groups: int, divides C
    weight:     (C,)  gamma, per channel
    eps:        float inside the square root (1e-5)
Returns:
    dx:      (N, C, L)
    dweight: (C,)
    dbias:   (C,)
"""


def _forward(t):
    return F.group_norm(t["x"], t["num_groups"], t["weight"], t["bias"], t["eps"])


def _cases(rng):
    def inputs(N, C, L, G, mean=0.0, std=1.0, eps=1e-5):
        return {"dy": normal(rng, (N, C, L)), "x": normal(rng, (N, C, L), mean, std), "num_groups": G,
                "weight": normal(rng, (C,), 1.0, 0.5), "bias": normal(rng, (C,)), "eps": eps}

    return [Case("random", inputs(2, 4, 3, 2)),
            Case("large mean", inputs(2, 4, 3, 2, mean=1e4), h=1e-4),
            Case("tiny variance", inputs(2, 4, 3, 2, std=1e-3, eps=1e-4), h=1e-8),
            Case("one value per group", inputs(3, 2, 1, 2)),
            Case("C=6 G=3, eps=1e-3", inputs(3, 6, 5, 3, eps=1e-3))]  # nothing hard-coded


def pieces(inp, unbiased=False, eps_outside=False, weight=True):
    """The three dx terms inside each group, back in ``(N, C, L)``, and the parameter gradients."""
    x, dy, G = inp["x"], inp["dy"], inp["num_groups"]
    N, C, L = x.shape
    dxhat = dy * inp["weight"][:, None] if weight else dy                           # (N, C, L)
    xhat, rstd, t1, t2, t3 = group_terms(x.reshape(N, G, -1), dxhat.reshape(N, G, -1), 2, inp["eps"],
                                         unbiased, eps_outside)                     # (N, G, M)
    back = {k: v.reshape(N, C, L) for k, v in (("t1", t1), ("t2", t2), ("t3", t3), ("xhat", xhat))}
    rstd_c = np.broadcast_to(rstd, xhat.shape).reshape(N, C, L)                    # (N, C, L)
    return {**back, "rstd": rstd_c, "n": C // G * L, "m": N * L,
            "dweight": (dy * back["xhat"]).sum(axis=(0, 2)), "dbias": dy.sum(axis=(0, 2)),
            "dweight_x": (dy * x).sum(axis=(0, 2))}


def _model(rng):
    X = normal(rng, (32, 8, 4))                                 # (32, 8, 4) fixed data
    Y = np.tanh(X.mean(axis=2) @ normal(rng, (8, 3)))          # (32, 3)
    params = {"w1": normal(rng, (8, 8), std=0.4), "weight": np.ones(8), "bias": np.zeros(8),
              "w2": normal(rng, (8, 3), std=0.3)}

    def loss(op, P):
        h = (tensor(X).transpose(1, 2) @ P["w1"]).transpose(1, 2).tanh()  # (32, 8, 4); tanh: see layer_norm.py
        z = op({"x": h, "num_groups": 2, "weight": P["weight"], "bias": P["bias"], "eps": 1e-5})  # (32, 8, 4)
        return mse_loss(z.tanh().mean(2) @ P["w2"], tensor(Y))

    return TrainModel(params, loss)


EXERCISE = Exercise(
    name="group_norm", function="group_norm_backward", args=("dy", "x", "num_groups", "weight", "eps"),
    outputs=("dx", "dweight", "dbias"), wrt=("x", "weight", "bias"), shapes=SHAPES,
    derivation="docs/layernorm_backward.md (the same three terms, inside each group); Wu & He 2018",
    cases=_cases, forward=_forward, model=_model, terms=norm_terms(pieces), mistakes=norm_mistakes(pieces),
    hints=norm_hints(pieces),
)

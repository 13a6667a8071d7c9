"""Exercise ``layer_norm``: ``layer_norm_backward(dy, x, weight, eps) -> (dx, dweight, dbias)``.

The forward is ``y = (x - mean) · rstd · weight + bias`` over the last dim, ``rstd = 1/sqrt(var + eps)``
with the biased variance (docs/layernorm_backward.md). The right ``dx`` has three terms, one per
path from ``x`` to the loss; the grader fits the student's ``dx`` against them to name the wrong one.
"""

from __future__ import annotations

import numpy as np

from ...nn import functional as F
from ...ops.loss import mse_loss
from ...tensor import tensor
from .norm_common import (
    affine_inputs,
    group_terms,
    norm_hints,
    norm_mistakes,
    norm_probes,
    norm_terms,
)
from .spec import Case, Exercise, normal
from .train import TrainModel

SHAPES = """\
LayerNorm over the last dim, training or not (it has no running statistics).

Forward (for reference):
    mean = x.mean(axis=1, keepdims=True)                 # (N, 1)
    var  = ((x - mean)**2).mean(axis=1, keepdims=True)   # (N, 1)  biased: divide by D
    rstd = 1 / sqrt(var + eps)                           # (N, 1)
    xhat = (x - mean) * rstd                             # (N, D)
    y    = xhat * weight + bias                          # (N, D)

Args:
    dy:     (N, D) float64 (or float32): dL/dy, the upstream gradient
    x:      (N, D) the input of the forward
    weight: (D,)   gamma
    eps:    float  inside the square root (1e-5)
Returns:
    dx:      (N, D)
    dweight: (D,)
    dbias:   (D,)
"""


def _forward(t):
    D = t["x"].shape[-1]
    return F.layer_norm(t["x"], (D,), t["weight"], t["bias"], t["eps"])


def _cases(rng):
    def inputs(N, D, mean=0.0, std=1.0, eps=1e-5):
        return affine_inputs(rng, N, D, mean, std, eps)

    # the last case has another N and D (neither a multiple of the first's) and another eps: an answer
    # that loops over the first 4 rows, divides by 8 or hard-codes eps = 1e-5 is wrong there
    return [Case("random", inputs(4, 8)),
            Case("large mean", inputs(4, 8, mean=1e4), h=1e-4),
            Case("tiny variance", inputs(4, 8, std=1e-3, eps=1e-4), h=1e-8),
            Case("D = 1", inputs(5, 1)),
            Case("N=7 D=5 eps=1e-3", inputs(7, 5, eps=1e-3))]


def pieces(inp, unbiased=False, eps_outside=False, weight=True):
    """The backward's three dx terms and the parameter gradients, as NumPy arrays (norm_common.py)."""
    x, dy = inp["x"], inp["dy"]
    dxhat = dy * inp["weight"] if weight else dy                                    # (N, D)
    xhat, rstd, t1, t2, t3 = group_terms(x, dxhat, 1, inp["eps"], unbiased, eps_outside)
    return {"t1": t1, "t2": t2, "t3": t3, "rstd": rstd, "n": x.shape[1], "m": x.shape[0],
            "dweight": (dy * xhat).sum(axis=0), "dbias": dy.sum(axis=0), "dweight_x": (dy * x).sum(axis=0)}


def _model(rng):
    X = normal(rng, (64, 8))                                  # (64, 8) fixed data
    Y = np.tanh(X @ normal(rng, (8, 4)))                       # (64, 4) targets
    params = {"w1": normal(rng, (8, 16), std=0.5), "weight": np.ones(16), "bias": np.zeros(16),
              "w2": normal(rng, (16, 4), std=0.3)}

    def loss(op, P):
        h = (tensor(X) @ P["w1"]).tanh()  # (64, 16); tanh: LayerNorm ignores a shift of a linear layer's rows
        z = op({"x": h, "weight": P["weight"], "bias": P["bias"], "eps": 1e-5})  # (64, 16)
        return mse_loss(z @ P["w2"], tensor(Y))

    return TrainModel(params, loss)


EXERCISE = Exercise(
    name="layer_norm", function="layer_norm_backward", args=("dy", "x", "weight", "eps"),
    outputs=("dx", "dweight", "dbias"), wrt=("x", "weight", "bias"), shapes=SHAPES,
    derivation="docs/layernorm_backward.md (the three terms of dx); llm.c doc/layernorm/layernorm.md",
    cases=_cases, forward=_forward, model=_model, terms=norm_terms(pieces), mistakes=norm_mistakes(pieces),
    hints=norm_hints(pieces), probes=norm_probes(1, "row"),
)

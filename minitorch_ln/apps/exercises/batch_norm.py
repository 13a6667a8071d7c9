"""Exercise ``batch_norm``: ``batch_norm_backward(dy, x, weight, eps) -> (dx, dweight, dbias)``, training mode.

In training mode BatchNorm normalizes each feature (column) by the batch's own mean and biased
variance, so ``dx`` has LayerNorm's three terms with the roles of rows and columns swapped
(norm_common.py; Ioffe & Szegedy 2015, section 3).
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
BatchNorm1d in training mode: statistics over the batch (axis 0), one per feature.

Forward (for reference):
    mean = x.mean(axis=0, keepdims=True)                 # (1, D)
    var  = ((x - mean)**2).mean(axis=0, keepdims=True)   # (1, D)  biased: divide by N
    rstd = 1 / sqrt(var + eps)                           # (1, D)
    xhat = (x - mean) * rstd                             # (N, D)
    y    = xhat * weight + bias                          # (N, D)

Args:
    dy:     (N, D) float64 (or float32): dL/dy
    x:      (N, D) the input, N >= 2
    weight: (D,)   gamma
    eps:    float  inside the square root (1e-5)
Returns:
    dx:      (N, D)
    dweight: (D,)
    dbias:   (D,)
"""


def _forward(t):
    return F.batch_norm(t["x"], None, None, t["weight"], t["bias"], training=True, eps=t["eps"])


def _cases(rng):
    def inputs(N, D, mean=0.0, std=1.0, eps=1e-5):
        return affine_inputs(rng, N, D, mean, std, eps)

    return [Case("random", inputs(8, 4)),
            Case("large mean", inputs(8, 4, mean=1e4), h=1e-4),
            Case("tiny variance", inputs(8, 4, std=1e-3, eps=1e-4), h=1e-8),
            Case("N = 2, D = 1", inputs(2, 1)),
            Case("N=5 D=3 eps=1e-3", inputs(5, 3, eps=1e-3))]  # another shape and eps: nothing hard-coded


def pieces(inp, unbiased=False, eps_outside=False, weight=True):
    """The three dx terms (over the batch axis) and the parameter gradients."""
    x, dy = inp["x"], inp["dy"]
    dxhat = dy * inp["weight"] if weight else dy                                    # (N, D)
    xhat, rstd, t1, t2, t3 = group_terms(x, dxhat, 0, inp["eps"], unbiased, eps_outside)
    return {"t1": t1, "t2": t2, "t3": t3, "rstd": rstd, "n": x.shape[0], "m": x.shape[0],
            "dweight": (dy * xhat).sum(axis=0), "dbias": dy.sum(axis=0), "dweight_x": (dy * x).sum(axis=0)}


def _model(rng):
    X = normal(rng, (64, 8), 3.0, 2.0)                         # (64, 8) fixed data, off-centre
    Y = np.tanh(X @ normal(rng, (8, 4), std=0.3))              # (64, 4)
    params = {"w1": normal(rng, (8, 16), std=0.5), "weight": np.ones(16), "bias": np.zeros(16),
              "w2": normal(rng, (16, 4), std=0.3)}

    def loss(op, P):
        h = (tensor(X) @ P["w1"]).tanh()  # (64, 16); tanh: BatchNorm ignores a shift of a linear layer's columns
        z = op({"x": h, "weight": P["weight"], "bias": P["bias"], "eps": 1e-5})  # (64, 16)
        return mse_loss(z.tanh() @ P["w2"], tensor(Y))

    return TrainModel(params, loss)


EXERCISE = Exercise(
    name="batch_norm", function="batch_norm_backward", args=("dy", "x", "weight", "eps"),
    outputs=("dx", "dweight", "dbias"), wrt=("x", "weight", "bias"), shapes=SHAPES,
    derivation="docs/layernorm_backward.md (the same three terms, over the batch axis); Ioffe & Szegedy 2015",
    cases=_cases, forward=_forward, model=_model, terms=norm_terms(pieces), mistakes=norm_mistakes(pieces),
    hints=norm_hints(pieces), probes=norm_probes(0, "column"),
)

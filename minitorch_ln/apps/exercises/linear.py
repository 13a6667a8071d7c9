"""Exercise ``linear``: ``linear_backward(dy, x, weight) -> (dx, dweight, dbias)``.

``y = x @ weight.T + bias`` (PyTorch's ``F.linear``: ``weight`` is ``(out, in)``), so
``dx = dy @ weight``, ``dweight = dy.T @ x``, ``dbias = Σ_rows dy`` (CS231n, "Derivatives,
Backpropagation, and Vectorization"). The shapes alone pin down each product; the grader also runs a
square case where a transposed answer has the right shape.
"""

from __future__ import annotations

import numpy as np

from ...nn import functional as F
from ...ops.loss import mse_loss
from ...tensor import tensor
from .spec import Case, Exercise, Mistake, normal
from .train import TrainModel

SHAPES = """\
A fully connected layer, PyTorch's layout (weight is (out, in)).

Forward (for reference):
    y = x @ weight.T + bias          # (N, out)

Args:
    dy:     (N, out) float64 (or float32): dL/dy
    x:      (N, in)
    weight: (out, in)
Returns:
    dx:      (N, in)
    dweight: (out, in)
    dbias:   (out,)
"""


def _forward(t):
    return F.linear(t["x"], t["weight"], t["bias"])


def _cases(rng):
    def inputs(N, n_in, n_out, scale=1.0):
        return {"dy": normal(rng, (N, n_out)), "x": normal(rng, (N, n_in), std=scale),
                "weight": normal(rng, (n_out, n_in)), "bias": normal(rng, (n_out,))}

    return [Case("random, square weight", inputs(5, 4, 4)),
            Case("square, large values", inputs(3, 3, 3, scale=1e3), h=1e-4),
            Case("one row", inputs(1, 4, 4)),
            Case("in != out", inputs(5, 3, 6))]


def _right(i):
    return {"dx": i["dy"] @ i["weight"], "dweight": i["dy"].T @ i["x"], "dbias": i["dy"].sum(0)}


MISTAKES = (
    Mistake("dweight transposed (x.T @ dy)", lambda i: {"dweight": (i["x"].T @ i["dy"])}),
    Mistake("dx with the weight transposed (dy @ weight.T)", lambda i: {"dx": i["dy"] @ i["weight"].T}),
    Mistake("dbias is a mean over rows where a sum belongs", lambda i: {"dbias": i["dy"].mean(0)}),
    Mistake("dweight is a mean over rows where a sum belongs", lambda i: {"dweight": _right(i)["dweight"] / len(i["x"])}),
    Mistake("the sign of dx is flipped", lambda i: {"dx": -_right(i)["dx"]}),
    Mistake("the sign of dweight is flipped", lambda i: {"dweight": -_right(i)["dweight"]}),
    Mistake("dbias is zero (forgotten)", lambda i: {"dbias": np.zeros_like(i["bias"])}),
    Mistake("dx used x where weight belongs (dy @ x ...)", lambda i: {"dx": i["dy"] @ i["x"].T @ i["x"]}),
)


def _model(rng):
    X = normal(rng, (64, 8))                                  # (64, 8)
    Y = np.tanh(X @ normal(rng, (8, 4)))                       # (64, 4)
    params = {"w1": normal(rng, (16, 8), std=0.4), "b1": np.zeros(16), "w2": normal(rng, (4, 16), std=0.3),
              "b2": np.zeros(4)}

    def loss(op, P):
        h = op({"x": tensor(X), "weight": P["w1"], "bias": P["b1"]}).tanh()     # (64, 16)
        return mse_loss(op({"x": h, "weight": P["w2"], "bias": P["b2"]}), tensor(Y))

    return TrainModel(params, loss)


EXERCISE = Exercise(
    name="linear", function="linear_backward", args=("dy", "x", "weight"), outputs=("dx", "dweight", "dbias"),
    wrt=("x", "weight", "bias"), shapes=SHAPES,
    derivation="CS231n, 'Derivatives, Backpropagation, and Vectorization' (the matrix-product rule)",
    cases=_cases, forward=_forward, model=_model, mistakes=MISTAKES,
)

"""Exercise ``softmax``: ``softmax_backward(dy, x) -> dx``, softmax over the last dim.

With ``y = softmax(x)`` the Jacobian is ``diag(y) - y yᵀ`` per row, so (CS231n; Goodfellow et al.
6.2.2.3)::

    dx = y · dy  -  y · Σ_j (y_j · dy_j)
         term 1     term 2: through the normalizer Σ exp
"""

from __future__ import annotations

import numpy as np

from ...nn import functional as F
from ...ops.loss import mse_loss
from ...tensor import tensor
from .spec import Case, Exercise, Mistake, normal
from .train import TrainModel

TERM1 = "term 1 (y·dy: the diagonal of the Jacobian)"
TERM2 = "term 2 (-y·Σ(y·dy): through the normalizer)"

SHAPES = """\
Softmax over the last dim.

Forward (for reference):
    e = np.exp(x - x.max(axis=1, keepdims=True))   # (N, D), shifted: no overflow
    y = e / e.sum(axis=1, keepdims=True)           # (N, D)

Args:
    dy: (N, D) float64 (or float32): dL/dy
    x:  (N, D) the logits
Returns:
    dx: (N, D)
"""


def _forward(t):
    return F.softmax(t["x"], -1)


def _cases(rng):
    def inputs(N, D, mean=0.0, std=1.0):
        return {"dy": normal(rng, (N, D)), "x": normal(rng, (N, D), mean, std)}

    return [Case("random", inputs(4, 6)),
            Case("large logits", inputs(4, 6, std=20.0), h=1e-6),
            Case("shifted by 1e3", inputs(4, 6, mean=1e3), h=1e-5),
            Case("D = 1", inputs(5, 1)),
            Case("N = 7, D = 5", inputs(7, 5))]  # another N and D: an answer that loops over 4 rows is wrong


def softmax_np(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))   # (N, D)
    return e / e.sum(axis=axis, keepdims=True)


def _pieces(inp):
    y, dy = softmax_np(inp["x"]), inp["dy"]
    return {"y": y, "t1": y * dy, "t2": -y * (y * dy).sum(axis=1, keepdims=True)}


def _terms(inp):
    p = _pieces(inp)
    return {"dx": {TERM1: p["t1"], TERM2: p["t2"]}}


def _hints(inp):
    D = inp["x"].shape[1]
    return {round(1.0 / D, 3): f"a mean over D = {D} where a sum belongs"}


def _on(fn):
    return lambda inp: {"dx": fn(_pieces(inp), inp)}


MISTAKES = (
    Mistake("forgot the path through the normalizer (term 2)", _on(lambda p, i: p["t1"])),
    Mistake("the sign of term 2 is flipped", _on(lambda p, i: p["t1"] - p["t2"])),
    Mistake("the whole dx has the wrong sign", _on(lambda p, i: -p["t1"] - p["t2"])),
    Mistake("a mean where the sum belongs in term 2", _on(lambda p, i: p["t1"] + p["t2"] / i["x"].shape[1])),
    Mistake("only the diagonal of the Jacobian: y·(1 - y)·dy", _on(lambda p, i: p["y"] * (1 - p["y"]) * i["dy"])),
    Mistake("forgot y in front: dy - Σ(y·dy)", _on(lambda p, i: i["dy"] - (p["y"] * i["dy"]).sum(1, keepdims=True))),
    Mistake("used x where y belongs", _on(lambda p, i: i["x"] * i["dy"] - i["x"] * (i["x"] * i["dy"]).sum(1, keepdims=True))),
    Mistake("summed over the wrong axis (the batch)", _on(lambda p, i: p["t1"] - p["y"] * (p["y"] * i["dy"]).sum(0, keepdims=True))),
    Mistake("Σ dy where Σ y·dy belongs", _on(lambda p, i: p["t1"] - p["y"] * i["dy"].sum(1, keepdims=True))),
    Mistake("the log-softmax backward (dy - y·Σ dy)", _on(lambda p, i: i["dy"] - p["y"] * i["dy"].sum(1, keepdims=True))),
)


def _model(rng):
    X = normal(rng, (64, 8))                                  # (64, 8)
    Y = softmax_np(X @ normal(rng, (8, 5)))                    # (64, 5) target distributions
    params = {"w1": normal(rng, (8, 5), std=0.3)}

    def loss(op, P):
        return mse_loss(op({"x": tensor(X) @ P["w1"]}), tensor(Y)) * 100.0

    return TrainModel(params, loss)


EXERCISE = Exercise(
    name="softmax", function="softmax_backward", args=("dy", "x"), outputs=("dx",), wrt=("x",), shapes=SHAPES,
    derivation="the Jacobian diag(y) - y yᵀ (CS231n notes; Goodfellow et al., Deep Learning, 6.2.2.3)",
    cases=_cases, forward=_forward, model=_model, terms=_terms, mistakes=MISTAKES, hints=_hints,
)

"""Exercise ``embedding``: ``embedding_backward(dy, indices, weight) -> dweight``.

``y = weight[indices]``: row ``i`` of ``dweight`` is the sum of ``dy`` over the positions whose
index is ``i`` (zero for rows never looked up). Indices repeat, and ``dweight[indices] += dy``
with NumPy fancy indexing keeps only one of the repeats; ``np.add.at`` adds them all.
"""

from __future__ import annotations

import numpy as np

from ...nn import functional as F
from ...ops.loss import mse_loss
from ...tensor import tensor
from .spec import Case, Exercise, Mistake, normal
from .train import TrainModel

SHAPES = """\
An embedding lookup (a table of V vectors of size D).

Forward (for reference):
    y = weight[indices]              # (N, D)

Args:
    dy:      (N, D) float64 (or float32): dL/dy
    indices: (N,) int64 in [0, V), repeats allowed
    weight:  (V, D) the table (only its shape and dtype matter here)
Returns:
    dweight: (V, D)
"""


def _forward(t):
    return F.embedding(t["indices"], t["weight"])


def _cases(rng):
    def inputs(indices, V, D):
        indices = np.asarray(indices, dtype=np.int64)
        return {"dy": normal(rng, (len(indices), D)), "indices": indices, "weight": normal(rng, (V, D))}

    return [Case("random, with repeats", inputs(rng.integers(0, 6, size=10), 6, 3)),
            Case("one index, repeated", inputs([2, 2, 2, 2], 4, 2)),
            Case("no repeats", inputs(rng.permutation(5), 5, 3)),
            Case("one lookup", inputs([0], 3, 4))]


def _right(i):
    dw = np.zeros_like(i["weight"])
    np.add.at(dw, i["indices"], i["dy"])
    return dw


def _last_wins(i):
    dw = np.zeros_like(i["weight"])
    dw[i["indices"]] = i["dy"]
    return dw


def _counts(i):
    return np.bincount(i["indices"], minlength=len(i["weight"]))[:, None]


MISTAKES = (
    Mistake("repeated indices not accumulated (dweight[indices] += dy keeps one)", lambda i: {"dweight": _last_wins(i)}),
    Mistake("a mean over repeats where the sum belongs",
            lambda i: {"dweight": _right(i) / np.maximum(_counts(i), 1)}),
    Mistake("the sign is flipped", lambda i: {"dweight": -_right(i)}),
    Mistake("rows never looked up are not zero (they hold the weight)",
            lambda i: {"dweight": np.where(_counts(i) > 0, _right(i), i["weight"])}),
    Mistake("scaled by the count of each index (accumulated twice)", lambda i: {"dweight": _right(i) * _counts(i)}),
    Mistake("every row gets Σ dy", lambda i: {"dweight": np.broadcast_to(i["dy"].sum(0), i["weight"].shape).copy()}),
)


def _model(rng):
    V, D = 12, 6
    idx = rng.integers(0, V, size=48)                          # (48,) with repeats
    Y = normal(rng, (V, 2))[idx]                               # (48, 2) a target per token
    params = {"weight": normal(rng, (V, D), std=0.5), "w": normal(rng, (D, 2), std=0.4)}

    def loss(op, P):
        return mse_loss(op({"indices": tensor(idx), "weight": P["weight"]}) @ P["w"], tensor(Y))

    return TrainModel(params, loss, lr=0.01)


EXERCISE = Exercise(
    name="embedding", function="embedding_backward", args=("dy", "indices", "weight"), outputs=("dweight",),
    wrt=("weight",), shapes=SHAPES,
    derivation="a lookup is a one-hot matrix product, so dweight = onehot(indices).T @ dy (np.add.at)",
    cases=_cases, forward=_forward, model=_model, mistakes=MISTAKES,
)

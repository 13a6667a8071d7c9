"""Exercise ``rms_norm``: ``rms_norm_backward(dy, x, weight, eps) -> (dx, dweight)``.

RMSNorm (Zhang & Sennrich 2019) scales each row by ``rstd = 1/sqrt(mean(x²) + eps)``, with no mean
subtracted and no bias, so ``dx`` has two terms, LayerNorm's terms 1 and 3::

    dx = rstd · dxhat  -  rstd · xhat · mean(dxhat · xhat),   xhat = x · rstd,  dxhat = dy · weight
"""

from __future__ import annotations

import numpy as np

from ...nn import functional as F
from ...ops.loss import mse_loss
from ...tensor import tensor
from .spec import Case, Exercise, Mistake, normal
from .train import TrainModel

TERM1 = "term 1 (rstd·dxhat: rstd held fixed)"
TERM2 = "term 2 (-rstd·xhat·mean(dxhat·xhat): through rstd)"

SHAPES = """\
RMSNorm over the last dim (no mean subtracted, no bias).

Forward (for reference):
    ms   = (x**2).mean(axis=1, keepdims=True)   # (N, 1)
    rstd = 1 / sqrt(ms + eps)                   # (N, 1)
    xhat = x * rstd                             # (N, D)
    y    = xhat * weight                        # (N, D)

Args:
    dy:     (N, D) float64 (or float32): dL/dy
    x:      (N, D)
    weight: (D,)
    eps:    float inside the square root (1e-6 here)
Returns:
    dx:      (N, D)
    dweight: (D,)
"""


def _forward(t):
    return F.rms_norm(t["x"], (t["x"].shape[-1],), t["weight"], t["eps"])


def _cases(rng):
    def inputs(N, D, mean=0.0, std=1.0, eps=1e-6):
        return {"dy": normal(rng, (N, D)), "x": normal(rng, (N, D), mean, std),
                "weight": normal(rng, (D,), 1.0, 0.5), "eps": eps}

    return [Case("random", inputs(4, 8)),
            Case("large mean", inputs(4, 8, mean=1e4), h=1e-4),
            Case("tiny values", inputs(4, 8, std=1e-3, eps=1e-5), h=1e-8),
            Case("D = 1", inputs(5, 1)),
            Case("N=7 D=5 eps=1e-3", inputs(7, 5, eps=1e-3))]  # another shape and eps: nothing hard-coded


def pieces(inp, weight=True, eps_outside=False, sq_mean=False):
    x, dy = inp["x"], inp["dy"]
    D = x.shape[1]
    ms = (x ** 2).mean(axis=1, keepdims=True)                                     # (N, 1)
    rstd = 1.0 / (np.sqrt(ms) + inp["eps"]) if eps_outside else 1.0 / np.sqrt(ms + inp["eps"])
    xhat = x * rstd                                                                # (N, D)
    dxhat = dy * inp["weight"] if weight else dy                                   # (N, D)
    t1 = rstd * dxhat                                                              # (N, D)
    t2 = -rstd * xhat * (dxhat * xhat).mean(axis=1, keepdims=True)                 # (N, D)
    return {"t1": t1, "t2": t2, "rstd": rstd, "D": D, "dweight": (dy * xhat).sum(axis=0), "xhat": xhat}


def _terms(inp):
    p = pieces(inp)
    return {"dx": {TERM1: p["t1"], TERM2: p["t2"]}, "dweight": {"Σ_rows dy·xhat": p["dweight"]}}


def _hints(inp):
    N, D = inp["x"].shape
    return {float(D): f"a sum where a mean over D = {D} belongs", round(1.0 / N, 3): "a mean where a sum belongs"}


def _on(fn, **kw):
    return lambda inp: fn(pieces(inp, **kw), inp)


MISTAKES = (
    Mistake("forgot the path through rstd (term 2)", _on(lambda p, i: {"dx": p["t1"]})),
    Mistake("the sign of the path through rstd (term 2) is flipped", _on(lambda p, i: {"dx": p["t1"] - p["t2"]})),
    Mistake("the whole dx has the wrong sign", _on(lambda p, i: {"dx": -p["t1"] - p["t2"]})),
    Mistake("a sum where a mean belongs in term 2", _on(lambda p, i: {"dx": p["t1"] + p["D"] * p["t2"]})),
    Mistake("eps outside the square root", _on(lambda p, i: {"dx": p["t1"] + p["t2"], "dweight": p["dweight"]},
                                               eps_outside=True)),
    Mistake("forgot the weight (dxhat = dy)", _on(lambda p, i: {"dx": p["t1"] + p["t2"]}, weight=False)),
    Mistake("forgot rstd in front of dx", _on(lambda p, i: {"dx": (p["t1"] + p["t2"]) / p["rstd"]})),
    Mistake("a LayerNorm backward: subtracted the mean too",
            _on(lambda p, i: {"dx": p["t1"] + p["t2"] - p["t1"].mean(1, keepdims=True)})),
    Mistake("dweight = Σ dy·x (x where xhat belongs)", _on(lambda p, i: {"dweight": (i["dy"] * i["x"]).sum(0)})),
    Mistake("dweight = Σ dy (forgot xhat)", _on(lambda p, i: {"dweight": i["dy"].sum(0)})),
    Mistake("a mean over rows where a sum belongs in dweight", _on(lambda p, i: {"dweight": p["dweight"] / len(i["x"])})),
)


def _model(rng):
    X = normal(rng, (64, 8))                                  # (64, 8)
    Y = np.tanh(X @ normal(rng, (8, 4)))                       # (64, 4)
    params = {"w1": normal(rng, (8, 16), std=0.5), "weight": np.ones(16), "w2": normal(rng, (16, 4), std=0.3)}

    def loss(op, P):
        z = op({"x": (tensor(X) @ P["w1"]).tanh(), "weight": P["weight"], "eps": 1e-6})   # (64, 16)
        return mse_loss(z @ P["w2"], tensor(Y))

    return TrainModel(params, loss)


EXERCISE = Exercise(
    name="rms_norm", function="rms_norm_backward", args=("dy", "x", "weight", "eps"),
    outputs=("dx", "dweight"), wrt=("x", "weight"), shapes=SHAPES,
    derivation="docs/layernorm_backward.md (terms 1 and 3; RMSNorm has no mean); Zhang & Sennrich 2019",
    cases=_cases, forward=_forward, model=_model, terms=_terms, mistakes=MISTAKES, hints=_hints,
)

"""Exercise ``cross_entropy``: ``cross_entropy_backward(dloss, logits, target) -> dlogits``.

``loss = mean_i( -log softmax(logits_i)[target_i] )`` (PyTorch's ``F.cross_entropy``, reduction
``"mean"``), so (CS231n's softmax classifier)::

    dlogits = dloss / N · softmax(logits)  -  dloss / N · onehot(target)
              term 1                          term 2
"""

from __future__ import annotations

import numpy as np

from ...nn import functional as F
from ...tensor import tensor
from .softmax import softmax_np
from .spec import Case, Exercise, Mistake, normal
from .train import TrainModel

TERM1 = "term 1 (softmax(logits)·dloss/N)"
TERM2 = "term 2 (-onehot(target)·dloss/N)"

SHAPES = """\
Cross-entropy of logits against class indices, averaged over the batch.

Forward (for reference):
    p    = softmax(logits, axis=1)                         # (N, C)
    loss = -np.log(p[np.arange(N), target]).mean()         # ()

Args:
    dloss:  () float64 0-d array (or float32): dL/dloss, the upstream gradient
    logits: (N, C)
    target: (N,) int64 class indices in [0, C)
Returns:
    dlogits: (N, C)
"""


def _forward(t):
    return F.cross_entropy(t["logits"], t["target"])


def _cases(rng):
    def inputs(N, C, std=1.0, mean=0.0):
        return {"dloss": normal(rng, ()), "logits": normal(rng, (N, C), mean, std),
                "target": rng.integers(0, C, size=N)}

    return [Case("random", inputs(5, 4)),
            Case("large logits", inputs(5, 4, std=30.0)),
            Case("shifted by 1e3", inputs(5, 4, mean=1e3), h=1e-5),
            Case("N = 1", inputs(1, 3)),
            Case("N = 7, C = 3", inputs(7, 3))]  # another N and C: nothing hard-coded


def _pieces(inp):
    z, t, g = inp["logits"], inp["target"], float(inp["dloss"])
    N, C = z.shape
    onehot = np.zeros((N, C))
    onehot[np.arange(N), t] = 1.0
    p = softmax_np(z)                                               # (N, C)
    return {"p": p, "onehot": onehot, "g": g, "N": N, "t1": g / N * p, "t2": -g / N * onehot}


def _terms(inp):
    p = _pieces(inp)
    return {"dlogits": {TERM1: p["t1"], TERM2: p["t2"]}}


def _hints(inp):
    N = inp["logits"].shape[0]
    return {float(N): f"forgot to divide by N = {N} (the mean)"}


def _on(fn):
    return lambda inp: {"dlogits": fn(_pieces(inp), inp)}


MISTAKES = (
    Mistake("forgot to divide by N (a sum where the mean belongs)", _on(lambda p, i: p["N"] * (p["t1"] + p["t2"]))),
    Mistake("forgot the one-hot term (term 2)", _on(lambda p, i: p["t1"])),
    Mistake("the sign is flipped (onehot - softmax)", _on(lambda p, i: -(p["t1"] + p["t2"]))),
    Mistake("forgot dloss (the upstream gradient)", _on(lambda p, i: (p["t1"] + p["t2"]) / p["g"])),
    Mistake("used the logits where softmax(logits) belongs", _on(lambda p, i: p["g"] / p["N"] * (i["logits"] - p["onehot"]))),
    Mistake("used log softmax where softmax belongs", _on(lambda p, i: p["g"] / p["N"] * (np.log(p["p"]) - p["onehot"]))),
    Mistake("divided by C instead of N", _on(lambda p, i: (p["t1"] + p["t2"]) * p["N"] / i["logits"].shape[1])),
    Mistake("only the target column gets a gradient (p - 1 there, 0 elsewhere)",
            _on(lambda p, i: p["g"] / p["N"] * (p["p"] - 1) * p["onehot"])),
)


def _model(rng):
    X = normal(rng, (64, 8))                                  # (64, 8)
    T = (X @ normal(rng, (8, 4))).argmax(axis=1)              # (64,) labels a linear model can learn
    params = {"w": normal(rng, (8, 4), std=0.1), "b": np.zeros(4)}

    def loss(op, P):
        return op({"logits": tensor(X) @ P["w"] + P["b"], "target": tensor(T)})

    return TrainModel(params, loss, lr=0.2)


EXERCISE = Exercise(
    name="cross_entropy", function="cross_entropy_backward", args=("dloss", "logits", "target"),
    outputs=("dlogits",), wrt=("logits",), shapes=SHAPES,
    derivation="softmax minus one-hot (CS231n notes, 'Softmax classifier'; Goodfellow et al. 6.2.2.3)",
    cases=_cases, forward=_forward, model=_model, terms=_terms, mistakes=MISTAKES, hints=_hints,
)

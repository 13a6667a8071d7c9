"""Exercise ``gelu``: ``gelu_backward(dy, x) -> dx``, the exact (erf) GELU.

``gelu(x) = x · Φ(x)`` with ``Φ`` the standard normal CDF (Hendrycks & Gimpel 2016), so::

    dx = dy · Φ(x)  +  dy · x · φ(x),    φ(x) = exp(-x²/2) / sqrt(2π)
         term 1        term 2
"""

from __future__ import annotations

import math

import numpy as np

from ...nn import functional as F
from ...ops.loss import mse_loss
from ...tensor import tensor
from .spec import Case, Exercise, Mistake, normal
from .train import TrainModel

TERM1 = "term 1 (dy·Φ(x))"
TERM2 = "term 2 (dy·x·φ(x): the derivative of Φ)"

SHAPES = """\
GELU, the exact form (approximate="none"), elementwise.

Forward (for reference):
    Phi = 0.5 * (1 + erf(x / sqrt(2)))    # (N, D), the standard normal CDF
    y   = x * Phi                         # (N, D)
(erf: math.erf elementwise, e.g. np.vectorize(math.erf), or scipy.special.erf)

Args:
    dy: (N, D) float64 (or float32): dL/dy
    x:  (N, D)
Returns:
    dx: (N, D)
"""

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _forward(t):
    return F.gelu(t["x"])


def _cases(rng):
    def inputs(shape, std=1.0):
        return {"dy": normal(rng, shape), "x": normal(rng, shape, std=std)}

    return [Case("random", inputs((4, 6), std=2.0)),
            Case("large |x|", inputs((4, 6), std=30.0)),
            Case("tiny |x|", inputs((4, 6), std=1e-4), h=1e-8),
            Case("one value", inputs((1, 1))),
            Case("shape (7, 5)", inputs((7, 5)))]  # another shape: an answer that loops over 4 rows is wrong


def _pieces(inp):
    x, dy = inp["x"], inp["dy"]
    Phi = 0.5 * (1.0 + _erf(x / math.sqrt(2.0)))              # (N, D)
    phi = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)     # (N, D)
    return {"Phi": Phi, "phi": phi, "t1": dy * Phi, "t2": dy * x * phi}


def _terms(inp):
    p = _pieces(inp)
    return {"dx": {TERM1: p["t1"], TERM2: p["t2"]}}


def _on(fn):
    return lambda inp: {"dx": fn(_pieces(inp), inp)}


def _tanh_form(x):
    c = math.sqrt(2.0 / math.pi)
    u = c * (x + 0.044715 * x ** 3)
    th = np.tanh(u)
    return 0.5 * (1 + th) + 0.5 * x * (1 - th ** 2) * c * (1 + 3 * 0.044715 * x ** 2)


def _sigmoid_form(x):
    s = 1.0 / (1.0 + np.exp(-1.702 * x))
    return s + 1.702 * x * s * (1 - s)


MISTAKES = (
    Mistake("forgot the derivative of Φ (term 2)", _on(lambda p, i: p["t1"])),
    Mistake("forgot Φ itself (term 1)", _on(lambda p, i: p["t2"])),
    Mistake("the sign of term 2 is flipped", _on(lambda p, i: p["t1"] - p["t2"])),
    Mistake("the whole dx has the wrong sign", _on(lambda p, i: -p["t1"] - p["t2"])),
    Mistake("the tanh approximation's derivative (approximate='tanh')", _on(lambda p, i: i["dy"] * _tanh_form(i["x"]))),
    Mistake("φ without 1/sqrt(2π)", _on(lambda p, i: p["t1"] + p["t2"] * math.sqrt(2 * math.pi))),
    Mistake("Φ from erf(x) without the 1/sqrt(2)",
            _on(lambda p, i: i["dy"] * 0.5 * (1 + _erf(i["x"])) + p["t2"])),
    Mistake("forgot dy (returned the local derivative)", _on(lambda p, i: (p["t1"] + p["t2"]) / i["dy"])),
    Mistake("the sigmoid approximation x·σ(1.702x)", _on(lambda p, i: i["dy"] * _sigmoid_form(i["x"]))),
)


def _model(rng):
    X = normal(rng, (64, 8))                                  # (64, 8)
    Y = np.sin(X @ normal(rng, (8, 4), std=0.5))               # (64, 4)
    params = {"w1": normal(rng, (8, 32), std=0.5), "w2": normal(rng, (32, 4), std=0.2)}

    def loss(op, P):
        return mse_loss(op({"x": tensor(X) @ P["w1"]}) @ P["w2"], tensor(Y))

    return TrainModel(params, loss)


EXERCISE = Exercise(
    name="gelu", function="gelu_backward", args=("dy", "x"), outputs=("dx",), wrt=("x",), shapes=SHAPES,
    derivation="the product rule on x·Φ(x) (Hendrycks & Gimpel 2016, 'Gaussian Error Linear Units')",
    cases=_cases, forward=_forward, model=_model, terms=_terms, mistakes=MISTAKES,
)

"""What an exercise is: the student's function, its inputs, the project's op it mirrors, and what goes wrong.

Each exercise module (``layer_norm.py``, ``softmax.py``, ...) builds one :class:`Exercise`. The
grader (``grading.py``) needs nothing else: it runs the project's own op (``forward``, the same
op ``nn`` uses) with autograd for the reference gradients, differentiates ``Σ dy·forward`` by
central differences in float64, and compares the student's arrays with both; ``terms`` and
``mistakes`` let it say *what* is wrong, from the numbers alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Case", "Exercise", "Mistake", "norm_stats", "normal"]


@dataclass(frozen=True)
class Mistake:
    """A known wrong answer: ``fn(inputs) -> {output: wrong array}`` for the outputs it changes."""

    name: str
    fn: Callable


@dataclass(frozen=True)
class Case:
    """One input the student's function is run on: ``inputs`` holds every argument of the op
    (arrays in float64, plus numbers such as ``eps``); ``h`` is the finite-difference step."""

    label: str
    inputs: dict
    h: float = 1e-6


@dataclass(frozen=True)
class Exercise:
    """One graded backward.

    Attributes:
        name: ``"layer_norm"``.
        function: the student's function name, ``"layer_norm_backward"``.
        args: the names passed to it, in order; ``args[0]`` is the upstream gradient.
        outputs: what it returns, in order (``("dx", "dweight", "dbias")``).
        wrt: for each output, the input it is the gradient of (``("x", "weight", "bias")``).
        shapes: the skeleton's docstring body: shapes, dtypes, the formula's source.
        derivation: where the math is derived (a path in ``docs/`` or a reference).
        cases: ``rng -> [Case]``: random and stress inputs (float64).
        forward: ``{name: Tensor or number} -> Tensor``: the project's op.
        terms: optional ``inputs -> {output: {term label: array}}``: the formula's terms, whose sum
            is the right answer.
        mistakes: the catalogue of known mistakes.
        model: ``rng -> TrainModel`` for ``--train`` (``train.py``).
        hints: optional ``inputs -> {coefficient: explanation}`` for :func:`fit_terms`.
        probes: optional ``(inputs, run) -> [sentence]``: calls the student's function (``run``) on
            inputs built to switch the formula's terms on and off (``norm_common.norm_probes``).
    """

    name: str
    function: str
    args: tuple
    outputs: tuple
    wrt: tuple
    shapes: str
    derivation: str
    cases: Callable
    forward: Callable
    model: Callable
    terms: Callable | None = None
    mistakes: tuple = field(default_factory=tuple)
    hints: Callable | None = None
    probes: Callable | None = None

    @property
    def signature(self) -> str:
        outs = self.outputs[0] if len(self.outputs) == 1 else "(" + ", ".join(self.outputs) + ")"
        return f"{self.function}({', '.join(self.args)}) -> {outs}"


def normal(rng, shape, mean=0.0, std=1.0):
    """``mean + std · N(0, 1)`` in float64, of ``shape``."""
    return mean + std * rng.standard_normal(shape)


def norm_stats(x, axis, eps, unbiased=False, eps_outside=False):
    """``(mean, rstd)`` over ``axis`` (kept), as the normalization exercises' forward computes them."""
    mean = x.mean(axis=axis, keepdims=True)
    n = np.prod([x.shape[a] for a in np.atleast_1d(axis)])
    with np.errstate(all="ignore"):  # the unbiased variance of one value is 0/0, as np.var(ddof=1) has it
        var = ((x - mean) ** 2).sum(axis=axis, keepdims=True) / (n - 1 if unbiased else n)
        rstd = 1.0 / (np.sqrt(var) + eps) if eps_outside else 1.0 / np.sqrt(var + eps)
    return mean, rstd

"""``exercise check NAME FILE --train``: train a small model with the student's backward inside the op.

:class:`StudentBackward` is a ``Function`` whose forward is the project's op and whose backward
calls the student's NumPy function. The exercise's small model (``Exercise.model``) is trained
twice for the same steps from the same initial weights and data, once with the project's op and
once with the student's backward; the two loss curves are drawn side by side (matplotlib, the
``plot`` extra) and summarized in text. A wrong backward shows as a curve that parts from the
reference.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...autograd.function import Function
from ...autograd.grad_mode import no_grad
from ...optim import SGD
from ...tensor import Tensor, tensor
from .grading import call_student, oracle_kernels

__all__ = ["StudentBackward", "TrainModel", "plot_curves", "student_op", "summarize", "train_both"]


@dataclass(frozen=True)
class TrainModel:
    """``params``: ``{name: float64 array}`` initial weights; ``loss(op, P) -> scalar Tensor``, where
    ``op`` takes the exercise's input dict (like ``Exercise.forward``) and ``P`` holds the weights
    as Tensors that require grad. ``lr``: the learning rate of SGD with momentum 0.9 (not Adam: Adam
    divides out a gradient's scale, so a backward off by a constant factor would train the same)."""

    params: dict
    loss: Callable
    lr: float = 0.05


class StudentBackward(Function):
    """Forward: the project's op. Backward: the student's NumPy function, on NumPy arrays."""

    @staticmethod
    def forward(ctx, *arrays, exercise, student, names, consts):
        ctx.exercise, ctx.student, ctx.names, ctx.consts = exercise, student, names, consts
        ctx.arrays = arrays  # kept as arrays: the student's backward reads NumPy, not Tensors
        with no_grad():
            T = {n: tensor(a) for n, a in zip(names, arrays)}
            y = exercise.forward({**T, **consts})
        return y.numpy()

    @staticmethod
    def backward(ctx, dy):
        ex = ctx.exercise
        inputs = {**dict(zip(ctx.names, ctx.arrays)), **ctx.consts, ex.args[0]: dy.numpy()}
        got = call_student(ex, ctx.student, inputs)  # the grader's reading of the answer: lists, shapes, exit()
        by_input = {w: got[o] for o, w in zip(ex.outputs, ex.wrt)}
        return tuple(tensor(by_input[n].astype(ctx.arrays[i].dtype)) if n in by_input else None
                     for i, n in enumerate(ctx.names))


def student_op(ex, fn):
    """``op(inputs) -> Tensor`` like ``ex.forward``, whose backward is the student's ``fn``."""

    def op(inputs):
        names = tuple(k for k, v in inputs.items() if isinstance(v, Tensor))
        consts = {k: v for k, v in inputs.items() if not isinstance(v, Tensor)}
        return StudentBackward.apply(*[inputs[n] for n in names], exercise=ex, student=fn, names=names, consts=consts)

    return op


def _train(model, op, steps):
    P = {k: tensor(v.copy(), requires_grad=True) for k, v in model.params.items()}
    opt = SGD(list(P.values()), lr=model.lr, momentum=0.9)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = model.loss(op, P)
        value = float(loss.item())
        losses.append(value)
        if not math.isfinite(value):
            break
        loss.backward()
        opt.step()
    return losses


def train_both(ex, fn, steps=200, seed=0):
    """``(reference losses, student losses, error)``: the same model trained with the project's op and
    with the student's backward; ``error`` is what the student's backward raised, if it did."""
    model = ex.model(np.random.default_rng(seed))
    with oracle_kernels():
        ref = _train(model, ex.forward, steps)
        try:
            mine, error = _train(model, student_op(ex, fn), steps), None
        except Exception as e:  # noqa: BLE001 - the student's code failing is a result, not a crash
            mine, error = [], f"{type(e).__name__}: {e}"
    return ref, mine, error


def summarize(ex, ref, mine, error=None) -> tuple[str, bool]:
    """A text summary of the two curves and whether they agree (within 1% of the reference, each step)."""
    lines = [f"--train: {ex.name}, {len(ref)} steps of SGD (momentum 0.9) on a small model, same start and data"]
    if error:
        lines.append(f"  your backward raised during training: {error}")
        return "\n".join(lines), False
    n = min(len(ref), len(mine))
    gap = [abs(a - b) / max(abs(a), 1e-12) for a, b in zip(ref[:n], mine[:n])]
    part = next((i for i, g in enumerate(gap) if g > 0.01), None)
    for step in sorted({0, n // 4, n // 2, 3 * n // 4, n - 1}):
        lines.append(f"  step {step:>4}: reference {ref[step]:.6g}   yours {mine[step]:.6g}")
    if len(mine) < len(ref):
        lines.append(f"  your loss became non-finite at step {len(mine) - 1}")
    same = part is None and len(mine) == len(ref)
    lines.append("  the curves agree (within 1% at every step)" if same else
                 f"  the curves part at step {part if part is not None else n - 1}")
    return "\n".join(lines), same


def plot_curves(ex, ref, mine, path) -> str:
    """Save the two loss curves to ``path`` (PNG); needs matplotlib (``pip install 'minitorch-ln[plot]'``)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("--train draws the loss curves with matplotlib: pip install 'minitorch-ln[plot]'") from None
    fig, (ax, gap_ax) = plt.subplots(1, 2, figsize=(10, 3.6))
    ax.plot(ref, label="reference (project's backward)", lw=2.5, color="0.6")
    ax.plot(mine, label=f"yours ({ex.function})", lw=1.2, color="tab:red")
    ax.set_xlabel("step")
    ax.set_ylabel("training loss")
    ax.set_yscale("log" if min(ref + mine, default=1) > 0 else "linear")
    ax.set_title(f"exercise {ex.name}: training with your backward")
    ax.legend()
    n = min(len(ref), len(mine))
    gap = [abs(a - b) / max(abs(a), 1e-300) for a, b in zip(ref[:n], mine[:n])]  # relative gap per step
    gap_ax.plot(range(n), [max(g, 1e-17) for g in gap], color="tab:red")
    gap_ax.axhline(0.01, color="0.5", ls="--", lw=1, label="1%: the curves part")
    gap_ax.set_yscale("log")
    gap_ax.set_xlabel("step")
    gap_ax.set_ylabel("|yours - reference| / reference")
    gap_ax.set_title("how far your curve is from the reference")
    gap_ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)

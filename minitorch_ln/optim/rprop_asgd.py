"""Rprop (Riedmiller & Braun, 1993) and ASGD (averaged SGD: Polyak & Juditsky, 1992), as ``torch.optim``.

Each update is the single-tensor (``foreach=False``) form of PyTorch's docstring pseudo-code, as
whole-array NumPy/CuPy arithmetic on ``p.array``, in place, with Python-float coefficients.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..backend import get_array_module
from ..tensor import Tensor
from .optimizer import Optimizer, check_nonnegative


def _scalar(value: float) -> float:
    """``value`` rounded as PyTorch keeps a scalar state (``_get_scalar_dtype()``: the default float dtype)."""
    return float(np.dtype(backend.default_float_dtype()).type(value))


class Rprop(Optimizer):
    """Resilient backpropagation: a step size per weight, grown by ``etas[1]`` while the gradient keeps its
    sign and shrunk by ``etas[0]`` when it flips (then that weight waits a step), as ``torch.optim.Rprop``::

        s = sign(g · g_prev);  η = etaplus (s > 0), etaminus (s < 0), 1 (s = 0)
        Δ ← clamp(Δ η, step_sizes[0], step_sizes[1])          (Δ starts at lr)
        g ← 0 where η = etaminus
        θ ← θ - sign(g) Δ;   g_prev ← g

    Uses the gradient's sign only (full-batch training). State: ``step``, ``prev`` (g_prev),
    ``step_size`` (Δ). ``foreach``, ``capturable`` change nothing.

    Raises:
        ValueError: ``lr`` negative, or not ``0 < etas[0] < 1 < etas[1]``.
    """

    def __init__(self, params, lr: float = 1e-2, etas: tuple = (0.5, 1.2), step_sizes: tuple = (1e-6, 50), *,
                 capturable: bool = False, foreach=None, maximize: bool = False, differentiable: bool = False):
        defaults = dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: dict) -> None:
        super()._check_hyperparameters(group)
        etaminus, etaplus = group["etas"]
        if not 0.0 < etaminus < 1.0 < etaplus:
            raise ValueError(f"Invalid eta values: {etaminus}, {etaplus}")

    def _update(self, p, grad, state: dict, group: dict) -> None:
        xp, param = get_array_module(p.array), p.array
        if not state:
            state.update(step=0, prev=self._zeros_like(p),
                         step_size=Tensor._from_op(xp.full_like(param, float(group["lr"]))))
        etaminus, etaplus = (float(e) for e in group["etas"])
        step_size_min, step_size_max = (float(s) for s in group["step_sizes"])
        state["step"] += 1
        if group["maximize"]:
            grad = -grad
        prev, step_size = state["prev"].array, state["step_size"].array
        sign = xp.sign(grad * prev)  # (*p.shape): the factor η, written in place as PyTorch does
        sign[sign > 0] = etaplus
        sign[sign < 0] = etaminus
        sign[sign == 0] = 1
        step_size *= sign
        xp.clip(step_size, step_size_min, step_size_max, out=step_size)
        grad = grad.copy()  # p.grad itself is left unchanged
        grad[sign == etaminus] = 0  # the sign flipped: no step for this weight now, and no flip next time
        param -= xp.sign(grad) * step_size
        prev[...] = grad


class ASGD(Optimizer):
    """Averaged SGD, as ``torch.optim.ASGD``: SGD with a decaying step, plus a running average ``ax`` of
    the iterates from step ``t0`` on (read it from ``optimizer.state[p]["ax"]``)::

        g ← g + λ_wd θ                          (if weight_decay ≠ 0)
        θ ← θ (1 - λ η);  θ ← θ - η g
        ax ← ax + μ (θ - ax)   (ax ← θ while μ = 1)
        η ← lr / (1 + λ lr t)^α;  μ ← 1 / max(1, t - t0)

    State: ``step``, ``eta`` (η), ``mu`` (μ), ``ax``. As in PyTorch, η and μ are scalars kept in the
    default float dtype (float32 unless :func:`set_default_dtype` says float64). ``foreach``,
    ``capturable`` change nothing.

    Raises:
        ValueError: ``lr`` or ``weight_decay`` negative.
    """

    def __init__(self, params, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75, t0: float = 1e6,
                 weight_decay: float = 0, foreach=None, maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False):
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: dict) -> None:
        super()._check_hyperparameters(group)
        check_nonnegative(group, "weight_decay")

    def _update(self, p, grad, state: dict, group: dict) -> None:
        if not state:
            state.update(step=0, eta=_scalar(group["lr"]), mu=_scalar(1.0), ax=self._zeros_like(p))
        param = p.array
        lr, lambd, alpha, t0 = (float(group[k]) for k in ("lr", "lambd", "alpha", "t0"))
        state["step"] += 1
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad + float(group["weight_decay"]) * param
        eta, mu, ax = state["eta"], state["mu"], state["ax"].array
        param *= 1 - lambd * eta  # decay term
        param += -eta * grad
        if mu != 1:
            ax += (param - ax) * mu
        else:
            ax[...] = param
        t = state["step"]
        state["eta"] = _scalar(lr / ((1 + lambd * lr * t) ** alpha))
        state["mu"] = _scalar(1 / max(1, t - t0))

    @staticmethod
    def _load_state_value(p, name, value):
        if name in ("eta", "mu"):  # 0-d tensors in PyTorch's state dicts, floats here
            return _scalar(value if isinstance(value, numbers.Number) else value.item())
        return Optimizer._load_state_value(p, name, value)

"""Per-coordinate adaptive step sizes: Adagrad, Adadelta and RMSprop, as ``torch.optim`` computes them.

Each update is the single-tensor (``foreach=False``) form of PyTorch's docstring pseudo-code, written
as whole-array NumPy/CuPy arithmetic on ``p.array`` (``xp = get_array_module(param)``), in place.
Coefficients are Python floats, so a float32 parameter is updated in float32 throughout.
State buffers have the parameter's shape, dtype and device; ``step`` is an int (PyTorch keeps a 0-d
tensor; :meth:`Optimizer.load_state_dict` takes either).
"""

from __future__ import annotations

from ..backend import get_array_module
from ..tensor import Tensor
from .optimizer import Optimizer, check_nonnegative


def lerp_(x, end, weight: float) -> None:
    """``x ← x + weight · (end - x)`` in place, with PyTorch's two-sided formula (``torch.lerp``:
    ``end - (end - x)(1 - weight)`` once ``weight >= 0.5``), so the rounding is PyTorch's."""
    if weight < 0.5:
        x += weight * (end - x)
    else:
        x[...] = end - (end - x) * (1 - weight)


def _decayed(grad, param, group: dict):
    """The gradient as the update sees it: negated for ``maximize``, plus the L2 term ``λθ``
    (a new array: ``p.grad`` itself is never changed)."""
    if group["maximize"]:
        grad = -grad
    if group["weight_decay"] != 0:
        grad = grad + float(group["weight_decay"]) * param
    return grad


class Adagrad(Optimizer):
    """Adagrad (Duchi, Hazan & Singer, 2011), step for step as ``torch.optim.Adagrad``.

    With lr ``γ``, ``lr_decay`` ``η``, weight decay ``λ``, at step ``t``::

        g ← g + λ θ                       (if λ ≠ 0)
        γ̃ ← γ / (1 + (t - 1) η)
        s ← s + g²                        (s starts at initial_accumulator_value)
        θ ← θ - γ̃ · g / (√s + ε)

    State: ``step``, ``sum`` (s), made for every parameter when the optimizer is built, as PyTorch.
    ``foreach`` and ``fused`` are accepted and change nothing.

    Raises:
        ValueError: ``lr``, ``lr_decay``, ``weight_decay``, ``initial_accumulator_value`` or ``eps`` negative.
    """

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach=None, *,
                 maximize: bool = False, differentiable: bool = False, fused=None):
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, self.state[p], group)

    def _check_hyperparameters(self, group: dict) -> None:
        super()._check_hyperparameters(group)
        check_nonnegative(group, "lr_decay")
        check_nonnegative(group, "weight_decay")
        check_nonnegative(group, "initial_accumulator_value")
        check_nonnegative(group, "eps", "epsilon")

    @staticmethod
    def _init_state(p, state: dict, group: dict) -> None:
        state["step"] = 0
        xp = get_array_module(p.array)
        state["sum"] = Tensor._from_op(xp.full_like(p.array, float(group["initial_accumulator_value"])))

    def _update(self, p, grad, state: dict, group: dict) -> None:
        if not state:  # a group added after construction
            self._init_state(p, state, group)
        xp, param = get_array_module(p.array), p.array
        state["step"] += 1
        grad = _decayed(grad, param, group)
        clr = float(group["lr"]) / (1 + (state["step"] - 1) * float(group["lr_decay"]))
        state_sum = state["sum"].array
        state_sum += grad * grad
        std = xp.sqrt(state_sum)  # (*p.shape)
        std += float(group["eps"])
        param -= clr * (grad / std)


class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012), step for step as ``torch.optim.Adadelta``.

    With lr ``γ``, decay ``ρ``, weight decay ``λ``::

        g ← g + λ θ                                   (if λ ≠ 0)
        v ← ρ v + (1 - ρ) g²                          (square_avg)
        Δ ← √(u + ε) / √(v + ε) · g
        u ← ρ u + (1 - ρ) Δ²                          (acc_delta)
        θ ← θ - γ Δ

    State: ``step``, ``square_avg`` (v), ``acc_delta`` (u). ``foreach``, ``capturable`` change nothing.

    Raises:
        ValueError: ``lr``, ``eps`` or ``weight_decay`` negative, or ``rho`` outside ``[0, 1]``.
    """

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6, weight_decay: float = 0,
                 foreach=None, *, capturable: bool = False, maximize: bool = False, differentiable: bool = False):
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: dict) -> None:
        super()._check_hyperparameters(group)
        if not 0.0 <= group["rho"] <= 1.0:
            raise ValueError(f"Invalid rho value: {group['rho']}")
        check_nonnegative(group, "eps", "epsilon")
        check_nonnegative(group, "weight_decay")

    def _update(self, p, grad, state: dict, group: dict) -> None:
        if not state:
            state.update(step=0, square_avg=self._zeros_like(p), acc_delta=self._zeros_like(p))
        xp, param = get_array_module(p.array), p.array
        rho, eps = float(group["rho"]), float(group["eps"])
        state["step"] += 1
        grad = _decayed(grad, param, group)
        square_avg, acc_delta = state["square_avg"].array, state["acc_delta"].array
        square_avg *= rho
        square_avg += (1 - rho) * grad * grad
        std = xp.sqrt(square_avg + eps)  # (*p.shape)
        delta = xp.sqrt(acc_delta + eps)  # (*p.shape)
        delta /= std
        delta *= grad
        acc_delta *= rho
        acc_delta += (1 - rho) * delta * delta
        param -= float(group["lr"]) * delta


class RMSprop(Optimizer):
    """RMSprop (Hinton's lecture 6e; centered form from Graves, 2013), as ``torch.optim.RMSprop``.

    With lr ``γ``, smoothing ``α``, weight decay ``λ``, momentum ``μ``::

        g ← g + λ θ                                   (if λ ≠ 0)
        v ← α v + (1 - α) g²                          (square_avg)
        ḡ ← ḡ + (1 - α)(g - ḡ);  ṽ ← v - ḡ²           (centered; else ṽ = v)
        b ← μ b + g / (√ṽ + ε);  θ ← θ - γ b          (μ > 0)
        θ ← θ - γ g / (√ṽ + ε)                        (μ = 0)

    State: ``step``, ``square_avg``, ``momentum_buffer`` (μ > 0), ``grad_avg`` (centered).
    ``foreach`` and ``capturable`` change nothing.

    Raises:
        ValueError: ``lr``, ``eps``, ``momentum``, ``weight_decay`` or ``alpha`` negative.
    """

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8, weight_decay: float = 0,
                 momentum: float = 0, centered: bool = False, capturable: bool = False, foreach=None,
                 maximize: bool = False, differentiable: bool = False):
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: dict) -> None:
        super()._check_hyperparameters(group)
        check_nonnegative(group, "eps", "epsilon")
        check_nonnegative(group, "momentum")
        check_nonnegative(group, "weight_decay")
        check_nonnegative(group, "alpha")

    def _update(self, p, grad, state: dict, group: dict) -> None:
        if not state:
            state.update(step=0, square_avg=self._zeros_like(p))
            if group["momentum"] > 0:
                state["momentum_buffer"] = self._zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = self._zeros_like(p)
        xp, param = get_array_module(p.array), p.array
        lr, alpha, eps, momentum = (float(group[k]) for k in ("lr", "alpha", "eps", "momentum"))
        state["step"] += 1
        grad = _decayed(grad, param, group)
        square_avg = state["square_avg"].array
        square_avg *= alpha
        square_avg += (1 - alpha) * grad * grad
        if group["centered"]:
            grad_avg = state["grad_avg"].array
            lerp_(grad_avg, grad, 1 - alpha)
            avg = xp.sqrt(square_avg - grad_avg * grad_avg)  # (*p.shape)
        else:
            avg = xp.sqrt(square_avg)  # (*p.shape)
        avg += eps
        if momentum > 0:
            buf = state["momentum_buffer"].array
            buf *= momentum
            buf += grad / avg
            param -= lr * buf
        else:
            param -= lr * (grad / avg)

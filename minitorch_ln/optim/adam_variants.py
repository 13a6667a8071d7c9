"""Adam's relatives: Adamax (Kingma & Ba, 2015, §7), NAdam (Dozat, 2016) and RAdam (Liu et al., 2020).

Each update is the single-tensor (``foreach=False``) form of PyTorch's docstring pseudo-code, as
whole-array NumPy/CuPy arithmetic on ``p.array``, in place, with Python-float coefficients (a float32
parameter stays float32). Moments have the parameter's shape, dtype and device; ``step`` is an int.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..backend import get_array_module
from .adaptive import lerp_
from .optimizer import Optimizer, check_betas, check_nonnegative


class _AdamLike(Optimizer):
    """Shared checks (PyTorch's messages) and the first steps every variant takes."""

    def _check_hyperparameters(self, group: dict) -> None:
        super()._check_hyperparameters(group)
        check_nonnegative(group, "eps", "epsilon")
        check_betas(group)
        check_nonnegative(group, "weight_decay")

    @staticmethod
    def _decayed(grad, param, group: dict):
        """``maximize`` and weight decay: ``θ ← θ(1 - γλ)`` (decoupled) or ``g ← g + λθ`` (L2)."""
        if group["maximize"]:
            grad = -grad
        wd = float(group["weight_decay"])
        if wd != 0:
            if group.get("decoupled_weight_decay", False):
                param *= 1 - float(group["lr"]) * wd
            else:
                grad = grad + wd * param  # a new array: p.grad itself is left unchanged
        return grad


class Adamax(_AdamLike):
    """Adamax: Adam with the infinity norm, as ``torch.optim.Adamax``.

    With lr ``γ``, betas ``(β1, β2)``, weight decay ``λ``, at step ``t``::

        g ← g + λ θ                            (if λ ≠ 0)
        m ← m + (1 - β1)(g - m)
        u ← max(β2 u, |g| + ε)                 (exp_inf)
        θ ← θ - (γ / (1 - β1ᵗ)) · m / u

    State: ``step``, ``exp_avg`` (m), ``exp_inf`` (u). ``foreach``, ``capturable`` change nothing.

    Raises:
        ValueError: ``lr``, ``eps`` or ``weight_decay`` negative, or a beta outside ``[0, 1)``.
    """

    def __init__(self, params, lr: float = 2e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach=None, *, maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False):
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, p, grad, state: dict, group: dict) -> None:
        if not state:
            state.update(step=0, exp_avg=self._zeros_like(p), exp_inf=self._zeros_like(p))
        xp, param = get_array_module(p.array), p.array
        beta1, beta2 = (float(b) for b in group["betas"])
        state["step"] += 1
        grad = self._decayed(grad, param, group)
        exp_avg, exp_inf = state["exp_avg"].array, state["exp_inf"].array
        lerp_(exp_avg, grad, 1 - beta1)
        exp_inf *= beta2
        norm = xp.abs(grad)  # (*p.shape)
        norm += float(group["eps"])
        xp.maximum(exp_inf, norm, out=exp_inf)
        clr = float(group["lr"]) / (1 - beta1 ** state["step"])
        param -= clr * (exp_avg / exp_inf)


class NAdam(_AdamLike):
    """NAdam: Adam with Nesterov momentum and a momentum schedule, as ``torch.optim.NAdam``.

    With lr ``γ``, betas ``(β1, β2)``, ``momentum_decay`` ``ψ``, weight decay ``λ``, at step ``t``::

        θ ← θ (1 - γ λ)  (decoupled_weight_decay)   or   g ← g + λ θ
        μₜ = β1 (1 - ½ · 0.96^(t ψ));  μₜ₊₁ likewise;  Πₜ = Πₜ₋₁ · μₜ   (mu_product)
        m ← m + (1 - β1)(g - m);  v ← β2 v + (1 - β2) g²
        d = √(v / (1 - β2ᵗ)) + ε
        θ ← θ - γ (1 - μₜ) / (1 - Πₜ) · g / d - γ μₜ₊₁ / (1 - Πₜ μₜ₊₁) · m / d

    State: ``step``, ``mu_product`` (Π, a float), ``exp_avg`` (m), ``exp_avg_sq`` (v). As in PyTorch,
    Π is kept in the default float dtype (float32 unless :func:`set_default_dtype` says float64) and
    rounded to it after each product, so trajectories match PyTorch's. ``foreach``, ``capturable``
    change nothing.

    Raises:
        ValueError: ``lr``, ``eps``, ``weight_decay`` or ``momentum_decay`` negative, or a beta outside ``[0, 1)``.
    """

    def __init__(self, params, lr: float = 2e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3, decoupled_weight_decay: bool = False, *,
                 foreach=None, maximize: bool = False, capturable: bool = False, differentiable: bool = False):
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: dict) -> None:
        super()._check_hyperparameters(group)
        check_nonnegative(group, "momentum_decay")

    def _update(self, p, grad, state: dict, group: dict) -> None:
        if not state:
            state.update(step=0, mu_product=1.0, exp_avg=self._zeros_like(p), exp_avg_sq=self._zeros_like(p))
        xp, param = get_array_module(p.array), p.array
        lr, eps, psi = float(group["lr"]), float(group["eps"]), float(group["momentum_decay"])
        beta1, beta2 = (float(b) for b in group["betas"])
        state["step"] += 1
        t = state["step"]
        bias_correction2 = 1 - beta2**t
        grad = self._decayed(grad, param, group)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (t * psi)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((t + 1) * psi)))
        scalar = np.dtype(backend.default_float_dtype()).type  # PyTorch's _get_scalar_dtype()
        state["mu_product"] = mu_product = float(scalar(state["mu_product"]) * scalar(mu))
        exp_avg, exp_avg_sq = state["exp_avg"].array, state["exp_avg_sq"].array
        lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        denom = xp.sqrt(exp_avg_sq / bias_correction2)  # (*p.shape)
        denom += eps
        mu_product_next = mu_product * mu_next
        param += (-lr * (1.0 - mu) / (1.0 - mu_product)) * (grad / denom)
        param += ((-lr * mu_next) / (1.0 - mu_product_next)) * (exp_avg / denom)

    @staticmethod
    def _load_state_value(p, name, value):
        if name == "mu_product":  # a 0-d tensor in PyTorch's state dicts, a float here
            return float(value) if isinstance(value, numbers.Number) else float(value.item())
        return Optimizer._load_state_value(p, name, value)


class RAdam(_AdamLike):
    """RAdam: Adam with the variance of the adaptive lr rectified, as ``torch.optim.RAdam``.

    With lr ``γ``, betas ``(β1, β2)``, weight decay ``λ``, at step ``t``::

        θ ← θ (1 - γ λ)  (decoupled_weight_decay)   or   g ← g + λ θ
        m ← m + (1 - β1)(g - m);  v ← β2 v + (1 - β2) g²;  m̂ = m / (1 - β1ᵗ)
        ρ∞ = 2 / (1 - β2) - 1;  ρₜ = ρ∞ - 2 t β2ᵗ / (1 - β2ᵗ)
        ρₜ > 5:  r = √((ρₜ - 4)(ρₜ - 2) ρ∞ / ((ρ∞ - 4)(ρ∞ - 2) ρₜ));  l = √(1 - β2ᵗ) / (√v + ε)
                 θ ← θ - m̂ γ l r
        else:    θ ← θ - m̂ γ

    State: ``step``, ``exp_avg`` (m), ``exp_avg_sq`` (v). ``foreach``, ``capturable`` change nothing.

    Raises:
        ValueError: ``lr``, ``eps`` or ``weight_decay`` negative, or a beta outside ``[0, 1)``.
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *, foreach=None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False):
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, p, grad, state: dict, group: dict) -> None:
        if not state:
            state.update(step=0, exp_avg=self._zeros_like(p), exp_avg_sq=self._zeros_like(p))
        xp, param = get_array_module(p.array), p.array
        lr, eps = float(group["lr"]), float(group["eps"])
        beta1, beta2 = (float(b) for b in group["betas"])
        state["step"] += 1
        t = state["step"]
        grad = self._decayed(grad, param, group)
        exp_avg, exp_avg_sq = state["exp_avg"].array, state["exp_avg_sq"].array
        lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        bias_correction1, bias_correction2 = 1 - beta1**t, 1 - beta2**t
        bias_corrected_exp_avg = exp_avg / bias_correction1  # (*p.shape)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * (beta2**t) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive_lr = xp.sqrt(exp_avg_sq)  # (*p.shape)
            adaptive_lr += eps
            adaptive_lr = (bias_correction2**0.5) / adaptive_lr
            param -= bias_corrected_exp_avg * lr * adaptive_lr * rect
        else:
            param -= bias_corrected_exp_avg * lr

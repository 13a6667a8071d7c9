"""Stochastic gradient descent with momentum, dampening, Nesterov momentum and L2 weight decay."""

from __future__ import annotations

from ..tensor import Tensor
from .optimizer import Optimizer, check_nonnegative


class SGD(Optimizer):
    """PyTorch's SGD (``torch.optim.SGD``), step for step.

    With ``g`` the gradient, ``λ`` weight decay, ``μ`` momentum, ``τ`` dampening, ``γ`` the lr::

        g ← g + λ θ                          (if λ ≠ 0)
        b ← g  (first step),  b ← μ b + (1 - τ) g  (later steps)      (if μ ≠ 0)
        g ← g + μ b  (Nesterov)  or  g ← b
        θ ← θ - γ g

    (Sutskever et al., 2013 for the momentum form.) State: ``momentum_buffer`` per parameter, of
    the parameter's shape, dtype and device.

    ``foreach`` and ``fused`` are accepted and change nothing (see :mod:`.optimizer`).

    Raises:
        ValueError: ``lr``, ``momentum`` or ``weight_decay`` negative; Nesterov without momentum or
            with dampening.
        RuntimeError: ``fused=True`` with ``foreach=True``, or ``differentiable=True``.
    """

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False, foreach=None,
                 differentiable: bool = False, fused=None):
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        fused=fused)
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: dict) -> None:
        super()._check_hyperparameters(group)
        check_nonnegative(group, "momentum")
        check_nonnegative(group, "weight_decay")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")

    def _update(self, p, grad, state: dict, group: dict) -> None:
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        weight_decay, nesterov = group["weight_decay"], group["nesterov"]
        param = p.array
        if group["maximize"]:
            grad = -grad
        if weight_decay != 0:
            grad = grad + weight_decay * param  # a new array: p.grad itself is left unchanged
        if momentum != 0:
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = Tensor._from_op(grad.copy())
                buf = state["momentum_buffer"].array
            else:
                buf = state["momentum_buffer"].array
                buf *= momentum
                buf += (1 - dampening) * grad
            grad = grad + momentum * buf if nesterov else buf
        param -= lr * grad

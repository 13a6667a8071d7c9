"""Adam (Kingma & Ba, 2015) and AdamW (Loshchilov & Hutter, 2019), as ``torch.optim`` computes them."""

from __future__ import annotations

from ..kernels import adam_dispatch
from .optimizer import Optimizer, check_betas, check_nonnegative


class Adam(Optimizer):
    """Adam, step for step as PyTorch's single-tensor implementation.

    At step ``t`` with gradient ``g``, lr ``γ``, betas ``(β1, β2)``, weight decay ``λ``::

        g ← g + λ θ                    (Adam: L2 penalty inside the gradient)
        θ ← θ (1 - γ λ)                (AdamW, ``decoupled_weight_decay``: decay outside the moments)
        m ← m + (1 - β1)(g - m)        (= β1 m + (1 - β1) g, computed as a lerp, as PyTorch)
        v ← β2 v + (1 - β2) g²
        v̂ ← max(v̂, v)                  (amsgrad only; v̂ replaces v below)
        θ ← θ - (γ / (1 - β1ᵗ)) · m / (√v / √(1 - β2ᵗ) + ε)

    State per parameter: ``step`` (an int), ``exp_avg`` (m), ``exp_avg_sq`` (v) and, with amsgrad,
    ``max_exp_avg_sq`` (v̂); each array has the parameter's shape, dtype and device.

    ``foreach``, ``capturable`` and ``fused`` are accepted and change nothing (see :mod:`.optimizer`).

    Raises:
        ValueError: ``lr``, ``eps`` or ``weight_decay`` negative, or a beta outside ``[0, 1)``.
        RuntimeError: ``fused=True`` with ``foreach=True``, or ``differentiable=True``.
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach=None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False, fused=None,
                 decoupled_weight_decay: bool = False):
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                        fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: dict) -> None:
        super()._check_hyperparameters(group)
        check_nonnegative(group, "eps", "epsilon")
        check_betas(group)
        check_nonnegative(group, "weight_decay")

    def _fused_group_step(self, group: dict) -> bool:
        """CUDA parameters: one multi-tensor kernel (``kernels/cuda_optim.py``, arrays only) per
        ``(step, dtype, device)`` bucket, the arithmetic of :meth:`_update`. The state is initialised
        as there and each ``step`` incremented. Returns False (doing nothing) unless every parameter
        with a gradient is a C-contiguous CuPy array, so the caller takes the per-parameter path.
        """
        todo = [p for p in group["params"] if p.grad is not None]
        if not todo or any(not _on_gpu(p.array) or not p.array.flags.c_contiguous for p in todo):
            return False
        from ..kernels import cuda_optim  # noqa: PLC0415 - only reached with CuPy arrays

        buckets: dict = {}
        for p in todo:
            if p.grad.shape != p.shape:
                raise RuntimeError(f"a gradient of shape {tuple(p.grad.shape)} for a parameter of shape "
                                   f"{tuple(p.shape)}")
            state = self._next_step(p, self.state[p], group)
            buckets.setdefault((state["step"], p.dtype, str(p.device)), []).append((p, state))
        beta1, beta2 = group["betas"]
        for (step, _, _), items in buckets.items():
            cuda_optim.adam_multi_tensor(
                [p.array for p, _ in items],
                [p.grad.array for p, _ in items],
                [s["exp_avg"].array for _, s in items],
                [s["exp_avg_sq"].array for _, s in items],
                [s["max_exp_avg_sq"].array for _, s in items] if group["amsgrad"] else None,
                lr=group["lr"], beta1=beta1, beta2=beta2, eps=group["eps"], weight_decay=group["weight_decay"],
                step=step, decoupled_weight_decay=group["decoupled_weight_decay"], maximize=group["maximize"],
            )
            for p, _ in items:
                p._bump_version()  # changed in place: saved copies of it are now stale
        return True

    def _next_step(self, p, state: dict, group: dict) -> dict:
        """``state`` of ``p`` with its ``step`` counted: zero moments on the first step, as PyTorch."""
        if not state:
            state["step"] = 0
            state["exp_avg"] = self._zeros_like(p)
            state["exp_avg_sq"] = self._zeros_like(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = self._zeros_like(p)
        state["step"] += 1
        return state

    def _update(self, p, grad, state: dict, group: dict) -> None:
        # Python floats: a NumPy float64 lr or beta would otherwise turn float32 arithmetic into
        # float64 (NumPy scalars are not "weak"), and the compiled loop would no longer match
        lr, eps, weight_decay = float(group["lr"]), float(group["eps"]), float(group["weight_decay"])
        beta1, beta2 = (float(b) for b in group["betas"])
        t = self._next_step(p, state, group)["step"]
        param, m, v = p.array, state["exp_avg"].array, state["exp_avg_sq"].array
        v_max = state["max_exp_avg_sq"].array if group["amsgrad"] else None
        # the arithmetic: kernels/adam.py (whole-array form) or its compiled twin kernels/cpu_adam.py
        adam_update = adam_dispatch.adam_update_for(param, grad, m, v, v_max)
        adam_update(param, grad, m, v, v_max, lr=lr, beta1=beta1, beta2=beta2, eps=eps,
                    weight_decay=weight_decay, decoupled=group["decoupled_weight_decay"],
                    maximize=group["maximize"], step=t)


class AdamW(Adam):
    """Adam with decoupled weight decay: ``θ ← θ (1 - γ λ)`` before the Adam step, ``λ`` default ``1e-2``.

    Loshchilov & Hutter (2019), "Decoupled Weight Decay Regularization"; the same as PyTorch's
    ``AdamW`` (``Adam(..., decoupled_weight_decay=True)``).
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False, foreach=None,
                 capturable: bool = False, differentiable: bool = False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def load_state_dict(self, state_dict: dict) -> None:
        super().load_state_dict(state_dict)
        for group in self.param_groups:  # AdamW is always decoupled, whatever the saved dict says
            group["decoupled_weight_decay"] = True


def _on_gpu(array) -> bool:
    """Whether ``array`` is a CuPy array (the fused CUDA update applies)."""
    return type(array).__module__.split(".")[0] == "cupy"

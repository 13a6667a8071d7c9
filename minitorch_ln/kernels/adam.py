"""The Adam/AdamW update of one parameter as whole-array operations (NumPy or CuPy), in place.

The readable form (``Adam`` in ``optim/adam.py`` states the formulas and calls this), and the oracle
of the compiled loop in ``kernels/cpu_adam.py``, which must match it bitwise::

    g ← -g (maximize);  θ ← θ · (1 - γλ) (AdamW)  or  g ← g + λθ (Adam's L2 penalty)
    m ← m + (1 - β1)(g - m);  v ← v · β2 + (1 - β2) · g · g;  v̂ ← max(v̂, v) (amsgrad)
    θ ← θ - (m · γ / (1 - β1ᵗ)) / (√v / √(1 - β2ᵗ) + ε)

The coefficients are Python floats (NumPy's "weak" scalars: the arithmetic stays in the
parameter's dtype).
"""

from __future__ import annotations

from ..backend import get_array_module

__all__ = ["adam_update"]


def adam_update(param, grad, m, v, v_max, *, lr, beta1, beta2, eps, weight_decay, decoupled, maximize, step):
    """One Adam step on ``param`` (in place), with the moments ``m``, ``v`` (and ``v_max`` for
    amsgrad, else None) updated in place; ``step`` is the step count ``t`` after incrementing.
    ``grad`` is left unchanged. All arrays have ``param``'s shape."""
    xp = get_array_module(param)
    if maximize:
        grad = -grad
    if weight_decay != 0:
        if decoupled:
            param *= 1 - lr * weight_decay
        else:
            grad = grad + weight_decay * param  # a new array: p.grad itself is left unchanged

    m += (1 - beta1) * (grad - m)  # first moment
    v *= beta2
    v += (1 - beta2) * grad * grad  # second moment

    bias_correction1 = 1 - beta1**step
    bias_correction2_sqrt = (1 - beta2**step) ** 0.5
    step_size = lr / bias_correction1
    if v_max is not None:
        xp.maximum(v_max, v, out=v_max)
        v = v_max
    denom = xp.sqrt(v)  # (*p.shape), the one temporary besides `update`
    denom /= bias_correction2_sqrt
    denom += eps
    update = m * step_size
    update /= denom
    param -= update

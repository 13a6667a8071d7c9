"""The Adam/AdamW update of one parameter as one compiled loop on the CPU.

The readable form is ``kernels/adam.py``: about ten whole-array NumPy operations per parameter,
each a pass over the parameter that writes a temporary. Here each element is read
and written once, with the same operations in the same order and in the parameter's dtype (every
Python-float coefficient rounded to that dtype first, as NumPy does when it multiplies a float32
array by a Python float), so the result is bitwise that of the NumPy form (a test holds them
equal, every option on)::

    g ← -g (maximize);  θ ← θ · (1 - γλ) (AdamW)  or  g ← g + λθ (Adam's L2 penalty)
    m ← m + (1 - β1)(g - m);  v ← v · β2;  v ← v + ((1 - β2) · g) · g;  v̂ ← max(v̂, v) (amsgrad)
    θ ← θ - (m · (γ / (1 - β1ᵗ))) / (√v / √(1 - β2ᵗ) + ε)

Compiled without reordering (``reassoc=False``): there is no sum here, and any regrouping would
change the rounding. float32 and float64 parameters whose arrays (parameter, gradient, both
moments) are C-contiguous and of one dtype take this loop; anything else (float16, mixed dtypes,
views) goes to the NumPy form. Chosen with the other CPU kernels (``kernels.set_cpu_kernels``).
"""

from __future__ import annotations

import numpy as np

from . import adam as _xp
from ._numba import AVAILABLE, jit
from .choice import COMPILED_DTYPES

__all__ = ["AVAILABLE", "compiled_for", "adam_update"]


@jit(reassoc=False)
def _adam_loop(param, grad, m, v, v_max, decay, one_minus_beta1, beta2, one_minus_beta2, weight_decay,
               step_size, bias_correction2_sqrt, eps, decay_mode, maximize, amsgrad):
    for i in range(param.size):
        g = -grad[i] if maximize else grad[i]
        p = param[i]
        if decay_mode == 1:
            p = p * decay                                   # θ ← θ (1 - γλ)
        elif decay_mode == 2:
            g = g + weight_decay * p                        # g ← g + λθ
        mi = m[i] + one_minus_beta1 * (g - m[i])            # first moment, as a lerp
        vi = v[i] * beta2
        vi = vi + (one_minus_beta2 * g) * g                 # second moment
        m[i] = mi
        v[i] = vi
        if amsgrad:
            vm = v_max[i]
            if not (vm >= vi or vm != vm):                  # np.maximum: NaN wins
                vm = vi
            v_max[i] = vm
            vi = vm
        denom = np.sqrt(vi) / bias_correction2_sqrt + eps
        param[i] = p - (mi * step_size) / denom


def compiled_for(param, grad, m, v, v_max) -> bool:
    """Whether the compiled loop updates these arrays (else :func:`adam_update` runs the NumPy form)."""
    if not AVAILABLE or type(param) is not np.ndarray or param.dtype not in COMPILED_DTYPES:
        return False
    arrays = (param, grad, m, v) if v_max is None else (param, grad, m, v, v_max)
    return all(type(a) is np.ndarray and a.dtype == param.dtype and a.shape == param.shape
               and a.flags.c_contiguous for a in arrays)


def adam_update(param, grad, m, v, v_max, *, lr, beta1, beta2, eps, weight_decay, decoupled, maximize, step):
    """:func:`minitorch_ln.kernels.adam.adam_update`, compiled where :func:`compiled_for` allows
    (else that NumPy form). The coefficients are formed in Python floats, as there, then rounded
    to the parameter's dtype.
    """
    if not compiled_for(param, grad, m, v, v_max):
        return _xp.adam_update(param, grad, m, v, v_max, lr=lr, beta1=beta1, beta2=beta2, eps=eps,
                               weight_decay=weight_decay, decoupled=decoupled, maximize=maximize, step=step)
    f = param.dtype.type
    bias_correction1 = 1 - beta1**step
    bias_correction2_sqrt = (1 - beta2**step) ** 0.5
    empty = np.empty(0, param.dtype)
    _adam_loop(param.reshape(-1), grad.reshape(-1), m.reshape(-1), v.reshape(-1),
               empty if v_max is None else v_max.reshape(-1),
               f(1 - lr * weight_decay), f(1 - beta1), f(beta2), f(1 - beta2), f(weight_decay),
               f(lr / bias_correction1), f(bias_correction2_sqrt), f(eps),
               _decay_mode(decoupled, weight_decay), bool(maximize), v_max is not None)


def _decay_mode(decoupled, weight_decay) -> int:
    """0: no weight decay (nothing is computed: ``0 · θ`` would turn an infinite θ into NaN),
    1: decoupled (AdamW), 2: L2 penalty in the gradient (Adam)."""
    if weight_decay == 0:
        return 0
    return 1 if decoupled else 2

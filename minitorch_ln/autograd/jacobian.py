"""The Jacobians a gradient check compares: analytical (one backward per output element) and numerical
(central differences), and the error a failed check raises.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..tensor import Tensor
from .engine import grad as autograd_grad


class GradcheckError(RuntimeError):
    """A gradient check failed; the message names the input, the element and both values."""

    def __init__(self, message, *, input_index=None, output_index=None, worst=None):
        super().__init__(message)
        self.input_index = input_index
        self.output_index = output_index
        self.worst = worst or []
        self.terms = []  # [(node name, TermReport)] for LayerNorm-family ops, filled on failure


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _outputs(fn, inputs):
    out = _as_tuple(fn(*inputs))
    return tuple(o for o in out if isinstance(o, Tensor) and o.dtype.kind == "f")


def _to_numpy(a):
    # a copy: an output may be a view of the input that the finite differences perturb in place
    return np.array(backend.to_device(a, "cpu"), dtype=np.float64)


def _numerical_jacobian(fn, inputs, i, eps):
    """(n_out_total, n_in) central-difference Jacobian of every output w.r.t. input ``i``."""
    x = inputs[i]
    flat = x.array.reshape(-1)  # a view: writing to it perturbs x in place
    cols = []
    # fn runs with grad mode on: it may itself differentiate (gradgradcheck's first derivative)
    for j in range(flat.size):
        orig = flat[j].item()
        flat[j] = orig + eps
        plus = [_to_numpy(o.array).ravel() for o in _outputs(fn, inputs)]
        flat[j] = orig - eps
        minus = [_to_numpy(o.array).ravel() for o in _outputs(fn, inputs)]
        flat[j] = orig
        cols.append(np.concatenate([(p - m) / (2 * eps) for p, m in zip(plus, minus)]))
    return np.stack(cols, axis=1) if cols else np.zeros((0, 0))


def _analytical_jacobians(outputs, inputs, diff_idx):
    """{input index: (n_out_total, n_in) Jacobian} by one backward per output element."""
    rows = {i: [] for i in diff_idx}
    diff_inputs = [inputs[i] for i in diff_idx]
    for out in outputs:
        xp = backend.get_array_module(out.array)
        for k in range(out.numel()):
            seed = xp.zeros(out.numel(), dtype=out.dtype)
            seed[k] = 1
            grads = autograd_grad(
                out, diff_inputs, grad_outputs=Tensor._from_op(seed.reshape(out.shape)),
                retain_graph=True, allow_unused=True,
            )
            for i, g in zip(diff_idx, grads):
                rows[i].append(np.zeros(inputs[i].numel()) if g is None else _to_numpy(g.array).ravel())
    return {i: (np.stack(r) if r else np.zeros((0, inputs[i].numel()))) for i, r in rows.items()}


def _locate(outputs, flat_k):
    for oi, o in enumerate(outputs):
        if flat_k < o.numel():
            return oi, np.unravel_index(flat_k, o.shape) if o.ndim else ()
        flat_k -= o.numel()
    return None, ()  # pragma: no cover

"""Gradient utilities: ``clip_grad_norm_`` and ``clip_grad_value_`` (as ``torch.nn.utils``)."""

from __future__ import annotations

import math

import numpy as np

from .. import backend
from ..tensor import Tensor
from . import utils_rnn as rnn  # noqa: F401 - torch.nn.utils.rnn


def _grads(parameters) -> list:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    out = []
    for i, p in enumerate(parameters):
        if not isinstance(p, Tensor):
            raise TypeError(f"expected an iterable of Tensors (e.g. model.parameters()), element {i} is {type(p).__name__}")
        if p.grad is not None:
            out.append(p.grad)
    return out


def _vector_norm(xp, a, norm_type: float):
    """The ``norm_type``-norm of ``a`` seen as one vector, as a 0-d array: float32 for float16 input
    (float16 squares overflow from 256 on), else ``a``'s dtype.

    ``Σ |a|^p`` is taken of ``|a|/m``, ``m`` the largest magnitude, and scaled back by ``m``: no
    power overflows (float32 ``1e20²``) or underflows where the norm itself is representable.
    """
    acc = np.float32 if a.dtype == np.float16 else a.dtype
    a = xp.abs(a).astype(acc, copy=False)
    if a.size == 0:
        return xp.zeros((), dtype=acc)
    if norm_type == math.inf:
        return a.max()
    if norm_type == -math.inf:
        return a.min()
    if norm_type == 0:
        return xp.asarray((a != 0).sum(), dtype=acc)
    with np.errstate(all="ignore"):
        m = a.max()
        m_safe = xp.where((m == 0) | ~xp.isfinite(m), 1, m).astype(acc)
        r = a / m_safe
        if norm_type == 2.0:
            return (xp.sqrt(xp.sum(r * r)) * m_safe).astype(acc)
        return (xp.sum(r**norm_type) ** (1.0 / norm_type) * m_safe).astype(acc)


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False) -> Tensor:
    """Scale every gradient in place so that their joint ``norm_type``-norm is at most ``max_norm``.

    PyTorch's formula (``torch.nn.utils.clip_grad_norm_``): ``total = ‖(‖g_1‖, ‖g_2‖, ...)‖``,
    ``coef = min(max_norm / (total + 1e-6), 1)``, ``g_i ← coef · g_i``. Parameters without a gradient
    are skipped. Norms of float16 gradients accumulate in float32 and are scaled by the largest
    magnitude, so ``[300, 400]`` in float16 has norm 500, not inf (which would zero the gradients).

    Each ``p.grad`` keeps its identity but gets a new array: the scaling never writes into memory
    the gradient may share with something else (the ``gradient=`` given to ``backward``, another
    tensor's ``.grad``, a tensor saved for backward). Its version counter is bumped, as an in-place op's.

    Args:
        parameters: a Tensor or an iterable of Tensors (``model.parameters()``).
        norm_type: ``2.0`` (default), any positive float, or ``inf`` for the largest magnitude.
    Returns:
        The total norm before clipping, a 0-d Tensor (float32 ``0.`` when no parameter has a grad).
        Deviation: for float16 gradients it is float32 (PyTorch returns float16, inf above 65504).
    Raises:
        RuntimeError: ``error_if_nonfinite`` and the total norm is NaN or infinite.
        ValueError: ``max_norm`` negative or NaN.
    """
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not max_norm >= 0:
        raise ValueError(f"clip_grad_norm_: max_norm must be a non-negative number, got {max_norm}")
    grads = _grads(parameters)
    if not grads:
        return Tensor._from_op(np.zeros((), dtype=np.float32))
    first_dev = grads[0].device
    norms = [backend.to_device(_vector_norm(backend.get_array_module(g.array), g.array, norm_type), first_dev)
             for g in grads]
    xp = backend.get_array_module(grads[0].array)
    dtype = np.result_type(*[n.dtype for n in norms])
    total_norm = _vector_norm(xp, xp.stack([n.astype(dtype) for n in norms]), norm_type)  # ()
    if error_if_nonfinite and not bool(xp.isfinite(total_norm)):
        raise RuntimeError(
            f"the total norm of order {norm_type} for gradients from `parameters` is non-finite ({float(total_norm)}), "
            "so it cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
            "anyway, set `error_if_nonfinite=False`"
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        clip_coef = xp.minimum(max_norm / (total_norm + 1e-6), 1.0)  # no `if`: avoids a GPU→CPU sync
    for g in grads:
        coef = backend.to_device(clip_coef, g.device)
        # scaled in the coefficient's dtype (float32 for float16 grads), into a new array
        g.array = (g.array * coef).astype(g.dtype, copy=False)
        g._bump_version()
    return Tensor._from_op(xp.asarray(total_norm))


def clip_grad_value_(parameters, clip_value: float) -> None:
    """Clamp every gradient in place to ``[-clip_value, clip_value]`` (``torch.nn.utils.clip_grad_value_``)."""
    clip_value = float(clip_value)
    for g in _grads(parameters):
        backend.get_array_module(g.array).clip(g.array, -clip_value, clip_value, out=g.array)
        g._bump_version()

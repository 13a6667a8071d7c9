"""``Function.apply`` for an op that records nothing, on one plain NumPy array (issue 26), and the wrapping of a NumPy
scalar output as a 0-d array that both paths of ``apply`` use.

``-log(P[a, b]).item()`` in a Python loop applies two one-argument ops to a tensor without history; the general
``apply`` builds its argument lists, devices, dtypes and edges for them, about 0.4 µs of each op's 2-3 µs.
``Function.apply`` calls :func:`apply_unrecorded` instead when its only argument is a ``Tensor`` (not a subclass)
that does not require grad, holds a real, integer or bool NumPy array (complex, bfloat16 and float16 take the general
path: their checks and upcasting), is not a view whose base changed since (the general path brings its history
up to date first), with no keyword arguments and no tracer. It does what the general path does then: the
forward on the array with grad mode off, its output(s) wrapped as Tensors that do not require grad, a NumPy
scalar as a 0-d array. ``tests/test_fast_backward.py`` compares the two.
"""

from __future__ import annotations

import numpy as np

from .grad_mode import _state as _grad_state

# Set by minitorch_ln.tensor once the class exists (tensor.py imports the autograd modules, not the reverse).
Tensor = None


def apply_unrecorded(cls, ctx, d, grad_mode):
    """``cls.forward(ctx, d)`` (``ctx`` a fresh node) and its outputs as Tensors without history."""
    ctx.fn = cls
    ctx.needs_input_grad = (False,)
    if grad_mode:
        _grad_state.enabled = False  # forward works on raw arrays: nothing inside records
        try:
            out = cls.forward(ctx, d)
        finally:
            _grad_state.enabled = True
    else:
        out = cls.forward(ctx, d)
    if type(out) is np.ndarray:
        return Tensor._from_op(out, False)
    if isinstance(out, np.generic):
        return Tensor._from_op(np.asarray(out), False)
    if isinstance(out, tuple):
        return tuple([Tensor._from_op(_as_array(ctx, o), False) for o in out])
    return Tensor._from_op(_as_array(ctx, out), False)


def _as_array(ctx, o):
    """A NumPy scalar (what a NumPy reduction of a whole array returns) as a 0-d array, so that a Tensor
    always holds an array; a saved reference to the scalar is pointed at the array, so that
    ``save_for_backward`` still recognises the output (and its history) in it."""
    if type(o) is np.ndarray or not isinstance(o, np.generic):
        return o
    arr = np.asarray(o)
    if ctx._to_save is not None:
        ctx._to_save = tuple([arr if item is o else item for item in ctx._to_save])
    return arr

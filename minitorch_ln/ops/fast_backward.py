"""First-order backwards on plain arrays, for the backward engine when nothing records (issue 26).

A backward written in Tensor ops (``Mul.backward``: ``dy * b``) runs, for a 0-d tensor, about 5 µs of
Python around one NumPy multiply: the operator's dispatch, ``promote``, ``Function.apply`` and a Tensor
for its result. When the pass records nothing, the engine (``autograd/engine.py``) calls, for the ops
below, a function of this module instead: the same NumPy operations, in the same order and dtypes, on
the arrays those Tensor ops would unwrap, so the gradients are the same arrays bit for bit. The
engine uses them only when

- nothing records: no ``create_graph``, no tracer (ONNX export), no anomaly mode;
- the gradient reaching the node is a NumPy array (not CuPy) of the node's output shape and dtype,
  and that dtype is a real float (float16/32/64; bfloat16 and complex take the Tensor-op form).

Each function here is ``fn(node, g, d) -> tuple or None`` (``g`` the gradient Tensor, ``d`` its array):
one result (Tensor or None) per input, or None where the general path must decide: saved tensors
freed or changed in place (the general path raises its error), a saved operand of another dtype than
``d`` (the Tensor ops would promote), a result that needs summing back over broadcast axes, or a
case the op's own backward treats apart (``x ** 0``, ``x ** 1``). ``tests/test_fast_backward.py``
compares them with the general path (``engine._FAST_ON = False``).
"""

from __future__ import annotations

import numpy as np

from ..autograd import engine
from ..tensor import Tensor
from ._fperr import Quiet
from .activation import ReLU, Tanh
from .elementwise import Add, Div, Exp, Log, Mul, Neg, PowScalar, Sub
from .fused_backward import tanh_grad_array
from .scalar_pow import float_pow

__all__: list[str] = []  # no public names: the engine finds these through engine._FAST_BACKWARD

_ndarray = np.ndarray
_asarray = np.asarray
_wrap = Tensor._from_op


def _saved(node):
    """The saved arrays (NumPy scalars for constants, None where nothing was saved), or None where the
    general path must run: freed by an earlier backward, or a saved tensor changed in place since."""
    if node._freed:
        return None
    consts = node._saved_constants
    if consts is not None:  # only NumPy scalars and None (Node._saved): nothing to check
        return consts
    entries = node._saved_entries
    if entries is None:
        return None
    out = []
    for t, version in entries:
        if t is None:
            out.append(None)
        elif t._version[0] != version:
            return None
        else:
            out.append(t.array)
    return out


def _result(r, shape):
    """``r`` (a NumPy scalar for 0-d operands, as ``Function.apply`` receives it) as a gradient Tensor holding an
    array, or None when its shape is not ``shape`` (then ``unbroadcast`` would sum it: the general path)."""
    if type(r) is not _ndarray:
        r = _asarray(r)
    if r.shape != shape:
        return None
    return _wrap(r)


def _same_shapes(node, need_a, need_b, shape):
    """Whether each input that needs a gradient has the output's shape (checked before any arithmetic): then the
    other operand broadcasts into it and no result needs summing back (``unbroadcast``, the general path)."""
    shape_a, shape_b = node.shapes
    return not ((need_a and shape_a != shape) or (need_b and shape_b != shape))


def _neg(node, g, d):
    return (_result(-d, d.shape),)  # Neg.backward: -dy


def _add(node, g, d):
    # Add.backward: unbroadcast(dy, shape) is dy itself where the shapes agree (the same Tensor for both inputs)
    need_a, need_b = node.needs_input_grad
    if not _same_shapes(node, need_a, need_b, d.shape):
        return None
    return (g if need_a else None, g if need_b else None)


def _sub(node, g, d):
    need_a, need_b = node.needs_input_grad
    if not _same_shapes(node, need_a, need_b, d.shape):
        return None
    return (g if need_a else None, _wrap(_asarray(-d)) if need_b else None)  # Sub.backward: dy, -dy


def _binary_operands(node, d):
    """``(need_a, need_b, a, b)`` of a binary node whose inputs that need a gradient have the output's shape and
    whose saved operands are intact, else None (the general path)."""
    need_a, need_b = node.needs_input_grad
    if not _same_shapes(node, need_a, need_b, d.shape):
        return None
    saved = _saved(node)
    return None if saved is None else (need_a, need_b, *saved)


def _saved_input(node, d):
    """The one saved array of a unary node when it is intact and of ``d``'s dtype, else None."""
    saved = _saved(node)
    return None if saved is None or saved[0].dtype != d.dtype else saved[0]


def _mul(node, g, d):
    # Mul.backward: dy * b, dy * a (promote is the identity for one dtype; Mul.forward's a * b, no Quiet)
    operands = _binary_operands(node, d)
    if operands is None:
        return None
    need_a, need_b, a, b = operands
    if (need_a and b.dtype != d.dtype) or (need_b and a.dtype != d.dtype):
        return None
    da = _result(d * b, node.shapes[0]) if need_a else None
    db = _result(d * a, node.shapes[1]) if need_b else None
    if (need_a and da is None) or (need_b and db is None):
        return None
    return da, db


def _div(node, g, d):
    # Div.backward: dy / b (Div.forward, under Quiet); -(dy / b) * (a / b) (DivDenominatorBackward.forward)
    operands = _binary_operands(node, d)
    if operands is None:
        return None
    need_a, need_b, a, b = operands
    if b.dtype != d.dtype or (need_b and a.dtype != d.dtype):
        return None
    da = db = None
    with Quiet():
        if need_a:
            da = _result(d / b, node.shapes[0])
        if need_b:
            db = _result(-(d / b) * (a / b), node.shapes[1])
    if (need_a and da is None) or (need_b and db is None):
        return None
    return da, db


def _exp(node, g, d):
    y = _saved_input(node, d)  # the output y: Exp.backward's dy * y
    return None if y is None else (_result(d * y, d.shape),)


def _log(node, g, d):
    x = _saved_input(node, d)  # the input x: Log.backward's dy / x, under Quiet as Div.forward
    if x is None:
        return None
    with Quiet():
        r = d / x
    return (_result(r, d.shape),)


def _relu(node, g, d):
    # ReLU.backward: dy where the mask holds, else 0 (the mask is the node's own array, not a saved tensor)
    mask = node.mask
    if mask.shape != d.shape:
        return None
    return (_result(np.where(mask, d, d.dtype.type(0)), d.shape),)


def _tanh(node, g, d):
    x = _saved_input(node, d)  # the input x: TanhBackward.forward's arrays
    return None if x is None else (_result(tanh_grad_array(d, x), d.shape),)


def _pow_scalar(node, g, d):
    # PowScalar.backward for p not 0 or 1 and a float x: PowScalarBackward.forward's dy * p * x ** (p - 1)
    p = node.p
    if p == 0 or p == 1:
        return None
    x = _saved_input(node, d)
    if x is None:
        return None
    dt = d.dtype.type
    scaled = d * dt(p)
    with Quiet():
        r = scaled * float_pow(x, p - 1)
    return _result(r, d.shape), None


engine._FAST_BACKWARD.update({
    Neg: _neg, Add: _add, Sub: _sub, Mul: _mul, Div: _div, Exp: _exp, Log: _log, ReLU: _relu, Tanh: _tanh,
    PowScalar: _pow_scalar,
})

"""First-order backwards fused on the arrays (issue 26: ``tanh``, ``sigmoid``, ``x ** p``): one node instead of a chain of
small Tensor ops, which in Python loops over small tensors (scalar autograd, makemore's MLPs) cost more
than their arithmetic. As DESIGN.md asks, each is a ``Function`` of its own whose backward is written in
Tensor ops, so ``create_graph=True`` and ``gradgradcheck`` still work.

``sigmoid_array`` is the one array form of the logistic function, used by ``Sigmoid.forward`` and here, so
that a fused backward gives exactly the values (bit for bit) of the Tensor-op form it replaces.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..backend import get_array_module
from ._fperr import Quiet
from .scalar_pow import float_pow
from .complex_parts import cj
from .shape import unbroadcast


def sigmoid_array(x):
    """``1 / (1 + e^(-x))`` on an array without overflow: ``e = e^(-|x|)``, then ``1/(1+e)`` for ``x >= 0``,
    ``e/(1+e)`` below. Same shape and dtype as ``x``."""
    xp = get_array_module(x)
    e = xp.exp(-xp.abs(x))
    if type(x) is np.ndarray and x.ndim == 0:  # as in sigmoid_pair_array: the choice in Python, not np.where
        return np.asarray(1.0 / (1.0 + e) if float(x) >= 0 else e / (1.0 + e)).astype(x.dtype, copy=False)
    return xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(x.dtype, copy=False)


def sigmoid_pair_array(x):
    """``(sigmoid_array(x), sigmoid_array(-x))`` bit for bit, with one ``e^(-|x|)``, ``1 + e`` and pair of quotients
    for both (``|-x| = |x|``; ``σ(-x)`` picks the other quotient where ``σ(x)`` picks one): 8 array operations instead
    of 14, which for a 0-d tensor are most of a backward's arithmetic."""
    xp = get_array_module(x)
    e = xp.exp(-xp.abs(x))
    d = 1.0 + e
    one, other = 1.0 / d, e / d
    if type(x) is np.ndarray and x.ndim == 0:  # scalar autograd: np.where costs ~1 µs on 0-d operands; the
        pos = float(x) >= 0  # same choice in Python (NaN: neither test holds, as in where), the same 0-d arrays
        return (np.asarray(one if pos else other).astype(x.dtype, copy=False),
                np.asarray(one if -float(x) >= 0 else other).astype(x.dtype, copy=False))
    return (xp.where(x >= 0, one, other).astype(x.dtype, copy=False),
            xp.where(-x >= 0, one, other).astype(x.dtype, copy=False))


def tanh_grad_array(dy, x):
    """``dy · 4σ(2x)σ(-2x)`` on arrays of one dtype (:class:`TanhBackward`'s forward; ``ops/fast_backward.py``)."""
    x2 = x * x.dtype.type(2.0)
    s, s_neg = sigmoid_pair_array(x2)
    return dy * (x.dtype.type(4.0) * s * s_neg)


class TanhBackward(Function):
    """``(dy, x) -> dx = dy · sech² x``, with ``sech² x = 4σ(2x)σ(-2x)`` (``Tanh``'s docstring: no cancellation,
    full relative precision for large ``|x|``), the same array operations in the same order as the Tensor-op
    form ``dy * (4.0 * (x * 2.0).sigmoid() * (-(x * 2.0)).sigmoid())``. Shapes and dtype: those of ``x``.

    Its backward, for a cotangent ``g`` of ``dx``: ``d(dy) = g · sech² x`` and
    ``d(x) = g · dy · (-2 tanh x · sech² x)`` (``d/dx sech² x = -2 sech² x tanh x``), in Tensor ops.
    """

    @staticmethod
    def forward(ctx, dy, x):
        ctx.save_for_backward(dy, x)
        return tanh_grad_array(dy, x)

    @staticmethod
    def backward(ctx, g):
        dy, x = ctx.saved_tensors
        x2 = x * 2.0
        sech2 = 4.0 * x2.sigmoid() * (-x2).sigmoid()
        d_dy = g * sech2 if ctx.needs_input_grad[0] else None
        d_x = g * dy * (sech2 * (x.tanh() * -2.0)) if ctx.needs_input_grad[1] else None
        return d_dy, d_x


class SigmoidBackward(Function):
    """``(dy, x) -> dx = dy · σ(x) · σ(-x)`` (``σ' = σ(x)σ(-x)``: no ``1 - σ(x)`` to cancel for large ``x``), the
    same array operations in the same order as the Tensor-op form ``dy * x.sigmoid() * (-x).sigmoid()``.

    Its backward, for a cotangent ``g`` of ``dx``: ``d(dy) = g · σ(x)σ(-x)`` and
    ``d(x) = g · dy · σ(x)σ(-x) · (σ(-x) - σ(x))`` (the derivative of ``σ(x)σ(-x)``), in Tensor ops.
    """

    @staticmethod
    def forward(ctx, dy, x):
        ctx.save_for_backward(dy, x)
        s, s_neg = sigmoid_pair_array(x)
        return dy * s * s_neg

    @staticmethod
    def backward(ctx, g):
        dy, x = ctx.saved_tensors
        s, s_neg = x.sigmoid(), (-x).sigmoid()
        d_dy = g * (s * s_neg) if ctx.needs_input_grad[0] else None
        d_x = g * dy * (s * s_neg * (s_neg - s)) if ctx.needs_input_grad[1] else None
        return d_dy, d_x


class PowScalarBackward(Function):
    """``(dy, x, p) -> dx = dy · p · x^(p-1)`` for a float ``x`` and a Python float ``p`` (not 0 or 1: those keep
    their own forms in ``PowScalar.backward``), the same array operations in the same order as the Tensor-op
    form ``dy * p * pow(x, p - 1)`` it replaces: ``dy`` times ``p`` in ``x``'s dtype, then times
    ``x ** (p - 1)`` (in that dtype, NumPy's warnings off as in ``PowScalar.forward``: ``0 ** -1 = inf``).

    Its backward, for a cotangent ``g`` of ``dx``: ``d(dy) = g · p · x^(p-1)``, ``d(x) = g · dy · p (p-1) x^(p-2)``,
    in Tensor ops.
    """

    @staticmethod
    def forward(ctx, dy, x, p):
        ctx.save_for_backward(dy, x)
        ctx.p = p
        dt = x.dtype.type
        scaled = dy * dt(p)
        with Quiet():  # 0 ** -1 = inf, without NumPy's warnings
            return scaled * float_pow(x, p - 1)  # p - 1 a double, as the forward's p

    @staticmethod
    def backward(ctx, g):
        dy, x = ctx.saved_tensors
        p = ctx.p
        d_dy = g * p * x ** (p - 1) if ctx.needs_input_grad[0] else None
        d_x = g * dy * (p * (p - 1)) * x ** (p - 2) if ctx.needs_input_grad[1] else None
        return d_dy, d_x, None


class DivDenominatorBackward(Function):
    """``(dy, a, b) -> db = -(dy / b) · (a / b)``, the gradient of ``a / b`` for its denominator, for real float ``a``,
    ``b`` and ``dy`` of one dtype: the same array operations in the same order as the Tensor-op form
    ``-(dy / b) * (a / b)`` it replaces (4 nodes; never ``b²``, which overflows or underflows where the gradient
    is finite), NumPy's warnings off as in ``Div.forward`` (``x / 0 = inf``). Shape: the broadcast of the three
    (``dy``'s); ``Div.backward`` sums it back to ``b``'s.

    Its backward, for a cotangent ``g``: ``d(dy) = -(g / b)(a / b)``, ``d(a) = -(g / b)(dy / b)``,
    ``d(b) = 2 (g / b)(dy / b)(a / b)`` (``db = -dy·a·b⁻²``), in Tensor ops, each summed back to its input's shape.
    """

    @staticmethod
    def forward(ctx, dy, a, b):
        ctx.save_for_backward(dy, a, b)
        ctx.shapes = (dy.shape, a.shape, b.shape)
        with Quiet():
            return -(dy / b) * (a / b)

    @staticmethod
    def backward(ctx, g):
        dy, a, b = ctx.saved_tensors
        g_b = g / b
        need = ctx.needs_input_grad
        d_dy = unbroadcast(-g_b * (a / b), ctx.shapes[0]) if need[0] else None
        d_a = unbroadcast(-g_b * (dy / b), ctx.shapes[1]) if need[1] else None
        d_b = unbroadcast(2.0 * g_b * (dy / b) * (a / b), ctx.shapes[2]) if need[2] else None
        return d_dy, d_a, d_b


def div_denominator_grad(dy, a, b):
    """``-(dy / b) · (a / b)`` (conjugated for complex operands): one :class:`DivDenominatorBackward` node for real
    floats of one dtype, else the Tensor-op form (complex, bfloat16: rounded after each op, as before)."""
    dt = dy.array.dtype
    if dt.kind == "f" and a.array.dtype == dt and b.array.dtype == dt:
        return DivDenominatorBackward.apply(dy, a, b)
    return -(dy / cj(b)) * cj(a / b)

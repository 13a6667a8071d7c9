"""Higher derivatives of fused ops: differentiate a composed (primitive-op) function, as one graph node.

A fused op (LayerNorm, Linear, GELU, attention, ...) computes its first-order backward on raw arrays,
in its own ``Function`` (``NativeLayerNormBackward``, ...). That node's *own* backward, needed only for
second and higher derivatives, is the vector-Jacobian product of the same backward written in
Tensor ops: :func:`double_backward` builds it from such a composed function, and
:class:`ComposedVJP` makes it one node that is itself differentiable to any order.
"""

from __future__ import annotations

from ..backend import get_array_module
from ..tensor import Tensor
from .engine import grad
from .function import Function
from .grad_mode import enable_grad

__all__ = ["vjp", "ComposedVJP", "double_backward"]


def vjp(fn, inputs: tuple, cotangents: tuple, create_graph: bool) -> tuple:
    """``Σ_k cotangent_k · ∂fn_k/∂inputs``: one Tensor per input (zeros where ``fn`` ignores it)."""
    with enable_grad():
        outs = fn(*inputs)
        pairs = [(o, c) for o, c in zip(outs, cotangents) if o is not None and o.requires_grad]
        wrt = [t for t in inputs if t.requires_grad]
        grads = []
        if pairs and wrt:
            grads = list(grad([o for o, _ in pairs], wrt, grad_outputs=[c for _, c in pairs],
                                       create_graph=create_graph, allow_unused=True))
    result, it = [], iter(grads)
    for t in inputs:
        g = next(it, None) if t.requires_grad else None
        result.append(g if g is not None else Tensor._from_op(get_array_module(t.array).zeros_like(t.array)))
    return tuple(result)


class ComposedVJP(Function):
    """``vjp(fn)(inputs, cotangents)`` as one graph node, differentiable to any order.

    ``fn`` maps Tensors to a tuple of Tensors using primitive ops. The forward builds ``fn`` on
    fresh leaves holding the input arrays and differentiates it with ``autograd.grad``; the
    backward is the vector-Jacobian product of this very function, built the same way one level
    up. Because the node's inputs are the caller's Tensors (history included), each derivative
    stays connected to everything it depends on — which a direct ``autograd.grad`` on the
    caller's Tensors would not give without walking, and freeing, their whole history.
    """

    @staticmethod
    def forward(ctx, fn, n_inputs, *arrays):
        ctx.composed_fn, ctx.n_inputs = fn, n_inputs
        ctx.save_for_backward(*arrays)
        leaves = tuple(Tensor._from_op(a, requires_grad=True) for a in arrays)
        grads = vjp(fn, leaves[:n_inputs], leaves[n_inputs:], create_graph=False)
        return tuple(g.array for g in grads)

    @staticmethod
    def backward(ctx, *cotangents):
        saved = ctx.saved_tensors
        fn, n = ctx.composed_fn, ctx.n_inputs

        def this_vjp(*tensors):  # this node's forward, as a function of its inputs and cotangents
            return vjp(fn, tensors[:n], tensors[n:], create_graph=True)

        grads = ComposedVJP.apply(this_vjp, len(saved), *saved, *cotangents)
        return (None, None, *(grads if isinstance(grads, tuple) else (grads,)))


def double_backward(composed_backward, inputs: tuple, cotangents: tuple) -> tuple:
    """Gradients of a fused backward's outputs w.r.t. its Tensor ``inputs`` (None entries skipped)."""
    present = [i for i, t in enumerate(inputs) if t is not None]

    def fn(*tensors):
        full = [None] * len(inputs)
        for i, t in zip(present, tensors):
            full[i] = t
        return composed_backward(*full)

    out = ComposedVJP.apply(fn, len(present), *[inputs[i] for i in present], *cotangents)
    out = out if isinstance(out, tuple) else (out,)
    grads = [None] * len(inputs)
    for i, g in zip(present, out):
        grads[i] = g
    return tuple(grads)

"""``Function``: the one contract every differentiable op follows.

A subclass defines two static methods::

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):                   # raw arrays in, raw array(s) out
            xp = get_array_module(x)
            y = xp.exp(x)
            ctx.save_for_backward(y)           # arrays of inputs/outputs are saved as Tensors
            return y

        @staticmethod
        def backward(ctx, dy):                 # Tensors in, one Tensor (or None) per input out
            (y,) = ctx.saved_tensors
            return dy * y

``Function.apply(*args, **kwargs)`` unwraps Tensor arguments to arrays, runs ``forward`` with no
graph, wraps the result(s) and, when any input requires grad, records one graph node: the ``ctx``
itself. Because ``backward`` is written in Tensor ops, running it with ``create_graph=True`` records
a graph of its own, which is how higher-order gradients work.

``ctx.save_for_backward`` accepts arrays or Tensors. An array that *is* one of the inputs' or
outputs' arrays is saved as that input or output Tensor, history included (so a second derivative
sees it depends on the input); any other array is saved as a constant Tensor. Each saved Tensor's
version is recorded: an in-place change before backward raises instead of giving a wrong gradient.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from .grad_mode import _state as _grad_state

_anomaly = {"enabled": False, "record": None}  # "record": set by anomaly.py (which imports this module)

# Set by minitorch_ln.tensor once the class exists (tensor.py imports this module, not the reverse).
Tensor = None


def _device(array):
    return backend.CPU if type(array) is np.ndarray else backend.device_of(array)


class Node:
    """A recorded operation in the graph (also the ``ctx`` of its ``Function``).

    ``next_edges[i]`` is ``(node, output_index)`` for the input ``i`` that needs a gradient, or
    ``None``. Leaves are reached through their :class:`AccumulateGrad` node.
    """

    # Attributes the engine uses; a Function may set any other attribute on its ctx.
    def __init__(self, fn_cls=None):
        self.fn = fn_cls
        self.next_edges = ()
        self.needs_input_grad = ()
        self.outputs_meta = ()  # (shape, dtype, device) per output, to fill missing grads with zeros
        self._saved = None  # list of (Tensor, version) or None
        self._to_save = None
        self._freed = False
        self._pre_hooks = None  # {output_index: [hook, ...]}
        self.creation_trace = None  # set under detect_anomaly

    # -- naming ---------------------------------------------------------------------------------
    def name(self) -> str:
        return f"{self.fn.__name__}Backward" if self.fn is not None else type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()}>"

    # -- saving ---------------------------------------------------------------------------------
    def save_for_backward(self, *items) -> None:
        """Keep arrays or Tensors for ``backward``; read them back from ``ctx.saved_tensors``."""
        self._to_save = items

    @property
    def saved_tensors(self) -> tuple:
        if self._freed:
            raise RuntimeError(
                f"Trying to backward through the graph a second time (or to read {self.name()}'s saved "
                "tensors after they were freed). Saved tensors are freed after the first backward; "
                "pass retain_graph=True to the first backward() if you need to go through it again."
            )
        if self._saved is None:
            return ()
        out = []
        for t, version in self._saved:
            if t is not None and t._version[0] != version:
                raise RuntimeError(
                    f"one of the tensors needed by {self.name()} for its gradient has been modified by "
                    f"an in-place operation: it was saved at version {version} and is now at version "
                    f"{t._version[0]} (shape {tuple(t.shape)}). Use an out-of-place op instead "
                    "(x = x + y rather than x.add_(y))."
                )
            out.append(t)
        return tuple(out)

    def free(self) -> None:
        self._saved = None
        self._freed = True

    # -- hooks on the gradient of one of this node's outputs --------------------------------
    def register_pre_hook(self, output_index: int, hook) -> None:
        if self._pre_hooks is None:
            self._pre_hooks = {}
        self._pre_hooks.setdefault(output_index, []).append(hook)

    def apply_backward(self, grads: tuple) -> tuple:
        """Run the Function's backward on the gradients of its outputs."""
        result = self.fn.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        return result


class AccumulateGrad(Node):
    """The node of a leaf tensor that requires grad: adds the incoming gradient to ``leaf.grad``."""

    def __init__(self, leaf):
        super().__init__(None)
        self.leaf = leaf
        self.outputs_meta = ((leaf.shape, leaf.dtype, leaf.device),)

    def name(self) -> str:
        return "AccumulateGrad"


def _edge(tensor):
    """The graph edge a gradient for ``tensor`` flows along, or None when it needs none."""
    if not tensor.requires_grad:
        return None
    if tensor.grad_fn is not None:
        return (tensor.grad_fn, tensor._output_nr)
    return (tensor._get_accumulator(), 0)


class Function:
    """Base class of differentiable operations; see the module docstring for the contract."""

    @staticmethod
    def forward(ctx, *args, **kwargs):  # pragma: no cover - abstract
        raise NotImplementedError("a Function subclass must define forward(ctx, *arrays)")

    @staticmethod
    def backward(ctx, *grad_outputs):  # pragma: no cover - abstract
        raise NotImplementedError("a Function subclass must define backward(ctx, *grad_outputs)")

    @classmethod
    def apply(cls, *args, **kwargs):
        # This runs for every op, forward and backward, so it avoids needless work: one pass over
        # the arguments, and the detailed device check only when the array types differ or live
        # on a GPU (0-d tensors are scalars and may come from the CPU, as in PyTorch).
        raw, needs = [], []
        any_needs, array_type, check_devices = False, None, False
        for a in args:
            if isinstance(a, Tensor):
                d = a.array
                raw.append(d)
                needs.append(a._requires_grad)
                any_needs = any_needs or a._requires_grad
                if d.ndim:
                    t = type(d)
                    if array_type is None:
                        array_type = t
                        check_devices = t is not np.ndarray
                    elif t is not array_type:
                        check_devices = True
            else:
                raw.append(a)
                needs.append(False)
        if check_devices:
            _check_same_device(cls, args)
        ctx = Node(cls)
        ctx.needs_input_grad = tuple(needs)
        grad_mode = _grad_state.enabled
        record = any_needs and grad_mode

        _grad_state.enabled = False  # forward works on raw arrays: nothing inside records
        try:
            out = cls.forward(ctx, *raw, **kwargs)
        finally:
            _grad_state.enabled = grad_mode

        multiple = isinstance(out, tuple)
        if multiple:
            results = tuple([Tensor._from_op(o, record) for o in out])
        else:  # the common case, without a generator (this line runs for every op)
            results = (Tensor._from_op(out, record),)

        if record:
            ctx.next_edges = tuple([_edge(a) if isinstance(a, Tensor) else None for a in args])
            ctx.outputs_meta = tuple([(r.array.shape, r.array.dtype, _device(r.array)) for r in results])
            for i, r in enumerate(results):
                r.grad_fn = ctx
                r._output_nr = i
            if _anomaly["enabled"]:
                _anomaly["record"](ctx, args, results)
        if ctx._to_save is not None:
            if record:
                ctx._saved = [_resolve_saved(item, args, raw, results) for item in ctx._to_save]
            ctx._to_save = None
        return results if multiple else results[0]


def _check_same_device(cls, args):
    devices = [a.device for a in args if isinstance(a, Tensor) and a.array.ndim]
    for d in devices[1:]:
        if d != devices[0]:
            raise RuntimeError(
                f"{cls.__name__}: expected all tensors on the same device, but found tensors on "
                f"{devices[0]} and {d}; move them with .to(device) first"
            )


def _resolve_saved(item, args, raw, results):
    """Map a saved array to the input/output Tensor that holds it (keeping its history)."""
    if item is None:
        return (None, 0)
    if isinstance(item, Tensor):
        return (item, item._version[0])
    for a, r in zip(args, raw):
        if r is item and isinstance(a, Tensor):
            return (a, a._version[0])
    for r in results:
        if r.array is item:
            return (r, r._version[0])
    t = Tensor._from_op(item, requires_grad=False)
    return (t, 0)

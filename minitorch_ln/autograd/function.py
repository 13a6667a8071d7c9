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
sees it depends on the input); any other array is saved as a constant Tensor, sharing the version
counter of the input or output whose memory it views, if any. Each saved Tensor's version is
recorded: an in-place change before backward raises instead of giving a wrong gradient.

An output is saved as its array and version counter only, never as the output Tensor (which holds
this node as its ``grad_fn``): reading ``ctx.saved_tensors`` rebuilds a Tensor whose ``grad_fn`` is
this node, as PyTorch's ``SavedVariable`` does. So no node holds its own output, and a graph that is
never backwarded is freed by reference counting alone (no cycle for the cyclic GC to find).
"""

from __future__ import annotations

import numpy as np

from .. import backend
from . import bfloat16 as _bf16
from .output_meta import _CPU_META, _device, _refuse_complex, _single_output_meta
from .grad_mode import _state as _grad_state
from .saved import only_constants, rebuild_output, resolve_all
from .recorded import NOT_TAKEN, apply_recorded
from .unrecorded import _as_array, apply_unrecorded

_BF16 = backend.BFLOAT16
_F16 = np.dtype(np.float16)

_anomaly = {"enabled": False, "record": None}  # "record": set by anomaly.py (which imports this module)

# Set by minitorch_ln.tensor once the class exists (tensor.py imports this module, not the reverse).
Tensor = None

# ``tracer(cls, ctx, args, kwargs, out)`` sees every op run while set (autograd/tracing.py sets it;
# ONNX export records a forward with it). None, the default, costs one global read per op.
_tracer = None
_LEAN = [True]  # False: every recording op takes the general path (tests compare the two)


class Node:
    """A recorded operation in the graph (also the ``ctx`` of its ``Function``).

    ``next_edges[i]`` is ``(node, output_index)`` for the input ``i`` that needs a gradient, or
    ``None``. Leaves are reached through their :class:`AccumulateGrad` node. The node stores them
    flat, ``_edges = (node_0, output_index_0, node_1, output_index_1, ...)`` (``None, 0`` for an
    input without a gradient): one tuple per node instead of one plus one per input, and a graph
    keeps every node alive until it is freed, so Python's cyclic garbage collector walks fewer
    objects (it ran full collections of the whole heap during a long chain of small ops).
    """

    # Attributes the engine uses; a Function may set any other attribute on its ctx. Their defaults
    # are class attributes, so that making a node (once per op) sets only what differs.
    _edges = ()
    needs_input_grad = ()
    outputs_meta = ()  # (shape, dtype, device) per output, to fill missing grads with zeros
    _saved_entries = None  # list of (Tensor, version) or None: read it as ``_saved``
    _saved_constants = None  # saved NumPy scalars not yet wrapped (see ``_saved``)
    _to_save = None
    _freed = False
    _pre_hooks = None  # {output_index: [hook, ...]}
    creation_trace = None  # set under detect_anomaly

    def __init__(self, fn_cls=None):
        self.fn = fn_cls

    @property
    def next_edges(self) -> tuple:
        """``((node, output_index) or None, ...)``, one per input of the op (read from ``_edges``)."""
        e = self._edges
        return tuple([None if e[i] is None else (e[i], e[i + 1]) for i in range(0, len(e), 2)])

    # -- naming ---------------------------------------------------------------------------------
    def name(self) -> str:
        """PyTorch's spelling: the Function's name + ``Backward0`` (``MulBackward0``, ``NativeLayerNormBackward0``);
        a fused Function whose last step PyTorch records under another name says so in ``torch_name``."""
        if self.fn is None:
            return type(self).__name__
        return f"{getattr(self.fn, 'torch_name', None) or self.fn.__name__}Backward0"

    def __repr__(self) -> str:
        return f"<{self.name()}>"

    # -- saving ---------------------------------------------------------------------------------
    @property
    def _saved(self):
        """The saved tensors as a list of ``(Tensor, version)``, or None.

        When a node saved only NumPy scalars (the ``2`` of ``x * 2``) and ``None``, ``apply`` keeps
        them as they are and they are wrapped in constant Tensors (version 0) here, on first read:
        a constant nothing else holds cannot change before it is read, and a long graph of such
        ops then holds fewer objects for Python's garbage collector to walk.
        """
        consts = self._saved_constants
        if consts is not None:
            self._saved_constants = None
            self._saved_entries = [(None, 0) if c is None else (Tensor._from_op(c), 0) for c in consts]
        return self._saved_entries

    @_saved.setter
    def _saved(self, entries) -> None:
        self._saved_constants = None
        self._saved_entries = entries

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
        saved = self._saved
        if saved is None:
            return ()
        out = []
        for t, version in saved:
            if t is None:
                out.append(None)
                continue
            if t._version[0] != version:
                raise RuntimeError(
                    f"one of the tensors needed by {self.name()} for its gradient has been modified by "
                    f"an in-place operation: it was saved at version {version} and is now at version "
                    f"{t._version[0]} (shape {tuple(t.shape)}). Use an out-of-place op instead "
                    "(x = x + y rather than x.add_(y))."
                )
            nr = t._saved_output_nr
            if nr is not None:  # one of this node's outputs: rebuilt with this node as its grad_fn
                t = rebuild_output(t, self, nr)
            out.append(t)
        return tuple(out)

    def free(self) -> None:
        self._saved_entries = self._saved_constants = None
        self._freed = True

    # -- hooks on the gradient of one of this node's outputs --------------------------------
    def register_pre_hook(self, output_index: int, hook) -> None:
        """Call ``hook(grad)`` on output ``output_index``'s gradient before this node runs. A ``retain_grad`` hook
        (marked ``_retains_grad``) stays last: ``y.grad`` is taken after y's other hooks, whenever registered (PyTorch)."""
        self._pre_hooks = self._pre_hooks if self._pre_hooks is not None else {}
        hooks = self._pre_hooks.setdefault(output_index, [])
        at = len(hooks)
        if not getattr(hook, "_retains_grad", False):
            while at and getattr(hooks[at - 1], "_retains_grad", False):
                at -= 1
        hooks.insert(at, hook)

    def apply_backward(self, grads: tuple) -> tuple:
        """Run the Function's backward on the gradients of its outputs."""
        result = self.fn.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        return result


class AccumulateGrad(Node):
    """The node of a leaf tensor that requires grad: adds the incoming gradient to ``leaf.grad``.

    It holds its leaf; the leaf holds it only weakly (``leaf._accumulator``), so leaf and node form
    no reference cycle. The leaf's hooks live on the leaf and are shared with each node made for it.
    """

    fn = None  # no Function: the leaf's gradient is added, not computed

    def __init__(self, leaf):
        # made once per leaf and graph (again after the graph holding it is freed), so it reads
        # the array directly rather than through the leaf's properties
        self.leaf = leaf
        arr = leaf.array
        self.outputs_meta = ((arr.shape, arr.dtype, _device(arr)),)
        self._pre_hooks = leaf._leaf_hooks

    def name(self) -> str:
        return "AccumulateGrad"


_new_node = object.__new__  # Node(cls) without the __init__ call: apply sets ``fn`` itself (once per op)
_NO_EDGE = (None, 0)  # the flat edge of an input that needs no gradient


def _edge(tensor):
    """The graph edge a gradient for ``tensor`` flows along, or None when it needs none."""
    if not tensor._requires_grad:
        return None
    if tensor._grad_fn is not None:
        return (tensor._grad_fn, tensor._output_nr)
    return (tensor._get_accumulator(), 0)


def _sync_view(view) -> None:
    """Bring a view's history up to date after an in-place change of its base or of another view.

    The version counter moved since ``view``'s ``grad_fn`` was made, so its base may have a new
    history: the view's ``grad_fn`` becomes that of the view redone on the base (PyTorch regenerates
    a view's grad_fn the same way, lazily). Called only when the versions differ.
    """
    view._view_version = view._version[0]
    base = view._base
    if view._view_no_grad or not base._requires_grad:
        return
    prev = _grad_state.enabled
    _grad_state.enabled = True
    try:
        fresh = view._view_fn(base)
    finally:
        _grad_state.enabled = prev
    _set_history(view, fresh._grad_fn, fresh._output_nr)
    view._requires_grad = True
    view._view_version = view._version[0]


def _set_history(tensor, node, output_nr) -> None:
    """Make ``node`` the tensor's ``grad_fn``; a ``retain_grad`` hook moves with it (as in PyTorch)."""
    hook = tensor._retain_hook
    old = tensor._grad_fn
    if hook is not None and old is not node:
        hooks = (old._pre_hooks or {}).get(tensor._output_nr, []) if old is not None else []
        if hook in hooks:
            hooks.remove(hook)
        if node is not None:
            node.register_pre_hook(output_nr, hook)
    tensor._grad_fn, tensor._output_nr = node, output_nr


class Function:
    """Base class of differentiable operations; see the module docstring for the contract.

    ``supports_complex``: an op whose forward and backward are right for complex64/complex128 inputs
    (the backward with PyTorch's conjugate Wirtinger convention, docs/complex.md) sets it to True; any
    other op refuses a complex input with a DtypeError naming the op and the dtype, instead of a
    silently real or wrong result.
    """

    supports_complex = False

    @staticmethod
    def forward(ctx, *args, **kwargs):  # pragma: no cover - abstract
        raise NotImplementedError("a Function subclass must define forward(ctx, *arrays)")

    @staticmethod
    def backward(ctx, *grad_outputs):  # pragma: no cover - abstract
        raise NotImplementedError("a Function subclass must define backward(ctx, *grad_outputs)")

    @classmethod
    def apply(cls, *args, **kwargs):
        # This runs for every op, forward and backward, so it avoids needless work: one pass over
        # the arguments; the graph edges (those of ``_edge``) only when a node is recorded; the
        # detailed device check only when an array is not a NumPy one (a GPU array; 0-d tensors are
        # scalars and may come from the CPU, as in PyTorch).
        grad_mode = _grad_state.enabled
        if not kwargs and _tracer is None and len(args) <= 3:  # the lean paths (issue 26): unrecorded.py, recorded.py
            a = args[0] if args else None
            if len(args) == 1 and type(a) is Tensor and not a._requires_grad \
                    and (a._base is None or a._view_version == a._version[0]):  # one tensor that records nothing
                d = a.array
                if type(d) is np.ndarray and d.dtype.kind not in "cV" and d.dtype is not _F16:
                    return apply_unrecorded(cls, _new_node(Node), d, grad_mode)
            elif grad_mode and _LEAN[0] and not _anomaly["enabled"]:
                out = apply_recorded(cls, Node, args)
                if out is not NOT_TAKEN:
                    return out
        raw, needs = [], []
        any_needs = check_devices = has_half = False
        for a in args:
            if isinstance(a, Tensor):
                if a._base is not None and a._view_version != a._version[0]:
                    _sync_view(a)
                d = a.array
                raw.append(d)
                dt = d.dtype
                if dt.kind in "cV":  # complex, or bfloat16 (kind "V"): one test for the common dtypes
                    if dt is _BF16:
                        has_half = True
                    elif dt.kind == "c" and not cls.supports_complex:
                        _refuse_complex(cls, dt)
                elif dt is _F16:  # float16 computes in float32 too, but in the FLOAT16_NATIVE ops
                    has_half = has_half or cls not in _bf16.FLOAT16_NATIVE
                if type(d) is not np.ndarray and d.ndim:
                    check_devices = True
                if a._requires_grad:
                    any_needs = True
                    needs.append(True)
                else:
                    needs.append(False)
            else:
                raw.append(a)
                needs.append(False)
        if check_devices:
            _check_same_device(cls, args)
        if has_half and cls not in _bf16.STORAGE_OPS:  # compute in float32 (autograd/bfloat16.py)
            round_to = _bf16.upcast(raw, cls not in _bf16.FLOAT16_NATIVE)  # the dtype to round float32 results to, or None
        else:
            round_to = None
        ctx = _new_node(Node)
        ctx.fn = cls
        ctx.needs_input_grad = tuple(needs)
        record = any_needs and grad_mode

        if grad_mode:
            _grad_state.enabled = False  # forward works on raw arrays: nothing inside records
            try:
                out = cls.forward(ctx, *raw, **kwargs)
            finally:
                _grad_state.enabled = True
        else:
            out = cls.forward(ctx, *raw, **kwargs)
        if round_to is not None:
            out = _bf16.round_back(out, round_to)

        if type(out) is np.ndarray:  # the common case: one NumPy array
            results = (Tensor._from_op(out, record),)
            multiple = False
        elif isinstance(out, np.generic):  # a 0-d op's NumPy scalar, as a 0-d array (see _as_array)
            scalar, out = out, np.asarray(out)
            to_save = ctx._to_save
            if to_save is not None:
                ctx._to_save = tuple([out if item is scalar else item for item in to_save])
            results = (Tensor._from_op(out, record),)
            multiple = False
        else:
            multiple = isinstance(out, tuple)
            if multiple:
                out = tuple([_as_array(ctx, o) for o in out])
                results = tuple([Tensor._from_op(o, record) for o in out])
            else:
                out = _as_array(ctx, out)  # a NumPy scalar becomes a 0-d array
                results = (Tensor._from_op(out, record),)

        if record:
            edges = []  # flat (node, output_index) per input, (None, 0) where no gradient flows (see Node)
            for a, need in zip(args, needs):
                if need:
                    fn = a._grad_fn
                    if fn is not None:
                        edges += (fn, a._output_nr)
                    else:  # a leaf: its live AccumulateGrad (Tensor._get_accumulator, the lookup inlined)
                        ref = a._accumulator_ref
                        acc = ref() if ref is not None else None
                        edges += (acc if acc is not None else a._get_accumulator(), 0)
                else:
                    edges += _NO_EDGE
            ctx._edges = tuple(edges)
            if multiple:
                ctx.outputs_meta = tuple([(o.shape, o.dtype, _device(o)) for o in out])
                for i, r in enumerate(results):
                    r._grad_fn = ctx
                    r._output_nr = i
            else:
                meta = _CPU_META.get((out.shape, out.dtype)) if type(out) is np.ndarray else None
                ctx.outputs_meta = meta if meta is not None else _single_output_meta(out)
                results[0]._grad_fn = ctx  # _output_nr stays the class default, 0
            if _anomaly["enabled"]:
                _anomaly["record"](ctx, args, results)
        to_save = ctx._to_save
        if to_save is not None:
            if record:
                if only_constants(to_save, args, raw):
                    ctx._saved_constants = to_save  # wrapped when read (Node._saved)
                else:
                    ctx._saved = resolve_all(to_save, args, raw, results)
            ctx._to_save = None
        if _tracer is not None:
            _tracer(cls, ctx, args, kwargs, results if multiple else results[0])
        return results[0] if not multiple else results


def _check_same_device(cls, args):
    devices = [a.device for a in args if isinstance(a, Tensor) and a.array.ndim]
    for d in devices[1:]:
        if d != devices[0]:
            raise RuntimeError(
                f"{cls.__name__}: expected all tensors on the same device, but found tensors on "
                f"{devices[0]} and {d}; move them with .to(device) first"
            )

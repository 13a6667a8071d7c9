"""``Function.apply`` for an op that records a node, on one to three plain arguments (issue 26).

Scalar autograd in a Python loop (``a * b + b ** 2``, ``tanh``, ``relu`` on 0-d tensors, micrograd-style) spends
about half of each op's time in the general ``apply``: its argument loop tests every argument for a subclass, a
GPU array (device check), bfloat16 (upcasting), complex, and its epilogue for several output kinds, a tracer and
anomaly mode. ``Function.apply`` calls :func:`apply_recorded` instead when grad mode is on, the op gets no
keyword arguments, no tracer is set and anomaly mode is off; it takes the op when

- every argument that is a ``Tensor`` is a plain one (not a subclass, such as ``Parameter``) on a real, integer or
  bool NumPy array (complex, bfloat16 and float16 take the general path: their refusal and upcasting), and is not a view
  whose base changed since (the general path brings its history up to date first);
- any other argument is not a ``Tensor`` at all (a number, a shape, a NumPy scalar: passed as it is);
- at least one Tensor argument requires grad (otherwise nothing records: the general or unrecorded path);

and answers :data:`NOT_TAKEN` before touching anything otherwise. It then does what the general path does for such
arguments: the forward on the arrays with grad mode off, the output(s) wrapped as Tensors that require grad, a NumPy
scalar output as a 0-d array (and a saved reference to it pointed at that array), the node's edges (an input's
``grad_fn`` or a leaf's live ``AccumulateGrad``), its ``outputs_meta`` and its saved tensors. Hooks live on the
nodes and leaves it links to, so they run as before; autocast acts in the op functions, before ``apply``.
``tests/test_recorded_apply.py`` runs every op of the benchmark both ways and compares graphs, values, dtypes,
saved versions and errors.
"""

from __future__ import annotations

import numpy as np

from .grad_mode import _state as _grad_state
from .output_meta import _CPU_META, _single_output_meta
from .saved import only_constants, resolve_all
from .unrecorded import _as_array

# Set by minitorch_ln.tensor once the class exists (tensor.py imports the autograd modules, not the reverse).
Tensor = None
NOT_TAKEN = object()  # apply_recorded's answer when the op is not one it takes (the general path runs)
_ndarray = np.ndarray
_F16 = np.dtype(np.float16)  # computes in float32: the general path (autograd/bfloat16.py)
_NO_EDGE = (None, 0)


def apply_recorded(cls, node_cls, args):
    """``cls.apply(*args)`` as the general path records it, or :data:`NOT_TAKEN` (see the module docstring).

    One pass over the arguments checks them and builds the arrays, ``needs_input_grad`` and the graph edges
    (written out, not as comprehensions: on Python 3.11 each comprehension is a function call). A leaf's
    ``AccumulateGrad`` made here for an op that then is not taken, or whose forward raises, is dropped
    unseen: the leaf holds it weakly.
    """
    T = Tensor
    raw = []
    needs = []
    edges = []  # flat (node, output_index) per input, (None, 0) where no gradient flows (see Node)
    any_needs = False
    for a in args:
        if type(a) is T:
            d = a.array
            if type(d) is not _ndarray or d.dtype.kind in "cV" or d.dtype is _F16 \
                    or (a._base is not None and a._view_version != a._version[0]):
                return NOT_TAKEN
            raw.append(d)
            if a._requires_grad:
                any_needs = True
                needs.append(True)
                fn = a._grad_fn
                if fn is not None:
                    edges += (fn, a._output_nr)
                else:  # a leaf: its live AccumulateGrad (Tensor._get_accumulator, the lookup inlined)
                    ref = a._accumulator_ref
                    acc = ref() if ref is not None else None
                    edges += (acc if acc is not None else a._get_accumulator(), 0)
                continue
        elif isinstance(a, T):  # a subclass (Parameter): the general path
            return NOT_TAKEN
        else:
            raw.append(a)
        needs.append(False)
        edges += _NO_EDGE
    if not any_needs:
        return NOT_TAKEN

    ctx = node_cls.__new__(node_cls)
    ctx.fn = cls
    ctx.needs_input_grad = tuple(needs)
    _grad_state.enabled = False  # forward works on raw arrays: nothing inside records
    try:
        out = cls.forward(ctx, *raw)
    finally:
        _grad_state.enabled = True

    to_save = ctx._to_save
    if type(out) is _ndarray:  # the common case: one NumPy array
        pass
    elif isinstance(out, np.generic):  # a 0-d op's NumPy scalar, as a 0-d array (see unrecorded._as_array)
        scalar, out = out, np.asarray(out)
        if to_save is not None:
            for item in to_save:
                if item is scalar:
                    to_save = ctx._to_save = tuple([out if i is scalar else i for i in to_save])
                    break
    elif isinstance(out, tuple):
        return _multiple(ctx, out, args, raw, edges)
    else:
        out = _as_array(ctx, out)
        to_save = ctx._to_save
    result = T._from_op(out, True)
    ctx._edges = tuple(edges)
    meta = _CPU_META.get((out.shape, out.dtype)) if type(out) is _ndarray else None
    ctx.outputs_meta = meta if meta is not None else _single_output_meta(out)
    result._grad_fn = ctx  # _output_nr stays the class default, 0
    if to_save is not None:
        _save(ctx, to_save, args, raw, (result,))
    return result


def _save(ctx, to_save, args, raw, results):
    """``ctx._saved`` as the general path sets it: the common items (None, an input Tensor's array) in one pass,
    anything else through ``saved.only_constants``/``saved.resolve_all`` as there."""
    saved = []
    found = False
    for item in to_save:
        if item is None:
            saved.append((None, 0))
            continue
        for a, r in zip(args, raw):
            if r is item and type(a) is Tensor:
                saved.append((a, a._version[0]))
                found = True
                break
        else:
            break
    else:
        if found:  # what resolve_all gives (only_constants is False: an input array is saved)
            ctx._saved = saved
            ctx._to_save = None
            return
    if only_constants(to_save, args, raw):
        ctx._saved_constants = to_save  # wrapped when read (Node._saved)
    else:
        ctx._saved = resolve_all(to_save, args, raw, results)
    ctx._to_save = None


def _multiple(ctx, out, args, raw, edges):
    """The tuple-output epilogue of the general path."""
    out = tuple([_as_array(ctx, o) for o in out])
    results = tuple([Tensor._from_op(o, True) for o in out])
    ctx._edges = tuple(edges)
    ctx.outputs_meta = tuple([_single_output_meta(o)[0] for o in out])
    for i, r in enumerate(results):
        r._grad_fn = ctx
        r._output_nr = i
    to_save = ctx._to_save
    if to_save is not None:
        _save(ctx, to_save, args, raw, results)
    return results

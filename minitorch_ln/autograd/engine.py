"""The backward pass: walk the graph from the outputs to the leaves, iteratively.

1. Count, for every node reachable from the outputs, how many edges lead into it (its consumers).
2. Start from the output nodes with their seed gradients. A node runs once every consumer has
   handed it its gradient (its count drops to zero), so a tensor used several times receives the
   *sum* of its gradients before its own backward runs. This order is a topological order, found
   with an explicit stack: a chain of 100,000 ops needs no recursion.
3. Leaves add the gradient that reaches them into ``leaf.grad`` (:class:`AccumulateGrad`), in a
   buffer of their own: never the caller's ``gradient=``, a retained gradient, another leaf's
   gradient or a saved tensor; ``autograd.grad`` instead captures the gradients of the tensors it
   was asked about.
4. Unless ``retain_graph``, a node frees its saved tensors once it has run.
5. When nothing records (no ``create_graph``, tracer or anomaly mode), the commonest elementwise ops' first-order
   backwards run on arrays (``ops/fast_backward.py`` fills ``_FAST_BACKWARD``): bit for bit their Tensor-op forms.

Python's cyclic garbage collector is paused for the pass (:func:`run_backward`: the pass makes a few
short-lived objects per node while the whole graph is alive, and a full collection then walks every
object of the process; a chain of 40,000 small ops spent more time in it than in the pass).
"""

from __future__ import annotations

import gc

import numpy as np

from .. import backend
from ..errors import ShapeError
from . import autocast_state as _autocast_state
from . import function as _function
from .anomaly import check_gradients
from .function import AccumulateGrad, _anomaly, _edge
from .grad_mode import _state as _grad_state
from .post_accumulate import check_hook_result, check_post_accumulate_result

_BF16 = backend.BFLOAT16
_F16 = np.dtype(np.float16)
_RAW_SUM = True  # the array sum of gradients without create_graph (tests switch it off to compare)
# Function class -> first-order backward on arrays, used when nothing records (filled by ops/fast_backward.py,
# which says when each applies); _FAST_ON = False runs every backward through its Function (tests compare)
_FAST_BACKWARD = {}
_FAST_ON = True
_ndarray = np.ndarray


def _as_grad_tensor(g, like_meta):
    Tensor = _function.Tensor

    if isinstance(g, Tensor):
        return g
    xp = backend.get_array_module(g)
    return Tensor._from_op(xp.asarray(g), requires_grad=False)


def _zeros(meta):
    Tensor = _function.Tensor

    shape, dtype, dev = meta
    xp = backend.cupy_or_error() if dev.type == "cuda" else __import__("numpy")
    return Tensor._from_op(xp.zeros(shape, dtype=dtype), requires_grad=False)


def _collect_dependencies(root_nodes):
    """Number of incoming edges of every node reachable from ``root_nodes`` (iterative DFS)."""
    deps = {}
    roots = set(root_nodes)
    stack = list(root_nodes)
    while stack:
        node = stack.pop()
        edges = node._edges  # flat: (node_0, output_index_0, node_1, ...), see Node
        for k in range(0, len(edges), 2):
            child = edges[k]
            if child is None:
                continue
            count = deps.get(child)
            if count is None:  # reached for the first time: walk it next (roots are walked already)
                deps[child] = 1
                if child not in roots:
                    stack.append(child)
            else:
                deps[child] = count + 1
    return deps


def run_backward(tensors, grad_tensors, retain_graph, create_graph, capture=None):
    """Backpropagate ``grad_tensors`` from ``tensors``.

    ``capture`` maps ``(node, output_index)`` to a position; when given, the gradients arriving
    there are returned in a list (for ``autograd.grad``) and no leaf's ``.grad`` is touched.
    Autocast does not act during the pass: backward ops run in the dtypes of their forward ops.
    """
    # ``autocast_excluded()`` and a pause of the cyclic garbage collector, inlined (a backward of a few
    # 0-d ops, as in micrograd-style loops, is short enough for two context managers' cost to show).
    # The pass makes no reference cycles of its own; a cycle made by a hook is collected at the next
    # run after the pass. The collector is left as it is when it is already disabled.
    excluded = _autocast_state._state
    excluded.excluded += 1
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return _run_backward(tensors, grad_tensors, retain_graph, create_graph, capture)
    finally:
        if paused:
            gc.enable()
        excluded.excluded -= 1


def _run_backward(tensors, grad_tensors, retain_graph, create_graph, capture):
    Tensor = _function.Tensor
    pending = {}
    roots = []
    # arrays a leaf's .grad must not adopt as they are: the caller's seeds, what hooks returned, and
    # what was already given to a leaf in this pass (see _accumulate)
    shared = {id(g.array) for g in grad_tensors}
    for t, g in zip(tensors, grad_tensors):
        t.requires_grad  # noqa: B018 - brings a view's history up to date first
        edge = _edge(t)
        if edge is None:
            raise RuntimeError(
                "element of the outputs does not require grad and has no grad_fn: nothing to "
                "differentiate (did you compute it under no_grad(), or from tensors without requires_grad?)"
            )
        node, idx = edge
        slot = pending.setdefault(node, [None] * len(node.outputs_meta))
        slot[idx] = g if slot[idx] is None else slot[idx] + g
        if node not in roots:
            roots.append(node)

    deps = _collect_dependencies(roots)
    ready = [n for n in roots if deps.get(n, 0) == 0]
    captured = None if capture is None else [None] * (max(capture.values()) + 1 if capture else 0)

    grad_state = _grad_state
    prev_mode = grad_state.enabled
    grad_state.enabled = bool(create_graph)
    anomaly = _anomaly
    raw_sum = _RAW_SUM and not create_graph  # gradients reaching one tensor twice: summed as arrays (below)
    # array backwards (ops/fast_backward.py) where nothing records: no create_graph, tracer or anomaly mode
    fast_table = _FAST_BACKWARD if _FAST_ON and not create_graph and _function._tracer is None \
        and not anomaly["enabled"] else {}
    try:
        while ready:
            node = ready.pop()
            grads = pending.pop(node, None) or [None] * len(node.outputs_meta)

            if node._pre_hooks:
                for i, hooks in node._pre_hooks.items():
                    for hook in hooks:
                        if grads[i] is not None:
                            new = hook(grads[i])
                            if new is not None:
                                check_hook_result(hook, grads[i], new)  # same type and shape, as PyTorch
                                grads[i] = new
                                shared.add(id(new.array))

            if capture is not None:
                for i, g in enumerate(grads):
                    pos = capture.get((node, i))
                    if pos is not None:
                        captured[pos] = g

            if type(node) is AccumulateGrad:
                if capture is None and grads[0] is not None:
                    leaf = node.leaf
                    if leaf._grad_fn is not None or leaf._base is not None and leaf.grad_fn is not None:
                        raise RuntimeError("leaf variable has been moved into the graph interior: a view that was a "
                                           "leaf requiring grad got a history when its base was changed in place")
                    _accumulate(leaf, grads[0], create_graph, shared)
                    if node.leaf._post_accumulate_hooks:  # Tensor.register_post_accumulate_grad_hook
                        for hook in tuple(node.leaf._post_accumulate_hooks.values()):
                            if (hook_result := hook(node.leaf)) is not None:
                                check_post_accumulate_result(hook, node.leaf, hook_result)
                continue

            edges = node._edges  # flat: (node_0, output_index_0, node_1, ...), see Node
            n_inputs = len(edges) // 2
            missing = 0  # outputs that got no gradient (filled with zeros, unless all did)
            for g in grads:
                if g is None:
                    missing += 1
            if missing == len(grads):
                results = (None,) * n_inputs
            else:
                if missing:
                    grads = [g if g is not None else _zeros(m) for g, m in zip(grads, node.outputs_meta)]
                results = None
                fast = fast_table.get(node.fn)
                if fast is not None:  # one output: its gradient must be a NumPy real-float array of its meta
                    g = grads[0]
                    data = g.array
                    shape, dtype, _ = node.outputs_meta[0]
                    if type(data) is _ndarray and data.dtype == dtype and dtype.kind == "f" and dtype is not _F16 \
                            and data.shape == shape:  # float16 computes in float32 (autograd/bfloat16.py): Tensor ops
                        results = fast(node, g, data)
                if results is None:
                    results = node.fn.backward(node, *grads)  # Node.apply_backward, inlined
                    if type(results) is not tuple:
                        results = (results,)
                    if len(results) != n_inputs:
                        raise RuntimeError(
                            f"{node.name()} returned {len(results)} gradient(s) but its function has "
                            f"{n_inputs} input(s): backward must return one per input (None for "
                            "non-differentiable ones)"
                        )
                if anomaly["enabled"]:
                    check_gradients(node, results)
            # a backward may return a saved tensor as a gradient (read before freeing); constants
            # still unwrapped (Node._saved) were not read, so none of them can be returned
            saved = node._saved_entries
            if not retain_graph:  # Node.free, inlined
                node._saved_entries = node._saved_constants = None
                node._freed = True

            for i in range(n_inputs):
                child = edges[2 * i]
                if child is None:
                    continue
                idx = edges[2 * i + 1]
                g = results[i]
                if g is not None:
                    if type(g) is not Tensor and not isinstance(g, Tensor):
                        g = _as_grad_tensor(g, None)
                    shape, dtype, _ = child.outputs_meta[idx]
                    data = g.array
                    if data.shape != shape:
                        raise ShapeError(
                            f"{node.name()} returned a gradient of shape {g.shape} for its input {i}, "
                            f"but that input has shape {shape}"
                        )
                    if data.dtype != dtype:
                        g = g.to(dtype)
                        data = g.array
                    if saved and type(child) is AccumulateGrad:
                        for t, _ in saved:
                            if t is not None and t.array is data:
                                shared.add(id(data))  # a saved tensor's array, handed back as a leaf's gradient
                                break
                    slot = pending.get(child)
                    if slot is None:
                        slot = pending[child] = [None] * len(child.outputs_meta)
                        slot[idx] = g
                    elif slot[idx] is None:
                        slot[idx] = g
                    elif raw_sum and dtype is not _BF16 and _function._tracer is None:
                        # nothing records (no create_graph): the sum Add.apply would make, without it;
                        # same shape and dtype (both checked above), so the same array
                        total = slot[idx].array + data
                        if isinstance(total, np.generic):  # 0-d operands: an array, as Add.apply makes it
                            total = np.asarray(total)
                        slot[idx] = Tensor._from_op(total)
                    else:
                        slot[idx] = slot[idx] + g
                left = deps[child] - 1
                deps[child] = left
                if left == 0:
                    ready.append(child)
    finally:
        grad_state.enabled = prev_mode
    return captured


def _accumulate(leaf, g, create_graph, shared):
    """Add ``g`` into ``leaf.grad``, never adopting an array that something else holds.

    The array reaching a leaf may be the caller's ``gradient=`` (``y = x + 0`` passes it through),
    a hook's return value, another leaf's (``a + b`` hands one gradient to both) or a view of another
    gradient: storing it as it is would let ``clip_grad_norm_`` or ``zero_grad`` rewrite that other
    tensor. Those (``shared``, and any view) are copied; an array a backward has just made, which
    nothing else references, becomes the ``.grad`` as it is, as PyTorch's AccumulateGrad steals an
    unshared gradient (a copy of a ``(64, 256, 1024)`` gradient costs more than the op's backward).
    """
    Tensor = _function.Tensor
    # ``_grad`` directly: ``g`` has the leaf's shape and dtype already (the pass checked and cast
    # it), so the checks of the ``grad`` setter (for assignments by users) are not repeated here
    if create_graph:  # differentiable: the stored gradient keeps its history (Clone, or Add)
        leaf._grad = g.clone() if leaf._grad is None else leaf._grad + g
        return
    data = g.array
    grad = leaf._grad
    if grad is None:
        if data.base is not None or id(data) in shared:
            data = data.copy()
        shared.add(id(data))
        leaf._grad = Tensor._from_op(data, requires_grad=False)
    else:
        xp = backend.get_array_module(data)
        grad.array = xp.add(grad.array, data)
        shared.add(id(grad.array))


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False):
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of every leaf they depend on."""
    Tensor = _function.Tensor

    tensors = (tensors,) if isinstance(tensors, Tensor) else tuple(tensors)
    grad_tensors = _make_grads(tensors, grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    run_backward(tensors, grad_tensors, retain_graph, create_graph)


def _make_grads(outputs, grad_outputs):
    Tensor = _function.Tensor

    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = (grad_outputs,)
    grad_outputs = tuple(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"got {len(grad_outputs)} gradient(s) for {len(outputs)} output(s)")
    result = []
    for out, g in zip(outputs, grad_outputs):
        if g is None:
            if out.numel() != 1:
                raise RuntimeError(
                    f"grad can be implicitly created only for scalar outputs, but the output has shape "
                    f"{tuple(out.shape)}: pass gradient= (a tensor of that shape), or reduce it first "
                    "(for example .sum())"
                )
            if out.dtype.kind == "c":
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs, but the output "
                                   f"has dtype {out.dtype}: reduce it to a real loss first (for example .abs())")
            arr = out.array
            ones = backend.get_array_module(arr).empty(arr.shape, dtype=arr.dtype)  # np.ones, without its Python layer
            ones.fill(1)
            g = Tensor._from_op(ones, requires_grad=False)
        else:
            if not isinstance(g, Tensor):
                raise TypeError(f"gradient must be a Tensor, got {type(g).__name__}")
            if g.shape != out.shape:
                raise ShapeError(
                    f"Mismatch in shape: gradient has shape {tuple(g.shape)} but the output has shape "
                    f"{tuple(out.shape)}"
                )
            if g.dtype.kind == "c" and out.dtype.kind != "c":
                raise RuntimeError(f"backward: a complex gradient ({g.dtype}) for a real output ({out.dtype})")
            if g.dtype != out.dtype:  # as PyTorch: the seed takes its output's dtype
                g = g.to(out.dtype)
        result.append(g)
    return tuple(result)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False):
    """The gradients of ``outputs`` with respect to ``inputs``, as a tuple (``torch.autograd.grad``).

    Leaves' ``.grad`` are left untouched. With ``create_graph=True`` the returned gradients carry a
    graph, so they can be differentiated again. An input the outputs do not depend on raises,
    unless ``allow_unused=True`` (then its gradient is ``None``).
    """
    Tensor = _function.Tensor

    outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    single = isinstance(inputs, Tensor)
    inputs = (inputs,) if single else tuple(inputs)
    grad_outputs = _make_grads(outputs, grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    capture = {}
    for pos, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"inputs must be Tensors, got {type(t).__name__} at position {pos}")
        t.requires_grad  # noqa: B018 - brings a view's history up to date first
        edge = _edge(t)
        if edge is None:
            raise RuntimeError(f"input {pos} (shape {tuple(t.shape)}) does not require grad")
        capture[edge] = pos
    # the same tensor may be passed twice: map positions through the edge
    positions = [capture[_edge(t)] for t in inputs]
    captured = run_backward(outputs, grad_outputs, retain_graph, create_graph, capture=capture)
    result = []
    for pos, t in zip(positions, inputs):
        g = captured[pos]
        if g is None and not allow_unused:
            raise RuntimeError(
                f"input {pos} (shape {tuple(t.shape)}) was not used in the graph of the outputs; "
                "pass allow_unused=True if that is expected"
            )
        if g is not None and not create_graph:
            g = g.detach()
        result.append(g)
    return tuple(result)

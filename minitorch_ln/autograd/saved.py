"""Saving for backward: how ``ctx.save_for_backward``'s items become ``(Tensor, version)`` entries.

The rules are those of :mod:`minitorch_ln.autograd.function`'s docstring: an array that is an
input's or output's array is saved as that Tensor (history included), any other array as a constant
Tensor sharing the version counter of the memory it views; an output is kept as its array and
version counter only and rebuilt with its node as ``grad_fn`` when read (as PyTorch's
``SavedVariable``), so that no node holds its own output.
"""

from __future__ import annotations

import numpy as np

# Set by minitorch_ln.tensor once the class exists (tensor.py imports this module, not the reverse).
Tensor = None


def only_constants(items, args, raw) -> bool:
    """Whether the saved ``items`` are all None or NumPy scalars that are no input Tensor's array."""
    for item in items:
        if item is None:
            continue
        if not isinstance(item, np.generic):
            return False
        for a, r in zip(args, raw):
            if r is item and isinstance(a, Tensor):
                return False
    return True


def resolve_all(to_save, args, raw, results):
    """``[resolve_saved(item, ...) for item in to_save]`` with its commonest answers inline: None, and the
    array of an input Tensor (saved as that Tensor at its version, as ``resolve_saved`` does)."""
    saved = []
    for item in to_save:
        if item is None:
            saved.append((None, 0))
            continue
        for a, r in zip(args, raw):
            if r is item and isinstance(a, Tensor):
                saved.append((a, a._version[0]))
                break
        else:
            saved.append(resolve_saved(item, args, raw, results))
    return saved


def resolve_saved(item, args, raw, results):
    """Map a saved array to the input/output Tensor that holds it (keeping its history).

    An output is kept as a detached wrapper (its array and version counter) marked with its output
    index, so that the node does not hold its own output; ``saved_tensors`` rebuilds it.
    """
    if item is None:
        return (None, 0)
    if isinstance(item, Tensor):
        for i, r in enumerate(results):
            if item is r:
                return (_stored_output(r, i), r._version[0])
        return (item, item._version[0])
    for a, r in zip(args, raw):
        if r is item and isinstance(a, Tensor):
            return (a, a._version[0])
    if isinstance(item, np.generic):  # a NumPy scalar (``x * 2``'s 2): a constant that views no memory
        return (Tensor._from_op(item), 0)
    for i, r in enumerate(results):
        if r.array is item:
            return (_stored_output(r, i), r._version[0])
    t = Tensor._from_op(item, requires_grad=False)
    # an array that views an input's or output's memory changes with it: share that counter
    owner = _memory_owner(item)
    if owner is not item:
        for a, r in zip(args, raw):
            if isinstance(a, Tensor) and _memory_owner(r) is owner:
                t._version = a._version
                return (t, t._version[0])
        for r in results:
            if _memory_owner(r.array) is owner:
                t._version = r._version
                return (t, t._version[0])
    return (t, 0)


def _memory_owner(array):
    """The object that owns ``array``'s memory (NumPy and CuPy views keep it as ``.base``)."""
    base = getattr(array, "base", None)
    while base is not None:
        array, base = base, getattr(base, "base", None)
    return array


def _stored_output(result, output_nr):
    kept = Tensor._from_op(result.array, requires_grad=False)
    kept._version = result._version
    kept._saved_output_nr = output_nr
    kept.name = result.name
    return kept


def rebuild_output(kept, node, output_nr):
    t = Tensor._from_op(kept.array, requires_grad=True)
    t._version = kept._version
    t._grad_fn = node
    t._output_nr = output_nr
    return t

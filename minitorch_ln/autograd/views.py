"""Views and in-place ops on them: how a change through a view rewrites its base's history.

A view op (basic indexing, ``view``/``reshape`` without a copy, ``transpose``/``permute``/``mT``/``T``,
``expand``/``broadcast_to``, ``squeeze``/``unsqueeze``, ``split``/``chunk``, ``flatten``) returns a
tensor ``v`` marked by :func:`make_view`:

- ``v.array`` views the memory of ``v._base`` (the tensor owning it; a view of a view points to the
  same root base) and ``v._version`` *is* the base's version counter (one list), so a tensor saved
  for backward notices an in-place change made through any of them;
- ``v._view_fn(base)`` redoes the chain of view ops in Tensor ops (``x.T[1:]`` is
  ``lambda b: b.T[1:]``): it gives the view's values, and its gradient, from the base.

An in-place op on ``v`` changes the base's values, so the base gets a new history,
:class:`CopySlices` (PyTorch's name): ``base_new = base_old`` with the region ``_view_fn`` selects
replaced by ``result = op(v_old)``. Its backward hands ``dbase`` with that region zeroed to
``base_old`` and ``_view_fn(dbase)`` to ``result``, whose own node sends on through ``op`` to
``v_old`` (and from there, through the view's backward, to ``base_old`` again) and to the op's
other inputs. The views of the base find out lazily: their ``grad_fn`` is remade as
``_view_fn(base).grad_fn`` the next time it is read after the version counter moved
(``function._sync_view``). docs/autograd.md works an example with numbers.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from . import function as _function
from .function import Function, _set_history, _sync_view
from .grad_mode import _state as _grad_state


def make_view(out, x, step):
    """Mark ``out`` (whose array views ``x``'s memory) as a view of ``x``'s base; returns ``out``.

    ``step(t)`` redoes, in Tensor ops, the one view op that made ``out`` from ``x``.
    """
    base = x._base
    if base is None:
        base, fn, no_grad = x, step, False
    else:
        prev = x._view_fn

        def fn(t, prev=prev, step=step):
            return step(prev(t))

        no_grad = x._view_no_grad
    out._base = base
    out._view_fn = fn
    out._version = x._version
    out._view_version = x._version[0]
    if no_grad or not _grad_state.enabled:
        out._view_no_grad = True
    return out


def alias(t):
    """A Tensor for ``t`` as it is now: same array, version counter and history (not a view)."""
    a = _function.Tensor._from_op(t.array, t._requires_grad)
    a._grad_fn, a._output_nr, a._version = t._grad_fn, t._output_nr, t._version
    if t._requires_grad and t._grad_fn is None:  # a leaf: gradients must reach *its* AccumulateGrad
        acc = t._get_accumulator()
        a._accumulator_ref = lambda: acc  # held strongly (a leaf holds a weakref): the alias is short-lived
    return a


def check_writable(t, what: str) -> None:
    """Raise for an in-place write into memory that several elements share (``expand``'s result)."""
    arr = t.array
    # an empty tensor has no element to share (NumPy may give its axes a zero stride)
    overlapping = 0 in arr.strides and arr.size > 0 and any(s == 0 and n > 1 for s, n in zip(arr.strides, arr.shape))
    if overlapping or not getattr(arr.flags, "writeable", True):  # CuPy's flags have no writeable
        raise RuntimeError(
            f"{what}: unsupported operation: more than one element of the written-to tensor (shape "
            f"{tuple(t.shape)}, strides {tuple(arr.strides)}) refers to a single memory location, as "
            "after expand()/broadcast_to(); clone() the tensor before writing into it"
        )


def check_no_overlap(t, other, what: str) -> None:
    """Raise when ``other`` (an input of an in-place op or of an ``out=`` op writing into ``t``) shares some
    but not all of its memory with ``t``, as PyTorch does (``assert_no_partial_overlap``).

    ``a[1:].add_(a[:-1])`` reads elements that the same op writes: PyTorch refuses it ("unsupported operation:
    some elements of the input tensor and the written-to tensor refer to a single memory location"), where
    computing out of place then copying gave NumPy's buffered result, silently different. The very same
    memory (``a.add_(a)``, ``a.mul_(a.view(6))``: same start, shape and strides) is allowed, as in PyTorch.
    PyTorch does not look at overlaps of non-dense tensors (``m[:, 1:].add_(m[:, :2])``) and gives a result
    that depends on its loop order; those are refused here too, tested exactly (``shares_memory``).

    Cheap first: two NumPy arrays whose memory belongs to two different arrays can't overlap (NumPy points
    a view's ``base`` at the array that owns the memory, never at another view); then the bounds test
    (``may_share_memory``); only then the exact one. ``other`` is a Tensor; a Python number needs no call.
    """
    a, b = t.array, other.array
    if a is b or type(a) is not type(b):  # a CPU 0-d operand of a GPU tensor: other memory
        return
    owner_a = a if a.base is None else a.base
    owner_b = b if b.base is None else b.base
    if (owner_a is not owner_b and type(owner_a) is np.ndarray and type(owner_b) is np.ndarray
            and owner_a.base is None and owner_b.base is None):
        return
    xp = backend.get_array_module(a)
    if not xp.may_share_memory(a, b) or a.size == 0 or b.size == 0:
        return
    if (_start(a) == _start(b) and a.shape == b.shape and a.itemsize == b.itemsize
            and all(n == 1 or sa == sb for n, sa, sb in zip(a.shape, a.strides, b.strides))):
        return  # the same elements at the same places: each is read before it is written (PyTorch: full overlap)
    if not xp.shares_memory(a, b):
        return
    raise RuntimeError(
        "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
        f"memory location ({what}: written-to shape {tuple(a.shape)}, strides {tuple(a.strides)}; input shape "
        f"{tuple(b.shape)}, strides {tuple(b.strides)}, in bytes). Please clone() the tensor before performing "
        "the operation."
    )


def _start(arr) -> int:
    """The address of ``arr``'s first element (NumPy or CuPy)."""
    return arr.__array_interface__["data"][0] if isinstance(arr, np.ndarray) else arr.data.ptr


def check_view_inplace(view, what: str) -> None:
    """Raise, in grad mode, for in-place ops on views that cannot be given a history (as PyTorch's
    ``check_inplace``): a view made under no_grad of a tensor that requires grad (or that requires grad
    itself); a view that requires grad of a base that is a leaf (``b.view(3).requires_grad_()`` is a
    leaf *and* a view of the leaf ``b``: writing through it would give ``b`` a history and move the
    view's own AccumulateGrad inside the graph); a view of another dtype of a base that requires grad."""
    base = view._base
    if not (base._requires_grad or view._requires_grad):  # nothing to record (N[a, b] += 1): two reads
        return
    if view._view_no_grad:
        raise RuntimeError(
            f"{what}: a view was created in no_grad mode and is being modified in place with grad mode "
            "enabled; make both the view and the in-place op inside no_grad (not tracked) or both "
            "outside (tracked)"
        )
    # view._requires_grad as it is: a base that does not require grad gives a view no history when synced
    if base._grad_fn is None:
        raise RuntimeError(
            f"a view of a leaf tensor that requires grad is being used in an in-place operation ({what}); "
            + ("the view requires grad but its base does not (requires_grad_() was called on a view, or a view "
               "of it, of a tensor that does not require grad); " if not base._requires_grad else "")
            + "wrap the update in `with no_grad():` or use an out-of-place op"
        )
    if base._requires_grad and view.array.dtype != base.array.dtype:  # z.real, view_as_real(z), view_as_complex(x)
        raise RuntimeError(
            f"{what}: an in-place change through a view of another dtype ({view.array.dtype} of {base.array.dtype}) "
            "of a tensor that requires grad is not supported; change the base, or clone() the view first"
        )


# ----------------------------------------------------------------------------------- CopySlices


class ZeroRegion(Function):
    """``g`` with the elements where ``region`` is True set to 0 (a projection: its own adjoint)."""

    supports_complex = True  # real 0/1 coefficients

    @staticmethod
    def forward(ctx, g, region):
        ctx.region = region
        out = g.copy()  # (*base.shape)
        out[region] = 0
        return out

    @staticmethod
    def backward(ctx, dout):
        return ZeroRegion.apply(dout, ctx.region), None


class CopySlices(Function):
    """``base_new = base_old`` with ``view_fn``'s region replaced by ``result`` (already written in memory).

    ``dbase_old = dbase`` zeroed on the region (those elements were overwritten);
    ``dresult = view_fn(dbase)`` (the region's gradient, in the view's shape). Copies only: right for
    complex tensors as it is (docs/complex.md).
    """

    supports_complex = True

    @staticmethod
    def forward(ctx, base_old, result, view_fn, region, written):
        ctx.view_fn, ctx.region = view_fn, region
        return written  # the base's own array, which the in-place op has already changed

    @staticmethod
    def backward(ctx, dbase):
        dbase_old = ZeroRegion.apply(dbase, ctx.region) if ctx.needs_input_grad[0] else None
        dresult = ctx.view_fn(dbase) if ctx.needs_input_grad[1] else None
        return dbase_old, dresult, None, None, None


def view_region(base, view_fn):
    """Bool array of ``base``'s shape, True at the elements ``view_fn`` selects.

    Found by value, not through memory: the view chain is redone on the flat indices
    ``arange(numel)``, so it is right whatever the base's strides.
    """
    Tensor = _function.Tensor
    xp = backend.get_array_module(base.array)
    n = base.numel()
    ids = Tensor._from_op(xp.arange(n, dtype=xp.int64).reshape(base.shape))  # (*base.shape)
    prev = _grad_state.enabled
    _grad_state.enabled = False
    try:
        picked = view_fn(ids).array
    finally:
        _grad_state.enabled = prev
    region = xp.zeros(n, dtype=bool)
    region[picked.reshape(-1)] = True
    return region.reshape(base.shape)


def rebase_history(view, result) -> None:
    """After ``view``'s memory was overwritten by ``result`` (its op's output), give the base a
    :class:`CopySlices` node and the view its regenerated history."""
    base = view._base
    if view._view_no_grad:
        raise RuntimeError(
            "a view was created in no_grad mode and is being modified in place with grad mode enabled "
            "by a value that requires grad; create the view outside no_grad"
        )
    old_base = alias(base)
    region = view_region(base, view._view_fn)
    node_out = CopySlices.apply(old_base, result, view._view_fn, region, base.array)
    _set_history(base, node_out._grad_fn, 0)
    base._requires_grad = True
    view._view_version = -1
    _sync_view(view)

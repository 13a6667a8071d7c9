"""ONNX mappings of shape, view and indexing ops.

A target shape that depends on a dynamic axis (``view(B, T, H, Dh)``, ``reshape(B * T, V)``) is
computed in the graph (:meth:`Graph.shape`); a slice bound that does (the causal mask's ``[:T, :T]``)
is too (:meth:`Graph.dim`). Indexing with ints, slices, ``None`` and ``...`` becomes ``Slice``,
``Gather`` and ``Unsqueeze``; one integer array on one axis becomes ``Gather``; bool masks (a size
that depends on the values) are refused.
"""

from __future__ import annotations

import numpy as np

from ..ops import conversion, grids, index_ops, indexing, joining, padding, reorder, shape
from ..ops.scatter import Gather, ScatterAdd
from .exporter import onnx_dtype
from .graph import INT64_MAX

INT64_MIN = -INT64_MAX - 1


def _reshape(g, n):
    return g.op("Reshape", [n.x(0), n.out_shape()])


def _permute(g, n):
    return g.op("Transpose", [n.x(0)], perm=[int(d) for d in n.arg(1)])


def _broadcast_to(g, n):
    return g.op("Expand", [n.x(0), n.out_shape()])


def _sum_to(g, n):  # sum over the axes a broadcast from the output shape repeated
    in_shape, out_shape = n.arg(0).shape, tuple(n.arg_a(1))
    lead = len(in_shape) - len(out_shape)
    axes = list(range(lead)) + [lead + i for i, s in enumerate(out_shape) if s == 1 and in_shape[lead + i] != 1]
    y = g.op("ReduceSum", [n.x(0), g.ints(axes)], keepdims=1) if axes else n.x(0)
    return g.op("Reshape", [y, n.out_shape()])


def _cat(g, n):
    return g.op("Concat", [n.x(i) for i in range(len(n.rec.args))], axis=int(n.rec.kwargs["dim"]))


def _stack(g, n):  # Stack(*xs, dim): each input gains the new axis (Unsqueeze), then one Concat along it
    dim = int(n.rec.kwargs["dim"])
    axes = g.ints([dim])
    return g.op("Concat", [g.op("Unsqueeze", [n.x(i), axes]) for i in range(len(n.rec.args))], axis=dim)


def _split(g, n):
    sizes, sizes_b = list(n.arg_a(1)), list(n.arg_b(1))
    split = g.op("Concat", [n.size(a, b, "a split size") for a, b in zip(sizes, sizes_b)], axis=0) \
        if sizes != sizes_b else g.ints(sizes)
    outs = g.op("Split", [n.x(0), split], n_out=len(sizes), axis=int(n.arg(2)))
    return outs


def _flip(g, n):
    dims = [int(d) for d in (n.arg(1) if isinstance(n.arg(1), (tuple, list)) else (n.arg(1),))]
    k = len(dims)
    return g.op("Slice", [n.x(0), g.ints([-1] * k), g.ints([INT64_MIN] * k), g.ints(dims), g.ints([-1] * k)])


def _repeat(g, n):
    x, sizes = n.arg(0), tuple(n.arg(1))
    xin = n.x(0)
    if len(sizes) > x.ndim:  # x read with leading 1s, as PyTorch
        xin = g.op("Unsqueeze", [xin, g.ints(range(len(sizes) - x.ndim))])
    return g.op("Tile", [xin, g.ints(sizes)])


def _index(g, n, i):
    """An index argument: a Tensor or a raw array (:meth:`Exporter.value` refuses one computed from the values)."""
    return n.x(i, np.int64)  # a graph value, an input's copy, or a constant checked against trace C


def _gather(g, n):
    return g.op("GatherElements", [n.x(0), _index(g, n, 1)], axis=int(n.arg(2)))


def _index_select(g, n):
    return g.op("Gather", [n.x(0), _index(g, n, 1)], axis=int(n.arg(2)))


def _cast(g, n):
    return g.op("Cast", [n.x(0)], to=onnx_dtype(n.out_dtype()))


def _identity(g, n):
    return g.op("Identity", [n.x(0)])


def _triangle(g, n):
    return g.op("Trilu", [n.x(0), g.ints([int(n.arg(1))])], upper=int(bool(n.arg(2))))


def _expand_ellipsis(index, ndim):
    index = tuple(index) if isinstance(index, tuple) else (index,)
    used = sum(1 for i in index if i is not None and i is not Ellipsis)
    out = []
    for i in index:
        if i is Ellipsis:
            out += [slice(None)] * (ndim - used)
        else:
            out.append(i)
    if Ellipsis not in index:
        out += [slice(None)] * (ndim - used)
    return out


def _bound(n, a, b, default, what):
    if a is None and b is None:
        return n.g.ints([default])
    if a is None or b is None:
        n.refuse(f"a slice {what} that is None for one input size and not for another")
    return n.size(int(a), int(b), f"the slice {what}")


def _getitem(g, n):  # (x, index, basic)
    x = n.arg(0)
    if not n.arg(2):
        return _advanced(g, n)
    items, items_b = _expand_ellipsis(n.arg_a(1), x.ndim), _expand_ellipsis(n.arg_b(1), x.ndim)
    starts, ends, axes, steps, ints, new_axes = [], [], [], [], [], []
    d, out_pos = 0, 0
    for it, it_b in zip(items, items_b):
        if it is None:
            new_axes.append(out_pos)
            out_pos += 1
        elif isinstance(it, slice):
            step = 1 if it.step is None else int(it.step)
            if it != slice(None):
                lo, hi = (0, INT64_MAX) if step > 0 else (-1, INT64_MIN)
                starts.append(_bound(n, it.start, it_b.start, lo, "start"))
                ends.append(_bound(n, it.stop, it_b.stop, hi, "stop"))
                axes.append(d)
                steps.append(step)
            d += 1
            out_pos += 1
        else:  # an int: a Gather that drops the axis
            if int(it) != int(it_b):
                n.refuse("an integer index that depends on the dynamic axes")
            ints.append((d, int(it)))
            d += 1
    y = n.x(0)
    if axes:
        cat = (lambda parts: parts[0] if len(parts) == 1 else g.op("Concat", parts, axis=0))
        y = g.op("Slice", [y, cat(starts), cat(ends), g.ints(axes), g.ints(steps)])
    for axis, i in reversed(ints):
        y = g.op("Gather", [y, g.const(np.asarray(i, dtype=np.int64))], axis=axis)
    if new_axes:
        y = g.op("Unsqueeze", [y, g.ints(new_axes)])
    return y


def _advanced(g, n):
    index, index_c = n.arg_a(1), n.rec_c.args[1]
    items = list(index) if isinstance(index, tuple) else [index]
    items_c = list(index_c) if isinstance(index_c, tuple) else [index_c]
    arrays = [i for i, it in enumerate(items) if hasattr(it, "shape")]
    rest_full = all(it == slice(None) for i, it in enumerate(items) if i not in arrays and isinstance(it, slice))
    if len(arrays) != 1 or not rest_full or any(it is None or it is Ellipsis for it in items):
        n.refuse("advanced indexing other than one integer array on one axis (x[:, idx]) is not mapped")
    (axis,) = arrays
    idx = items[axis]
    idx = idx.get() if hasattr(idx, "get") and not isinstance(idx, np.ndarray) else np.asarray(idx)  # CuPy → host
    if idx.dtype.kind == "b":
        n.refuse("a bool mask index (its result's size depends on the values)")
    idx_c = items_c[axis]
    if not np.array_equal(idx, idx_c.get() if hasattr(idx_c, "get") and not isinstance(idx_c, np.ndarray) else idx_c):
        n.refuse("an index array computed from the input values outside the recorded ops")
    if tuple(n.arg(0).shape) != tuple(n.arg_b(0).shape) and axis < len(items) and n.arg(0).shape[axis] != n.arg_b(0).shape[axis]:
        n.refuse("an index array on a dynamic axis")
    return g.op("Gather", [n.x(0), g.const(idx.astype(np.int64))], axis=axis)


def _scatter_add(g, n):  # (x, src, index, dim)
    return g.op("ScatterElements", [n.x(0), _index(g, n, 2), n.x(1)], axis=int(n.arg(3)), reduction="add")


def _pad_constant(g, n):  # F.pad(mode="constant"): ((lo, hi), ...) per axis -> ONNX's [lo..., hi...]
    pads = [(int(lo), int(hi)) for lo, hi in n.arg(1)]
    value = g.const(np.asarray(n.arg(2), dtype=n.out_dtype()))
    return g.op("Pad", [n.x(0), g.ints([lo for lo, _ in pads] + [hi for _, hi in pads]), value], mode="constant")


MAPPINGS = {
    shape.Reshape: _reshape, shape.Permute: _permute, shape.BroadcastTo: _broadcast_to, shape.SumTo: _sum_to,
    joining.Cat: _cat, joining.Stack: _stack, joining.Split: _split, indexing.GetItem: _getitem, reorder.Flip: _flip,
    reorder.Repeat: _repeat, Gather: _gather, ScatterAdd: _scatter_add, padding.PadConstant: _pad_constant,
    index_ops.IndexSelect: _index_select, conversion.Cast: _cast, conversion.Clone: _identity,
    grids.Tril: _triangle, grids.Triu: _triangle,  # triu/tril record these subclasses of Triangle
}

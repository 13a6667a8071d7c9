"""Indexing: ``x[index]``, ``x[index] = v`` (``cat``, ``stack``: joining.py; ``split``, ``chunk``: stacking.py).

``x[index]`` gathers; its backward is the adjoint, a scatter-*add* into zeros of ``x``'s shape, so
an element picked twice (``x[[0, 0]]``) receives both gradients (``kernels.scatter.scatter_add``; a plain
``dx[index] = dy`` would keep only one). Basic indexing (ints, slices, ``None``, ``...``) and
``split``/``chunk`` return views that share ``x``'s memory and version counter, as in PyTorch; an
in-place op on them (``x[0].mul_(2)``, ``x[0][1] = v``) rewrites the base's history
(``autograd/views.py``).
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..autograd import tracing as _tracing
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.views import make_view
from ..backend import get_array_module
from ..errors import IndexTypeError, ShapeError, warn_at_caller
from ..kernels.scatter import scatter_add
from ..tensor import Tensor
from .conversion import cast
from .fill_values import checked_number
from .selection import masked_fill
from .shape import unbroadcast

__all__: list = []  # cat and stack: joining.py (re-exported below for old imports)

# ==================================================================================================
# x[index]
# ==================================================================================================


def _normalize_index(x: Tensor, index):
    """``index`` as a tuple NumPy/CuPy accept, with bounds checked and bool masks made integer.

    Returns ``(index_tuple, is_basic)``. Raises IndexError (too many indices, out of range, mask of
    the wrong shape) and TypeError (unsupported index types) with what was expected and what came.
    """
    if (fast := _plain_ints(x.array.shape, index)) is not None:  # N[a, b], P[i]: Python ints only, checked
        return fast, True
    xp = get_array_module(x.array)
    items = index if isinstance(index, tuple) else (index,)
    conv = []
    for it in items:
        if isinstance(it, Tensor):
            it = backend.to_device(it.array, x.device)  # a CPU index tensor for a GPU tensor, as PyTorch allows
        elif isinstance(it, (list, range)):  # x[range(n), y], as PyTorch: a range is a sequence of ints
            it = xp.arange(it.start, it.stop, it.step) if isinstance(it, range) else xp.asarray(it)
            if it.size == 0:
                it = it.astype(np.int64)
        elif isinstance(it, np.ndarray) and xp is not np:
            it = xp.asarray(it)
        if it is None or it is Ellipsis or isinstance(it, slice):
            conv.append(it)
        elif isinstance(it, (bool, np.bool_)):
            conv.append(xp.asarray(bool(it)))
        elif isinstance(it, numbers.Integral):
            conv.append(int(it))
        elif hasattr(it, "dtype") and hasattr(it, "shape"):
            if it.dtype == np.uint8:  # a mask, as PyTorch (deprecated there, with this warning; not for 0-d)
                if it.ndim:
                    warn_at_caller("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                                   "torch.bool instead.")
                it = it.astype(bool)
            if it.dtype.kind == "b":
                conv.append(it)
            elif it.dtype.kind in "iu":
                conv.append(int(it) if it.ndim == 0 else it)
            else:
                raise IndexError(f"tensors used as indices must be integer or bool, got dtype {it.dtype}")
        else:
            raise IndexTypeError(
                f"unsupported index {it!r} of type {type(it).__name__}: expected an int, a slice, None, "
                "..., or an integer/bool tensor or list"
            )
    if sum(1 for it in conv if it is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")

    def consumed(it):
        if it is None or it is Ellipsis:
            return 0
        if hasattr(it, "dtype") and it.dtype.kind == "b":
            return it.ndim
        return 1

    used = sum(consumed(it) for it in conv)
    if used > x.ndim:
        raise IndexError(f"too many indices for a tensor of dimension {x.ndim} (shape {tuple(x.shape)}): got {used}")
    if any(c is Ellipsis for c in conv):
        pos = next(i for i, c in enumerate(conv) if c is Ellipsis)
        conv = conv[:pos] + [slice(None)] * (x.ndim - used) + conv[pos + 1 :]
    # check bounds and replace bool masks by the integer indices of their True entries
    out, dim, basic = [], 0, True
    for it in conv:
        if it is None:
            out.append(None)
            continue
        if isinstance(it, slice):
            out.append(it)
            dim += 1
            continue
        if isinstance(it, int):
            size = x.shape[dim]
            if not -size <= it < size:
                raise IndexError(f"index {it} is out of bounds for dimension {dim} with size {size}")
            out.append(it)
            dim += 1
            continue
        basic = False
        if it.dtype.kind == "b":
            want = x.shape[dim : dim + it.ndim]
            if it.ndim == 0:
                out.append(it)  # x[True] adds an axis of size 1, x[False] one of size 0
                continue
            if tuple(it.shape) != tuple(want):
                raise IndexError(
                    f"the boolean mask of shape {tuple(it.shape)} does not match the indexed dimensions "
                    f"{tuple(want)} of the tensor of shape {tuple(x.shape)} (starting at dimension {dim})"
                )
            out.extend(it.nonzero())
            dim += it.ndim
            continue
        size = x.shape[dim]
        if it.size:
            lo, hi = int(it.min()), int(it.max())
            bad = lo if lo < -size else hi if hi >= size else None
            if bad is not None:
                raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
        out.append(it)
        dim += 1
    return tuple(out), basic


def _plain_ints(shape: tuple, index):
    """The fast path of :func:`_normalize_index` for Python ints only (``N[a, b]``, ``P[i]``): the same
    ``(index, True)`` the general path gives, bounds checked alike; None for any other index."""
    items = index if type(index) is tuple else (index,)
    if len(items) > len(shape):
        return None
    for it in items:
        if type(it) is not int:
            return None
    for dim, it in enumerate(items):
        size = shape[dim]
        if not -size <= it < size:
            raise IndexError(f"index {it} is out of bounds for dimension {dim} with size {size}")
    return items


def _ints_first(index: tuple):
    """``(pre, rest)`` with ``x[index]`` = ``x[pre][rest]`` as PyTorch reads an index with tensors in it.

    PyTorch selects with the ints first and then indexes with the tensors, so an int is never an
    advanced index: ``x[1, :, idx]`` keeps ``idx``'s axes where ``idx`` stands (NumPy would treat ``1``
    and ``idx`` as two advanced indices separated by a slice and put their axes first).
    """
    pre = tuple(it if type(it) is int else slice(None) for it in index
                if it is not None and not (hasattr(it, "ndim") and it.ndim == 0))  # the dims of x
    return pre, tuple(it for it in index if type(it) is not int)


class GetItem(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, x, index, basic):
        ctx.in_shape, ctx.index, ctx.basic = x.shape, index, basic
        if basic:  # a trailing ... keeps NumPy from returning a scalar copy for x[0] on 1-d x
            return x[index + (Ellipsis,)]
        return x[index]

    @staticmethod
    def backward(ctx, dy):
        return IndexBackward.apply(dy, ctx.in_shape, ctx.index, ctx.basic), None, None


class IndexBackward(Function):
    """The adjoint of ``x[index]``: zeros of ``x``'s shape with ``dy`` scatter-added at ``index``."""

    supports_complex = True

    @staticmethod
    def forward(ctx, dy, in_shape, index, basic):
        xp = get_array_module(dy)
        ctx.index, ctx.basic = index, basic
        dx = xp.zeros(in_shape, dtype=dy.dtype)  # (*in_shape)
        if basic:
            dx[index] = dy  # ints and slices never pick an element twice
        else:
            scatter_add(dx, index, dy)
        return dx

    @staticmethod
    def backward(ctx, ddx):
        return GetItem.apply(ddx, ctx.index, ctx.basic), None, None, None


def getitem(x: Tensor, index) -> Tensor:
    """``x[index]`` with ints, slices, ``None``, ``...``, integer arrays/lists/Tensors and bool masks.

    A uint8 tensor or array is a mask, as in PyTorch (which deprecates it and warns; so does this).

    Basic indexing (no arrays) returns a view sharing ``x``'s version counter. The backward
    scatter-adds, so repeated indices receive the sum of their gradients.

    Raises:
        IndexError: an index out of range (naming it, the dimension and its size), too many
            indices, or a bool mask whose shape does not match the dimensions it indexes.
        TypeError: an index of an unsupported type (float, string, ...).
    """
    ints = _plain_ints(x.array.shape, index)
    if ints is not None and not x.requires_grad and not _tracing.active():  # N[a, b] without history (issue 26)
        # (an ONNX export traces every op, a model's x[0] too: it takes GetItem.apply below)
        # what GetItem.apply gives when nothing is recorded: the same view array, wrapped, marked as a view
        out = Tensor._from_op(x.array[ints + (Ellipsis,)])
        return make_view(out, x, lambda t: GetItem.apply(t, ints, True))
    index, basic = (ints, True) if ints is not None else _normalize_index(x, index)
    if not basic and any(type(it) is int for it in index):
        pre, index = _ints_first(index)
        x = getitem(x, pre)  # a view
    out = GetItem.apply(x, index, basic)
    if basic:
        make_view(out, x, lambda t: GetItem.apply(t, index, True))
    return out


# ==================================================================================================
# x[index] = value
# ==================================================================================================


class SetItem(Function):
    """``y = x`` with ``y[index] = value``: ``dx = dy`` zeroed at ``index``, ``dvalue = dy[index]`` summed to its shape."""

    supports_complex = True

    @staticmethod
    def forward(ctx, x, value, index):
        xp = get_array_module(x)
        ctx.index, ctx.value_shape = index, value.shape
        y = x.copy()
        y[index] = value
        mask = xp.zeros(x.shape, dtype=bool)  # (*x.shape), True where overwritten
        mask[index] = True
        ctx.mask = mask
        return y

    @staticmethod
    def backward(ctx, dy):
        dx = masked_fill(dy, Tensor._from_op(ctx.mask), 0.0) if ctx.needs_input_grad[0] else None
        dvalue = unbroadcast(GetItem.apply(dy, ctx.index, False), ctx.value_shape) if ctx.needs_input_grad[1] else None
        return dx, dvalue, None


def setitem_(x: Tensor, index, value) -> Tensor:
    """``x[index] = value`` in place (``Tensor.__setitem__``), recorded in the graph.

    ``value`` (a number or a Tensor) broadcasts to ``x[index]`` and is cast to ``x``'s dtype. When
    ``x`` is a view of another tensor, the data of that base changes too (and its version counter),
    and so does the base's history (CopySlices, ``autograd/views.py``).

    Raises:
        RuntimeError: ``x`` is a leaf that requires grad, or a view of one (outside ``no_grad``).
        ShapeError: ``value`` does not broadcast to the shape of ``x[index]``.
        IndexError, TypeError: as :func:`getitem`.
    """
    idx, basic = _normalize_index(x, index)
    if not basic and any(type(it) is int for it in idx):  # as getitem: the ints select first, on a view
        pre, idx = _ints_first(idx)
        setitem_(getitem(x, pre), idx, value)
        return x
    xp = get_array_module(x.array)
    if isinstance(value, Tensor):
        value = value if value.array.dtype == x.array.dtype else cast(value, x.dtype)
    else:  # a number: PyTorch's check against x's dtype (ops/fill_values.py): None, "a", 300 into int8 are refused
        if value is None or isinstance(value, (numbers.Number, np.generic, str, bytes)):  # not a list or an array
            value = checked_number(value, x.dtype, "setitem")
        value = Tensor._from_op(xp.asarray(value, dtype=x.dtype))
    target_shape = x.array[idx].shape
    extra = value.ndim - len(target_shape)
    if extra > 0 and all(n == 1 for n in value.shape[:extra]):  # as PyTorch: L[0] = ones(1, 3) into (2, 3)
        value = value.reshape(value.shape[extra:])
    try:
        ok = value.array.shape == target_shape or np.broadcast_shapes(value.shape, target_shape) == target_shape
    except ValueError:
        ok = False
    if not ok:
        raise ShapeError(
            f"setitem: a value of shape {tuple(value.shape)} cannot be broadcast to the indexed shape "
            f"{tuple(target_shape)}"
        )
    if not (is_grad_enabled() and (x.requires_grad or value.requires_grad) or _tracing.active()):
        x._check_inplace("setitem")
        x.array[idx] = value.array
        x._bump_version()
        return x
    return x._inplace("setitem", lambda s: SetItem.apply(s, value, idx))


from .joining import Cat, Split, Stack, cat, stack  # noqa: E402, F401 - moved to joining.py; old imports keep working

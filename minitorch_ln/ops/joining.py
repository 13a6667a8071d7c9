"""Joining: ``cat`` (along an existing dim) and ``stack`` (along a new one), with their adjoints ``Split`` and
``Unstack``; ``split``, ``chunk`` and the ``*stack`` family built on them are in stacking.py.

``cat``'s backward cuts ``dy`` back into the inputs' sizes along ``dim`` (``Split``); ``stack``'s takes the
slices ``dy[..., i, ...]`` along the new dim (``Unstack``). Each adjoint's own backward is the op it undoes,
so gradients of gradients come out of the same two Functions.

``stack`` is one node (``np.stack``), not ``unsqueeze`` per input followed by ``cat``: in a Python loop
(``torch.stack([x[i] for i in ix])``, nanoGPT's batch) the per-input nodes cost more than the copy.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import ShapeError
from ..tensor import Tensor
from ._util import axis_alias, normalize_dim, promote
from .autocast_policies import autocast
from .conversion import cast

__all__ = ["cat", "stack"]


class Cat(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, *arrays, dim):
        ctx.sizes, ctx.dim = [a.shape[dim] for a in arrays], dim
        return get_array_module(*arrays).concatenate(arrays, axis=dim)

    @staticmethod
    def backward(ctx, dy):
        return tuple(Split.apply(dy, ctx.sizes, ctx.dim))


class Split(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, x, sizes, dim):
        ctx.dim = dim
        bounds = np.cumsum(sizes)[:-1].tolist()
        return tuple(get_array_module(x).split(x, bounds, axis=dim))

    @staticmethod
    def backward(ctx, *dys):
        return Cat.apply(*dys, dim=ctx.dim), None, None


class Stack(Function):
    """``k`` arrays of one shape ``S`` → ``S`` with a new axis of size ``k`` at ``dim``; dx_i = dy[..., i, ...]."""

    supports_complex = True

    @staticmethod
    def forward(ctx, *arrays, dim):
        ctx.dim = dim
        return get_array_module(*arrays).stack(arrays, axis=dim)  # (*S[:dim], k, *S[dim:])

    @staticmethod
    def backward(ctx, dy):
        return Unstack.apply(dy, ctx.dim)


class Unstack(Function):
    """The adjoint of :class:`Stack`: the ``k`` slices of ``x`` along ``dim``, each without that axis."""

    supports_complex = True

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        lead = (slice(None),) * dim
        return tuple(x[lead + (i,)] for i in range(x.shape[dim]))  # k arrays of shape x.shape minus dim

    @staticmethod
    def backward(ctx, *dys):
        return Stack.apply(*dys, dim=ctx.dim), None


def _tensor_sequence(tensors, op: str) -> list:
    """``tensors`` as a list of Tensors, refused as PyTorch does: a single Tensor (iterating it would join
    its rows) is a TypeError, as is anything in the sequence that is not a Tensor."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)) and not hasattr(tensors, "__iter__"):
        raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, not {type(tensors).__name__}")
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: expected a sequence of Tensors, got {type(t).__name__} at position {i}")
    return tensors


def _same_dtype(tensors: list, op: str) -> list:
    """The tensors cast to their promoted dtype (as for ``+``)."""
    dt = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype != dt:
            dt = promote(Tensor._from_op(np.zeros((1,), dt)), Tensor._from_op(np.zeros((1,), t.dtype)), op)[0].dtype
    return [t if t.dtype == dt else cast(t, dt) for t in tensors]


@autocast("cat")
@axis_alias
def cat(tensors, dim: int = 0) -> Tensor:
    """Join tensors along an existing dimension ``dim``: ``(a, n1, b)``, ``(a, n2, b)`` → ``(a, n1+n2, b)``.

    Dtypes are promoted as for ``+``. Raises ValueError (empty list), TypeError (a single Tensor, or an item
    that is not a Tensor), ShapeError (different number of dimensions or sizes off ``dim`` that differ,
    naming both shapes) and IndexError (``dim`` out of range).
    """
    tensors = _tensor_sequence(tensors, "cat")
    if not tensors:
        raise ValueError("cat: expected a non-empty sequence of tensors")
    tensors = _same_dtype(tensors, "cat")
    ref = next((t for t in tensors if t.shape != (0,)), tensors[0])  # legacy empty 1-D tensors fit any shape
    d = normalize_dim(dim, ref.ndim, "cat")
    if ref.ndim == 0:
        raise ShapeError("cat: zero-dimensional tensors cannot be concatenated (use stack)")
    if ref.shape != (0,):  # as PyTorch: each (0,) joins as an empty slab, and still gets its (empty) gradient
        tensors = [t.reshape(ref.shape[:d] + (0,) + ref.shape[d + 1:]) if t.shape == (0,) else t for t in tensors]
    for i, t in enumerate(tensors[1:], 1):
        if t.ndim != ref.ndim or any(s != r for j, (s, r) in enumerate(zip(t.shape, ref.shape)) if j != d):
            raise ShapeError(
                f"cat: tensor {i} has shape {tuple(t.shape)}, which does not match tensor 0's shape "
                f"{tuple(ref.shape)} in every dimension except dim {d}"
            )
    return Cat.apply(*tensors, dim=d)  # one tensor too: a new tensor, as PyTorch's (never the input itself)


@autocast("stack")
@axis_alias
def stack(tensors, dim: int = 0) -> Tensor:
    """Join ``k`` tensors of one shape ``S`` along a new dimension ``dim``: the result has ``S`` with ``k``
    inserted at ``dim`` (``-S.ndim - 1 <= dim <= S.ndim``). Dtypes are promoted as ``torch.stack`` does.

    Raises ShapeError (a RuntimeError, as PyTorch's) for an empty sequence ("stack expects a non-empty
    TensorList") and for shapes that differ (naming both); TypeError for a single Tensor, an item that is
    not a Tensor or a ``dim`` that is not an int; IndexError for ``dim`` out of range.
    """
    tensors = _tensor_sequence(tensors, "stack")
    if not tensors:
        raise ShapeError("stack expects a non-empty TensorList")
    if not isinstance(dim, numbers.Integral) or isinstance(dim, bool):
        raise TypeError(f"stack(): argument 'dim' must be int, not {type(dim).__name__}")
    tensors = _same_dtype(tensors, "stack")
    shape = tensors[0].shape
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != shape:
            raise ShapeError(f"stack: tensor {i} has shape {tuple(t.shape)} but tensor 0 has {tuple(shape)}")
    ndim = len(shape)
    if not -ndim - 1 <= dim <= ndim:
        raise IndexError(f"stack: dim {dim} is out of range for the result's {ndim + 1} dimensions")
    return Stack.apply(*tensors, dim=int(dim) % (ndim + 1))

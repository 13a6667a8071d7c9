"""Shape ops that copy (never views in PyTorch): ``flip``, ``fliplr``, ``flipud``, ``roll``, ``rot90``,
``repeat``, ``tile``, ``repeat_interleave``.

Each backward is the op's own adjoint: a flip is undone by the same flip, a roll by the opposite roll,
a rotation by ``k`` quarter turns by ``-k``. ``repeat``/``tile`` copy ``x`` into the blocks of a grid, so
their gradient sums the blocks: ``dy`` of shape ``(r0*s0, r1*s1, ..)`` is read as ``(r0, s0, r1, s1, ..)``
and summed over the ``r`` axes (one reshape and one sum). ``repeat_interleave`` copies element ``i``
``repeats[i]`` times; its gradient sums each run of copies back (a segment sum through
``kernels.scatter.scatter_add``), and the segment sum's own gradient is the repeat again.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import DtypeError, IndexOutOfRangeError, ShapeError
from ..kernels.scatter import scatter_add
from ..tensor import Tensor
from ._util import axis_alias
from .shape import reshape

__all__ = ["flip", "fliplr", "flipud", "repeat_interleave", "roll", "rot90", "tile"]

# ==================================================================================================
# Argument checks
# ==================================================================================================


def _need_tensor(x, op: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): expected input to be a Tensor, got {type(x).__name__}")


def _ints(values, op: str, name: str) -> tuple:
    """``values`` (an int or a sequence of ints) as a tuple of Python ints; TypeError otherwise."""
    if isinstance(values, numbers.Integral) and not isinstance(values, bool):
        return (int(values),)
    if isinstance(values, Tensor) or not isinstance(values, (tuple, list)):
        raise TypeError(f"{op}(): expected {name} to be an int or a tuple of ints, got {type(values).__name__}")
    for v in values:
        if not isinstance(v, numbers.Integral) or isinstance(v, bool):
            raise TypeError(f"{op}(): expected {name} to be a tuple of ints, got an element {v!r} of type "
                            f"{type(v).__name__} in {tuple(values)!r}")
    return tuple(int(v) for v in values)


def _dim(d: int, ndim: int, op: str) -> int:
    """``d`` as a non-negative axis; a 0-d tensor takes dims 0 and -1 (as PyTorch's ``maybe_wrap_dim``)."""
    n = max(ndim, 1)
    if not -n <= d < n:
        raise IndexOutOfRangeError(f"{op}(): dimension {d} is out of range for a tensor with {ndim} dimension(s) "
                                   f"(expected a value in [{-n}, {n - 1}])")
    return d % n


def _seq_args(sizes, op: str, name: str) -> tuple:
    """``f(x, 2, 3)`` and ``f(x, (2, 3))`` alike: the sizes as a tuple of ints."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = sizes[0]
    return _ints(tuple(sizes), op, name)


# ==================================================================================================
# flip, fliplr, flipud
# ==================================================================================================


class Flip(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return get_array_module(x).flip(x, axis=dims).copy()  # (*x.shape); PyTorch's flip copies too

    @staticmethod
    def backward(ctx, dy):
        return Flip.apply(dy, ctx.dims), None  # a flip is its own inverse and its own adjoint


def flip(input: Tensor, dims) -> Tensor:
    """Reverse the order of the entries along each of ``dims`` (a copy, shape and dtype of ``input``).

    ``dims``: a tuple of ints (a bare int is accepted too); ``()`` returns a copy. A 0-d input takes
    dims ``0`` / ``-1`` (as PyTorch). The gradient is ``flip(dy, dims)``.

    Raises:
        IndexOutOfRangeError (IndexError): a dim out of range.  ShapeError (RuntimeError): a dim twice.
        TypeError: dims not ints.
    """
    _need_tensor(input, "flip")
    dims = _ints(dims, "flip", "dims")
    axes = tuple(_dim(d, input.ndim, "flip") for d in dims)
    if len(set(axes)) != len(axes):
        twice = next(a for a in axes if axes.count(a) > 1)
        raise ShapeError(f"flip(): dim {twice} appears multiple times in the list of dims {dims}")
    if input.ndim == 0:
        axes = ()
    return Flip.apply(input, axes)


def fliplr(input: Tensor) -> Tensor:
    """``flip(input, (1,))`` for ``input`` of shape ``(m, n, *)``; ShapeError for fewer than 2 dims."""
    _need_tensor(input, "fliplr")
    if input.ndim < 2:
        raise ShapeError(f"fliplr(): input must be >= 2-d, got a tensor of shape {tuple(input.shape)}")
    return Flip.apply(input, (1,))


def flipud(input: Tensor) -> Tensor:
    """``flip(input, (0,))`` for ``input`` of shape ``(m, *)``; ShapeError for a 0-d input."""
    _need_tensor(input, "flipud")
    if input.ndim < 1:
        raise ShapeError(f"flipud(): input must be >= 1-d, got a tensor of shape {tuple(input.shape)}")
    return Flip.apply(input, (0,))


# ==================================================================================================
# roll, rot90
# ==================================================================================================


class Roll(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, x, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        return get_array_module(x).roll(x, shifts, axis=dims)  # (*x.shape), a copy

    @staticmethod
    def backward(ctx, dy):
        back = -ctx.shifts if ctx.dims is None else tuple(-s for s in ctx.shifts)
        return Roll.apply(dy, back, ctx.dims), None, None


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    """Shift the entries along ``dims`` by ``shifts`` with wrap-around: ``out[(i + s) % n] = input[i]``.

    ``shifts`` and ``dims``: ints or tuples of one length (a dim named twice rolls twice, as PyTorch).
    ``dims=None`` rolls the flattened tensor and restores its shape; then ``shifts`` is one int. Shape and
    dtype of ``input``; the gradient rolls ``dy`` back by ``-shifts``.

    Raises:
        ShapeError (RuntimeError): shifts and dims of different lengths (naming both), or no shifts.
        IndexOutOfRangeError (IndexError): a dim out of range (a 0-d input has no dims to roll).
        TypeError: shifts or dims not ints.
    """
    _need_tensor(input, "roll")
    shifts = _ints(shifts, "roll", "shifts")
    if not shifts:
        raise ShapeError("roll(): shifts required: got an empty tuple")
    dims = () if dims is None else _ints(dims, "roll", "dims")
    if not dims:
        if len(shifts) != 1:
            raise ShapeError(f"roll(): shifts and dimensions must align: got {len(shifts)} shifts {shifts} and no "
                             "dims (rolling the flattened tensor takes one shift)")
        return Roll.apply(input, shifts[0], None)
    if len(shifts) != len(dims):
        raise ShapeError(f"roll(): shifts and dimensions must align: got {len(shifts)} shifts {shifts} and "
                         f"{len(dims)} dims {dims}")
    if input.ndim == 0:
        raise IndexOutOfRangeError(f"roll(): dimension {dims[0]} given, but the input is 0-d (use dims=None)")
    axes = tuple(_dim(d, input.ndim, "roll") for d in dims)
    return Roll.apply(input, shifts, axes)


class Rot90(Function):
    supports_complex = True  # moves or copies elements only: the same backward for complex (docs/complex.md)

    @staticmethod
    def forward(ctx, x, k, dims):
        ctx.k, ctx.dims = k, dims
        return get_array_module(x).rot90(x, k, axes=dims).copy()  # dims' sizes swapped when k is odd

    @staticmethod
    def backward(ctx, dy):
        return Rot90.apply(dy, -ctx.k, ctx.dims), None, None  # the inverse rotation is the adjoint


def rot90(input: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    """Rotate by ``k`` quarter turns in the plane ``dims``, from the first dim towards the second.

    ``input`` ``(.., m, .., n, ..)`` with ``dims`` at ``m`` and ``n``: the result has them swapped when ``k``
    is odd; ``k`` is taken modulo 4 (negative turns the other way). Dtype of ``input``. The gradient
    rotates ``dy`` by ``-k``.

    Raises:
        ShapeError (RuntimeError): dims not two, fewer than 2 dims, or the two dims equal.
        IndexOutOfRangeError (IndexError): a dim out of range.  TypeError: k or dims not ints.
    """
    _need_tensor(input, "rot90")
    if not isinstance(k, numbers.Integral) or isinstance(k, bool):
        raise TypeError(f"rot90(): expected k to be an int, got {type(k).__name__}")
    dims = _ints(dims, "rot90", "dims")
    if len(dims) != 2:
        raise ShapeError(f"rot90(): expected total rotation dims == 2, got {len(dims)} dims {dims}")
    if input.ndim < 2:
        raise ShapeError(f"rot90(): expected total dims >= 2, got a tensor of shape {tuple(input.shape)}")
    axes = tuple(_dim(d, input.ndim, "rot90") for d in dims)
    if axes[0] == axes[1]:
        raise ShapeError(f"rot90(): expected rotation dims to be different, got dims {dims} (both dim {axes[0]})")
    return Rot90.apply(input, int(k) % 4, axes)


# ==================================================================================================
# repeat, tile
# ==================================================================================================


class Repeat(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, x, sizes):
        padded = (1,) * (len(sizes) - x.ndim) + x.shape  # x read with leading 1s, as PyTorch
        ctx.in_shape, ctx.sizes, ctx.padded = x.shape, sizes, padded
        return get_array_module(x).tile(x.reshape(padded), sizes)  # (r0*s0, r1*s1, ..)

    @staticmethod
    def backward(ctx, dy):
        if not ctx.sizes:
            return dy, None
        blocks = tuple(v for r, s in zip(ctx.sizes, ctx.padded) for v in (r, s))  # (r0, s0, r1, s1, ..)
        dx = dy.reshape(blocks).sum(dim=tuple(range(0, len(blocks), 2)))  # (s0, s1, ..): every copy adds
        return dx.reshape(ctx.in_shape), None


def repeat(input: Tensor, *sizes) -> Tensor:
    """``Tensor.repeat``: ``input`` copied ``sizes[d]`` times along each dim, as a grid of blocks.

    ``input`` ``(s0, .., sk)`` with ``sizes`` ``(r0, .., rm)`` (``m >= k``; ``input`` is read with leading
    1s): the result is ``(r0*s0', .., rm*sm')``. ``repeat(x, 2, 3)`` and ``repeat(x, (2, 3))`` alike; a
    size 0 gives an empty result. Dtype of ``input``. The gradient sums ``dy`` over the copies.

    Raises:
        ShapeError (RuntimeError): fewer sizes than ``input`` has dims, or a negative size.
        TypeError: sizes not ints.
    """
    _need_tensor(input, "repeat")
    sizes = _seq_args(sizes, "repeat", "sizes")
    if len(sizes) < input.ndim:
        raise ShapeError(f"repeat(): the number of repeat sizes can not be smaller than the number of dimensions of "
                         f"the input: expected at least {input.ndim} for shape {tuple(input.shape)}, got "
                         f"{len(sizes)}: {sizes}")
    if any(r < 0 for r in sizes):
        raise ShapeError(f"repeat(): repeat sizes must be non-negative, got {sizes}")
    return Repeat.apply(input, sizes)


def tile(input: Tensor, dims) -> Tensor:
    """``repeat`` with ``dims`` padded with leading 1s to ``input``'s number of dims (NumPy's ``tile``).

    ``input`` ``(2, 3)``: ``tile(input, (2,))`` is ``(2, 6)``, ``tile(input, (2, 1, 1))`` is ``(2, 2, 3)``.
    Raises as :func:`repeat` (ShapeError for a negative size; TypeError for non-ints).
    """
    _need_tensor(input, "tile")
    dims = _ints(dims, "tile", "dims")
    dims = (1,) * (input.ndim - len(dims)) + dims
    if any(r < 0 for r in dims):
        raise ShapeError(f"tile(): repeat sizes must be non-negative, got {dims}")
    return Repeat.apply(input, dims)


# ==================================================================================================
# repeat_interleave
# ==================================================================================================


class TakeAlong(Function):
    """``y = x.take(index, axis=dim)`` for a 1-D ``index``; its gradient sums per source entry."""

    supports_complex = True

    @staticmethod
    def forward(ctx, x, index, dim, uniform):
        ctx.index, ctx.dim, ctx.n, ctx.uniform = index, dim, x.shape[dim], uniform
        return get_array_module(x).take(x, index, axis=dim)  # (.., len(index), ..)

    @staticmethod
    def backward(ctx, dy):
        return SegmentSum.apply(dy, ctx.index, ctx.n, ctx.dim, ctx.uniform), None, None, None


class SegmentSum(Function):
    """``dx[.., i, ..] = sum of dy[.., j, ..] over the j with index[j] == i`` along ``dim`` (``n`` rows out).

    ``uniform`` is ``r`` when every source entry is repeated ``r`` times in a row: then one reshape
    ``(.., n, r, ..)`` and one sum do it, with no scatter.
    """

    supports_complex = True

    @staticmethod
    def forward(ctx, dy, index, n, dim, uniform):
        xp = get_array_module(dy)
        ctx.index, ctx.dim, ctx.uniform = index, dim, uniform
        if uniform is not None:
            return dy.reshape(dy.shape[:dim] + (n, uniform) + dy.shape[dim + 1:]).sum(axis=dim + 1)
        dx = xp.zeros(dy.shape[:dim] + (n,) + dy.shape[dim + 1:], dtype=dy.dtype)  # (.., n, ..)
        scatter_add(dx, (slice(None),) * dim + (index,), dy)  # repeated indices add up
        return dx

    @staticmethod
    def backward(ctx, ddx):
        return TakeAlong.apply(ddx, ctx.index, ctx.dim, ctx.uniform), None, None, None, None


def _repeats_array(repeats, op: str):
    """A Tensor of repeats as a NumPy int64 array (0-d or 1-D, non-negative); DtypeError/ShapeError otherwise."""
    if str(repeats.dtype) not in ("int64", "int32"):
        raise DtypeError(f"{op}(): expected repeats of dtype int64 or int32, got {repeats.dtype}")
    if repeats.ndim > 1:
        raise ShapeError(f"{op}(): repeats must be a 0-d or 1-d tensor, got shape {tuple(repeats.shape)}")
    reps = backend.to_device(repeats.array, "cpu").astype(np.int64)  # read on the host: CuPy's repeat takes no array
    if reps.size and bool((reps < 0).any()):
        raise ShapeError(f"{op}(): repeats can not be negative, got {reps.tolist()}")
    return reps


@axis_alias
def repeat_interleave(input: Tensor, repeats=None, dim=None, *, output_size=None) -> Tensor:
    """Repeat each entry of ``input`` along ``dim``: ``[a, b]`` with repeats ``[1, 2]`` → ``[a, b, b]``.

    ``repeats``: an int, or an int64/int32 Tensor, 0-d or of size 1 (the same for every entry) or of
    ``input.size(dim)``. ``dim=None`` works on the flattened input. The result is ``input``'s shape with
    ``sum(repeats)`` along ``dim``, dtype of ``input``. ``output_size`` (optional) is that sum, checked.
    ``repeat_interleave(repeats)`` alone (a 1-D integer Tensor) gives ``arange(len(repeats))`` repeated:
    an int64 tensor (PyTorch's second form). The gradient sums the copies of each entry.

    Raises:
        ShapeError (RuntimeError): negative repeats, repeats of the wrong size (naming both sizes), or
            an ``output_size`` that is not ``sum(repeats)``.
        DtypeError (TypeError): repeats not an integer Tensor.  IndexOutOfRangeError: dim out of range.
        TypeError: repeats neither an int nor a Tensor.
    """
    op = "repeat_interleave"
    _need_tensor(input, op)
    if repeats is None:  # repeat_interleave(repeats): the indices 0..n-1, each repeats[i] times
        if input.ndim != 1:
            raise ShapeError(f"{op}(): repeat_interleave(repeats) takes a 1-d tensor of repeats, got shape "
                             f"{tuple(input.shape)}")
        reps = _repeats_array(input, op)
        out = np.repeat(np.arange(reps.shape[0], dtype=np.int64), reps)  # (sum(repeats),)
        _check_output_size(output_size, out.shape[0], op)
        return Tensor._from_op(backend.to_device(out, input.device))
    if isinstance(repeats, Tensor):
        reps = _repeats_array(repeats, op)
    elif isinstance(repeats, numbers.Integral) and not isinstance(repeats, bool):
        if repeats < 0:
            raise ShapeError(f"{op}(): repeats must be non-negative, got {repeats}")
        reps = int(repeats)
    else:
        raise TypeError(f"{op}(): expected repeats to be an int or an integer Tensor, got {type(repeats).__name__}")
    if dim is None:
        x, d = reshape(input, (-1,)), 0
    else:
        if not isinstance(dim, numbers.Integral):
            raise TypeError(f"{op}(): expected dim to be an int or None, got {type(dim).__name__}")
        if input.ndim == 0:
            raise IndexOutOfRangeError(f"{op}(): dim {dim} given for a 0-d input (use dim=None)")
        x, d = input, _dim(int(dim), input.ndim, op)
    n = x.shape[d]
    xp = get_array_module(x.array)
    if isinstance(reps, int) or reps.size == 1:  # one repeat count for every entry
        r = int(reps) if isinstance(reps, int) else int(reps.reshape(-1)[0])
        index, uniform = xp.repeat(xp.arange(n, dtype=np.int64), r), r  # (n * r,)
    else:
        if reps.shape[0] != n:
            raise ShapeError(f"{op}(): repeats must have the same size as input along dim, but got repeats of size "
                             f"{reps.size} and input of shape {tuple(input.shape)} with size {n} along dim {d}")
        index = backend.to_device(np.repeat(np.arange(n, dtype=np.int64), reps), x.device)  # (sum(repeats),)
        uniform = None
    _check_output_size(output_size, index.shape[0], op)
    return TakeAlong.apply(x, index, d, uniform)


def _check_output_size(output_size, total: int, op: str) -> None:
    if output_size is not None and output_size != total:
        raise ShapeError(f"{op}(): invalid output_size: expected {total} (the sum of repeats), got {output_size}")


# Tensor.flip and Tensor.tile take the dims spread out too (listed in ops/methods.py)
def _flip_method(self, *dims):
    return flip(self, _seq_args(dims, "flip", "dims"))


def _tile_method(self, *dims):
    return tile(self, _seq_args(dims, "tile", "dims"))

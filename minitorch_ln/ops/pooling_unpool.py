"""``max_unpool1d/2d/3d``: the partial inverse of max pooling: every input value is put back at the flat
position its max-pool index names in a zero output (``(N, C, *out)``), as ``torch.nn.functional``.

Forward: ``y[n, c].ravel()[idx[n, c, k]] = x[n, c, k]`` (an assignment: with a repeated index the last
write wins, as ATen's CPU loop). Its gradient in ``x`` is the gather ``dy[n, c].ravel()[idx]`` (each
input reads the cell it was written to), :class:`~minitorch_ln.ops.pooling.GatherFlat`, whose own
gradient is the scatter-add: every order of derivative follows. Output sizes from PyTorch's
``_unpool_output_size``.
"""

from __future__ import annotations

import math

import numpy as np

from ..autograd.function import Function
from ..backend import get_array_module
from ..tensor import Tensor
from ._util import require_float
from .convolution import ntuple
from .pooling import GatherFlat

__all__ = ["max_unpool1d", "max_unpool2d", "max_unpool3d"]


class MaxUnpool(Function):
    """``y = zeros (N, C, *out)`` with ``y[n, c].ravel()[idx[n, c]] = x[n, c]``; ``x``, ``idx`` ``(N, C, *in)``."""

    @staticmethod
    def forward(ctx, x, idx, out):
        xp = get_array_module(x)
        N, C = x.shape[:2]
        ctx.idx = idx
        y = xp.zeros((N, C, math.prod(out)), dtype=x.dtype)  # (N, C, P)
        flat = idx.reshape(N, C, -1) if idx.size else idx.reshape(N, C, 0)
        rows = xp.arange(N).reshape(N, 1, 1), xp.arange(C).reshape(1, C, 1)
        y[rows[0], rows[1], flat] = x.reshape(flat.shape)
        return y.reshape((N, C) + tuple(out))

    @staticmethod
    def backward(ctx, dy):
        return GatherFlat.apply(dy, ctx.idx), None, None


def _output_size(x, k, s, p, output_size):
    """PyTorch's ``_unpool_output_size``: the default ``(in - 1)·stride + kernel - 2·pad``, or a given size
    (with or without ``N, C``) within one stride of it."""
    nd = len(k)
    default = [(x.shape[-nd + d] - 1) * s[d] + k[d] - 2 * p[d] for d in range(nd)]
    if output_size is None:
        return default
    output_size = [int(v) for v in output_size]
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a "
                         f"length of '{len(output_size)}'")
    for d in range(nd):
        lo, hi = default[d] - s[d], default[d] + s[d]
        if not lo < output_size[d] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})')
    return output_size


def _max_unpool(op, nd, input, indices, kernel_size, stride, padding, output_size):  # noqa: A002
    for name, t in (("input", input), ("indices", indices)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
    k = ntuple(kernel_size, nd, "kernel_size", op)
    s = k if stride is None else ntuple(stride, nd, "stride", op)
    p = ntuple(padding, nd, "padding", op)
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{op}: Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d Tensor, but got a "
                           f"tensor with {input.ndim} dimensions.")
    if indices.dtype != np.int64:
        raise RuntimeError(f"{op}: elements in indices should be type int64 but got: {indices.dtype}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"{op}: Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    require_float(input, op)
    out = _output_size(input, k, s, p, output_size)
    if any(o <= 0 for o in out):
        raise RuntimeError(f"{op}: the output size {out} must be positive (input {list(input.shape)})")
    unbatched = input.ndim == nd + 1
    x, idx = (input.unsqueeze(0), indices.unsqueeze(0)) if unbatched else (input, indices)
    a = idx.array
    size = math.prod(out)
    if a.size and (int(a.min()) < 0 or int(a.max()) >= size):
        bad = int(a.max()) if int(a.max()) >= size else int(a.min())
        raise RuntimeError(f"{op}: Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, out))})")
    y = MaxUnpool.apply(x, get_array_module(a).ascontiguousarray(a), tuple(out))
    return y.squeeze(0) if unbatched else y


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:  # noqa: A002
    """``(N, C, L)`` or ``(C, L)`` values and their int64 ``max_pool1d`` indices → ``(N, C, OL)`` with
    ``OL = (L - 1)·stride - 2·padding + kernel_size`` (or ``output_size``), zeros elsewhere.

    Raises RuntimeError for another rank, indices that are not int64 or not the input's shape, or an
    index outside the output; ValueError for an ``output_size`` more than a stride from the default.
    """
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:  # noqa: A002
    """``(N, C, H, W)`` or ``(C, H, W)`` with flat ``h·OW + w`` indices → ``(N, C, OH, OW)``; see :func:`max_unpool1d`."""
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:  # noqa: A002
    """``(N, C, D, H, W)`` or ``(C, D, H, W)`` → ``(N, C, OD, OH, OW)``; see :func:`max_unpool1d`."""
    return _max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding, output_size)



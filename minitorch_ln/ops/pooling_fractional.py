"""Fractional max pooling (Graham, 2014): ``fractional_max_pool2d/3d``, as ``torch.nn.functional``.

Per ``(n, c)`` plane and axis, one uniform sample ``u`` places the ``O`` windows of size ``k`` on an
input of length ``I`` (ATen's ``generate_intervals``, in the input's dtype)::

    α = (I - k) / (O - 1),   start_o = ⌊(o + u)·α⌋ - ⌊u·α⌋  (o < O - 1),   start_{O-1} = I - k

and each output is its window's maximum (the first in row-major order, a NaN wins), then a gather
(:class:`~minitorch_ln.ops.pooling.GatherFlat`: gradient to that element, every order). The samples
are ``_random_samples (N, C, nd)`` when given (2-d: ``[..., 0]`` places the width, ``[..., 1]`` the
height; 3-d: time, height, width), else drawn with ``rand`` from the device's generator.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..backend import get_array_module
from ..tensor import Tensor
from .convolution import ntuple
from .creation import rand
from .pooling import GatherFlat

__all__ = ["fractional_max_pool2d", "fractional_max_pool3d"]


def _intervals(u, size, out, k, dtype):
    """``(N, C)`` samples → window starts ``(N, C, out)`` (int64), computed in ``dtype`` as ATen."""
    starts = np.empty(u.shape + (out,), dtype=np.int64)
    if out > 1:
        alpha = dtype.type(size - k) / dtype.type(out - 1)
        o = np.arange(out - 1, dtype=dtype)
        starts[..., :-1] = ((o + u[..., None]) * alpha).astype(np.int64) - (u * alpha).astype(np.int64)[..., None]
    if out > 0:
        starts[..., -1] = size - k
    return starts


def _fractional(op, nd, input, kernel_size, output_size, output_ratio, return_indices, samples):  # noqa: A002
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{op}: expected a {nd + 1}D or {nd + 2}D input, but got input of size {list(input.shape)}")
    if input.dtype.kind != "f":
        raise TypeError(f"{op}: expected a floating point input, got {input.dtype}")
    k = ntuple(kernel_size, nd, "kernel_size", op)
    sizes = tuple(input.shape[-nd:])
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
        if isinstance(output_ratio, (tuple, list)) and len(output_ratio) > nd:
            raise ValueError(f"{op} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = (output_ratio,) * nd if isinstance(output_ratio, numbers.Real) else tuple(output_ratio)
        ratio = ratio * nd if len(ratio) == 1 else ratio
        output_size = [int(n * r) for n, r in zip(sizes, ratio)]
    out = ntuple(output_size, nd, "output_size", op)
    for a, (n, o, kk) in enumerate(zip(sizes, out, k)):
        if o + kk - 1 > n:
            raise RuntimeError(f"{op}(): pool size {kk} too large relative to input size {n} and output size {o} "
                               f"(dimension {a})")
    x = input.unsqueeze(0) if input.ndim == nd + 1 else input
    N, C = x.shape[:2]
    if samples is None:
        samples = rand(N, C, nd, dtype=x.dtype, device=x.device)
    if (not isinstance(samples, Tensor) or samples.ndim != 3 or tuple(samples.shape[1:]) != (C, nd)
            or samples.shape[0] < N):
        raise RuntimeError(f"{op}: expected _random_samples of shape {[N, C, nd]} (at least {N} rows, as ATen "
                           f"reads the first ones), got {list(getattr(samples, 'shape', []))}")
    u = np.asarray(samples.detach().cpu().array)[:N].astype(x.dtype)  # (N, C, nd)
    order = (1, 0) if nd == 2 else (0, 1, 2)  # which sample places which axis (ATen)
    m = nd
    flat = np.zeros((N, C) + (1,) * 2 * m, dtype=np.int64)  # (N, C, *O, *k) after the loop
    for a in range(m):
        starts = _intervals(u[..., order[a]], sizes[a], out[a], k[a], np.dtype(x.dtype))  # (N, C, O_a)
        cells = starts[..., None] + np.arange(k[a])  # (N, C, O_a, k_a)
        shape = [N, C] + [1] * 2 * m
        shape[2 + a], shape[2 + m + a] = out[a], k[a]
        flat = flat * sizes[a] + cells.reshape(shape)
    P, kk = math.prod(out), math.prod(k)
    flat = np.broadcast_to(flat, (N, C) + tuple(out) + tuple(k)).reshape(N, C, P, kk)
    xp = get_array_module(x.array)
    fl = xp.asarray(flat)
    win = xp.take_along_axis(x.array.reshape(N, C, math.prod(sizes)), fl.reshape(N, C, P * kk), axis=2)
    win = win.reshape(N, C, P, kk)
    kidx = xp.argmax(win, axis=-1)  # the first maximum
    isnan = xp.isnan(win)
    kidx = xp.where(isnan.any(axis=-1), kk - 1 - xp.argmax(isnan[..., ::-1], axis=-1), kidx)
    idx = xp.take_along_axis(fl, kidx[..., None], axis=-1)[..., 0].reshape((N, C) + tuple(out))  # (N, C, *O)
    idx = xp.ascontiguousarray(idx.astype(np.int64))
    y = GatherFlat.apply(x, idx)
    if input.ndim == nd + 1:
        y, idx = y.squeeze(0), idx[0]
    return (y, Tensor._from_op(idx)) if return_indices else y


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,  # noqa: A002
                          _random_samples=None):
    """``(N, C, H, W)`` or ``(C, H, W)`` → ``(N, C, *output_size)`` (or ``⌊size·output_ratio⌋``), the
    maximum of pseudo-randomly placed ``kernel_size`` windows (module docstring); ``return_indices``
    adds the int64 flat indices ``h·W + w``.

    Raises ValueError without an ``output_size`` or ``output_ratio``; RuntimeError (PyTorch's messages)
    for another rank, a window too large for its input and output sizes, samples of the wrong shape.
    """
    return _fractional("fractional_max_pool2d", 2, input, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,  # noqa: A002
                          _random_samples=None):
    """``(N, C, T, H, W)`` or ``(C, T, H, W)`` → ``(N, C, *output_size)``; see :func:`fractional_max_pool2d`."""
    return _fractional("fractional_max_pool3d", 3, input, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples)

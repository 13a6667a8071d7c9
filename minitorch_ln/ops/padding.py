"""``pad`` (``torch.nn.functional.pad``): constant, reflect, replicate and circular padding.

Constant padding is its own ``Function`` (backward: the slice of ``dy`` that the input filled);
negative pads crop first, through ordinary (differentiable) indexing. The other modes are a gather
along each padded axis with a fixed index map (``reflect``: ``… 2 1 | 0 1 2 … n-1 | n-2 …``,
``replicate``: clip, ``circular``: wrap), the one-unweighted-tap case of the resize's
:class:`~minitorch_ln.ops.interpolate.AxisTaps`: its backward scatters ``dy`` back along that axis,
and the two are each other's adjoint, so every order of derivative works.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..autograd.function import Function
from ..backend import get_array_module
from ..tensor import Tensor
from .autocast_policies import autocast
from .interpolate import AxisTaps

__all__ = ["pad"]


class PadConstant(Function):
    """``y = x`` surrounded by ``value``; ``pads`` ``((lo, hi), ...)`` per axis, all ``≥ 0``.

    Linear in ``x`` with real (0/1) coefficients, so the same slice is the backward for complex ``x``
    (docs/complex.md)."""

    supports_complex = True

    @staticmethod
    def forward(ctx, x, pads, value):
        xp = get_array_module(x)
        ctx.inner = tuple(slice(lo, lo + n) for (lo, _), n in zip(pads, x.shape))
        return xp.pad(x, pads, mode="constant", constant_values=x.dtype.type(value))

    @staticmethod
    def backward(ctx, dy):
        return dy[ctx.inner], None, None


def _index_map(mode: str, n: int, lo: int, hi: int, xp):
    o = np.arange(-lo, n + hi)
    if mode == "reflect":
        o = np.abs(o)
        o = np.where(o >= n, 2 * (n - 1) - o, o)
    elif mode == "replicate":
        o = np.clip(o, 0, n - 1)
    else:  # circular
        o = np.mod(o, n)
    return xp.asarray(o.astype(np.int64))


_SUPPORTED = ("  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
              "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
              "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


@autocast("pad")
def pad(input, pad, mode: str = "constant", value=None) -> Tensor:
    """Pad the last ``len(pad)//2`` dimensions, as ``torch.nn.functional.pad``.

    ``pad = (left_last, right_last, left_second_last, right_second_last, ...)``: the last dimension
    first. Any shape ``(*)`` → the padded shape, same dtype. ``mode='constant'`` fills with ``value``
    (default 0) and accepts negative pads (they crop); ``'reflect'`` (pad < size), ``'replicate'`` and
    ``'circular'`` (pad ≤ size) take the 2-D/3D, 3-D/4-D or 4-D/5-D inputs PyTorch takes.

    Raises:
        TypeError: input not a Tensor, pad not a sequence of ints, a complex ``value`` (as PyTorch).
        RuntimeError: odd pad length, more pads than dims, a pad too large for its dimension, a
            negative output size, a ``value`` with a non-constant mode.
        NotImplementedError: an unknown mode, or an input/pad-length combination PyTorch does not support.
    """
    if isinstance(value, numbers.Number) and not isinstance(value, numbers.Real):
        raise TypeError(f"pad(): argument 'value' must be float, not {type(value).__name__}")
    return padded(input, pad, mode, value)


def padded(input, pad, mode: str, value) -> Tensor:  # noqa: A002
    """:func:`pad` without its check that ``value`` is real: ``constant_pad_nd`` takes any number, as PyTorch's."""
    if not isinstance(input, Tensor):
        raise TypeError(f"pad: input must be a Tensor, got {type(input).__name__}")
    if not isinstance(pad, (tuple, list)) or not all(isinstance(p, numbers.Integral) and not isinstance(p, bool)
                                                     for p in pad):
        raise TypeError(f"pad: pad must be a tuple of ints, got {pad!r}")
    if len(pad) % 2:
        raise RuntimeError(f"Padding length must be divisible by 2, got a pad of length {len(pad)}")
    npad = len(pad) // 2
    if npad > input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.ndim}")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode} (expected 'constant', 'reflect', 'replicate' "
                                  "or 'circular')")
    dims = [input.ndim - 1 - i for i in range(npad)]  # pad[2i:2i+2] pads dims[i]
    pairs = [(int(pad[2 * i]), int(pad[2 * i + 1])) for i in range(npad)]
    for d, (lo, hi) in zip(dims, pairs):
        if input.shape[d] + lo + hi < 0:
            raise RuntimeError(f"pad: the padded size of dimension {d} would be {input.shape[d] + lo + hi} (size "
                               f"{input.shape[d]}, pad ({lo}, {hi})); it must be non-negative")
    if mode == "constant":
        return _pad_constant(input, dims, pairs, 0 if value is None else value)
    if value is not None:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if npad > 3 or input.ndim not in (npad + 1, npad + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
                                  f"Supported combinations for non-constant padding:\n{_SUPPORTED}")
    xp = get_array_module(input.array)
    cropped = ""
    if mode == "circular" and any(lo < 0 or hi < 0 for lo, hi in pairs):
        # as PyTorch: crop the negative pads first, then wrap within what is left ((-1, 1) on [0, 1, 2, 3]
        # is [1, 2, 3, 1]); a pad larger than that remainder would wrap around more than once: refused below
        crop = [slice(None)] * input.ndim
        for d, (lo, hi) in zip(dims, pairs):
            crop[d] = slice(max(-lo, 0), input.shape[d] - max(-hi, 0))
        input, pairs = input[tuple(crop)], [(max(lo, 0), max(hi, 0)) for lo, hi in pairs]
        cropped = f" (after cropping the negative pads of {tuple(pad)})"
    out = input
    for d, (lo, hi) in zip(dims, pairs):
        n = input.shape[d]
        limit = {"circular": n, "reflect": n - 1}.get(mode, max(lo, hi))  # replicate: any size
        if n == 0 or max(lo, hi) > limit:
            raise RuntimeError(f"pad ({mode}): padding size should be {'at most' if mode == 'circular' else 'less than'}"
                               f" the corresponding input dimension, but got: padding ({lo}, {hi}) at dimension {d} "
                               f"of input {list(input.shape)}{cropped}")
        if lo or hi:
            out = AxisTaps.apply(out, [(_index_map(mode, n, lo, hi, xp), None)], d)  # one unweighted tap: a gather
    return out


def _pad_constant(x, dims, pairs, value):
    crop = [slice(None)] * x.ndim
    pads = [(0, 0)] * x.ndim
    for d, (lo, hi) in zip(dims, pairs):
        crop[d] = slice(max(-lo, 0), x.shape[d] - max(-hi, 0))
        pads[d] = (max(lo, 0), max(hi, 0))
    if any(lo < 0 or hi < 0 for lo, hi in pairs):
        x = x[tuple(crop)]
        if all(p == (0, 0) for p in pads):
            return x
    return PadConstant.apply(x, tuple(pads), value)

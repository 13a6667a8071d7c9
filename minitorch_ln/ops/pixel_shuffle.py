"""Sub-pixel rearrangement: ``pixel_shuffle`` and ``pixel_unshuffle`` (Shi et al. 2016, ESPCN).

``pixel_shuffle`` moves an ``r × r`` block of channels into space::

    y[..., c, h·r + i, w·r + j] = x[..., c·r² + i·r + j, h, w]

a reshape ``(…, C, r, r, H, W)``, a permutation to ``(…, C, H, r, W, r)`` and a reshape to
``(…, C, H·r, W·r)``. ``pixel_unshuffle`` undoes it. Both only move elements, so each is a
permutation matrix ``P``, and the gradient of ``y = P x`` is ``Pᵀ dy = P⁻¹ dy``: the backward of
shuffle is unshuffle and the backward of unshuffle is shuffle, to every order.
"""

from __future__ import annotations

import numbers

from ..autograd.function import Function
from ..errors import ShapeError
from ..tensor import Tensor

__all__ = ["channel_shuffle", "pixel_shuffle", "pixel_unshuffle"]


# ================================================================================ array forms
def _shuffle(x, r):
    """``(*B, C·r², H, W)`` → ``(*B, C, H·r, W·r)`` (a fresh array)."""
    *B, Cr2, H, W = x.shape
    nb = len(B)
    x = x.reshape(*B, Cr2 // (r * r), r, r, H, W)  # (*B, C, r, r, H, W)
    x = x.transpose(*range(nb), nb, nb + 3, nb + 1, nb + 4, nb + 2)  # (*B, C, H, r, W, r)
    return x.copy().reshape(*B, Cr2 // (r * r), H * r, W * r)


def _unshuffle(x, r):
    """``(*B, C, H·r, W·r)`` → ``(*B, C·r², H, W)`` (a fresh array)."""
    *B, C, Hr, Wr = x.shape
    nb = len(B)
    x = x.reshape(*B, C, Hr // r, r, Wr // r, r)  # (*B, C, H, r, W, r)
    x = x.transpose(*range(nb), nb, nb + 2, nb + 4, nb + 1, nb + 3)  # (*B, C, r, r, H, W)
    return x.copy().reshape(*B, C * r * r, Hr // r, Wr // r)


# ================================================================================ Functions
class PixelShuffleFn(Function):
    """``(*, C·r², H, W)`` → ``(*, C, H·r, W·r)``; backward: :class:`PixelUnshuffleFn`."""

    supports_complex = True  # moves or copies elements only: the same backward for complex (docs/complex.md)

    @staticmethod
    def forward(ctx, x, r):
        ctx.r = r
        return _shuffle(x, r)

    @staticmethod
    def backward(ctx, dy):
        return PixelUnshuffleFn.apply(dy, ctx.r), None


class PixelUnshuffleFn(Function):
    """``(*, C, H·r, W·r)`` → ``(*, C·r², H, W)``; backward: :class:`PixelShuffleFn`."""

    supports_complex = True  # moves or copies elements only: the same backward for complex (docs/complex.md)

    @staticmethod
    def forward(ctx, x, r):
        ctx.r = r
        return _unshuffle(x, r)

    @staticmethod
    def backward(ctx, dx):
        return PixelShuffleFn.apply(dx, ctx.r), None


# ================================================================================ public functions
def _check(op: str, x, r, name: str) -> int:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(x).__name__}")
    if not isinstance(r, numbers.Integral) or isinstance(r, bool):
        raise TypeError(f"{op}(): argument '{name}' must be int, not {type(r).__name__}")
    if x.ndim < 3:
        raise ShapeError(f"{op} expects input to have at least 3 dimensions, but got input with {x.ndim} "
                         f"dimension(s)")
    if r <= 0:
        raise ShapeError(f"{op} expects a positive {name}, but got {r}")
    return int(r)


def pixel_shuffle(input, upscale_factor) -> Tensor:
    """Rearrange ``(*, C·r², H, W)`` → ``(*, C, H·r, W·r)``, as ``torch.nn.functional.pixel_shuffle``:
    ``y[..., c, h·r + i, w·r + j] = x[..., c·r² + i·r + j, h, w]``. Any dtype; any number of batch dims,
    zero sizes allowed. Source: Shi et al., "Real-Time Single Image and Video Super-Resolution Using an
    Efficient Sub-Pixel Convolutional Neural Network" (2016).

    Raises:
        ShapeError (a RuntimeError): fewer than 3 dims, ``upscale_factor <= 0``, or ``input.size(-3)``
            not divisible by ``upscale_factor²``.
        TypeError: a non-int ``upscale_factor``.
    """
    r = _check("pixel_shuffle", input, upscale_factor, "upscale_factor")
    if input.shape[-3] % (r * r):
        raise ShapeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                         f"upscale_factor, but input.size(-3)={input.shape[-3]} is not divisible by {r * r}")
    return PixelShuffleFn.apply(input, r)


def pixel_unshuffle(input, downscale_factor) -> Tensor:
    """Rearrange ``(*, C, H·r, W·r)`` → ``(*, C·r², H, W)``, the inverse of :func:`pixel_shuffle`, as
    ``torch.nn.functional.pixel_unshuffle``. Any dtype; zero sizes allowed.

    Raises:
        ShapeError (a RuntimeError): fewer than 3 dims, ``downscale_factor <= 0``, or a height or width
            not divisible by ``downscale_factor``.
        TypeError: a non-int ``downscale_factor``.
    """
    r = _check("pixel_unshuffle", input, downscale_factor, "downscale_factor")
    for what, d in (("height", -2), ("width", -1)):
        if input.shape[d] % r:
            raise ShapeError(f"pixel_unshuffle expects {what} to be divisible by downscale_factor, but "
                             f"input.size({d})={input.shape[d]} is not divisible by {r}")
    return PixelUnshuffleFn.apply(input, r)


def channel_shuffle(input, groups) -> Tensor:  # noqa: A002
    """Interleave the channels of ``groups`` groups (ShuffleNet, Zhang et al. 2018): ``(N, C, *)`` →
    ``(N, C, *)`` with channel ``g·(C/groups) + k`` moved to ``k·groups + g``, as
    ``torch.nn.functional.channel_shuffle``. A view-and-copy (reshape, transpose, reshape), so every
    derivative follows; any dtype.

    Raises RuntimeError (PyTorch's messages) for fewer than 3 dims, ``groups <= 0``, or channels not
    divisible by ``groups``; TypeError for a non-Tensor or a non-int ``groups``.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"channel_shuffle: input must be a Tensor, got {type(input).__name__}")
    if not isinstance(groups, int) or isinstance(groups, bool):
        raise TypeError(f"channel_shuffle: groups must be an int, got {type(groups).__name__}")
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    n, c = input.shape[:2]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    rest = tuple(input.shape[2:])
    y = input.reshape((n, groups, c // groups) + rest).transpose(1, 2)  # (N, C/g, g, *)
    return y.reshape((n, c) + rest)

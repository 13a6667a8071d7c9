"""Bicubic ``grid_sample``'s two building blocks: the cubic-convolution weights of the four taps around a
point, and where each tap reads under a padding mode.

The kernel is Keys' cubic convolution (R. Keys, "Cubic convolution interpolation for digital image
processing", IEEE Trans. ASSP 29(6), 1981): a piecewise cubic ``W(s)`` that is 1 at ``s = 0``, 0 at the
other integers, has a continuous first derivative, and vanishes for ``|s| >= 2``::

    W(s) = (A + 2)|s|^3 - (A + 3)|s|^2 + 1          for |s| <= 1
    W(s) = A|s|^3 - 5A|s|^2 + 8A|s| - 4A            for 1 < |s| < 2

Keys' paper recommends ``A = -0.5``; PyTorch (``cubic_convolution1``/``cubic_convolution2`` in
``aten/src/ATen/native/UpSample.h``, used by ``GridSampler.h`` and ``GridSamplerKernel.cpp``) takes
``A = -0.75``, as OpenCV does, and so does this module. A point at fractional offset ``t`` in ``[0, 1)``
past tap 0 reads taps ``-1, 0, 1, 2`` at distances ``1 + t, t, 1 - t, 2 - t``.

PyTorch applies the padding mode to each tap's integer position, not to the point: the point is only
unnormalized (never clipped or reflected, which would move the 4x4 neighbourhood), and then every tap is
clipped (``border``), reflected and clipped (``reflection``), or read as 0 when outside (``zeros``).
"""

from __future__ import annotations

from ..tensor import Tensor

__all__: list[str] = []  # building blocks of ops/grid_sample.py, no public names

A = -0.75  # PyTorch's cubic-convolution coefficient (Keys' kernel with A = -0.75)


def _near(s: Tensor) -> Tensor:
    """``W(s)`` for ``0 <= s <= 1``."""
    return ((A + 2) * s - (A + 3)) * s * s + 1


def _far(s: Tensor) -> Tensor:
    """``W(s)`` for ``1 <= s <= 2``."""
    return ((A * s - 5 * A) * s + 8 * A) * s - 4 * A


def cubic_weights(t: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The weights of taps ``-1, 0, 1, 2`` for fractional offsets ``t`` (any shape, in ``[0, 1)``): Tensor ops,
    so they are differentiable in ``t`` (the grid's gradient). They sum to 1 for every ``t``."""
    return _far(t + 1), _near(t), _near(1 - t), _far(2 - t)


def tap_coordinates(k, size: int, padding_mode: str, align_corners: bool, xp):
    """Where integer tap positions ``k`` (a float array; NaN or ±inf stay outside) read in a dimension of
    ``size`` pixels: as they are (``zeros``: outside reads 0), clipped to ``[0, size - 1]`` (``border``), or
    reflected about the image's edges and then clipped (``reflection``; about the corner pixels' centres with
    ``align_corners``, about the image's outer edges without), as PyTorch's ``compute_coordinates``."""
    if padding_mode == "border":
        return xp.clip(k, 0, size - 1)
    if padding_mode == "reflection":
        twice_low, twice_high = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        if twice_low == twice_high:  # one pixel with align_corners: every tap is that pixel
            return xp.where(xp.isnan(k), k, 0 * k)
        low, span = twice_low / 2, (twice_high - twice_low) / 2
        place = xp.fmod(xp.abs(k - low), 2 * span)  # exact (PyTorch's floor(dist / span) flip count rounds)
        k = xp.where(place <= span, place + low, 2 * span - place + low)
        return xp.clip(k, 0, size - 1)
    return k

"""Resizing: ``interpolate`` (nearest, nearest-exact, area, linear, bilinear, bicubic, trilinear).

Every supported mode is separable and linear in ``x``: along one axis, output cell ``o`` is
``Σ_t w_t[o] · x[i_t[o]]`` for fixed taps ``(i_t, w_t)`` (``kernels/interpolate.py``: one unweighted
tap for nearest, two for linear, four for bicubic; ATen's index and weight formulas from ``UpSample.h``).
A 2-d/3-d resize is the 1-d resize of the width, then the height, then the depth (the order of ATen's
sums). 'area' is ``adaptive_avg_pool{1,2,3}d`` to the output size, as PyTorch's own ``interpolate``.

The gradient of a linear map is its transpose, so with ``y = A x`` along one axis::

    dx[i] = Σ_t Σ_{o: i_t[o] = i} w_t[o] · dy[o]        (AxisTapsT: scatter-add of the weighted dy)

nearest sends each ``dy`` cell to the one source cell it copied; linear splits it between the two
neighbours with the interpolation weights. The transpose of the transpose is ``A`` again, so
``AxisTaps`` and ``AxisTapsT`` are each other's backward and every derivative order is exact.
Argument checks and messages follow ``torch.nn.functional.interpolate`` (PyTorch 2.x).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..autograd.function import Function
from ..kernels import interpolate as K
from ..tensor import Tensor
from ._util import require_float
from .autocast_policies import autocast


# ================================================================================ Functions
class AxisTaps(Function):
    """``y = Σ_t w_t ⊙ x.take(i_t, axis)``: a 1-d resize along ``axis`` with constant taps.

    The taps ``w_t`` are real, so for complex ``x`` the adjoint is the same transpose (no conjugate):
    ``pad``'s reflect/replicate/circular modes take complex input through it."""

    supports_complex = True

    @staticmethod
    def forward(ctx, x, taps, axis):
        ctx.taps, ctx.axis, ctx.size = taps, axis, x.shape[axis]
        return K.taps_apply(x, taps, axis)

    @staticmethod
    def backward(ctx, dy):
        return AxisTapsT.apply(dy, ctx.taps, ctx.axis, ctx.size), None, None


class AxisTapsT(Function):
    """Transpose of :class:`AxisTaps`: the weighted ``dy`` scatter-added into ``size`` source cells."""

    supports_complex = True

    @staticmethod
    def forward(ctx, dy, taps, axis, size):
        ctx.taps, ctx.axis = taps, axis
        return K.taps_adjoint(dy, taps, axis, size)

    @staticmethod
    def backward(ctx, ddx):
        return AxisTaps.apply(ddx, ctx.taps, ctx.axis), None, None, None


# ================================================================================ arguments
SUPPORTED = ("'nearest', 'nearest-exact' and 'area' (3-D, 4-D or 5-D input), 'linear' (3-D), 'bilinear' and "
             "'bicubic' (4-D), 'trilinear' (5-D), antialias=False")
_TORCH_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "lanczos", "area", "nearest-exact")
_NEEDS = {"linear": 3, "bilinear": 4, "trilinear": 5}


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _is_real(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _output_and_scales(x, dim, size, scale_factor, recompute_scale_factor):
    """PyTorch's rules: exactly one of ``size`` / ``scale_factor``, one value or one per spatial dim.
    Returns ``(output sizes, scale factors or None)``; the scales matter only without recompute."""
    spatial = list(x.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {spatial} and output size of {size}. Please provide "
                                 f"input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                                 f"format.")
            if not all(_is_int(v) for v in size):
                raise TypeError(f"expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                                f"Tuple[int, int, int], but got size with types {[type(v) for v in size]}")
            return [int(v) for v in size], None
        if not _is_int(size):
            raise TypeError(f"interpolate: expected size to be an int or a tuple of ints, but got {size!r}")
        return [int(size)] * dim, None
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != dim:
            raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got "
                             f"input with spatial dimensions of {spatial} and scale_factor of shape {scale_factor}. "
                             f"Please provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in "
                             f"(s1, s2, ...,sK) format.")
        scales = list(scale_factor)
    else:
        scales = [scale_factor] * dim
    if not all(_is_real(s) for s in scales):
        raise TypeError(f"interpolate: expected scale_factor to be a float or a tuple of floats, but got "
                        f"{scale_factor!r}")
    scales = [float(s) for s in scales]
    if not all(math.isfinite(s) for s in scales):
        raise RuntimeError(f"interpolate: scale_factor must be finite, but got {scale_factor!r}")
    out = [int(n * s) for n, s in zip(spatial, scales)]  # truncation, as ATen's static_cast<int64_t>
    return out, (None if recompute_scale_factor else scales)


def _check_mode(x, mode, antialias):
    """Raise for a mode PyTorch lacks, one minitorch_ln lacks, or a mode/rank mismatch (as PyTorch)."""
    if antialias:
        if not (mode in ("bilinear", "bicubic", "lanczos") and x.ndim == 4):
            raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                             "4-D tensor as input")
        raise NotImplementedError(f"interpolate: antialias=True is not supported by minitorch_ln; supported: "
                                  f"{SUPPORTED}")
    if mode in _NEEDS and x.ndim in (3, 4, 5) and x.ndim != _NEEDS[mode]:
        raise NotImplementedError(f"Got {x.ndim}D input, but {mode} mode needs {_NEEDS[mode]}D input")
    if mode not in _TORCH_MODES or x.ndim not in (3, 4, 5) or (mode == "bicubic" and x.ndim != 4):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {x.ndim}D) for the "
                                  f"modes: {' | '.join(_TORCH_MODES)} (got {mode})")
    if mode == "lanczos":  # PyTorch's lanczos exists only with antialias
        raise ValueError("Lanczos mode requires antialias=True")


def _check_sizes(x, out):
    names = ("D", "H", "W")[-len(out):]
    ins, outs = ", ".join(f"{k}: {n}" for k, n in zip(names, x.shape[2:])), ", ".join(
        f"{k}: {n}" for k, n in zip(names, out))
    if min(x.shape[2:]) <= 0 or min(out) <= 0:
        sep = " and " if len(out) == 1 else " "
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({ins}){sep}"
                           f"output ({outs})")
    if x.shape[1] == 0:
        raise RuntimeError(f"Non-empty {x.ndim}D data tensor expected but got a tensor with sizes {list(x.shape)}")


# ================================================================================ interpolate
@autocast("interpolate")
def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False) -> Tensor:
    """Resize ``(N, C, L)``, ``(N, C, H, W)`` or ``(N, C, D, H, W)`` to ``(N, C, *size)``, as
    ``torch.nn.functional.interpolate``.

    Modes: ``'nearest'`` (source ``⌊o · s⌋``, PyTorch's legacy rule), ``'nearest-exact'``
    (``⌊(o + ½) · s⌋``), ``'area'`` (the mean of the window ``[⌊o·in/out⌋, ⌈(o+1)·in/out⌉)``; adaptive average
    pooling), all 3-D to 5-D; ``'linear'`` (3-D), ``'bilinear'`` (4-D), ``'trilinear'`` (5-D) and ``'bicubic'``
    (4-D; Keys' cubic convolution, A = -0.75, four taps clamped to the border, source coordinate as linear
    but not clamped at 0: ``kernels/interpolate.py`` ``cubic_taps``), with ``s = 1/scale_factor``
    when a ``scale_factor`` is given and ``recompute_scale_factor`` is not True, else ``in/out``; the
    linear source coordinate is ``o·(in-1)/(out-1)`` (``align_corners=True``) or ``(o + ½)·s - ½``
    clamped at 0. The output size is ``size``, or ``⌊in · scale_factor⌋``. N may be 0. As in PyTorch,
    4-D ``'nearest'`` copies an axis whose size is unchanged and reads ``o // 2`` at double size even
    when ``scale_factor`` says otherwise (ATen's planar kernel); 3-D input follows the formula. PyTorch's
    3-D ``'nearest'`` *backward* takes those shortcuts where its forward does not (a gradient that
    contradicts its forward); ours is the transpose of the forward, as finite differences confirm.
    Dtypes: nearest modes take any dtype; the others float only. Formulas: ATen ``UpSample.h``.

    Raises:
        ValueError: both or neither of ``size``/``scale_factor``; a size/scale of the wrong length;
            ``align_corners`` with a nearest mode; ``recompute_scale_factor`` with ``size``;
            ``antialias`` outside 4-D bilinear/bicubic/lanczos.
        NotImplementedError: a mode/rank PyTorch rejects, or ``antialias=True`` (which minitorch_ln lacks);
            the message names what is supported. ValueError: 'lanczos' without ``antialias`` (as PyTorch).
        RuntimeError: a zero channel count or spatial size, an output size below 1.
        TypeError: a non-Tensor input, non-integer sizes, non-float scales, integer input to a linear mode.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"interpolate: input must be a Tensor, got {type(input).__name__}")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    out, scales = _output_and_scales(input, dim, size, scale_factor, recompute_scale_factor)
    _check_mode(input, mode, antialias)
    if mode == "area":  # PyTorch: adaptive average pooling to the output size (its checks, too)
        from . import pooling
        return getattr(pooling, f"adaptive_avg_pool{dim}d")(input, out)
    _check_sizes(input, out)
    if mode not in ("nearest", "nearest-exact"):
        require_float(input, f"interpolate (mode={mode!r})")
    opmath = np.float64 if input.dtype == np.float64 else np.float32
    y = input
    for k in reversed(range(dim)):  # width first, then height, then depth
        n, o, s = input.shape[2 + k], out[k], None if scales is None else scales[k]
        if mode == "bicubic":
            taps = K.cubic_taps(n, o, s, bool(align_corners), opmath)
        elif mode in ("linear", "bilinear", "trilinear"):
            taps = K.linear_taps(n, o, s, bool(align_corners), opmath)
        else:
            taps = K.nearest_taps(n, o, s, mode == "nearest-exact", opmath, planar=dim == 2)
        y = AxisTaps.apply(y, K.to_device(taps, input.array, input.dtype), 2 + k)
    return y

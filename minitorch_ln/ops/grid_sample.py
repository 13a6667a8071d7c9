"""Spatial transformers: ``affine_grid`` (4-D) and ``grid_sample`` (4-D and 5-D) (``F.affine_grid``, ``F.grid_sample``).

Both are composed of Tensor ops (``matmul``, ``gather``, elementwise math), so their gradients with
respect to ``theta``, ``input`` and ``grid`` are those ops' gradients: bilinear sampling is
``Σ_corners w(ix, iy) · input[corner]``, whose weights are differentiable in the grid coordinates and
whose gathers scatter back into the input. The coordinate maps (unnormalize, border clipping,
reflection) follow PyTorch's ``GridSampler.h`` (``grid_sampler_compute_source_index``).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import OptionError, ShapeError
from ..tensor import Tensor
from .matmul import matmul
from .scatter import gather
from .selection import clamp, where

__all__ = ["affine_grid", "grid_sample"]


def _base_coords(n: int, align_corners: bool, xp, dtype):
    """The normalized coordinate of each of ``n`` pixel centres (``-1`` and ``1`` at the corner pixels'
    centres with ``align_corners``, at their outer edges without)."""
    if align_corners:
        return xp.linspace(-1.0, 1.0, n, dtype=dtype) if n > 1 else xp.zeros(n, dtype=dtype)
    return ((xp.arange(n, dtype=dtype) * 2 + 1) / n - 1).astype(dtype)  # (n,)


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """The sampling grid ``(N, H, W, 2)`` of the affine maps ``theta`` ``(N, 2, 3)`` for an output of
    ``size = (N, C, H, W)``: ``grid[n, h, w] = theta[n] @ (x_w, y_h, 1)`` in normalized coordinates.

    ``align_corners`` as PyTorch (None means False). Gradient with respect to ``theta``.

    Raises:
        ShapeError: ``theta`` not ``(N, 2, 3)`` floats matching ``size``, or ``size`` not 4 long.
    """
    size = tuple(int(s) for s in size)
    if len(size) != 4:
        raise ShapeError(f"affine_grid: only 4-D sizes (N, C, H, W) are supported here, got {size}")
    if not isinstance(theta, Tensor) or not backend.is_floating(theta.dtype) or tuple(theta.shape) != (size[0], 2, 3):
        got = tuple(theta.shape) if isinstance(theta, Tensor) else type(theta).__name__
        raise ShapeError(f"affine_grid: expected a floating theta of shape (N, 2, 3) = {(size[0], 2, 3)} for size "
                         f"{list(size)}, got {got}")
    n, _, h, w = size
    xp, dt = get_array_module(theta.array), theta.dtype
    base = xp.ones((h, w, 3), dtype=dt)  # (H, W, 3): x, y, 1
    base[..., 0] = _base_coords(w, bool(align_corners), xp, dt)[None, :]
    base[..., 1] = _base_coords(h, bool(align_corners), xp, dt)[:, None]
    grid = matmul(Tensor._from_op(base.reshape(1, h * w, 3)), theta.transpose(1, 2))  # (N, H*W, 2)
    return grid.reshape(n, h, w, 2)


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """``coord`` reflected into ``[twice_low / 2, twice_high / 2]`` (PyTorch's ``reflect_coordinates``)."""
    if twice_low == twice_high:
        return coord * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    dist = (coord - low).abs()
    flips = np.floor(get_array_module(dist.array).asarray(dist.detach().array) / span)  # no gradient: a step
    extra = dist - Tensor._from_op((flips * span).astype(dist.array.dtype))
    even = Tensor._from_op(flips % 2 == 0)
    return where(even, extra + low, span - extra + low)


def _source_index(coord: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    ix = _unnormalize(coord, size, align_corners)
    if padding_mode == "border":
        ix = clamp(ix, 0, size - 1)
    elif padding_mode == "reflection":
        ix = _reflect(ix, 0, 2 * (size - 1)) if align_corners else _reflect(ix, -1, 2 * size - 1)
        ix = clamp(ix, 0, size - 1)
    return ix


def _tap_index(pos, size: int, padding_mode: str, align_corners: bool, dtype):
    """Integer tap positions ``pos`` (an array) mapped by the padding mode, as PyTorch's ``get_value_bounded``
    (``compute_coordinates``, then a cast that truncates toward zero); zeros padding leaves them outside."""
    if padding_mode == "zeros":
        return pos
    t = Tensor._from_op(pos.astype(dtype))
    if padding_mode == "reflection":
        t = _reflect(t, 0, 2 * (size - 1)) if align_corners else _reflect(t, -1, 2 * size - 1)
    return clamp(t, 0, size - 1).array.astype(np.int64)


def _cubic_weights(t: Tensor, A: float = -0.75) -> list:
    """Keys' cubic convolution weights of the taps at ``-1, 0, 1, 2`` for the offset ``t`` in ``[0, 1)``
    (ATen's ``get_cubic_upsample_coefficients``, ``A = -0.75``), as Tensor ops so the grid gets its gradient:
    ``c1(x) = ((A + 2) x - (A + 3)) x² + 1`` (``|x| ≤ 1``), ``c2(x) = ((A x - 5A) x + 8A) x - 4A`` (``1 < |x| < 2``)."""
    def c1(x):
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def c2(x):
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A

    return [c2(t + 1), c1(t), c1(1 - t), c2(2 - t)]


def _bicubic(flat: Tensor, ix: Tensor, iy: Tensor, h: int, w: int, padding_mode: str, align: bool) -> Tensor:
    """``Σ_i wy_i Σ_j wx_j · input[y0 - 1 + i, x0 - 1 + j]`` over the 4×4 taps around ``(ix, iy)`` (PyTorch's
    bicubic ``grid_sample``: the padding maps each tap, not the point; an outside tap reads 0) → ``(N, C, P)``."""
    xp = get_array_module(flat.array)
    with np.errstate(invalid="ignore"):
        x0, y0 = xp.floor(ix.detach().array), xp.floor(iy.detach().array)  # (N, P)
        wx = _cubic_weights(ix - Tensor._from_op(x0))  # 4 × (N, P): differentiable in the grid
        wy = _cubic_weights(iy - Tensor._from_op(y0))
        x0, y0 = x0.astype(np.int64), y0.astype(np.int64)
    dt = ix.array.dtype
    out = 0
    for i in range(4):
        yy = _tap_index(y0 - 1 + i, h, padding_mode, align, dt)
        row = 0
        for j in range(4):
            xx = _tap_index(x0 - 1 + j, w, padding_mode, align, dt)
            vals, inside = _gather_at(flat, [yy, xx], (h, w))
            row = row + where(inside, vals, 0.0) * wx[j][:, None, :]  # (N, C, P)
        out = out + row * wy[i][:, None, :]
    return out


def _gather_at(flat: Tensor, pos: list, sizes: tuple) -> Tensor:
    """``input[n, c, *pos]`` for integer arrays ``pos`` (one ``(N, P)`` per spatial dim, in the input's order; any
    value where outside the image), and the mask of the points inside."""
    xp = get_array_module(flat.array)
    inside, idx = True, 0
    for p, size in zip(pos, sizes):
        inside = inside & (p >= 0) & (p < size)  # (N, P)
        idx = idx * size + p
    idx = xp.where(inside, idx, 0).astype(np.int64)  # (N, P)
    n, c, _ = flat.shape
    vals = gather(flat, 2, Tensor._from_op(xp.broadcast_to(idx[:, None, :], (n, c, idx.shape[1])).copy()))
    return vals, Tensor._from_op(inside[:, None, :])  # (N, C, P), (N, 1, P)


class _NearestGridGrad(Function):
    """The identity on ``out``, giving ``grid`` its zero gradient (nearest sampling is a step in the grid), as
    PyTorch's, so that ``grid.grad`` is zeros rather than absent."""

    @staticmethod
    def forward(ctx, out, grid):
        ctx.grid_shape = grid.shape
        return out.copy()

    @staticmethod
    def backward(ctx, dy):
        return dy, Tensor._from_op(get_array_module(dy.array).zeros(ctx.grid_shape, dtype=dy.dtype))


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",  # noqa: A002
                align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` ``(N, C, H, W)`` at the normalized points ``grid`` ``(N, Ho, Wo, 2)`` (x, then y,
    in ``[-1, 1]``) → ``(N, C, Ho, Wo)``, as ``F.grid_sample``; or ``(N, C, D, H, W)`` at ``grid``
    ``(N, Do, Ho, Wo, 3)`` (x, y, z) → ``(N, C, Do, Ho, Wo)`` ("bilinear" is then trilinear, as PyTorch).

    ``mode``: ``"bilinear"``, ``"nearest"`` (ties round half to even, as PyTorch) or ``"bicubic"`` (Keys' cubic
    convolution over 4×4 taps, ``A = -0.75``; the padding mode maps each tap, as PyTorch's). ``padding_mode``:
    ``"zeros"`` (outside reads 0), ``"border"`` (clip to the edge) or ``"reflection"``. ``align_corners``
    as PyTorch (None means False). Gradients with respect to ``input`` and (bilinear, bicubic) ``grid``;
    nearest gives ``grid`` a zero gradient, as PyTorch. A non-finite grid point reads as outside the
    image (0 with zeros padding; PyTorch gives NaN there).

    Raises:
        ShapeError: not 4-D or 5-D, or batch sizes or the last grid dim (2 or 3) that do not fit. OptionError:
        another mode or padding_mode, bicubic of 5-D input. DtypeError-like TypeError: non-float input or grid.
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise OptionError(f"grid_sample: mode must be 'bilinear', 'nearest' or 'bicubic', got {mode!r}")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise OptionError(f"grid_sample: padding_mode must be 'zeros', 'border' or 'reflection', got {padding_mode!r}")
    nd = input.ndim - 2 if isinstance(input, Tensor) else 0  # spatial dims: 2 (H, W) or 3 (D, H, W)
    if nd not in (2, 3) or not isinstance(grid, Tensor) or grid.ndim != nd + 2 or grid.shape[-1] != nd \
            or grid.shape[0] != input.shape[0]:
        raise ShapeError(f"grid_sample: expected input (N, C, H, W) with grid (N, H_out, W_out, 2), or input "
                         f"(N, C, D, H, W) with grid (N, D_out, H_out, W_out, 3), the same N, got "
                         f"{tuple(getattr(input, 'shape', ()))} and {tuple(getattr(grid, 'shape', ()))}")
    if mode == "bicubic" and nd == 3:
        raise OptionError("grid_sample: bicubic interpolation only supports 4-D input (as PyTorch), got 5-D")
    if not backend.is_floating(input.dtype) or grid.dtype != input.dtype:
        raise TypeError(f"grid_sample: expected floating input and grid of one dtype, got {input.dtype} and "
                        f"{grid.dtype}")
    align = bool(align_corners)
    n, c, sizes, out_sizes = input.shape[0], input.shape[1], tuple(input.shape[2:]), tuple(grid.shape[1:-1])
    xp = get_array_module(input.array)
    g = grid.reshape(n, math.prod(out_sizes), nd)  # (N, P, nd): x, y(, z)
    flat = input.reshape(n, c, math.prod(sizes))  # (N, C, H*W) or (N, C, D*H*W)
    coords = [g[..., nd - 1 - k] for k in range(nd)]  # (N, P) each, in the input's dim order: (z,) y, x
    if mode == "bicubic":  # the taps are padded, not the point (PyTorch's GridSampler bicubic)
        h, w = sizes
        iy, ix = (_unnormalize(t, size, align) for t, size in zip(coords, sizes))  # (N, P)
        return _bicubic(flat, ix, iy, h, w, padding_mode, align).reshape(n, c, *out_sizes)
    idx = [_source_index(t, size, padding_mode, align) for t, size in zip(coords, sizes)]  # (N, P) each
    if mode == "nearest":
        with np.errstate(invalid="ignore"):  # NaN/inf coordinates: outside, read as 0
            vals, inside = _gather_at(flat, [xp.round(i.detach().array).astype(np.int64) for i in idx], sizes)
        return _NearestGridGrad.apply(where(inside, vals, 0.0).reshape(n, c, *out_sizes), grid)
    lower = [xp.floor(i.detach().array) for i in idx]  # (N, P) each: the corner below
    with np.errstate(invalid="ignore"):
        w1 = [i - Tensor._from_op(lo) for i, lo in zip(idx, lower)]  # (N, P): differentiable in the grid
        lower = [lo.astype(np.int64) for lo in lower]
    w0 = [1 - w for w in w1]
    out = 0
    for corner in itertools.product((0, 1), repeat=nd):  # (bi/tri)linear: 2^nd corners
        weight = None
        for k, bit in enumerate(corner):
            wk = w1[k] if bit else w0[k]
            weight = wk if weight is None else weight * wk
        vals, inside = _gather_at(flat, [lo + bit for lo, bit in zip(lower, corner)], sizes)
        out = out + where(inside, vals * weight[:, None, :], 0.0)  # (N, C, P): outside corners add 0
    return out.reshape(n, c, *out_sizes)

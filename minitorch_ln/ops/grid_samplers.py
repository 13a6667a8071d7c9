"""ATen's entry points to the spatial transformer, as ``torch.*`` functions: ``grid_sampler``,
``grid_sampler_2d``, ``grid_sampler_3d`` (``F.grid_sample`` with the mode and padding given as PyTorch's
integer codes) and ``affine_grid_generator`` (``F.affine_grid``). The arithmetic and its gradients are
``ops/grid_sample.py``'s.
"""

from __future__ import annotations

from ..errors import OptionError, ShapeError
from ..tensor import Tensor
from .grid_sample import affine_grid, grid_sample

__all__ = ["affine_grid_generator", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d"]

_MODES = ("bilinear", "nearest", "bicubic")  # PyTorch's GridSamplerInterpolation codes 0, 1, 2
_PADDINGS = ("zeros", "border", "reflection")  # its GridSamplerPadding codes 0, 1, 2


def _names(interpolation_mode, padding_mode, align_corners, who: str) -> tuple[str, str]:
    for value, names, what in ((interpolation_mode, _MODES, "interpolation_mode"),
                               (padding_mode, _PADDINGS, "padding_mode")):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 3:
            codes = ", ".join(f"{i} ({n})" for i, n in enumerate(names))
            raise OptionError(f"{who}: {what} must be one of {codes}, got {value!r}")
    if not isinstance(align_corners, bool):
        raise TypeError(f"{who}: align_corners must be a bool, got {type(align_corners).__name__}")
    return _MODES[interpolation_mode], _PADDINGS[padding_mode]


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """``F.grid_sample(input, grid, mode, padding_mode, align_corners)`` with ``interpolation_mode`` 0
    (bilinear), 1 (nearest) or 2 (bicubic) and ``padding_mode`` 0 (zeros), 1 (border) or 2 (reflection), as
    ``torch.grid_sampler``; 4-D or 5-D input. Shapes, dtypes, gradients and errors as ``F.grid_sample``'s.

    Raises:
        OptionError: a code outside 0..2 (PyTorch accepts 3 and reads undefined memory). TypeError: a
        non-bool ``align_corners``. The errors of ``F.grid_sample``.
    """
    mode, padding = _names(interpolation_mode, padding_mode, align_corners, "grid_sampler")
    return grid_sample(input, grid, mode, padding, align_corners)


def _sampler_nd(input, grid, interpolation_mode, padding_mode, align_corners, ndim: int, who: str) -> Tensor:
    mode, padding = _names(interpolation_mode, padding_mode, align_corners, who)
    if not isinstance(input, Tensor) or not isinstance(grid, Tensor) or input.ndim != ndim or grid.ndim != ndim:
        shapes = [tuple(t.shape) if isinstance(t, Tensor) else type(t).__name__ for t in (input, grid)]
        raise ShapeError(f"{who}: expected a {ndim}-D input and a {ndim}-D grid, got {shapes[0]} and {shapes[1]}")
    return grid_sample(input, grid, mode, padding, align_corners)


def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """``torch.grid_sampler_2d``: ``grid_sampler`` for a 4-D input ``(N, C, H, W)`` and grid ``(N, H_out, W_out, 2)``
    only → ``(N, C, H_out, W_out)``.

    Raises:
        ShapeError: another rank. The errors of ``grid_sampler``.
    """
    return _sampler_nd(input, grid, interpolation_mode, padding_mode, align_corners, 4, "grid_sampler_2d")


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """``torch.grid_sampler_3d``: ``grid_sampler`` for a 5-D input ``(N, C, D, H, W)`` and grid
    ``(N, D_out, H_out, W_out, 3)`` only → ``(N, C, D_out, H_out, W_out)``; bilinear (trilinear) or nearest.

    Raises:
        ShapeError: another rank. OptionError: bicubic (code 2), as PyTorch. The errors of ``grid_sampler``.
    """
    return _sampler_nd(input, grid, interpolation_mode, padding_mode, align_corners, 5, "grid_sampler_3d")


def affine_grid_generator(theta: Tensor, size, align_corners: bool) -> Tensor:
    """``torch.affine_grid_generator``: ``F.affine_grid(theta, size, align_corners)`` with ``align_corners``
    required. Shapes, dtypes, gradient and errors as ``F.affine_grid``'s."""
    if not isinstance(align_corners, bool):
        raise TypeError(f"affine_grid_generator: align_corners must be a bool, got {type(align_corners).__name__}")
    return affine_grid(theta, size, align_corners)

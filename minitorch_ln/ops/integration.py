"""The trapezoidal rule: ``trapezoid`` (and its old name ``trapz``) and ``cumulative_trapezoid``.

Along ``dim``, with samples ``y_0 .. y_(n-1)`` at points ``x_0 .. x_(n-1)`` (or spacing ``dx``):
``∫ ≈ Σ_i (x_(i+1) - x_i) · (y_i + y_(i+1)) / 2``, and the cumulative form keeps the partial sums (``n - 1``
of them). Composed of ``narrow``, products and ``sum``/``cumsum``, so the gradient reaches ``y`` and ``x``
alike and is differentiable again. Integer ``y`` integrate in the default float dtype; fewer than two
samples give 0 (and an empty cumulative result), as PyTorch.
"""

from __future__ import annotations

import numbers

from .. import backend
from ..errors import ShapeError
from ..tensor import Tensor
from ._util import normalize_dim
from .scan import cumsum
from .view_ops import narrow

__all__ = ["cumulative_trapezoid", "trapezoid", "trapz"]


def _areas(op: str, y: Tensor, x, dx, dim: int) -> tuple:
    """``(areas of the n - 1 panels along dim, d)``."""
    if not isinstance(y, Tensor):
        raise TypeError(f"{op}(): argument 'y' must be a Tensor, not {type(y).__name__}")
    if x is not None and dx is not None:
        raise TypeError(f"{op}(): pass either x or dx, not both")
    if y.dtype.kind in "biu":
        y = y.to(backend.default_float_dtype())
    d = normalize_dim(dim, y.ndim, f"{op}()")
    n = y.shape[d]
    m = max(n - 1, 0)
    mean = (narrow(y, d, 0, m) + narrow(y, d, min(1, n), m)) * 0.5  # (..., n - 1, ...)
    if x is None:
        step = 1.0 if dx is None else dx
        if not isinstance(step, (numbers.Number, Tensor)) or isinstance(step, Tensor) and step.ndim != 0:
            raise TypeError(f"{op}(): dx must be a number or a 0-d tensor, got {step!r}")
        return mean * step, d
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'x' must be a Tensor, not {type(x).__name__}")
    if x.ndim == 1:
        if x.shape[0] != n:
            raise ShapeError(f"{op}(): There must be one `x` value for each sample point: x has {x.shape[0]}, "
                             f"y has {n} along dim {d}")
        x = x.reshape((n,) + (1,) * (y.ndim - d - 1))  # (n, 1, ..., 1): lines up with dim d
        xd = 0
    else:
        xd = d - y.ndim  # the same dim counted from the right, so that x broadcasts against y
        if x.ndim < -xd or x.shape[xd] != n:
            raise ShapeError(f"{op}(): There must be one `x` value for each sample point: x has shape "
                             f"{tuple(x.shape)}, y has {n} samples along dim {d}")
    if x.dtype.kind in "biu":
        x = x.to(mean.dtype)
    spacing = narrow(x, xd, min(1, n), m) - narrow(x, xd, 0, m)  # (..., n - 1, ...)
    return mean * spacing, d


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx=None, dim: int = -1) -> Tensor:
    """``∫ y`` along ``dim`` by the trapezoidal rule: ``y`` of any shape, ``x`` 1-D (one point per sample) or
    broadcasting against ``y``, else spacing ``dx`` (default 1). The result drops ``dim``.

    Raises ShapeError when ``x`` has another number of points, TypeError for both ``x`` and ``dx``.
    """
    areas, d = _areas("trapezoid", y, x, dx, dim)
    return areas.sum(d)


def trapz(y: Tensor, x: Tensor | None = None, *, dx=None, dim: int = -1) -> Tensor:
    """:func:`trapezoid` under NumPy's older name (``torch.trapz``)."""
    areas, d = _areas("trapz", y, x, dx, dim)
    return areas.sum(d)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx=None, dim: int = -1) -> Tensor:
    """The running trapezoidal integral along ``dim``: size ``n - 1`` there (entry ``i`` integrates samples
    ``0 .. i + 1``); arguments and errors as :func:`trapezoid`."""
    areas, d = _areas("cumulative_trapezoid", y, x, dx, dim)
    return cumsum(areas, d)

"""``torch.gradient``: the derivative of sampled values by finite differences, one tensor per requested dim.

NumPy's ``numpy.gradient`` (which PyTorch follows): second-order central differences inside,
``(f[i+1] - f[i-1]) / (2h)`` for spacing ``h``; at the two ends one-sided differences of first order
(``edge_order=1``) or second order (``edge_order=2``: ``(-3 f0 + 4 f1 - f2) / (2h)``). With coordinates
``x`` per dim (unequal steps ``h_s = x_i - x_(i-1)``, ``h_d = x_(i+1) - x_i``) the interior is
``(-h_d/(h_s(h_s+h_d))) f_(i-1) + ((h_d-h_s)/(h_s h_d)) f_i + (h_s/(h_d(h_s+h_d))) f_(i+1)`` (Fornberg 1988), and
the second-order ends NumPy's matching three-point formulas. Composed of ``narrow`` and arithmetic, so it is
differentiable in ``input`` (the coordinates are constants, as PyTorch's).
"""

from __future__ import annotations

import numbers

from .. import backend
from ..tensor import Tensor
from ._util import normalize_dim
from .stacking import _cat
from .view_ops import narrow

__all__ = ["gradient"]


def _dims(input: Tensor, dim) -> tuple:
    if dim is None:
        return tuple(range(input.ndim))
    dims = (dim,) if isinstance(dim, numbers.Integral) else tuple(dim)
    out = tuple(normalize_dim(d, input.ndim, "gradient") for d in dims)
    if len(set(out)) != len(out):
        raise RuntimeError(f"torch.gradient: dim {tuple(dims)} appears multiple times in the list of dims")
    return out


def _spacings(spacing, dims: tuple) -> list:
    """One spacing per dim: a number or a 1-D coordinate tensor."""
    if spacing is None:
        return [1.0] * len(dims)
    if isinstance(spacing, numbers.Number) or isinstance(spacing, Tensor) and spacing.ndim == 0:
        return [float(spacing)] * len(dims)
    spacing = list(spacing)
    if len(spacing) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or a list of length "
                           f"{len(dims)} (one per dim), but got a list of length {len(spacing)}")
    return [float(s) if isinstance(s, numbers.Number) or isinstance(s, Tensor) and s.ndim == 0 else s
            for s in spacing]


def _along(x: Tensor, d: int, start: int, length: int) -> Tensor:
    return narrow(x, d, start, length)


def _uniform(f: Tensor, d: int, h: float, edge_order: int) -> Tensor:
    n = f.shape[d]
    interior = (_along(f, d, 2, n - 2) - _along(f, d, 0, n - 2)) / (2 * h)  # (..., n - 2, ...)
    f0, f1, fl, fm = _along(f, d, 0, 1), _along(f, d, 1, 1), _along(f, d, n - 1, 1), _along(f, d, n - 2, 1)
    if edge_order == 1:
        first, last = (f1 - f0) / h, (fl - fm) / h
    else:
        f2, fk = _along(f, d, 2, 1), _along(f, d, n - 3, 1)
        first = (f0 * -1.5 + f1 * 2.0 - f2 * 0.5) / h
        last = (fk * 0.5 - fm * 2.0 + fl * 1.5) / h
    return _cat([first, interior, last], d, "gradient")


def _coordinates(f: Tensor, d: int, x: Tensor, edge_order: int) -> Tensor:
    n = f.shape[d]
    if not isinstance(x, Tensor) or x.ndim != 1 or x.shape[0] != n:
        raise RuntimeError(f"torch.gradient expected each tensor in spacing to be 1-D with {n} coordinates (the size "
                           f"of dim {d}), got {getattr(x, 'shape', x)}")
    x = x.detach() if x.dtype.kind == "f" else x.to(f.dtype)  # float coordinates promote (float64 ones win)
    x = x.reshape((n,) + (1,) * (f.ndim - d - 1))  # lines up with dim d
    dx = _along(x, 0, 1, n - 1) - _along(x, 0, 0, n - 1)  # (n - 1, 1, ...)
    hs, hd = _along(dx, 0, 0, n - 2), _along(dx, 0, 1, n - 2)
    a, b, c = -hd / (hs * (hd + hs)), (hd - hs) / (hd * hs), hs / (hd * (hd + hs))
    interior = a * _along(f, d, 0, n - 2) + b * _along(f, d, 1, n - 2) + c * _along(f, d, 2, n - 2)
    f0, f1, fl, fm = _along(f, d, 0, 1), _along(f, d, 1, 1), _along(f, d, n - 1, 1), _along(f, d, n - 2, 1)
    if edge_order == 1:
        first, last = (f1 - f0) / _along(dx, 0, 0, 1), (fl - fm) / _along(dx, 0, n - 2, 1)
    else:
        d1, d2 = _along(dx, 0, 0, 1), _along(dx, 0, 1, 1)
        first = (-(2 * d1 + d2) / (d1 * (d1 + d2))) * f0 + ((d1 + d2) / (d1 * d2)) * f1 + (-d1 / (d2 * (d1 + d2))) * \
            _along(f, d, 2, 1)
        d1, d2 = _along(dx, 0, n - 3, 1), _along(dx, 0, n - 2, 1)
        last = (d2 / (d1 * (d1 + d2))) * _along(f, d, n - 3, 1) + (-(d2 + d1) / (d1 * d2)) * fm + \
            ((2 * d2 + d1) / (d2 * (d1 + d2))) * fl
    return _cat([first, interior, last], d, "gradient")


def gradient(input: Tensor, *, spacing=1, dim=None, edge_order: int = 1) -> tuple:
    """The finite-difference derivative of ``input`` along each dim in ``dim`` (all by default): a tuple of
    tensors of ``input``'s shape. ``spacing``: a number (one step for all dims), a list of numbers (one per dim)
    or a list of 1-D coordinate tensors. Integer inputs give the default float dtype.

    Raises RuntimeError for ``edge_order`` other than 1 or 2, a dim with fewer than ``edge_order + 1``
    samples, or a ``spacing`` list of another length; IndexError for a bad ``dim``.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"gradient(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if edge_order not in (1, 2):
        raise RuntimeError(f"torch.gradient only supports edge_order=1 and edge_order=2, got {edge_order!r}")
    f = input.to(backend.default_float_dtype()) if input.dtype.kind in "biu" else input
    dims = _dims(f, dim)
    out = []
    for d, s in zip(dims, _spacings(spacing, dims)):
        if f.shape[d] < edge_order + 1:
            raise RuntimeError(f"torch.gradient expected each dimension size to be at least edge_order+1, got size "
                               f"{f.shape[d]} along dim {d}")
        out.append(_uniform(f, d, s, edge_order) if isinstance(s, float) else _coordinates(f, d, s, edge_order))
    return tuple(out)

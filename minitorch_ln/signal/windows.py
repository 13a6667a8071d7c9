"""``torch.signal.windows``: the window functions ``bartlett``, ``blackman``, ``cosine``, ``exponential``,
``gaussian``, ``general_cosine``, ``general_hamming``, ``hamming``, ``hann``, ``kaiser``, ``nuttall``.

Each gives ``M`` samples ``w[0..M-1]`` of a window, symmetric (``sym=True``, for filter design) or periodic
(``sym=False``, for spectral analysis: the symmetric window of ``M + 1`` points without its last one), as
SciPy's ``scipy.signal.windows`` and PyTorch's ``torch/signal/windows/windows.py`` define them (the same
formulas and sample points; e.g. ``general_cosine(a) = Σ_i (-1)^i a_i cos(2π i n / (M - 1))``). Values are
computed on the host in float64 and cast to ``dtype`` (float32 by default, or float64); they are leaves
(``requires_grad`` as asked), as PyTorch's factories.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

import numpy as np
from scipy.special import i0

from .. import backend
from ..tensor import Tensor
from ..tensor import tensor as _tensor

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


def _checks(name: str, M, dtype, layout) -> np.dtype:
    if not isinstance(M, numbers.Integral) or isinstance(M, bool):
        raise TypeError(f"{name}: the window length M must be an int, got {M!r}")
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and str(layout) not in ("torch.strided", "strided"):
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    dt = backend.default_float_dtype() if dtype is None else backend.as_dtype(dtype)
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dt}")
    return dt


def _out(w: np.ndarray, dt, device, requires_grad) -> Tensor:
    return _tensor(np.asarray(w, dtype=np.float64).astype(dt), device=device, requires_grad=requires_grad)


def _points(M: int, start: float, step: float) -> np.ndarray:
    return start + step * np.arange(M, dtype=np.float64)  # (M,)


def exponential(M: int, *, center=None, tau: float = 1.0, sym: bool = True, dtype=None, layout=None, device=None,
                requires_grad: bool = False) -> Tensor:
    """``w[n] = exp(-|n - center| / tau)``, ``center`` the middle by default (given only for ``sym=False``).
    Raises ValueError for ``tau <= 0`` or a ``center`` with ``sym=True``."""
    dt = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    return _out(np.exp(-np.abs(_points(M, -center / tau, 1.0 / tau))), dt, device, requires_grad)


def cosine(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """``w[n] = sin(π (n + 1/2) / M)`` (the sine window; ``M + 1`` in the denominator when periodic)."""
    dt = _checks("cosine", M, dtype, layout)
    c = math.pi / (M + 1 if not sym and M > 1 else max(M, 1))
    return _out(np.sin(_points(M, 0.5 * c, c)), dt, device, requires_grad)


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype=None, layout=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``w[n] = exp(-(n - (M - 1)/2)² / (2 std²))``. Raises ValueError for ``std <= 0``."""
    dt = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    c = 1 / (std * math.sqrt(2))
    return _out(np.exp(-_points(M, start * c, c) ** 2), dt, device, requires_grad)


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype=None, layout=None, device=None,
           requires_grad: bool = False) -> Tensor:
    """``w[n] = I0(β sqrt(1 - (2n/(M-1) - 1)²)) / I0(β)`` (``I0`` the modified Bessel function). Raises
    ValueError for ``beta < 0``."""
    dt = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _out(np.ones(M), dt, device, requires_grad)
    k = np.minimum(_points(M, -beta, 2.0 * beta / (M if not sym else M - 1)), beta)  # (M,) in [-β, β]
    return _out(i0(np.sqrt(np.maximum(beta * beta - k * k, 0.0))) / i0(beta), dt, device, requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """The triangular window ``w[n] = 1 - |2n/(M - 1) - 1|``."""
    dt = _checks("bartlett", M, dtype, layout)
    if M <= 1:
        return _out(np.ones(M), dt, device, requires_grad)
    return _out(1 - np.abs(_points(M, -1.0, 2.0 / (M if not sym else M - 1))), dt, device, requires_grad)


def general_cosine(M: int, *, a: Iterable, sym: bool = True, dtype=None, layout=None, device=None,
                   requires_grad: bool = False) -> Tensor:
    """``w[n] = Σ_i (-1)^i a_i cos(2π i n / (M - 1))``. Raises TypeError unless ``a`` is a list/tuple of numbers,
    ValueError when it is empty."""
    dt = _checks("general_cosine", M, dtype, layout)
    if M <= 1:
        return _out(np.ones(M), dt, device, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    a = list(a)
    if not a:
        raise ValueError("Coefficients cannot be empty")
    k = _points(M, 0.0, 2 * math.pi / (M if not sym else M - 1))  # (M,)
    w = sum((-1) ** i * float(c) * np.cos(i * k) for i, c in enumerate(a))
    return _out(w, dt, device, requires_grad)


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True, dtype=None, layout=None, device=None,
                    requires_grad: bool = False) -> Tensor:
    """``general_cosine`` with ``a = [alpha, 1 - alpha]``: ``w[n] = α - (1 - α) cos(2π n / (M - 1))``."""
    _checks("general_hamming", M, dtype, layout)
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """``general_hamming`` with ``alpha = 0.54``."""
    _checks("hamming", M, dtype, layout)
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """``general_hamming`` with ``alpha = 0.5``: ``w[n] = sin²(π n / (M - 1))``."""
    _checks("hann", M, dtype, layout)
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """``general_cosine`` with ``a = [0.42, 0.5, 0.08]``."""
    _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """``general_cosine`` with Nuttall's minimum 4-term coefficients ``[0.3635819, 0.4891775, 0.1365995, 0.0106411]``."""
    _checks("nuttall", M, dtype, layout)
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)

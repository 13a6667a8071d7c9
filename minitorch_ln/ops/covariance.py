"""``cov`` and ``corrcoef``: the (weighted) covariance and correlation matrices of the rows of a 2-D tensor.

NumPy's definitions (``numpy.cov``, which PyTorch follows): variables are rows, observations columns;
with frequency weights ``f`` and reliability weights ``a``, ``w = f · a``, ``w̄ = Σ w``,
``μ = Σ_j w_j x_j / w̄`` and ``cov = (x - μ) diag(w) (x - μ)ᵀ / (w̄ - c · Σ w a / w̄)`` (``c`` the
correction; without ``aweights`` the divisor is ``w̄ - c``, without weights ``N - c``). A divisor <= 0
becomes 0 (inf/nan results), as both. ``corrcoef = cov / (σ σᵀ)`` clipped to ``[-1, 1]``. Composed of
differentiable ops, so gradients reach ``input`` and float weights.
"""

from __future__ import annotations

import numbers

from .. import backend
from ..errors import DtypeError, ShapeError, warn_at_caller
from ..tensor import Tensor
from ._util import refuse_complex_input
from .complex_math import complex as complex_
from .selection import clamp

__all__ = ["corrcoef", "cov"]


def _weights(name: str, w, n: int, integral: bool):
    if w is None:
        return None
    if not isinstance(w, Tensor):
        raise TypeError(f"cov(): {name} must be a Tensor or None, not {type(w).__name__}")
    if w.ndim > 1 or w.numel() != n:
        raise ShapeError(f"cov(): expected {name} to have one element per observation ({n}), got shape "
                         f"{tuple(w.shape)}")
    if integral and w.dtype.kind not in "iu":
        raise DtypeError(f"cov(): expected fweights to have integral dtype but got fweights with {w.dtype} dtype")
    if not integral and w.dtype.kind != "f":
        raise DtypeError(f"cov(): expected aweights to have floating point dtype but got aweights with {w.dtype} dtype")
    if bool((w.detach() < 0).any()):
        raise ValueError(f"cov(): {name} cannot be negative")
    return w.reshape(-1)


def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None, aweights: Tensor | None = None) -> Tensor:
    """Covariance of the rows of ``input`` (``(V, N)``: V variables, N observations; 1-D is one variable) →
    ``(V, V)``, or 0-d for one variable. Integer inputs give the default float dtype.

    Raises ShapeError for more than two dims or weights of another length, DtypeError for float
    ``fweights`` / non-float ``aweights``, ValueError for negative weights.
    """
    refuse_complex_input("cov", fweights, aweights)  # complex input: Σ w·(x - x̄)(x - x̄)ᴴ / divisor, as PyTorch
    if not isinstance(input, Tensor):
        raise TypeError(f"cov(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if input.ndim > 2:
        raise ShapeError(f"cov(): expected input to have two or fewer dimensions but got an input with {input.ndim} "
                         "dimensions")
    if not isinstance(correction, numbers.Real):
        raise TypeError(f"cov(): correction must be a number, got {type(correction).__name__}")
    x = input.reshape(1, -1) if input.ndim < 2 else input  # (V, N)
    if x.dtype.kind in "biu":
        x = x.to(backend.default_float_dtype())
    n = x.shape[1]
    f = _weights("fweights", fweights, n, integral=True)
    a = _weights("aweights", aweights, n, integral=False)
    w = f if a is None else a if f is None else f * a  # (N,)
    if w is None:
        w_sum = n
        avg = x.mean(1) if n else x.sum(1)  # (V,)
        divisor = n - correction
    else:
        # the weights' sums stay in the weights' dtype (float32 aweights with float64 input: PyTorch's
        # Correlation.cpp does the same, and its results differ from a float64 sum by ~1e-7)
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum  # (V,)
        divisor = w_sum - correction if a is None else w_sum - correction * (w * a).sum() / w_sum
    if float(divisor) <= 0:
        warn_at_caller("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                       "observations.")
        divisor = divisor * 0 if isinstance(divisor, Tensor) else 0
    xm = x - avg.unsqueeze(1)  # (V, N)
    c = xm @ (xm if w is None else xm * w).mH  # (V, V), Hermitian for complex input
    return (c / divisor).squeeze()


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation of the rows of ``input`` (as :func:`cov`): ``(V, V)`` in ``[-1, 1]``, or 0-d
    (1, or NaN for a constant row). A constant row gives NaN in its row and column, as NumPy and PyTorch."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()  # (V,), the variances (complex input: a zero imaginary part, dropped as PyTorch)
    std = (d.real if d.dtype.kind == "c" else d).sqrt()  # (V,)
    r = c / std.unsqueeze(1) / std.unsqueeze(0)
    if r.dtype.kind == "c":  # no order: each part clipped to [-1, 1] (PyTorch's corrcoef)
        return complex_(clamp(r.real, -1.0, 1.0), clamp(r.imag, -1.0, 1.0))
    return clamp(r, -1.0, 1.0)

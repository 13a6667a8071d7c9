"""``torch.special``'s functions without gradients in PyTorch: Bessel functions (``bessel_j0`` ... ``airy_ai``),
the orthogonal polynomials (``chebyshev_polynomial_t`` ... ``legendre_polynomial_p``), and the Hurwitz
``zeta`` and the regularized incomplete gamma functions ``igamma``/``igammac`` (differentiable in ``other``
only, as PyTorch).

Forwards are ``scipy.special`` (``cupyx.scipy.special`` on the GPU) on arrays; integer inputs give float32.
Their outputs do not require grad, as PyTorch's. The polynomials take the degree ``n`` as a tensor or a
number; it is truncated to an integer and a negative degree gives 0, as PyTorch.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..backend import get_array_module
from ..tensor import Tensor
from .binary import _operands
from .shape import unbroadcast
from .special_fns import lgamma
from .unary import _calm, _float_operand, _special

__all__ = ["igamma", "igammac"]  # torch.*; the rest are torch.special's only (minitorch_ln/special.py)


def _sp(x):
    if get_array_module(x).__name__ == "numpy":
        import scipy.special as sp  # noqa: PLC0415
    else:  # pragma: no cover - needs a GPU
        import cupyx.scipy.special as sp  # noqa: PLC0415
    return sp


def _unary(name: str, scipy_name: str):
    def fn(input: Tensor) -> Tensor:  # noqa: A002
        x = _float_operand(input, f"special.{name}")
        return Tensor._from_op(_special(scipy_name, x.array))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``scipy.special.{scipy_name}`` elementwise (``torch.special.{name}``); ints give float32; "
                  "no gradient (as PyTorch).")
    return fn


bessel_j0 = _unary("bessel_j0", "j0")
bessel_j1 = _unary("bessel_j1", "j1")
bessel_y0 = _unary("bessel_y0", "y0")
bessel_y1 = _unary("bessel_y1", "y1")
modified_bessel_i0 = _unary("modified_bessel_i0", "i0")
modified_bessel_i1 = _unary("modified_bessel_i1", "i1")
modified_bessel_k0 = _unary("modified_bessel_k0", "k0")
modified_bessel_k1 = _unary("modified_bessel_k1", "k1")
scaled_modified_bessel_k0 = _unary("scaled_modified_bessel_k0", "k0e")
scaled_modified_bessel_k1 = _unary("scaled_modified_bessel_k1", "k1e")


def spherical_bessel_j0(input: Tensor) -> Tensor:  # noqa: A002
    """``sin(x)/x`` (1 at 0), the spherical Bessel function of order 0; ints give float32; no gradient."""
    x = _float_operand(input, "special.spherical_bessel_j0").array
    xp = get_array_module(x)
    y = _calm(lambda: xp.where(x == 0, 1, xp.sin(x) / xp.where(x == 0, 1, x)))
    return Tensor._from_op(xp.where(xp.isinf(x), 0, y).astype(x.dtype, copy=False))


def airy_ai(input: Tensor) -> Tensor:  # noqa: A002
    """``Ai(x)``, the Airy function of the first kind; ints give float32; no gradient."""
    x = _float_operand(input, "special.airy_ai").array
    src = x.astype("float32") if x.dtype == "float16" else x
    return Tensor._from_op(_calm(lambda: _sp(x).airy(src)[0]).astype(x.dtype, copy=False))


# ==================================================================================================
# Orthogonal polynomials of degree n
# ==================================================================================================


def _polynomial(name: str, scipy_name: str, shift: bool = False):
    def fn(input, n) -> Tensor:  # noqa: A002
        x, deg = _operands(input, n, f"special.{name}", to_float=True)
        xa, na = x.array, deg.array
        xp = get_array_module(xa)
        k = xp.trunc(na).astype("int64")  # PyTorch casts the degree to an integer
        arg = 2 * xa - 1 if shift else xa
        y = _calm(lambda: getattr(_sp(xa), scipy_name)(xp.maximum(k, 0), arg))
        return Tensor._from_op(xp.where(k < 0, 0, y).astype(xa.dtype, copy=False))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``torch.special.{name}(input, n)``: ``scipy.special.{scipy_name}(n, "
                  f"{'2x - 1' if shift else 'x'})`` with ``n`` truncated to an integer (0 for n < 0); ``input`` "
                  "and ``n`` broadcast, tensors or numbers; no gradient (as PyTorch).")
    return fn


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", "eval_chebyt")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", "eval_chebyu")
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t", "eval_chebyt", shift=True)
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u", "eval_chebyu", shift=True)
hermite_polynomial_h = _polynomial("hermite_polynomial_h", "eval_hermite")
hermite_polynomial_he = _polynomial("hermite_polynomial_he", "eval_hermitenorm")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", "eval_laguerre")
legendre_polynomial_p = _polynomial("legendre_polynomial_p", "eval_legendre")


def _chebyshev_vw(name: str, sign: int, shift: bool = False):
    """Chebyshev polynomials of the third (V, ``sign=-1``) and fourth (W, ``sign=+1``) kinds, from those of the
    second: ``V_n = U_n - U_{n-1}``, ``W_n = U_n + U_{n-1}`` (Mason & Handscomb, *Chebyshev Polynomials*,
    2003, eq. 1.17), ``U_{-1} = 0``; so ``V_1 = 2x - 1`` and ``W_1 = 2x + 1``."""

    def fn(input, n) -> Tensor:  # noqa: A002
        x, deg = _operands(input, n, f"special.{name}", to_float=True)
        xa, na = x.array, deg.array
        xp = get_array_module(xa)
        k = xp.trunc(na).astype("int64")  # PyTorch casts the degree to an integer
        arg = 2 * xa - 1 if shift else xa
        u = _sp(xa).eval_chebyu
        y = _calm(lambda: u(xp.maximum(k, 0), arg) + sign * xp.where(k >= 1, u(xp.maximum(k - 1, 0), arg), 0))
        return Tensor._from_op(xp.where(k < 0, 0, y).astype(xa.dtype, copy=False))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``torch.special.{name}(input, n)``: ``U_n(t) {'+' if sign > 0 else '-'} U_(n-1)(t)`` with "
                  f"``t = {'2x - 1' if shift else 'x'}``, ``U`` scipy's ``eval_chebyu`` and ``n`` truncated to an "
                  "integer (0 for n < 0); tensors or numbers that broadcast; no gradient (as PyTorch).")
    return fn


chebyshev_polynomial_v = _chebyshev_vw("chebyshev_polynomial_v", -1)
chebyshev_polynomial_w = _chebyshev_vw("chebyshev_polynomial_w", +1)
shifted_chebyshev_polynomial_v = _chebyshev_vw("shifted_chebyshev_polynomial_v", -1, shift=True)
shifted_chebyshev_polynomial_w = _chebyshev_vw("shifted_chebyshev_polynomial_w", +1, shift=True)


# ==================================================================================================
# zeta
# ==================================================================================================


class Zeta(Function):
    @staticmethod
    def forward(ctx, x, q):
        ctx.save_for_backward(x, q)
        return _calm(lambda: _sp(x).zeta(x, q)).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dy):
        x, q = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise RuntimeError("the derivative for 'self' (zeta's input x) is not implemented, as in PyTorch")
        return None, dy * -x * Zeta.apply(x + 1.0, q)  # ∂/∂q ζ(x, q) = -x ζ(x + 1, q)


def zeta(input, other) -> Tensor:  # noqa: A002
    """The Hurwitz zeta function ``ζ(x, q) = Σ_k (k + q)^(-x)``; numbers allowed on either side, broadcast;
    ints give float32. Gradient ``-x·ζ(x + 1, q)`` for ``q``; none for ``x`` (backward raises, as PyTorch)."""
    x, q = _operands(input, other, "special.zeta", to_float=True)
    shape = np.broadcast_shapes(tuple(x.shape), tuple(q.shape))
    return Zeta.apply(x.expand(*shape), q.expand(*shape))


# ==================================================================================================
# regularized incomplete gamma functions
# ==================================================================================================


class IncompleteGamma(Function):
    """``P(a, x)`` (``upper=False``) or ``Q(a, x) = 1 - P(a, x)``; ``∂P/∂x = x^(a-1) e^(-x) / Γ(a)``
    (DLMF 8.8.13), and ``∂Q/∂x`` its negative. PyTorch has no derivative in ``a``: asking for it raises."""

    @staticmethod
    def forward(ctx, a, x, upper):
        ctx.save_for_backward(a, x)
        ctx.upper = upper
        return _calm(lambda: (_sp(x).gammaincc if upper else _sp(x).gammainc)(a, x)).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dy):
        a, x = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise RuntimeError("the derivative for 'input' (igamma's a) is not implemented, as in PyTorch")
        density = ((a - 1.0) * x.log() - x - lgamma(a)).exp()  # x^(a-1) e^(-x) / Γ(a)
        return None, unbroadcast(dy * (-density if ctx.upper else density), tuple(x.shape)), None


def _igamma(name: str, upper: bool):
    def fn(input, other) -> Tensor:  # noqa: A002
        a, x = _operands(input, other, name, to_float=True)
        return IncompleteGamma.apply(a, x, upper)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The regularized {'upper' if upper else 'lower'} incomplete gamma function "
                  f"``{'Q' if upper else 'P'}(input, other)`` (``torch.{name}``; scipy's "
                  f"``{'gammaincc' if upper else 'gammainc'}``): tensors or numbers that broadcast, integer inputs "
                  "as float32; differentiable in ``other`` only (PyTorch's). NaN for ``input <= 0`` or ``other < 0``.")
    return fn


igamma = _igamma("igamma", upper=False)
igammac = _igamma("igammac", upper=True)

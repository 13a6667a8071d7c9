"""Building and measuring complex numbers: ``complex(real, imag)``, ``polar(abs, angle)``, ``angle``, and
the complex half of ``sgn`` (``z / |z|``; ``unary.sgn`` sends complex tensors here).

Gradients follow PyTorch's convention (docs/complex.md): for a real loss ``L`` the gradient of ``z = x + iy``
is ``dL/dx + i dL/dy``, so a real input of a complex-valued op receives the real part of what a complex
one would, and for a holomorphic ``f`` the backward is ``dz = dy · conj(f'(z))``. Each backward below is
derived in those terms and checked against PyTorch in tests/test_ops_complex.py. Backward formulas are
written with Tensor operators (``*``, ``/``, ``.abs()``), so they are differentiable themselves.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import DtypeError
from ..tensor import Tensor
from ._util import broadcast_shape
from .complex_parts import Imag, Real, cj
from .conversion import cast
from .shape import unbroadcast

__all__ = ["angle", "complex", "polar"]


def _float_pair(a, b, op: str, names: tuple):
    for name, t in zip(names, (a, b)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): argument '{name}' must be a Tensor, got {type(t).__name__}")
    for name, t in zip(names, (a, b)):
        if t.dtype not in (np.float32, np.float64):
            raise DtypeError(f"{op}: expected both inputs to be float or double tensors (float32, float64), got "
                             f"{names[0]} {a.dtype} and {names[1]} {b.dtype}")
    if a.dtype != b.dtype:
        raise DtypeError(f"{op}: expected object of scalar type {a.dtype} but got scalar type {b.dtype} for "
                         f"argument '{names[1]}' (both inputs need one dtype)")
    broadcast_shape(a.shape, b.shape, op)


def _cdtype(dtype) -> np.dtype:
    return np.dtype(np.complex128 if dtype == np.float64 else np.complex64)


class Complex(Function):
    """``z = re + i·im``: ``dre = Re(dz)``, ``dim = Im(dz)`` (summed back over broadcast dims)."""

    supports_complex = True

    @staticmethod
    def forward(ctx, re, im):
        xp = get_array_module(re)
        ctx.shapes = (re.shape, im.shape)
        out = xp.empty(np.broadcast_shapes(re.shape, im.shape), dtype=_cdtype(re.dtype))  # (*broadcast shape)
        out.real, out.imag = re, im  # not re + 1j*im, which makes NaN of inf·i
        return out

    @staticmethod
    def backward(ctx, dz):
        dre = unbroadcast(Real.apply(dz), ctx.shapes[0]) if ctx.needs_input_grad[0] else None
        dim = unbroadcast(Imag.apply(dz), ctx.shapes[1]) if ctx.needs_input_grad[1] else None
        return dre, dim


def complex(real: Tensor, imag: Tensor) -> Tensor:  # noqa: A001 - PyTorch's name
    """The complex tensor ``real + i·imag`` (``torch.complex``): float32 parts give complex64, float64 ones
    complex128; shapes broadcast. Gradients: ``Re(dz)`` and ``Im(dz)``.

    Raises TypeError for a non-Tensor; DtypeError (a RuntimeError) for parts that are not float32/float64
    or of two dtypes; ShapeError for shapes that do not broadcast.
    """
    _float_pair(real, imag, "complex", ("real", "imag"))
    return Complex.apply(real, imag)


class Polar(Function):
    """``z = r·e^{iθ}``. With ``u = e^{iθ}``: ``dr = Re(dz·conj(u))`` (dz/dr = u) and ``dθ = Im(dz·conj(z))``
    (dz/dθ = i·z, and Re(dz·conj(i·z)) = Im(dz·conj(z)))."""

    supports_complex = True

    @staticmethod
    def forward(ctx, r, theta):
        xp = get_array_module(r)
        ctx.save_for_backward(r, theta)
        out = xp.empty(np.broadcast_shapes(r.shape, theta.shape), dtype=_cdtype(r.dtype))  # (*broadcast shape)
        with np.errstate(invalid="ignore"):
            out.real, out.imag = r * xp.cos(theta), r * xp.sin(theta)
        return out

    @staticmethod
    def backward(ctx, dz):
        r, theta = ctx.saved_tensors
        u = Polar.apply(theta.new_ones(()), theta)  # (*theta.shape) e^{iθ}
        dr = unbroadcast(Real.apply(dz * cj(u)), r.shape) if ctx.needs_input_grad[0] else None
        dtheta = unbroadcast(Imag.apply(dz * cj(r * u)), theta.shape) if ctx.needs_input_grad[1] else None
        return dr, dtheta


def polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002 - PyTorch's argument names
    """The complex tensor ``abs·(cos(angle) + i·sin(angle))`` (``torch.polar``): float32 inputs give
    complex64, float64 ones complex128; shapes broadcast. Gradients: see :class:`Polar`.

    Raises as :func:`complex` does (TypeError, DtypeError, ShapeError).
    """
    _float_pair(abs, angle, "polar", ("abs", "angle"))
    return Polar.apply(abs, angle)


class Angle(Function):
    """The argument of ``z`` in ``(-π, π]``. Complex: ``dz = dy·i·z/|z|²`` (θ = atan2(y, x) has
    ``dθ/dx = -y/|z|²``, ``dθ/dy = x/|z|²``), 0 at ``z = 0`` (as PyTorch). Real: piecewise constant (0 or π),
    gradient 0."""

    supports_complex = True

    @staticmethod
    def forward(ctx, z):
        xp = get_array_module(z)
        ctx.save_for_backward(z)
        if z.dtype.kind == "c":
            return xp.angle(z)
        out = xp.where(z < 0, np.pi, 0.0).astype(z.dtype)  # (*z.shape)
        return xp.where(xp.isnan(z), z, out)  # NaN stays NaN (as PyTorch)

    @staticmethod
    def backward(ctx, dy):
        (z,) = ctx.saved_tensors
        if z.dtype.kind != "c":
            return dy * 0.0
        abs2 = (z * cj(z)).real  # (*z.shape) |z|², exact for the real and imaginary parts
        safe = abs2.masked_fill(abs2 == 0, 1.0)
        return (cast(dy, z.dtype) * z / safe * 1j).masked_fill(abs2 == 0, 0.0)


def angle(input: Tensor) -> Tensor:  # noqa: A002
    """The elementwise argument (phase) in radians: ``atan2(imag, real)`` of a complex tensor (float32 for
    complex64, float64 for complex128); for a real tensor 0 where ``x >= 0``, π where ``x < 0``, NaN at NaN
    (integers give float32, as PyTorch). Gradient: see :class:`Angle`. Raises TypeError for a non-Tensor."""
    if not isinstance(input, Tensor):
        raise TypeError(f"angle(): argument 'input' must be a Tensor, got {type(input).__name__}")
    if input.dtype.kind in "biu":
        input = cast(input, backend.default_float_dtype())
    return Angle.apply(input)


class Sgn(Function):
    """``s = z/|z|`` (0 at 0). ``s`` depends on the phase only: ``dθ = Im(ds·conj(s))`` and ``dz = dθ·i·s/|z|``,
    i.e. ``dz = (ds - s·Re(ds·conj(s))) / |z|`` (PyTorch's ``sgn_backward``), 0 at ``z = 0``."""

    supports_complex = True

    @staticmethod
    def forward(ctx, z):
        xp = get_array_module(z)
        a = xp.abs(z)  # (*z.shape)
        with np.errstate(invalid="ignore", divide="ignore"):
            s = xp.where(a == 0, 0, z / xp.where(a == 0, 1, a)).astype(z.dtype)
        ctx.save_for_backward(z, s)
        return s

    @staticmethod
    def backward(ctx, ds):
        z, s = ctx.saved_tensors
        a = z.abs()
        safe = a.masked_fill(a == 0, 1.0)
        dz = (ds - s * Real.apply(ds * cj(s))) / safe
        return dz.masked_fill(a == 0, 0.0)


def complex_sgn(input: Tensor) -> Tensor:  # noqa: A002
    """``sgn`` of a complex tensor (``unary.sgn`` calls it): ``z / |z|``, 0 at 0, same dtype."""
    return Sgn.apply(input)

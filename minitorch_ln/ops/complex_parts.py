"""The parts of complex tensors: ``conj`` (and ``conj_physical``, ``resolve_conj``, ``resolve_neg``,
``is_conj``, ``is_neg``), ``real``, ``imag``, ``view_as_real`` and ``view_as_complex`` (views sharing memory).

This module imports no other op module, so that every op may import it: the backward of every op that
takes complex numbers needs the conjugate. With PyTorch's convention with PyTorch's convention the gradient of a holomorphic ``y = f(z)`` is
``dz = dy · conj(f'(z))`` (docs/complex.md), so ``mul``'s backward is ``dy · conj(b)``. :func:`cj` is that
conjugate, a no-op on real tensors, written so the backward stays in Tensor ops (differentiable).

Deviation from PyTorch: PyTorch's ``conj`` is a lazy view (a "conjugate bit"); here it is a copy with the
conjugated values. Values and gradients are the same; an in-place change of ``z.conj()`` does not reach
``z`` (PyTorch's does), and :func:`is_conj` is always False. For a real tensor ``conj`` returns the
tensor itself, as PyTorch.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..autograd.views import make_view
from ..backend import get_array_module
from ..errors import DtypeError, ShapeError
from ..tensor import Tensor
from .conversion import cast

__all__ = [
    "conj", "conj_physical", "imag", "is_complex", "is_conj", "is_neg", "real", "resolve_conj", "resolve_neg",
    "view_as_complex", "view_as_real",
]


class Conj(Function):
    """``conj(z) = x - iy``; its own adjoint: ``dz = conj(dy)`` (conj is R-linear, and real-linear
    maps pass the gradient through their transpose)."""

    supports_complex = True

    @staticmethod
    def forward(ctx, z):
        return get_array_module(z).conj(z)

    @staticmethod
    def backward(ctx, dy):
        return Conj.apply(dy) if dy.dtype.kind == "c" else dy


def cj(t: Tensor) -> Tensor:
    """``conj(t)`` for a complex tensor, ``t`` itself for a real one: what backward formulas use."""
    return Conj.apply(t) if t.dtype.kind == "c" else t


def _check(input, op: str) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, got {type(input).__name__}")


def conj_physical(input: Tensor) -> Tensor:  # noqa: A002
    """The complex conjugate ``x - iy`` of a complex tensor (same shape and dtype), a new tensor; a real
    tensor gives a copy of itself (PyTorch's ``conj_physical``). Gradient: ``conj(dy)``.

    Raises TypeError for a non-Tensor.
    """
    _check(input, "conj_physical")
    if input.dtype.kind != "c":
        return input.clone()
    return Conj.apply(input)


def conj(input: Tensor) -> Tensor:  # noqa: A002
    """The complex conjugate of a complex tensor (same shape and dtype); a real tensor itself (as PyTorch).

    A copy here, where PyTorch returns a lazy conjugate view: see the module docstring.
    Raises TypeError for a non-Tensor.
    """
    _check(input, "conj")
    if input.dtype.kind != "c":
        return input
    return Conj.apply(input)


def resolve_conj(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` itself: minitorch_ln never holds a lazy conjugate (``conj`` computes it), so there is
    nothing to materialise (PyTorch's ``resolve_conj`` of a tensor without the conj bit is the same)."""
    _check(input, "resolve_conj")
    return input


def resolve_neg(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` itself: minitorch_ln has no lazy negation bit (see :func:`resolve_conj`)."""
    _check(input, "resolve_neg")
    return input


def is_conj(input: Tensor) -> bool:  # noqa: A002
    """False: no tensor here carries PyTorch's lazy conjugate bit (``conj`` makes the values)."""
    _check(input, "is_conj")
    return False


def is_neg(input: Tensor) -> bool:  # noqa: A002
    """False: no tensor here carries PyTorch's lazy negation bit."""
    _check(input, "is_neg")
    return False


def is_complex(input: Tensor) -> bool:  # noqa: A002
    """True for a complex64 or complex128 tensor (``torch.is_complex``). Raises TypeError for a non-Tensor."""
    _check(input, "is_complex")
    return input.dtype.kind == "c"


# ==================================================================================================
# real, imag: views of the parts. For a real loss L, z's gradient is dL/dx + i dL/dy (docs/complex.md),
# so the gradient of z reaching real(z) is dy + 0i and that reaching imag(z) is 0 + i dy.
# ==================================================================================================


def _view_step(cls, op: str, kind: str):
    """``base -> view`` for :func:`make_view`; it refuses the integer index tensor through which an in-place
    change of the view would find its region (autograd/views.py), which a dtype-changing view cannot map."""

    def step(t):
        if t.dtype.kind != kind:
            raise RuntimeError(f"{op}: an in-place change through this view of a tensor that requires grad is not "
                               "supported (the view changes the dtype); change the base, or clone() the view first")
        return cls.apply(t)

    return step


class Real(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, z):
        ctx.dtype = z.dtype
        return z.real  # (*z.shape) a view of the real parts

    @staticmethod
    def backward(ctx, dy):
        return cast(dy, ctx.dtype)  # dy + 0i


class Imag(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, z):
        ctx.dtype = z.dtype
        return z.imag  # (*z.shape) a view of the imaginary parts

    @staticmethod
    def backward(ctx, dy):
        return TimesI.apply(dy, ctx.dtype)  # 0 + i dy


class TimesI(Function):
    """``i·g`` for a real ``g``: imag's backward. Its adjoint is ``w -> Im(w)`` (Re(conj(i)·w) = Im(w))."""

    supports_complex = True

    @staticmethod
    def forward(ctx, g, dtype):
        out = get_array_module(g).zeros(g.shape, dtype=dtype)  # (*g.shape)
        out.imag = g
        return out

    @staticmethod
    def backward(ctx, dz):
        return Imag.apply(dz), None


def real(input: Tensor) -> Tensor:  # noqa: A002
    """The real parts of a complex tensor: a view (same shape, float32 for complex64, float64 for complex128)
    sharing its memory, so writing into it changes ``input``; a real tensor is returned as it is (as PyTorch).
    Gradient: ``dz = dy + 0i``. Raises TypeError for a non-Tensor."""
    _check(input, "real")
    if input.dtype.kind != "c":
        return input
    return make_view(Real.apply(input), input, _view_step(Real, "real", "c"))


def imag(input: Tensor) -> Tensor:  # noqa: A002
    """The imaginary parts of a complex tensor: a view (same shape, float32/float64) sharing its memory.
    Gradient: ``dz = 0 + i·dy``. Raises RuntimeError for a real tensor (as PyTorch: "imag is not
    implemented for tensors with non-complex dtypes") and TypeError for a non-Tensor."""
    _check(input, "imag")
    if input.dtype.kind != "c":
        raise DtypeError(f"imag is not implemented for tensors with non-complex dtypes (got {input.dtype})")
    return make_view(Imag.apply(input), input, _view_step(Imag, "imag", "c"))


# ==================================================================================================
# view_as_real, view_as_complex: one memory, two readings (..., ) complex <-> (..., 2) real
# ==================================================================================================


def _as_real_array(z):
    """``z`` (complex, any strides) read as ``(*z.shape, 2)`` reals in the same memory."""
    xp = get_array_module(z)
    r = z.real  # a view with z's strides, at the real parts
    return xp.lib.stride_tricks.as_strided(r, shape=z.shape + (2,), strides=z.strides + (r.itemsize,))


def _as_complex_array(x):
    """``x`` (real, last dim 2 with unit stride) read as complex in the same memory; a copy if its strides
    do not allow that (only inside backward, where the gradient's layout is not the user's)."""
    xp = get_array_module(x)
    if x.ndim == 0 or x.strides[-1] != x.itemsize or any(s % (2 * x.itemsize) for s in x.strides[:-1]):
        x = xp.ascontiguousarray(x)
    cdtype = np.complex128 if x.dtype == np.float64 else np.complex64
    if xp is not np and not x.flags.c_contiguous:  # pragma: no cover - CuPy views only C-contiguous memory
        x = xp.ascontiguousarray(x)
    return x.view(cdtype)[..., 0]


class ViewAsReal(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, z):
        return _as_real_array(z)  # (*z.shape, 2)

    @staticmethod
    def backward(ctx, dy):
        return ViewAsComplex.apply(dy)


class ViewAsComplex(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, x):
        return _as_complex_array(x)  # (*x.shape[:-1])

    @staticmethod
    def backward(ctx, dz):
        return ViewAsReal.apply(dz)


def view_as_real(input: Tensor) -> Tensor:  # noqa: A002
    """A complex tensor of shape ``(*S)`` as a real one of shape ``(*S, 2)`` (real part, imaginary part),
    sharing its memory (complex64 -> float32, complex128 -> float64). Gradient: the complex tensor
    ``dy[..., 0] + i dy[..., 1]``.

    Raises RuntimeError (DtypeError) for a real tensor, as PyTorch ("view_as_real is only supported for
    complex tensors"); TypeError for a non-Tensor.
    """
    _check(input, "view_as_real")
    if input.dtype.kind != "c":
        raise DtypeError(f"view_as_real is only supported for complex tensors, got dtype {input.dtype}")
    return make_view(ViewAsReal.apply(input), input, _view_step(ViewAsReal, "view_as_real", "c"))


def view_as_complex(input: Tensor) -> Tensor:  # noqa: A002
    """A float32/float64 tensor of shape ``(*S, 2)`` as a complex64/complex128 one of shape ``(*S)``, sharing
    its memory (``[..., 0]`` the real parts, ``[..., 1]`` the imaginary ones). Gradient: ``view_as_real(dz)``.

    Raises (each a RuntimeError, as PyTorch's): DtypeError for another dtype (float16 would be complex32,
    which minitorch_ln does not have); ShapeError for a 0-d tensor, a last dim that is not 2, a last dim
    whose stride is not 1, or another dim whose stride is odd.
    """
    _check(input, "view_as_complex")
    if input.dtype not in (np.float32, np.float64):
        raise DtypeError("view_as_complex is only supported for float and double tensors, but got a tensor of "
                         f"dtype {input.dtype}")
    a = input.array
    if a.ndim == 0:
        raise ShapeError("view_as_complex: Input tensor must have one or more dimensions, got a 0-d tensor")
    if a.shape[-1] != 2:
        raise ShapeError(f"view_as_complex: Tensor must have a last dimension of size 2, got shape {tuple(a.shape)}")
    if a.strides[-1] != a.itemsize:
        raise ShapeError(f"view_as_complex: Tensor must have a last dimension with stride 1, got stride "
                         f"{a.strides[-1] // a.itemsize}")
    if any(s % (2 * a.itemsize) for s in a.strides[:-1]):
        raise ShapeError("view_as_complex: Tensor must have a stride divisible by 2 for all but last dimension, "
                         f"got strides {tuple(s // a.itemsize for s in a.strides)}")
    return make_view(ViewAsComplex.apply(input), input, _view_step(ViewAsComplex, "view_as_complex", "f"))

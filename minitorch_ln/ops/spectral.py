"""Discrete Fourier transforms (``torch.fft``): complex-to-complex, real-to-complex (one-sided) and
complex-to-real, over any dims, with ``n``/``s`` (zero-pad or trim each transformed dim first) and ``norm``.

The arithmetic is ``xp.fft`` (NumPy or CuPy), in the input's precision: float32/complex64 inputs give
complex64 (cast back where the library widened to complex128), float64/complex128 give complex128.
Integer and bool inputs are transformed as the default float dtype (as PyTorch); float16 is refused
(PyTorch has no half-precision FFT on the CPU).

Gradients (docs/complex.md, PyTorch's convention). Every transform is linear, so its backward is its
adjoint, the conjugate transpose: the DFT's is the inverse DFT without its ``1/n``, so the backward of a
transform with norm ``m`` is the opposite transform with the *dual* norm (``"backward"`` <-> ``"forward"``,
``"ortho"`` itself). The one-sided transforms add PyTorch's Hermitian handling:

- ``rfft`` keeps bins ``0 .. n//2`` of a real input: its adjoint zero-fills the dropped bins, applies the
  inverse c2c transform and keeps the real part (the input is real);
- ``irfft`` reads bins ``0 .. n//2`` as half of a Hermitian spectrum (the imaginary parts of bin 0, and of
  bin ``n/2`` for even ``n``, are ignored): each of the bins ``1 .. n - n//2 - 1`` stands for itself and its
  mirror image, so its gradient is ``rfft`` of the output gradient doubled (PyTorch's ``fft_c2r_backward``).

Zero-padding and trimming (``n``/``s``) are each other's adjoints: :class:`Resize`.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import DtypeError, OptionError
from ..tensor import Tensor
from ._util import normalize_dim
from .complex_parts import Real
from .conversion import cast

_NORMS = (None, "backward", "ortho", "forward")
_DUAL = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _cdtype(dtype) -> np.dtype:
    return np.dtype(np.complex128 if dtype in (np.float64, np.complex128) else np.complex64)


class Resize(Function):
    """Trim or zero-pad ``x`` to ``sizes`` along ``axes``; the adjoint of trimming is zero-padding."""

    supports_complex = True

    @staticmethod
    def forward(ctx, x, axes, sizes):
        xp = get_array_module(x)
        ctx.axes, ctx.in_sizes = axes, [x.shape[a] for a in axes]
        x = x[tuple(slice(0, sizes[axes.index(d)]) if d in axes else slice(None) for d in range(x.ndim))]
        pad = [(0, sizes[axes.index(d)] - x.shape[d]) if d in axes else (0, 0) for d in range(x.ndim)]
        return xp.pad(x, pad) if any(p[1] for p in pad) else x.copy()  # (*resized shape)

    @staticmethod
    def backward(ctx, dy):
        return Resize.apply(dy, ctx.axes, ctx.in_sizes), None, None


class C2C(Function):
    """``fftn`` (``inverse=False``) or ``ifftn`` over ``axes``; the backward is the other one, dual norm."""

    supports_complex = True

    @staticmethod
    def forward(ctx, z, axes, norm, inverse):
        xp = get_array_module(z)
        ctx.axes, ctx.norm, ctx.inverse = axes, norm, inverse
        out = (xp.fft.ifftn if inverse else xp.fft.fftn)(z, axes=axes, norm=norm)
        return out.astype(z.dtype, copy=False)  # (*z.shape) NumPy may compute complex64 in complex128

    @staticmethod
    def backward(ctx, dy):
        return C2C.apply(dy, ctx.axes, _DUAL[ctx.norm], not ctx.inverse), None, None, None


class R2C(Function):
    """``rfftn`` of a real ``x``: the full transform's bins ``0 .. n//2`` along the last axis."""

    supports_complex = True

    @staticmethod
    def forward(ctx, x, axes, norm):
        xp = get_array_module(x)
        ctx.axes, ctx.norm, ctx.n = axes, norm, x.shape[axes[-1]]
        return xp.fft.rfftn(x, axes=axes, norm=norm).astype(_cdtype(x.dtype), copy=False)  # (..., n//2 + 1)

    @staticmethod
    def backward(ctx, dy):
        full = Resize.apply(dy, [ctx.axes[-1]], [ctx.n])  # the dropped bins: zero
        return Real.apply(C2C.apply(full, ctx.axes, _DUAL[ctx.norm], True)), None, None


class C2R(Function):
    """``irfftn``: bins ``0 .. n//2`` (the last axis already that long) as a Hermitian spectrum -> real ``n``."""

    supports_complex = True

    @staticmethod
    def forward(ctx, z, axes, n, norm):
        xp = get_array_module(z)
        ctx.axes, ctx.norm, ctx.n = axes, norm, n
        sizes = [z.shape[a] for a in axes[:-1]] + [n]
        out = xp.fft.irfftn(z, s=sizes, axes=axes, norm=norm)  # (..., n)
        return out.astype(np.float64 if z.dtype == np.complex128 else np.float32, copy=False)

    @staticmethod
    def backward(ctx, dy):
        dz = R2C.apply(dy, ctx.axes, _DUAL[ctx.norm])  # (..., n//2 + 1)
        h, axis = dz.shape[ctx.axes[-1]], ctx.axes[-1]
        twice = np.ones(h, dtype=np.float64 if dz.dtype == np.complex128 else np.float32)  # (h,)
        twice[1:1 + ctx.n - h] = 2.0  # bins that stand for themselves and their mirror image
        shape = [1] * dz.ndim
        shape[axis] = h
        xp = get_array_module(dz.array)
        return dz * Tensor._from_op(xp.asarray(twice.reshape(shape))), None, None, None


# ==================================================================================================
# Argument handling shared by the public functions (fft.py holds them)
# ==================================================================================================


def _check_norm(norm, op: str) -> None:
    if norm not in _NORMS:
        raise OptionError(f"{op}: Invalid normalization mode: {norm!r} (expected None, 'backward', 'ortho' or "
                          "'forward')")


def _float_or_complex(x, op: str, want: str) -> Tensor:
    """``x`` as the dtype the transform takes: ``want`` is ``"complex"`` (c2c, c2r) or ``"real"`` (r2c)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, got {type(x).__name__}")
    if x.dtype.kind in "biu":
        x = cast(x, backend.default_float_dtype())
    if x.dtype == np.float16:
        raise DtypeError(f"{op}: Unsupported dtype Half: minitorch_ln's FFTs take float32/float64 and "
                         "complex64/complex128 (convert with .float())")
    if want == "real" and x.dtype.kind == "c":
        raise DtypeError(f"{op} expects a real input tensor, but got {x.dtype}")
    if want == "complex" and x.dtype.kind == "f":
        x = cast(x, _cdtype(x.dtype))
    return x


def _axes_sizes(x, s, dim, op: str, default_all: bool):
    """(axes, sizes): the transformed dims, normalized, and the length each is resized to (-1: as it is)."""
    if s is not None and not isinstance(s, (list, tuple)):
        s = [s]
    if dim is None:
        dim = list(range(x.ndim)) if s is None else list(range(x.ndim - len(s), x.ndim))
        if not default_all and s is None:
            dim = dim[-1:]
    elif isinstance(dim, numbers.Integral):
        dim = [dim]
    axes = [normalize_dim(d, x.ndim, op) for d in dim]
    if len(set(axes)) != len(axes):
        raise OptionError(f"{op}: dims must be unique, got {list(dim)}")
    if s is None:
        sizes = [x.shape[a] for a in axes]
    else:
        if len(s) != len(axes):
            raise OptionError(f"{op}: When given, dim and shape arguments must have the same length, got s={list(s)} "
                              f"and dim={list(dim)}")
        sizes = [x.shape[a] if n == -1 else n for a, n in zip(axes, s)]
    for n in sizes:
        if not isinstance(n, numbers.Integral) or n < 1:
            raise OptionError(f"{op}: Invalid number of data points ({n}) specified")
    return axes, [int(n) for n in sizes]


def resize(x: Tensor, axes, sizes) -> Tensor:
    if all(x.shape[a] == n for a, n in zip(axes, sizes)):
        return x
    return Resize.apply(x, list(axes), list(sizes))


def c2c(x, s, dim, norm, inverse: bool, op: str, default_all: bool = True) -> Tensor:
    _check_norm(norm, op)
    x = _float_or_complex(x, op, "complex")
    axes, sizes = _axes_sizes(x, s, dim, op, default_all)
    return C2C.apply(resize(x, axes, sizes), axes, norm, inverse)


def r2c(x, s, dim, norm, op: str, default_all: bool = True) -> Tensor:
    _check_norm(norm, op)
    x = _float_or_complex(x, op, "real")
    axes, sizes = _axes_sizes(x, s, dim, op, default_all)
    return R2C.apply(resize(x, axes, sizes), axes, norm)


def c2r(x, s, dim, norm, op: str, default_all: bool = True) -> Tensor:
    """The output's last transformed dim has ``s[-1]`` points (default ``2·(m - 1)`` for an input of ``m``)."""
    _check_norm(norm, op)
    x = _float_or_complex(x, op, "complex")
    last_given = s is not None and (s if isinstance(s, (list, tuple)) else [s])[-1] != -1
    axes, sizes = _axes_sizes(x, s, dim, op, default_all)
    n = sizes[-1] if last_given else 2 * (x.shape[axes[-1]] - 1)
    if n < 1:
        raise OptionError(f"{op}: Invalid number of data points ({n}) specified")
    return C2R.apply(resize(x, axes, sizes[:-1] + [n // 2 + 1]), axes, n, norm)

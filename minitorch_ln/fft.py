"""``minitorch_ln.fft``: the ``torch.fft`` functions, PyTorch's names, arguments and defaults.

The transforms and their gradients are in ``ops/spectral.py`` (its docstring derives the backward of each
kind); this module only spells the public forms. Every transform takes ``norm`` = ``None``/``"backward"``
(no scaling forward, ``1/n`` inverse), ``"ortho"`` (``1/√n`` both ways) or ``"forward"`` (``1/n`` forward),
and ``n`` (1-D) or ``s`` (several dims): the length each transformed dim is trimmed or zero-padded to
first (for the complex-to-real transforms: the output's length). float32 inputs give complex64,
float64 ones complex128 (integers: the default float dtype). Errors (each a RuntimeError, as PyTorch's):
OptionError for a bad ``norm``, ``n``/``s`` < 1, repeated dims or ``s`` and ``dim`` of different lengths;
DtypeError for a complex input to ``rfft*``/``ihfft*`` and for float16; IndexError for a dim out of range.
"""

from __future__ import annotations

import numpy as np

from . import backend
from .ops.complex_parts import conj
from .ops.reorder import roll
from .ops.spectral import _DUAL, _NORMS, c2c, c2r, r2c
from .tensor import Tensor

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftshift", "ifftshift", "fftfreq", "rfftfreq"]


def _one(n):
    return None if n is None else [n]


def _dims(dim) -> list:
    """``dim`` of a 2-D transform as a list: one int (``fft2(x, dim=0)``, as PyTorch accepts) or a sequence."""
    return [dim] if isinstance(dim, int) else list(dim)


def fft(input, n=None, dim=-1, norm=None) -> Tensor:  # noqa: A002
    """1-D DFT ``X_k = Σ_j x_j e^{-2πi jk/n}`` along ``dim`` (complex output, same shape but ``n``)."""
    return c2c(input, _one(n), [dim], norm, False, "fft.fft")


def ifft(input, n=None, dim=-1, norm=None) -> Tensor:  # noqa: A002
    """1-D inverse DFT ``x_j = (1/n) Σ_k X_k e^{2πi jk/n}`` along ``dim``."""
    return c2c(input, _one(n), [dim], norm, True, "fft.ifft")


def fft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:  # noqa: A002
    """2-D DFT over ``dim`` (the last two by default)."""
    return c2c(input, s, _dims(dim), norm, False, "fft.fft2")


def ifft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:  # noqa: A002
    """2-D inverse DFT over ``dim``."""
    return c2c(input, s, _dims(dim), norm, True, "fft.ifft2")


def fftn(input, s=None, dim=None, norm=None) -> Tensor:  # noqa: A002
    """N-D DFT over ``dim`` (all dims, or the last ``len(s)`` when only ``s`` is given)."""
    return c2c(input, s, dim, norm, False, "fft.fftn")


def ifftn(input, s=None, dim=None, norm=None) -> Tensor:  # noqa: A002
    """N-D inverse DFT over ``dim``."""
    return c2c(input, s, dim, norm, True, "fft.ifftn")


def rfft(input, n=None, dim=-1, norm=None) -> Tensor:  # noqa: A002
    """DFT of a real input, one-sided: bins ``0 .. n//2`` along ``dim`` (the rest is their conjugate mirror)."""
    return r2c(input, _one(n), [dim], norm, "fft.rfft")


def irfft(input, n=None, dim=-1, norm=None) -> Tensor:  # noqa: A002
    """Inverse of :func:`rfft`: a real output of ``n`` points (default ``2·(m - 1)``) from ``m`` one-sided bins."""
    return c2r(input, _one(n), [dim], norm, "fft.irfft")


def rfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:  # noqa: A002
    """2-D :func:`rfftn`."""
    return r2c(input, s, _dims(dim), norm, "fft.rfft2")


def irfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:  # noqa: A002
    """2-D :func:`irfftn`."""
    return c2r(input, s, _dims(dim), norm, "fft.irfft2")


def rfftn(input, s=None, dim=None, norm=None) -> Tensor:  # noqa: A002
    """N-D DFT of a real input, one-sided along the last of ``dim``."""
    return r2c(input, s, dim, norm, "fft.rfftn")


def irfftn(input, s=None, dim=None, norm=None) -> Tensor:  # noqa: A002
    """Inverse of :func:`rfftn` (real output; the last of ``dim`` has ``s[-1]`` points, default ``2·(m - 1)``)."""
    return c2r(input, s, dim, norm, "fft.irfftn")


# The Hermitian transforms are the one-sided ones run the other way: hfft(x) = irfft(conj(x)) and
# ihfft(x) = conj(rfft(x)), each with the dual norm (as NumPy defines them), so their gradients compose.


def hfft(input, n=None, dim=-1, norm=None) -> Tensor:  # noqa: A002
    """DFT of a Hermitian-symmetric signal given by its first half: a real output of ``n`` points."""
    return c2r(_conj(input), _one(n), [dim], _dual(norm), "fft.hfft")


def ihfft(input, n=None, dim=-1, norm=None) -> Tensor:  # noqa: A002
    """Inverse of :func:`hfft`: the one-sided inverse DFT of a real input."""
    return conj(r2c(input, _one(n), [dim], _dual(norm), "fft.ihfft"))


def hfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:  # noqa: A002
    """2-D :func:`hfftn`."""
    return c2r(_conj(input), s, _dims(dim), _dual(norm), "fft.hfft2")


def ihfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:  # noqa: A002
    """2-D :func:`ihfftn`."""
    return conj(r2c(input, s, _dims(dim), _dual(norm), "fft.ihfft2"))


def hfftn(input, s=None, dim=None, norm=None) -> Tensor:  # noqa: A002
    """N-D DFT of a Hermitian-symmetric signal (one-sided along the last of ``dim``): a real output."""
    return c2r(_conj(input), s, dim, _dual(norm), "fft.hfftn")


def ihfftn(input, s=None, dim=None, norm=None) -> Tensor:  # noqa: A002
    """Inverse of :func:`hfftn`: the one-sided N-D inverse DFT of a real input."""
    return conj(r2c(input, s, dim, _dual(norm), "fft.ihfftn"))


def _conj(x):
    return conj(x) if isinstance(x, Tensor) else x  # a non-Tensor is refused by the transform, by name


def _dual(norm):
    return _DUAL[norm] if norm in _NORMS else norm  # a bad norm goes on to be refused by name


# ==================================================================================================
# Shifts and sample frequencies
# ==================================================================================================


def _shift_dims(input, dim, op):
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, got {type(input).__name__}")
    dims = list(range(input.ndim)) if dim is None else ([dim] if isinstance(dim, int) else _dims(dim))
    return dims


def fftshift(input, dim=None) -> Tensor:  # noqa: A002
    """Move the zero-frequency bin to the middle: roll each of ``dim`` (all by default) by ``n // 2``."""
    dims = _shift_dims(input, dim, "fft.fftshift")
    return roll(input, [input.shape[d] // 2 for d in dims], dims) if dims else input.clone()


def ifftshift(input, dim=None) -> Tensor:  # noqa: A002
    """Inverse of :func:`fftshift`: roll each of ``dim`` by ``-(n // 2)``."""
    dims = _shift_dims(input, dim, "fft.ifftshift")
    return roll(input, [-(input.shape[d] // 2) for d in dims], dims) if dims else input.clone()


def _freq(values, dtype, device, requires_grad):
    dt = backend.default_float_dtype() if dtype is None else backend.as_dtype(dtype)
    return Tensor(backend.to_device(values.astype(dt), device or "cpu"), requires_grad=requires_grad)


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    """The sample frequencies of :func:`fft`'s bins, ``[0, 1, ..., ⌈n/2⌉-1, -⌊n/2⌋, ..., -1] / (d·n)``."""
    return _freq(np.fft.fftfreq(int(n), d), dtype, device, requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    """The sample frequencies of :func:`rfft`'s bins, ``[0, 1, ..., n//2] / (d·n)``."""
    return _freq(np.fft.rfftfreq(int(n), d), dtype, device, requires_grad)

"""Complex forms of ops whose real form is a fused ``Function``: each is composed of ops that already take
complex numbers (``exp``, ``log``, ``log1p``, ``sigmoid``, ``tanh``, ``abs``, ``sum``, ``cumsum``, ``where``,
``pow``), so its gradient follows PyTorch's conjugate-Wirtinger convention by the chain rule, with nothing
new to derive (docs/complex.md). The real ``Function`` stays the path for real tensors; the public function
(``silu``, ``logsumexp``, ...) sends a complex tensor here.

The compositions are PyTorch's own complex definitions:

- ``silu(z) = z·σ(z)``, ``softsign(z) = z / (1 + |z|)``, ``tanhshrink(z) = z - tanh z`` (``torch/nn/functional.py``
  and ATen's complex kernels);
- ``logaddexp(a, b) = m + log1p(exp(n - m))`` with ``m`` the operand of the larger real part, ``n`` the other
  (ATen's ``_log_add_exp_helper``): ``|exp(n - m)| <= 1``, so nothing overflows;
- ``logsumexp(z) = c + log Σ exp(z - c)`` with ``c`` the largest real part along the reduced dims (a real
  constant: the result does not depend on it, so it carries no gradient), 0 where that is infinite;
- ``logcumsumexp(z)``: the same shift by the largest real part of each line, then ``log cumsum``; a prefix
  whose terms all underflow next to that maximum (real parts more than ~700 below it) would come out as
  ``-inf``, so such inputs are refused rather than answered wrongly. PyTorch's scan leaves the imaginary
  parts unwrapped (another branch of the same logarithm); that branch is added as a constant ``2πik``.

This module imports only ``ops/selection.py`` (otherwise it uses the Tensor methods that ``ops/methods.py``
attaches), so the op modules that send complex tensors here may import it.
"""

from __future__ import annotations

import numpy as np

from ..backend import get_array_module
from ..errors import DtypeError
from ..tensor import Tensor
from .selection import where

__all__: list[str] = []


def is_complex(t) -> bool:
    return isinstance(t, Tensor) and t.dtype.kind == "c"


def silu(z: Tensor) -> Tensor:
    return z * z.sigmoid()


def softsign(z: Tensor) -> Tensor:
    return z / (z.abs() + 1.0)


def tanhshrink(z: Tensor) -> Tensor:
    return z - z.tanh()


def logaddexp(a: Tensor, b: Tensor) -> Tensor:
    xp = get_array_module(a.array)
    a_first = Tensor._from_op(xp.real(a.array) >= xp.real(b.array))  # (broadcast shape) a has the larger real part
    m, n = where(a_first, a, b), where(a_first, b, a)
    return m + (n - m).exp().log1p()


def _shift(z: Tensor, axes) -> Tensor:
    """The largest real part over ``axes`` (kept as size-1 dims), 0 where it is infinite or NaN: a constant."""
    xp = get_array_module(z.array)
    re = xp.real(z.array)
    c = re.max(axis=axes, keepdims=True) if re.size else xp.zeros([1 if i in axes else n for i, n in enumerate(re.shape)])
    return Tensor._from_op(xp.where(xp.isfinite(c), c, 0).astype(re.dtype))


def logsumexp(z: Tensor, axes: tuple, keepdim: bool) -> Tensor:
    c = _shift(z, axes)  # (..., 1, ...)
    y = (z - c).exp().sum(axes, keepdim=True).log() + c
    return y if keepdim else y.squeeze(axes) if axes else y


def logcumsumexp(z: Tensor, axis: int) -> Tensor:
    xp = get_array_module(z.array)
    c = _shift(z, (axis,))  # (..., 1, ...)
    re = xp.real(z.array)
    with np.errstate(all="ignore"):  # the largest real part of each prefix, against the line's largest
        gap = xp.fmax.accumulate(re, axis=axis) - c.array  # (*z.shape)
    limit = float(np.log(np.finfo(re.dtype).tiny)) + 20  # float64: -688, float32: -67
    if bool((xp.isfinite(gap) & (gap < limit)).any()):
        raise DtypeError(f"logcumsumexp: complex input whose real parts along dim span more than {-limit:.0f} is not "
                         f"supported ({z.dtype}: the shifted exp of a prefix underflows, the result would be -inf)")
    y = (z - c).exp().cumsum(axis).log() + c  # (*z.shape), imaginary parts in (-π, π] around c
    # PyTorch's scan (y_i = logaddexp(y_(i-1), z_i)) keeps the imaginary part running, not wrapped: the same
    # logarithm on another branch. Its branch is added as a constant 2πik (no gradient: exp(y) is the same)
    turns = xp.round((xp.imag(_scan_logaddexp(z.array, axis)) - xp.imag(y.array)) / (2 * np.pi))
    return y + Tensor._from_op((2j * np.pi * xp.nan_to_num(turns)).astype(z.dtype))


def _scan_logaddexp(a, axis: int):
    """PyTorch's complex ``logcumsumexp`` scan on arrays: ``y_i = m + log1p(exp(n - m))`` with ``m`` the one of
    ``y_(i-1)``, ``z_i`` of the larger real part (ATen's ``_log_add_exp_helper``); used for its branch only."""
    xp = get_array_module(a)
    a = xp.moveaxis(a, axis, 0)
    out = xp.empty_like(a)
    acc = a[0]
    out[0] = acc
    with np.errstate(all="ignore"):
        for i in range(1, a.shape[0]):
            take_acc = xp.real(acc) >= xp.real(a[i])
            m, n = xp.where(take_acc, acc, a[i]), xp.where(take_acc, a[i], acc)
            acc = m + xp.log1p(xp.exp(n - m))
            out[i] = acc
    return xp.moveaxis(out, 0, axis)

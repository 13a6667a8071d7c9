"""Local response normalization (Krizhevsky, Sutskever & Hinton, 2012): each value divided by a power
of the sum of squares of its neighbours across channels, as ``torch.nn.functional.local_response_norm``.

One fused graph node with a hand-derived backward (``kernels/local_response_norm.py``; derivation in
``docs/local_response_norm.md``); that backward is itself a node whose own backward (second and higher
derivatives) differentiates the composed form below through ``autograd.composed.double_backward``.

With ``n = size`` and the window ``[c - n//2, c + (n-1)//2]`` of channels (zero outside)::

    s_c = k + (α/n) · Σ_{c' ∈ window(c)} a_{c'}²        y_c = a_c / s_c^β
    dx_j = dy_j / s_j^β - (2αβ/n) · a_j · Σ_{c : j ∈ window(c)} dy_c · a_c / s_c^(β+1)
"""

from __future__ import annotations

import math
import numbers

from .. import backend
from ..kernels import local_response_norm_dispatch
from ..autograd.composed import double_backward
from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import DtypeError, OptionError, ShapeError
from ..kernels.local_response_norm import work_dtype
from ..tensor import Tensor
from .autocast_policies import autocast
from .padding import pad

__all__ = ["local_response_norm", "local_response_norm_backward_composed", "local_response_norm_composed"]


def _ncl(a):
    """``(N, C, ...)`` as a C-contiguous ``(N, C, L)`` array, ``L`` the product of the trailing dims."""
    xp = get_array_module(a)
    return xp.ascontiguousarray(a).reshape(a.shape[0], a.shape[1], math.prod(a.shape[2:]))


class LocalResponseNorm(Function):
    """``y = x / (k + (α/n) · Σ_{window} x²)^β`` across channels, one graph node."""

    @staticmethod
    def forward(ctx, x, size, alpha, beta, k):
        y = local_response_norm_dispatch.local_response_norm_fwd_for(x)(_ncl(x), size, alpha, beta, k)   # (N, C, L)
        ctx.params = (size, alpha, beta, k)
        ctx.save_for_backward(x)  # the backward recomputes s from x
        return y.reshape(x.shape)                                                         # (N, C, *)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return LocalResponseNormBackward.apply(dy, x, *ctx.params), None, None, None, None


class LocalResponseNormBackward(Function):
    """``(dy, x) -> dx``: the hand-derived backward (``kernels/local_response_norm.py``) as one node."""

    @staticmethod
    def forward(ctx, dy, x, size, alpha, beta, k):
        dx = local_response_norm_dispatch.local_response_norm_bwd_for(x)(_ncl(dy), _ncl(x), size, alpha, beta, k)   # (N, C, L)
        ctx.params = (size, alpha, beta, k)
        ctx.save_for_backward(dy, x)
        return dx.reshape(x.shape)                                                        # (N, C, *)

    @staticmethod
    def backward(ctx, ddx):
        dy, x = ctx.saved_tensors
        params = ctx.params

        def composed(dy_, x_):
            return (local_response_norm_backward_composed(dy_, x_, *params),)

        ddy, dx_ = double_backward(composed, (dy, x), (ddx,))
        return ddy, dx_, None, None, None, None


def _check_args(input, size, alpha, beta, k) -> None:
    op = "local_response_norm"
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected input to be a Tensor, got {type(input).__name__}")
    if input.ndim < 3:
        raise ShapeError(f"{op}: Expected 3D or higher dimensionality input (got {input.ndim} dimensions): an input "
                         f"of shape (N, C, *), got shape {tuple(input.shape)}")
    if not backend.is_floating(input.dtype):
        raise DtypeError(f"{op}: expected a floating point input (float16, float32 or float64), got {input.dtype}")
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 1:
        raise OptionError(f"{op}: size (the number of channels in each window) must be a positive int, got {size!r}")
    for name, v in (("alpha", alpha), ("beta", beta), ("k", k)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"{op}: {name} must be a real number, got {v!r}")


@autocast("local_response_norm")
def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """Local response normalization across channels, as ``torch.nn.functional.local_response_norm``.

    ``y_c = x_c / (k + (alpha/size) · Σ_{c' ∈ window(c)} x_{c'}²)^beta``, the window of ``size``
    channels ``[c - size//2, c + (size-1)//2]`` zero-padded at the ends and the sum always divided by
    ``size`` (PyTorch's avg_pool over the padded channel axis). Fused: one graph node with a
    hand-derived backward (docs/local_response_norm.md).

    Args:
        input: ``(N, C, *)`` with at least 3 dims (``(N, C, L)``, ``(N, C, H, W)``, ...), float16/32/64.
        size: channels per window, ≥ 1 (may exceed ``C``).
        alpha, beta, k: the formula's constants.
    Returns:
        ``(N, C, *)`` in ``input``'s dtype; an empty input is returned as it is (as PyTorch).
        float16 is computed in float32, float32 in float64.
    Raises:
        ValueError (ShapeError): fewer than 3 dims ("Expected 3D or higher dimensionality input").
        TypeError (DtypeError): integer input; alpha, beta or k not a number.
        ValueError (OptionError): ``size`` not a positive int.
    """
    _check_args(input, size, alpha, beta, k)
    if input.numel() == 0:
        return input
    return LocalResponseNorm.apply(input, int(size), float(alpha), float(beta), float(k))


# ==================================================================================================
# Composed forms from primitive Tensor ops: the reference, and the function double backward differentiates
# ==================================================================================================


def _window_sums_composed(a: Tensor, size: int, before: int) -> Tensor:
    """``Σ a[:, c']`` over ``c' ∈ [c - before, c - before + size)`` (zero outside), ``a`` ``(N, C, L)``:
    the sum of ``size`` shifted slices of the zero-padded channel axis (what PyTorch's avg_pool adds)."""
    C = a.shape[1]
    padded = pad(a, (0, 0, before, size - 1 - before))          # (N, C + size - 1, L)
    out = padded[:, 0:C]
    for o in range(1, size):
        out = out + padded[:, o:o + C]                           # (N, C, L)
    return out


def _as_ncl(t: Tensor) -> Tensor:
    return t.reshape(t.shape[0], t.shape[1], math.prod(t.shape[2:])).to(work_dtype(t.dtype))


def local_response_norm_composed(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                                 k: float = 1.0) -> Tensor:
    """:func:`local_response_norm` from primitive Tensor ops (a reference, differentiable to any order)."""
    a = _as_ncl(input)                                           # (N, C, L)
    s = k + (alpha / size) * _window_sums_composed(a * a, size, size // 2)
    return (a / s ** beta).to(input.dtype).reshape(input.shape)


def local_response_norm_backward_composed(dy: Tensor, x: Tensor, size: int, alpha: float, beta: float,
                                          k: float) -> Tensor:
    """``dx`` of :func:`local_response_norm` from primitive Tensor ops: the fused backward's formula."""
    a, g = _as_ncl(x), _as_ncl(dy)                               # (N, C, L) each
    s = k + (alpha / size) * _window_sums_composed(a * a, size, size // 2)
    s_beta = s ** beta
    through_s = _window_sums_composed(g * a / (s_beta * s), size, (size - 1) // 2)   # the mirrored window
    dx = g / s_beta - (2.0 * alpha * beta / size) * a * through_s
    return dx.to(x.dtype).reshape(x.shape)

"""Piecewise-defined activations (the ELU family, leaky and parametric ReLU, the hard* functions)
and those taken along a dim (``glu``, ``softmin``); thresholds and shrinkage: activation_threshold.py.

The conventions of ``ops/activation.py`` (kinks as PyTorch, limits at infinities, dtypes) hold here.
"""

from __future__ import annotations


import numpy as np

from .. import backend, random_torch
from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import DtypeError, warn_at_caller
from ..tensor import Tensor
from ._util import normalize_dim
from .activation import ActivationDtypeError, _check, _const, _number, _sigmoid  # noqa: F401
from .autocast_policies import autocast
from .conversion import cast
from .selection import where
from .shape import unbroadcast
from .softmax import softmax


# ==================================================================================================
# Exponential linear: elu, selu, celu
# ==================================================================================================

_SELU_ALPHA = 1.6732632423543772848170429916717  # Klambauer et al. (2017)
_SELU_SCALE = 1.0507009873554804934193349852946


class ELU(Function):
    """``scale·x`` for ``x > 0``, else ``scale·alpha·(exp(x·input_scale) - 1)`` (PyTorch's one ELU kernel)."""

    @staticmethod
    def forward(ctx, x, alpha, scale, input_scale):
        xp = get_array_module(x)
        ctx.save_for_backward(x)
        ctx.params = (alpha, scale, input_scale)
        xn = xp.minimum(x, 0) * x.dtype.type(input_scale)  # exp never sees a positive argument
        return xp.where(x <= 0, x.dtype.type(scale * alpha) * xp.expm1(xn), x * x.dtype.type(scale))

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        alpha, scale, input_scale = ctx.params
        neg = Tensor._from_op(x.array <= 0)
        dneg = (x.clamp(max=0) * input_scale).exp() * (scale * alpha * input_scale)
        return where(neg, dy * dneg, dy * scale), None, None, None


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """ELU (Clevert et al., 2015): ``x`` if ``x > 0`` else ``alpha·(e^x - 1)``; ``(*)`` → ``(*)``.

    ``dx = dy`` for ``x > 0``, else ``dy·alpha·e^x``; at 0 the negative branch, ``elu'(0) = alpha``
    (PyTorch tests ``x <= 0``). ``inplace`` is ignored (out of place).
    """
    x = _check(input, "elu")
    return ELU.apply(x, float(_number(alpha, "alpha", "elu")), 1.0, 1.0)


def selu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """SELU (Klambauer et al., 2017): ``scale·elu(x, alpha)`` with alpha ≈ 1.6733, scale ≈ 1.0507.

    ``selu'(0) = scale·alpha ≈ 1.7581`` (negative branch, as PyTorch). ``inplace`` is ignored.
    """
    return ELU.apply(_check(input, "selu"), _SELU_ALPHA, _SELU_SCALE, 1.0)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """CELU (Barron, 2017): ``max(0, x) + min(0, alpha·(e^(x/alpha) - 1))``; ``celu'(0) = 1``.

    Raises RuntimeError for ``alpha == 0`` (PyTorch's message). ``inplace`` is ignored.
    """
    x = _check(input, "celu")
    alpha = float(_number(alpha, "alpha", "celu"))
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return ELU.apply(x, alpha, 1.0, 1.0 / alpha)


# ==================================================================================================
# Piecewise linear: leaky_relu, rrelu, prelu, hardtanh, relu6, hardsigmoid, hardswish
# ==================================================================================================


class LeakyReLU(Function):
    """``x`` where ``x > 0``, else ``slope·x`` (``slope`` per element for rrelu's training noise)."""

    @staticmethod
    def forward(ctx, x, slope):
        xp = get_array_module(x)
        pos = x > 0
        ctx.dslope = xp.where(pos, 1, slope).astype(x.dtype, copy=False)  # the whole derivative
        with np.errstate(invalid="ignore"):
            if np.ndim(slope) == 0 and slope == 0:  # x·0 as PyTorch (NaN stays NaN, -1 gives -0); -inf gives 0, not NaN
                return xp.where(pos, x, xp.where(xp.isneginf(x), x.dtype.type(0), x * x.dtype.type(0)))
            return xp.where(pos, x, x * ctx.dslope)

    @staticmethod
    def backward(ctx, dy):
        return dy * Tensor._from_op(ctx.dslope), None


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x`` if ``x > 0`` else ``negative_slope·x``: ``(*)`` → ``(*)``, same float dtype.

    ``dx = dy`` where ``x > 0``, else ``dy·negative_slope``: ``leaky_relu'(0) = negative_slope`` (as
    PyTorch). ``leaky_relu(-inf, 0) = 0`` (PyTorch: NaN). ``inplace`` is ignored (out of place).
    """
    x = _check(input, "leaky_relu")
    return LeakyReLU.apply(x, float(_number(negative_slope, "negative_slope", "leaky_relu")))


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,  # noqa: A002
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU (Xu et al., 2015): ``(*)`` → ``(*)``.

    Evaluation: ``leaky_relu(x, (lower + upper)/2)``. Training: each ``x <= 0`` gets its own slope
    drawn from ``U(lower, upper)`` (the device's seeded generator; on the CPU PyTorch's draws: one
    float64 uniform per ``x <= 0``, in order) and its gradient is that slope. Raises RuntimeError when ``lower > upper`` (PyTorch's message).
    """
    x = _check(input, "rrelu")
    lower, upper = float(_number(lower, "lower", "rrelu")), float(_number(upper, "upper", "rrelu"))
    if lower > upper:
        raise RuntimeError(f"Lower bound should be less than or equal to the upper bound, got lower={lower}, upper={upper}")
    if not training:
        return LeakyReLU.apply(x, (lower + upper) / 2)
    neg, slope = x.array <= 0, get_array_module(x.array).ones(x.shape, dtype=x.dtype)  # (*): only x <= 0 draw
    lo, hi = (float(x.dtype.type(v)) for v in (lower, upper))  # bounds in x's precision, draws in double
    slope[neg] = random_torch.uniform(backend.generator(x.device), (int(neg.sum()),), np.float64, lo, hi, fused=False)
    return LeakyReLU.apply(x, slope)


class PReLU(Function):
    @staticmethod
    def forward(ctx, x, w, bshape):
        xp = get_array_module(x)
        ctx.save_for_backward(x, w)
        ctx.bshape = bshape
        ctx.pos = x > 0
        return xp.where(ctx.pos, x, w.reshape(bshape) * x)

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        pos = Tensor._from_op(ctx.pos)
        dx = where(pos, dy, dy * w.reshape(ctx.bshape)) if ctx.needs_input_grad[0] else None
        dw = None
        if ctx.needs_input_grad[1]:
            dw = unbroadcast(where(pos, 0.0, dy * x), ctx.bshape).reshape(w.shape)  # Σ dy·x over x <= 0
        return dx, dw, None


@autocast("prelu")
def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002
    """``x`` if ``x > 0`` else ``weight·x``, one weight for all or one per channel (dim 1): ``(N, C, *)`` → same.

    ``weight`` is 0-d or 1-D with 1 or ``C`` elements (``C = 1`` for inputs under 2-D) and the
    input's dtype. ``dx = dy`` where ``x > 0`` else ``dy·weight`` (``prelu'(0) = weight``, as
    PyTorch); ``dweight = Σ dy·x`` over the ``x <= 0`` elements of each channel.

    Raises:
        TypeError: ``weight`` not a Tensor, or non-float input. RuntimeError: ``weight`` of 2+ dims,
        another dtype, or a size other than 1 or ``C`` (PyTorch's messages).
    """
    x = _check(input, "prelu")
    if not isinstance(weight, Tensor):
        raise TypeError(f"prelu(): argument 'weight' must be a Tensor, got {type(weight).__name__}")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    if weight.dtype != x.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {x.dtype} and {weight.dtype}")
    channels = x.shape[1] if x.ndim >= 2 else 1
    n = int(np.prod(weight.shape))
    if n != 1 and n != channels:
        raise RuntimeError(
            "Mismatch of parameter numbers and input channel size. "
            f"Found parameter numbers = {n} and channel size = {channels}."
        )
    bshape = () if n == 1 else (1, channels) + (1,) * (x.ndim - 2)  # weight broadcast over (N, C, *)
    return PReLU.apply(x, weight, bshape)


class Hardtanh(Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        xp = get_array_module(x)
        ctx.inside = ~((x <= lo) | (x >= hi))  # PyTorch's test: a NaN passes its gradient
        return xp.clip(x, lo, hi).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dy):
        return dy * _const(ctx.inside, dy.dtype), None, None


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """``clamp(x, min_val, max_val)``: ``(*)`` → ``(*)``, same dtype (integer dtypes too, as PyTorch).

    ``dx = dy`` strictly inside ``(min_val, max_val)``, 0 at and beyond the bounds (as PyTorch).

    Raises:
        ValueError: ``min_val > max_val``. RuntimeError: bool input. TypeError: not a Tensor.
    """
    if isinstance(input, Tensor) and input.dtype == np.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    x = _check(input, "hardtanh", ints="keep")
    lo, hi = _number(min_val, "min_val", "hardtanh"), _number(max_val, "max_val", "hardtanh")
    if lo > hi:
        raise ValueError(f"min_val cannot be greater than max_val, got min_val={lo} and max_val={hi}")
    if x.dtype.kind == "u" and (lo < 0 or hi < 0):  # PyTorch's refusal: NumPy would clip into [0, hi] silently
        raise DtypeError(f"cannot do hardtanh on an unsigned type with negative limits (got {x.dtype}, "
                         f"min_val={lo}, max_val={hi}; expected limits >= 0)")
    return Hardtanh.apply(x, lo, hi)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``min(max(x, 0), 6)`` = ``hardtanh(x, 0, 6)``; gradient 0 at 0 and at 6 (as PyTorch)."""
    if isinstance(input, Tensor) and input.dtype == np.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    return Hardtanh.apply(_check(input, "relu6", ints="keep"), 0.0, 6.0)


class Hardsigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        xp = get_array_module(x)
        ctx.inside = (x > -3) & (x < 3)
        return (xp.clip(x + 3, 0, 6) / 6).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dy):
        return dy * _const(ctx.inside / 6.0, dy.dtype)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``clamp(x + 3, 0, 6)/6``: ``(*)`` → ``(*)``; ``dx = dy/6`` for ``-3 < x < 3``, else 0 (as PyTorch)."""
    return Hardsigmoid.apply(_check(input, "hardsigmoid"))


class Hardswish(Function):
    @staticmethod
    def forward(ctx, x):
        xp = get_array_module(x)
        ctx.save_for_backward(x)
        with np.errstate(invalid="ignore"):
            y = x * xp.clip(x + 3, 0, 6) / 6
        return xp.where(x <= -3, x.dtype.type(-0.0), y).astype(x.dtype, copy=False)  # -inf·0 → 0

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        a = x.array
        mid = Tensor._from_op((a > -3) & (a < 3))
        one = ~((a <= -3) | (a < 3))  # x >= 3, and NaN (PyTorch's comparisons)
        return dy * where(mid, x * (1.0 / 3.0) + 0.5, _const(one, dy.dtype))


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """Hard swish (Howard et al., 2019) ``x·clamp(x + 3, 0, 6)/6``: ``(*)`` → ``(*)``.

    ``dx = 0`` for ``x <= -3``, ``dy·(x/3 + 1/2)`` for ``-3 < x < 3``, ``dy`` for ``x >= 3`` (PyTorch's
    rule: 0 at -3, 1 at 3). ``hardswish(-inf) = 0`` (PyTorch: NaN). ``inplace`` is ignored.
    """
    return Hardswish.apply(_check(input, "hardswish"))


# ==================================================================================================
# Along a dim: glu, softmin
# ==================================================================================================


class _Cat2(Function):
    """``concatenate((a, b), dim)``; backward slices ``dy`` back (GLU's backward needs it)."""

    @staticmethod
    def forward(ctx, a, b, dim):
        ctx.dim, ctx.split = dim, a.shape[dim]
        return get_array_module(a).concatenate((a, b), axis=dim)

    @staticmethod
    def backward(ctx, dy):
        lead = (slice(None),) * ctx.dim
        return dy[lead + (slice(0, ctx.split),)], dy[lead + (slice(ctx.split, None),)], None


class GLU(Function):
    @staticmethod
    def forward(ctx, x, dim):
        h = x.shape[dim] // 2
        lead = (slice(None),) * dim
        a, b = x[lead + (slice(0, h),)], x[lead + (slice(h, None),)]  # (..., h, ...) each
        ctx.save_for_backward(x)
        ctx.dim, ctx.half = dim, h
        return a * _sigmoid(b)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        lead = (slice(None),) * ctx.dim
        a, b = x[lead + (slice(0, ctx.half),)], x[lead + (slice(ctx.half, None),)]
        s = b.sigmoid()
        da = dy * s  # d(a·σ(b))/da
        db = dy * a * s * (1.0 - s)  # d(a·σ(b))/db
        return _Cat2.apply(da, db, ctx.dim), None


def glu(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    """Gated linear unit (Dauphin et al., 2017): ``a·σ(b)``, ``a, b`` the halves of ``input`` along ``dim``.

    ``(*, 2H, *)`` → ``(*, H, *)``. ``da = dy·σ(b)``, ``db = dy·a·σ(b)(1 - σ(b))``.

    Raises:
        RuntimeError: 0-d input or an odd size along ``dim`` (PyTorch's messages).
        IndexError: ``dim`` out of range. TypeError: non-int ``dim`` or non-float input.
    """
    x = _check(input, "glu")
    if x.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = normalize_dim(dim, x.ndim, "glu")
    if x.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {x.shape[d]}")
    return GLU.apply(x, d)


@autocast("softmin")
def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:  # noqa: A002
    """``softmax(-x, dim)``: ``(*)`` → ``(*)``; each slice along ``dim`` sums to 1.

    ``dtype`` casts the input first (as PyTorch). ``dim=None`` follows PyTorch's deprecated implicit
    choice (0 for 0-, 1- and 3-D inputs, else 1) and warns. Raises TypeError for an integer input
    without a float ``dtype``, IndexError for ``dim`` out of range.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"softmin(): argument 'input' must be a Tensor, got {type(input).__name__}")
    x = input if dtype is None else cast(input, backend.as_dtype(dtype))
    x = _check(x, "softmin")
    if dim is None:
        # attributed to the caller's line (PyTorch's _stacklevel is accepted; the frames are counted here)
        warn_at_caller("Implicit dimension choice for softmin has been deprecated. "
                       "Change the call to include dim=X as an argument.")
        dim = 0 if x.ndim in (0, 1, 3) else 1
    return softmax(-x, dim)


# Tensor.prelu is in ops/methods.py; the rest are torch.nn.functional only

__all__ = [
    "celu", "elu", "glu", "hardsigmoid", "hardswish", "hardtanh", "leaky_relu", "prelu", "relu6", "rrelu", "selu",
    "softmin"
]

"""Activation functions with ``torch.nn.functional``'s names, arguments, defaults, dtypes and errors.

Each op is a ``Function`` (forward on raw arrays with ``xp``, a hand-derived backward in Tensor ops,
so ``create_graph=True`` and ``gradgradcheck`` work) followed at once by its public function.

Kinks. Where the math has no derivative, the gradient is PyTorch's, decided by the comparison its
kernel makes (``aten/src/ATen/native/cpu/Activation.cpp``, ``BinaryOpsKernel.cpp``); each docstring
names the rule, e.g. ``leaky_relu'(0) = negative_slope`` because PyTorch tests ``x > 0``. The same
comparison decides what a NaN input's gradient is (as PyTorch: ``hardtanh'(NaN) = 1``).

Infinities and huge values. Forward and backward are written so that ±1e4 and ±inf in float32
give the limits of the math, never overflow or NaN: softplus/logsigmoid use
``max(x, 0) + log1p(exp(-|x|))``, ``exp`` only ever sees non-positive arguments, and terms of the
form ``x·g(x)`` with ``g(±inf) = 0`` are computed on ``x`` with its infinities replaced by 0
(:func:`_finite`). Where PyTorch returns NaN for an infinite input (``silu``, ``mish``,
``hardswish`` at ``-inf``, their gradients at ``±inf``; ``softsign(±inf)``;
``leaky_relu(-inf, 0)``) we return the limit; the tests say so.

Dtypes: float16/32/64 in, the same dtype out. Integer inputs: ``hardtanh``, ``relu6`` and
``threshold`` keep the integer dtype, ``softsign`` and ``tanhshrink`` give the default float dtype,
the others raise :class:`ActivationDtypeError` (a TypeError and, as PyTorch's error, a
NotImplementedError, so a RuntimeError).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import backend
from ..kernels import gelu_dispatch
from ..autograd.composed import double_backward
from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import DtypeError
from ..tensor import Tensor
from ._util import float_input, require_float
from .fused_backward import SigmoidBackward, TanhBackward, sigmoid_array
from .autocast_policies import autocast
from .elementwise import erf, exp
from . import complex_composed as C  # complex silu, softsign, tanhshrink
from .complex_parts import cj
from .conversion import cast


class ActivationDtypeError(DtypeError, NotImplementedError):
    """An activation got a dtype it has no kernel for (PyTorch raises NotImplementedError)."""


def _check(input, op: str, ints: str = "raise") -> Tensor:  # noqa: A002
    """Validate ``input``; ``ints`` is ``"raise"``, ``"keep"`` (integer dtypes allowed) or ``"float"`` (cast)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, got {type(input).__name__}")
    kind = "f" if backend.is_floating(input.dtype) else input.dtype.kind  # bfloat16's NumPy kind is 'V'
    if kind == "f" or kind in "iu" and ints == "keep":
        return input
    if kind in "iu" and ints == "float":
        return cast(input, backend.default_float_dtype())
    raise ActivationDtypeError(f"{op}: expected a floating point tensor (float16, float32 or float64), got {input.dtype}")


def _number(value, name: str, op: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{op}(): argument '{name}' must be a number, got {type(value).__name__}")
    return value


def _const(mask, dtype) -> Tensor:
    """A constant (no-graph) Tensor from an array, e.g. a 0/1 mask as the gradient's dtype."""
    return Tensor._from_op(mask.astype(dtype, copy=False))


def _finite(x: Tensor) -> Tensor:
    """``x`` with ``±inf`` replaced by 0, for terms ``x·g(x)`` whose limit at ``±inf`` is 0."""
    return x.masked_fill(Tensor._from_op(get_array_module(x.array).isinf(x.array)), 0.0)


def _sigmoid(x):
    xp = get_array_module(x)
    e = xp.exp(-xp.abs(x))  # never overflows
    return xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(x.dtype, copy=False)


def _softplus(x):
    """``log(1 + e^x)`` as ``max(x, 0) + log1p(e^(-|x|))``: exact for large ``|x|``, ``inf`` at ``inf``."""
    xp = get_array_module(x)
    return (xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))).astype(x.dtype, copy=False)


# ==================================================================================================
# The classics: tanh, sigmoid, relu, gelu
# ==================================================================================================


class Tanh(Function):
    """``tanh x``; ``tanh'(x) = 1 - tanh² x = sech² x = 4σ(2x)σ(-2x)``.

    ``1 - y²`` cancels: for ``|x| > 9`` float32 rounds ``y`` to ±1 and the gradient to 0, where
    ``sech² 9 = 6.1e-8``. ``4σ(2x)σ(-2x)`` has no subtraction, so it keeps full relative precision
    down to the smallest floats (PyTorch uses ``1 - y²``: 0 there). ``x`` is saved, not ``y``.
    """

    supports_complex = True  # complex: dz = dy·conj(1 - tanh² z), PyTorch's formula (σ is real-only here)

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return get_array_module(x).tanh(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        if x.dtype.kind == "c":
            return dy * cj(1.0 - (y := tanh(x)) * y)
        return TanhBackward.apply(dy, x)  # dy * (4.0 * (x * 2.0).sigmoid() * (-(x * 2.0)).sigmoid()), one node


def tanh(x: Tensor) -> Tensor:
    """``tanh x``; ``dx = dy·sech² x``, as ``4σ(2x)σ(-2x)`` (accurate where ``1 - y²`` cancels to 0).
    Same shape and dtype as ``x`` (an integer or bool ``x`` gives the default float dtype)."""
    x = float_input(x, "tanh", complex_ok=True)
    return Tanh.apply(x)


class Sigmoid(Function):
    supports_complex = True  # complex: 1/(1 + e^(-z)) and dz = dy·conj(σ(z)σ(-z)), as PyTorch

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        if x.dtype.kind == "c":
            xp = get_array_module(x)
            with np.errstate(all="ignore"):
                return (1.0 / (1.0 + xp.exp(-x))).astype(x.dtype, copy=False)
        return sigmoid_array(x)  # 1/(1+exp(-x)) overflows exp for very negative x; this form never does

    @staticmethod
    def backward(ctx, dy):
        # σ'(x) = σ(x)(1 - σ(x)) = σ(x)σ(-x): 1 - σ(x) cancels to 0 for x > 17 in f32 (σ'(20) = 2.1e-9); x saved, not y
        (x,) = ctx.saved_tensors
        if x.dtype.kind == "c":
            return dy * cj(x.sigmoid() * (-x).sigmoid())
        return SigmoidBackward.apply(dy, x)  # dy * x.sigmoid() * (-x).sigmoid(), one node


def sigmoid(x: Tensor) -> Tensor:
    """``1 / (1 + e^(-x))``, computed without overflow for large ``|x|``; ``dx = dy·σ(x)σ(-x)``
    (``σ(x)(1 - σ(x))`` without the cancellation of ``1 - σ(x)``). Same shape and dtype as ``x``
    (an integer or bool ``x`` gives the default float dtype)."""
    return Sigmoid.apply(float_input(x, "sigmoid", complex_ok=True))


_ZEROS = {np.dtype(t): np.broadcast_to(t(0), ()) for t in (np.float16, np.float32, np.float64)}  # ReLU's, read-only


class ReLU(Function):
    torch_name = "Relu"  # PyTorch records ReluBackward0

    @staticmethod
    def forward(ctx, x):
        # a NumPy float compares with a 0-d zero of its dtype in half the time of the Python 0 (issue 26; same values)
        zero = _ZEROS[x.dtype] if type(x) is np.ndarray and x.dtype in _ZEROS else 0
        ctx.mask = ~(x <= zero)  # NaN passes its gradient on, as PyTorch's threshold_backward
        xp = get_array_module(x)  # PyTorch selects (x < 0 ? 0 : x): NaN and -0 kept; NumPy's max(-0, 0) is +0 (f32/64)
        y = xp.maximum(x, zero).astype(x.dtype, copy=False)
        if type(x) is np.ndarray and x.ndim == 0:  # P[a, b].relu() (issue 26): no array of flags, no where
            return y if y or not x == zero else x.copy()  # y nonzero (x > 0 or NaN) is x; x = ±0 keeps its sign
        return xp.where(at_zero, x, y) if (at_zero := x == zero).any() else y

    @staticmethod
    def backward(ctx, dy):
        # a select, not dy * mask: an inf or NaN dy at a unit that is off gives 0 (as threshold_backward), not NaN
        return dy.masked_fill(Tensor._from_op(~ctx.mask), 0)


def relu(x: Tensor) -> Tensor:
    """``max(x, 0)`` (``x`` itself where not ``x < 0``: NaN and -0 kept, as PyTorch), any shape, same dtype;
    ``dx = dy·[not x <= 0]`` (0 at x = 0, ``dy`` at NaN). A bool tensor: DtypeError (a RuntimeError, as PyTorch)."""
    if isinstance(x, Tensor) and x.array.dtype.kind == "b":
        raise DtypeError("Boolean inputs not supported for relu (got a bool tensor; expected a number dtype)")
    return ReLU.apply(x)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


class GELU(Function):
    """GELU (Hendrycks & Gimpel, 2016).

    exact: y = x Φ(x), Φ the standard normal CDF; dy/dx = Φ(x) + x φ(x).
    tanh:  y = x/2 (1 + tanh(u)), u = sqrt(2/π)(x + 0.044715 x³);
           dy/dx = (1 + t)/2 + x/2 (1 - t²) sqrt(2/π)(1 + 3·0.044715 x²), t = tanh(u).

    Forward and backward are the fused kernels of :mod:`minitorch_ln.kernels.activation` (only
    ``x`` is saved; the backward, :class:`GELUBackward`, recomputes Φ and φ).
    """

    @staticmethod
    def forward(ctx, x, approximate):
        ctx.save_for_backward(x)
        ctx.approximate = approximate
        with np.errstate(over="ignore", invalid="ignore"):
            return gelu_dispatch.gelu_fwd_for(x)(x, approximate)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return GELUBackward.apply(dy, x, ctx.approximate), None


def _gelu_backward_composed(dy: Tensor, x: Tensor, approximate: str) -> Tensor:
    """``dy · GELU'(x)`` in Tensor ops (the formulas of :class:`GELU`), for higher derivatives."""
    if approximate == "tanh":
        t = tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))
        dudx = _SQRT_2_OVER_PI * (1.0 + 3 * 0.044715 * x * x)
        return dy * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * dudx)
    cdf = 0.5 * (1.0 + erf(x * (1.0 / math.sqrt(2.0))))
    pdf = exp(-0.5 * x * x) * _INV_SQRT_2PI
    return dy * (cdf + x * pdf)


class GELUBackward(Function):
    """``(dy, x) -> dx = dy · GELU'(x)``: the fused kernel; its own backward differentiates
    :func:`_gelu_backward_composed` (``autograd/composed.py``)."""

    @staticmethod
    def forward(ctx, dy, x, approximate):
        ctx.save_for_backward(dy, x)
        ctx.approximate = approximate
        with np.errstate(over="ignore", invalid="ignore"):
            return gelu_dispatch.gelu_bwd_for(x)(dy, x, approximate)

    @staticmethod
    def backward(ctx, ddx):
        dy, x = ctx.saved_tensors
        approximate = ctx.approximate
        grads = double_backward(lambda dy_, x_: (_gelu_backward_composed(dy_, x_, approximate),), (dy, x), (ddx,))
        return (*grads, None)


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    """GELU; ``approximate`` is ``"none"`` (exact, with erf) or ``"tanh"`` (as PyTorch)."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    require_float(x, "gelu")
    return GELU.apply(x, approximate)


# ==================================================================================================
# Smooth: silu, mish, softplus, logsigmoid, softsign, tanhshrink
# ==================================================================================================


class SiLU(Function):
    @staticmethod
    def forward(ctx, x):
        xp = get_array_module(x)
        ctx.save_for_backward(x)
        with np.errstate(invalid="ignore"):
            y = x * _sigmoid(x)
        return xp.where(x == -xp.inf, x.dtype.type(-0.0), y)  # -inf·0 is NaN; the limit is 0

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        s = x.sigmoid()
        return dy * (s * (1.0 + _finite(x) * (1.0 - s)))  # σ(x)(1 + x(1 - σ(x)))


def silu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """SiLU / swish ``x·σ(x)`` (Elfwing et al., 2017): ``(*)`` → ``(*)``, same float dtype.

    ``dx = dy·σ(x)(1 + x(1 - σ(x)))``. ``silu(-inf) = 0``, ``silu'(inf) = 1``, ``silu'(-inf) = 0`` (PyTorch: NaN).
    ``inplace`` is accepted and ignored (out of place). Complex: ``z·σ(z)`` composed. TypeError: other non-floats.
    """
    return C.silu(input) if C.is_complex(input) else SiLU.apply(_check(input, "silu"))


class Softplus(Function):
    @staticmethod
    def forward(ctx, x, beta, threshold):
        xp = get_array_module(x)
        ctx.save_for_backward(x)
        ctx.beta, ctx.threshold = beta, threshold
        bx = x * x.dtype.type(beta)
        with np.errstate(divide="ignore", invalid="ignore"):
            soft = _softplus(bx) / x.dtype.type(beta)
        return xp.where(bx > threshold, x, soft)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        bx = x * ctx.beta
        linear = Tensor._from_op(bx.array > ctx.threshold)
        return dy * bx.sigmoid().masked_fill(linear, 1.0), None, None  # σ(βx), 1 where linear


@autocast("softplus")
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: A002
    """``log(1 + e^(βx))/β``, and ``x`` itself where ``βx > threshold`` (as PyTorch): ``(*)`` → ``(*)``.

    ``dx = dy·σ(βx)`` (1 in the linear region; at ``βx = threshold`` the smooth branch). Stable for
    large ``|x|``: ``softplus(-1e4) = 0`` with no overflow. Raises TypeError for a non-float input
    or non-numeric ``beta``/``threshold``.
    """
    x = _check(input, "softplus")
    return Softplus.apply(x, _number(beta, "beta", "softplus"), _number(threshold, "threshold", "softplus"))


class Mish(Function):
    @staticmethod
    def forward(ctx, x):
        xp = get_array_module(x)
        ctx.save_for_backward(x)
        with np.errstate(invalid="ignore"):
            y = x * xp.tanh(_softplus(x))
        return xp.where(x == -xp.inf, x.dtype.type(-0.0), y)  # -inf·0 is NaN; the limit is 0

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        t = softplus(x).tanh()  # (*)
        return dy * (t + _finite(x) * (1.0 - t * t) * x.sigmoid())  # tanh(sp) + x·sech²(sp)·σ(x)


def mish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """Mish ``x·tanh(softplus(x))`` (Misra, 2019): ``(*)`` → ``(*)``, same float dtype.

    ``dx = dy·(tanh(sp) + x·(1 - tanh²(sp))·σ(x))``, ``sp = softplus(x)`` (stable form).
    ``mish(-inf) = 0``, ``mish'(inf) = 1``, ``mish'(-inf) = 0`` (PyTorch: NaN). ``inplace`` is ignored (out of place).
    """
    return Mish.apply(_check(input, "mish"))


class LogSigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        xp = get_array_module(x)
        ctx.save_for_backward(x)
        return (xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return dy * (-x).sigmoid()  # d/dx log σ(x) = 1 - σ(x) = σ(-x)


def logsigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """``log σ(x) = min(x, 0) - log1p(e^(-|x|))``: ``(*)`` → ``(*)``; ``dx = dy·σ(-x)``.

    Exact for large ``|x|`` (``logsigmoid(-1e4) = -1e4``, ``logsigmoid(1e4) = 0``).
    """
    return LogSigmoid.apply(_check(input, "logsigmoid"))


class Softsign(Function):
    @staticmethod
    def forward(ctx, x):
        xp = get_array_module(x)
        ctx.save_for_backward(x)
        with np.errstate(invalid="ignore"):
            y = x / (1 + xp.abs(x))
        return xp.where(xp.isinf(x), xp.sign(x), y).astype(x.dtype, copy=False)  # inf/inf → ±1

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        a = 1.0 + x.abs()
        return dy / (a * a)  # 1 / (1 + |x|)²


def softsign(input: Tensor) -> Tensor:  # noqa: A002
    """``x / (1 + |x|)``: ``(*)`` → ``(*)``; ``dx = dy/(1 + |x|)²``. Integer input gives the default float dtype.
    ``softsign(±inf) = ±1`` with gradient 0 (PyTorch: NaN). Complex: ``z / (1 + |z|)`` composed, as PyTorch's."""
    return C.softsign(input) if C.is_complex(input) else Softsign.apply(_check(input, "softsign", ints="float"))


class Tanhshrink(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x - get_array_module(x).tanh(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        t = x.tanh()
        return dy * (t * t)  # 1 - (1 - tanh²)


def tanhshrink(input: Tensor) -> Tensor:  # noqa: A002
    """``x - tanh(x)``: ``(*)`` → ``(*)``; ``dx = dy·tanh²(x)``. Integer input gives the default float dtype; complex
    input is composed (ops/complex_composed.py)."""
    return C.tanhshrink(input) if C.is_complex(input) else Tanhshrink.apply(_check(input, "tanhshrink", ints="float"))


__all__ = ["gelu", "logsigmoid", "mish", "relu", "sigmoid", "silu", "softplus", "softsign", "tanh", "tanhshrink"]

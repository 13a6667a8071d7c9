"""Cumulative ops along one dim: cumsum, cumprod, logcumsumexp, cummax, cummin (``torch.cum*``).

Every backward is again a scan, written with the ops of this module, so gradients of any order are
exact. The one primitive behind ``cumprod``'s gradient is the first-order linear recurrence
``h_i = b_i + a_i · h_{i-1}`` (:class:`LinearScan`), whose adjoint is the same recurrence run the
other way; it needs no division, so inputs with one or several zeros get the exact gradient.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import DtypeError, OptionError, ShapeError
from ..tensor import Tensor
from . import complex_composed as C
from ._util import axis_alias, normalize_dim, require_float  # noqa: F401 - axis_alias re-exported
from .autocast_policies import autocast
from .complex_parts import cj
from .conversion import cast
from .joining import cat

__all__ = ["cummax", "cummin", "cumprod", "cumsum", "diff", "logcumsumexp"]


CummaxResult = namedtuple("cummax", ["values", "indices"])
CumminResult = namedtuple("cummin", ["values", "indices"])


# ==================================================================================================
# Array helpers: inclusive scans with an associative ufunc, shifts, flips
# ==================================================================================================


def _scan_arrays(name: str, x, axis: int):
    """Inclusive scan of ``x`` along ``axis`` with the associative ufunc ``xp.<name>``.

    NumPy has ``ufunc.accumulate``; elsewhere (CuPy) a Hillis–Steele scan: ``log2(n)`` whole-array
    steps ``y[d:] = op(y[:-d], y[d:])`` with ``d = 1, 2, 4, ...``.
    """
    xp = get_array_module(x)
    op = getattr(xp, name)
    if xp is np:
        return op.accumulate(x, axis=axis)
    y = xp.moveaxis(x, axis, -1).copy()  # (..., n)
    n, d = y.shape[-1], 1
    while d < n:
        y[..., d:] = op(y[..., :-d], y[..., d:])
        d *= 2
    return xp.moveaxis(y, -1, axis)


def _shift_arrays(x, axis: int, offset: int, fill):
    """``x`` moved by ``offset`` (+1: towards higher indices) along ``axis``, the gap filled with ``fill``."""
    xp = get_array_module(x)
    out = xp.full(x.shape, fill, dtype=x.dtype)  # (*x.shape)
    n = x.shape[axis]
    src = [slice(None)] * x.ndim
    dst = [slice(None)] * x.ndim
    src[axis] = slice(0, max(n - 1, 0)) if offset > 0 else slice(1, n)
    dst[axis] = slice(1, n) if offset > 0 else slice(0, max(n - 1, 0))
    out[tuple(dst)] = x[tuple(src)]
    return out


class Shift(Function):
    """``out[i] = x[i - offset]`` along ``axis`` (``fill`` where that is outside); the adjoint shifts back."""

    supports_complex = True

    @staticmethod
    def forward(ctx, x, axis, offset, fill):
        ctx.axis, ctx.offset = axis, offset
        return _shift_arrays(x, axis, offset, fill)

    @staticmethod
    def backward(ctx, dy):
        return Shift.apply(dy, ctx.axis, -ctx.offset, 0), None, None, None


class LinearScan(Function):
    """``h_i = b_i + a_i · h_{i-1}`` along ``axis`` (``h_{-1} = 0``); with ``reverse``, ``h_i = b_i + a_i · h_{i+1}``.

    Forward: a Hillis–Steele scan over pairs (A, B), ``log2(n)`` whole-array steps. Backward (forward
    direction; reverse is the mirror image): ``G_i = g_i + a_{i+1} G_{i+1}`` is the same recurrence
    run backwards, then ``db = G`` and ``da_i = G_i · h_{i-1}``.
    """

    supports_complex = True

    @staticmethod
    def forward(ctx, a, b, axis, reverse):
        xp = get_array_module(b)
        A = xp.moveaxis(a, axis, -1).astype(b.dtype, copy=True)  # (..., n)
        B = xp.moveaxis(b, axis, -1).copy()  # (..., n)
        if reverse:
            A, B = A[..., ::-1].copy(), B[..., ::-1].copy()
        n, d = B.shape[-1], 1
        while d < n:  # B_i covers (i-2d, i]: B_i += A_i · B_{i-d}, then A_i *= A_{i-d}
            B[..., d:] = B[..., d:] + A[..., d:] * B[..., :-d]
            A[..., d:] = A[..., d:] * A[..., :-d]
            d *= 2
        if reverse:
            B = B[..., ::-1]
        h = xp.ascontiguousarray(xp.moveaxis(B, -1, axis))
        ctx.axis, ctx.reverse = axis, reverse
        ctx.save_for_backward(a, h)
        return h

    @staticmethod
    def backward(ctx, dh):
        a, h = ctx.saved_tensors
        axis, rev = ctx.axis, ctx.reverse
        step = 1 if rev else -1  # where h_i takes its carry from: i + 1 (reverse) or i - 1
        G = LinearScan.apply(Shift.apply(cj(a), axis, step, 0), dh, axis, not rev)  # G_i = g_i + a*_{i∓1} G_{i∓1}
        da = G * cj(Shift.apply(h, axis, -step, 0)) if ctx.needs_input_grad[0] else None  # G_i · h*_{i-1}
        db = G if ctx.needs_input_grad[1] else None
        return da, db, None, None


def linear_scan(a: Tensor, b: Tensor, dim: int, reverse: bool = False) -> Tensor:
    """``h_i = b_i + a_i · h_{i-1}`` along ``dim`` (``h_i = b_i + a_i · h_{i+1}`` with ``reverse``); same shape as ``b``."""
    if a.shape != b.shape:
        raise RuntimeError(f"linear_scan: a and b must have one shape, got {tuple(a.shape)} and {tuple(b.shape)}")
    return LinearScan.apply(a, b, normalize_dim(dim, b.ndim, "linear_scan"), reverse)


# ==================================================================================================
# cumsum, cumprod
# ==================================================================================================


def _scan_input(input, dim, dtype, op):
    """Validate and cast ``input`` as ``torch.cum*``: integer and bool inputs scan in int64."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a Tensor as input, got {type(input).__name__}")
    axis = normalize_dim(dim, input.ndim, op)
    if dtype is not None:
        input = cast(input, backend.as_dtype(dtype))
    elif input.dtype.kind in "bui":
        input = cast(input, "int64")
    return input, axis


class CumSum(Function):
    """``y_i = Σ_{j<=i} x_j`` (or ``Σ_{j>=i}`` with ``reverse``); the gradient is the scan the other way."""

    torch_name = "Cumsum"  # PyTorch records CumsumBackward0
    supports_complex = True

    @staticmethod
    def forward(ctx, x, axis, reverse):
        xp = get_array_module(x)
        ctx.axis, ctx.reverse = axis, reverse
        acc = "float32" if x.dtype == np.float16 else x.dtype  # float16 sums accumulate in float32 (as PyTorch)
        if reverse:
            y = xp.flip(xp.flip(x, axis).cumsum(axis, dtype=acc), axis).astype(x.dtype)
        else:
            y = x.cumsum(axis, dtype=acc).astype(x.dtype, copy=False)
        # the running sums start from +0, as PyTorch's (and as sum: tensor([-0.]).sum() is 0.0): a leading
        # -0.0 gives 0.0 (-0 + 0 = +0; every other value is unchanged by adding 0)
        return y + y.dtype.type(0) if y.dtype.kind in "fc" else y

    @staticmethod
    def backward(ctx, dy):
        return CumSum.apply(dy, ctx.axis, not ctx.reverse), None, None


@autocast("cumsum")
@axis_alias
def cumsum(input: Tensor, dim: int, dtype=None) -> Tensor:
    """Cumulative sum ``y_i = Σ_{j<=i} x_j`` along ``dim`` (``torch.cumsum``); same shape as ``input``.

    Integer and bool inputs give int64 (no gradient); ``dtype`` casts the input first. ``dx`` is the
    reversed cumulative sum of ``dy``. Raises IndexError for ``dim`` out of range.
    """
    x, axis = _scan_input(input, dim, dtype, "cumsum")
    if x.ndim == 0:
        return x * 1  # a copy: the scan of one element is itself
    if not backend.is_floating(x.dtype) and x.dtype.kind != "c":
        return Tensor._from_op(x.array.cumsum(axis, dtype=x.dtype))
    return CumSum.apply(x, axis, False)


class CumProd(Function):
    """``y_i = Π_{j<=i} x_j``.

    ``dx_i = Σ_{j>=i} dy_j Π_{k<=j, k≠i} x_k = y_{i-1} · S_i`` with ``S_i = Σ_{j>=i} dy_j Π_{i<k<=j} x_k``,
    that is ``S_i = dy_i + x_{i+1} S_{i+1}``: a reverse :class:`LinearScan`. No division by ``x``,
    so zeros (one or several) give the exact gradient, and so does every higher derivative.
    """

    supports_complex = True

    @staticmethod
    def forward(ctx, x, axis):
        ctx.axis = axis
        ctx.save_for_backward(x)
        acc = "float32" if x.dtype == np.float16 else x.dtype
        with np.errstate(over="ignore"):  # a float16 prefix out of range is inf, as PyTorch's
            return x.cumprod(axis, dtype=acc).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        axis = ctx.axis
        exclusive = Shift.apply(CumProd.apply(x, axis), axis, 1, 1)  # y_{i-1}, 1 at i = 0
        s = LinearScan.apply(Shift.apply(cj(x), axis, -1, 0), dy, axis, True)  # S_i = dy_i + x*_{i+1} S_{i+1}
        return cj(exclusive) * s, None  # complex: conjugated coefficients (docs/complex.md)


@autocast("cumprod")
@axis_alias
def cumprod(input: Tensor, dim: int, dtype=None) -> Tensor:
    """Cumulative product ``y_i = Π_{j<=i} x_j`` along ``dim`` (``torch.cumprod``); same shape.

    Integer and bool inputs give int64 (no gradient); ``dtype`` casts the input first. The gradient
    is exact with zeros in the input (see :class:`CumProd`). Raises IndexError for ``dim`` out of range.
    """
    x, axis = _scan_input(input, dim, dtype, "cumprod")
    if x.ndim == 0:
        return x * 1  # a copy: the scan of one element is itself
    if not backend.is_floating(x.dtype) and x.dtype.kind != "c":
        return Tensor._from_op(x.array.cumprod(axis, dtype=x.dtype))
    return CumProd.apply(x, axis)


# ==================================================================================================
# logcumsumexp
# ==================================================================================================


class LogCumSumExp(Function):
    """``y_i = log Σ_{j<=i} exp(x_j)`` as a ``logaddexp`` scan: exact for huge values and ``-inf``.

    Backward (as PyTorch's, after TensorFlow's): ``dx_j = Σ_{i>=j} dy_i exp(x_j - y_i)``, computed in
    log space on the positive and the negative parts of ``dy`` with the reverse scan, so no
    ``exp`` overflows: ``dx = exp(x + rlcse(log dy⁺ - y)) - exp(x + rlcse(log dy⁻ - y))``.
    """

    @staticmethod
    def forward(ctx, x, axis, reverse):
        xp = get_array_module(x)
        ctx.axis, ctx.reverse = axis, reverse
        src = xp.flip(x, axis) if reverse else x
        with np.errstate(invalid="ignore"):
            y = _scan_arrays("logaddexp", src, axis)
        y = xp.ascontiguousarray(xp.flip(y, axis)) if reverse else y
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, y = ctx.saved_tensors
        lowest = float(np.finfo(dy.dtype).min) / 2  # log 0 as a finite number (halved: lowest - y stays finite)

        def part(mask):
            log_abs = (dy.abs().masked_fill(~mask, 1.0)).log().masked_fill(~mask, lowest)
            return (LogCumSumExp.apply(log_abs - y, ctx.axis, not ctx.reverse) + x).exp()

        return part(dy > 0) - part(dy < 0), None, None


@axis_alias
def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log Σ_{j<=i} exp(x_j)`` along ``dim`` (``torch.logcumsumexp``); same shape and float dtype.

    Stable for huge values and ``-inf`` (a running ``logaddexp``). Raises TypeError for integer
    input (PyTorch: NotImplementedError) and IndexError for ``dim`` out of range.
    """
    if input.dtype.kind != "c":  # complex: composed (ops/complex_composed.py); refuses a range that underflows
        require_float(input, "logcumsumexp")
    axis = normalize_dim(dim, input.ndim, "logcumsumexp")
    if input.ndim == 0:
        return input * 1
    return C.logcumsumexp(input, axis) if input.dtype.kind == "c" else LogCumSumExp.apply(input, axis, False)


# ==================================================================================================
# cummax, cummin
# ==================================================================================================


def _along(xp, idx, axis: int):
    """The advanced index that reads ``take_along_axis(x, idx, axis)`` as ``x[index]``."""
    index = []
    for d in range(idx.ndim):
        if d == axis:
            index.append(idx)
        else:
            shape = [1] * idx.ndim
            shape[d] = idx.shape[d]
            index.append(xp.arange(idx.shape[d]).reshape(shape))
    return tuple(index)


def take_along(x: Tensor, idx, axis: int) -> Tensor:
    """``x`` at the int64 array ``idx`` along ``axis`` (``torch.gather``); differentiable (scatter-add)."""
    if x.ndim == 0:
        return x * 1 if backend.is_floating(x.dtype) or x.dtype.kind == "c" else Tensor._from_op(x.array.copy())
    xp = get_array_module(x.array)
    if not backend.is_floating(x.dtype) and x.dtype.kind != "c":
        return Tensor._from_op(xp.take_along_axis(x.array, idx, axis))
    return x[_along(xp, idx, axis)]


def _cum_extreme(input, dim, largest, op):
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a Tensor as input, got {type(input).__name__}")
    axis = normalize_dim(dim, input.ndim, op)
    xp = get_array_module(input.array)
    result = CummaxResult if largest else CumminResult
    if input.ndim == 0:
        return result(take_along(input, None, 0), Tensor._from_op(xp.zeros((), dtype="int64")))
    x = input.array
    with np.errstate(invalid="ignore"):
        v = _scan_arrays("maximum" if largest else "minimum", x, axis)  # NaN propagates, as PyTorch
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    pos = xp.arange(x.shape[axis], dtype="int64").reshape(shape)  # (1, .., n, .., 1)
    hit = x == v
    if backend.is_floating(x.dtype):
        hit |= xp.isnan(x)
    # the last j <= i where x_j equals the running extreme: ties pick the LAST index (as PyTorch)
    idx = _scan_arrays("maximum", xp.where(hit, pos, -1), axis)  # (*x.shape)
    return result(take_along(input, idx, axis), Tensor._from_op(idx))


@axis_alias
def cummax(input: Tensor, dim: int):
    """Running maximum along ``dim`` and its index: a namedtuple ``(values, indices)`` (``torch.cummax``).

    ``indices`` (int64) name the LAST position holding the running maximum (as PyTorch); NaN
    propagates and its index is the latest NaN. The gradient goes to ``indices`` (scatter-add).
    Raises IndexError for ``dim`` out of range.
    """
    return _cum_extreme(input, dim, True, "cummax")


@axis_alias
def cummin(input: Tensor, dim: int):
    """Running minimum along ``dim``: ``(values, indices)`` as :func:`cummax` (``torch.cummin``)."""
    return _cum_extreme(input, dim, False, "cummin")


# ==================================================================================================
# diff: the inverse of a scan
# ==================================================================================================


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,  # noqa: A002
         append: Tensor | None = None) -> Tensor:
    """The ``n``-th forward difference along ``dim``, ``out[i] = x[i + 1] - x[i]`` applied ``n`` times
    (``torch.diff``), after joining ``prepend`` and ``append`` to ``input`` along ``dim``.

    Shape: ``input``'s with ``dim`` of size ``max(L - n, 0)``, ``L`` the joined length. Bool inputs give
    ``x[i + 1] != x[i]`` (bool), as PyTorch; other dtypes promote with ``prepend``/``append`` as ``cat``.
    Composed of slicing and ``sub``, so the gradient is theirs: ``dx[i] = dy[i - 1] - dy[i]`` (n = 1).

    Raises:
        ShapeError: a 0-d input, or ``prepend``/``append`` of another number of dims or of other
        sizes off ``dim``. OptionError: ``n < 0``. TypeError: ``prepend``/``append`` not Tensors.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"diff(): expected input to be a Tensor, got {type(input).__name__}")
    if input.ndim == 0:
        raise ShapeError("diff expects input to be at least one-dimensional")
    if int(n) < 0:
        raise OptionError(f"diff: order must be non-negative but got {n}")
    d = normalize_dim(dim, input.ndim, "diff")
    if int(n) == 0:  # as PyTorch: the input itself, prepend and append unused
        return input
    parts = [input]
    for name, t in (("prepend", prepend), ("append", append)):
        if t is None:
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"diff(): argument '{name}' must be Tensor, not {type(t).__name__}")
        if t.ndim != input.ndim:
            raise ShapeError(f"diff expects prepend or append to be the same dimension as input, got {name} of "
                             f"shape {tuple(t.shape)} for input of shape {tuple(input.shape)}")
        if any(s != r for j, (s, r) in enumerate(zip(t.shape, input.shape)) if j != d):
            raise ShapeError(f"diff expects the shape of tensor to prepend or append to match that of input "
                             f"except along the differencing dimension; input is {tuple(input.shape)}, "
                             f"{name} is {tuple(t.shape)}")
        parts.insert(0 if name == "prepend" else len(parts), t)
    x = cat(parts, d) if len(parts) > 1 else input
    lead = (slice(None),) * d
    for _ in range(int(n)):
        length = x.shape[d]
        if length == 0:
            break
        hi, lo = x[lead + (slice(1, length),)], x[lead + (slice(0, length - 1),)]
        x = hi != lo if x.dtype == np.bool_ else hi - lo
    return x

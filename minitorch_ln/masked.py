"""``minitorch_ln.masked``: the ``torch.masked`` reductions and normalizations on strided tensors with a mask.

PyTorch's semantics (``torch/masked/_ops.py``): ``mask`` is a bool tensor (or one converted to bool) that
broadcasts to ``input``'s shape (a mask of more dims than ``input`` is refused); ``mask=None`` keeps every
element. Masked-out elements are replaced by the reduction's identity before the plain op runs (sum and
cumsum 0, prod and cumprod 1, amax/argmax/logsumexp/logaddexp/softmax -inf, amin/argmin/softmin +inf,
norm 0 (+inf for ``ord=-inf``), median NaN, then ``nanmedian``). So a fully masked row gives the identity
(sum 0, amax -inf), ``mean``/``var``/``std`` divide by the count of kept elements (0/0 = NaN for a fully
masked row), and ``softmax`` over a fully masked row is NaN. Each function is that composition of
differentiable ops, so gradients flow to the kept elements (masked-out ones get 0).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from . import backend
from .errors import DtypeError
from .ops.binary import logaddexp as _logaddexp
from .ops.comparison import isnan
from .ops.linalg_norms import linalg_vector_norm
from .ops.selection import where
from .ops.softmax import log_softmax as _log_softmax
from .ops.softmax import softmax as _softmax
from .tensor import Tensor

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp", "logsumexp", "mean",
           "median", "norm", "normalize", "prod", "softmax", "softmin", "std", "sum", "var"]

_SMALL_INTS = ("uint8", "bool", "int8", "int16", "int32")


def _canonical_dim(dim, ndim: int) -> tuple:
    """``dim`` (None, an int, or a sequence) as a sorted tuple of non-negative dims; None means all."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, numbers.Integral) else tuple(dim)
    out = set()
    for d in dims:
        if not isinstance(d, numbers.Integral):
            raise TypeError(f"masked: dim must be an int or a sequence of ints, got {dim!r}")
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise IndexError(f"masked: dim {d} out of range for a tensor of {ndim} dims")
        if d % max(ndim, 1) in out:
            raise RuntimeError(f"masked: dim={d} appears multiple times in the list of dims")
        out.add(d % max(ndim, 1))
    return tuple(sorted(out))


def _input_mask(input: Tensor, mask) -> Tensor:
    """``mask`` as a bool tensor of ``input``'s shape (broadcast)."""
    if not isinstance(mask, Tensor):
        raise TypeError(f"masked: mask must be a Tensor or None, got {type(mask).__name__}")
    if mask.ndim > input.ndim:
        raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality higher than of the input)")
    if tuple(mask.shape) != tuple(input.shape):
        mask = mask.broadcast_to(tuple(input.shape))
    return mask.to("bool") if mask.dtype != np.bool_ else mask


def _identity(op: str, input: Tensor, ord=None):
    kind = input.dtype.kind
    if op in ("sum", "norm") and ord != -math.inf:
        return 0
    if op == "prod":
        return 1
    if op == "median":
        return math.nan
    high = op in ("amin", "argmin") or op == "norm"
    if kind == "c" and op in ("logsumexp", "logaddexp"):  # exp(-inf + 0j) = 0: the identity of a complex sum of exps
        return complex(-math.inf, 0.0)
    if kind == "f":
        return math.inf if high else -math.inf
    info = np.iinfo(input.dtype) if kind in "iu" else None
    if info is None:
        raise DtypeError(f"masked.{op}: no identity for {input.dtype} input")
    return info.max if high else info.min


def _combine(op: str, input: Tensor, mask, ord=None) -> Tensor:
    """``input`` with its masked-out elements replaced by ``op``'s identity."""
    if not isinstance(input, Tensor):
        raise TypeError(f"masked.{op}: argument 'input' must be a Tensor, not {type(input).__name__}")
    if mask is None:
        return input
    fill = Tensor._from_op(np.asarray(_identity(op, input, ord), dtype=input.dtype))
    return where(_input_mask(input, mask), input, fill)


def _dt(input, dtype):
    """The result dtype: ``dtype`` or ``input``'s; checks that ``input`` is a Tensor."""
    if not isinstance(input, Tensor):
        raise TypeError(f"masked: argument 'input' must be a Tensor, not {type(input).__name__}")
    return input.dtype if dtype is None else backend.as_dtype(dtype)


def _int_dtype(input: Tensor, dtype):
    _dt(input, dtype)
    if dtype is not None:
        return backend.as_dtype(dtype)
    return np.dtype(np.int64) if str(input.dtype) in _SMALL_INTS else input.dtype


def sum(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """Σ of the kept elements over ``dim`` (all when None); small integer dtypes sum in int64."""
    dt = _int_dtype(input, dtype)
    return _combine("sum", input, mask).sum(_canonical_dim(dim, input.ndim), keepdim=bool(keepdim), dtype=dt)


def prod(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """Π of the kept elements over ``dim`` (all when None); small integer dtypes multiply in int64."""
    result = _combine("prod", input, mask).to(_int_dtype(input, dtype))
    for d in reversed(_canonical_dim(dim, input.ndim)):
        result = result.prod(dim=d, keepdim=bool(keepdim))
    return result


def cumsum(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """Running Σ along ``dim``, masked-out elements counted as 0."""
    dt = _dt(input, dtype)
    return _combine("sum", input, mask).cumsum(_canonical_dim(dim, input.ndim)[0], dtype=dt).to(dt)


def cumprod(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """Running Π along ``dim``, masked-out elements counted as 1."""
    dt = _dt(input, dtype)
    return _combine("prod", input, mask).cumprod(_canonical_dim(dim, input.ndim)[0], dtype=dt).to(dt)


def amax(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """Largest kept element over ``dim``; -inf (the dtype's minimum for integers) for a fully masked row."""
    dt = _dt(input, dtype)
    return _combine("amax", input, mask).amax(_canonical_dim(dim, input.ndim), bool(keepdim)).to(dt)


def amin(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """Smallest kept element over ``dim``; +inf (the dtype's maximum for integers) for a fully masked row."""
    dt = _dt(input, dtype)
    return _combine("amin", input, mask).amin(_canonical_dim(dim, input.ndim), bool(keepdim)).to(dt)


def argmax(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """Index of the largest kept element along ``dim`` (of the flattened tensor when None), cast to ``dtype``
    (``input``'s by default, as PyTorch)."""
    dt = _dt(input, dtype)
    return _combine("argmax", input, mask).argmax(dim, bool(keepdim)).to(dt)


def argmin(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """Index of the smallest kept element along ``dim``, cast to ``dtype`` (``input``'s by default)."""
    dt = _dt(input, dtype)
    return _combine("argmin", input, mask).argmin(dim, bool(keepdim)).to(dt)


def _count(input: Tensor, dim, keepdim: bool, mask) -> Tensor:
    ones = Tensor._from_op(backend.get_array_module(input.array).ones(tuple(input.shape), dtype=np.int64))
    return sum(ones if mask is None else _input_mask(input, mask), dim, keepdim=keepdim)


def mean(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """Σ kept / count kept over ``dim``: NaN for a fully masked row. Raises DtypeError unless the (given or
    input) dtype is floating point or complex (PyTorch's "Could not infer output dtype")."""
    dt = _dt(input, dtype)
    if not (backend.is_floating(dt) or dt.kind == "c"):
        raise DtypeError(f"mean(): Could not infer output dtype. {'Optional' if dtype is not None else 'Input'} dtype "
                         f"must be either a floating point or complex dtype. Got: {dt}")
    return sum(input, dim, keepdim=keepdim, dtype=dt, mask=mask) / _count(input, dim, keepdim, mask)


def median(input: Tensor, dim: int = -1, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """The lower median of the kept elements along ``dim`` (``nanmedian`` after masking with NaN): NaN for a
    fully masked row of a float input; integer inputs must have no fully masked row (ValueError)."""
    dt = _dt(input, dtype)
    d = _canonical_dim(dim, input.ndim)[0]
    is_float = input.dtype.kind == "f"
    x = input if is_float else input.to("float32")
    out = _combine("median", x, mask).nanmedian(d, keepdim).values
    if is_float:
        return out
    if bool(isnan(out).any()):
        raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")
    return out.to(dt)


def logsumexp(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """``log Σ exp`` of the kept elements over ``dim``: -inf for a fully masked row."""
    dt = _dt(input, dtype)
    return _combine("logsumexp", input, mask).logsumexp(_canonical_dim(dim, input.ndim), keepdim=keepdim).to(dt)


def logaddexp(input: Tensor, other: Tensor, *, dtype=None, input_mask=None, other_mask=None) -> Tensor:
    """``log(exp(input) + exp(other))`` elementwise, each operand's masked-out elements taken as -inf."""
    dt = _dt(input, dtype)
    return _logaddexp(_combine("logaddexp", input, input_mask), _combine("logaddexp", other, other_mask)).to(dt)


def norm(input: Tensor, ord=2.0, dim=None, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """The vector ``ord``-norm of the kept elements over ``dim`` (``linalg.vector_norm``); masked-out
    elements count as 0 (as +inf for ``ord=-inf``)."""
    dt = _dt(input, dtype)
    x = _combine("norm", input, mask, ord)  # complex: the (real) norm of |x|
    return linalg_vector_norm(x, ord, _canonical_dim(dim, input.ndim), bool(keepdim), dtype=None if dt.kind == "c" else dt)


def _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt):
    if unbiased is not None and correction is not None:
        raise ValueError("masked var/std: only one of unbiased and correction may be given")
    c = 1.0 if unbiased is None and correction is None else float(correction if correction is not None else unbiased)
    dt = _dt(input, dtype)
    dt = dt if dt.kind in "fc" else np.dtype(np.float32)
    count = _count(input, dim, True, mask)
    sample_mean = sum(input, dim, keepdim=True, dtype=dt, mask=mask) / count
    x = input - sample_mean
    cdt = dt  # complex: the mean of |x - mean|², real, returned in the complex dtype (as PyTorch's masked var)
    if dt.kind == "c":
        x, dt = x.abs(), np.finfo(dt).dtype
    total = sum(x * x, dim, keepdim=keepdim, dtype=dt, mask=mask)
    if not keepdim:
        count = count.reshape(tuple(total.shape))
    if c != 0:
        count = (count.to(dt) - c).clamp(min=0)
    out = (total.to(cdt) / count).to(cdt)  # complex: divided as complex, so 0/0 is nan+nanj as PyTorch's
    return out.sqrt() if take_sqrt else out


def var(input: Tensor, dim=None, unbiased=None, *, correction=None, keepdim: bool = False, dtype=None,
        mask=None) -> Tensor:
    """Variance of the kept elements over ``dim`` with Bessel's ``correction`` (1 by default; ``unbiased``
    is the old spelling); the divisor is ``max(count - correction, 0)``. Integer inputs give float32; complex
    ones the mean of ``|x - mean|²`` in their own dtype (a zero imaginary part, as PyTorch's)."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt=False)


def std(input: Tensor, dim=None, unbiased=None, *, correction=None, keepdim: bool = False, dtype=None,
        mask=None) -> Tensor:
    """``sqrt`` of :func:`var`."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt=True)


def _nan_where_fully_masked(out: Tensor, input: Tensor, mask, d: int) -> Tensor:
    """PyTorch's softmax over a row of -inf is NaN: a row whose elements are all masked out is NaN (this
    package's plain softmax gives 0 there, so it is set here)."""
    if mask is None:
        return out
    kept = _input_mask(input, mask).any(d, keepdim=True)
    return where(kept, out, Tensor._from_op(np.asarray(math.nan, dtype=out.dtype)))


def softmax(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """Softmax along ``dim`` over the kept elements (masked-out ones -inf, so 0; a fully masked row NaN)."""
    dt = _dt(input, dtype)
    d = _canonical_dim(dim, input.ndim)[0]
    return _nan_where_fully_masked(_softmax(_combine("amax", input, mask), d, dtype=dt), input, mask, d)


def log_softmax(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """Log-softmax along ``dim`` over the kept elements (masked-out ones -inf; a fully masked row NaN)."""
    dt = _dt(input, dtype)
    d = _canonical_dim(dim, input.ndim)[0]
    return _nan_where_fully_masked(_log_softmax(_combine("amax", input, mask), d, dtype=dt), input, mask, d)


def softmin(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """``softmax(-input)`` along ``dim`` over the kept elements (masked-out ones +inf, so 0; a fully masked
    row NaN)."""
    dt = _dt(input, dtype)
    d = _canonical_dim(dim, input.ndim)[0]
    return _nan_where_fully_masked(_softmax(-_combine("amin", input, mask), d, dtype=dt), input, mask, d)


def normalize(input: Tensor, ord, dim: int, *, eps: float = 1e-12, dtype=None, mask=None) -> Tensor:
    """``input / max(‖kept‖_ord, eps)`` along ``dim``; masked-out elements become 0."""
    dt = _dt(input, dtype)
    nrm = norm(input, ord, dim, keepdim=True, dtype=None if dt.kind == "c" else dt, mask=mask)  # complex: |.|'s
    return _combine("sum", input, mask) / nrm.clamp(min=eps)

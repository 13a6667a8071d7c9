"""Vector and matrix norms: ``linalg_vector_norm``, ``linalg_matrix_norm``, ``norm`` (``torch.linalg.*``, ``torch.norm``).

``vector_norm`` is one Function: its forward scales by the largest magnitude (the smallest for
negative orders) so that ``Σ |x|^p`` neither overflows nor underflows, and float16 accumulates in
float32; its backward follows PyTorch's ``norm_backward``, with the gradient 0 where the norm is 0.
Matrix norms are compositions: 1/inf norms are a max of vector 1-norms, 2/-2/'nuc' use singular
values (``linalg_decomp.SVDVals``).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import backend
from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import IndexOutOfRangeError
from ..tensor import Tensor
from ._util import normalize_dims
from .autocast_policies import autocast
from .conversion import cast
from .linalg_decomp import SVDVals
from .selection import where
from .scan import DtypeError, OptionError, axis_alias
from .shape import broadcast_to, permute, reshape, unsqueeze

__all__ = ["norm"]


def _keep_shape(shape, axes) -> tuple:
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


class VectorNorm(Function):
    """``(Σ |x|^p)^(1/p)`` over ``axes``; ``p = 0``: the count of non-zeros; ``±inf``: max/min ``|x|``.

    Backward (PyTorch's ``norm_backward``), with ``y`` the norm and ``s = sign(x)``:
    ``p = 2``: ``dx = x·dy/y``; ``p = 1``: ``s·dy``; ``±inf``: ``s·dy`` shared evenly by the entries
    with ``|x| = y``; other ``p``: ``s·(|x|/y)^(p-1)·dy``; ``p = 0``: 0. Wherever ``y = 0``
    (or ``x = 0`` for the last form) the gradient is 0.
    """

    @staticmethod
    def forward(ctx, x, ord, axes, keepdim):
        xp = get_array_module(x)
        acc = np.float32 if x.dtype == np.float16 else x.dtype  # float16 squares would overflow
        a = xp.abs(x).astype(acc)  # (*x.shape)
        keep = _keep_shape(x.shape, axes)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            if a.size == 0 or any(x.shape[i] == 0 for i in axes):
                y = xp.zeros(keep, dtype=acc)  # the empty sum (negative and inf orders are refused before)
            elif ord == math.inf:
                y = a.max(axis=axes, keepdims=True)
            elif ord == -math.inf:
                y = a.min(axis=axes, keepdims=True)
            elif ord == 0:
                y = (a != 0).sum(axis=axes, keepdims=True).astype(acc)
            elif ord == 1:
                y = a.sum(axis=axes, keepdims=True)
            else:  # scale by the largest (p > 0) or smallest (p < 0) |x|: each (|x|/m)^p lies in [0, 1]
                m = (a.max if ord > 0 else a.min)(axis=axes, keepdims=True)  # (..., 1, ...)
                m = xp.where((m == 0) | xp.isinf(m), 1, m).astype(acc)
                r = a / m
                total = (r * r).sum(axis=axes, keepdims=True) if ord == 2 else (r ** ord).sum(axis=axes, keepdims=True)
                y = m * (xp.sqrt(total) if ord == 2 else total ** (1.0 / ord))
        y = y.astype(x.dtype)
        if not keepdim:
            y = y.reshape(tuple(s for i, s in enumerate(x.shape) if i not in axes))
        ctx.ord, ctx.axes = ord, axes
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, y = ctx.saved_tensors
        p, keep = ctx.ord, _keep_shape(x.shape, ctx.axes)
        xp = get_array_module(x.array)
        dy, y = reshape(dy, keep), reshape(y, keep)  # (..., 1, ...)
        if p == 0:
            return broadcast_to(dy * 0, x.shape), None, None, None
        sign = Tensor._from_op(xp.sign(x.array))  # (*x.shape), a constant: its derivative is 0
        if p == 1:
            return sign * dy, None, None, None
        if p in (math.inf, -math.inf):
            hit = (xp.abs(x.array) == y.array) | xp.isnan(x.array)  # (*x.shape): the entries at the max/min
            share = hit.astype(x.dtype) / xp.maximum(hit.sum(axis=ctx.axes, keepdims=True), 1)
            return sign * Tensor._from_op(share) * dy, None, None, None
        zero_y = y == 0
        y_safe = where(zero_y, 1.0, y)
        if p == 2:
            return x * where(zero_y, 0.0, dy / y_safe), None, None, None
        nonzero = x != 0
        ratio = where(nonzero, x.abs(), 1.0) / y_safe  # (*x.shape), 1 where x = 0 so no 0^(p-1) = inf
        return where(nonzero, sign * ratio ** (p - 1) * dy, 0.0), None, None, None


def _float_input(x, dtype, op, complex_abs=False):
    """``x`` as a float tensor; with ``complex_abs`` a complex one becomes ``|x|`` (a vector norm of ``z`` is
    that of ``|z|``, as PyTorch's; its gradient ``dy·z/|z|`` comes from ``abs``)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor as input, got {type(x).__name__}")
    if complex_abs and x.dtype.kind == "c":
        x = x.abs()
    if dtype is not None:
        dtype = backend.as_dtype(dtype)
        if not backend.is_floating(dtype):
            raise DtypeError(f"{op}: dtype should be a floating point dtype, got {dtype}")
        x = cast(x, dtype)
    if not backend.is_floating(x.dtype):
        raise DtypeError(f"{op}: Expected a floating point tensor as input, got {x.dtype}")
    return x


@autocast("linalg_vector_norm")
@axis_alias
def linalg_vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The vector ``ord``-norm of ``x`` over ``dim`` (an int, a tuple, or None for all), ``torch.linalg.vector_norm``.

    ``ord``: any real number or ``±inf``; 0 counts non-zeros. ``dtype`` casts the input first.
    The result has ``x``'s float dtype; float16 accumulates in float32. Large and tiny magnitudes
    are scaled by the largest |x| first, so ``[1e200, 1e200]`` gives ``1.41e200`` where PyTorch
    overflows to inf (the math decides). The gradient is 0 at the zero vector (as PyTorch).

    Raises:
        TypeError (also a RuntimeError): integer input or a non-float ``dtype``; ``ord`` not a number.
        RuntimeError: a negative or infinite ``ord`` over an empty dimension.
        IndexError: ``dim`` out of range. ValueError: a dim named twice.
    """
    x = _float_input(x, dtype, "linalg.vector_norm", complex_abs=True)
    if not isinstance(ord, numbers.Real) or isinstance(ord, bool):
        raise TypeError(f"linalg.vector_norm: ord must be a number (int, float, inf), got {ord!r}")
    axes = normalize_dims(dim, x.ndim, "linalg.vector_norm", empty_is_all=True)
    if (ord < 0 or ord == math.inf) and any(x.shape[i] == 0 for i in axes):
        raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on an empty tensor because the "
                           f"operation does not have an identity (shape {tuple(x.shape)})")
    return VectorNorm.apply(x, float(ord), axes, keepdim)


_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


@autocast("linalg_matrix_norm")
def linalg_matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None) -> Tensor:
    """The matrix norm of ``A`` over the two dims ``dim`` (``torch.linalg.matrix_norm``); ``A`` is ``(*, m, n)``.

    ``'fro'``: ``sqrt(Σ a²)``; ``'nuc'``: the sum of singular values; ``2``/``-2``: the largest/
    smallest singular value; ``1``/``-1``: the max/min column sum of ``|a|``; ``inf``/``-inf``: the
    max/min row sum. The SVD-based orders ('nuc', ±2) differentiate through ``linalg.svdvals``
    (``linalg_decomp.SVDVals``), whose backward recomputes the SVD in Tensor ops, so second
    derivatives are right too. Complex ``A`` gives a real norm (of ``|a|``, or of the singular values).

    Raises:
        RuntimeError: ``A`` with fewer than 2 dims, ``dim`` not two distinct dims. ValueError (also a
            RuntimeError): an unsupported ``ord``. TypeError (also a RuntimeError): integer input.
        IndexError: ``dim`` out of range.
    """
    # complex A: every order is a norm of |a| or of the singular values (real), as PyTorch's
    complex_ok = isinstance(A, Tensor) and A.dtype.kind == "c" and dtype is None
    A = A if complex_ok else _float_input(A, dtype, "linalg.matrix_norm")
    if A.ndim < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions, got shape "
                           f"{tuple(A.shape)}")
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple of ints, got {dim!r}")
    d0, d1 = (normalize_dims(d, A.ndim, "linalg.matrix_norm")[0] for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different, got {tuple(dim)}")
    if isinstance(ord, bool) or ord not in _MATRIX_ORDS or (isinstance(ord, str) and ord not in ("fro", "nuc")):
        raise OptionError(f"linalg.matrix_norm: Order {ord!r} not supported (expected one of 'fro', 'nuc', 1, -1, "
                          "2, -2, inf, -inf)")
    if ord == "fro":
        return linalg_vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        rest = [d for d in range(A.ndim) if d not in (d0, d1)]
        s = SVDVals.apply(permute(A, (*rest, d0, d1)))  # (*rest, k), twice differentiable
        out = s.sum(-1) if ord == "nuc" else _max_min(s, -1, False, ord)  # (*rest)
        if keepdim:
            for d in sorted((d0, d1)):
                out = unsqueeze(out, d)
        return out
    if abs(ord) == math.inf:  # the inf norm is the 1 norm of the transpose
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1  # the first reduction removed a dim before d1
    col = linalg_vector_norm(A, 1, d0, keepdim)
    return _max_min(col, d1, keepdim, ord)


def _max_min(t: Tensor, d: int, keepdim: bool, ord) -> Tensor:
    """The max (``ord > 0``) or min (``ord < 0``) of the non-negative column sums or singular values ``t``
    over dim ``d``. Over an empty dim (a matrix with no rows or no columns) the max is 0, as PyTorch's: the
    norm of an empty matrix is that of the zero map. Like PyTorch's it does not require grad: the matrix has
    no elements, so there is no gradient to lose. The min of an empty set has no value, and PyTorch raises
    IndexError, as here."""
    if t.shape[d] == 0:
        if ord > 0:
            return t.sum(d, keepdim=keepdim).detach()  # 0, (*rest)
        raise IndexOutOfRangeError(f"linalg.matrix_norm: amin(): Expected reduction dim {d} to have non-zero size "
                                   f"(ord={ord} is a minimum over an empty dim of the matrix; shape {tuple(t.shape)})")
    return t.amax(d, keepdim) if ord > 0 else t.amin(d, keepdim)


@autocast("norm")
def norm(input: Tensor, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """``torch.norm``: a number ``p`` is :func:`linalg_vector_norm` over ``dim`` (all for None; None means 2);
    ``'fro'`` over at most two dims is the vector 2-norm; ``'nuc'`` is :func:`linalg_matrix_norm` over
    ``dim`` (all dims for None, so ``input`` must then be 2-D). Errors as those functions raise.
    """
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, numbers.Integral) or len(dim) <= 2):
            return linalg_vector_norm(input, 2, dim, keepdim, dtype=dtype)
        dims = tuple(range(input.ndim)) if dim is None else dim
        return linalg_matrix_norm(input, p, dims, keepdim, dtype=dtype)
    return linalg_vector_norm(input, 2.0 if p is None else p, dim, keepdim, dtype=dtype)


vector_norm = linalg_vector_norm  # the names torch.linalg uses, for mt.linalg
matrix_norm = linalg_matrix_norm

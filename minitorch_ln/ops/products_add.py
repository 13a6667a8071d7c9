"""The fused multiply-adds and small contractions of ``torch.*``: ``addmv``, ``addbmm``, ``addr``, ``addcmul``,
``addcdiv`` (and their in-place ``*_`` methods), ``inner``, ``trace`` and ``dist``.

Each is composed of ops that already have gradients (``@``, broadcast products, sums, ``diagonal``,
``linalg.vector_norm``), after PyTorch's argument checks, so its gradient is the composition's and is
differentiable again. The formulas are PyTorch's documentation's (``torch.addmv``: ``β·input + α·(mat @ vec)``,
``torch.addcmul``: ``input + value·t1·t2``, ...); ``β = 0`` ignores ``input`` (no NaN from it), as there.
"""

from __future__ import annotations

import numbers

from .. import backend
from ..errors import DtypeError, ShapeError
from ..tensor import Tensor
from ._util import promote
from .conversion import cast
from .linalg_norms import linalg_vector_norm
from .products import (
    _dims,
    _need_tensors,
    _same_dtype,
    _scaled_sum,
    bmm,
    mv,
    outer,
    tensordot,
)
from .view_ops import diagonal

__all__ = ["addbmm", "addcdiv", "addcmul", "addmv", "addr", "dist", "inner", "trace"]


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``β·input + α·(mat @ vec)``: ``mat`` ``(n, m)``, ``vec`` ``(m,)``, ``input`` broadcasting to ``(n,)``.

    One dtype for all three (as PyTorch). Raises ShapeError (a RuntimeError) for shapes that do not fit
    (naming all three), DtypeError for mixed dtypes, TypeError for a non-Tensor or a non-number β/α.
    """
    _need_tensors("addmv", input=input, mat=mat, vec=vec)
    if mat.ndim != 2 or vec.ndim != 1 or mat.shape[1] != vec.shape[0]:
        raise ShapeError(f"addmv(): size mismatch, got input ({_dims(input)}), mat ({_dims(mat)}), vec ({_dims(vec)})")
    _same_dtype("addmv", input, mat, "input, mat and vec")
    return _scaled_sum("addmv", input, mv(mat, vec), beta, alpha)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``β·input + α·Σ_b batch1[b] @ batch2[b]``: ``(B, n, k)`` and ``(B, k, m)``; ``input`` broadcasts to ``(n, m)``.

    Raises as :func:`bmm` (3-D operands, equal batches and inner sizes, one dtype) and ShapeError for an
    ``input`` that does not broadcast to ``(n, m)``.
    """
    _need_tensors("addbmm", input=input, batch1=batch1, batch2=batch2)
    _same_dtype("addbmm", input, batch1, "input and batch1")
    return _scaled_sum("addbmm", input, bmm(batch1, batch2).sum(0), beta, alpha)  # (n, m)


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``β·input + α·outer(vec1, vec2)``: ``(n,)``, ``(m,)``; ``input`` broadcasts to ``(n, m)``; dtypes promote.

    Raises ShapeError for vectors that are not 1-D or an ``input`` that does not broadcast to ``(n, m)``.
    """
    _need_tensors("addr", input=input, vec1=vec1, vec2=vec2)
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise ShapeError(f"addr(): {name} must be a vector (1-D), got shape {tuple(v.shape)}")
    prod = outer(vec1, vec2)  # (n, m)
    dt = promote(input, prod, "addr")[0].dtype
    return _scaled_sum("addr", cast(input, dt), cast(prod, dt), beta, alpha)


def _pointwise_args(op, input, tensor1, tensor2, value):
    _need_tensors(op, input=input, tensor1=tensor1, tensor2=tensor2)
    if not isinstance(value, numbers.Number) or isinstance(value, complex):
        raise TypeError(f"{op}(): value must be a real number, got {type(value).__name__}")
    first, _ = promote(input, tensor1, op)
    dt = promote(first, tensor2, op)[0].dtype
    if dt.kind in "biu" and not float(value).is_integer():
        # PyTorch truncates the value to the integer dtype (0.5 -> 0); refused here rather than silently dropped
        raise DtypeError(f"{op}(): value={value} cannot be applied to {dt} tensors exactly; cast them to a float dtype")
    return dt


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """``input + value · tensor1 · tensor2``, broadcasting all three; dtypes promote (PyTorch's rule).

    Raises ShapeError for shapes that do not broadcast, TypeError for a non-Tensor or a non-number
    ``value``, DtypeError for a fractional ``value`` with integer tensors (PyTorch truncates it).
    """
    dt = _pointwise_args("addcmul", input, tensor1, tensor2, value)
    prod = cast(tensor1, dt) * cast(tensor2, dt)
    return cast(input, dt) + (prod if value == 1 else prod * value)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """``input + value · tensor1 / tensor2``, broadcasting all three; floating dtypes promote.

    Raises RuntimeError for integer ``tensor1`` and ``tensor2`` (PyTorch's "Integer division with addcdiv
    is no longer supported"), and as :func:`addcmul` otherwise.
    """
    _need_tensors("addcdiv", input=input, tensor1=tensor1, tensor2=tensor2)
    if tensor1.dtype.kind in "biu" and tensor2.dtype.kind in "biu":
        raise RuntimeError("addcdiv(): Integer division with addcdiv is no longer supported; use "
                           "(input + value * tensor1 / tensor2) for a true division")
    dt = _pointwise_args("addcdiv", input, tensor1, tensor2, value)
    quot = cast(tensor1, dt) / cast(tensor2, dt)
    return cast(input, dt) + (quot if value == 1 else quot * value)


def _addcmul_(self: Tensor, tensor1, tensor2, *, value=1) -> Tensor:
    """``Tensor.addcmul_``: :func:`addcmul` written into ``self`` (in place, version bumped)."""
    return self._inplace("addcmul_", lambda s: addcmul(s, tensor1, tensor2, value=value), tensor1, tensor2)


def _addcdiv_(self: Tensor, tensor1, tensor2, *, value=1) -> Tensor:
    """``Tensor.addcdiv_``: :func:`addcdiv` written into ``self`` (in place, version bumped)."""
    return self._inplace("addcdiv_", lambda s: addcdiv(s, tensor1, tensor2, value=value), tensor1, tensor2)


def inner(input: Tensor, other: Tensor) -> Tensor:
    """Inner product over the last dims: ``(*a, k)``, ``(*b, k)`` → ``(*a, *b)``; a 0-d operand multiplies.

    One dtype (as PyTorch). Raises ShapeError when the last sizes differ, DtypeError for mixed dtypes.
    """
    _need_tensors("inner", input=input, other=other)
    _same_dtype("inner", input, other)
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise ShapeError(f"inner(): the last dims of both inputs must be equal, got shapes {tuple(input.shape)} "
                         f"and {tuple(other.shape)}")
    return tensordot(input, other, dims=([-1], [-1]))


def trace(input: Tensor) -> Tensor:
    """Sum of the main diagonal of a 2-D ``(n, m)`` tensor → 0-d; integer and bool inputs give int64 (PyTorch's),
    floating and complex ones their own dtype.

    Raises ShapeError (a RuntimeError) unless ``input`` is 2-D.
    """
    _need_tensors("trace", input=input)
    if input.ndim != 2:
        raise ShapeError(f"trace(): expected a matrix (2-D), but got a tensor with shape {tuple(input.shape)}")
    d = diagonal(input)  # (min(n, m),)
    return d.sum() if backend.is_floating(input.dtype) or input.dtype.kind == "c" else cast(d, "int64").sum()


def dist(input: Tensor, other: Tensor, p=2) -> Tensor:
    """``‖input - other‖_p`` over all elements (broadcasting) → 0-d; ``p`` may be 0, ±inf or any real.

    Raises DtypeError for non-floating inputs (PyTorch's "norm(): input dtype should be floating point"),
    ShapeError for shapes that do not broadcast, TypeError for a non-number ``p``.
    """
    _need_tensors("dist", input=input, other=other)
    for t in (input, other):
        if not (backend.is_floating(t.dtype) or t.dtype.kind == "c"):  # complex: the norm of |a - b|, real
            raise DtypeError(f"dist(): expected floating point or complex tensors, got {t.dtype}")
    if not isinstance(p, numbers.Real):
        raise TypeError(f"dist(): p must be a real number, got {type(p).__name__}")
    return linalg_vector_norm(input - other, ord=p)

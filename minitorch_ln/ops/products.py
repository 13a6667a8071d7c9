"""The named products: ``mm``, ``bmm``, ``mv``, ``dot``, ``vdot``, ``outer``, ``addmm``, ``baddbmm``,
``tensordot``, ``kron``, ``cross`` (and ``linalg_cross``).

Each is ``@``, ``einsum`` or a broadcast product after PyTorch's strict checks (``mm`` takes only
matrices, ``dot`` only vectors, ``bmm`` only equal batches: no broadcasting), so the gradients are
those of the product they reduce to. ``cross`` is one node: ``c = a × b`` has
``da = b × dc`` and ``db = dc × a`` (from ``<dc, a × b> = <a, b × dc> = <b, dc × a>``).
"""

from __future__ import annotations

import numbers

from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import DtypeError, ShapeError, warn_at_caller
from ..tensor import Tensor
from ._util import broadcast_shape, normalize_dim
from .autocast_policies import autocast
from .complex_parts import cj, conj
from .einsum import _LETTERS, einsum
from .selection import where
from .shape import reshape

__all__ = ["addmm", "baddbmm", "bmm", "cross", "dot", "kron", "mm", "mv", "outer", "tensordot", "vdot"]


def _need_tensors(op, **named):
    for name, t in named.items():
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): argument '{name}' must be a Tensor, got {type(t).__name__}")


def _same_dtype(op, a, b, what="both arguments"):
    if a.dtype != b.dtype:
        raise DtypeError(f"{op}(): expected {what} to have the same dtype, but got {a.dtype} and {b.dtype}")


def _dims(x) -> str:
    return "x".join(str(n) for n in x.shape) if x.ndim else "()"


@autocast("mm")
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Matrix product of ``(n, k)`` and ``(k, m)`` → ``(n, m)``; no broadcasting, one dtype.

    Raises:
        ShapeError (RuntimeError): an operand that is not 2-D, or inner sizes that differ (names both shapes).
        DtypeError (RuntimeError): different dtypes (PyTorch does not promote here).
    """
    _need_tensors("mm", input=input, mat2=mat2)
    if input.ndim != 2 or mat2.ndim != 2:
        raise ShapeError(f"mm(): expected two matrices (2-D), got shapes {tuple(input.shape)} and {tuple(mat2.shape)}")
    if input.shape[1] != mat2.shape[0]:
        raise ShapeError(f"mm(): mat1 and mat2 shapes cannot be multiplied ({_dims(input)} and {_dims(mat2)})")
    _same_dtype("mm", input, mat2)
    return input @ mat2


@autocast("bmm")
def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched matrix product ``(B, n, k) @ (B, k, m)`` → ``(B, n, m)``; no broadcasting, one dtype.

    Raises:
        ShapeError: an operand that is not 3-D, batch sizes or inner sizes that differ.  DtypeError: dtypes differ.
    """
    _need_tensors("bmm", input=input, mat2=mat2)
    if input.ndim != 3 or mat2.ndim != 3:
        raise ShapeError(f"bmm(): expected two 3-D tensors, got shapes {tuple(input.shape)} and {tuple(mat2.shape)}")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise ShapeError(f"bmm(): expected mat2 of shape ({input.shape[0]}, {input.shape[2]}, *) for input of shape "
                         f"{tuple(input.shape)}, got {tuple(mat2.shape)}")
    _same_dtype("bmm", input, mat2)
    return input @ mat2


@autocast("mv")
def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix-vector product ``(n, m) @ (m,)`` → ``(n,)``.

    Raises:
        ShapeError: ``input`` not 2-D, ``vec`` not 1-D, or sizes that differ.  DtypeError: dtypes differ.
    """
    _need_tensors("mv", input=input, vec=vec)
    if input.ndim != 2 or vec.ndim != 1:
        raise ShapeError(f"mv(): expected a matrix and a vector, got shapes {tuple(input.shape)} and {tuple(vec.shape)}")
    if input.shape[1] != vec.shape[0]:
        raise ShapeError(f"mv(): size mismatch, got mat ({_dims(input)}) and vec ({vec.shape[0]})")
    _same_dtype("mv", input, vec)
    return input @ vec


@autocast("dot")
def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """Inner product of two 1-D tensors of one size → a 0-d tensor (0 for empty vectors).

    Raises:
        ShapeError: an operand that is not 1-D, or sizes that differ.  DtypeError: dtypes differ.
    """
    _need_tensors("dot", input=input, tensor=tensor)
    if input.ndim != 1 or tensor.ndim != 1:
        raise ShapeError(f"dot(): 1D tensors expected, but got shapes {tuple(input.shape)} and {tuple(tensor.shape)}")
    if input.shape != tensor.shape:
        raise ShapeError(f"dot(): inconsistent tensor size, expected shapes {tuple(input.shape)} and "
                         f"{tuple(tensor.shape)} to have the same number of elements")
    _same_dtype("dot", input, tensor)
    return input @ tensor


@autocast("vdot")
def vdot(input: Tensor, other: Tensor) -> Tensor:
    """``Σ conj(input) · other`` for 1-D tensors (for real ones :func:`dot`)."""
    return dot(conj(input) if isinstance(input, Tensor) else input, other)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """Outer product ``(n,)``, ``(m,)`` → ``(n, m)``; dtypes promote (as PyTorch). Raises ShapeError unless both are 1-D."""
    _need_tensors("outer", input=input, vec2=vec2)
    for name, t in (("input", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise ShapeError(f"outer(): expected 1-D argument {name}, but got shape {tuple(t.shape)}")
    return input.unsqueeze(1) * vec2  # (n, m)


def _scaled_sum(op, input, prod, beta, alpha):
    """``beta * input + alpha * prod`` with PyTorch's rule that ``beta=0`` ignores ``input`` (no nan from it)."""
    for name, v in (("beta", beta), ("alpha", alpha)):
        if not isinstance(v, numbers.Number):
            raise TypeError(f"{op}(): {name} must be a number, got {type(v).__name__}")
    try:
        fits = broadcast_shape(tuple(input.shape), tuple(prod.shape), op) == tuple(prod.shape)
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(f"{op}(): input of shape {tuple(input.shape)} does not broadcast to the product's shape "
                         f"{tuple(prod.shape)}") from None
    out = prod if alpha == 1 else prod * alpha
    if beta == 0:  # input is ignored: its gradient is zero and its nan/inf do not propagate
        input = where(Tensor._from_op(get_array_module(input.array).asarray(True)), 0.0, input)
        return out + input
    return out + (input if beta == 1 else input * beta)


@autocast("addmm")
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``; ``input`` broadcasts to ``(n, m)``; ``beta=0`` ignores it.

    Raises as :func:`mm`, and ShapeError when ``input`` does not broadcast to ``(n, m)``.
    """
    _need_tensors("addmm", input=input)
    _same_dtype("addmm", input, mat1, "input and mat1")
    return _scaled_sum("addmm", input, mm(mat1, mat2), beta, alpha)


@autocast("baddbmm")
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)``; ``input`` broadcasts to ``(B, n, m)``. Raises as :func:`bmm`."""
    _need_tensors("baddbmm", input=input)
    _same_dtype("baddbmm", input, batch1, "input and batch1")
    return _scaled_sum("baddbmm", input, bmm(batch1, batch2), beta, alpha)


@autocast("tensordot")
def tensordot(a: Tensor, b: Tensor, dims=2) -> Tensor:
    """Contract ``a``'s dims ``dims[0]`` with ``b``'s ``dims[1]`` (or ``a``'s last ``dims`` with ``b``'s first).

    The result has ``a``'s free dims then ``b``'s, in order. One dtype (as PyTorch). A contracted dim of size 1
    broadcasts against the other side's size (PyTorch's ``tensordot``: the other operand is summed over it).

    Raises:
        RuntimeError: negative ``dims``, more dims than an operand has, or contracted sizes that differ and
            neither is 1.
        IndexError: a dim out of range.  DtypeError: dtypes differ.
    """
    _need_tensors("tensordot", a=a, b=b)
    _same_dtype("tensordot", a, b)
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, numbers.Integral):
        if dims < 0:
            raise RuntimeError(f"tensordot(): expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot(): dims={dims} is more than the dims of shapes {tuple(a.shape)} and {tuple(b.shape)}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    elif isinstance(dims, (list, tuple)) and len(dims) == 2:
        da, db = ([d] if isinstance(d, numbers.Integral) else list(d) for d in dims)
        if len(da) != len(db):
            raise RuntimeError(f"tensordot(): both dim lists should have the same length, got {da} and {db}")
        da = [normalize_dim(d, a.ndim, "tensordot") for d in da]
        db = [normalize_dim(d, b.ndim, "tensordot") for d in db]
    else:
        raise TypeError(f"tensordot(): dims must be an int or a pair of lists of ints, got {dims!r}")
    shape_a, shape_b = tuple(a.shape), tuple(b.shape)
    for i, j in zip(da, db):
        # a contracted dim of size 1 broadcasts against the other's, as PyTorch's (and einsum's) broadcasting:
        # sum_k a[.., k, ..] b[.., 0, ..] = (sum_k a[.., k, ..]) b[.., 0, ..], so the other side is summed first
        if b.shape[j] == 1 and a.shape[i] != 1:
            a = a.sum(i, keepdim=True)
        elif a.shape[i] == 1 and b.shape[j] != 1:
            b = b.sum(j, keepdim=True)
        elif a.shape[i] != b.shape[j]:
            raise RuntimeError(f"tensordot(): contracted dimensions need to match, but a of shape {shape_a} has "
                               f"size {a.shape[i]} in dim {i} and b of shape {shape_b} has size {b.shape[j]} in dim {j} "
                               "(a size-1 dim would broadcast)")
    if a.ndim + b.ndim - len(da) > 52:
        raise RuntimeError("tensordot(): more than 52 dimensions in all")
    sa = _LETTERS[:a.ndim]
    free = iter(_LETTERS[a.ndim:])
    sb = "".join(sa[da[db.index(j)]] if j in db else next(free) for j in range(b.ndim))
    out = "".join(c for i, c in enumerate(sa) if i not in da) + "".join(c for j, c in enumerate(sb) if j not in db)
    return einsum(f"{sa},{sb}->{out}", a, b)


def kron(input: Tensor, other: Tensor) -> Tensor:
    """Kronecker product: for ``(a0, a1, ...)`` and ``(b0, b1, ...)`` (the shorter padded with leading
    1s), ``out[i0*b0 + j0, ...] = input[i0, ...] * other[j0, ...]``, shape ``(a0*b0, a1*b1, ...)``."""
    _need_tensors("kron", input=input, other=other)
    nd = max(input.ndim, other.ndim)
    sa = (1,) * (nd - input.ndim) + tuple(input.shape)
    sb = (1,) * (nd - other.ndim) + tuple(other.shape)
    a = reshape(input, tuple(n for s in sa for n in (s, 1)))  # (a0, 1, a1, 1, ...)
    b = reshape(other, tuple(n for s in sb for n in (1, s)))  # (1, b0, 1, b1, ...)
    return reshape(a * b, tuple(x * y for x, y in zip(sa, sb)))  # (a0*b0, a1*b1, ...)


class Cross(Function):
    """``a × b`` along ``dim`` for operands of one (broadcast) shape.

    Bilinear and holomorphic in each operand, so for complex operands the backward is the real one with
    the saved operand conjugated (docs/complex.md): ``da = conj(b) × dc``, ``db = dc × conj(a)``."""

    supports_complex = True

    @staticmethod
    def forward(ctx, a, b, dim):
        ctx.dim = dim
        ctx.save_for_backward(a, b)
        return get_array_module(a).cross(a, b, axis=dim)

    @staticmethod
    def backward(ctx, dc):
        a, b = ctx.saved_tensors
        da = Cross.apply(cj(b), dc, ctx.dim) if ctx.needs_input_grad[0] else None  # conj(b) × dc
        db = Cross.apply(dc, cj(a), ctx.dim) if ctx.needs_input_grad[1] else None  # dc × conj(a)
        return da, db, None


def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """``torch.linalg.cross``: cross product of 3-vectors along ``dim`` (default -1); batch dims broadcast.

    Raises:
        ShapeError: shapes that do not broadcast, or ``dim`` not of size 3.  DtypeError: dtypes differ.
        IndexError: ``dim`` out of range.
    """
    _need_tensors("linalg.cross", input=input, other=other)
    _same_dtype("linalg.cross", input, other)
    if input.ndim != other.ndim:
        raise ShapeError(f"linalg.cross(): inputs must have the same number of dimensions, got shapes "
                         f"{tuple(input.shape)} and {tuple(other.shape)}")
    shape = broadcast_shape(tuple(input.shape), tuple(other.shape), "linalg.cross")
    d = normalize_dim(dim, len(shape), "linalg.cross")
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise ShapeError(f"linalg.cross(): inputs dimension {dim} must have length 3, got shapes "
                         f"{tuple(input.shape)} and {tuple(other.shape)}")
    a = input if tuple(input.shape) == shape else input.expand(*shape)
    b = other if tuple(other.shape) == shape else other.expand(*shape)
    return Cross.apply(a, b, d)


@autocast("cross")
def cross(input: Tensor, other: Tensor, dim=None) -> Tensor:
    """``torch.cross``: as :func:`linalg_cross`, but ``dim=None`` takes the first dim of size 3 (with
    PyTorch's deprecation warning). Raises ShapeError when there is none."""
    if dim is None:
        _need_tensors("cross", input=input, other=other)
        warn_at_caller("Using torch.cross without specifying the dim arg is deprecated. Please either pass the dim "
                       "explicitly or simply use linalg.cross.")
        shape = broadcast_shape(tuple(input.shape), tuple(other.shape), "cross")
        if 3 not in shape:
            raise ShapeError(f"cross(): no dimension of size 3 in input (shapes {tuple(input.shape)} and "
                             f"{tuple(other.shape)})")
        dim = shape.index(3)
    return linalg_cross(input, other, dim=dim)

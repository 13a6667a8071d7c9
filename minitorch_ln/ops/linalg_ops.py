"""``torch.linalg``'s inverse and solver, ``inv`` and ``solve``, and the checks and error shared with
``linalg_decomp.py`` (``det``, ``slogdet`` and the factorizations).

Forwards are ``xp.linalg`` (NumPy/CuPy LAPACK), batched over leading dims. Backwards (from PyTorch's
``FunctionsManual.cpp`` and Giles, "An extended collection of matrix derivative results", 2008), each in
Tensor ops so it is differentiable again; ``ᴴ`` is the conjugate transpose (``ᵀ`` for real matrices):

- ``Y = A⁻¹``:        ``dA = -Yᴴ dY Yᴴ``
- ``X = A⁻¹ B``:      ``dB = A⁻ᴴ dX`` (one more solve), ``dA = -dB Xᴴ``

Complex matrices: both maps are holomorphic, so PyTorch's convention (docs/complex.md) takes the real
formula with the derivative conjugated, which turns every transpose of a saved matrix into ``ᴴ``.

A singular matrix raises :class:`LinAlgError` (a RuntimeError, as ``torch.linalg.LinAlgError``).
CuPy does not report singular matrices (it returns nan/inf), so on a GPU the check is not made.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..backend import get_array_module
from ..errors import DtypeError, ShapeError
from ..tensor import Tensor
from .autocast_policies import autocast


class LinAlgError(RuntimeError):
    """A matrix the factorization cannot handle (singular, not positive-definite); as ``torch.linalg.LinAlgError``."""


def check_matrix(op: str, A, square: bool = True, name: str = "A", complex_ok: bool = False) -> None:
    """PyTorch's checks: a Tensor of float32/float64 (or complex64/complex128 where ``complex_ok``: the ops
    whose backward conjugates, docs/complex.md) with at least 2 dims (square ones where ``square``)."""
    if not isinstance(A, Tensor):
        raise TypeError(f"{op}(): expected {name} to be a Tensor, got {type(A).__name__}")
    if A.ndim < 2:
        raise ShapeError(f"{op}: The input tensor {name} must have at least 2 dimensions, got shape {tuple(A.shape)}")
    if square and A.shape[-1] != A.shape[-2]:
        raise ShapeError(f"{op}: {name} must be batches of square matrices, but they are "
                         f"{A.shape[-2]} by {A.shape[-1]} matrices (shape {tuple(A.shape)})")
    if str(A.dtype) not in ("float32", "float64") + (("complex64", "complex128") if complex_ok else ()):
        kinds = "float32, float64, complex64 or complex128" if complex_ok else "float32 or float64"
        raise DtypeError(f"{op}: Expected a {kinds} tensor as input, got {A.dtype}")


def lapack(op: str, fn, *args, message: str, **kwargs):
    """``fn(*args)``, with NumPy's LinAlgError turned into ours with PyTorch's message."""
    try:
        return fn(*args, **kwargs)
    except np.linalg.LinAlgError:
        raise LinAlgError(f"{op}: {message}") from None


def eye_mask(n: int, like) -> Tensor:
    """A constant ``(n, n)`` bool identity Tensor on ``like``'s device."""
    return Tensor._from_op(get_array_module(like.array).eye(n, dtype=bool))


# ==================================================================================================
# inv
# ==================================================================================================


class Inv(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, a):
        y = lapack("linalg.inv", get_array_module(a).linalg.inv, a,
                   message="The inversion could not be completed because the input matrix is singular.")
        ctx.save_for_backward(y)  # (*, n, n)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        yh = y.mH
        return -(yh @ dy @ yh)  # (*, n, n)


@autocast("inverse")
def inv(A: Tensor) -> Tensor:
    """``A⁻¹`` for ``A`` of shape ``(*, n, n)``, float32/float64/complex64/complex128; same shape and dtype.

    Raises:
        LinAlgError (RuntimeError): a singular matrix.  ShapeError: fewer than 2 dims or not square.
        DtypeError: an integer or float16 tensor (PyTorch has no half-precision ``inv`` on CPU).
    """
    check_matrix("linalg.inv", A, complex_ok=True)
    return Inv.apply(A)


# ==================================================================================================
# solve
# ==================================================================================================


class Solve(Function):
    """``X = A⁻¹ B`` for ``A`` ``(*, n, n)`` and ``B`` ``(*, n, k)`` of the same batch dims (the caller
    expands them, so the expand's backward sums the gradients over broadcast dims)."""

    supports_complex = True

    @staticmethod
    def forward(ctx, a, b):
        xp = get_array_module(a)
        x = lapack("torch.linalg.solve", xp.linalg.solve, a, b,
                   message="The solver failed because the input matrix is singular.")
        ctx.save_for_backward(a, x)
        return x  # (*, n, k)

    @staticmethod
    def backward(ctx, dx):
        a, x = ctx.saved_tensors
        db = Solve.apply(a.mH, dx)  # (*, n, k): A⁻ᴴ dX
        da = -(db @ x.mH) if ctx.needs_input_grad[0] else None  # (*, n, n): -dB Xᴴ
        return da, db if ctx.needs_input_grad[1] else None


def _solve_bcast(a, b, batch):
    a = a if tuple(a.shape[:-2]) == batch else a.expand(*batch, *a.shape[-2:])
    b = b if tuple(b.shape[:-2]) == batch else b.expand(*batch, *b.shape[-2:])
    return Solve.apply(a, b)


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """The solution ``X`` of ``A X = B`` (``left=True``) or ``X A = B`` (``left=False``).

    Shapes: ``A`` ``(*, n, n)``; ``B`` ``(*, n, k)`` (``(*, k, n)`` for ``left=False``) or a batch of
    vectors ``(*, n)`` (PyTorch's rule: ``B`` is 1-D, or ``B.shape == A.shape[:-1]``); batch dims
    broadcast. ``X`` has ``B``'s shape (after broadcasting). Gradients: ``dB = A⁻ᴴ dX``, ``dA = -dB Xᴴ``.
    Real or complex (one dtype for both).

    Raises:
        LinAlgError (RuntimeError): a singular ``A``.  ShapeError: incompatible shapes (naming both).
        DtypeError: ``A`` and ``B`` of different dtypes, or not float32/float64.
    """
    check_matrix("linalg.solve", A, complex_ok=True)
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg.solve(): expected B to be a Tensor, got {type(B).__name__}")
    if A.dtype != B.dtype:
        raise DtypeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type {A.dtype} "
                         f"and B of type {B.dtype} instead")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    B2 = B.unsqueeze(-1) if vector else B
    n = A.shape[-1]
    ok = B2.ndim >= 2 and (B2.shape[-2] == n if left else B2.shape[-1] == n)
    try:
        batch = np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B2.shape[:-2])) if ok else None
    except ValueError:
        ok = False
    if not ok:
        eq = "AX = B" if left else "XA = B"
        raise ShapeError(f"linalg.solve: Incompatible shapes of A and B for the equation {eq} "
                         f"({n}x{n} and {'x'.join(map(str, B2.shape[-2:]))}; shapes {tuple(A.shape)} and {tuple(B.shape)})")
    X = _solve_bcast(A, B2, batch) if left else _solve_bcast(A.mT, B2.mT, batch).mT
    return X.squeeze(-1) if vector else X

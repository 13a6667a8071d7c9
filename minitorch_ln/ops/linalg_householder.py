"""LAPACK's packed factorizations as PyTorch exposes them: ``geqrf`` (Householder QR), ``linalg.householder_product``
and ``ormqr`` (using its reflectors), ``linalg.ldl_factor(_ex)`` and ``linalg.ldl_solve`` (Bunch-Kaufman
``L D Lᵀ``).

``geqrf`` and the LDL functions are LAPACK's ``?geqrf``, ``?sytrf`` and ``?sytrs`` (through
``scipy.linalg.lapack``, one matrix at a time), in LAPACK's own packed formats, and have no gradient (as in
PyTorch). ``householder_product(A, tau)`` is ``Q = H_1 ⋯ H_k`` with ``H_i = I - tau_i v_i v_iᵀ`` and ``v_i`` the
``i``-th column of ``A`` below the diagonal with a 1 on it (LAPACK's ``?orgqr`` definition), built with
matrix products, so it is differentiable in ``A`` and ``tau``; ``ormqr`` multiplies by that ``Q`` (or ``Qᵀ``).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..backend import get_array_module
from ..errors import ShapeError
from ..tensor import Tensor
from .linalg_ops import check_matrix

__all__ = ["geqrf", "ormqr"]

GeqrfResult = namedtuple("geqrf", ["a", "tau"])
LDLFactorResult = namedtuple("LDLFactorResult", ["LD", "pivots"])
LDLFactorExResult = namedtuple("LDLFactorExResult", ["LD", "pivots", "info"])


def _lapack(name: str, dtype):
    from scipy.linalg import lapack  # noqa: PLC0415 - SciPy is a dependency; imported where used

    return getattr(lapack, ("d" if dtype == np.float64 else "s") + name)


def _per_matrix(a: np.ndarray, fn) -> list:
    """``fn`` applied to each matrix of ``a`` ``(*, m, n)``; a list of its results."""
    batch = int(np.prod(a.shape[:-2], dtype=np.int64))
    return [fn(m) for m in a.reshape((batch,) + a.shape[-2:])]


def _host(t: Tensor) -> np.ndarray:
    return np.asarray(t.detach().cpu().array)


def _wrap(arr, like: Tensor) -> Tensor:
    return Tensor._from_op(get_array_module(like.array).asarray(arr))


def geqrf(input: Tensor) -> GeqrfResult:
    """``(a, tau)``: LAPACK's ``geqrf`` QR of ``input`` ``(*, m, n)``: ``R`` on and above the diagonal of ``a``, the
    Householder vectors below it, ``tau`` ``(*, min(m, n))``. No gradient (as PyTorch). Raises as ``linalg.qr``."""
    check_matrix("geqrf", input, square=False, name="input")
    a = _host(input)
    m, n = a.shape[-2:]
    k = min(m, n)
    fn = _lapack("geqrf", a.dtype)
    outs = _per_matrix(a, lambda x: fn(x)[:2] if x.size else (x.copy(), np.zeros(0, x.dtype)))
    qr = np.stack([o[0] for o in outs]).reshape(a.shape) if outs else a.copy()
    tau = np.stack([o[1][:k] for o in outs]).reshape(a.shape[:-2] + (k,)) if outs else np.zeros(a.shape[:-2] + (k,),
                                                                                                  a.dtype)
    return GeqrfResult(_wrap(qr.astype(a.dtype), input), _wrap(tau.astype(a.dtype), input))


def _full_q(A: Tensor, tau: Tensor, op: str) -> Tensor:
    """``H_1 ⋯ H_k`` ``(*, m, m)`` from the reflectors in ``A`` ``(*, m, n)`` and ``tau`` ``(*, k)``."""
    check_matrix(op, A, square=False, name="input")
    if not isinstance(tau, Tensor):
        raise TypeError(f"{op}(): argument 'tau' must be a Tensor, not {type(tau).__name__}")
    m, n = A.shape[-2:]
    k = tau.shape[-1] if tau.ndim else 0
    if tau.ndim != A.ndim - 1 or tau.shape[:-1] != A.shape[:-2] or k > n:
        raise ShapeError(f"{op}(): tau must have shape (*, k) with k <= {n} and the batch of input "
                         f"{tuple(A.shape[:-2])}, got {tuple(tau.shape)}")
    xp = get_array_module(A.array)
    eye = Tensor._from_op(xp.eye(m, dtype=A.dtype))
    V = A.tril(-1) + Tensor._from_op(xp.eye(m, n, dtype=A.dtype))  # (*, m, n): unit lower reflectors
    Q = eye.expand(*A.shape[:-2], m, m) if A.ndim > 2 else eye
    for i in range(k):
        v = V[..., :, i:i + 1]  # (*, m, 1)
        Q = Q - (Q @ v) * tau[..., i:i + 1].unsqueeze(-1) @ v.mT  # Q H_i  # (*, m, m)
    # k = 0 gives the identity: keep it connected to A and tau (an empty sum: zero gradients, no NaN from inf)
    return Q + A[..., :0, :].sum() + tau[..., :0].sum()


def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first ``n`` columns of ``Q = H_1 ⋯ H_k`` ``(*, m, n)``, ``A`` ``(*, m, n)`` with ``m >= n``, ``tau``
    ``(*, k)``, ``k <= n`` (``torch.linalg.householder_product``, LAPACK's ``orgqr``). Differentiable.
    Raises ShapeError for ``m < n`` or a ``tau`` of another shape."""
    check_matrix("linalg.householder_product", A, square=False, name="input")
    if A.shape[-2] < A.shape[-1]:
        raise ShapeError(f"linalg.householder_product: input.shape[-2] must be greater than or equal to "
                         f"input.shape[-1], got shape {tuple(A.shape)}")
    return _full_q(A, tau, "linalg.householder_product")[..., :, :A.shape[-1]]


def ormqr(input: Tensor, tau: Tensor, other: Tensor, left: bool = True, transpose: bool = False) -> Tensor:
    """``Q @ other`` (``other @ Q`` when not ``left``; ``Qᵀ`` when ``transpose``) for the ``(m, m)`` ``Q`` of the
    reflectors in ``input`` ``(*, m, k)`` and ``tau``, as LAPACK's ``ormqr``. Differentiable in all three.
    Raises ShapeError when ``other``'s size does not match ``m``."""
    Q = _full_q(input, tau, "ormqr")
    Q = Q.mT if transpose else Q
    m = input.shape[-2]
    if not isinstance(other, Tensor) or other.ndim < 2 or (other.shape[-2] if left else other.shape[-1]) != m:
        raise ShapeError(f"ormqr(): other must be a matrix with {m} {'rows' if left else 'columns'}, got "
                         f"{tuple(getattr(other, 'shape', ()))}")
    return Q @ other if left else other @ Q


def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False) -> LDLFactorExResult:
    """``(LD, pivots, info)``: LAPACK's ``sytrf`` (lower) of symmetric ``A`` ``(*, n, n)`` (only its lower triangle
    is read): ``L`` and the 1×1/2×2 blocks of ``D`` packed in ``LD``'s lower triangle, ``pivots`` int32 in
    LAPACK's convention, ``info`` int32 (> 0: ``D`` is singular). No gradient (as PyTorch)."""
    check_matrix("linalg.ldl_factor_ex", A)
    a = _host(A)
    fn = _lapack("sytrf", a.dtype)
    n = a.shape[-1]
    outs = _per_matrix(a, lambda x: fn(x, lower=1)[:3] if x.size else (x.copy(), np.zeros(0, np.int32), 0))
    shape = a.shape[:-2]
    ld = np.tril(np.stack([o[0] for o in outs]).reshape(a.shape)) if outs else a.copy()
    piv = np.stack([o[1] for o in outs]).reshape(shape + (n,)) if outs else np.zeros(shape + (n,), np.int32)
    info = np.asarray([o[2] for o in outs], dtype=np.int32).reshape(shape)
    if check_errors and info.any():
        raise RuntimeError(f"linalg.ldl_factor_ex: the factorization could not be completed (info = {int(info.max())})")
    return LDLFactorExResult(_wrap(ld, A), _wrap(piv.astype(np.int32), A), _wrap(info, A))


def ldl_factor(A: Tensor, *, hermitian: bool = False) -> LDLFactorResult:
    """``(LD, pivots)`` of :func:`ldl_factor_ex` (no error for a singular ``D``)."""
    LD, piv, _ = ldl_factor_ex(A, hermitian=hermitian)
    return LDLFactorResult(LD, piv)


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False) -> Tensor:
    """``X`` with ``A X = B`` from :func:`ldl_factor`'s ``(LD, pivots)`` (LAPACK's ``sytrs``); ``B`` ``(*, n, k)``,
    batch dims broadcasting. No gradient. Raises ShapeError for shapes that do not fit."""
    check_matrix("linalg.ldl_solve", LD, name="LD")
    check_matrix("linalg.ldl_solve", B, square=False, name="B")
    if B.shape[-2] != LD.shape[-1]:
        raise ShapeError(f"linalg.ldl_solve: incompatible shapes of LD {tuple(LD.shape)} and B {tuple(B.shape)}")
    ld, piv, b = _host(LD), _host(pivots), _host(B).astype(_host(LD).dtype)
    fn = _lapack("sytrs", ld.dtype)
    n = ld.shape[-1]
    shape = np.broadcast_shapes(ld.shape[:-2], b.shape[:-2])  # batch dims broadcast, as PyTorch
    batch = int(np.prod(shape, dtype=np.int64))
    lds = np.broadcast_to(ld, shape + (n, n)).reshape(batch, n, n)
    pivs = np.broadcast_to(piv, shape + (n,)).reshape(batch, n)
    b = np.broadcast_to(b, shape + b.shape[-2:])
    bs = b.reshape((batch,) + b.shape[-2:])
    xs = [fn(lds[i], pivs[i], bs[i], lower=1)[0] if bs[i].size else bs[i].copy() for i in range(batch)]
    return _wrap(np.stack(xs).reshape(b.shape) if xs else b.copy(), LD)

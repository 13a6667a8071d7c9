"""``pca_lowrank`` (and the ``svd_lowrank`` it runs, not exported: see ``__all__``): the rank-``q`` truncated SVD
(of ``A - M``, or of the column-centered ``A``), and ``hash_tensor``, the xor of the elements' 64-bit patterns.

PyTorch computes the low-rank factors by randomized subspace iteration (Halko, Martinsson & Tropp 2011,
Algorithm 5.1), an approximation of the truncated SVD whose error shrinks with ``niter``; here they are the
truncated SVD itself (``linalg.svd`` of the whole matrix, first ``q`` triplets), the best rank-``q``
approximation (Eckart-Young) that PyTorch's iterate approaches, and exactly PyTorch's result (up to each
column's sign) when ``rank(A) <= q``. ``niter`` is accepted and unused. The gradients are ``linalg.svd``'s.
"""

from __future__ import annotations

import numbers
from collections import namedtuple

import numpy as np

from ..backend import get_array_module
from ..errors import DtypeError
from ..tensor import Tensor
from . import linalg_decomp
from ._util import normalize_dims
from .linalg_ops import check_matrix

# svd_lowrank is not a torch.* name here: PyTorch's is a randomized approximation whose values differ from the exact
# truncated SVD (and from run to run) when rank(A) > q, so it is kept internal, under pca_lowrank
__all__ = ["hash_tensor", "pca_lowrank"]

LowRankResult = namedtuple("LowRankResult", ["U", "S", "V"])


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int = 2, M: Tensor | None = None) -> LowRankResult:
    """``(U, S, V)`` with ``A - M ≈ U diag(S) Vᴴ`` (``Vᵀ`` for real ``A``): ``(*, m, q)``, ``(*, q)``, ``(*, n, q)`` (``q`` defaults to 6 and
    must be at most ``min(m, n)``). Raises ValueError for a ``q`` out of range, and as ``linalg.svd``."""
    check_matrix("svd_lowrank", A, square=False, complex_ok=True)
    m, n = A.shape[-2:]
    q = 6 if q is None else q
    if not isinstance(q, numbers.Integral) or not 0 <= q <= min(m, n):
        raise ValueError(f"svd_lowrank: q(={q}) must be a non-negative integer and not greater than min(m, n)={min(m, n)}")
    X = A if M is None else A - M
    U, S, Vh = linalg_decomp.svd(X, full_matrices=False)
    return LowRankResult(U[..., :, :q], S[..., :q], Vh[..., :q, :].mH)  # V = Vhᴴ (A ≈ U S Vᴴ for complex A)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True, niter: int = 2) -> LowRankResult:
    """``svd_lowrank`` of ``A`` ``(*, m, n)`` with its column means subtracted when ``center``; ``q`` defaults to
    ``min(6, m, n)``. Raises as :func:`svd_lowrank`."""
    check_matrix("pca_lowrank", A, square=False, complex_ok=True)
    m, n = A.shape[-2:]
    q = min(6, m, n) if q is None else q
    X = A - A.mean(-2, keepdim=True) if center else A
    return svd_lowrank(X, q, niter)


def hash_tensor(input: Tensor, dim=None, *, keepdim: bool = False, mode: int = 0) -> Tensor:
    """The xor of the elements' bit patterns over ``dim`` (all when None), as uint64 (``torch.hash_tensor``, mode 0):
    floats are widened to float64 and integers/bools to int64 first, then bitcast. An empty reduction is 0.
    Raises ValueError for another ``mode``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"hash_tensor(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if mode != 0:
        raise ValueError(f"hash_tensor(): only mode=0 (reduction via xor) is supported, got mode={mode!r}")
    if input.dtype.kind == "c":  # the int64 cast below would drop the imaginary part: refused, as PyTorch's
        raise DtypeError(f"hash_tensor(): not implemented for complex tensors (got {input.dtype})")
    xp = get_array_module(input.array)
    wide = input.array.astype(np.float64 if input.dtype.kind == "f" else np.int64)
    bits = wide.view(np.uint64)  # (*input.shape)
    axes = tuple(range(input.ndim)) if dim is None else normalize_dims(dim, input.ndim, "hash_tensor")
    out = xp.bitwise_xor.reduce(bits, axis=axes, keepdims=keepdim) if input.ndim else bits.copy()
    return Tensor._from_op(xp.asarray(out, dtype=np.uint64))

"""``matrix_exp``: the matrix exponential ``e^A = Σ_k A^k / k!`` of square ``(*, n, n)`` matrices.

Forward: scaling and squaring with a Padé approximant (Al-Mohy & Higham 2009, "A new scaling and squaring
algorithm for the matrix exponential"), as ``scipy.linalg.expm`` (``cupyx.scipy.linalg.expm`` on the GPU).
Backward: for ``Y = e^A`` and upstream ``dY``, ``dA = L(Aᵀ, dY)``, the Fréchet derivative of ``exp`` at ``Aᵀ`` in
the direction ``dY``, read off one exponential of a block matrix (Najfeld & Havel 1995; PyTorch's
FunctionsManual ``differential_analytic_matrix_function``)::

    exp([[Aᵀ, dY], [0, Aᵀ]]) = [[e^(Aᵀ), L(Aᵀ, dY)], [0, e^(Aᵀ)]]

The backward calls ``matrix_exp`` itself on Tensors, so it is differentiable again.
"""

from __future__ import annotations

from ..autograd.function import Function
from ..backend import get_array_module
from ..tensor import Tensor
from .linalg_ops import check_matrix
from .stacking import _cat

__all__ = ["matrix_exp"]


def _expm(a):
    xp = get_array_module(a)
    if xp.__name__ == "numpy":
        from scipy.linalg import expm  # noqa: PLC0415 - SciPy is a dependency; imported where used
    else:  # pragma: no cover - needs a GPU
        from cupyx.scipy.linalg import expm  # noqa: PLC0415
    if a.size == 0:
        return a.copy()
    if a.ndim == 2:
        return expm(a).astype(a.dtype, copy=False)
    flat = a.reshape((-1,) + a.shape[-2:])  # (B, n, n)
    out = xp.stack([expm(m) for m in flat]) if flat.shape[0] else flat.copy()
    return out.reshape(a.shape).astype(a.dtype, copy=False)


class MatrixExp(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _expm(a)  # (*, n, n)

    @staticmethod
    def backward(ctx, dy):
        (a,) = ctx.saved_tensors
        n = a.shape[-1]
        at = a.mT  # (*, n, n)
        zeros = at.detach() * 0.0
        top = _cat([at, dy], at.ndim - 1, "matrix_exp")  # (*, n, 2n)
        bottom = _cat([zeros, at], at.ndim - 1, "matrix_exp")  # (*, n, 2n)
        block = _cat([top, bottom], at.ndim - 2, "matrix_exp")  # (*, 2n, 2n)
        return matrix_exp(block)[..., :n, n:]  # L(Aᵀ, dY)  # (*, n, n)


def matrix_exp(A: Tensor) -> Tensor:
    """``e^A`` for square ``A`` ``(*, n, n)``, float32 or float64, same shape and dtype.

    Raises ShapeError (a RuntimeError) for a non-square or fewer-than-2-D input, DtypeError for other dtypes.
    """
    check_matrix("matrix_exp", A, name="input")
    return MatrixExp.apply(A)

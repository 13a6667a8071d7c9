"""``nanquantile``, ``renorm`` and ``constant_pad_nd``: three ops PyTorch defines by a formula over the ones here.

- ``nanquantile`` is :func:`quantile` over the non-NaN values of each slice: with ``m`` of them sorted (NaN
  sort last), the quantile sits at rank ``r = q·(m - 1)`` and is interpolated as ``quantile``'s (``linear``,
  ``lower``, ``higher``, ``midpoint``, ``nearest``); an all-NaN slice gives NaN (NumPy's ``nanquantile``).
- ``renorm(input, p, dim, maxnorm)``: each slice ``input.select(dim, i)`` whose ``p``-norm exceeds
  ``maxnorm`` is scaled by ``maxnorm / (norm + 1e-7)`` (PyTorch's constant), the others kept; the scale's
  dependence on the input is part of the gradient (PyTorch's ``renorm_backward``).
- ``constant_pad_nd(input, pad, value)`` is ``F.pad(input, pad, "constant", value)``.

All are compositions of differentiable ops (``sort`` + gathers, norms, ``where``, ``pad``).
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..backend import get_array_module
from ..errors import DtypeError, OptionError
from ..tensor import Tensor
from ._util import normalize_dim
from .linalg_norms import linalg_vector_norm
from .padding import padded as _pad
from .selection import where
from .shape import permute, reshape, unsqueeze
from .sorting import _INTERPOLATIONS, read_ranks, sort

__all__ = ["constant_pad_nd", "nanquantile", "renorm"]


def _q_array(q, input: Tensor, xp):
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"nanquantile() q must be a scalar or 1D tensor, got shape {tuple(q.shape)}")
        if q.dtype != input.dtype:
            raise DtypeError(f"nanquantile() q tensor must be same dtype as the input tensor ({input.dtype}), got {q.dtype}")
        return xp.asarray(q.array).reshape(-1), q.ndim == 0
    if isinstance(q, numbers.Real) and not isinstance(q, bool):
        return xp.asarray([q], dtype=input.dtype), True
    raise TypeError(f"nanquantile() q must be a float or a Tensor, got {type(q).__name__}")


def nanquantile(input: Tensor, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear") -> Tensor:
    """The ``q``-th quantiles of the non-NaN values of ``input`` along ``dim`` (all elements for None): the reduced
    shape for a number or 0-d ``q``, ``(Q, *reduced)`` for a 1-D ``q``; NaN for an all-NaN slice.

    Raises as :func:`quantile`: RuntimeError for an empty input or ``q`` outside [0, 1], DtypeError for
    non-float input, OptionError for an unknown ``interpolation``, IndexError for a bad ``dim``.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"nanquantile(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if input.dtype not in (np.float32, np.float64):
        raise DtypeError(f"nanquantile() input tensor must be either float or double dtype, got {input.dtype}")
    if input.numel() == 0:
        raise RuntimeError(f"nanquantile() input tensor must be non-empty, got shape {tuple(input.shape)}")
    if interpolation not in _INTERPOLATIONS:
        raise OptionError(f"nanquantile() interpolation must be one of {', '.join(_INTERPOLATIONS)}, "
                          f"got {interpolation!r}")
    xp = get_array_module(input.array)
    qa, q_scalar = _q_array(q, input, xp)
    if qa.size and not bool(((qa >= 0) & (qa <= 1)).all()):
        raise RuntimeError(f"nanquantile() q values must be in the range [0, 1], got {qa.tolist()}")
    x, axis = (reshape(input, (-1,)), 0) if dim is None else (input, normalize_dim(dim, input.ndim, "nanquantile"))
    if x.ndim == 0:
        x, axis = reshape(x, (1,)), 0
    sorted_x = sort(x, axis).values  # (..., n, ...): NaN last
    Q = qa.shape[0]
    shape = [1] * x.ndim
    shape[axis] = Q
    m = (~xp.isnan(x.array)).sum(axis=axis, keepdims=True)  # (..., 1, ...) non-NaN counts
    ranks = (qa.reshape(shape) * xp.maximum(m - 1, 0)).astype(x.dtype)  # (..., Q, ...)
    weight = None
    if isinstance(q, Tensor) and q.requires_grad:
        # w = q·(m - 1) - floor(r) as Tensor ops, so q gets (hi - lo)·(m - 1) (quantile's and PyTorch's)
        span = Tensor._from_op(xp.maximum(m - 1, 0).astype(x.dtype))  # (..., 1, ...)
        weight = lambda below: reshape(q, shape) * span - below  # noqa: E731
    out = read_ranks(sorted_x, ranks, axis, interpolation, weight)  # (..., Q, ...)
    out = where(Tensor._from_op(m == 0), Tensor._from_op(np.asarray(np.nan, dtype=x.dtype)), out)  # all-NaN slices
    out = permute(out, (axis, *[d for d in range(x.ndim) if d != axis]))  # (Q, *reduced)
    if keepdim and input.ndim:
        out = reshape(out, (Q,) + (1,) * input.ndim) if dim is None else unsqueeze(out, axis + 1)
    return reshape(out, out.shape[1:]) if q_scalar else out


def renorm(input: Tensor, p, dim: int, maxnorm) -> Tensor:
    """``input`` with each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled down to norm
    ``maxnorm`` (by ``maxnorm / (norm + 1e-7)``). Same shape and dtype. Raises RuntimeError for ``p <= 0``
    or ``maxnorm < 0`` (PyTorch's), DtypeError for non-float input, IndexError for a bad ``dim``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"renorm(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if not (backend.is_floating(input.dtype) or input.dtype.kind == "c"):  # complex: norms of |z|, a real factor
        raise DtypeError(f"renorm(): expected a floating point or complex tensor, got {input.dtype}")
    if not isinstance(p, numbers.Real) or p <= 0:
        raise RuntimeError(f"renorm(): non-positive-norm not supported, got p={p!r}")
    if not isinstance(maxnorm, numbers.Real) or maxnorm < 0:
        raise RuntimeError(f"renorm(): expected maxnorm to be >= 0 but got {maxnorm!r}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm(): input needs at least 2 dimensions, got {input.ndim} dimensions")
    d = normalize_dim(dim, input.ndim, "renorm")
    others = tuple(i for i in range(input.ndim) if i != d)
    norm = linalg_vector_norm(input, p, others, keepdim=True)  # (1, .., size of dim, .., 1)
    factor = where(norm > maxnorm, maxnorm / (norm + 1e-7), Tensor._from_op(np.asarray(1.0, dtype=norm.dtype)))
    return input * factor


def constant_pad_nd(input: Tensor, pad, value=0) -> Tensor:
    """``input`` padded with ``value``: ``pad`` lists (before, after) sizes from the last dim backwards
    (negative sizes crop), as ``F.pad(input, pad, "constant", value)``; raises as that."""
    return _pad(input, pad, mode="constant", value=value)

"""Numba for the compiled CPU kernels: the import (optional at run time), the compile options, and
the checks every compiled kernel makes before it touches memory.
"""

from __future__ import annotations

import numpy as np

try:  # Numba is a dependency, but the package still works (on the NumPy kernels) without it
    import numba
except Exception:  # noqa: BLE001 - not installed, or broken (an import that raises anything)
    numba = None

AVAILABLE = numba is not None

__all__ = ["AVAILABLE", "jit", "check_shapes", "as_contiguous"]


def jit(fn=None, *, reassoc: bool = True):
    """Compile ``fn`` without the GIL (the row blocks run on threads), cached on disk.

    ``fastmath={"reassoc"}`` allows reordering sums (so that they vectorize), nothing else: no
    "nnan"/"ninf", so NaN and infinity behave as in NumPy, and no "contract" (fused multiply-adds),
    whose unrounded products would make ``dxhat - mean(dxhat)`` of a one-value row non-zero.
    ``@jit(reassoc=False)`` keeps the written order of every operation too: for loops without a
    sum, whose products the compiler could otherwise regroup (``(xc · rstd) · k · rstd`` as
    ``rstd · rstd``, which underflows in float32 once ``rstd`` is below 1e-19).
    ``error_model="numpy"``: a division by zero gives inf/NaN, as in NumPy, not an exception.

    Caching needs a writable folder: ``__pycache__`` beside this file, else Numba's user cache
    (``NUMBA_CACHE_DIR``, ``~/.cache``). Where there is none (a read-only install and home),
    Numba refuses ``cache=True`` and the loops are compiled anew in each process instead.
    ``NUMBA_DISABLE_JIT=1`` runs them as plain Python, to step through in a debugger (about a
    hundred times slower than the NumPy kernels).
    """
    if fn is None:
        return lambda f: jit(f, reassoc=reassoc)
    if numba is None:  # pragma: no cover
        return None
    options = dict(nogil=True, fastmath={"reassoc"} if reassoc else False, error_model="numpy")
    try:
        return numba.njit(cache=True, **options)(fn)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return numba.njit(cache=False, **options)(fn)


def check_shapes(op: str, x, dy=None, weight=None, bias=None, mean=None, rstd=None, per_row: bool = False) -> None:
    """Raise ValueError unless the arrays fit ``x``: compiled loops do not check their indices.

    ``weight``/``bias`` have one value per column of ``x`` ``(N, D)`` (or per channel of an
    ``(N, C, L)`` BatchNorm input: ``per_row``), ``dy`` has ``x``'s shape, ``mean``/``rstd`` one
    value per row (per channel) as ``(rows, 1)``.
    """
    n_stats = x.shape[1] if per_row else x.shape[0]
    n_params = x.shape[1]
    for name, a, shape in (("dy", dy, x.shape), ("weight", weight, (n_params,)), ("bias", bias, (n_params,)),
                           ("mean", mean, (n_stats, 1)), ("rstd", rstd, (n_stats, 1))):
        if a is not None and tuple(a.shape) != tuple(shape):
            raise ValueError(f"{op}: expected {name} of shape {tuple(shape)} for x of shape {tuple(x.shape)}, "
                             f"got {tuple(a.shape)}")


def as_contiguous(a, dtype):
    """``a`` as a C-contiguous array of ``dtype`` (no copy when it already is one)."""
    return np.ascontiguousarray(a, dtype=dtype)

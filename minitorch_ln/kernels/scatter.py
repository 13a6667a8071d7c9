"""Scatter kernels on raw arrays (NumPy and CuPy): the one place every backward that gathers
(indexing, embedding, gather/scatter) adds its gradients back.
"""

from __future__ import annotations

import numpy as np

from ..backend import _is_cupy_array


def scatter_add(target, indices, values) -> None:
    """``target[indices] += values`` in place, summing over repeated indices (NumPy and CuPy).

    Plain ``target[indices] += values`` would keep only one of several writes to the same place,
    which is wrong for a gradient: a row used twice must get both contributions.
    """
    rows = indices[0] if type(indices) is tuple and len(indices) == 1 else indices  # x[(ids,)] is x[ids]
    if _is_cupy_array(target):  # pragma: no cover - needs a GPU
        import cupyx  # noqa: PLC0415

        cupyx.scatter_add(target, indices, values)
    elif _is_row_scatter(target, rows, values):
        # Rows (an embedding's backward): target += S @ values, with S the (V, n) matrix of ones at
        # (indices[j], j), stored sparse (one entry per column). SciPy's sparse product adds the
        # rows in the same order as np.add.at (into a zero target, as in an embedding's backward,
        # the sums are the same to the bit) and is 10-25x faster than np.add.at, whose
        # per-element loop dominated an embedding's backward.
        from scipy.sparse import csc_matrix  # noqa: PLC0415 - SciPy is imported on first use

        n = rows.shape[0]
        ones = np.ones(n, dtype=values.dtype)
        target += csc_matrix((ones, rows, np.arange(n + 1)), shape=(target.shape[0], n)) @ values
    else:
        np.add.at(target, indices, values)


def _is_row_scatter(target, indices, values) -> bool:
    """``target[indices] += values`` adds whole rows: 2-D float target, 1-D non-negative int ids."""
    return (isinstance(target, np.ndarray) and isinstance(indices, np.ndarray) and isinstance(values, np.ndarray)
            and target.ndim == 2 and indices.ndim == 1 and indices.dtype.kind in "iu"
            and target.dtype == values.dtype and target.dtype in (np.float32, np.float64)
            and values.shape == (indices.shape[0], target.shape[1]) and indices.size > 0
            and int(indices.min()) >= 0 and int(indices.max()) < target.shape[0])

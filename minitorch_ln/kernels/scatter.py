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


# --------------------------------------------------------------------------------------------------
# Reductions along one dim (gather/scatter/scatter_reduce): added for ops/scatter.py
# --------------------------------------------------------------------------------------------------


def along_dim_index(index, dim: int) -> tuple:
    """The advanced index ``t`` with ``a[t][i0, .., ik] = a[i0, .., index[i0, .., ik], .., ik]`` (``index[...]`` at ``dim``).

    ``a[t]`` is ``gather(a, dim, index)``; ``a[t] = v`` and ``scatter_reduce_at(a, t, v, ...)`` scatter.
    ``index`` is a non-negative integer array with ``a``'s number of dimensions.
    """
    from ..backend import get_array_module

    xp = get_array_module(index)
    t = []
    for d, n in enumerate(index.shape):
        if d == dim:
            t.append(index)
        else:
            shape = [1] * index.ndim
            shape[d] = n
            t.append(xp.arange(n).reshape(shape))  # broadcasts against index
    return tuple(t)


_UFUNCS = {"sum": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum"}


def scatter_reduce_at(target, indices, values, reduce: str) -> None:
    """``target[indices] = reduce(target[indices], values)`` in place, reducing over repeated indices.

    ``reduce`` is ``"sum"``, ``"prod"``, ``"amax"`` or ``"amin"`` (NaN propagates through amax/amin,
    as in PyTorch). ``indices`` is a tuple of integer arrays, in range and non-negative, that
    broadcast to ``values``' shape. NumPy uses ``ufunc.at``; CuPy uses ``cupyx.scatter_add`` for
    float sums and :func:`segment_reduce_at` otherwise.
    """
    if reduce not in _UFUNCS:
        raise ValueError(f"scatter_reduce_at: reduce must be one of {sorted(_UFUNCS)}, got {reduce!r}")
    if _is_cupy_array(target):  # pragma: no cover - needs a GPU
        if reduce == "sum" and target.dtype.kind == "f" and target.dtype.itemsize >= 4:
            scatter_add(target, indices, values)
        else:
            segment_reduce_at(target, indices, values, reduce)
    elif reduce == "sum":
        scatter_add(target, indices, values)
    else:
        with np.errstate(invalid="ignore"):  # NaN and inf propagate quietly, as in PyTorch
            getattr(np, _UFUNCS[reduce]).at(target, indices, values)


def segment_reduce_at(target, indices, values, reduce: str) -> None:
    """:func:`scatter_reduce_at` with whole-array ops only (NumPy or CuPy, any dtype, deterministic).

    The targets' flat positions are sorted; a segmented inclusive scan by doubling (Hillis-Steele:
    ``log2(n)`` steps, each combining an element with the one ``s`` places back when both go to the
    same place) leaves each segment's reduction on its last element, which is then combined once
    with the target.
    """
    from ..backend import get_array_module

    xp = get_array_module(target)
    op = getattr(xp, _UFUNCS[reduce])
    *idx, vals = xp.broadcast_arrays(*indices, values)
    if vals.size == 0:
        return
    keys = xp.ravel_multi_index(tuple(i.reshape(-1) for i in idx), target.shape)  # (n,)
    order = xp.argsort(keys, kind="stable") if xp is np else xp.argsort(keys)
    k, v = keys[order], vals.reshape(-1)[order].astype(target.dtype)  # (n,), sorted by target place
    s = 1
    while s < k.shape[0]:
        same = k[s:] == k[:-s]  # (n - s,), element i and i - s go to the same place
        v = xp.concatenate([v[:s], xp.where(same, op(v[:-s], v[s:]), v[s:])])
        s *= 2
    last = xp.ones(k.shape, dtype=bool)
    last[:-1] = k[1:] != k[:-1]  # the last element of each segment holds its reduction
    place = xp.unravel_index(k[last], target.shape)
    target[place] = op(target[place], v[last])

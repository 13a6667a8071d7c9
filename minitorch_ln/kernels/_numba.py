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

__all__ = ["AVAILABLE", "jit", "prefetch_row", "check_shapes", "as_contiguous"]


def jit(fn=None, *, reassoc: bool = True, inline: bool = False):
    """Compile ``fn`` without the GIL (the row blocks run on threads), cached on disk.

    ``fastmath={"reassoc"}`` allows reordering sums (so that they vectorize), nothing else: no
    "nnan"/"ninf", so NaN and infinity behave as in NumPy, and no "contract" (fused multiply-adds),
    whose unrounded products would make ``dxhat - mean(dxhat)`` of a one-value row non-zero.
    ``@jit(reassoc=False)`` keeps the written order of every operation too: for loops without a
    sum, whose products the compiler could otherwise regroup (``(xc · rstd) · k · rstd`` as
    ``rstd · rstd``, which underflows in float32 once ``rstd`` is below 1e-19).
    ``error_model="numpy"``: a division by zero gives inf/NaN, as in NumPy, not an exception.
    ``@jit(inline=True)``: a helper that Numba copies into each compiled caller (``inline="always"``)
    instead of calling it, for one called once per row: a call between compiled functions costs
    about 20 ns (its arrays passed field by field), 0.1 ms over the 4,096 rows of ``(32, 128, 768)``.
    Only for a helper with the caller's options: the copy is compiled with the caller's.

    Caching needs a writable folder: ``__pycache__`` beside this file, else Numba's user cache
    (``NUMBA_CACHE_DIR``, ``~/.cache``). Where there is none (a read-only install and home),
    Numba refuses ``cache=True`` and the loops are compiled anew in each process instead.
    ``NUMBA_DISABLE_JIT=1`` runs them as plain Python, to step through in a debugger (about a
    hundred times slower than the NumPy kernels).
    """
    if fn is None:
        return lambda f: jit(f, reassoc=reassoc, inline=inline)
    if numba is None:  # pragma: no cover
        return None
    options = dict(nogil=True, fastmath={"reassoc"} if reassoc else False, error_model="numpy")
    if inline:
        options["inline"] = "always"
    try:
        return numba.njit(cache=True, **options)(fn)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return numba.njit(cache=False, **options)(fn)


def prefetch_row(a, i) -> None:
    """Ask the memory system for row ``i`` of the C-contiguous 2-D array ``a`` (every 64-byte cache
    line of it) without waiting for it; nothing for ``i`` past the last row. In compiled code only
    (this Python body does nothing: a hint, no result).

    Why: a row loop that reads each row from memory once and then works on it in the L1 cache
    (LayerNorm's forward: its sum, then the variance and ``y`` from the cache) waits for memory
    only in its first pass; asking for the next row at the start of this one lets that row arrive
    while this one is worked on (``(32, 128, 768)`` float32 forward: about 10% less time).
    """


if numba is not None:
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.extending import intrinsic, overload

    @intrinsic
    def _prefetch_row(typingctx, a, i):
        if not (isinstance(a, types.Array) and a.ndim == 2 and a.layout == "C" and isinstance(i, types.Integer)):
            return None

        def codegen(context, builder, signature, args):
            array = context.make_array(signature.args[0])(context, builder, args[0])
            row = context.cast(builder, args[1], signature.args[1], types.intp)
            n_rows, row_len = cgutils.unpack_tuple(builder, array.shape, 2)
            with builder.if_then(builder.and_(builder.icmp_signed(">=", row, row.type(0)),
                                              builder.icmp_signed("<", row, n_rows))):
                byte = ir.IntType(8).as_pointer()
                first = builder.bitcast(cgutils.get_item_pointer(context, builder, signature.args[0], array,
                                                                 [row, row.type(0)], wraparound=False), byte)
                i32 = ir.IntType(32)
                prefetch = cgutils.get_or_insert_function(
                    builder.module, ir.FunctionType(ir.VoidType(), [byte, i32, i32, i32]), "llvm.prefetch.p0")
                row_bytes = builder.mul(row_len, row.type(a.dtype.bitwidth // 8))
                with cgutils.for_range_slice(builder, row.type(0), row_bytes, row.type(64)) as (offset, _):
                    # (address, 0: for reading, 3: keep in every cache level, 1: data)
                    builder.call(prefetch, [builder.gep(first, [offset]), i32(0), i32(3), i32(1)])
            return context.get_dummy_value()

        return types.void(a, i), codegen

    @overload(prefetch_row, jit_options={"nogil": True})
    def _prefetch_row_overload(a, i):
        return lambda a, i: _prefetch_row(a, i)


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

"""What the normalization ops share: the normalized axes as rows ``(N, D)``, and argument checks.

LayerNorm, RMSNorm (and, through ``dim=``, any axes) hand their input to the kernels as rows: the
normalized axes are moved last and the array is viewed as ``(N, D)`` (no copy for the usual trailing
``normalized_shape``).
"""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from ..kernels.layer_norm import stat_dtype
from .. import backend
from ..backend import get_array_module
from ..errors import ShapeError
from ..tensor import Tensor
from ._util import normalize_dims

__all__ = ["Rows", "rows_of", "check_input", "check_eps", "resolve_axes", "check_param", "flat", "param_view", "stat_cast"]


class Rows:
    """How an array of ``shape`` maps to the rows ``(N, D)`` the kernels normalize (``axes`` go last).

    Read-only once made: :func:`rows_of` hands the same one to every call with that shape and axes."""

    __slots__ = ("D", "N", "identity", "moved_shape", "param_shape", "perm", "stat_shape")

    def __init__(self, shape: tuple, axes: tuple):
        keep = tuple(i for i in range(len(shape)) if i not in axes)
        self.perm = keep + tuple(axes)
        self.moved_shape = tuple(shape[i] for i in self.perm)
        self.N = math.prod(shape[i] for i in keep)
        self.D = math.prod(shape[i] for i in axes)
        self.stat_shape = tuple(1 if i in axes else s for i, s in enumerate(shape))    # (B, L, 1)
        self.param_shape = tuple(shape[i] for i in axes)                                # (D,)
        self.identity = self.perm == tuple(range(len(shape)))

    def to_rows(self, a):
        """``a`` as a C-contiguous ``(N, D)`` array (a view when it already is one)."""
        xp = get_array_module(a)
        if not self.identity:
            a = a.transpose(self.perm)
        return xp.ascontiguousarray(a).reshape(self.N, self.D)

    def from_rows(self, a2d):
        """The inverse of :meth:`to_rows`: ``(N, D)`` back to the original layout."""
        if self.identity and a2d.base is None and a2d.flags.c_contiguous:
            # Reshape the kernel's own array in place rather than as a view: the engine copies a
            # view before making it a leaf's .grad (one more pass over (B, L, D) for nothing).
            a2d.shape = self.moved_shape
            return a2d
        a = a2d.reshape(self.moved_shape)
        return a if self.identity else a.transpose(tuple(int(i) for i in np.argsort(self.perm)))


@functools.lru_cache(maxsize=256)
def rows_of(shape: tuple, axes: tuple) -> Rows:
    """The :class:`Rows` of ``shape`` (a tuple of ints) and ``axes`` (sorted), made once per pair: a
    LayerNorm step asks three times (the op's checks, its forward, its backward), each time for the
    same shape, and making one costs about 2 us (0.1% of the kernels' time at ``(32, 128, 768)``,
    but all of it at small shapes)."""
    return Rows(tuple(shape), tuple(axes))


def check_input(x, op: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected input to be a Tensor, got {type(x).__name__}")
    if not backend.is_floating(x.dtype):
        raise TypeError(f"{op}: expected a floating point input (float16, float32 or float64), got {x.dtype}")
    if x.ndim == 0:
        raise ValueError(f"{op}: expected an input with at least one dimension, got a 0-d tensor")


def check_eps(eps, op: str, positive: bool = True) -> float:
    """``eps`` as a float. The modules (``positive``) take a finite ``eps > 0``. The functional ops take any
    real number, as PyTorch's: ``rstd = 1 / sqrt(var + eps)`` is the formula's number wherever
    ``var + eps > 0`` (a negative ``eps`` included), and NaN/inf where it is not, as in PyTorch."""
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real):
        raise TypeError(f"{op}: eps must be a real number, got {eps!r}")
    if positive and (not math.isfinite(eps) or eps <= 0):
        raise ValueError(f"{op}: eps must be a finite number > 0, got {eps!r}")
    return float(eps)


def resolve_axes(x: Tensor, normalized_shape, dim, op: str) -> tuple:
    """The sorted normalized axes from exactly one of ``normalized_shape`` (trailing dims) and ``dim``."""
    if dim is None and type(normalized_shape) is int and x.ndim and x.array.shape[-1] == normalized_shape:
        return (x.ndim - 1,)  # the usual case (an int D, the last dim): what the general path below returns
    if (normalized_shape is None) == (dim is None):
        raise ValueError(
            f"{op}: give exactly one of normalized_shape (the trailing dimensions to normalize) and dim "
            f"(any axes), got normalized_shape={normalized_shape!r} and dim={dim!r}"
        )
    if dim is not None:
        axes = normalize_dims(dim, x.ndim, op)
        if not axes:
            raise ValueError(f"{op}: dim must name at least one axis, got {dim!r}")
        return axes
    shape = (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else normalized_shape
    try:
        shape = tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"{op}: normalized_shape must be an int or a tuple of ints, got {normalized_shape!r}") from None
    if not shape:
        raise ValueError(f"{op}: normalized_shape must have at least one dimension, got ()")
    if x.shape[-len(shape):] != shape or len(shape) > x.ndim:
        raise ShapeError(
            f"{op}: normalized_shape {shape} must match the trailing dimensions of the input, but the "
            f"input has shape {tuple(x.shape)} (expected an input of shape (*, {', '.join(map(str, shape))}))"
        )
    return tuple(range(x.ndim - len(shape), x.ndim))


def check_param(p, name: str, shape: tuple, x: Tensor, op: str) -> None:
    if p is None:
        return
    if not isinstance(p, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor or None, got {type(p).__name__}")
    if tuple(p.shape) != tuple(shape):
        raise ValueError(f"{op}: expected {name} of shape {tuple(shape)} (the normalized shape), got {tuple(p.shape)}")
    mixed = x.dtype == np.float16 and p.dtype == np.float32  # float32 parameters with float16 data
    if p.dtype != x.dtype and not mixed:
        raise TypeError(
            f"{op}: {name} has dtype {p.dtype} but the input has dtype {x.dtype}; they must match "
            "(float32 parameters are allowed with float16 input)"
        )


def flat(p, D):
    return None if p is None else p.reshape(D)


def param_view(p: Tensor, x: Tensor, axes: tuple) -> Tensor:
    """A parameter of the normalized shape, reshaped to broadcast against ``x`` (1 on other axes)."""
    return p.reshape(tuple(s if i in axes else 1 for i, s in enumerate(x.shape)))


def stat_cast(t: Tensor) -> Tensor:
    return t.to(stat_dtype(t.dtype))

"""Fused array-level kernels: one NumPy implementation and one CUDA implementation behind one signature.

Kernels know arrays only, never ``Tensor``. Each public function here looks at its first array
and dispatches:

- a ``numpy.ndarray`` goes to :mod:`minitorch_ln.kernels.cpu_layernorm` (loops compiled by Numba,
  one pass per row; the LayerNorm, RMSNorm and BatchNorm kernels in float32/float64) while
  :func:`get_cpu_kernels` is ``"numba"`` (the default where Numba imports), and otherwise to
  :mod:`minitorch_ln.kernels.layernorm` (NumPy, written with ``xp = get_array_module(x)``, so it
  runs on CuPy arrays too). Both implement the
  interface below and the tests run every kernel test on both;
- a ``cupy.ndarray`` goes to :mod:`minitorch_ln.kernels.cuda_layernorm` (CuPy ``RawKernel`` /
  ``ReductionKernel``), imported lazily the first time; a function that module does not define
  (or the whole module, while it does not exist) falls back to the ``xp`` code above.

LayerNorm kernel interface (every implementation keeps exactly this)
--------------------------------------------------------------------

``layer_norm_fwd(x, weight, bias, eps) -> (y, mean, rstd)``
    ``x``: a C-contiguous 2-D array ``(N, D)``, one row per group of values normalized together.
    ``weight``, ``bias``: ``(D,)`` arrays or ``None`` (they may be float32 when ``x`` is float16).
    ``eps``: a Python float > 0, added to the biased variance inside the square root.
    Returns ``y`` ``(N, D)`` in ``x``'s dtype, and ``mean``, ``rstd`` ``(N, 1)`` in float32 when
    ``x`` is float16, else in ``x``'s dtype. A constant row gives exactly ``bias`` (0 without bias).

``layer_norm_bwd(dy, x, weight, mean, rstd) -> (dx, dweight, dbias)``
    ``dy``, ``x``: C-contiguous ``(N, D)``; ``mean``, ``rstd``: as returned by ``layer_norm_fwd``.
    Returns ``dx`` ``(N, D)`` in ``x``'s dtype and ``dweight``, ``dbias`` ``(D,)`` (``None`` when
    ``weight`` is ``None``), accumulated in float32 for float16 input and returned in the weight's
    dtype. Implementations should re-centre ``x - mean`` (subtract its row mean) before using it:
    the saved ``mean`` is rounded, which for rows with a large mean and a small spread would
    otherwise bias every term of ``dx``.

``layer_norm_stats(x, eps) -> (mean, rstd)``: only the statistics (the recompute-in-backward option).

Also here, each dispatched the same way: ``rms_norm_fwd(x, weight, eps) -> (y, rstd)``,
``rms_norm_bwd(dy, x, weight, rstd) -> (dx, dweight)``, ``batch_norm_fwd(x, weight, bias, eps) ->
(y, mean, rstd, var)`` and ``batch_norm_bwd(dy, x, weight, mean, rstd) -> (dx, dweight, dbias)`` (for
BatchNorm the rows are channels: ``x`` is ``(C, M)`` and ``weight``/``bias`` are ``(C,)``), and
``batch_norm_fwd_ncl`` / ``batch_norm_bwd_ncl``, the same on the input's own layout ``(N, C, L)``
(``y``/``dx`` ``(N, C, L)``, statistics ``(C, 1)``): what the BatchNorm op calls, so that the compiled
CPU kernels read the input in place where the others make the channel rows by a transposing copy.

GELU (:mod:`minitorch_ln.kernels.activation`, the ``xp`` code on both NumPy and CuPy):
``gelu_fwd(x, approximate) -> y`` and ``gelu_bwd(dy, x, approximate) -> dx``, any shape.

For checking and teaching (always the ``xp`` implementation, never a CUDA kernel):
``layer_norm_bwd_terms(dy, x, weight, mean, rstd) -> dict`` (the backward split into its terms; the
keys are listed in its docstring) and ``layer_norm_bwd_chain_rule(dy, x, weight, mean, rstd)`` (the
step-by-step chain rule, equal to ``layer_norm_bwd``).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import warnings

import numpy as np

from ..backend import get_array_module
from . import layernorm as _numpy_impl
from .activation import gelu_bwd, gelu_fwd  # noqa: F401 - re-exported: GELU on raw arrays (NumPy and CuPy)
from .layernorm import (  # noqa: F401 - re-exported: teaching/checking forms and thread control
    get_num_threads, layer_norm_bwd_chain_rule, layer_norm_bwd_terms, set_num_threads, stat_dtype,
)

__all__ = [
    "set_cpu_kernels", "get_cpu_kernels", "layer_norm_fwd", "layer_norm_bwd", "layer_norm_stats",
    "layer_norm_bwd_terms", "layer_norm_bwd_chain_rule", "rms_norm_fwd", "rms_norm_bwd", "batch_norm_fwd",
    "batch_norm_bwd", "batch_norm_fwd_ncl", "batch_norm_bwd_ncl", "stat_dtype", "set_num_threads",
    "get_num_threads", "gelu_fwd", "gelu_bwd",
]

CPU_KERNELS = ("numba", "numpy")
_CPU_MODULE = "minitorch_ln.kernels.cpu_layernorm"
_cpu_kernels: str | None = None  # chosen on first use (importing Numba takes a few tenths of a second)
_cpu_impl = None


def _numba_importable() -> bool:
    """Whether the compiled kernels can run: ``cpu_layernorm`` imports Numba (once) and says."""
    return importlib.import_module(_CPU_MODULE).AVAILABLE


def set_cpu_kernels(name: str) -> None:
    """Choose the CPU kernels: ``"numba"`` (compiled loops, the default when Numba is installed) or
    ``"numpy"`` (whole-array NumPy operations). The environment variable ``MINITORCH_LN_CPU_KERNELS``
    sets the starting choice. Both compute the same formulas and agree to rounding.

    Raises:
        ValueError: ``name`` is not one of ``"numba"``, ``"numpy"``.
        ImportError: ``"numba"`` was asked for and Numba is not installed.
    """
    global _cpu_kernels, _cpu_impl
    if name not in CPU_KERNELS:
        raise ValueError(f"set_cpu_kernels: expected one of {CPU_KERNELS}, got {name!r}")
    if name == "numba":
        if not _numba_importable():
            raise ImportError("set_cpu_kernels('numba'): Numba is not installed (pip install numba); "
                              "the NumPy kernels ('numpy') need nothing more")
        _cpu_impl = importlib.import_module(_CPU_MODULE)
    _cpu_kernels = name


def get_cpu_kernels() -> str:
    """The CPU kernels in use: ``"numba"`` or ``"numpy"`` (see :func:`set_cpu_kernels`)."""
    if _cpu_kernels is None:
        env = os.environ.get("MINITORCH_LN_CPU_KERNELS", "").strip().lower()
        if env == "numpy" or (env == "numba" and _numba_importable()):
            choice = env
        else:  # unset or unusable: the fastest kernels this machine has
            choice = "numba" if _numba_importable() else "numpy"
            if env:
                warnings.warn(f"MINITORCH_LN_CPU_KERNELS={env!r}: expected one of {CPU_KERNELS} "
                              f"('numba' needs Numba installed); using {choice!r}", stacklevel=2)
        set_cpu_kernels(choice)
    return _cpu_kernels


_CUDA_MODULE = "minitorch_ln.kernels.cuda_layernorm"
_cuda_impl = None  # the module once imported; False when it does not exist


def _cuda_module():
    """``cuda_layernorm``, or None while that module does not exist (an error inside it is raised)."""
    global _cuda_impl
    if _cuda_impl is None:
        if importlib.util.find_spec(_CUDA_MODULE) is None:
            _cuda_impl = False
        else:
            _cuda_impl = importlib.import_module(_CUDA_MODULE)
    return _cuda_impl or None


def _impl(name: str, array):
    """The function ``name`` for ``array``'s array module."""
    if get_array_module(array) is not np:
        module = _cuda_module()
        fn = getattr(module, name, None) if module is not None else None
        if fn is not None:
            return fn
    elif get_cpu_kernels() == "numba":
        fn = getattr(_cpu_impl, name, None)
        if fn is not None:
            return fn
    return getattr(_numpy_impl, name)


def layer_norm_fwd(x, weight, bias, eps):
    """See the module docstring; dispatches on ``x``'s array module."""
    return _impl("layer_norm_fwd", x)(x, weight, bias, eps)


def layer_norm_bwd(dy, x, weight, mean, rstd):
    """See the module docstring; dispatches on ``x``'s array module."""
    return _impl("layer_norm_bwd", x)(dy, x, weight, mean, rstd)


def layer_norm_stats(x, eps):
    """See the module docstring; dispatches on ``x``'s array module."""
    return _impl("layer_norm_stats", x)(x, eps)


def rms_norm_fwd(x, weight, eps):
    return _impl("rms_norm_fwd", x)(x, weight, eps)


def rms_norm_bwd(dy, x, weight, rstd):
    return _impl("rms_norm_bwd", x)(dy, x, weight, rstd)


def batch_norm_fwd(x, weight, bias, eps):
    return _impl("batch_norm_fwd", x)(x, weight, bias, eps)


def batch_norm_bwd(dy, x, weight, mean, rstd):
    return _impl("batch_norm_bwd", x)(dy, x, weight, mean, rstd)


def batch_norm_fwd_ncl(x, weight, bias, eps):
    return _impl("batch_norm_fwd_ncl", x)(x, weight, bias, eps)


def batch_norm_bwd_ncl(dy, x, weight, mean, rstd):
    return _impl("batch_norm_bwd_ncl", x)(dy, x, weight, mean, rstd)

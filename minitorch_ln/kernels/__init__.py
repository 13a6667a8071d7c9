"""Fused array-level kernels: one NumPy implementation and one CUDA implementation behind one signature.

Kernels know arrays only, never ``Tensor``. :func:`pick` returns the implementation of a kernel for
an array (the ops call it, then call the kernel directly); each public function here is the same
dispatch in one call:

- a ``numpy.ndarray`` goes to the loops compiled by Numba (``cpu_layernorm``: LayerNorm and RMSNorm;
  ``cpu_batchnorm``: BatchNorm; float32/float64, one pass per row) while :func:`get_cpu_kernels` is
  ``"numba"`` (the default where Numba imports), and otherwise to the readable NumPy forms
  (``layernorm``, ``rmsnorm``, ``batchnorm``, written with ``xp = get_array_module(x)``, so they
  run on CuPy arrays too). Both implement the interface below and the tests run every kernel test
  on both;
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
(``y``/``dx`` ``(N, C, L)``, statistics ``(C, 1)``): what the BatchNorm op calls, every implementation
reading the input in place (no transposing copy into channel rows). ``group_norm_fwd`` /
``group_norm_bwd`` (``groupnorm``, ``cpu_groupnorm``, ``cuda_groupnorm``) and
``local_response_norm_fwd`` / ``local_response_norm_bwd`` (``lrn``, ``cpu_lrn``, ``cuda_lrn``) follow
the same pattern; their interfaces are in those modules' docstrings.

GELU (``activation``, the ``xp`` code, also on CuPy; ``cpu_activation``, the exact form compiled
for float32/float16): ``gelu_fwd(x, approximate) -> y`` and ``gelu_bwd(dy, x, approximate) -> dx``,
any shape.

For checking and teaching (``layernorm_forms``, always the ``xp`` implementation, never a CUDA
kernel): ``layer_norm_bwd_terms(dy, x, weight, mean, rstd) -> dict`` (the backward split into its
terms; the keys are listed in its docstring) and ``layer_norm_bwd_chain_rule(dy, x, weight, mean,
rstd)`` (the step-by-step chain rule, equal to ``layer_norm_bwd``).

Threads: the compiled kernels and GELU share rows out over ``get_num_threads()`` threads
(``kernels/_threads.py``).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import warnings

import numpy as np

from ..backend import get_array_module
from ._threads import get_num_threads, set_num_threads
from .layernorm import stat_dtype
from .layernorm_forms import layer_norm_bwd_chain_rule, layer_norm_bwd_terms

__all__ = [
    "set_cpu_kernels", "get_cpu_kernels", "pick", "layer_norm_fwd", "layer_norm_bwd", "layer_norm_stats",
    "layer_norm_bwd_terms", "layer_norm_bwd_chain_rule", "rms_norm_fwd", "rms_norm_bwd", "batch_norm_fwd",
    "batch_norm_bwd", "batch_norm_fwd_ncl", "batch_norm_bwd_ncl", "stat_dtype", "set_num_threads",
    "get_num_threads", "gelu_fwd", "gelu_bwd", "adam_update",
]

CPU_KERNELS = ("numba", "numpy")
_PKG = "minitorch_ln.kernels."
# each kernel: (the xp module, the compiled CPU module or None, the CUDA module or None). A CUDA module
# that lacks the kernel (or does not exist yet) leaves it to the xp form, on CuPy arrays.
_MODULES = {
    "layer_norm_fwd": ("layernorm", "cpu_layernorm", "cuda_layernorm"),
    "layer_norm_bwd": ("layernorm", "cpu_layernorm", "cuda_layernorm"),
    "layer_norm_stats": ("layernorm", "cpu_layernorm", "cuda_layernorm"),
    "rms_norm_fwd": ("rmsnorm", "cpu_layernorm", "cuda_layernorm"),
    "rms_norm_bwd": ("rmsnorm", "cpu_layernorm", "cuda_layernorm"),
    "batch_norm_fwd": ("batchnorm", None, "cuda_layernorm"), "batch_norm_bwd": ("batchnorm", None, "cuda_layernorm"),
    "batch_norm_fwd_ncl": ("batchnorm", "cpu_batchnorm", "cuda_batchnorm"),
    "batch_norm_bwd_ncl": ("batchnorm", "cpu_batchnorm", "cuda_batchnorm"),
    "group_norm_fwd": ("groupnorm", "cpu_groupnorm", "cuda_groupnorm"),
    "group_norm_bwd": ("groupnorm", "cpu_groupnorm", "cuda_groupnorm"),
    "local_response_norm_fwd": ("lrn", "cpu_lrn", "cuda_lrn"),
    "local_response_norm_bwd": ("lrn", "cpu_lrn", "cuda_lrn"),
    "gelu_fwd": ("activation", "cpu_activation", None), "gelu_bwd": ("activation", "cpu_activation", None),
    "softmax_rows_": ("softmax", "cpu_softmax", None), "softmax_bwd_rows_": ("softmax", "cpu_softmax", None),
    "adam_update": ("adam", "cpu_adam", None),
}
_cpu_kernels: str | None = None  # chosen on first use (importing Numba takes a few tenths of a second)
_chosen: dict = {}  # (kernel name, "cpu" or "cuda") -> the module that implements it, filled on first use


def _numba_importable() -> bool:
    """Whether the compiled kernels can run: ``_numba`` imports Numba (once) and says."""
    return importlib.import_module(_PKG + "_numba").AVAILABLE


def set_cpu_kernels(name: str) -> None:
    """Choose the CPU kernels: ``"numba"`` (compiled loops, the default when Numba is installed) or
    ``"numpy"`` (whole-array NumPy operations). The environment variable ``MINITORCH_LN_CPU_KERNELS``
    sets the starting choice. Both compute the same formulas and agree to rounding.

    Raises:
        ValueError: ``name`` is not one of ``"numba"``, ``"numpy"``.
        ImportError: ``"numba"`` was asked for and Numba is not installed.
    """
    global _cpu_kernels
    if name not in CPU_KERNELS:
        raise ValueError(f"set_cpu_kernels: expected one of {CPU_KERNELS}, got {name!r}")
    if name == "numba" and not _numba_importable():
        raise ImportError("set_cpu_kernels('numba'): Numba is not installed (pip install numba); "
                          "the NumPy kernels ('numpy') need nothing more")
    _cpu_kernels = name
    _chosen.clear()


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


def _module_for(name: str, where: str):
    xp_module, cpu_module, cuda_module = _MODULES[name]
    if where == "cuda" and cuda_module is not None and importlib.util.find_spec(_PKG + cuda_module) is not None:
        module = importlib.import_module(_PKG + cuda_module)
        if hasattr(module, name):  # a kernel it lacks runs in the xp form, on CuPy arrays
            return module
    if where == "cpu" and cpu_module is not None and get_cpu_kernels() == "numba" \
            and importlib.util.find_spec(_PKG + cpu_module) is not None:
        return importlib.import_module(_PKG + cpu_module)
    return importlib.import_module(_PKG + xp_module)


def pick(name: str, array):
    """The kernel ``name`` (a key of the interface above) for ``array``'s device and the CPU choice."""
    where = "cpu" if type(array) is np.ndarray or get_array_module(array) is np else "cuda"
    module = _chosen.get((name, where))
    if module is None:
        module = _chosen[(name, where)] = _module_for(name, where)
    return getattr(module, name)


def layer_norm_fwd(x, weight, bias, eps):
    """See the module docstring; dispatches on ``x``'s array module."""
    return pick("layer_norm_fwd", x)(x, weight, bias, eps)


def layer_norm_bwd(dy, x, weight, mean, rstd):
    """See the module docstring; dispatches on ``x``'s array module."""
    return pick("layer_norm_bwd", x)(dy, x, weight, mean, rstd)


def layer_norm_stats(x, eps):
    """See the module docstring; dispatches on ``x``'s array module."""
    return pick("layer_norm_stats", x)(x, eps)


def gelu_fwd(x, approximate="none"):
    """See :mod:`minitorch_ln.kernels.activation`; dispatches on ``x``'s array module."""
    return pick("gelu_fwd", x)(x, approximate)


def gelu_bwd(dy, x, approximate="none"):
    """See :mod:`minitorch_ln.kernels.activation`; dispatches on ``x``'s array module."""
    return pick("gelu_bwd", x)(dy, x, approximate)


def rms_norm_fwd(x, weight, eps):
    return pick("rms_norm_fwd", x)(x, weight, eps)


def rms_norm_bwd(dy, x, weight, rstd):
    return pick("rms_norm_bwd", x)(dy, x, weight, rstd)


def batch_norm_fwd(x, weight, bias, eps):
    return pick("batch_norm_fwd", x)(x, weight, bias, eps)


def batch_norm_bwd(dy, x, weight, mean, rstd):
    return pick("batch_norm_bwd", x)(dy, x, weight, mean, rstd)


def batch_norm_fwd_ncl(x, weight, bias, eps):
    return pick("batch_norm_fwd_ncl", x)(x, weight, bias, eps)


def batch_norm_bwd_ncl(dy, x, weight, mean, rstd):
    return pick("batch_norm_bwd_ncl", x)(dy, x, weight, mean, rstd)



def adam_update(param, grad, m, v, v_max, **coefficients):
    """One Adam step in place: ``kernels/adam.py`` (the NumPy/CuPy form) or, on the CPU, its compiled twin."""
    return pick("adam_update", param)(param, grad, m, v, v_max, **coefficients)

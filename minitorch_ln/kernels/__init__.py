"""Fused array-level kernels: the readable NumPy form of each, its compiled CPU twin and its CUDA form.

Kernels know arrays only, never ``Tensor``. Each fused op family has one dispatch module that says,
with a plain ``if`` over device, dtype and the CPU choice, which implementation runs; the ops import
it by name and call the kernel it returns:

====================  ===================================  ========================================
family                dispatch module                      forms (xp / compiled CPU / CUDA)
====================  ===================================  ========================================
LayerNorm             ``layer_norm_dispatch.py``           ``layer_norm`` / ``cpu_layer_norm`` /
                                                           ``cuda_layer_norm``
RMSNorm               ``rms_norm_dispatch.py``             ``rms_norm`` / ``cpu_layer_norm`` / --
BatchNorm             ``batch_norm_dispatch.py``           ``batch_norm`` / ``cpu_batch_norm`` /
                                                           ``cuda_batch_norm``
GroupNorm             ``group_norm_dispatch.py``           ``group_norm`` / ``cpu_group_norm`` /
                                                           ``cuda_group_norm``
local response norm   ``local_response_norm_dispatch.py``  ``local_response_norm`` /
                                                           ``cpu_local_response_norm`` /
                                                           ``cuda_local_response_norm``
row softmax           ``softmax_dispatch.py``              ``softmax`` / ``cpu_softmax`` / --
GELU                  ``gelu_dispatch.py``                 ``activation`` / ``cpu_activation`` / --
Adam                  ``adam_dispatch.py``                 ``adam`` / ``cpu_adam`` / --
====================  ===================================  ========================================

The CPU choice (``set_cpu_kernels``/``get_cpu_kernels``: the loops compiled by Numba, the default
where Numba imports, or the readable NumPy forms) and the device test live in ``choice.py``. The
xp forms are written with ``xp = get_array_module(x)``, so they run on CuPy arrays too; they are
the oracle every other form is tested against, and the file a student reads. The public functions
below are each one dispatch and one call.

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
``group_norm_bwd`` (``group_norm``, ``cpu_group_norm``, ``cuda_group_norm``) and
``local_response_norm_fwd`` / ``local_response_norm_bwd`` (``local_response_norm``, ``cpu_local_response_norm``, ``cuda_local_response_norm``) follow
the same pattern; their interfaces are in those modules' docstrings.

GELU (``activation``, the ``xp`` code, also on CuPy; ``cpu_activation``, the exact form compiled
for float32/float16): ``gelu_fwd(x, approximate) -> y`` and ``gelu_bwd(dy, x, approximate) -> dx``,
any shape.

For checking and teaching (``layer_norm_forms``, always the ``xp`` implementation, never a CUDA
kernel): ``layer_norm_bwd_terms(dy, x, weight, mean, rstd) -> dict`` (the backward split into its
terms; the keys are listed in its docstring) and ``layer_norm_bwd_chain_rule(dy, x, weight, mean,
rstd)`` (the step-by-step chain rule, equal to ``layer_norm_bwd``).

Threads: the compiled kernels and GELU share rows out over ``get_num_threads()`` threads
(``kernels/_threads.py``).
"""

from __future__ import annotations

from . import batch_norm
from ._threads import get_num_threads, set_num_threads
from .adam_dispatch import adam_update_for
from .batch_norm_dispatch import batch_norm_bwd_ncl_for, batch_norm_fwd_ncl_for
from .choice import CPU_KERNELS, get_cpu_kernels, set_cpu_kernels
from .gelu_dispatch import gelu_bwd_for, gelu_fwd_for
from .layer_norm_dispatch import layer_norm_bwd_for, layer_norm_fwd_for, layer_norm_stats_for
from .layer_norm import stat_dtype
from .layer_norm_forms import layer_norm_bwd_chain_rule, layer_norm_bwd_terms
from .rms_norm_dispatch import rms_norm_bwd_for, rms_norm_fwd_for

__all__ = [
    "set_cpu_kernels", "get_cpu_kernels", "CPU_KERNELS", "layer_norm_fwd", "layer_norm_bwd", "layer_norm_stats",
    "layer_norm_bwd_terms", "layer_norm_bwd_chain_rule", "rms_norm_fwd", "rms_norm_bwd", "batch_norm_fwd",
    "batch_norm_bwd", "batch_norm_fwd_ncl", "batch_norm_bwd_ncl", "stat_dtype", "set_num_threads",
    "get_num_threads", "gelu_fwd", "gelu_bwd", "adam_update",
]


def layer_norm_fwd(x, weight, bias, eps):
    """See the module docstring; dispatched by ``layer_norm_dispatch.py``."""
    return layer_norm_fwd_for(x)(x, weight, bias, eps)


def layer_norm_bwd(dy, x, weight, mean, rstd):
    """See the module docstring; dispatched by ``layer_norm_dispatch.py``."""
    return layer_norm_bwd_for(x)(dy, x, weight, mean, rstd)


def layer_norm_stats(x, eps):
    """See the module docstring; dispatched by ``layer_norm_dispatch.py``."""
    return layer_norm_stats_for(x)(x, eps)


def gelu_fwd(x, approximate="none"):
    """See :mod:`minitorch_ln.kernels.activation`; dispatched by ``gelu_dispatch.py``."""
    return gelu_fwd_for(x)(x, approximate)


def gelu_bwd(dy, x, approximate="none"):
    """See :mod:`minitorch_ln.kernels.activation`; dispatched by ``gelu_dispatch.py``."""
    return gelu_bwd_for(x)(dy, x, approximate)


def rms_norm_fwd(x, weight, eps):
    return rms_norm_fwd_for(x)(x, weight, eps)


def rms_norm_bwd(dy, x, weight, rstd):
    return rms_norm_bwd_for(x)(dy, x, weight, rstd)


def batch_norm_fwd(x, weight, bias, eps):
    return batch_norm.batch_norm_fwd(x, weight, bias, eps)


def batch_norm_bwd(dy, x, weight, mean, rstd):
    return batch_norm.batch_norm_bwd(dy, x, weight, mean, rstd)


def batch_norm_fwd_ncl(x, weight, bias, eps):
    return batch_norm_fwd_ncl_for(x)(x, weight, bias, eps)


def batch_norm_bwd_ncl(dy, x, weight, mean, rstd):
    return batch_norm_bwd_ncl_for(x)(dy, x, weight, mean, rstd)


def adam_update(param, grad, m, v, v_max, **coefficients):
    """One Adam step in place: ``kernels/adam.py`` (the NumPy/CuPy form) or, on the CPU, its compiled twin."""
    return adam_update_for(param, grad, m, v, v_max)(param, grad, m, v, v_max, **coefficients)

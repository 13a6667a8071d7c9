"""Mixed precision, as ``torch.amp``: ``autocast`` regions and ``GradScaler`` (dynamic loss scaling).

**autocast** ``(device_type, dtype=None, enabled=True)`` is a context manager and a decorator with
PyTorch's arguments, defaults, validation and disabling rules (``enabled=False`` is a no-op
everywhere; ``'cuda'`` without a GPU warns and disables itself, as PyTorch does; an unsupported dtype
warns and disables). Inside an enabled region the ops on PyTorch's autocast lists cast their
arguments as PyTorch's do: matmul, linear, the convolutions and attention run in float16; exp, log,
pow, softmax, layer_norm, the losses and the reductions in float32; the others in their inputs'
dtypes (:mod:`minitorch_ln.ops.autocast_policies` has the lists, :mod:`minitorch_ln.autograd.autocast_state`
the rule). ``'cuda'`` regions act on GPU tensors with PyTorch's CUDA lists, ``'cpu'`` regions on CPU
tensors with its CPU lists. The low-precision dtype is float16 on CUDA and, as PyTorch's CPU default,
bfloat16 on the CPU (``ml_dtypes``' storage dtype: each op computes in float32 and rounds its result to
bfloat16, as PyTorch's CPU kernels; CuPy has no bfloat16, so ``autocast("cuda", dtype=bfloat16)``
raises PyTorch's error for a GPU without it). ``cache_enabled`` is accepted; no cast is cached (the values are the same, each use of
a float32 weight is cast again).

**GradScaler** is real: ``scale(loss)`` multiplies by the scale, ``unscale_(optimizer)`` divides
the gradients in place and records whether any is inf/NaN, ``step`` skips the optimizer step when
one was, and ``update`` grows the scale by ``growth_factor`` after ``growth_interval`` clean steps
or backs it off by ``backoff_factor`` after a bad one (PyTorch's ``_amp_update_scale_``; the scale
is kept in float32, as PyTorch's scale tensor). ``enabled=False`` passes everything through.
"""

from __future__ import annotations

import functools
import threading
import warnings

import numpy as np

from . import backend
from .autograd import autocast_state
from .dtypes import UnsupportedDtype as _UnsupportedDtype, bfloat16
from .grad_scaler import CudaGradScaler, GradScaler
from .ops.autocast_policies import POLICIES

__all__ = ["autocast", "GradScaler", "is_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype", "bfloat16",
           "CpuAutocast", "CudaAutocast", "CudaGradScaler", "FLOAT16_OPS", "FLOAT32_OPS"]

# The ops that run in float16 / float32 in CUDA autocast regions (all the lists: ops.autocast_policies.POLICIES).
FLOAT16_OPS = tuple(n for n, (p, _, _) in POLICIES.items() if p.get("cuda") == "lower")
FLOAT32_OPS = tuple(n for n, (p, _, _) in POLICIES.items() if p.get("cuda") in ("fp32", "fp32_opt_dtype"))

_DEFAULT_DTYPE = {"cpu": bfloat16, "cuda": np.dtype(np.float16)}


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether an enabled autocast region of ``device_type`` is active in this thread."""
    return autocast_state.is_autocast_enabled(device_type)


class _Defaults(threading.local):
    """Per thread, as PyTorch's: the dtype :func:`set_autocast_dtype` chose for each device type."""

    def __init__(self):
        self.dtypes = {}


_defaults = _Defaults()


def _check_device_type(device_type) -> None:
    if device_type not in ("cpu", "cuda"):
        raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}': "
                           "minitorch_ln's autocast supports 'cpu' and 'cuda'")


def get_autocast_dtype(device_type: str = "cuda"):
    """The dtype of ``device_type``'s innermost autocast region in this thread; outside any region the
    one :func:`set_autocast_dtype` chose, else PyTorch's defaults (float16 on CUDA, :data:`bfloat16`
    on the CPU). A region opened without ``dtype=`` takes this dtype, so a nested
    ``autocast("cpu")`` inside ``autocast("cpu", dtype=float16)`` runs in float16, as PyTorch's."""
    _check_device_type(device_type)
    dtype = autocast_state.get_autocast_dtype(device_type)
    if dtype is None:
        dtype = _defaults.dtypes.get(device_type, _DEFAULT_DTYPE[device_type])
    return dtype


def set_autocast_dtype(device_type: str, dtype) -> None:
    """``torch.set_autocast_dtype``: the dtype later regions of ``device_type`` take without ``dtype=``
    (this thread).

    Raises:
        RuntimeError: an unknown device type.
        TypeError: ``dtype`` is not a dtype.
    """
    _check_device_type(device_type)
    _defaults.dtypes[device_type] = _as_autocast_dtype(dtype)


def _as_autocast_dtype(dtype):
    if dtype is None or isinstance(dtype, _UnsupportedDtype):
        return dtype
    return backend.as_dtype(dtype)


class autocast:
    """A mixed-precision region: ``with autocast("cuda"):`` or ``@autocast("cpu", enabled=False)``.

    Args:
        device_type: ``"cuda"`` or ``"cpu"``.
        dtype: float16 (CUDA's default) or bfloat16 (the CPU's default).
        enabled: ``False`` makes the region a no-op.
        cache_enabled: accepted; no cast is cached (the same values; a weight is cast at each use).
    Raises:
        RuntimeError: an unknown ``device_type``, or ``dtype=bfloat16`` on CUDA (PyTorch's message
            for a GPU without bfloat16; none has it here).
        TypeError: ``enabled`` not a bool.
    Warns:
        UserWarning: ``"cuda"`` without a GPU, or a CPU dtype other than float16/bfloat16 (disabled,
            as PyTorch).
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in ("cpu", "cuda"):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}': "
                               "minitorch_ln's autocast supports 'cpu' and 'cuda'")
        if not isinstance(enabled, (bool, np.bool_)):
            raise TypeError(f"autocast: enabled must be a bool, got {type(enabled).__name__}")
        self.device = device_type
        self.fast_dtype = _as_autocast_dtype(dtype) if dtype is not None else get_autocast_dtype(device_type)
        self._enabled = bool(enabled)
        self._dtype_arg, self._cache_enabled = dtype, cache_enabled
        if not self._enabled:
            return
        if device_type == "cuda":
            if not backend.cuda_is_available():
                warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling",
                              UserWarning, stacklevel=2)
                self._enabled = False
            elif self.fast_dtype == bfloat16:
                raise RuntimeError("Current CUDA Device does not support bfloat16. Please switch dtype to float16.")
            elif self.fast_dtype != np.float16:
                warnings.warn("In CUDA autocast, but the target dtype is not supported. Disabling autocast.\n"
                              "CUDA Autocast only supports dtype of torch.float16 here.", UserWarning, stacklevel=2)
                self._enabled = False
        elif self.fast_dtype not in (np.float16, bfloat16):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                          "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.",
                          UserWarning, stacklevel=2)
            self._enabled = False

    def __enter__(self):
        # a disabled region inside an enabled one switches it off, as in PyTorch
        self._token = autocast_state.enter_region(self.device, self._enabled, self.fast_dtype)
        return self

    def __exit__(self, *exc):
        autocast_state.exit_region(self._token)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self).__new__(type(self)).__copy_from(self):
                return fn(*args, **kwargs)

        return wrapper

    def __copy_from(self, other):  # a fresh region per call, so that recursion and threads nest correctly
        self.__dict__.update({k: v for k, v in other.__dict__.items() if k != "_token"})
        return self


class CpuAutocast(autocast):
    """``torch.cpu.amp.autocast(enabled=True, dtype=bfloat16, cache_enabled=True)``: deprecated in
    PyTorch (a FutureWarning, as there) for ``autocast("cpu", ...)``."""

    def __init__(self, enabled: bool = True, dtype=bfloat16, cache_enabled: bool = True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class CudaAutocast(autocast):
    """``torch.cuda.amp.autocast(enabled=True, dtype=float16, cache_enabled=True)``: deprecated in
    PyTorch (a FutureWarning, as there) for ``autocast("cuda", ...)``."""

    def __init__(self, enabled: bool = True, dtype=np.dtype(np.float16), cache_enabled: bool = True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

"""Autocast's state and its cast rule: which dtype an op runs in inside an enabled autocast region.

``torch.autocast`` regions (:mod:`minitorch_ln.amp`) set, per thread and per device type
(``"cpu"``, ``"cuda"``), whether autocast is on and its low-precision dtype (float16 here: NumPy
and CuPy have no bfloat16). The ops named in :mod:`minitorch_ln.ops.autocast_policies` are wrapped with
:func:`autocast_op`; inside an enabled region the wrapper casts the op's tensor arguments by the
op's *policy*, PyTorch's (``aten/src/ATen/autocast_mode.h``, "Autocast Op Reference" of the AMP docs):

``lower``
    eligible arguments go to the region's dtype (float16): matmul, linear, convolutions, ...
``fp32``
    eligible arguments go to float32: exp, log, pow, layer_norm, the losses, ...
``fp32_opt_dtype``
    as ``fp32``, unless the call passes ``dtype=`` (then it runs as asked): softmax, sum, cumsum, ...
``promote``
    eligible arguments go to the widest floating dtype among them: cat, stack, atan2, dot, ...
``banned``
    refused with PyTorch's error: binary_cross_entropy under CUDA autocast.
``as_is``
    no cast, and none inside: an op that is one kernel in PyTorch (so runs in its input dtype) but
    is composed of listed ops here (``mv`` and ``dot`` on the CPU call matmul).

An argument is *eligible* when it is a floating Tensor on the region's device type and not float64
(float64 runs in float64, as in PyTorch). Casts are ordinary differentiable ``to`` ops, so gradients
come back in each argument's own dtype. As in PyTorch, autocast does not act inside an op it wrapped
(the op's own parts run in the dtypes the cast chose), nor during backward: backward ops run in the
dtypes their forward ops ran in.
"""

from __future__ import annotations

import functools
import inspect
import threading

import numpy as np

from .. import backend
from ..backend import get_array_module
from . import function as _function  # _function.Tensor: the Tensor class, set by tensor.py

__all__ = ["autocast_op", "autocast_acting", "is_autocast_enabled", "get_autocast_dtype", "enter_region", "exit_region",
           "autocast_excluded", "region_device_type"]


class _State(threading.local):
    """Per thread: ``regions`` {device_type: (enabled, dtype)}; ``excluded`` > 0 inside a wrapped op
    or a backward pass (autocast does not act there)."""

    def __init__(self):
        self.regions = {}
        self.excluded = 0


_state = _State()
_enabled_regions = [0]  # over all threads: the wrappers' fast path when no region is on anywhere
_lock = threading.Lock()


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether an enabled autocast region of ``device_type`` is active in this thread."""
    return _state.regions.get(device_type, (False, None))[0]


def get_autocast_dtype(device_type: str):
    """The dtype of this thread's innermost ``device_type`` region, or None outside any."""
    return _state.regions.get(device_type, (False, None))[1]


def autocast_acting() -> bool:
    """Whether an op called now would be cast: an enabled region somewhere, and not inside an op
    autocast already wrapped or a backward pass (an op on the lists may check this in its body
    instead of being wrapped)."""
    return bool(_enabled_regions[0]) and not _state.excluded and bool(_state.regions)


def enter_region(device_type: str, enabled: bool, dtype):
    """Open a region (``enabled`` False switches autocast off inside an enclosing one); returns the
    token :func:`exit_region` takes to restore what was there before."""
    prev = _state.regions.get(device_type)
    _state.regions[device_type] = (bool(enabled), dtype)
    if enabled:
        with _lock:
            _enabled_regions[0] += 1
    return (device_type, prev, bool(enabled))


def exit_region(token) -> None:
    device_type, prev, enabled = token
    if prev is None:
        _state.regions.pop(device_type, None)
    else:
        _state.regions[device_type] = prev
    if enabled:
        with _lock:
            _enabled_regions[0] -= 1


class autocast_excluded:
    """``with autocast_excluded():`` autocast does not act inside (the engine runs backward in one)."""

    def __enter__(self):
        _state.excluded += 1

    def __exit__(self, *exc):
        _state.excluded -= 1
        return False


def region_device_type(array) -> str:
    """The autocast device type of an array: ``"cpu"`` for NumPy, ``"cuda"`` for CuPy."""
    return "cpu" if type(array) is np.ndarray or get_array_module(array) is np else "cuda"


def _tensors(args):
    """The Tensor arguments, including those inside a list or tuple argument (cat, stack)."""
    Tensor = _function.Tensor
    for a in args:
        if isinstance(a, Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (t for t in a if isinstance(t, Tensor))


def _cast_all(args, cast):
    """``args`` with every Tensor (also inside a list/tuple argument) replaced by ``cast(t)``."""
    Tensor = _function.Tensor

    def one(a):
        if isinstance(a, Tensor):
            return cast(a)
        if isinstance(a, (list, tuple)) and any(isinstance(t, Tensor) for t in a):
            return type(a)(cast(t) if isinstance(t, Tensor) else t for t in a)
        return a

    return tuple(one(a) for a in args)


def _region_for(args):
    """``(device_type, dtype)`` of the enabled region that covers the op's tensors, or None."""
    if _state.excluded or not _state.regions:
        return None
    for t in _tensors(args):
        device_type = region_device_type(t.array)
        enabled, dtype = _state.regions.get(device_type, (False, None))
        return (device_type, dtype) if enabled else None
    return None


def _eligible(t, device_type) -> bool:
    dt = t.dtype
    return backend.is_floating(dt) and dt != np.float64 and region_device_type(t.array) == device_type


def autocast_op(name: str, policies: dict):
    """Wrap an op so that, inside an enabled autocast region, its arguments are cast by its policy.

    Args:
        name: the op's PyTorch name (also in error messages).
        policies: ``{device_type: policy}`` for the device types where the op is on PyTorch's lists
            (the policy names are in the module docstring), a policy name or ``f(args, kwargs)``
            returning one.
    Returns:
        A decorator. Outside an enabled region the wrapped op runs as it was, at the cost of one check.
    """

    def decorate(fn):
        dtype_pos = None
        if any(p == "fp32_opt_dtype" for p in policies.values()):
            params = list(inspect.signature(fn).parameters.values())
            dtype_pos = next((i for i, p in enumerate(params) if p.name == "dtype"
                              and p.kind is p.POSITIONAL_OR_KEYWORD), None)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if not _enabled_regions[0]:
                return fn(*args, **kwargs)
            region = _region_for(args)
            if region is None:
                return fn(*args, **kwargs)
            device_type, low = region
            policy = policies.get(device_type, "as_is")  # listed for another device: one kernel here too
            if callable(policy):  # a policy that depends on the call (F.pad's mode, the input's rank)
                policy = policy(args, kwargs)
            if policy == "banned":
                raise RuntimeError(
                    f"torch.nn.functional.{name} and torch.nn.{'BCELoss' if name == 'binary_cross_entropy' else name} "
                    "are unsafe to autocast.\nMany models use a sigmoid layer right before the binary cross entropy "
                    "layer.\nIn this case, combine the two layers using torch.nn.functional."
                    "binary_cross_entropy_with_logits\nor torch.nn.BCEWithLogitsLoss. binary_cross_entropy_with_logits "
                    "and BCEWithLogits are\nsafe to autocast.")
            if policy == "fp32_opt_dtype":
                given = kwargs.get("dtype")
                if given is None and dtype_pos is not None and len(args) > dtype_pos:
                    given = args[dtype_pos]
                policy = "fp32" if given is None else None
            if policy == "lower":
                target = np.dtype(low)
            elif policy == "fp32":
                target = np.dtype(np.float32)
            elif policy == "promote":
                kinds = [t.dtype for t in _tensors(args) if _eligible(t, device_type)]
                target = functools.reduce(np.promote_types, kinds) if kinds else None
            else:  # as_is
                target = None
            if target is not None:
                args = _cast_all(args, lambda t: t.to(target) if _eligible(t, device_type) and t.dtype != target else t)
                kwargs = {k: (v.to(target) if hasattr(v, "array") and _eligible(v, device_type) and v.dtype != target
                              else v) for k, v in kwargs.items()}
            _state.excluded += 1
            try:
                return fn(*args, **kwargs)
            finally:
                _state.excluded -= 1

        wrapper.__autocast__ = (name, dict(policies))
        # what this wrapper calls while no region is on (out_variants.with_out); the wrapper is named too, since an
        # outer functools.wraps copies the attribute to a wrapper of its own (axis_alias, keepdims_alias)
        wrapper.__autocast_plain__ = (wrapper, fn)
        return wrapper

    return decorate

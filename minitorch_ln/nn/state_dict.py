"""What a :class:`~minitorch_ln.nn.Module` holds, as a whole (a mixin): ``state_dict`` and
``load_state_dict`` with PyTorch's names and the error a failed load raises; ``zero_grad`` and
``requires_grad_``; moving or casting it (``to``, ``float``, ``double``, ``half``, ``bfloat16``,
``cpu``, ``cuda``). Each walks ``named_modules`` and the ``_parameters``/``_buffers`` dictionaries."""

from __future__ import annotations

from collections import OrderedDict, namedtuple

import numpy as np

from .. import backend
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .parameter import UninitializedParameter


class IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns (PyTorch's ``_IncompatibleKeys``, printed the same way)."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class StateDictError(RuntimeError):
    """``load_state_dict`` found missing, unexpected or wrong-shaped keys (all listed in the message).

    Attributes ``missing_keys``, ``unexpected_keys`` and ``mismatched_keys`` hold the lists.
    """

    def __init__(self, message, missing=(), unexpected=(), mismatched=()):
        super().__init__(message)
        self.missing_keys, self.unexpected_keys, self.mismatched_keys = list(missing), list(unexpected), list(mismatched)


def _to_array_like(value, key: str):
    """A state-dict value (Tensor, NumPy/CuPy array, PyTorch tensor, nested list) as an array."""
    if isinstance(value, Tensor):
        return value.array
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a PyTorch tensor, converted without importing torch
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":  # NumPy has no bfloat16; float32 holds it exactly
            value = value.float()
        return value.numpy()
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return value
    try:
        return np.asarray(value)
    except Exception as exc:  # noqa: BLE001 - reported as a clear error below
        raise TypeError(f"state_dict[{key!r}]: expected a Tensor or an array, got {type(value).__name__}") from exc


def zero_grads(params, set_to_none: bool = True) -> None:
    """Reset each parameter's ``.grad`` to None, or to zeros in place (shared by Module and Optimizer)."""
    for p in params:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
        elif p.grad.grad_fn is not None:
            # a gradient made with create_graph=True: drop its history rather than write into it
            p.grad = Tensor._from_op(backend.get_array_module(p.grad.array).zeros_like(p.grad.array))
        else:
            p.grad.array.fill(0)
            p.grad._bump_version()


class StateDictMixin:
    """What :class:`Module` gets from here (it walks ``named_modules``, ``_parameters``, ``_buffers``)."""

    def state_dict(self, prefix: str = "", keep_vars: bool = False) -> "OrderedDict[str, Tensor]":
        """Every parameter and persistent buffer by dotted name, as PyTorch names them.

        The tensors share memory with the module (detached unless ``keep_vars``). Tied weights
        appear under each of their names, as in PyTorch.
        """
        out = OrderedDict()
        for mod_prefix, m in self.named_modules(prefix=prefix.rstrip(".")):
            for name, p in m._parameters.items():
                if p is not None:
                    out[f"{mod_prefix}.{name}" if mod_prefix else name] = p if keep_vars else p.detach()
            for name, b in m._buffers.items():
                if b is not None and name not in m._non_persistent:
                    out[f"{mod_prefix}.{name}" if mod_prefix else name] = b if keep_vars else b.detach()
        return out

    def load_state_dict(self, state_dict, strict: bool = True) -> IncompatibleKeys:
        """Copy values into this module's parameters and buffers, in place, keeping their dtype and device.

        Values may be Tensors, NumPy/CuPy arrays or PyTorch tensors (on any device). Every value is
        checked and converted before anything is written, so a failure leaves the module unchanged.

        Raises:
            StateDictError: one error listing every missing, unexpected and wrong-shaped key (with
                ``strict=False`` missing and unexpected keys are allowed; wrong shapes still raise).
            TypeError: a value that is not array-like.
        Returns:
            ``IncompatibleKeys(missing_keys, unexpected_keys)``, as PyTorch.
        """
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"load_state_dict expects a mapping of names to tensors, got {type(state_dict).__name__}")
        for k, p in self.named_parameters():  # a lazy module's parameters take the loaded shapes (PyTorch's hook)
            if isinstance(p, UninitializedParameter) and k in state_dict:
                p.materialize(tuple(_to_array_like(state_dict[k], k).shape))
        own = self.state_dict()
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict.keys() if k not in own]
        arrays, mismatched = {}, []
        for k, target in own.items():
            if k not in state_dict:
                continue
            arr = _to_array_like(state_dict[k], k)
            if tuple(arr.shape) != tuple(target.shape):
                mismatched.append(f"{k}: expected shape {tuple(target.shape)}, got {tuple(arr.shape)}")
            arrays[k] = arr
        if mismatched or (strict and (missing or unexpected)):
            parts = []
            if missing and strict:
                parts.append(f"missing keys ({len(missing)}): " + ", ".join(missing))
            if unexpected and strict:
                parts.append(f"unexpected keys ({len(unexpected)}): " + ", ".join(unexpected))
            if mismatched:
                parts.append(f"wrong shapes ({len(mismatched)}): " + "; ".join(mismatched))
            raise StateDictError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n  " + "\n  ".join(parts),
                missing, unexpected, mismatched,
            )
        converted = {}
        for k, arr in arrays.items():  # convert everything first: a failure here changes nothing
            target = own[k]
            converted[k] = backend.to_device(arr, target.device).astype(target.dtype, copy=False)
        with no_grad():
            for k, new in converted.items():
                target = own[k]
                backend.get_array_module(target.array).copyto(target.array, new)
                target._bump_version()
        return IncompatibleKeys(missing, unexpected)

    # ------------------------------------------------------------------ gradients
    def requires_grad_(self, requires_grad: bool = True):
        """Set ``requires_grad`` on every parameter (e.g. to freeze a module); returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's ``.grad``: to None (default, as PyTorch), or to zeros in place."""
        zero_grads(self.parameters(), set_to_none)

    # ------------------------------------------------------------------ moving and casting
    def to(self, *args, device=None, dtype=None, non_blocking=False, memory_format=None):
        """Move parameters and buffers to a device and/or cast their floating point dtype, in place.

        ``to("cuda")``, ``to(float64)``, ``to("cpu", "float32")``, ``to(device=..., dtype=...)``,
        ``to(tensor)`` (its device and dtype). Integer buffers keep their dtype (as in PyTorch). The
        same Parameter objects are kept, so an optimizer made before ``to()`` still holds them.
        ``non_blocking`` and ``memory_format`` are accepted and change nothing (copies here are
        synchronous; every array is C-ordered).

        Raises:
            TypeError: a dtype that is not floating point (or bfloat16, which minitorch_ln lacks).
            DeviceError: an unknown device, or CUDA without CuPy/GPU.
        """
        for a in args:
            if isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, (str, backend.Device, int)) and not isinstance(a, bool) and not (
                    isinstance(a, str) and a in backend._DTYPE_NAMES):
                device = a  # an int is a GPU index, as PyTorch's `model.to(rank)`
            else:
                dtype = a
        dt = backend.as_dtype(dtype) if dtype is not None else None
        if dt is not None and not backend.is_floating(dt):
            raise TypeError(f"Module.to only accepts floating point dtypes, got {dt}")
        dev = backend.device(device) if device is not None else None

        def convert(arr):
            if dt is not None and backend.is_floating(arr.dtype) and arr.dtype != dt:
                arr = arr.astype(dt)
            if dev is not None:
                arr = backend.to_device(arr, dev)
            return arr

        seen = set()
        for m in self.modules():
            for t in list(m._parameters.values()) + list(m._buffers.values()):
                if t is None or id(t) in seen:
                    continue
                seen.add(id(t))
                t.array = convert(t.array)
                if t.grad is not None:
                    t.grad.array = convert(t.grad.array)
                if t._accumulator is not None:  # its recorded (shape, dtype, device) must follow the data
                    t._accumulator.outputs_meta = ((t.shape, t.dtype, t.device),)
        return self

    def float(self):
        """``to(float32)``."""
        return self.to(np.float32)

    def double(self):
        """``to(float64)``, as gradient checks need."""
        return self.to(np.float64)

    def half(self):
        """``to(float16)``."""
        return self.to(np.float16)

    def bfloat16(self):
        """``to(bfloat16)``: floating parameters and buffers are stored in bfloat16 (ops compute in float32)."""
        return self.to(backend.BFLOAT16)

    def cpu(self):
        """``to("cpu")``."""
        return self.to("cpu")

    def cuda(self, device=None):
        """``to("cuda:N")`` (``device`` an int, a device or None for device 0; needs CuPy and a GPU)."""
        if device is None or isinstance(device, int):
            return self.to(f"cuda:{device or 0}")
        return self.to(device)

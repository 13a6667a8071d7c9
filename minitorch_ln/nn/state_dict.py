"""``state_dict`` and ``load_state_dict`` for :class:`~minitorch_ln.nn.Module` (a mixin), with PyTorch's names,
and the error a failed load raises."""

from __future__ import annotations

from collections import OrderedDict, namedtuple

import numpy as np

from .. import backend
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor

IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class StateDictError(RuntimeError):
    """``load_state_dict`` found missing, unexpected or wrong-shaped keys (all listed in the message).

    Attributes ``missing_keys``, ``unexpected_keys`` and ``mismatched_keys`` hold the lists.
    """

    def __init__(self, message, missing=(), unexpected=(), mismatched=()):
        super().__init__(message)
        self.missing_keys, self.unexpected_keys, self.mismatched_keys = list(missing), list(unexpected), list(mismatched)


# What load_state_dict returns, as PyTorch's ``_IncompatibleKeys``.


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
                target._version[0] += 1
        return IncompatibleKeys(missing, unexpected)

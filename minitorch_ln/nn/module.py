"""``Module``: the base class of layers, with PyTorch's registration, traversal and state-dict API."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from .. import backend
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .parameter import Parameter


class StateDictError(RuntimeError):
    """``load_state_dict`` found missing, unexpected or wrong-shaped keys (all listed in the message)."""

    def __init__(self, message, missing=(), unexpected=(), mismatched=()):
        super().__init__(message)
        self.missing_keys, self.unexpected_keys, self.mismatched_keys = list(missing), list(unexpected), list(mismatched)


class Module:
    """Base class of every layer. Subclasses set attributes in ``__init__`` and define ``forward``.

    Assigning a :class:`Parameter` or a ``Module`` to an attribute registers it, so that
    ``parameters()``, ``state_dict()``, ``to()`` and ``zero_grad()`` reach it.
    """

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    # ------------------------------------------------------------------ registration
    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {name!r} before Module.__init__() is called")
        if isinstance(value, Parameter):
            self._forget(name)
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._forget(name)
            self._modules[name] = value
        elif name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign {type(value).__name__} to buffer {name!r} (a Tensor or None expected)")
            self._buffers[name] = value
        elif name in self._parameters or name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} to {name!r}: expected a Parameter/Module or None")
            (self._parameters if name in self._parameters else self._modules)[name] = None
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name):
        for d in (self._parameters, self._buffers, self._modules):
            d.pop(name, None)
        self.__dict__.pop(name, None)

    def __getattr__(self, name):
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            if key in d and name in d[key]:
                return d[key][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for key in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__[key]:
                del self.__dict__[key][name]
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param) -> None:
        """Register ``param`` (a Parameter, or None for an absent optional one, e.g. ``bias=False``)."""
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"register_parameter: {name!r} must be a Parameter or None, got {type(param).__name__}")
        self.__dict__.pop(name, None)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Register a non-learnable tensor (e.g. BatchNorm's ``running_mean``) saved in ``state_dict``."""
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"register_buffer: {name!r} must be a Tensor or None, got {type(tensor).__name__}")
        self.__dict__.pop(name, None)
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent.add(name)

    def add_module(self, name: str, module) -> None:
        self.__dict__.pop(name, None)
        self._modules[name] = module

    # ------------------------------------------------------------------ forward
    def forward(self, *args, **kwargs):  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # ------------------------------------------------------------------ traversal
    def named_modules(self, prefix: str = "", memo=None):
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(f"{prefix}.{name}" if prefix else name, memo)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        for name, m in self._modules.items():
            if m is not None:
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, get, prefix, recurse):
        seen = set()
        mods = self.named_modules(prefix) if recurse else [(prefix, self)]
        for mod_prefix, m in mods:
            for name, v in get(m):
                if v is None or id(v) in seen:
                    continue
                seen.add(id(v))
                yield (f"{mod_prefix}.{name}" if mod_prefix else name), v

    def named_parameters(self, prefix: str = "", recurse: bool = True):
        """``(name, Parameter)`` pairs; a parameter shared by two modules (weight tying) appears once."""
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse)

    def parameters(self, recurse: bool = True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True):
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse)

    def buffers(self, recurse: bool = True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ------------------------------------------------------------------ modes
    def train(self, mode: bool = True):
        for m in self.modules():
            object.__setattr__(m, "training", bool(mode))
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                p.grad = Tensor._from_op(backend.get_array_module(p.grad.data).zeros_like(p.grad.data))

    def apply(self, fn):
        """Call ``fn(module)`` on every submodule (children first) and on self; returns self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------------ moving
    def to(self, *args, device=None, dtype=None):
        """Move parameters and buffers to a device and/or cast their floating point dtype, in place."""
        for a in args:
            if isinstance(a, (str, backend.Device)) and not (isinstance(a, str) and a in backend._DTYPE_NAMES):
                device = a
            else:
                dtype = a
        dt = backend.as_dtype(dtype) if dtype is not None else None

        def convert(arr):
            if dt is not None and arr.dtype.kind == "f" and arr.dtype != dt:
                arr = arr.astype(dt)
            if device is not None:
                arr = backend.to_device(arr, device)
            return arr

        for m in self.modules():
            for t in list(m._parameters.values()) + list(m._buffers.values()):
                if t is None:
                    continue
                t.data = convert(t.data)
                if t.grad is not None:
                    t.grad.data = convert(t.grad.data)
        return self

    def float(self):
        return self.to(np.float32)

    def double(self):
        return self.to(np.float64)

    def half(self):
        return self.to(np.float16)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, index: int = 0):
        return self.to(f"cuda:{index}")

    # ------------------------------------------------------------------ state dict
    def state_dict(self, prefix: str = "") -> "OrderedDict[str, Tensor]":
        """Every parameter and persistent buffer by dotted name (tensors share memory with the module)."""
        out = OrderedDict()
        for mod_prefix, m in self.named_modules(prefix.rstrip(".")):
            for name, p in m._parameters.items():
                if p is not None:
                    out[f"{mod_prefix}.{name}" if mod_prefix else name] = p.detach()
            for name, b in m._buffers.items():
                if b is not None and name not in m._non_persistent:
                    out[f"{mod_prefix}.{name}" if mod_prefix else name] = b.detach()
        return out

    def load_state_dict(self, state_dict, strict: bool = True):
        """Copy values into this module's parameters and buffers, in place, keeping their dtype and device.

        Values may be Tensors, NumPy arrays or anything with ``__array__`` (PyTorch CPU tensors).

        Raises:
            StateDictError: listing every missing, unexpected and wrong-shaped key at once (with
                ``strict=False`` only wrong shapes raise). Nothing is changed when it raises.
        Returns:
            ``(missing_keys, unexpected_keys)``.
        """
        own = self.state_dict()
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        arrays, mismatched = {}, []
        for k, target in own.items():
            if k not in state_dict:
                continue
            v = state_dict[k]
            arr = v.data if isinstance(v, Tensor) else v
            if not hasattr(arr, "shape"):
                arr = np.asarray(arr)
            if tuple(arr.shape) != tuple(target.shape):
                mismatched.append(f"{k}: expected shape {tuple(target.shape)}, got {tuple(arr.shape)}")
            arrays[k] = arr
        if mismatched or (strict and (missing or unexpected)):
            parts = []
            if missing:
                parts.append("missing keys: " + ", ".join(missing))
            if unexpected and strict:
                parts.append("unexpected keys: " + ", ".join(unexpected))
            if mismatched:
                parts.append("wrong shapes: " + "; ".join(mismatched))
            raise StateDictError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n  " + "\n  ".join(parts),
                missing, unexpected, mismatched,
            )
        with no_grad():
            for k, arr in arrays.items():
                target = own[k]
                if hasattr(arr, "detach"):  # a PyTorch tensor
                    arr = arr.detach().cpu()
                if not isinstance(arr, np.ndarray) and backend.get_array_module(arr) is np:
                    arr = np.asarray(arr)
                new = backend.to_device(arr, target.device).astype(target.dtype, copy=False)
                backend.get_array_module(target.data).copyto(target.data, new)
                target._version[0] += 1
        return missing, unexpected

    # ------------------------------------------------------------------ printing
    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = []
        extra = self.extra_repr()
        for name, m in self._modules.items():
            sub = repr(m).replace("\n", "\n  ")
            lines.append(f"({name}): {sub}")
        if not lines:
            return f"{type(self).__name__}({extra})"
        body = "\n  ".join(([extra] if extra else []) + lines)
        return f"{type(self).__name__}(\n  {body}\n)"

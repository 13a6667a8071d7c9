"""``Module``: the base class of layers, with PyTorch's registration, traversal and state-dict API.

Registration works as in ``torch.nn.Module``: assigning a :class:`Parameter` or a ``Module`` to an
attribute records it in ``_parameters`` / ``_modules``; ``register_buffer`` records a non-learnable
tensor in ``_buffers``. Everything else (traversal, ``state_dict``, ``to``, ``zero_grad``,
``__repr__``) walks those three dictionaries, so the dotted names match PyTorch's exactly.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict

import numpy as np

from .. import backend
from ..tensor import Tensor
from .parameter import Parameter
from .state_dict import IncompatibleKeys, StateDictError, StateDictMixin  # noqa: F401 - re-exported


class RemovableHandle:
    """Returned by ``register_forward_hook``; ``handle.remove()`` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, hooks: OrderedDict):
        self._hooks = hooks
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


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
            p.grad._version[0] += 1


class Module(StateDictMixin):
    """Base class of every layer. Subclasses set attributes in ``__init__`` and define ``forward``.

    Assigning a :class:`Parameter` or a ``Module`` to an attribute registers it, so that
    ``parameters()``, ``state_dict()``, ``to()`` and ``zero_grad()`` reach it. Calling the module
    runs its forward pre-hooks, ``forward`` and its forward hooks (as ``torch.nn.Module.__call__``).
    """

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
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
                kind = "parameter" if name in self._parameters else "module"
                raise TypeError(
                    f"cannot assign {type(value).__name__} to {kind} {name!r}: expected a "
                    f"{'Parameter' if kind == 'parameter' else 'Module'} or None"
                )
            (self._parameters if name in self._parameters else self._modules)[name] = None
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name):
        for d in (self._parameters, self._buffers, self._modules):
            d.pop(name, None)
        self._non_persistent.discard(name)
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
                self._non_persistent.discard(name)
                return
        object.__delattr__(self, name)

    @staticmethod
    def _check_name(name, what: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{what} name must be a string, got {type(name).__name__}")
        if name == "" or "." in name:
            raise KeyError(f"{what} name can't be empty or contain '.', got {name!r}")

    def register_parameter(self, name: str, param) -> None:
        """Register ``param`` (a Parameter, or None for an absent optional one, e.g. ``bias=False``).

        Raises:
            TypeError: ``param`` is neither a Parameter nor None. KeyError: a name with ``.``.
        """
        self._check_name(name, "parameter")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"register_parameter: {name!r} must be a Parameter or None, got {type(param).__name__}")
        self._forget(name)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Register a non-learnable tensor (e.g. BatchNorm's ``running_mean``).

        A persistent buffer is saved in ``state_dict``; ``to()`` moves every buffer.

        Raises:
            TypeError: ``tensor`` is neither a Tensor nor None. KeyError: a name with ``.``.
        """
        self._check_name(name, "buffer")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"register_buffer: {name!r} must be a Tensor or None, got {type(tensor).__name__}")
        self._forget(name)
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent.add(name)

    def add_module(self, name: str, module) -> None:
        """Register ``module`` (or None) as the child ``name``."""
        self._check_name(name, "module")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module: {name!r} must be a Module or None, got {type(module).__name__}")
        self._forget(name)
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> "Module":
        """The submodule at dotted path ``target`` (``""`` is self); AttributeError names the missing part."""
        mod = self
        if target == "":
            return mod
        for i, part in enumerate(target.split(".")):
            child = mod._modules.get(part) if isinstance(mod, Module) else None
            if child is None:
                where = ".".join(target.split(".")[:i]) or "the root module"
                raise AttributeError(f"{type(mod).__name__} ({where}) has no submodule {part!r}")
            mod = child
        return mod

    # ------------------------------------------------------------------ forward and hooks
    def forward(self, *args, **kwargs):  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def register_forward_pre_hook(self, hook) -> RemovableHandle:
        """``hook(module, args)`` runs before ``forward``; a non-None result replaces ``args``."""
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        return handle

    def register_forward_hook(self, hook) -> RemovableHandle:
        """``hook(module, args, output)`` runs after ``forward``; a non-None result replaces the output."""
        handle = RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = hook
        return handle

    def __call__(self, *args, **kwargs):
        for hook in list(self._forward_pre_hooks.values()):
            new = hook(self, args)
            if new is not None:
                args = new if isinstance(new, tuple) else (new,)
        out = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            new = hook(self, args, out)
            if new is not None:
                out = new
        return out

    # ------------------------------------------------------------------ traversal
    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        """``(dotted name, module)`` for self (name ``""``) and every submodule, depth first."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(memo, f"{prefix}.{name}" if prefix else name, remove_duplicate)

    def modules(self):
        """Self and every submodule, each once."""
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        """``(name, module)`` for the direct children, each once."""
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        """The direct children, each once."""
        for _, m in self.named_children():
            yield m

    def _named_members(self, get, prefix, recurse):
        seen = set()
        mods = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
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
        """Every Parameter (each once), in registration order: what an optimizer takes."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True):
        """``(name, Tensor)`` for every buffer (persistent or not), each once."""
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse)

    def buffers(self, recurse: bool = True):
        """Every buffer (each once)."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ------------------------------------------------------------------ modes
    def train(self, mode: bool = True):
        """Set ``training`` on self and every submodule (Dropout and BatchNorm read it); returns self."""
        if not isinstance(mode, bool):
            raise ValueError(f"training mode is expected to be a bool, got {type(mode).__name__}")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        """``train(False)``: Dropout becomes the identity, BatchNorm uses its running statistics."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True):
        """Set ``requires_grad`` on every parameter (e.g. to freeze a module); returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's ``.grad``: to None (default, as PyTorch), or to zeros in place."""
        zero_grads(self.parameters(), set_to_none)

    def apply(self, fn):
        """Call ``fn(module)`` on every submodule (children first) and on self; returns self.

        The usual use is a custom initialisation: ``model.apply(init_weights)``.
        """
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------------ moving
    def to(self, *args, device=None, dtype=None):
        """Move parameters and buffers to a device and/or cast their floating point dtype, in place.

        ``to("cuda")``, ``to(float64)``, ``to("cpu", "float32")``, ``to(device=..., dtype=...)``.
        Integer buffers keep their dtype (as in PyTorch). The same Parameter objects are kept, so an
        optimizer made before ``to()`` still holds them.

        Raises:
            TypeError: a dtype that is not floating point, or an argument that is neither.
            DeviceError: an unknown device, or CUDA without CuPy/GPU.
        """
        for a in args:
            if isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, (str, backend.Device)) and not (isinstance(a, str) and a in backend._DTYPE_NAMES):
                device = a
            else:
                dtype = a
        dt = backend.as_dtype(dtype) if dtype is not None else None
        if dt is not None and dt.kind != "f":
            raise TypeError(f"Module.to only accepts floating point dtypes, got {dt}")
        dev = backend.device(device) if device is not None else None

        def convert(arr):
            if dt is not None and arr.dtype.kind == "f" and arr.dtype != dt:
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

    def cpu(self):
        """``to("cpu")``."""
        return self.to("cpu")

    def cuda(self, index: int = 0):
        """``to("cuda:index")`` (needs CuPy and a GPU)."""
        return self.to(f"cuda:{index}")

    # ------------------------------------------------------------------ printing
    def extra_repr(self) -> str:
        """One line (or several) of settings shown inside ``repr(module)``; override in layers."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        # The same layout as torch.nn.Module.__repr__, so printed models can be compared line by line.
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + repr(m).replace("\n", "\n  ") for name, m in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                body = extra_lines[0]
            else:
                body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"

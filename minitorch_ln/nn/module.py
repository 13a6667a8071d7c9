"""``Module``: the base class of layers, with PyTorch's registration, traversal and state-dict API.

Registration works as in ``torch.nn.Module``: assigning a :class:`Parameter` or a ``Module`` to an
attribute records it in ``_parameters`` / ``_modules``; ``register_buffer`` records a non-learnable
tensor in ``_buffers``. Everything else (traversal, ``state_dict``, ``to``, ``zero_grad``,
``__repr__``) walks those three dictionaries, so the dotted names match PyTorch's exactly. What acts
on the module's tensors as a whole (``state_dict``, ``to``/``float``/..., ``zero_grad``) is in
:mod:`.state_dict`.
"""

from __future__ import annotations

from collections import OrderedDict

from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor
from .hooks import RemovableHandle, _BackwardHookCall
from .parameter import Parameter
from .state_dict import IncompatibleKeys, StateDictError, StateDictMixin, zero_grads  # noqa: F401 - re-exported


# torch.nn.Module members not provided here (an AttributeError that says so and points to the docs)
_TORCH_ONLY = frozenset(("register_backward_hook", "register_state_dict_pre_hook", "register_state_dict_post_hook",
                         "register_load_state_dict_pre_hook", "register_load_state_dict_post_hook", "set_submodule",
                         "get_extra_state", "set_extra_state", "share_memory", "to_empty", "type", "ipu", "xpu", "mtia"))


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
        object.__setattr__(self, "_backward_hooks", OrderedDict())
        object.__setattr__(self, "_backward_pre_hooks", OrderedDict())
        object.__setattr__(self, "training", True)

    # ------------------------------------------------------------------ registration
    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {name!r} before Module.__init__() is called")
        if isinstance(value, Parameter):
            self._forget(name, keep=self._parameters)
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._forget(name, keep=self._modules)
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

    def _forget(self, name, keep=None):
        """Drop ``name`` from every registry but ``keep``, where re-assigning it keeps its place (as PyTorch:
        a re-assigned layer stays where it was in ``named_parameters()``, ``children()`` and a Sequential)."""
        for d in (self._parameters, self._buffers, self._modules):
            if d is not keep:
                d.pop(name, None)
        self._non_persistent.discard(name)
        self.__dict__.pop(name, None)

    def __getattr__(self, name):
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            if key in d and name in d[key]:
                return d[key][name]
        if name in _TORCH_ONLY:
            raise AttributeError(f"{type(self).__name__}.{name}: torch.nn.Module has it, minitorch_ln's Module "
                                 "does not; see docs/torch_compat.md")
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
        self._forget(name, keep=self._parameters)
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
        self._forget(name, keep=self._buffers)
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent.add(name)

    def add_module(self, name: str, module) -> None:
        """Register ``module`` (or None) as the child ``name``."""
        self._check_name(name, "module")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module: {name!r} must be a Module or None, got {type(module).__name__}")
        self._forget(name, keep=self._modules)
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

    def get_parameter(self, target: str) -> Parameter:
        """The Parameter at dotted path ``target`` (``"h.0.weight"``); AttributeError if none, as PyTorch's."""
        return self._get_member(target, "_parameters", "an nn.Parameter")

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target`` (``"h.0.attn.bias"``); AttributeError if none, as PyTorch's."""
        return self._get_member(target, "_buffers", "a buffer")

    def _get_member(self, target: str, kind: str, what: str):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        if name not in getattr(mod, kind):
            raise AttributeError(f"`{name}` is not {what}")
        return getattr(mod, kind)[name]

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

    def register_full_backward_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` runs when the gradients of the module's inputs are
        computed; a non-None result replaces ``grad_input``. PyTorch's rules: one ``grad_input`` entry
        per positional argument (None for a non-Tensor or one needing no gradient), one ``grad_output``
        per Tensor output; no input needing a gradient fires it with ``grad_input`` all None once
        ``grad_output`` is known; no output needing one never fires it. ``forward`` then gets (and the
        caller gets back) copies of the Tensors passed in (out), through an identity node in the graph.
        """
        return self._add_hook(self._backward_hooks, hook, prepend)

    def register_full_backward_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` runs when the gradients of the module's outputs are known,
        before those of its inputs; a non-None result replaces ``grad_output``."""
        return self._add_hook(self._backward_pre_hooks, hook, prepend)

    @staticmethod
    def _add_hook(hooks: OrderedDict, hook, prepend: bool) -> RemovableHandle:
        if not callable(hook):
            raise TypeError(f"a hook must be callable, got {type(hook).__name__}")
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def __call__(self, *args, **kwargs):
        for hook in list(self._forward_pre_hooks.values()):
            new = hook(self, args)
            if new is not None:
                args = new if isinstance(new, tuple) else (new,)
        call = None
        if (self._backward_hooks or self._backward_pre_hooks) and is_grad_enabled():
            call = _BackwardHookCall(self, args)
            args = call.wrap_inputs(args)
        out = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            new = hook(self, args, out)
            if new is not None:
                out = new
        return call.wrap_outputs(out) if call is not None else out

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

    def _named_members(self, get, prefix, recurse, remove_duplicate=True):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mod_prefix, m in mods:
            for name, v in get(m):
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                seen.add(id(v))
                yield (f"{mod_prefix}.{name}" if mod_prefix else name), v

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """``(name, Parameter)`` pairs; a parameter shared by two modules (weight tying) appears once,
        under its first name, unless ``remove_duplicate=False``."""
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True):
        """Every Parameter (each once), in registration order: what an optimizer takes."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """``(name, Tensor)`` for every buffer (persistent or not), each once unless ``remove_duplicate=False``."""
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

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

    def apply(self, fn):
        """Call ``fn(module)`` on every submodule (children first) and on self; returns self.

        The usual use is a custom initialisation: ``model.apply(init_weights)``.
        """
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

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

"""Tensor gradient hooks: ``Tensor.register_hook`` (``hook(grad)`` when the gradient is computed),
``Tensor.retain_grad`` (a hook keeping a non-leaf's gradient) and ``Tensor.register_post_accumulate_grad_hook``:
call ``hook(leaf)`` once the leaf's ``.grad`` is updated.

As PyTorch's (2.1+): registered on a leaf that requires grad; the engine calls the hooks, in the
order they were registered, right after it added this backward's gradient into ``leaf.grad``
(``autograd/engine.py``), once per backward pass however often the leaf was used. The hook gets the
leaf, reads or changes ``leaf.grad`` in place, and returns None. ``torch.autograd.grad`` (which
leaves ``.grad`` alone) calls none. DistributedDataParallel reduces gradients through these hooks.
"""

from __future__ import annotations

import itertools
import weakref

from .. import backend
from . import function as _function

__all__ = ["register_hook", "register_post_accumulate_grad_hook", "retain_grad", "RemovableHandle", "ListHookHandle",
           "check_hook_result", "check_post_accumulate_result"]

class RemovableHandle:
    """What a hook registration returns (this one and the Module hooks of ``nn/hooks.py``): ``handle.remove()``
    unregisters the hook from ``hooks`` (a dict keyed by ``handle.id``); also a context manager that removes it."""

    _ids = itertools.count()

    def __init__(self, hooks: dict):
        self._hooks = hooks
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class ListHookHandle(RemovableHandle):
    """What ``Tensor.register_hook`` returns: ``remove()`` takes this registration's hook out of the list of
    gradient hooks it was appended to (found by identity, so the same function registered twice is two
    registrations), once; a context manager too. PyTorch's is the same ``RemovableHandle`` class."""

    def __init__(self, hooks: list, hook):
        super().__init__({})
        self._list, self._hook = hooks, hook

    def remove(self) -> None:
        if self._list is None:
            return
        for i, h in enumerate(self._list):
            if h is self._hook:
                del self._list[i]
                break
        self._list = self._hook = None


def register_post_accumulate_grad_hook(self, hook) -> RemovableHandle:
    """Register ``hook(tensor) -> None``, called after the gradient is accumulated into ``self.grad``.

    Raises RuntimeError on a tensor that does not require grad or is not a leaf (as PyTorch).
    """
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if not self.is_leaf:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not callable(hook):
        raise TypeError(f"hook must be callable, got {type(hook).__name__}")
    if self._post_accumulate_hooks is None:
        self._post_accumulate_hooks = {}
    handle = RemovableHandle(self._post_accumulate_hooks)
    self._post_accumulate_hooks[handle.id] = hook
    return handle


def register_hook(self, hook):
    """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor replaces it.

    Returns a handle whose ``remove()`` unregisters the hook (``autograd/post_accumulate.py``), as PyTorch's.
    Raises RuntimeError on a tensor that does not require grad, TypeError when ``hook`` is not callable.
    """
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if not callable(hook):
        raise TypeError(f"register_hook: expected a callable hook(grad), got {type(hook).__name__}")
    if self.is_leaf:
        if self._leaf_hooks is None:
            self._leaf_hooks = {0: []}
            acc = self._accumulator
            if acc is not None:
                acc._pre_hooks = self._leaf_hooks
        hooks = self._leaf_hooks[0]
        hooks.append(hook)
    else:
        self._grad_fn.register_pre_hook(self._output_nr, hook)
        hooks = self._grad_fn._pre_hooks[self._output_nr]
    return ListHookHandle(hooks, hook)


def _hook_name(hook) -> str:
    """PyTorch's name of a hook in its errors: its ``__name__``, else ``'<unknown>'`` (a callable object)."""
    name = getattr(hook, "__name__", None)
    return name if isinstance(name, str) else "<unknown>"


def _type_name(t) -> str:
    """``'torch.FloatTensor'``, ``'torch.cuda.DoubleTensor'``: PyTorch's ``Tensor.type()`` string."""
    cuda = "cuda." if t.device.type == "cuda" else ""
    return f"torch.{cuda}{backend.torch_type_name(t.dtype)}Tensor"


def check_hook_result(hook, original, result) -> None:
    """Raise, as PyTorch's ``check_single_result``, when a gradient hook's return value can't replace ``original``.

    ``result`` must be a Tensor (TypeError: "expected Variable, but hook returned 'int'") of ``original``'s
    dtype and device (RuntimeError: "hook 'h' has changed the type of value (was torch.FloatTensor got
    torch.DoubleTensor)") and shape (RuntimeError: "hook 'h' has changed the size of value"). Without this, a
    hook returning another dtype silently changed the dtype of every gradient after it, and one of another
    shape failed later in the next node's backward, naming that node.
    """
    if not isinstance(result, _function.Tensor):
        raise TypeError(f"expected Variable, but hook returned '{_qualified_type(result)}' (a gradient hook must "
                        "return a Tensor or None)")
    if result.dtype != original.dtype or result.device.type != original.device.type:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the type of value (was {_type_name(original)} "
                           f"got {_type_name(result)})")
    if result.shape != original.shape:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value (was {tuple(original.shape)} "
                           f"got {tuple(result.shape)})")


def check_post_accumulate_result(hook, leaf, result) -> None:
    """Raise when a post-accumulate-grad hook returned something (PyTorch: it must return None; a value
    is checked against the leaf first, so a Tensor of another size or type gets that error instead)."""
    check_hook_result(hook, leaf, result)
    raise RuntimeError(f"Tensor post accumulate grad hooks should return None. (Hook '{_hook_name(hook)}' returned a "
                       f"Tensor of shape {tuple(result.shape)}; change leaf.grad in place instead.)")


def _qualified_type(value) -> str:
    cls = type(value)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"


def retain_grad(self) -> None:
    """Keep this non-leaf tensor's gradient in ``.grad`` after backward.

    The gradient kept is that of the tensor's latest version: after an in-place change the
    hook moves to the new ``grad_fn``. ``.grad`` is a copy, never the buffer flowing on, taken
    after the tensor's ``register_hook`` hooks have run (registered before or after this call).
    """
    if not self.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self.is_leaf or self._retains_grad:
        return
    ref = weakref.ref(self)

    def store(g):
        t = ref()
        if t is not None:
            t._grad = g.clone() if t._grad is None else t._grad + g  # g matches t: no setter checks
        return None

    store._retains_grad = True  # runs after the tensor's other hooks (Node.register_pre_hook), as PyTorch's
    self._grad_fn.register_pre_hook(self._output_nr, store)
    self._retain_hook = store
    self._retains_grad = True

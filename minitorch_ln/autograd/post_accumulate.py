"""``Tensor.register_post_accumulate_grad_hook``: call ``hook(leaf)`` once the leaf's ``.grad`` is updated.

As PyTorch's (2.1+): registered on a leaf that requires grad; the engine calls the hooks, in the
order they were registered, right after it added this backward's gradient into ``leaf.grad``
(``autograd/engine.py``), once per backward pass however often the leaf was used. The hook gets the
leaf, reads or changes ``leaf.grad`` in place, and returns None. ``torch.autograd.grad`` (which
leaves ``.grad`` alone) calls none. DistributedDataParallel reduces gradients through these hooks.
"""

from __future__ import annotations

import itertools

__all__ = ["register_post_accumulate_grad_hook"]

_ids = itertools.count()


class PostAccumulateHandle:
    """What the registration returns: ``handle.remove()`` unregisters the hook."""

    def __init__(self, hooks: dict, key: int):
        self._hooks, self.id = hooks, key

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_post_accumulate_grad_hook(self, hook) -> PostAccumulateHandle:
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
    key = next(_ids)
    self._post_accumulate_hooks[key] = hook
    return PostAccumulateHandle(self._post_accumulate_hooks, key)

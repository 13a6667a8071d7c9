"""The allow-list of ``torch.serialization``: ``add_safe_globals``, ``safe_globals``,
``get_safe_globals``, ``clear_safe_globals``, as PyTorch 2.13's.

Scripts written for ``torch.load(..., weights_only=True)`` register the classes their checkpoints
hold (``torch.serialization.add_safe_globals([MyConfig])``); the calls work here, with PyTorch's
arguments and errors, and the list reads back as registered. :func:`minitorch_ln.load` reads
``torch.save`` files through an allow-listed unpickler (:mod:`minitorch_ln.torch_format.unpickler`)
that consults this list, as PyTorch's weights-only load does; its own safetensors files need none.
"""

from __future__ import annotations

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals"]

_marked: set = set()


def add_safe_globals(safe_globals) -> None:
    """Mark ``safe_globals`` (a list of classes/functions, or ``(obj, "module.Name")`` pairs) as safe.

    Raises TypeError when ``safe_globals`` is not iterable (``add_safe_globals(MyClass)``).
    """
    _marked.update(safe_globals)


def get_safe_globals() -> list:
    """The globals marked safe so far (in no particular order, as PyTorch's)."""
    return list(_marked)


def clear_safe_globals() -> None:
    """Forget every global :func:`add_safe_globals` marked."""
    _marked.clear()


class safe_globals:  # noqa: N801 - PyTorch's name
    """``with safe_globals([MyClass]):`` marks the globals inside the block only (as PyTorch's)."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        self._before = set(_marked)
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        _marked.clear()
        _marked.update(self._before)
        return False

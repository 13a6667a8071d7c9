"""``minitorch_ln.signal``: the ``torch.signal`` namespace (its ``windows`` submodule)."""

from . import windows

__all__ = ["windows"]

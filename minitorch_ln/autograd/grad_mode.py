"""``no_grad`` and ``enable_grad``: switch graph recording off and on (context managers and decorators)."""

from __future__ import annotations

import functools
import threading


class _GradState(threading.local):
    """Whether graph recording is on, per thread (as in PyTorch): a ``no_grad`` block in one
    thread does not switch recording off in the others. Every new thread starts with it on."""

    enabled = True


_state = _GradState()


def is_grad_enabled() -> bool:
    return _state.enabled


def set_grad_enabled(mode: bool) -> None:
    """Switch graph recording on or off in the calling thread."""
    _state.enabled = bool(mode)


class _GradMode:
    _mode: bool

    def __enter__(self):
        self._prev = _state.enabled
        _state.enabled = self._mode
        return self

    def __exit__(self, *exc):
        _state.enabled = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradMode):
    """Operations inside record no graph: results have ``requires_grad=False``."""

    _mode = False


class enable_grad(_GradMode):
    """Re-enable graph recording inside a ``no_grad`` block."""

    _mode = True

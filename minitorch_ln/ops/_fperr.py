"""NumPy's floating-point warnings off around a few ufunc calls, at a fraction of ``np.errstate``'s cost.

Ops whose results PyTorch defines at the points where NumPy warns (``log(0) = -inf``, ``x / 0 = inf``,
``exp(100) = inf`` in float32) compute under ``errstate(... "ignore")``. Entering and leaving an
``np.errstate`` costs about 1.2 µs (it builds its state object from keyword arguments each time), as
much as the ufunc on a small array; in Python loops over 0-d tensors that was a fifth of ``log``'s time
(issue 26). Here the "all ignored" state is built once per state it replaces (NumPy keeps the state in
a context variable, so threads and asyncio tasks each keep their own) and set and reset directly::

    with Quiet():
        y = np.log(x)

Every floating-point error is ignored, not only the ones an op can raise: used only around ufuncs whose
possible errors are all to be ignored. Other settings of the state (``np.setbufsize``) are kept. When
NumPy's private names are missing (another NumPy version), ``np.errstate(all="ignore")`` is used.
"""

from __future__ import annotations

import numpy as np

try:  # NumPy 2.x keeps the ufunc state in this context variable
    from numpy._core._ufunc_config import _extobj_contextvar as _STATE, _make_extobj
except ImportError:  # pragma: no cover - another NumPy layout: the public, slower form
    _STATE = _make_extobj = None

_quiet_for: dict = {}  # the caller's state -> the same state with every error ignored


def quiet():
    """Ignore NumPy's floating-point errors until :func:`restore` is called with the returned token."""
    if _STATE is None:  # pragma: no cover
        token = np.errstate(all="ignore")
        token.__enter__()
        return token
    current = _STATE.get()
    q = _quiet_for.get(current)
    if q is None:
        if len(_quiet_for) >= 64:  # states made by a user's errstate blocks come and go: keep a few
            _quiet_for.clear()
        q = _quiet_for[current] = _make_extobj(all="ignore")
    return _STATE.set(q)


def restore(token) -> None:
    """Put back the floating-point error state that :func:`quiet` replaced."""
    if _STATE is None:  # pragma: no cover
        token.__exit__(None, None, None)
    else:
        _STATE.reset(token)


class Quiet:
    """``with Quiet():`` ignores NumPy's floating-point errors inside (a fresh object each time): :func:`quiet` and
    :func:`restore`, inlined (two calls fewer per op)."""

    __slots__ = ("token",)

    def __enter__(self):
        if _STATE is None:  # pragma: no cover
            self.token = quiet()
            return
        current = _STATE.get()
        q = _quiet_for.get(current)
        if q is None:
            if len(_quiet_for) >= 64:
                _quiet_for.clear()
            q = _quiet_for[current] = _make_extobj(all="ignore")
        self.token = _STATE.set(q)

    def __exit__(self, *exc_info):
        if _STATE is None:  # pragma: no cover
            restore(self.token)
        else:
            _STATE.reset(self.token)

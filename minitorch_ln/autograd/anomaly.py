"""``detect_anomaly``: find the op whose backward first produced a NaN or an infinity.

In forward, every recorded node remembers the line of user code that created it and its input
shapes; in backward, each node's gradients are checked and the first non-finite one raises
:class:`AnomalyError` naming the op, its input shapes and that line.
"""

from __future__ import annotations

import os
import traceback

from .. import backend
from .function import _anomaly

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class AnomalyError(RuntimeError):
    """A backward produced a NaN or an infinite gradient under ``detect_anomaly``."""

    def __init__(self, message, node=None):
        super().__init__(message)
        self.node = node


class detect_anomaly:
    """Context manager (and decorator) that turns NaN/Inf gradients into an error naming the op."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan

    def __enter__(self):
        self._prev = _anomaly["enabled"]
        _anomaly["enabled"] = self.check_nan
        return self

    def __exit__(self, *exc):
        _anomaly["enabled"] = self._prev
        return False

    def __call__(self, fn):
        import functools  # noqa: PLC0415

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)

        return wrapper


def is_anomaly_enabled() -> bool:
    return _anomaly["enabled"]


def _user_frame():
    """The innermost stack frame outside this package: the user's line that created an op."""
    for frame in reversed(traceback.extract_stack()[:-2]):
        if not os.path.abspath(frame.filename).startswith(_PACKAGE_DIR):
            return frame
    return None


def record_creation(node, args):
    from ..tensor import Tensor  # noqa: PLC0415

    frame = _user_frame()
    node.creation_trace = {
        "where": f"{frame.filename}:{frame.lineno}" if frame else "<unknown>",
        "code": (frame.line or "").strip() if frame else "",
        "input_shapes": [tuple(a.shape) if isinstance(a, Tensor) else type(a).__name__ for a in args],
    }


def check_gradients(node, results):
    from ..tensor import Tensor  # noqa: PLC0415

    for i, g in enumerate(results):
        if g is None:
            continue
        data = g.data if isinstance(g, Tensor) else g
        xp = backend.get_array_module(data)
        if data.dtype.kind == "f" and not bool(xp.isfinite(data).all()):
            bad = "NaN" if bool(xp.isnan(data).any()) else "Inf"
            trace = node.creation_trace or {}
            raise AnomalyError(
                f"Function '{node.name()}' returned {bad} values in its gradient for input {i}.\n"
                f"  op: {node.fn.__name__ if node.fn else node.name()}, input shapes: {trace.get('input_shapes')}\n"
                f"  created at: {trace.get('where', '<record with detect_anomaly() during forward>')}\n"
                f"      {trace.get('code', '')}",
                node=node,
            )

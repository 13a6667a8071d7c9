"""``with tracing(fn):``: see every op a block of code runs (ONNX export records a forward with it).

``fn(cls, ctx, args, kwargs, out)`` is called after every ``Function.apply`` — also for ops on
tensors that need no gradient, for constants, and under ``no_grad`` — with the Function class, its
ctx, the arguments as given (Tensors, raw arrays, Python values) and the output (a Tensor, or a
tuple of them for a multi-output op). It is off by default; ``Function.apply`` then pays one
global read. Traces do not nest.

``on_write(target, result)``, when given, is called after an in-place op (``Tensor._inplace``) wrote
``result``'s values into ``target``; while a trace runs, the in-place fast paths that write without
an op (``x += 1`` on a NumPy array, ``x[i] = v`` with no grad) take the op path, so every write is
either seen here or shows only as a bumped version counter (``Tensor._version``).
"""

from __future__ import annotations

from . import function

_on_write = None


def active() -> bool:
    """True while a trace runs (the in-place fast paths then step aside)."""
    return function._tracer is not None


def notify_write(target, result) -> None:
    """Called by ``Tensor._inplace`` after writing ``result`` into ``target`` (a no-op unless traced)."""
    if _on_write is not None:
        _on_write(target, result)


class tracing:
    def __init__(self, fn, on_write=None):
        self.fn, self.on_write = fn, on_write

    def __enter__(self):
        if function._tracer is not None:
            raise RuntimeError("autograd tracing: another trace is already running (traces do not nest)")
        global _on_write
        function._tracer, _on_write = self.fn, self.on_write
        return self

    def __exit__(self, *exc):
        global _on_write
        function._tracer, _on_write = None, None
        return False

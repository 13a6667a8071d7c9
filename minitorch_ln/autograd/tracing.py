"""``with tracing(fn):``: see every op a block of code runs (ONNX export records a forward with it).

``fn(cls, ctx, args, kwargs, out)`` is called after every ``Function.apply`` — also for ops on
tensors that need no gradient, for constants, and under ``no_grad`` — with the Function class, its
ctx, the arguments as given (Tensors, raw arrays, Python values) and the output (a Tensor, or a
tuple of them for a multi-output op). It is off by default; ``Function.apply`` then pays one
global read. Traces do not nest.
"""

from __future__ import annotations

from . import function


class tracing:
    def __init__(self, fn):
        self.fn = fn

    def __enter__(self):
        if function._tracer is not None:
            raise RuntimeError("autograd tracing: another trace is already running (traces do not nest)")
        function._tracer = self.fn
        return self

    def __exit__(self, *exc):
        function._tracer = None
        return False

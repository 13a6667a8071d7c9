"""Recording the ops one forward runs, for ONNX export.

:func:`record` runs ``model(*args)`` once under :class:`~minitorch_ln.autograd.function.tracing`,
which calls back after every ``Function.apply`` — also for tensors that need no gradient and under
``no_grad`` — so the record holds every op with its Function class, its arguments (Tensors and the
Python values the op was given) and its output Tensors. Forward pre/post hooks on every submodule
give each op the dotted path of the module it ran in (for error messages), and let a module whose
ONNX operator is a whole layer (``nn.LSTM`` → ``LSTM``, ``nn.BatchNorm2d`` in eval →
``BatchNormalization``) be recorded as one op: the ops inside it are not recorded.

The record keeps every Tensor it saw alive, so ``id(tensor)`` names one value for the whole export.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..autograd.grad_mode import no_grad
from ..autograd.tracing import tracing
from ..tensor import Tensor


@dataclass
class OpRecord:
    """One op of the forward: ``fn`` is a Function class, or a Module class for a layer-level op."""

    fn: type
    ctx: object  # the Function's ctx (Node), or the module itself for a layer-level op
    args: tuple
    kwargs: dict
    outputs: tuple  # Tensors
    path: str  # dotted module path ("" for the top module)
    module_type: str = ""  # the class name of the innermost module

    @property
    def name(self) -> str:
        return getattr(self.fn, "__name__", str(self.fn))

    def where(self) -> str:
        return f"module '{self.path or '<top>'}' ({self.module_type})" if self.module_type else "the top-level forward"


@dataclass
class Trace:
    """The ops of one forward, its input Tensors, flat output Tensors and the output structure."""

    records: list = field(default_factory=list)
    inputs: tuple = ()
    outputs: tuple = ()
    keep: list = field(default_factory=list)  # everything seen, kept alive so ids stay unique


def flatten_outputs(out, what: str = "the model's output") -> tuple:
    """The Tensors of a forward's result (a Tensor or nested tuples/lists of them; None dropped)."""
    if isinstance(out, Tensor):
        return (out,)
    if isinstance(out, (tuple, list)):
        flat = []
        for o in out:
            if o is not None:
                flat += flatten_outputs(o, what)
        return tuple(flat)
    raise TypeError(f"ONNX export: {what} must be a Tensor or a tuple/list of Tensors, got {type(out).__name__}")


def flatten_inputs(args) -> tuple:
    """The Tensors of a forward's arguments, nested tuples/lists (an RNN's ``(h, c)``) flattened in order."""
    flat = []
    for a in args:
        if isinstance(a, Tensor):
            flat.append(a)
        elif isinstance(a, (tuple, list)):
            flat += flatten_inputs(a)
    return tuple(flat)


def replace_inputs(args, new: list):
    """``args`` with its Tensors, in :func:`flatten_inputs` order, replaced by ``new`` (consumed)."""
    out = []
    for a in args:
        if isinstance(a, Tensor):
            out.append(new.pop(0))
        elif isinstance(a, (tuple, list)):
            out.append(type(a)(replace_inputs(a, new)))
        else:
            out.append(a)
    return tuple(out)


class _Recorder:
    def __init__(self, layer_ops, trace: Trace):
        self.layer_ops = layer_ops  # {Module class: predicate(module) -> bool}
        self.trace = trace
        self.stack = [("", "")]  # (path, module type name)
        self.inside_layer = 0

    def on_op(self, cls, ctx, args, kwargs, out):
        if self.inside_layer:
            return
        outs = out if isinstance(out, tuple) else (out,)
        path, mtype = self.stack[-1]
        self.trace.records.append(OpRecord(cls, ctx, tuple(args), dict(kwargs), outs, path, mtype))
        self.trace.keep.append((args, outs))

    def pre_hook(self, path):
        def hook(module, args):
            self.stack.append((path, type(module).__name__))
            if self.inside_layer:
                self.inside_layer += 1
            elif _is_layer_op(self.layer_ops, module):
                self.inside_layer = 1
        return hook

    def post_hook(self, path):
        def hook(module, args, out):
            self.stack.pop()
            if not self.inside_layer:
                return
            self.inside_layer -= 1
            if self.inside_layer == 0:  # the layer-level op ends here: one record for the module
                outs = flatten_outputs(out, f"{type(module).__name__}'s output")
                self.trace.records.append(OpRecord(type(module), module, tuple(args), {}, outs, path,
                                                   type(module).__name__))
                self.trace.keep.append((args, outs))
        return hook


def _is_layer_op(layer_ops, module) -> bool:
    pred = layer_ops.get(type(module))
    return pred is not None and pred(module)


def record(model, args: tuple, kwargs: dict, layer_ops: dict) -> Trace:
    """Run ``model(*args, **kwargs)`` once without grad and return its :class:`Trace`."""
    trace = Trace(inputs=flatten_inputs(args))
    rec = _Recorder(layer_ops, trace)
    handles = []
    named = model.named_modules() if hasattr(model, "named_modules") else []
    try:
        for path, module in named:
            handles.append(module.register_forward_pre_hook(rec.pre_hook(path)))
            handles.append(module.register_forward_hook(rec.post_hook(path)))
        with no_grad(), tracing(rec.on_op):
            out = model(*args, **kwargs)
    finally:
        for h in handles:
            h.remove()
    trace.outputs = flatten_outputs(out)
    trace.keep.append((args, out))
    return trace

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

import inspect
from dataclasses import dataclass, field

from ..autograd.grad_mode import no_grad
from ..autograd.tracing import tracing
from ..tensor import Tensor
from .errors import OnnxExporterError


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
    uses: tuple = ()  # (Tensor, its version counter when the op read it), nested arguments included
    out_versions: tuple = ()  # each output's version counter when the op made it

    @property
    def name(self) -> str:
        return getattr(self.fn, "__name__", str(self.fn))

    def where(self) -> str:
        return f"module '{self.path or '<top>'}' ({self.module_type})" if self.module_type else "the top-level forward"


class InPlaceWrite:
    """The record of an in-place op's write: ``args[0]`` (the op's result) now is ``outputs[0]``'s value."""


def _uses(args) -> tuple:
    out = []
    for a in args:
        if isinstance(a, Tensor):
            out.append((a, a._version[0]))
        elif isinstance(a, (tuple, list)):
            out += _uses(a)
        elif isinstance(a, dict):
            out += _uses(tuple(a.values()))
    return tuple(out)


def _record(fn, ctx, args, kwargs, outs, path, mtype) -> OpRecord:
    """``out_versions`` is filled in at the next event (:meth:`_Recorder.settle`): a view op's output
    joins its base's version counter only after ``Function.apply`` returns."""
    return OpRecord(fn, ctx, tuple(args), dict(kwargs), outs, path, mtype, _uses(tuple(args) + (kwargs,)))


@dataclass
class Trace:
    """The ops of one forward, its input Tensors, flat output Tensors and the output structure."""

    records: list = field(default_factory=list)
    inputs: tuple = ()
    outputs: tuple = ()
    keep: list = field(default_factory=list)  # everything seen, kept alive so ids stay unique
    start_versions: dict = field(default_factory=dict)  # id(input or parameter) -> version before the forward
    end_versions: dict = field(default_factory=dict)  # id(every Tensor an op read) -> version after the forward


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
        self.call_kwargs = {}  # id(layer-op module) -> the keyword arguments of its running call

    def settle(self):
        """Note the version counters of the latest record's outputs (their values as that op made them)."""
        if self.trace.records and not self.trace.records[-1].out_versions:
            rec = self.trace.records[-1]
            rec.out_versions = tuple(o._version[0] for o in rec.outputs)

    def on_op(self, cls, ctx, args, kwargs, out):
        self.settle()
        if self.inside_layer:
            return
        outs = out if isinstance(out, tuple) else (out,)
        path, mtype = self.stack[-1]
        self.trace.records.append(_record(cls, ctx, args, kwargs, outs, path, mtype))
        self.trace.keep.append((args, outs))

    def on_write(self, target, result):
        """An in-place op wrote ``result`` into ``target``: later reads of ``target`` are ``result``'s value.
        A write into a view also changes its base, which no record expresses: not recorded, so the
        bumped version counter makes the exporter refuse any later read of either."""
        self.settle()
        if self.inside_layer or target._base is not None:
            return
        path, mtype = self.stack[-1]
        self.trace.records.append(_record(InPlaceWrite, None, (result,), {}, (target,), path, mtype))
        self.trace.keep.append((result, target))

    def pre_hook(self, path):
        def hook(module, args):
            self.settle()
            self.stack.append((path, type(module).__name__))
            if self.inside_layer:
                self.inside_layer += 1
            elif _is_layer_op(self.layer_ops, module):
                self.inside_layer = 1
        return hook

    def post_hook(self, path):
        def hook(module, args, out):
            self.settle()
            self.stack.pop()
            if not self.inside_layer:
                return
            self.inside_layer -= 1
            if self.inside_layer == 0:  # the layer-level op ends here: one record for the module
                args = _positional(module, args, self.call_kwargs.pop(id(module), {}), path)
                outs = flatten_outputs(out, f"{type(module).__name__}'s output")
                self.trace.records.append(_record(type(module), module, args, {}, outs, path,
                                                  type(module).__name__))
                self.trace.keep.append((args, outs))
        return hook


def _positional(module, args, kwargs, path):
    """A layer-level op's arguments, its keyword arguments (``lstm(x, hx=(h, c))``) moved into place."""
    if not kwargs:
        return tuple(args)
    try:
        bound = inspect.signature(type(module).forward).bind(module, *args, **kwargs)
    except TypeError as e:
        raise OnnxExporterError(f"ONNX export: module '{path or '<top>'}' ({type(module).__name__}): its "
                                f"arguments do not fit its forward ({e})") from e
    if bound.kwargs:
        raise OnnxExporterError(f"ONNX export: module '{path or '<top>'}' ({type(module).__name__}) exported as "
                                f"one node got keyword-only arguments {sorted(bound.kwargs)}; pass them positionally")
    return tuple(bound.args[1:])


def _capture_kwargs(rec, module):
    """Wrap ``module.forward`` (on the instance, undone after the trace) so the recorder sees its
    keyword arguments, which forward pre-hooks are not given."""
    forward = module.forward

    def wrapped(*args, **kwargs):
        rec.call_kwargs[id(module)] = kwargs
        return forward(*args, **kwargs)
    object.__setattr__(module, "forward", wrapped)


def _check_hooks(layer_ops, named) -> None:
    for path, module in named:
        if _is_layer_op(layer_ops, module) and (module._forward_hooks or module._forward_pre_hooks):
            raise OnnxExporterError(
                f"ONNX export: module '{path or '<top>'}' ({type(module).__name__}) has forward hooks or forward "
                "pre-hooks, and it is exported as one ONNX node, which cannot run them; remove the hooks "
                "(handle.remove()) or move what they compute into a forward")


def _is_layer_op(layer_ops, module) -> bool:
    pred = layer_ops.get(type(module))
    return pred is not None and pred(module)


def record(model, args: tuple, kwargs: dict, layer_ops: dict) -> Trace:
    """Run ``model(*args, **kwargs)`` once without grad and return its :class:`Trace`."""
    trace = Trace(inputs=flatten_inputs(args))
    rec = _Recorder(layer_ops, trace)
    handles = []
    named = list(model.named_modules()) if hasattr(model, "named_modules") else []
    _check_hooks(layer_ops, named)
    wrapped = []
    for t in trace.inputs:
        trace.start_versions[id(t)] = t._version[0]
    if hasattr(model, "named_parameters"):
        for _, p in list(model.named_parameters()) + list(model.named_buffers()):
            if p is not None:
                trace.start_versions[id(p)] = p._version[0]
    try:
        for path, module in named:
            if _is_layer_op(layer_ops, module) and "forward" not in module.__dict__:
                _capture_kwargs(rec, module)
                wrapped.append(module)
            handles.append(module.register_forward_pre_hook(rec.pre_hook(path)))
            handles.append(module.register_forward_hook(rec.post_hook(path)))
        with no_grad(), tracing(rec.on_op, rec.on_write):
            out = model(*args, **kwargs)
    finally:
        for h in handles:
            h.remove()
        for module in wrapped:
            object.__delattr__(module, "forward")
    rec.settle()
    trace.outputs = flatten_outputs(out)
    trace.end_versions = {id(t): t._version[0] for r in trace.records for t, _ in r.uses}
    trace.keep.append((args, out))
    return trace

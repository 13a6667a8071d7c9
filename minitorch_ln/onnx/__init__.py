"""``minitorch_ln.onnx`` (``torch.onnx`` under the alias): export a model to ONNX by tracing its forward.

:func:`export` runs the forward on the example inputs with op recording on (every
``Function.apply`` is seen, see :mod:`.trace`), maps each recorded op to ONNX operators
(:mod:`.mapping`), stores parameters and buffers as initializers under their ``state_dict`` names
and writes the model. With ``dynamic_axes`` the forward is traced again with those axes resized, and
every size that changes is computed in the graph from the inputs' shapes, never baked in. How it
works, the op table and what is refused: ``docs/onnx.md``.

Needs the optional ``onnx`` package (``pip install 'minitorch-ln[onnx]'``, which also brings
``onnxruntime`` to run the result).
"""

from __future__ import annotations

import enum
import inspect
import os

import numpy as np

from ..tensor import Tensor
from ._dep import require_onnx as _require_onnx
from .errors import OnnxExporterError, UnsupportedOperatorError
from .trace import flatten_inputs, replace_inputs

__all__ = ["OnnxExporterError", "TrainingMode", "UnsupportedOperatorError", "dynamo_export", "export",
           "is_in_onnx_export"]


class TrainingMode(enum.IntEnum):
    """``torch.onnx.TrainingMode``: the mode ``export(training=)`` runs the forward in."""

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2

DEFAULT_OPSET = 18
MIN_OPSET = 17
_state = {"exporting": False}


def is_in_onnx_export() -> bool:
    """True while :func:`export` runs the model's forward, as in PyTorch."""
    return _state["exporting"]


def dynamo_export(model, *args, **kwargs):
    """``torch.onnx.dynamo_export``: not provided; use :func:`export` (the traced exporter)."""
    raise NotImplementedError("torch.onnx.dynamo_export is not provided by minitorch_ln; "
                              "use torch.onnx.export (minitorch_ln.onnx.export), which traces the forward")


def export(model, args=(), f=None, *, kwargs=None, export_params: bool = True, verbose=None,
           input_names=None, output_names=None, opset_version: int | None = None, dynamic_axes=None,
           keep_initializers_as_inputs: bool = False, training=None, do_constant_folding: bool = True,
           dynamo: bool = False, check: bool = True, **unsupported):
    """Export ``model`` to ONNX, as ``torch.onnx.export`` (its TorchScript-era arguments).

    Args:
        model: a ``Module`` (or a callable) taking Tensors.
        args: the example inputs: a Tensor or a tuple of them (a trailing dict is keyword arguments,
            as in PyTorch).
        f: a path or a binary file object to write the model to; None returns the ``ModelProto`` only.
        input_names / output_names: graph input and output names (default: the forward's argument
            names, and ``output`` / ``output_0``...).
        opset_version: the ONNX opset, 17 (the first with LayerNormalization) or later; default 18.
        dynamic_axes: ``{name: [axis, ...]}`` or ``{name: {axis: "symbol"}}`` for inputs and outputs.
            Axes with one symbol (or, in list form, the same example size) are resized together.
        export_params: store parameters as initializers (always; False is refused).
        keep_initializers_as_inputs: also list the initializers as graph inputs.
        training: ``TrainingMode.EVAL`` (default; also None or False), ``PRESERVE`` (the model's own
            mode) or ``TRAINING`` (also True): the mode the forward runs in; in training mode dropout
            and batch statistics are refused.
        check: run ``onnx.checker.check_model(full_check=True)`` on the result (default True).

    Returns:
        The ``onnx.ModelProto``.

    Raises:
        ImportError: ``onnx`` is not installed (saying how to install it).
        UnsupportedOperatorError: an op with no ONNX mapping (naming it and the module it ran in).
        OnnxExporterError: a size or constant that cannot be expressed for dynamic axes, control flow
            that depends on the inputs, an opset below 17, a bad ``dynamic_axes``.
        TypeError: an argument this exporter does not take (naming it).
    """
    onnx = _require_onnx()
    from .model_builder import build_model

    if unsupported:
        raise TypeError(f"minitorch_ln.onnx.export: unsupported argument(s) {sorted(unsupported)}; the "
                        "traced exporter takes input_names, output_names, opset_version, dynamic_axes, kwargs")
    if dynamo:
        raise OnnxExporterError("minitorch_ln.onnx.export: dynamo=True is not provided; pass dynamo=False "
                                "(the traced exporter)")
    if not export_params:
        raise OnnxExporterError("minitorch_ln.onnx.export: export_params=False is not supported; parameters "
                                "are always stored as initializers")
    opset = DEFAULT_OPSET if opset_version is None else opset_version
    if not isinstance(opset, int) or not MIN_OPSET <= opset <= onnx.defs.onnx_opset_version():
        raise OnnxExporterError(f"minitorch_ln.onnx.export: opset_version must be an int in [{MIN_OPSET}, "
                                f"{onnx.defs.onnx_opset_version()}] (17 is the first with LayerNormalization), "
                                f"got {opset_version!r}")
    args, kwargs = _split_args(args, kwargs)
    n_inputs = len(flatten_inputs(args))
    names = list(input_names) if input_names is not None else _default_input_names(model, args)
    if len(names) < n_inputs:
        raise OnnxExporterError(f"minitorch_ln.onnx.export: {n_inputs} input tensors but only {len(names)} "
                                f"input_names {names}")
    was_training = getattr(model, "training", False)
    modes = [(m, m.training) for m in model.modules()] if hasattr(model, "modules") else []
    if training is None or training is False:
        training = TrainingMode.EVAL
    elif training is True:
        training = TrainingMode.TRAINING
    if not isinstance(training, int) or training not in tuple(TrainingMode):
        raise OnnxExporterError(f"minitorch_ln.onnx.export: training must be a TrainingMode (EVAL, PRESERVE, "
                                f"TRAINING), a bool or None, got {training!r}")
    # PyTorch's default: export in eval mode. TRAINING runs the forward in training mode, where dropout
    # and batch statistics are refused (ONNX Runtime inference would not reproduce them)
    if hasattr(model, "eval") and training == TrainingMode.EVAL and was_training:
        model.eval()
    elif hasattr(model, "train") and training == TrainingMode.TRAINING and not was_training:
        model.train()
    _state["exporting"] = True
    try:
        proto = build_model(model, args, kwargs, names[:n_inputs], output_names, opset, dynamic_axes or {},
                            keep_initializers_as_inputs)
    finally:
        _state["exporting"] = False
        for m, mode in modes:  # each submodule's own mode back (a frozen BatchNorm stays in eval)
            object.__setattr__(m, "training", mode)
    if check:
        onnx.checker.check_model(proto, full_check=True)
    if verbose:
        print(onnx.helper.printable_graph(proto.graph))
    if f is not None:
        data = proto.SerializeToString()
        if isinstance(f, (str, os.PathLike)):
            with open(f, "wb") as fh:
                fh.write(data)
        else:
            f.write(data)
    return proto


def _split_args(args, kwargs):
    if isinstance(args, Tensor):
        args = (args,)
    elif isinstance(args, list):
        args = tuple(args)
    elif not isinstance(args, tuple):
        raise TypeError(f"minitorch_ln.onnx.export: args must be a Tensor or a tuple of them, got {type(args).__name__}")
    kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict):
        kwargs.update(args[-1])
        args = args[:-1]
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            raise TypeError(f"minitorch_ln.onnx.export: args[{i}] is a NumPy array; pass a Tensor")
    tensor_kw = sorted(k for k, v in kwargs.items() if flatten_inputs((v,)))
    if tensor_kw:  # they would be baked in as constants, their input names dropped
        raise OnnxExporterError(f"minitorch_ln.onnx.export: Tensor keyword arguments {tensor_kw} cannot become "
                                "graph inputs here; pass them positionally in args (in the forward's order)")
    flat, seen, fresh = flatten_inputs(args), set(), []
    for t in flat:  # one example Tensor passed twice: each place is its own graph input
        fresh.append(Tensor(t.array.copy(), device=t.device) if id(t) in seen else t)
        seen.add(id(t))
    return (replace_inputs(args, fresh) if len(seen) < len(flat) else args), kwargs


def _default_input_names(model, args) -> list:
    try:
        params = [p.name for p in inspect.signature(model.forward if hasattr(model, "forward") else model).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = []
    for i, a in enumerate(args):  # a nested tuple (an RNN's (h, c)) gives name_0, name_1, ...
        base = params[i] if i < len(params) else f"input_{i}"
        k = len(flatten_inputs((a,)))
        names += [base] if isinstance(a, Tensor) else [f"{base}_{j}" for j in range(k)]
    return names

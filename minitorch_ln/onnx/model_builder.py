"""Building the ``ModelProto``: traces A/B/C, graph inputs and outputs, initializers, dynamic axes."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._dep import require_onnx
from .errors import OnnxExporterError
from .exporter import Exporter, onnx_dtype
from .graph import Graph
from .mapping import LAYER_OPS, MAPPINGS, REFUSED
from .trace import flatten_inputs, record, replace_inputs


def _onnx():
    return require_onnx()


def _axes_of(dynamic_axes, name, ndim, where):
    """``{axis: symbol}`` for one input or output, from either form of ``dynamic_axes``."""
    spec = dynamic_axes.get(name)
    if spec is None:
        return {}
    if isinstance(spec, dict):
        axes = {int(k): str(v) for k, v in spec.items()}
    elif isinstance(spec, (list, tuple)):
        axes = {int(k): f"{name}_dynamic_axes_{i + 1}" for i, k in enumerate(spec)}
    else:
        raise OnnxExporterError(f"ONNX export: dynamic_axes[{name!r}] must be a list of axes or a dict "
                                f"{{axis: name}}, got {type(spec).__name__}")
    for ax in axes:
        if not -ndim <= ax < ndim:
            raise OnnxExporterError(f"ONNX export: dynamic_axes[{name!r}] names axis {ax}, but {where} has "
                                    f"{ndim} dimensions")
    return {ax % ndim: sym for ax, sym in axes.items()}


def _clash(a: int, b: int) -> bool:
    """Sizes a graph could confuse: equal, one a small multiple of the other, or one apart (T // 2, T - 1)."""
    return a == b or abs(a - b) == 1 or any(a == k * b or b == k * a for k in (2, 3, 4))


def _resized(args, in_axes, sign, tie=False):
    """The inputs with every dynamic axis resized: one new size per symbol (each list-form axis is its own
    symbol, as PyTorch names them apart; with ``tie``, the fallback when the forward needs them equal,
    list-form axes of one example size move together), chosen so that no two new sizes, and no new size and an example
    size, are equal, one apart or a small multiple of each other (``T // 2`` must not pass for the batch)."""
    flat = flatten_inputs(args)
    sizes, fixed = {}, set()
    def key(sym, size):
        return ("size", size) if tie and "_dynamic_axes_" in sym else ("name", sym)

    for t, axes in zip(flat, in_axes):
        fixed.update(t.shape)
        for ax, sym in axes.items():
            sizes.setdefault(key(sym, t.shape[ax]), t.shape[ax])
    new = {}
    for sym, size in sizes.items():
        fallback = None  # when every size in reach clashes (small sizes): one merely distinct, as before
        for step in range(1, 65):
            cand = size + sign * step
            if cand < 1:
                break
            if fallback is None and cand not in new.values():
                fallback = cand
            if not any(_clash(cand, o) for o in list(new.values()) + sorted(fixed)):
                new[sym] = cand
                break
        if sym not in new:
            new[sym] = fallback if fallback is not None else size  # unchanged: the caller reports it
    out = []
    for t, axes in zip(flat, in_axes):
        if not axes:
            out.append(t)
            continue
        shape = tuple(new[key(axes[i], s)] if i in axes else s for i, s in enumerate(t.shape))
        out.append(Tensor(np.resize(_host(t), shape), device=t.device))  # the same values, tiled or cut
    return replace_inputs(args, out)


def _negated(args):
    """The float inputs negated (others as :func:`_revalued`): a branch on a float's sign (``x.sum() > 0``)."""
    flat = flatten_inputs(_revalued(args))
    return replace_inputs(args, [Tensor(-_host(t), device=t.device) if t.dtype.kind == "f" else r
                                 for t, r in zip(flatten_inputs(args), flat)])


def _revalued(args):
    """The inputs with other values of the same shapes (to find constants computed from the values).

    Floats: the same values in other places, rescaled, so signs and orderings move and the domain
    stays; an input whose values are all alike (zeros: an initial state) is moved off them. Integers:
    a new random draw from the example's own distinct values but its smallest and largest, when it has
    3 or more (so sum, min and max all move while every value stays one the model accepted: an index
    in range, an ``ignore_index``), the two values swapped when it has 2, and a neighbour id when all
    are alike. Bools: every bit flipped (a mask)."""
    rng = np.random.default_rng(12345)
    out = []
    for t in flatten_inputs(args):
        a = _host(t)
        b = a.copy()
        if a.size and a.dtype.kind == "f":
            b = rng.permutation(a.reshape(-1)).reshape(a.shape) * rng.uniform(0.5, 1.5, a.shape).astype(a.dtype)
            if np.array_equal(a, b):
                b = (a + rng.uniform(0.5, 1.5, a.shape)).astype(a.dtype)
        elif a.size and a.dtype.kind == "b":
            b = ~a
        elif a.size and a.dtype.kind in "iu":
            vals = np.unique(a)
            if vals.size >= 3:  # drawn from the example's own values but its min and max: all stay valid
                b = rng.choice(vals[1:-1], a.shape).astype(a.dtype)
            elif vals.size == 2:
                b = np.where(a == vals[0], vals[1], vals[0]).astype(a.dtype)
            if np.array_equal(a, b):  # all one id: its neighbour (an id one below or above is likelier valid)
                b = np.where(a > 0, a - 1, a + 1).astype(a.dtype)
        out.append(Tensor(b, device=t.device))
    return replace_inputs(args, out)


def build_model(model, args, kwargs, input_names, output_names, opset, dynamic_axes, keep_inits_as_inputs):
    onnx = _onnx()
    helper = onnx.helper
    flat = flatten_inputs(args)
    in_axes = [_axes_of(dynamic_axes, n, a.ndim, f"input {n!r}") for n, a in zip(input_names, flat)]
    trace_a = record(model, args, kwargs, LAYER_OPS)
    n_out = len(trace_a.outputs)
    if output_names is None:
        output_names = ["output"] if n_out == 1 else [f"output_{i}" for i in range(n_out)]
    if len(output_names) != n_out:
        raise OnnxExporterError(f"ONNX export: the model returns {n_out} tensors but output_names has "
                                f"{len(output_names)}: {list(output_names)}")
    unknown = set(dynamic_axes) - set(input_names) - set(output_names)
    if unknown:  # a misspelt name would leave an axis fixed without a word
        raise OnnxExporterError(f"ONNX export: dynamic_axes names {sorted(unknown)}, which are neither "
                                f"input names {list(input_names)} nor output names {list(output_names)}")
    trace_b = trace_a
    if any(in_axes):
        trace_b, errors = None, []
        for tie, sign in ((False, 1), (False, -1), (True, 1), (True, -1)):
            args_b = _resized(args, in_axes, sign, tie)
            if any(tb.shape[ax] == t.shape[ax] for t, tb, axes in zip(flat, flatten_inputs(args_b), in_axes)
                   for ax in axes):
                errors.append("a size of 1 cannot be made smaller")  # a dynamic axis must change to be found
                continue
            try:
                trace_b = record(model, args_b, kwargs, LAYER_OPS)
                break
            except Exception as e:  # noqa: BLE001 - the other direction may work (a size limit)
                errors.append(f"{type(e).__name__}: {e}")
        if trace_b is None:
            raise OnnxExporterError("ONNX export: the forward fails when the dynamic axes are resized, so they "
                                    f"cannot be dynamic ({'; '.join(dict.fromkeys(errors))})")
    try:
        trace_c = record(model, _revalued(args), kwargs, LAYER_OPS)
    except Exception as e:
        raise OnnxExporterError(
            "ONNX export: the forward fails on inputs of the example's shapes with other values, which the "
            f"export runs to find constants computed from the values ({type(e).__name__}: {e})") from e
    try:  # a second look for branches on the values; a forward that refuses negated values proves nothing
        trace_d = record(model, _negated(args), kwargs, LAYER_OPS)
    except Exception:  # noqa: BLE001 - e.g. a model that checks its inputs are positive
        trace_d = None

    g = Graph(opset)
    ex = Exporter(g, MAPPINGS, REFUSED)
    inputs = []
    for name, t, t_b, t_c, axes in zip(input_names, flat, trace_b.inputs, trace_c.inputs, in_axes):
        ex.bind(t, name, trace_a.start_versions.get(id(t)))
        ex.inputs.append((name, _host(t), _host(t_b), _host(t_c)))
        for ax in axes:
            g.add_dim_source(t.shape[ax], t_b.shape[ax], name, ax)
        dims = [axes.get(i, s) for i, s in enumerate(t.shape)]
        inputs.append(helper.make_tensor_value_info(name, onnx_dtype(t.dtype), dims))
    inits = []
    if hasattr(model, "named_parameters"):
        seen = set()
        for pname, p in list(model.named_parameters()) + list(model.named_buffers()):
            if p is None or id(p) in seen:
                continue
            seen.add(id(p))
            ex.bind(p, pname, trace_a.start_versions.get(id(p)))
            inits.append((pname, p))
    ex.map_records(trace_a, trace_b, trace_c, trace_d)

    outs_a, outs_b, outs_c = trace_a.outputs, trace_b.outputs, trace_c.outputs
    outputs = []
    for name, t, t_b, t_c in zip(output_names, outs_a, outs_b, outs_c):
        ex.check_version(t, t._version[0], f"the model's output {name!r}")
        src = ex.value(t, t_b, t_c)
        g.nodes.append(helper.make_node("Identity", [src], [name], name=f"output/{name}"))
        axes = _axes_of(dynamic_axes, name, t.ndim, f"output {name!r}")
        dims = []
        for i, (s, s_b) in enumerate(zip(t.shape, t_b.shape)):
            dims.append(axes.get(i) or (None if s != s_b else s))
        outputs.append(helper.make_tensor_value_info(name, onnx_dtype(t.dtype), dims))

    used = {i for node in g.nodes for i in node.input}
    for pname, p in inits:  # parameters the graph reads, under their state_dict names
        if pname in used:
            g.initializers.append(onnx.numpy_helper.from_array(np.asarray(_host(p), order="C"), pname))
    graph_inputs = inputs
    if keep_inits_as_inputs:
        graph_inputs = inputs + [helper.make_tensor_value_info(i.name, i.data_type, list(i.dims))
                                 for i in g.initializers]
    graph = helper.make_graph(g.nodes, type(model).__name__, graph_inputs, outputs, initializer=g.initializers)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="minitorch_ln", producer_version=_version())
    proto.ir_version = min(proto.ir_version, 10)  # readable by ONNX Runtime releases of the last two years
    return proto


def _version() -> str:
    from .._version import __version__
    return __version__


def _host(t):
    a = t.array
    return a.get() if hasattr(a, "get") else np.asarray(a)

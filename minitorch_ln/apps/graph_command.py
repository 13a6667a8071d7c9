"""``minitorch-ln graph OP --shape 2,3,4``: draw the fused node of an op beside its composed reference."""

from __future__ import annotations

import importlib
import os
import sys
import warnings

import numpy as np

from .. import ops
from ..backend import manual_seed
from ..diagnostics.grad_norms import record_grad_norms
from ..diagnostics.graph import draw_graphs, save_graph
from ..nn import functional as F
from ..ops.creation import randn
from ..tensor import Tensor
from .cli_args import allow_negative_values, check_seed, parse_shape


def _composed_layer_norm(x, weight, bias, eps):
    """LayerNorm from primitive ops (the reference a fused node is compared with)."""
    mean = x.mean(-1, keepdim=True)                          # (..., 1)
    xc = x - mean                                            # (..., D)
    var = (xc * xc).mean(-1, keepdim=True)                   # (..., 1)
    rstd = (var + eps).rsqrt()                               # (..., 1)
    return xc * rstd * weight + bias                         # (..., D)


def _composed_rms_norm(x, weight, eps):
    return x * ((x * x).mean(-1, keepdim=True) + eps).rsqrt() * weight


def _composed_softmax(x):
    e = (x - x.detach().amax(-1, keepdim=True)).exp()        # (..., D), shifted for stability
    return e / e.sum(-1, keepdim=True)


def _fused(name):
    fn = getattr(ops, name, None)
    if fn is None:
        raise ValueError(f"graph: the fused op ops.{name} is not available in this build")
    return fn


def _reference(name, fallback):
    """The library's composed reference (``ops.layer_norm.<name>``, ``ops.rms_norm.<name>``, ...) where it
    exists, else ``fallback``."""
    for family in ("layer_norm", "rms_norm", "batch_norm"):
        module = importlib.import_module(f"minitorch_ln.ops.{family}")
        if hasattr(module, name):
            return getattr(module, name)
    return fallback


def _example_graphs(op, shape, dtype, eps):
    """``{title: output}`` for ``minitorch-ln graph OP``: the fused node and the composed reference."""
    D = shape[-1]
    arrays = {}

    def leaf(name, *size):
        # the same values for both graphs, but separate leaves, so each graph keeps its own gradients
        if name not in arrays:
            arrays[name] = randn(*size, dtype=dtype).array
        t = Tensor(arrays[name].copy(), requires_grad=True)
        t.name = name
        return t

    def ln():
        return leaf("x", *shape), leaf("weight (γ)", D), leaf("bias (β)", D)

    if op == "layer_norm":
        x, w, b = ln()
        fused = _fused("layer_norm")(x, (D,), w, b, eps)
        x, w, b = ln()
        composed = _reference("layer_norm_composed", lambda x, s, w, b, eps: _composed_layer_norm(x, w, b, eps))
        return {"fused: ops.layer_norm": fused, "composed reference: mean, var, rsqrt": composed(x, (D,), w, b, eps)}
    if op == "rms_norm":
        fused = _fused("rms_norm")(leaf("x", *shape), (D,), leaf("weight (γ)", D), eps)
        composed = _reference("rms_norm_composed", lambda x, s, w, eps: _composed_rms_norm(x, w, eps))
        return {"fused: ops.rms_norm": fused,
                "composed reference: mean(x²), rsqrt": composed(leaf("x", *shape), (D,), leaf("weight (γ)", D), eps)}
    if op == "softmax":
        return {"fused: ops.softmax": _fused("softmax")(leaf("x", *shape), -1),
                "composed reference: exp / sum": _composed_softmax(leaf("x", *shape))}
    if op == "linear":
        return {"F.linear: x @ weight.T + bias": F.linear(leaf("x", *shape), leaf("weight", 3, D), leaf("bias", 3))}
    raise ValueError(f"graph: unknown op {op!r}; expected one of {', '.join(GRAPH_OPS)}")


GRAPH_OPS = ("layer_norm", "rms_norm", "softmax", "linear")


def _cmd_graph(args) -> int:
    try:
        shape = parse_shape(args.shape)
        manual_seed(check_seed(args.seed))
        graphs = _example_graphs(args.op, shape, np.dtype(args.dtype), args.eps)
        if args.grad_norms:
            upstream = None
            for y in graphs.values():
                upstream = randn(*y.shape, dtype=y.dtype) if upstream is None else upstream  # random, shared
                with record_grad_norms(y):
                    y.backward(upstream)
        title = f"minitorch-ln graph {args.op} --shape {','.join(map(str, shape))}"
        kw = dict(show_values=args.values, show_grad_norms=args.grad_norms, title=title)
        if args.out == "-":
            sys.stdout.write(draw_graphs(graphs, **kw))
            return 0
        out = args.out or f"{args.op}_graph.svg"
        if os.path.isdir(out):
            raise ValueError(f"cannot write to --out {out}: it is a directory, expected a file path such as "
                             f"{os.path.join(out, args.op + '_graph.svg')}")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                written = save_graph(graphs, out, **kw)
            except OSError as exc:
                reason = exc.strerror or str(exc)
                if exc.filename not in (None, out):  # the .dot beside it
                    reason = f"{exc.filename}: {reason}"
                raise ValueError(f"cannot write to --out {out}: {reason}") from None
    except (ValueError, TypeError, RuntimeError) as exc:
        print(f"minitorch-ln graph: error: {exc}", file=sys.stderr)
        return 1
    dot_file = os.path.splitext(out)[0] + ".dot"
    also = f" (and its DOT source {dot_file})" if written != dot_file and os.path.isfile(dot_file) else ""
    print(f"wrote {written}{also}")
    for w in caught:
        print(str(w.message))
    return 0


def register_graph_command(subparsers) -> None:
    """Add ``minitorch-ln graph OP --shape 2,3,4`` to the CLI's subparsers (called by ``cli.py``)."""
    p = subparsers.add_parser(
        "graph", help="draw an op's autograd graph: the fused node beside its composed reference",
        description="Draw the backward graph of one op on random inputs: the fused node (one box) and, "
                    "beside it, the same function composed of primitive ops. Writes SVG/PNG with Graphviz's "
                    "`dot` where installed, and always the .dot text beside it. The directory of --out must exist.",
    )
    p.add_argument("op", choices=GRAPH_OPS, help="the op to draw")
    p.add_argument("--shape", nargs="+", default=["2,3,4"], help="input shape, e.g. 2,3,4 or 2 3 4 (default 2,3,4)")
    p.add_argument("--out", default=None, metavar="PATH",
                   help="output file: .svg, .png, .pdf or .dot (default OP_graph.svg); '-' prints DOT")
    p.add_argument("--values", action="store_true", help="show values of leaves, outputs and saved tensors")
    p.add_argument("--grad-norms", action="store_true",
                   help="run backward with a random upstream gradient and show each node's gradient norm")
    p.add_argument("--dtype", default="float64", choices=["float64", "float32"], help="(default float64)")
    p.add_argument("--eps", type=float, default=1e-5, help="normalization epsilon (default 1e-5)")
    p.add_argument("--seed", type=int, default=0, help="random seed for the inputs (default 0)")

    allow_negative_values(p)
    p.set_defaults(func=_cmd_graph)

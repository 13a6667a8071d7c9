"""Draw the autograd graph behind a tensor (Graphviz DOT), with shapes, values and gradient norms.

The drawing is the *backward* graph, the one ``backward()`` walks: an output at the top, one box
per recorded op (``MulBackward0``, ``NativeLayerNormBackward0``...), one ellipse per leaf that requires grad,
and arrows in the direction gradients flow, from the output down to the leaves. An edge's label is
the shape of the gradient that travels along it; an op's box lists the shapes of the tensors it
saved for backward. ::

    x = mt.randn(2, 3, requires_grad=True); x.name = "x"
    y = (x * x).sum()
    print(draw_graph(y))                       # DOT text
    save_graph(y, "y.svg")                     # rendered with Graphviz's `dot`, where installed

Gradient norms (``diagnostics/grad_norms.py``): ``record_grad_norms(y)`` puts a hook on every node of ``y``'s graph, so the next
``y.backward()`` stores the norm of the gradient arriving at each node; ``draw_graph(y,
show_grad_norms=True)`` then prints it in each node and colours the nodes on a log scale (blue:
small, red: large), to see where gradients grow or vanish. The engine itself is untouched: without
the hooks, backward runs as before. (Inspired by torchviz's ``make_dot``.)
"""

from __future__ import annotations

import errno
import math
import os
import shutil
import subprocess
import warnings

import numpy as np

from .. import backend
from ..autograd.function import AccumulateGrad
from ..tensor import Tensor

__all__ = ["draw_graph", "draw_graphs", "save_graph", "dot_available"]

_INSTALL_HINT = (
    "Graphviz's `dot` program was not found, so only the DOT text was written. Install it with "
    "`apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS) or "
    "`conda install graphviz`, then render with `dot -Tsvg {dot} -o {out}`."
)


def _roots(tensor):
    items = list(tensor) if isinstance(tensor, (list, tuple)) else [tensor]
    if not items:
        raise ValueError("draw_graph: expected a Tensor or a non-empty list of Tensors, got an empty sequence")
    for t in items:
        if not isinstance(t, Tensor):
            raise TypeError(f"draw_graph: expected a Tensor (or a list of Tensors), got {type(t).__name__}")
        if t.grad_fn is None and not t.requires_grad:
            raise ValueError(
                f"draw_graph: this tensor (shape {tuple(t.shape)}) has no autograd graph: it does not require "
                "grad. Create its inputs with requires_grad=True and compute it outside no_grad()."
            )
    return items


def _root_node(t):
    if t.grad_fn is not None:
        return t.grad_fn
    return t._get_accumulator() if t.requires_grad else None


def _walk(start):
    """Nodes reachable from ``start`` in breadth-first order, and the edges between them."""
    order, seen, edges = [], set(), []
    queue = list(start)
    for n in start:
        seen.add(n)
    while queue:
        node = queue.pop(0)
        order.append(node)
        for i, edge in enumerate(node.next_edges):
            if edge is None:
                continue
            child, idx = edge
            edges.append((node, i, child, idx))
            if child not in seen:
                seen.add(child)
                queue.append(child)
    return order, edges


def _esc(text: str) -> str:
    return str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _fmt_shape(shape) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _fmt_values(t: Tensor) -> str:
    arr = np.asarray(backend.to_device(t.array, "cpu"))
    return np.array2string(arr, precision=3, threshold=6, edgeitems=2, suppress_small=True,
                           max_line_width=40)


def _fmt_norm(v) -> str:
    return "‖grad‖ = —" if v is None else f"‖grad‖ = {v:.3g}"


def _param_names(params):
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise TypeError(
            "draw_graph: params must be a dict of name -> Tensor, e.g. dict(model.named_parameters()), "
            f"got {type(params).__name__}"
        )
    return {id(p): name for name, p in params.items()}


def _norm_colour(norm, lo, hi) -> str:
    """HSV fill colour: blue for the smallest norm in the graph, red for the largest (log scale)."""
    if norm is None or norm <= 0 or not math.isfinite(norm):
        return "0.000 0.000 0.900" if norm is None or norm == 0 else "0.830 0.600 1.000"
    if hi <= lo:
        frac = 0.5
    else:
        frac = (math.log10(norm) - lo) / (hi - lo)
    return f"{0.62 * (1 - frac):.3f} 0.450 1.000"


def _body(roots, prefix, show_shapes, show_values, show_grad_norms, params, scale=None):
    """DOT statements for the graph behind ``roots`` (node ids start with ``prefix``)."""
    names = _param_names(params)
    start = [_root_node(t) for t in roots]
    nodes, edges = _walk([n for n in start if n is not None])
    ids = {n: f"{prefix}{k}" for k, n in enumerate(nodes)}
    norms = {}
    if show_grad_norms:
        if not any(getattr(n, "_viz_grad_norms", None) for n in nodes):
            raise RuntimeError(
                "draw_graph(show_grad_norms=True): no gradient norms were recorded for this graph. Call "
                "diagnostics.record_grad_norms(y) before y.backward(), then draw."
            )
        for n in nodes:
            rec = getattr(n, "_viz_grad_norms", None) or {}
            norms[n] = [rec.get(i) for i in range(len(n.outputs_meta))]
    logs = [math.log10(v) for vs in norms.values() for v in vs if v is not None and v > 0 and math.isfinite(v)]
    lo, hi = (min(logs), max(logs)) if logs else (0.0, 0.0)
    if scale is not None:  # one colour scale shared by several drawings
        lo, hi = scale

    lines = []
    for k, t in enumerate(roots):
        rid = f"{prefix}out{k}"
        label = ["output" if len(roots) == 1 else f"output {k}"]
        if show_shapes:
            label.append(f"{_fmt_shape(t.shape)} {t.dtype}")
        if show_values:
            label.append(_fmt_values(t))
        lines.append(f'  {rid} [label="{_esc(chr(10).join(label))}", shape=box, style="filled,rounded", '
                     'fillcolor="#c8f0c8"];')
        if start[k] is not None and start[k] is not t._accumulator:
            lines.append(f'  {rid} -> {ids[start[k]]} [label="{_esc(_fmt_shape(t.shape) if show_shapes else "")}"];')
        elif start[k] is not None:
            lines.append(f"  {rid} -> {ids[start[k]]};")

    for n in nodes:
        nid = ids[n]
        if isinstance(n, AccumulateGrad):
            leaf = n.leaf
            label = [leaf.name or names.get(id(leaf)) or "leaf"]
            if show_shapes:
                label.append(f"{_fmt_shape(leaf.shape)} {leaf.dtype}")
            if show_values:
                label.append(_fmt_values(leaf))
            fill = "#cfe3ff"
        else:
            label = [n.name()]
            if show_shapes:
                label.extend(_saved_lines(n, show_values, names))
            fill = "#e8e8e8"
        style = "filled"
        if show_grad_norms:
            vs = norms[n]
            label.append(_fmt_norm(vs[0]) if len(vs) == 1 else
                         "\n".join(f"out {i}: {_fmt_norm(v)}" for i, v in enumerate(vs)))
            fill = _norm_colour(max((v for v in vs if v is not None), default=None), lo, hi)
        shape = "ellipse" if isinstance(n, AccumulateGrad) else "box"
        lines.append(f'  {nid} [label="{_esc(chr(10).join(label))}", shape={shape}, style="{style}", '
                     f'fillcolor="{fill}"];')

    for parent, i, child, idx in edges:
        parts = []
        if sum(e is not None for e in parent.next_edges) > 1:
            parts.append(f"in {i}")
        if len(child.outputs_meta) > 1:
            parts.append(f"out {idx}")
        if show_shapes:
            parts.append(_fmt_shape(child.outputs_meta[idx][0]))
        attr = f' [label="{_esc(" ".join(parts))}"]' if parts else ""
        lines.append(f"  {ids[parent]} -> {ids[child]}{attr};")
    return lines, (lo, hi) if logs else None


def _saved_lines(node, show_values, names):
    if node._freed:
        kept = getattr(node, "_viz_saved", None)
        return kept if kept is not None else ["(saved tensors freed by backward)"]
    if not node._saved:
        return []
    out = []
    for t, _version in node._saved:
        if t is None:
            continue
        tag = t.name or names.get(id(t)) or ""
        text = f"saved {tag + ' ' if tag else ''}{_fmt_shape(t.shape)}"
        if show_values:
            text += "\n" + _fmt_values(t)
        out.append(text)
    return out


def _header(title, legend):
    label = "arrows: the direction gradients flow (backward)"
    if title:
        label = f"{title}\n{label}"
    if legend is not None:
        label += f"\nfill: gradient norm on a log scale, blue {10 ** legend[0]:.3g} → red {10 ** legend[1]:.3g}"
    return [
        "digraph autograd {",
        f'  graph [rankdir=TB, fontname="Helvetica", fontsize=11, labelloc=t, label="{_esc(label)}"];',
        '  node [fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9, color="#555555"];',
    ]


def draw_graph(tensor, show_shapes: bool = True, show_values: bool = False, show_grad_norms: bool = False,
               params: dict | None = None, title: str | None = None) -> str:
    """The autograd graph behind ``tensor`` as Graphviz DOT text.

    Args:
        tensor: a Tensor (or a list of Tensors) produced by recorded ops, or a leaf requiring grad.
        show_shapes: label leaves, outputs and edges with shapes and dtypes, and each op with the
            shapes of its saved tensors (``saved (B, L, 1)``).
        show_values: add (abbreviated) values of outputs, leaves and saved tensors.
        show_grad_norms: add the norm of the gradient that reached each node in the last backward,
            and colour nodes by it; needs :func:`record_grad_norms` before that backward.
        params: ``dict(model.named_parameters())``: names for leaves whose ``Tensor.name`` is unset.
        title: a line printed above the graph.

    Returns:
        DOT text (``digraph autograd { ... }``); render it with :func:`save_graph` or ``dot -Tsvg``.

    Raises:
        TypeError: ``tensor`` is not a Tensor, or ``params`` is not a dict.
        ValueError: the tensor has no graph (``requires_grad=False``).
        RuntimeError: ``show_grad_norms=True`` but no norms were recorded.
    """
    roots = _roots(tensor)
    body, legend = _body(roots, "n", show_shapes, show_values, show_grad_norms, params)
    return "\n".join(_header(title, legend) + body + ["}"]) + "\n"


def draw_graphs(named: dict, show_shapes: bool = True, show_values: bool = False, show_grad_norms: bool = False,
                params: dict | None = None, title: str | None = None) -> str:
    """Several graphs side by side in one DOT drawing, one labelled box (cluster) per entry.

    Args:
        named: ``{"fused": y1, "composed": y2}``: a title per Tensor (or list of Tensors).
        the rest: as :func:`draw_graph`.

    Raises:
        TypeError: ``named`` is not a non-empty dict; else as :func:`draw_graph`.
    """
    if not isinstance(named, dict) or not named:
        raise TypeError(f"draw_graphs: expected a non-empty dict of title -> Tensor, got {type(named).__name__}")
    legends = [_body(_roots(t), "g", show_shapes, show_values, show_grad_norms, params)[1] for t in named.values()]
    legends = [lg for lg in legends if lg is not None]
    scale = (min(lg[0] for lg in legends), max(lg[1] for lg in legends)) if legends else None
    lines = []
    for k, (name, t) in enumerate(named.items()):
        body, _ = _body(_roots(t), f"g{k}n", show_shapes, show_values, show_grad_norms, params, scale)
        lines.append(f"  subgraph cluster_{k} {{")
        lines.append(f'    label="{_esc(name)}"; style=rounded; color="#888888";')
        lines.extend("  " + b for b in body)
        lines.append("  }")
    return "\n".join(_header(title, scale) + lines + ["}"]) + "\n"


# ------------------------------------------------------------------------------ rendering
def dot_available() -> bool:
    """Whether Graphviz's ``dot`` program is on the PATH."""
    return shutil.which("dot") is not None


def save_graph(tensor, path: str, format: str | None = None, **kwargs) -> str:  # noqa: A002
    """Write the graph behind ``tensor`` to ``path``, rendered as SVG/PNG/PDF where ``dot`` exists.

    The DOT text is always written (to ``path`` itself for ``.dot``/``.gv``, else beside it with a
    ``.dot`` suffix). Where Graphviz's ``dot`` program is missing, a ``UserWarning`` says how to
    install it and the ``.dot`` path is returned.

    Args:
        tensor: as :func:`draw_graph`; or a dict ``{title: tensor}`` for :func:`draw_graphs`.
        path: the output file; its suffix (``.svg``, ``.png``, ``.pdf``, ``.dot``) picks the format.
        format: overrides the suffix.
        **kwargs: passed to :func:`draw_graph` (``show_shapes``, ``show_values``, ...).

    Returns:
        the path of the rendered file, or of the ``.dot`` file when nothing was rendered.

    Raises:
        ValueError: an unknown format; else as :func:`draw_graph`.
        FileNotFoundError: the directory of ``path`` does not exist (it is not created).
        OSError: ``path`` cannot be written (no permission, a file where a directory should be...).
        RuntimeError: ``dot`` exists but failed (its message is included).
    """
    text = draw_graphs(tensor, **kwargs) if isinstance(tensor, dict) else draw_graph(tensor, **kwargs)
    root, ext = os.path.splitext(str(path))
    fmt = (format or ext.lstrip(".") or "svg").lower()
    if fmt not in ("svg", "png", "pdf", "dot", "gv"):
        raise ValueError(f"save_graph: expected a .svg, .png, .pdf or .dot path (or format=), got {fmt!r}")
    dot_path = str(path) if fmt in ("dot", "gv") else root + ".dot"
    directory = os.path.dirname(os.path.abspath(dot_path))
    if not os.path.isdir(directory):
        what = "is a file, not a directory" if os.path.exists(directory) else "does not exist"
        raise FileNotFoundError(errno.ENOENT, f"the directory {directory} {what}", str(path))
    with open(dot_path, "w", encoding="utf-8") as f:
        f.write(text)
    if fmt in ("dot", "gv"):
        return dot_path
    out_path = str(path) if ext else f"{root}.{fmt}"
    if not dot_available():
        warnings.warn(_INSTALL_HINT.format(dot=dot_path, out=out_path), stacklevel=2)
        return dot_path
    try:
        import graphviz  # noqa: PLC0415 - optional: the `graphviz` Python package

        try:
            data = graphviz.Source(text).pipe(format=fmt)
        except graphviz.CalledProcessError as e:
            raise RuntimeError(f"save_graph: `dot -T{fmt}` failed on {dot_path}: {e.stderr!r}") from e
    except ImportError:
        proc = subprocess.run(["dot", f"-T{fmt}", dot_path], capture_output=True)
        if proc.returncode != 0:
            raise RuntimeError(f"save_graph: `dot -T{fmt}` failed on {dot_path}: {proc.stderr.decode().strip()}")
        data = proc.stdout
    with open(out_path, "wb") as f:
        f.write(data)
    return out_path


# ------------------------------------------------------------------------------ `minitorch-ln graph`

"""diagnostics.graph: DOT drawings of the autograd graph, rendering, gradient norms, the `graph` subcommand."""

import importlib
import os
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln import diagnostics, nn
from minitorch_ln.apps.cli import main

needs_dot = pytest.mark.skipif(not diagnostics.dot_available(), reason="Graphviz's `dot` is not installed")

_NODE = re.compile(r'^\s*(\w+) \[label="((?:[^"\\]|\\.)*)"(.*)\];$')
_EDGE = re.compile(r'^\s*(\w+) -> (\w+)(?: \[label="((?:[^"\\]|\\.)*)"\])?;$')


def parse_dot(text):
    """A structural parse: ``{id: label}``, ``[(src, dst, label)]``; checks braces and references."""
    assert text.startswith("digraph autograd {") and text.rstrip().endswith("}")
    assert text.count("{") == text.count("}")
    nodes, edges = {}, []
    for line in text.splitlines():
        if m := _NODE.match(line):
            nodes[m.group(1)] = m.group(2).replace("\\n", "\n")
        elif m := _EDGE.match(line):
            edges.append((m.group(1), m.group(2), (m.group(3) or "").replace("\\n", "\n")))
    for src, dst, _ in edges:
        assert src in nodes and dst in nodes, f"edge {src} -> {dst} references an undefined node"
    return nodes, edges


def by_first_line(nodes):
    out = {}
    for nid, label in nodes.items():
        out.setdefault(label.split("\n")[0], []).append(nid)
    return out


def small_expression(device="cpu"):
    x = mt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device, requires_grad=True)
    w = mt.tensor([0.5, -1.0, 2.0], device=device, requires_grad=True)
    x.name, w.name = "x", "w"
    return x, w, ((x * w).exp() + x).sum()


def test_nodes_and_edges_of_a_small_expression(device):
    x, w, y = small_expression(device)
    nodes, edges = parse_dot(diagnostics.draw_graph(y))
    names = by_first_line(nodes)
    assert sorted(names) == ["AddBackward0", "ExpBackward0", "MulBackward0", "SumBackward0", "output", "w", "x"]
    assert all(len(v) == 1 for v in names.values())  # x is used twice but drawn once
    n = {k: v[0] for k, v in names.items()}
    pairs = {(a, b) for a, b, _ in edges}
    # gradients flow from the output to the leaves
    assert pairs == {
        (n["output"], n["SumBackward0"]), (n["SumBackward0"], n["AddBackward0"]), (n["AddBackward0"], n["ExpBackward0"]),
        (n["AddBackward0"], n["x"]), (n["ExpBackward0"], n["MulBackward0"]), (n["MulBackward0"], n["x"]),
        (n["MulBackward0"], n["w"]),
    }
    labels = {(a, b): lab for a, b, lab in edges}
    assert labels[(n["MulBackward0"], n["w"])] == "in 1 (3,)"
    assert labels[(n["MulBackward0"], n["x"])] == "in 0 (2, 3)"
    assert nodes[n["x"]] == "x\n(2, 3) float32"
    assert nodes[n["output"]] == "output\n() float32"
    assert nodes[n["ExpBackward0"]] == "ExpBackward0\nsaved (2, 3)"  # exp saves its output
    assert nodes[n["MulBackward0"]] == "MulBackward0\nsaved x (2, 3)\nsaved w (3,)"


def test_shapes_off_and_values_on():
    x, w, y = small_expression()
    nodes, edges = parse_dot(diagnostics.draw_graph(y, show_shapes=False))
    assert "x" in nodes.values() and all(lab == "" or lab.startswith("in ") for _, _, lab in edges)
    nodes, _ = parse_dot(diagnostics.draw_graph(y, show_values=True))
    leaf_w = next(lab for lab in nodes.values() if lab.startswith("w\n"))
    assert leaf_w == "w\n(3,) float32\n[ 0.5 -1.   2. ]"
    out = next(lab for lab in nodes.values() if lab.startswith("output"))
    expected = float((np.exp(np.array([[1, 2, 3], [4, 5, 6]]) * np.array([0.5, -1, 2])) + [[1, 2, 3], [4, 5, 6]]).sum())
    assert float(out.split("\n")[-1]) == pytest.approx(expected, rel=1e-6)


def test_module_parameter_names_via_params():
    torch_like = nn.Linear(3, 2)
    y = torch_like(mt.randn(4, 3)).sum()
    nodes, _ = parse_dot(diagnostics.draw_graph(y, params=dict(torch_like.named_parameters())))
    firsts = [lab.split("\n")[0] for lab in nodes.values()]
    assert "weight" in firsts and "bias" in firsts
    torch_like.weight.name = "W"  # Tensor.name wins over the params dict
    nodes, _ = parse_dot(diagnostics.draw_graph(y, params=dict(torch_like.named_parameters())))
    assert "W" in [lab.split("\n")[0] for lab in nodes.values()]
    nodes, _ = parse_dot(diagnostics.draw_graph(torch_like(mt.randn(4, 3)).sum()))
    assert "leaf" in [lab.split("\n")[0] for lab in nodes.values()]  # bias without a name


def test_gradient_norms_are_the_gradients_that_reached_each_node(device):
    x, w, y = small_expression(device)
    with diagnostics.record_grad_norms(y) as rec:
        y.backward()
    nodes, _ = parse_dot(diagnostics.draw_graph(y, show_grad_norms=True))
    n = {lab.split("\n")[0]: lab for lab in nodes.values()}
    norm = lambda t: float(np.linalg.norm(np.asarray(t.detach().cpu().array)))  # noqa: E731
    assert n["x"].endswith(f"‖grad‖ = {norm(x.grad):.3g}")
    assert n["w"].endswith(f"‖grad‖ = {norm(w.grad):.3g}")
    assert n["SumBackward0"].endswith("‖grad‖ = 1")            # the seed dy/dy
    assert n["AddBackward0"].endswith(f"‖grad‖ = {np.sqrt(6):.3g}")  # ones of shape (2, 3)
    xv, wv = np.array([[1.0, 2, 3], [4, 5, 6]]), np.array([0.5, -1, 2])
    assert n["MulBackward0"].endswith(f"‖grad‖ = {np.linalg.norm(np.exp(xv * wv)):.3g}")
    # saved tensors were described before backward freed them
    assert "saved x (2, 3)" in n["MulBackward0"]
    # the hooks are gone after the context
    assert all(not hooks for node in rec.__dict__.get("_hooks", []) for hooks in node)
    assert y.grad_fn._pre_hooks == {0: []}


def test_recorded_grad_norm_of_intermediate_tensors():
    x = mt.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    h = x * 3.0
    out = (h.tanh() * mt.tensor([1.0, 2.0])).sum()
    with diagnostics.record_grad_norms(out):
        out.backward()
    dh = (1 - np.tanh(3 * x.array) ** 2) * np.array([1.0, 2.0])  # d out / d h
    assert diagnostics.recorded_grad_norm(h) == pytest.approx(float(np.linalg.norm(dh)), rel=1e-6)
    assert diagnostics.recorded_grad_norm(x) == pytest.approx(float(np.linalg.norm(3 * dh)), rel=1e-6)
    with pytest.raises(RuntimeError, match="no gradient norms were recorded"):
        diagnostics.recorded_grad_norm((x * 2).sum())
    with pytest.raises(TypeError, match="expected a Tensor, got float"):
        diagnostics.recorded_grad_norm(1.0)


def test_gradient_norms_without_recording_is_a_clear_error():
    _, _, y = small_expression()
    with pytest.raises(RuntimeError, match=r"record_grad_norms\(y\) before y.backward\(\)"):
        diagnostics.draw_graph(y, show_grad_norms=True)


def test_bad_input():
    with pytest.raises(TypeError, match="expected a Tensor .* got ndarray"):
        diagnostics.draw_graph(np.ones(3))
    with pytest.raises(ValueError, match=r"shape \(3,\)\) has no autograd graph"):
        diagnostics.draw_graph(mt.ones(3))
    _, _, y = small_expression()
    with pytest.raises(TypeError, match="params must be a dict .* got list"):
        diagnostics.draw_graph(y, params=[1])
    with pytest.raises(ValueError, match="expected a .svg, .png, .pdf or .dot path .* got 'jpg'"):
        diagnostics.save_graph(y, "graph.jpg")
    with pytest.raises(TypeError, match="non-empty dict"):
        diagnostics.draw_graphs([y])


def test_multiple_outputs_and_a_leaf_alone():
    a = mt.tensor([1.0, 2.0], requires_grad=True)
    nodes, edges = parse_dot(diagnostics.draw_graph([a * 2, a.exp()]))
    firsts = sorted(lab.split("\n")[0] for lab in nodes.values())
    assert firsts == ["ExpBackward0", "MulBackward0", "leaf", "output 0", "output 1"]
    assert len(edges) == 4
    nodes, edges = parse_dot(diagnostics.draw_graph(a))
    assert len(nodes) == 2 and len(edges) == 1


def test_a_deep_chain_draws_without_recursion():
    x = mt.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0
    nodes, edges = parse_dot(diagnostics.draw_graph(y, show_shapes=False))
    assert len(nodes) == 3002 and len(edges) == 3001


def test_save_graph_without_dot_writes_dot_and_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setattr(importlib.import_module("minitorch_ln.diagnostics.graph"), "dot_available", lambda: False)
    _, _, y = small_expression()
    with pytest.warns(UserWarning, match="apt-get install graphviz"):
        written = diagnostics.save_graph(y, tmp_path / "g.svg")
    assert written == str(tmp_path / "g.dot")
    parse_dot((tmp_path / "g.dot").read_text())
    assert not (tmp_path / "g.svg").exists()


@needs_dot
def test_save_graph_renders_svg_and_png(tmp_path):
    _, _, y = small_expression()
    svg = diagnostics.save_graph(y, tmp_path / "g.svg")
    text = (tmp_path / "g.svg").read_text()
    assert svg.endswith("g.svg") and "<svg" in text and "MulBackward0" in text
    assert (tmp_path / "g.dot").exists()  # the DOT text is kept beside it
    diagnostics.save_graph(y, tmp_path / "g.png", show_values=True)
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@needs_dot
def test_graphviz_package_parses_the_dot():
    graphviz = pytest.importorskip("graphviz")
    _, _, y = small_expression()
    svg = graphviz.Source(diagnostics.draw_graph(y, show_values=True)).pipe(format="svg").decode()
    assert svg.count('class="node"') == 7 and svg.count('class="edge"') == 7


_UNARY = {"sigmoid": lambda t: t.sigmoid(), "tanh": lambda t: t.tanh(), "neg": lambda t: -t,
          "mul": lambda t: t * t, "sum_keep": lambda t: t.sum(-1, keepdim=True)}


@given(ops=st.lists(st.sampled_from(sorted(_UNARY)), min_size=1, max_size=8), n=st.integers(1, 4))
def test_property_one_box_per_recorded_op(ops, n):
    x = mt.tensor(np.linspace(-1, 1, 2 * n).reshape(2, n), requires_grad=True)
    y = x
    for name in ops:
        y = _UNARY[name](y)
    nodes, edges = parse_dot(diagnostics.draw_graph(y))
    boxes = [lab for lab in nodes.values() if "Backward" in lab.split("\n")[0]]
    assert len(boxes) == len(ops)
    assert sum(lab.startswith("leaf") for lab in nodes.values()) == 1
    # every edge into the leaf carries the leaf's shape
    leaf_id = next(k for k, lab in nodes.items() if lab.startswith("leaf"))
    assert all(lab.endswith(f"(2, {n})") for _, dst, lab in edges if dst == leaf_id)


def test_graph_subcommand_draws_the_fused_node_beside_the_composed_reference(tmp_path, capsys):
    out = tmp_path / "ln.dot"
    assert main(["graph", "layer_norm", "--shape", "2,3,4", "--out", str(out), "--grad-norms"]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    text = out.read_text()
    nodes, edges = parse_dot(text)
    assert "subgraph cluster_0" in text and "subgraph cluster_1" in text
    fused, composed = text.split("subgraph cluster_1")
    assert len(re.findall(r'label="\w+Backward', fused)) == 1          # one fused node
    assert len(re.findall(r'label="\w+Backward', composed)) >= 6       # mean, sub, mul, add, rsqrt, ...
    assert "RsqrtBackward0" in composed and "saved (2, 3, 1)" in fused  # mean/rstd saved, shape (B, L, 1)
    assert "‖grad‖" in text
    # the same leaf values and upstream gradient in both drawings: the same norm, the same colour
    leaf_x = [line for line in text.splitlines() if 'label="x\\n' in line]
    assert len(leaf_x) == 2 and leaf_x[0].split("[", 1)[1] == leaf_x[1].split("[", 1)[1]


def test_graph_subcommand_softmax_beside_its_composition(tmp_path):
    out = tmp_path / "sm.dot"
    assert main(["graph", "softmax", "--shape", "2,5", "--out", str(out)]) == 0
    fused, composed = out.read_text().split("subgraph cluster_1")
    assert re.findall(r'label="(\w+Backward)', fused) == ["SoftmaxBackward"]
    assert sorted(re.findall(r'label="(\w+Backward)', composed)) == ["DivBackward", "ExpBackward", "SubBackward",
                                                                     "SumBackward"]


def test_graph_subcommand_errors(capsys):
    assert main(["graph", "softmax", "--shape", "2,x"]) == 1
    assert "--shape expects integers like 2,3,4 or 2 3 4, got '2,x'" in capsys.readouterr().err
    assert main(["graph", "softmax", "--shape", "0,3"]) == 1
    for shape in ("-1,3", "2,-3"):
        assert main(["graph", "softmax", "--shape", shape]) == 1
        assert f"every size in --shape must be >= 1, got '{shape}'" in capsys.readouterr().err
    assert main(["graph", "softmax", "--seed", "-1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("minitorch-ln graph: error: --seed must be an integer >= 0") and "Traceback" not in err
    with pytest.raises(SystemExit):
        main(["graph", "no_such_op"])


def test_graph_subcommand_prints_dot(capsys):
    assert main(["graph", "softmax", "--shape", "3", "4", "--out", "-"]) == 0
    nodes, _ = parse_dot(capsys.readouterr().out)
    assert "SoftmaxBackward0\nsaved (3, 4)" in nodes.values()


def test_graph_subcommand_unusable_out_paths_write_nothing(tmp_path, capsys):
    afile = tmp_path / "file.txt"
    afile.write_text("x")
    cases = [(tmp_path / "missing" / "dir" / "x.svg", "does not exist"),
             (afile / "x.svg", "is a file, not a directory"),
             (tmp_path, "it is a directory, expected a file path")]
    if os.path.isdir("/proc/self"):
        cases.append(("/proc/x.svg", "cannot write to --out /proc/x.svg"))
    for out, message in cases:
        assert main(["graph", "softmax", "--out", str(out)]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"minitorch-ln graph: error: cannot write to --out {out}: ") and message in err, err
        assert "Traceback" not in err and err.count("\n") == 1
    assert sorted(os.listdir(tmp_path)) == ["file.txt"]  # no parent directory was created


def test_save_graph_does_not_create_directories(tmp_path):
    y = (mt.ones(2, requires_grad=True) * 2).sum()
    with pytest.raises(FileNotFoundError, match="does not exist"):
        diagnostics.save_graph(y, tmp_path / "new" / "g.dot")
    assert not (tmp_path / "new").exists()


def test_graph_subcommand_names_the_dot_file_it_writes(tmp_path, capsys):
    out = tmp_path / "sm.svg"
    assert main(["graph", "softmax", "--shape", "2", "3", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert str(tmp_path / "sm.dot") in printed and (tmp_path / "sm.dot").exists()

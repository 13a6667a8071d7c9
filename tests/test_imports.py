"""The package's import graph, read from the source with ``ast``: no cycles between files, and no
module imports from a layer above its own (the layers of ``DESIGN.md``, in import order).

Every import counts, including those inside functions: a lazy import is a dependency all the same.
The package's root ``__init__.py`` gathers the public names of every layer and is left out.
"""

import ast
import pathlib
import re

import pytest

PKG = pathlib.Path(__file__).resolve().parents[1] / "minitorch_ln"

# DESIGN.md's layers, lowest first; a module may import from its own layer and those before it.
LAYERS = [
    ("backend", ["backend", "allocator", "errors", "_version", "cuda", "dtypes", "mt19937", "random_torch", "accelerator"]),
    ("kernels", ["kernels"]),
    ("tensor + autograd", ["tensor", "tensor_legacy", "tensor_protocols", "autograd", "size", "tensor_str"]),
    ("ops", ["ops", "linalg", "special", "fft", "signal", "masked"]),
    ("nn", ["nn"]),
    ("optim", ["optim", "amp", "grad_scaler"]),
    ("utils.data, io, interop, distributed", ["utils", "serialization", "safe_globals", "torch_format", "interop",
                                              "onnx", "distributed"]),
    ("diagnostics", ["diagnostics"]),
    ("apps", ["apps", "__main__", "run", "exercises"]),
]
LAYER_OF = {top: i for i, (_, tops) in enumerate(LAYERS) for top in tops}


def _module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict:
    return {_module_name(p): p for p in PKG.rglob("*.py")}


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(modules: dict) -> dict:
    """``{module: {imported module, ...}}`` for the package's own modules."""
    graph = {}
    for name, path in modules.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(name, path.name == "__init__.py", node)
                # `from pkg import sub` imports the submodule sub when there is one
                targets = [f"{target}.{a.name}" if f"{target}.{a.name}" in modules else target for a in node.names]
            else:
                continue
            for t in targets:
                if t.split(".")[0] != "minitorch_ln":
                    continue
                while t and t not in modules:  # `minitorch_ln.ops.shape.reshape` -> the module
                    t = t.rpartition(".")[0]
                if t and t != name:
                    deps.add(t)
        graph[name] = deps
    return graph


def _layer(module: str):
    parts = module.split(".")
    return LAYER_OF.get(parts[1]) if len(parts) > 1 else None


GRAPH = _imports(_modules())


def test_every_module_has_a_layer():
    missing = sorted(m for m in GRAPH if m != "minitorch_ln" and _layer(m) is None)
    assert not missing, f"modules outside DESIGN.md's layers (add them to LAYERS): {missing}"


def test_no_upward_imports():
    bad = []
    for module, deps in GRAPH.items():
        if module == "minitorch_ln":
            continue
        for dep in deps:
            if dep != "minitorch_ln" and _layer(dep) > _layer(module):
                bad.append(f"{module} ({LAYERS[_layer(module)][0]}) imports {dep} ({LAYERS[_layer(dep)][0]})")
            if dep == "minitorch_ln":
                bad.append(f"{module} imports the package root")
    assert not bad, "imports from a higher layer:\n" + "\n".join(sorted(bad))


def _cycle_from(start, graph):
    """One import cycle through ``start``, or None (iterative DFS)."""
    stack = [(start, iter(sorted(graph[start])))]
    path, seen = [start], {start}  # each module is entered once: a path back to start, if any, is found in O(V + E)
    while stack:
        node, children = stack[-1]
        for child in children:
            if child == start:
                return path + [start]
            if child in graph and child not in seen and child != "minitorch_ln":
                stack.append((child, iter(sorted(graph[child]))))
                path.append(child)
                seen.add(child)
                break
        else:
            stack.pop()
            path.pop()
    return None


def test_no_import_cycles():
    graph = {m: {d for d in deps if d != "minitorch_ln"} for m, deps in GRAPH.items() if m != "minitorch_ln"}
    cycles = []
    for module in sorted(graph):
        cycle = _cycle_from(module, graph)
        if cycle and not any(set(cycle) == set(c) for c in cycles):
            cycles.append(cycle)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_checker_finds_a_cycle_and_an_upward_import():
    # the test itself must be able to fail: a made-up graph with one of each
    graph = {"minitorch_ln.ops.a": {"minitorch_ln.ops.b"}, "minitorch_ln.ops.b": {"minitorch_ln.ops.a"}}
    assert _cycle_from("minitorch_ln.ops.a", graph) == ["minitorch_ln.ops.a", "minitorch_ln.ops.b", "minitorch_ln.ops.a"]
    assert _layer("minitorch_ln.apps.cli") > _layer("minitorch_ln.tensor")


@pytest.mark.parametrize("path", sorted(PKG.rglob("*.py")), ids=lambda p: str(p.relative_to(PKG)))
def test_no_module_over_about_400_lines(path):
    n = len(path.read_text().splitlines())
    assert n <= 400, f"{path.relative_to(PKG)} has {n} lines; split it (DESIGN.md: about 400 at most)"


def test_version_counters_change_only_through_bump_version():
    # one Tensor method marks an in-place change (Tensor._bump_version); a hand bump elsewhere is how a
    # merged branch slipped one past review (ops/embedding.py's max_norm renorm)
    pattern = re.compile(r"_version\[0\]\s*(\+=|=)")
    hand = [f"{p.relative_to(PKG)}:{i}" for p in sorted(PKG.rglob("*.py"))
            if p.name != "tensor.py" and "autograd" not in p.parts
            for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert not hand, f"version counters bumped by hand (use Tensor._bump_version()): {hand}"


def test_the_package_imports_without_ml_dtypes():
    # ml_dtypes (bfloat16) is a dependency, but an environment without it must still import minitorch_ln:
    # every other dtype works and naming bfloat16 says how to get it (it failed at `import minitorch_ln`)
    code = ("import sys; sys.modules['ml_dtypes'] = None\n"
            "import minitorch_ln as mt\n"
            "assert mt.ones(2).sum().item() == 2.0\n"
            "try:\n    mt.ones(2, dtype=mt.bfloat16)\nexcept TypeError as e:\n    assert 'pip install ml_dtypes' in str(e)\n"
            "else:\n    raise AssertionError('bfloat16 without ml_dtypes was accepted')\n")
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]

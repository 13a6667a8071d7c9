"""The ONNX graph being built: nodes, initializers, and sizes that depend on dynamic axes.

An export traces the forward twice when ``dynamic_axes`` is given: once with the example inputs
(trace A) and once with every dynamic axis resized (trace B). A size that is the same in both
traces is a constant; one that differs is *symbolic* and is computed in the graph from the input
it came from (``Shape`` → ``Gather``), so no shape that depends on a dynamic axis is baked in.
:meth:`Graph.dim` finds the input axis (or the product of two) whose sizes in A and B match.
"""

from __future__ import annotations

import numpy as np

from ._dep import require_onnx
from .errors import OnnxExporterError as ExportError

INT64_MAX = np.iinfo(np.int64).max


def _onnx():
    return require_onnx()


class Graph:
    """Nodes and initializers, named uniquely; ``op`` adds a node and returns its output name(s)."""

    def __init__(self, opset: int):
        self.opset = opset
        self.nodes, self.initializers = [], []
        self.dim_sources = {}  # (size in A, size in B) -> (input name, axis)
        self._dim_cache = {}
        self._const_cache = {}
        self._values = {}  # name -> array of the small constants
        self._count = 0
        self.node_path = ""  # the module path of the op being mapped, in node names

    def fresh(self, hint: str = "v") -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def op(self, op_type: str, inputs, n_out: int = 1, domain: str = "", **attrs):
        """Add a node; ``inputs`` may hold ``""`` for an omitted optional input. Attributes whose
        value is None are left out."""
        outs = [self.fresh(op_type.lower()) for _ in range(n_out)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        inputs = list(inputs)
        if op_type.startswith("Reduce") and op_type != "ReduceSum" and self.opset < 18 and len(inputs) == 2:
            attrs["axes"] = [int(a) for a in self._values[inputs.pop()]]  # opset 17: axes is an attribute
        name = f"{self.node_path or 'graph'}/{op_type}_{self._count}"
        self.nodes.append(_onnx().helper.make_node(op_type, inputs, outs, name=name, domain=domain, **attrs))
        return outs[0] if n_out == 1 else tuple(outs)

    def initializer(self, array, name: str | None = None) -> str:
        onnx = _onnx()
        name = name or self.fresh("const")
        self.initializers.append(onnx.numpy_helper.from_array(np.asarray(array, order="C"), name))
        return name

    def const(self, value, dtype=None) -> str:
        """A constant tensor (cached for small values, which recur: axes, shapes, scalars)."""
        arr = np.asarray(value, dtype=dtype)
        if arr.size <= 16:
            key = (arr.dtype.str, arr.shape, arr.tobytes())
            name = self._const_cache.get(key)
            if name is None:
                name = self._const_cache[key] = self.initializer(arr)
                self._values[name] = arr
            return name
        return self.initializer(arr)

    def ints(self, values) -> str:
        return self.const(np.asarray(list(values), dtype=np.int64))

    # -- sizes -----------------------------------------------------------------------------------
    def add_dim_source(self, size_a: int, size_b: int, input_name: str, axis: int) -> None:
        self.dim_sources.setdefault((int(size_a), int(size_b)), (input_name, axis))

    def dim(self, a: int, b: int, what: str = "a size") -> str:
        """A 1-element int64 tensor holding a size that is ``a`` in trace A and ``b`` in trace B."""
        a, b = int(a), int(b)
        if a == b:
            return self.ints([a])
        key = (a, b)
        if key in self._dim_cache:
            return self._dim_cache[key]
        out = None
        if key in self.dim_sources:
            out = self._gather_dim(*self.dim_sources[key])
        else:
            for (a1, b1), src1 in self.dim_sources.items():
                for (a2, b2), src2 in self.dim_sources.items():
                    if a1 * a2 == a and b1 * b2 == b:
                        out = self.op("Mul", [self._gather_dim(*src1), self._gather_dim(*src2)])
                        break
                if out is not None:
                    break
        if out is None:  # a dynamic size times a constant (B·T with T fixed, the flattening in Linear)
            for (a1, b1), src1 in self.dim_sources.items():
                if a % a1 == 0 and b % b1 == 0 and a // a1 == b // b1:
                    out = self.op("Mul", [self._gather_dim(*src1), self.ints([a // a1])])
                    break
        if out is None:
            known = ", ".join(f"{n}[{ax}]" for n, ax in self.dim_sources.values()) or "none"
            raise ExportError(
                f"ONNX export: {what} depends on the dynamic axes ({a} in the example, {b} with the axes "
                f"resized) but is neither a dynamic input size nor a product of two, or of one and a constant (dynamic sizes: {known}); "
                "export with a fixed size for this axis (leave it out of dynamic_axes)"
            )
        self._dim_cache[key] = out
        return out

    def _gather_dim(self, input_name: str, axis: int) -> str:
        key = ("src", input_name, axis)
        if key not in self._dim_cache:
            self._dim_cache[key] = self.op("Shape", [input_name], start=axis, end=axis + 1)  # (1,)
        return self._dim_cache[key]

    def shape(self, shape_a, shape_b, what: str = "a shape") -> str:
        """A 1-D int64 shape tensor: constant where A and B agree, computed where they differ."""
        shape_a, shape_b = tuple(int(s) for s in shape_a), tuple(int(s) for s in shape_b)
        if len(shape_a) != len(shape_b):
            raise ExportError(f"ONNX export: {what} changes rank with the input size ({shape_a} vs {shape_b})")
        if shape_a == shape_b:
            return self.ints(shape_a)
        parts, static = [], []
        for a, b in zip(shape_a, shape_b):
            if a == b:
                static.append(a)
                continue
            if static:
                parts.append(self.ints(static))
                static = []
            parts.append(self.dim(a, b, what))
        if static:
            parts.append(self.ints(static))
        return parts[0] if len(parts) == 1 else self.op("Concat", parts, axis=0)

"""From recorded traces to an ONNX graph: values, constants, and one mapping per recorded op.

Three traces of the same forward are read side by side, op by op: A (the example inputs), B (every
dynamic axis resized; A itself when there are none) and C (the example shapes with other values).
A tensor that no recorded op produced and that is no input or parameter is a constant; it must be
the same in A and C (else it was computed from the inputs outside the recorded ops, and baking it
in would give wrong numbers: the export refuses), and where its shape differs between A and B it
must be one of the shapes a graph can build from sizes (``arange``, a filled tensor, a causal mask).
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._dep import require_onnx
from .errors import OnnxExporterError, UnsupportedOperatorError
from .trace import InPlaceWrite


def onnx_dtype(dtype) -> int:
    return require_onnx().helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


class OpView:
    """What a mapping sees of one op: its arguments in traces A and B, named inputs and sizes."""

    def __init__(self, ex, rec, rec_b, rec_c):
        self.ex, self.g, self.rec, self.rec_b, self.rec_c = ex, ex.g, rec, rec_b, rec_c
        self.ctx, self.ctx_b = rec.ctx, rec_b.ctx

    def arg(self, i, default=None):
        """Argument ``i`` as trace A got it; a non-Tensor argument that differs in trace B (it depends
        on a dynamic axis) is refused, unless read with :meth:`arg_a`/:meth:`arg_b` by a mapping that
        computes it."""
        if i >= len(self.rec.args):
            return default
        a = self.rec.args[i]
        if not _same(a, self.rec_b.args[i]):
            self.refuse(f"argument {i} ({_short(a)}) changes with the dynamic axes (it is {_short(self.rec_b.args[i])} "
                        "with them resized) and this mapping cannot compute it in the graph")
        return a

    def arg_a(self, i, default=None):
        return self.rec.args[i] if i < len(self.rec.args) else default

    def arg_b(self, i, default=None):
        return self.rec_b.args[i] if i < len(self.rec_b.args) else default

    def is_tensor(self, i) -> bool:
        """A Tensor argument, or a raw array that is a known value's (an input's array passed as is)."""
        a = self.rec.args[i] if i < len(self.rec.args) else None
        return isinstance(a, Tensor) or (_is_array(a) and id(a) in self.ex.array_names)

    def x(self, i, dtype=None) -> str:
        """The ONNX name of tensor argument ``i`` (cast to ``dtype`` when given and different)."""
        name = self.ex.value(self.rec.args[i], self.rec_b.args[i], self.rec_c.args[i], self)
        if dtype is not None and np.dtype(dtype) != self.rec.args[i].dtype:
            name = self.g.op("Cast", [name], to=onnx_dtype(dtype))
        return name

    def operand(self, i, dtype) -> str:
        """Argument ``i`` as a tensor of ``dtype``: a Tensor (cast if needed) or a Python/NumPy scalar."""
        a, b = self.arg_a(i), self.arg_b(i)
        if self.is_tensor(i) or (_is_array(a) and np.ndim(a)):
            return self.x(i, dtype)
        if _same(a, b):
            return self.g.const(np.asarray(a, dtype=dtype))
        if np.ndim(a) == 0 and np.ndim(b) == 0 and a and b:  # a count, or 1/count (a mean's divisor)
            for f in (lambda v: v, lambda v: 1.0 / v):
                na, nb = f(float(a)), f(float(b))
                if min(na, nb) >= 1 and abs(na - round(na)) < 1e-3 * na and abs(nb - round(nb)) < 1e-3 * nb:
                    size = self.g.op("Cast", [self.size(round(na), round(nb), "a scalar")], to=onnx_dtype(dtype))
                    size = self.g.op("Squeeze", [size, self.g.ints([0])])
                    if f(2.0) != 2.0:
                        size = self.g.op("Reciprocal", [size])
                    return size
        return self.arg(i)  # refuses, naming both values

    def in_shapes(self, i):
        return tuple(self.arg(i).shape), tuple(self.arg_b(i).shape)

    def out_shapes(self, j: int = 0):
        return tuple(self.rec.outputs[j].shape), tuple(self.rec_b.outputs[j].shape)

    def out_dtype(self, j: int = 0):
        return self.rec.outputs[j].dtype

    def out_shape(self, j: int = 0) -> str:
        """The output's shape as a 1-D int64 tensor (computed where it depends on dynamic axes)."""
        return self.g.shape(*self.out_shapes(j), what=f"the output shape of {self.rec.name}")

    def size(self, a, b, what: str) -> str:
        return self.g.dim(a, b, f"{what} of {self.rec.name} in {self.rec.where()}")

    def refuse(self, why: str):
        raise UnsupportedOperatorError(f"ONNX export: {self.rec.name} in {self.rec.where()}: {why}")


class Exporter:
    """Names every value and maps every recorded op (``mappings``: Function/Module class → fn)."""

    def __init__(self, g, mappings: dict, refused: dict | None = None):
        self.g, self.mappings, self.refused = g, mappings, refused or {}
        self.names = {}  # id(Tensor) -> ONNX name
        self.array_names = {}  # id(array) -> ONNX name (another Tensor over the same array)
        self.inputs = []  # (name, array in A, in B, in C) of the graph inputs
        self.versions = {}  # id(Tensor) or id(array) -> the version counter its name holds the value of
        self.end_versions = {}

    def bind(self, t: Tensor, name: str, version: int | None = None, rebind: bool = False) -> None:
        """Name ``t``'s value at ``version`` (default: its version now); ``rebind``: an in-place write."""
        version = t._version[0] if version is None else version
        self.names[id(t)] = name
        self.versions[id(t)] = version
        if rebind or id(t.array) not in self.array_names:
            self.array_names[id(t.array)] = name
            self.versions[id(t.array)] = version

    def check_version(self, t, version: int, where: str) -> None:
        """Refuse a read of ``t`` at ``version`` when the value its name holds is another version (an
        in-place change the graph does not express: a write into a view, a fast-path write)."""
        key = id(t) if id(t) in self.names else id(_arr(t)) if id(_arr(t)) in self.array_names else None
        held = self.versions.get(key) if key is not None else self.end_versions.get(id(t), version)  # a constant
        # is read after the forward: the values it had at the end of it
        if held != version:
            raise UnsupportedOperatorError(
                f"ONNX export: {where} reads a tensor of shape {tuple(t.shape)} that an in-place op changed "
                f"(version {version}, the graph holds version {held}); a write into a view or slice "
                "(x[i] = v, x[:, 0].add_(1)) or an in-place op on a value read elsewhere cannot be expressed, "
                "so the export stops; use out-of-place ops (torch.where, torch.cat, y = y + 1)")

    def value(self, t, t_b, t_c, n: OpView | None = None) -> str:
        """The name of a Tensor (or of a raw array an op was given): a value already named, or a constant."""
        name = self.names.get(id(t))
        if name is None:
            name = self.array_names.get(id(_arr(t)))
        if name is None:
            name = self._constant(t, t_b, t_c, n)
            self.names[id(t)] = name
            if isinstance(t, Tensor):
                self.versions[id(t)] = t._version[0]
        return name

    def _constant(self, t, t_b, t_c, n) -> str:
        where = f"{n.rec.name} in {n.rec.where()}" if n is not None else "the model's output"
        a, c = _host(_arr(t)), _host(_arr(t_c))
        b = _host(_arr(t_b))
        for name, ia, ib, ic in self.inputs:  # an input's values copied by an op's argument checks
            if np.array_equal(ia, ic):
                continue  # values that did not move identify nothing
            if ia.shape == a.shape and ib.shape == b.shape and np.array_equal(ia, a) and np.array_equal(ib, b) \
                    and np.array_equal(ic, c):
                return name if ia.dtype == a.dtype else self.g.op("Cast", [name], to=onnx_dtype(a.dtype))
        if a.shape != c.shape or not np.array_equal(a, c, equal_nan=a.dtype.kind in "fc"):
            raise OnnxExporterError(
                f"ONNX export: {where} uses a tensor of shape {tuple(a.shape)} that depends on the input "
                "values but was computed outside the recorded ops (a NumPy computation or an op with no "
                "autograd Function, e.g. a comparison or an index found from the data); baking it in "
                "as a constant would give wrong results for other inputs, so the export stops"
            )
        if tuple(a.shape) == tuple(np.shape(_arr(t_b))):
            return self.g.const(a) if a.size <= 16 else self.g.initializer(a)
        return self._dynamic_constant(a, _host(_arr(t_b)), where)

    def _dynamic_constant(self, a, b, where) -> str:
        g = self.g
        what = f"a constant used by {where}"
        if a.ndim == 1 and a.dtype.kind in "iu" and np.array_equal(a, np.arange(a.size)) \
                and np.array_equal(b, np.arange(b.size)):  # arange(n)
            n = g.op("Squeeze", [g.dim(a.size, b.size, what), g.ints([0])])
            return g.op("Range", [g.const(np.asarray(0, a.dtype)), g.op("Cast", [n], to=onnx_dtype(a.dtype)),
                                  g.const(np.asarray(1, a.dtype))])
        shape = g.shape(a.shape, b.shape, what)
        if a.size and b.size and (a == a.flat[0]).all() and (b == a.flat[0]).all():  # full(shape, v)
            value = require_onnx().numpy_helper.from_array(np.asarray([a.flat[0]], a.dtype))
            return g.op("ConstantOfShape", [shape], value=value)
        if _is_causal(a) and _is_causal(b):  # the causal mask: -inf (or True) above the diagonal
            fill = np.asarray([-np.inf if a.dtype.kind == "f" else 1], a.dtype if a.dtype.kind == "f" else np.int64)
            full = g.op("ConstantOfShape", [shape], value=require_onnx().numpy_helper.from_array(fill))
            tri = g.op("Trilu", [full, g.ints([1])], upper=1)
            return tri if a.dtype.kind == "f" else g.op("Cast", [tri], to=onnx_dtype(a.dtype))
        raise OnnxExporterError(
            f"ONNX export: {what} has a shape that depends on the dynamic axes ({a.shape} in the example, "
            f"{b.shape} with the axes resized) and is not an arange, a filled tensor or a causal mask, so it "
            "cannot be rebuilt for other sizes; make it an input of the model, or leave those axes out of "
            "dynamic_axes"
        )

    def map_records(self, trace_a, trace_b, trace_c, trace_d=None) -> None:
        """Map every op of trace A; ``trace_d`` (negated float inputs), when given, must run the same ops
        with the same Python arguments as A (a branch on a value's sign)."""
        ra, rb, rc = trace_a.records, trace_b.records, trace_c.records
        self.end_versions = trace_a.end_versions
        others = (("resized dynamic axes", rb), ("other input values", rc))
        if trace_d is not None:
            others += (("other input values (negated)", trace_d.records),)
            for rec, rec_d in zip(ra, trace_d.records):
                if rec.fn is rec_d.fn and not all(_same(a, d) for a, d in zip(rec.args, rec_d.args)):
                    raise OnnxExporterError(
                        f"ONNX export: an argument of {rec.name} in {rec.where()} changes with the input values (a "
                        "Python number read from the data, e.g. with .item()): one graph cannot hold it")
        for label, other in others:
            if [r.fn for r in other] != [r.fn for r in ra]:
                first = next((i for i, (x, y) in enumerate(zip(ra, other)) if x.fn is not y.fn), min(len(ra), len(other)))
                at = ra[first].where() if first < len(ra) else "the end of the forward"
                raise OnnxExporterError(
                    f"ONNX export: the forward runs different ops for inputs with {label} (op {first}, in {at}): "
                    "control flow that depends on the input sizes or values cannot be exported as one graph"
                )
        for rec, rec_b, rec_c in zip(ra, rb, rc):
            moved = [i for i, (a, c) in enumerate(zip(rec.args, rec_c.args)) if not _same(a, c)]
            if moved or [o.shape for o in rec.outputs] != [o.shape for o in rec_c.outputs]:
                where = f"argument {moved[0]} ({_short(rec.args[moved[0]])})" if moved else "its output shape"
                raise OnnxExporterError(
                    f"ONNX export: {where} of {rec.name} in {rec.where()} changes with the input values (a Python "
                    "number or size read from the data, e.g. with .item()): one graph cannot hold it")
            fn = self.mappings.get(rec.fn, InPlaceWrite if rec.fn is InPlaceWrite else None)
            if rec.fn in self.refused:
                raise UnsupportedOperatorError(f"ONNX export: {rec.name} in {rec.where()}: {self.refused[rec.fn]}")
            if fn is None:
                raise UnsupportedOperatorError(
                    f"ONNX export: no ONNX mapping for the op {rec.name} ({getattr(rec.fn, '__module__', '?')}) "
                    f"run in {rec.where()}; see docs/onnx.md for the ops that export"
                )
            for t, version in rec.uses:
                self.check_version(t, version, f"{rec.name} in {rec.where()}")
            self.g.node_path = rec.path
            n = OpView(self, rec, rec_b, rec_c)
            if rec.fn is InPlaceWrite:  # the target now holds the op's result, cast to its dtype
                self.bind(rec.outputs[0], n.x(0, rec.outputs[0].dtype), rec.out_versions[0], rebind=True)
                continue
            out = fn(self.g, n)
            outs = out if isinstance(out, tuple) else (out,)
            if len(outs) != len(rec.outputs):
                raise OnnxExporterError(f"ONNX export: internal: {rec.name} mapped to {len(outs)} outputs, "
                                        f"expected {len(rec.outputs)}")
            for t, name, version in zip(rec.outputs, outs, rec.out_versions):
                self.bind(t, name, version)


def _arr(t):
    return t.array if isinstance(t, Tensor) else t


def _host(a):
    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)


def _is_array(a) -> bool:
    return isinstance(a, np.ndarray) or hasattr(a, "__cuda_array_interface__")


def _same(a, b) -> bool:
    """Equal non-Tensor arguments (Tensors always count as equal: they are values, not constants)."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return True
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if _is_array(a) or _is_array(b):
        return np.shape(a) == np.shape(b)  # arrays: shapes here; values are checked against trace C
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - incomparable objects
        return a is b


def _short(v) -> str:
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def _is_causal(m) -> bool:
    """True for an additive mask with -inf (or a bool True) exactly above the diagonal of its last two
    dims, the same for every leading index (a ``(1, 1, T, T)`` buffer's slice)."""
    if m.size == 0 or m.ndim < 2:
        return False
    above = np.broadcast_to(np.triu(np.ones(m.shape[-2:], dtype=bool), k=1), m.shape)
    if m.dtype.kind == "b":
        return bool(np.array_equal(m, above))
    return bool(np.all(m[above] == -np.inf) and np.all(m[~above] == 0))

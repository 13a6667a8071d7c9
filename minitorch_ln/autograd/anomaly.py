"""``detect_anomaly``: find the op that made a NaN or an infinity, and the line of code that called it.

Under ``with detect_anomaly():``

* **forward**: every recorded node remembers the user's line that created it (the innermost stack
  frames outside this package), its input shapes and dtypes, and which of its inputs and outputs
  hold non-finite values. A node whose inputs are all finite but whose output is not *introduced*
  the NaN/Inf (``sqrt`` of a negative number, ``log(0)``, an overflow).
* **backward**: after each node's backward the gradients are checked; the first non-finite one
  raises :class:`AnomalyError`. If that node's forward inputs were already non-finite, the error
  follows the chain of non-finite forward values back to the op that introduced them (or to the
  leaf that already held them) and names that op: the op *downstream* of a NaN is where backward
  notices it (a weight gradient ``hᵀ·dy`` is NaN as soon as ``h`` is), not where it was made.

Without ``detect_anomaly`` none of this runs: the engine tests one dict entry per node
(``benchmarks/bench_anomaly_overhead.py`` measures both).

This mirrors ``torch.autograd.detect_anomaly``; the forward origin tracing is our addition.
"""

from __future__ import annotations

import functools
import linecache
import os
import sys

from .. import backend
from . import function as _function
from .function import AccumulateGrad, _anomaly

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_STACK_DEPTH = 3  # user frames kept per node (innermost first)
_counter = [0]  # creation order of recorded nodes


class AnomalyError(RuntimeError):
    """A NaN or an infinity appeared under :class:`detect_anomaly`.

    Attributes:
        node: the backward node whose gradient was non-finite (``None`` for a forward check).
        origin: the node whose *forward* first turned finite values into NaN/Inf on the way to
            ``node`` (``None`` when the backward formula itself made them).
        op: the name of the op to blame (``origin``'s op if any, else ``node``'s), e.g. ``"Sqrt"``.
        kind: ``"NaN"`` or ``"Inf"``.
    """

    def __init__(self, message, node=None, origin=None, op=None, kind=None):
        super().__init__(message)
        self.node = node
        self.origin = origin
        self.op = op
        self.kind = kind


class detect_anomaly:
    """Context manager (and decorator) that turns NaN/Inf gradients into an error naming the op.

    Args:
        check_nan: check gradients in backward (as in PyTorch); ``False`` only records.
        check_forward: also raise in *forward*, at the first op whose finite inputs give a NaN output
            (infinities are let through: ``masked_fill(mask, -inf)`` before a softmax is legitimate).

    Raises:
        AnomalyError: see the module docstring.
        TypeError: ``check_nan`` or ``check_forward`` is not a bool.
    """

    def __init__(self, check_nan: bool = True, check_forward: bool = False):
        for name, value in (("check_nan", check_nan), ("check_forward", check_forward)):
            if not isinstance(value, bool):
                raise TypeError(f"detect_anomaly: {name} must be a bool, got {type(value).__name__} {value!r}")
        self.check_nan = check_nan
        self.check_forward = check_forward

    def __enter__(self):
        self._prev = (_anomaly["enabled"], _anomaly.get("check_nan", True), _anomaly.get("check_forward", False))
        _anomaly["enabled"] = True
        _anomaly["check_nan"] = self.check_nan
        _anomaly["check_forward"] = self.check_forward
        return self

    def __exit__(self, *exc):
        _anomaly["enabled"], _anomaly["check_nan"], _anomaly["check_forward"] = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan, self.check_forward):
                return fn(*args, **kwargs)

        return wrapper


def is_anomaly_enabled() -> bool:
    return _anomaly["enabled"]


# ---------------------------------------------------------------------------------- forward
@functools.lru_cache(maxsize=4096)
def _is_user_file(filename: str) -> bool:
    return not os.path.abspath(filename).startswith(_PACKAGE_DIR)


def _user_stack():
    """Up to ``_STACK_DEPTH`` (filename, lineno, function) of the frames outside this package."""
    frames = []
    f = sys._getframe(2)
    while f is not None and len(frames) < _STACK_DEPTH:
        code = f.f_code
        if _is_user_file(code.co_filename):
            frames.append((code.co_filename, f.f_lineno, code.co_name))
        f = f.f_back
    return frames


def _nonfinite_kind(data):
    """``None`` when every value is finite (or the dtype is not floating), else ``"NaN"`` or ``"Inf"``."""
    if getattr(data, "dtype", None) is None or not (backend.is_floating(data.dtype) or data.dtype.kind == "c"):
        return None
    xp = backend.get_array_module(data)
    if bool(xp.isfinite(data).all()):
        return None
    return "NaN" if bool(xp.isnan(data).any()) else "Inf"


def record_creation(node, args, results=()):
    """Called by ``Function.apply`` for each recorded node while anomaly detection is on."""
    Tensor = _function.Tensor
    _counter[0] += 1
    in_kinds = [_nonfinite_kind(a.array) if isinstance(a, Tensor) else None for a in args]
    out_kinds = [_nonfinite_kind(r.array) for r in results]
    out_kind = next((k for k in out_kinds if k == "NaN"), None) or next((k for k in out_kinds if k), None)
    node.creation_trace = {
        "seq": _counter[0],
        "stack": _user_stack(),
        "input_shapes": [tuple(a.shape) if isinstance(a, Tensor) else type(a).__name__ for a in args],
        "input_dtypes": [str(a.dtype) for a in args if isinstance(a, Tensor)],
        "inputs_nonfinite": in_kinds,
        "leaf_inputs": [(a.name, tuple(a.shape)) if isinstance(a, Tensor) and a.grad_fn is None else None
                        for a in args],
        "output_nonfinite": out_kind,
        "introduced": out_kind is not None and not any(in_kinds),
    }
    if out_kind == "NaN" and not any(in_kinds) and _anomaly.get("check_forward", False):
        raise AnomalyError(
            f"detect_anomaly(check_forward=True): {_op_line(node)} turned finite inputs into NaN in its "
            f"forward pass.\n{_where(node)}",
            node=None, origin=node, op=_op_name(node), kind="NaN",
        )


# ---------------------------------------------------------------------------------- backward
def check_gradients(node, results):
    """Called by the engine after each node's backward while anomaly detection is on."""
    Tensor = _function.Tensor
    if not _anomaly.get("check_nan", True):
        return
    for i, g in enumerate(results):
        if g is None:
            continue
        kind = _nonfinite_kind(g.array if isinstance(g, Tensor) else g)
        if kind is None:
            continue
        origin, leaf = trace_origin(node)
        noticed = f"  backward noticed it in '{node.name()}': its gradient for input {i} (shape {tuple(g.shape)}) holds {kind}."
        if origin is node:
            msg = (f"detect_anomaly: {kind} first appeared in op '{_op_name(node)}' (its forward turned finite "
                   f"inputs into {node.creation_trace['output_nonfinite']}).\n{_op_line(node)}\n{_where(node)}\n"
                   f"{noticed}")
        elif origin is not None:
            o_kind = origin.creation_trace["output_nonfinite"]
            msg = (
                f"detect_anomaly: {o_kind} first appeared in op '{_op_name(origin)}' (its forward turned finite "
                f"inputs into {o_kind}).\n{_op_line(origin)}\n{_where(origin)}\n"
                f"{noticed}\n  {_op_line(node).strip()}\n{_where(node)}"
            )
        elif leaf is not None:
            leaf_node, j, (name, lshape) = leaf
            what = f"'{name}'" if name else "a leaf tensor"
            msg = (
                f"detect_anomaly: '{node.name()}' returned {kind} values in its gradient for input {i}: its forward "
                f"input was already non-finite. Input {j} of op '{_op_name(leaf_node)}' is {what} of shape "
                f"{lshape} that held NaN/Inf before the forward pass (bad data, or a parameter broken by an "
                f"earlier update).\n{_op_line(leaf_node)}\n{_where(leaf_node)}"
            )
        else:
            msg = (
                f"detect_anomaly: '{node.name()}' returned {kind} values in its gradient for input {i} (shape "
                f"{tuple(g.shape)}).\n{_op_line(node)}\n{_where(node)}\n"
                "  Its forward values were finite, so the backward formula itself overflowed or divided by "
                "zero (for example 1/(2·sqrt(x)) at x = 0)."
            )
        blame = origin if origin is not None else (leaf[0] if leaf is not None else node)
        raise AnomalyError(msg, node=node, origin=origin, op=_op_name(blame), kind=kind)


def trace_origin(node):
    """Follow non-finite forward values from ``node``'s inputs back to where they appeared.

    Returns:
        ``(origin, None)`` with the earliest-created node that introduced NaN/Inf from finite inputs
        on a chain of non-finite values leading to ``node``; or ``(None, (node, input_index,
        (name, shape)))`` when the chain ends at a leaf that already held them; or ``(None, None)``
        when ``node``'s own inputs were finite (or were not recorded under ``detect_anomaly``).
    """
    best, leaf = None, None
    seen = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        trace = n.creation_trace
        if trace is None:
            continue
        if n is not node and trace["introduced"]:
            if best is None or trace["seq"] < best.creation_trace["seq"]:
                best = n
            continue
        for j, kind in enumerate(trace["inputs_nonfinite"]):
            if kind is None:
                continue
            edge = n.next_edges[j] if j < len(n.next_edges) else None
            child = edge[0] if edge is not None else None
            if child is None or isinstance(child, AccumulateGrad):
                if trace["leaf_inputs"][j] is not None:
                    # Prefer a leaf holding NaN, and a parameter over a constant: a constant -inf
                    # (an attention mask) is legitimate and must not hide a NaN weight.
                    rank = (kind != "NaN", child is None, trace["seq"])
                    if leaf is None or rank < leaf[0]:
                        leaf = (rank, (n, j, trace["leaf_inputs"][j]))
            else:
                stack.append(child)
    if best is None and node.creation_trace is not None and node.creation_trace["introduced"] and \
            node.creation_trace["output_nonfinite"]:
        best = node  # e.g. log(0): forward made -inf and its own backward 1/x made inf
    if best is not None:
        return best, None
    return None, (leaf[1] if leaf is not None else None)


def explain_nonfinite(tensor) -> str | None:
    """Where the NaN/Inf values in ``tensor`` came from, for a graph recorded under ``detect_anomaly``.

    For a NaN loss, without running backward: ``print(explain_nonfinite(loss))``. Returns ``None``
    when ``tensor`` is finite.
    """
    kind = _nonfinite_kind(tensor.array)
    if kind is None:
        return None
    node = tensor.grad_fn
    if node is None or node.creation_trace is None:
        return (f"the tensor (shape {tuple(tensor.shape)}) holds {kind}, but its graph was not recorded under "
                "detect_anomaly(): rerun the forward pass inside `with detect_anomaly():`")
    origin, leaf = trace_origin(node)
    if origin is None and node.creation_trace["introduced"]:
        origin = node
    if origin is not None:
        o_kind = origin.creation_trace["output_nonfinite"]
        return (f"the {o_kind} came from op '{_op_name(origin)}': its forward turned finite inputs into "
                f"{o_kind}.\n{_op_line(origin)}\n{_where(origin)}")
    if leaf is not None:
        leaf_node, j, (name, lshape) = leaf
        what = f"'{name}'" if name else "a leaf tensor"
        return (f"input {j} of '{_op_name(leaf_node)}' is {what} of shape {lshape} that held NaN/Inf before "
                f"the forward pass.\n{_where(leaf_node)}")
    return f"the tensor holds {kind}; no recorded op introduced it"


# ---------------------------------------------------------------------------------- formatting
def _op_name(node) -> str:
    return node.fn.__name__ if node.fn is not None else node.name()


def _op_line(node) -> str:
    trace = node.creation_trace or {}
    shapes = trace.get("input_shapes", "?")
    dtypes = sorted(set(trace.get("input_dtypes", [])))
    return f"  op: {_op_name(node)}, input shapes: {shapes}, dtypes: {', '.join(dtypes) or '?'}"


def _where(node) -> str:
    trace = node.creation_trace
    if trace is None:
        return "  created at: <unknown: the forward pass ran outside detect_anomaly()>"
    stack = trace["stack"]
    if not stack:
        return "  created at: <inside minitorch_ln>"
    lines = []
    for k, (filename, lineno, func) in enumerate(stack):
        code = linecache.getline(filename, lineno).strip()
        label = "created at" if k == 0 else "called from"
        lines.append(f"  {label}: {filename}:{lineno} in {func}\n      {code}")
    return "\n".join(lines)


_anomaly["record"] = record_creation  # Function.apply calls it while anomaly detection is on

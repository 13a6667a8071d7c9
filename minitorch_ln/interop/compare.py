"""Layer-by-layer comparison of a minitorch_ln model with the same-named PyTorch model: every submodule's
output and every parameter's gradient, and the first place where the two part."""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from .. import backend
from ..autograd.engine import backward as _mt_backward
from ..tensor import Tensor

__all__ = ["compare_modules", "ModuleComparison", "ModuleDiff"]
from ._convert import _to_numpy, _torch, _torch_to_numpy


# ==================================================================================================
# Layer-by-layer comparison
# ==================================================================================================


@dataclass
class ModuleDiff:
    """The comparison of one submodule (``name`` is its dotted name, ``""`` for the whole model).

    Differences are the largest absolute difference over all its calls and output tensors;
    ``out_rel`` divides by the largest magnitude of PyTorch's output. ``None`` means "nothing to
    compare" (no gradient flowed, no parameters, or the module did not run).
    """

    name: str
    type: str
    calls: int = 0
    torch_calls: int = 0
    out_shape: tuple = ()
    out_diff: float | None = None
    out_rel: float | None = None
    dout_diff: float | None = None
    param_diffs: dict = field(default_factory=dict)  # local name -> largest |Δ| of its gradient
    weight_diffs: dict = field(default_factory=dict)  # local name -> largest |Δ| of its value
    bad_params: list = field(default_factory=list)  # local names whose gradients differ
    dout_ok: bool = True  # the gradient arriving at its output agrees
    forward_ok: bool = True
    backward_ok: bool = True
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.forward_ok and self.backward_ok

    @property
    def param_diff(self) -> float | None:
        vals = [v for v in self.param_diffs.values() if v is not None]
        return max(vals) if vals else None


@dataclass
class ModuleComparison:
    """What :func:`compare_modules` returns: one :class:`ModuleDiff` per submodule, in the order they ran.

    ``str(result)`` (or ``print(result)``) is a table; ``first_forward_divergence`` is the first
    submodule whose output differs, ``first_backward_divergence`` the first one, in backward order
    (the reverse of the forward one), whose output gradient or parameter gradients differ.
    """

    rows: list
    input_grad_diffs: list
    rtol: float
    atol: float
    dtype: str

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.rows) and all(d is None or d[1] for d in self.input_grad_diffs)

    @property
    def first_forward_divergence(self) -> ModuleDiff | None:
        return next((r for r in self.rows if not r.forward_ok), None)

    @property
    def first_backward_divergence(self) -> ModuleDiff | None:
        return next((r for r in reversed(self.rows) if r.calls and not r.backward_ok), None)

    def __getitem__(self, name: str) -> ModuleDiff:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(f"no submodule named {name!r} in the comparison")

    def to_dict(self) -> list:
        """The rows as plain dicts (for JSON, pandas, ...)."""
        return [dict(vars(r), ok=r.ok) for r in self.rows]

    def __str__(self) -> str:
        def num(x):
            return "-" if x is None else ("inf" if math.isinf(x) else f"{x:.1e}")

        header = ["module", "type", "calls", "output shape", "out max|Δ|", "rel", "d(out) max|Δ|", "param grads max|Δ|",
                  "status"]
        table = []
        for r in self.rows:
            grads = ", ".join(f"{k} {num(v)}" for k, v in r.param_diffs.items()) or "-"
            status = "ok" if r.ok else ("FORWARD" if not r.forward_ok else "BACKWARD")
            if r.note:
                status += f" ({r.note})"
            table.append([r.name or "(model)", r.type, str(r.calls) if r.calls == r.torch_calls else
                          f"{r.calls} vs {r.torch_calls}", str(r.out_shape) if r.calls else "-", num(r.out_diff),
                          num(r.out_rel), num(r.dout_diff), grads, status])
        for i, d in enumerate(self.input_grad_diffs):
            if d is not None:
                table.append([f"(input {i})", "gradient", "", "", "", "", num(d[0]), "", "ok" if d[1] else "BACKWARD"])
        widths = [max(len(header[c]), *(len(row[c]) for row in table)) for c in range(len(header))]

        def line(cells):
            return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

        out = [f"compare_modules: {len(self.rows)} submodules, {self.dtype}, tolerance |Δ| <= {self.atol:g} + "
               f"{self.rtol:g}·|torch|", line(header), line(["-" * w for w in widths])]
        out += [line(row) for row in table]
        ff, fb = self.first_forward_divergence, self.first_backward_divergence
        if self.ok:
            out.append("all outputs and gradients agree")
        else:
            if ff is not None:
                out.append(f"forward: outputs first part at {ff.name or '(model)'} ({ff.type}), max|Δ| {num(ff.out_diff)}")
            if ff is not None and fb is not None:
                out.append("backward: gradients differ too, as they must once the forward differs")
            elif fb is not None:
                where = f"backward: gradients first part at {fb.name or '(model)'} ({fb.type})"
                if fb.dout_ok:
                    out.append(f"{where}: the gradient reaching its output agrees but its parameters' "
                               f"({', '.join(fb.bad_params)}) do not, so its own backward is wrong")
                else:
                    after = self.rows[self.rows.index(fb) + 1:]
                    nxt = next((f"{r.name} ({r.type})" for r in after if not fb.name.startswith(r.name + ".")
                                and r.name != ""), "the model's output")
                    out.append(f"{where}: the gradient reaching its output already differs, so the backward of "
                               f"what consumes that output is wrong (the next module to run was {nxt})")
            elif not all(d is None or d[1] for d in self.input_grad_diffs):
                out.append("backward: only the gradients of the inputs differ")
        return "\n".join(out)

    __repr__ = __str__


def _flatten(out) -> list:
    if out is None:
        return []
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _flatten(o)]
    if isinstance(out, dict):
        return [t for o in out.values() for t in _flatten(o)]
    return [out]


def _max_diff(a: np.ndarray, b: np.ndarray) -> float:
    if a.shape != b.shape:
        return math.inf
    if a.size == 0:
        return 0.0
    d = np.abs(a.astype(np.float64) - b.astype(np.float64))
    same_inf = np.isinf(a) & np.isinf(b) & (np.sign(a) == np.sign(b))
    both_nan = np.isnan(a) & np.isnan(b)
    d[same_inf | both_nan] = 0.0
    return float(np.nan_to_num(d, nan=math.inf).max())


def _close(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> bool:
    if a.shape != b.shape:
        return False
    return bool(np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True))


def _first_float_dtype(params):
    for p in params:
        if p.dtype.is_floating_point if hasattr(p.dtype, "is_floating_point") else np.dtype(p.dtype).kind == "f":
            return p.dtype
    return None


def compare_modules(model, torch_model, *inputs, kwargs: dict | None = None, rtol: float | None = None,
                    atol: float | None = None, seed: int = 0, backward: bool = True,
                    print_table: bool = False) -> ModuleComparison:
    """Run ``model`` (minitorch_ln) and ``torch_model`` (PyTorch) side by side and compare every submodule.

    Both models must hold the same weights (e.g. after :func:`load_torch_state_dict`) and be in the
    same mode; put both in ``eval()`` or set dropout to 0, since the two draw different random masks.

    Args:
        inputs: positional inputs, as NumPy arrays (or Tensors of either library, or plain Python
            values passed as they are). Float arrays are cast to each model's parameter dtype and
            require grad, so their gradients are compared too.
        kwargs: keyword inputs of ``forward`` (masks, flags), converted the same way but not
            differentiated.
        rtol, atol: the tolerance ``|ours - torch| <= atol + rtol·|torch|``; by default 1e-7 and
            1e-9 in float64, 1e-4 and 1e-5 in float32 (errors grow through a deep model).
        seed: of the random upstream gradient (the same array for both).
        backward: compare gradients too (default).
        print_table: print the table as well as returning it.
    Returns:
        A :class:`ModuleComparison` (``str()`` of it is the table). Submodules are matched by dotted
        name; one missing on either side is reported, not an error. The models' ``.grad`` are
        reset and then hold the gradients of this run.
    """
    torch = _torch()
    kwargs = kwargs or {}
    our_dtype = _first_float_dtype(model.parameters())
    their_dtype = _first_float_dtype(torch_model.parameters())
    our_device = next(iter(model.parameters())).device if our_dtype is not None else backend.device("cpu")
    their_device = next(iter(torch_model.parameters())).device if their_dtype is not None else "cpu"
    dtype_name = str(np.dtype(our_dtype)) if our_dtype is not None else "float32"
    tol64 = our_dtype is not None and np.dtype(our_dtype) == np.float64
    rtol = rtol if rtol is not None else (1e-7 if tol64 else 1e-4)
    atol = atol if atol is not None else (1e-9 if tol64 else 1e-5)

    def convert(value, differentiable):
        if isinstance(value, Tensor) or hasattr(value, "detach") or isinstance(value, np.ndarray):
            arr = _to_numpy(value)
            if arr.dtype.kind == "f":
                ours = Tensor(arr.astype(our_dtype or arr.dtype), device=our_device)
                theirs = torch.from_numpy(np.array(arr, copy=True)).to(device=their_device, dtype=their_dtype)
                if differentiable:
                    ours.requires_grad_(True)
                    theirs.requires_grad_(True)
                return ours, theirs
            return Tensor(arr.copy(), device=our_device), torch.from_numpy(np.array(arr, copy=True)).to(their_device)
        return value, value

    pairs = [convert(x, backward) for x in inputs]
    kw_pairs = {k: convert(v, False) for k, v in kwargs.items()}

    ours_rec, theirs_rec = OrderedDict(), OrderedDict()  # name -> list of calls, each a list of (values, grad slot)
    handles = []

    def recorder(store, name, is_torch):
        def hook(module, args, output):
            call = []
            for t in _flatten(output):
                if is_torch and isinstance(t, torch.Tensor):
                    entry = {"value": _torch_to_numpy(t), "grad": None}
                    if t.requires_grad and backward:
                        t.register_hook(lambda g, e=entry: e.__setitem__("grad", _torch_to_numpy(g)))
                elif not is_torch and isinstance(t, Tensor):
                    entry = {"value": np.array(backend.to_device(t.array, "cpu"), copy=True), "grad": None}
                    if t.requires_grad and backward:
                        t.register_hook(lambda g, e=entry: e.__setitem__("grad", np.array(
                            backend.to_device(g.array, "cpu"), copy=True)))
                else:
                    continue
                call.append(entry)
            store.setdefault(name, []).append(call)
        return hook

    for name, m in model.named_modules():
        handles.append(m.register_forward_hook(recorder(ours_rec, name, False)))
    torch_modules = dict(torch_model.named_modules())
    for name, m in torch_modules.items():
        handles.append(m.register_forward_hook(recorder(theirs_rec, name, True)))
    model.zero_grad()
    torch_model.zero_grad(set_to_none=True)
    try:
        out_ours = model(*[p[0] for p in pairs], **{k: p[0] for k, p in kw_pairs.items()})
        out_theirs = torch_model(*[p[1] for p in pairs], **{k: p[1] for k, p in kw_pairs.items()})
        if backward:
            rng = np.random.default_rng(seed)
            flat_o = [t for t in _flatten(out_ours) if isinstance(t, Tensor)]
            flat_t = [t for t in _flatten(out_theirs) if isinstance(t, torch.Tensor)]
            pairs_out = [(o, t) for o, t in zip(flat_o, flat_t) if o.requires_grad and t.requires_grad]
            if pairs_out:
                ups = [rng.standard_normal(o.shape) for o, _ in pairs_out]
                _mt_backward([o for o, _ in pairs_out],
                             [Tensor(u.astype(o.dtype), device=o.device) for u, (o, _) in zip(ups, pairs_out)])
                torch.autograd.backward([t for _, t in pairs_out],
                                        [torch.from_numpy(u).to(device=t.device, dtype=t.dtype)
                                         for u, (_, t) in zip(ups, pairs_out)])
    finally:
        for h in handles:
            h.remove()

    our_modules = dict(model.named_modules())
    order = list(ours_rec) + [n for n in our_modules if n not in ours_rec]
    order += [n for n in torch_modules if n not in our_modules]
    rows = []
    for name in order:
        mod, tmod = our_modules.get(name), torch_modules.get(name)
        row = ModuleDiff(name=name, type=type(mod if mod is not None else tmod).__name__)
        if mod is None or tmod is None:
            row.note = "only in PyTorch's model" if mod is None else "only in minitorch_ln's model"
            row.forward_ok = False
            row.torch_calls = len(theirs_rec.get(name, []))
            rows.append(row)
            continue
        calls_o, calls_t = ours_rec.get(name, []), theirs_rec.get(name, [])
        row.calls, row.torch_calls = len(calls_o), len(calls_t)
        if row.calls != row.torch_calls:
            row.forward_ok, row.note = False, "called a different number of times"
        out_d, rel_d, dout_d = [], [], []
        for co, ct in zip(calls_o, calls_t):
            if len(co) != len(ct):
                row.forward_ok, row.note = False, f"{len(co)} output tensor(s) vs {len(ct)}"
            for eo, et in zip(co, ct):
                a, b = eo["value"], et["value"]
                row.out_shape = row.out_shape or tuple(a.shape)
                out_d.append(_max_diff(a, b))
                scale = float(np.abs(b).max()) if b.size and np.isfinite(b).all() else 0.0
                rel_d.append(out_d[-1] / scale if scale > 0 else out_d[-1])
                if a.dtype.kind == "f" and not _close(a, b, rtol, atol):
                    row.forward_ok = False
                if eo["grad"] is not None or et["grad"] is not None:
                    if eo["grad"] is None or et["grad"] is None or not _close(eo["grad"], et["grad"], rtol, atol):
                        row.backward_ok = row.dout_ok = False
                    both = eo["grad"] is not None and et["grad"] is not None
                    dout_d.append(_max_diff(eo["grad"], et["grad"]) if both else math.inf)
        row.out_diff = max(out_d) if out_d else None
        row.out_rel = max(rel_d) if rel_d else None
        row.dout_diff = max(dout_d) if dout_d else None
        tparams = dict(tmod.named_parameters(recurse=False))
        for pname, p in mod.named_parameters(recurse=False):
            tp = tparams.get(pname)
            if tp is None:
                row.param_diffs[pname], row.note = math.inf, f"no parameter {pname!r} in PyTorch's module"
                row.backward_ok = False
                row.bad_params.append(pname)
                continue
            pv, tv = np.asarray(backend.to_device(p.array, "cpu")), _torch_to_numpy(tp)
            row.weight_diffs[pname] = _max_diff(pv, tv)
            if not _close(pv, tv, rtol, atol):
                row.forward_ok, row.note = False, f"weights {pname!r} differ"
            if not backward:
                continue
            g, tg = p.grad, tp.grad
            if g is None and tg is None:
                row.param_diffs[pname] = None
            elif g is None or tg is None:
                row.param_diffs[pname] = math.inf
                row.backward_ok = False
                row.bad_params.append(pname)
                row.note = f"{pname}: only {'PyTorch' if g is None else 'minitorch_ln'} has a gradient"
            else:
                ga, gb = np.asarray(backend.to_device(g.array, "cpu")), _torch_to_numpy(tg)
                row.param_diffs[pname] = _max_diff(ga, gb)
                if not _close(ga, gb, rtol, atol):
                    row.backward_ok = False
                    row.bad_params.append(pname)
        rows.append(row)

    input_diffs = []
    for ours, theirs in pairs:
        if isinstance(ours, Tensor) and ours.requires_grad and backward:
            if ours.grad is None or theirs.grad is None:
                input_diffs.append((math.inf if (ours.grad is None) != (theirs.grad is None) else 0.0,
                                    (ours.grad is None) == (theirs.grad is None)))
            else:
                a, b = np.asarray(backend.to_device(ours.grad.array, "cpu")), _torch_to_numpy(theirs.grad)
                input_diffs.append((_max_diff(a, b), _close(a, b, rtol, atol)))
        else:
            input_diffs.append(None)
    result = ModuleComparison(rows=rows, input_grad_diffs=input_diffs, rtol=rtol, atol=atol, dtype=dtype_name)
    if print_table:
        print(result)
    return result

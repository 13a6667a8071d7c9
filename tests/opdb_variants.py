"""The op database's other columns, walked for every op minitorch_ln provides (see ``opdb_walk.py`` for the
samples' forward and first gradient):

- ``error_inputs``: inputs PyTorch refuses (``ErrorInput``: a sample, an error type, a message pattern).
  Outcomes: ``refuses`` (an exception PyTorch's ``except <error type>`` would catch), ``other-error`` (an
  exception of another type), ``accepts`` (a result where PyTorch raises: possibly a silently wrong number),
  ``crash`` (a bare Python/NumPy error).
- ``gradgrad``: where the OpInfo says second derivatives are supported, the second derivative along random
  directions, ``d/dx <grad_x(<f(x), u>), w>``, compared with PyTorch's (float64).
- ``inplace``: the in-place method (``add_``): same values as PyTorch's, the input itself changed and returned.
- ``out``: ``fn(..., out=t)``: the result written into ``t`` and ``t`` returned, as PyTorch's.

``python tests/opdb_variants.py`` prints the outcome counts per column and the ops that are not all
``agree``/``refuses``; ``tests/test_torch_op_db_variants.py`` holds them.
"""

from __future__ import annotations

import collections
import os
import warnings

import numpy as np
import opdb_walk as walk

import minitorch_ln as mt

CAP = int(os.environ.get("OPDB_VARIANT_SAMPLES", "2"))  # per op and column: the first ones (deterministic)


def _convert(sample, fresh=True):
    """``(torch args, torch kwargs, our args, our kwargs)`` of a sample; TypeError when unconvertible."""
    memo_t = {}
    args_t = [walk._fresh(a, memo_t) if fresh else a for a in (sample.input, *sample.args)]
    kwargs_t = walk._fresh(dict(sample.kwargs), memo_t) if fresh else dict(sample.kwargs)
    memo = {}
    dmap = walk._dtype_map()
    args_m = [walk.to_ours(a, dmap, memo) for a in args_t]
    return args_t, kwargs_t, args_m, walk.to_ours(kwargs_t, dmap, memo)


def _call(fn, *args, **kwargs):
    """``("ok", result)``, ``("error", exc)`` or ``("crash", exc)``."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", fn(*args, **kwargs)
    except walk._BARE as exc:
        return ("error" if type(exc).__module__.startswith("minitorch_ln") or _raised_on_purpose(exc) else "crash"), exc
    except Exception as exc:  # noqa: BLE001 - a refusal with a message
        return "error", exc


def _raised_on_purpose(exc) -> bool:
    """True when the innermost frame is minitorch_ln's own ``raise`` statement (an ``IndexError`` naming a dim
    out of range, as PyTorch's), not an indexing or arithmetic error escaping from inside the code."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None or "minitorch_ln" not in tb.tb_frame.f_code.co_filename:
        return False
    import linecache

    lines = [linecache.getline(tb.tb_frame.f_code.co_filename, n).strip() for n in range(tb.tb_lineno - 3, tb.tb_lineno + 1)]
    return any(line.startswith("raise ") for line in lines)


def _brief(exc) -> str:
    return f"{type(exc).__name__}: {str(exc)[:100]}"


# ------------------------------------------------------------------------------------------ error_inputs

def error_outcomes(op, fn):
    """``{i: (outcome, detail)}`` for the op's first :data:`CAP` * 3 error inputs."""
    out = {}
    try:
        inputs = list(op.error_inputs("cpu"))
    except Exception:  # noqa: BLE001 - a generator needing CUDA or another device
        return out
    for i, ei in enumerate(inputs[: CAP * 3]):
        try:
            _, _, args_m, kwargs_m = _convert(ei.sample_input, fresh=False)
        except (TypeError, ValueError, RuntimeError) as exc:  # a tensor torch itself cannot hand over
            out[i] = ("skipped", f"unconvertible: {exc}")
            continue
        kind, res = _call(fn, *args_m, **kwargs_m)
        if kind == "crash" and isinstance(res, AttributeError) and not isinstance(args_m[0], mt.Tensor):
            out[i] = ("skipped", "a method OpInfo called on a Python number (the walk's wrapper, not ours)")
            continue
        if kind == "ok":
            out[i] = ("accepts", f"PyTorch raises {ei.error_type.__name__}: {ei.error_regex[:80]}")
        elif isinstance(res, ei.error_type) and ei.error_type is not Exception and str(res):
            out[i] = ("refuses", _brief(res))  # PyTorch's own type (an IndexError for a dim out of range too)
        elif kind == "crash":
            out[i] = ("crash", _brief(res))
        elif isinstance(res, ei.error_type):
            out[i] = ("refuses", _brief(res))
        else:
            out[i] = ("other-error", f"{_brief(res)} (PyTorch: {ei.error_type.__name__})")
    return out


# ------------------------------------------------------------------------------------------ second derivatives

def _gradgrad_one(op, fn, sample, seed):
    torch = walk._torch()
    try:
        args_t, kwargs_t, args_m, kwargs_m = _convert(sample)
    except (TypeError, ValueError) as exc:
        return "skipped", f"unconvertible: {exc}"
    ins_t = [t for t in walk._leaves(args_t) if isinstance(t, torch.Tensor) and t.requires_grad]
    ins_m = [m for m, t in zip(walk._leaves(args_m), walk._leaves(args_t))
             if isinstance(t, torch.Tensor) and t.requires_grad]
    if not ins_t:
        return "skipped", "no input requires grad"
    try:
        outs_t = [o for o in walk._leaves(op.op(*args_t, **kwargs_t))
                  if isinstance(o, torch.Tensor) and o.requires_grad]
    except Exception as exc:  # noqa: BLE001
        return "skipped", f"PyTorch raises {type(exc).__name__}"
    kind, res = _call(fn, *args_m, **kwargs_m)
    if kind != "ok":
        return kind, _brief(res)
    outs_m = [o for o in walk._leaves(res) if isinstance(o, mt.Tensor) and o.requires_grad]
    if len(outs_m) != len(outs_t) or not outs_t:
        return "skipped", "outputs not comparable"
    rng = np.random.default_rng(seed)
    ups = [rng.standard_normal(tuple(o.shape)) for o in outs_t]
    dirs = [rng.standard_normal(tuple(x.shape)) for x in ins_t]
    try:
        g_t = torch.autograd.grad(outs_t, ins_t, [torch.from_numpy(u) for u in ups], create_graph=True,
                                  allow_unused=True)
        pairs_t = [(g, d) for g, d in zip(g_t, dirs) if g is not None and g.requires_grad]
        if not pairs_t:
            return "skipped", "PyTorch's first gradient is constant"
        s_t = sum((g * torch.from_numpy(d)).sum() for g, d in pairs_t)
        gg_t = torch.autograd.grad(s_t, ins_t, allow_unused=True)
    except Exception as exc:  # noqa: BLE001
        return "skipped", f"PyTorch's double backward raises {type(exc).__name__}"
    kind, g_m = _call(mt.autograd.grad, outs_m, ins_m, [mt.tensor(u) for u in ups], create_graph=True,
                      allow_unused=True)
    if kind != "ok":
        return kind, "grad: " + _brief(g_m)
    # a first gradient that does not require grad is constant in the inputs: its second derivative is zero,
    # which is right where PyTorch's is zero too (relu, abs, max-pooling: piecewise linear)
    keep = [i for i, g in enumerate(g_m) if g is not None and g.requires_grad and dirs[i] is not None]
    if keep:
        s_m = sum((g_m[i] * mt.tensor(dirs[i])).sum() for i in keep)
        kind, gg_m = _call(mt.autograd.grad, s_m, ins_m, allow_unused=True)
        if kind != "ok":
            return kind, "double backward: " + _brief(gg_m)
    else:
        gg_m = [None] * len(ins_m)
    for i, (a, b) in enumerate(zip(gg_m, gg_t)):
        if b is None:
            continue
        a_arr = np.zeros(tuple(b.shape)) if a is None else np.asarray(a.detach().array)
        why = walk._close(a_arr, b.detach().numpy(force=True), "float64")
        if why:
            return "differ", f"second derivative of input {i}: {why}"
    return "agree", ""


def gradgrad_outcomes(op, fn):
    if not (op.supports_gradgrad and op.supports_autograd) or op.name in walk.RANDOM_OPS | set(walk.GAUGE_OPS):
        return {}
    return {i: _gradgrad_one(op, fn, s, i) for i, s in enumerate(walk.samples(op, "float64", n=CAP))}


# ------------------------------------------------------------------------------------------ in-place and out=

def _inplace_one(op, name, sample, extra):
    torch = walk._torch()
    try:
        args_t, kwargs_t, args_m, kwargs_m = _convert(sample)
    except TypeError as exc:
        return "skipped", f"unconvertible: {exc}"
    args_t = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args_t]
    args_m = [a.detach().clone() if isinstance(a, mt.Tensor) else a for a in args_m]
    try:
        theirs = getattr(args_t[0], name)(*args_t[1:], **kwargs_t, **extra)
    except Exception as exc:  # noqa: BLE001
        return "skipped", f"PyTorch raises {type(exc).__name__}"
    method = getattr(args_m[0], name, None)
    if method is None:
        return "error", f"Tensor.{name} is missing"
    kind, ours = _call(method, *args_m[1:], **kwargs_m, **extra)
    if kind != "ok":
        return kind, _brief(ours)
    if ours is not args_m[0]:
        return "differ", f"Tensor.{name} did not return its own tensor"
    random = op.name in walk.RANDOM_OPS or name in ("normal_", "uniform_", "bernoulli_", "exponential_")
    why = walk.compare_outputs(ours, theirs, str(args_t[0].dtype).replace("torch.", ""), values=not random)
    return ("differ", why) if why else ("agree", "")


def inplace_outcomes(op):
    if op.inplace_variant is None:
        return {}
    iv = op.inplace_variant
    extra = dict(getattr(iv, "keywords", None) or {})  # functools.partial(torch.Tensor.div_, rounding_mode=...)
    name = getattr(getattr(iv, "func", iv), "__name__", None)
    if name is None:
        return {}
    return {(d, i): _inplace_one(op, name, s, extra) for d in walk.DTYPES
            for i, s in enumerate(walk.samples(op, d, n=CAP)) if not s.kwargs.get("out")}


def _out_one(op, fn, sample, dtype_name):
    torch = walk._torch()
    try:
        args_t, kwargs_t, args_m, kwargs_m = _convert(sample)
    except TypeError as exc:
        return "skipped", f"unconvertible: {exc}"
    args_t = [a.detach() if isinstance(a, torch.Tensor) else a for a in args_t]
    args_m = [a.detach() if isinstance(a, mt.Tensor) else a for a in args_m]
    try:
        with torch.no_grad():
            expected = op.op(*args_t, **kwargs_t)
    except Exception as exc:  # noqa: BLE001
        return "skipped", f"PyTorch raises {type(exc).__name__}"
    if not isinstance(expected, torch.Tensor):
        return "skipped", "several outputs"
    out_m = mt.empty((0,), dtype=walk._dtype_map().get(expected.dtype, mt.float64))
    with mt.no_grad():  # out= records no graph (with an input requiring grad it raises, as PyTorch)
        kind, ours = _call(fn, *args_m, **kwargs_m, out=out_m)
    if kind != "ok":
        return kind, _brief(ours)
    if ours is not out_m:
        return "differ", "out= tensor not returned"
    why = walk.compare_outputs(out_m, expected, dtype_name)
    return ("differ", why) if why else ("agree", "")


def out_outcomes(op, fn):
    if not op.supports_out or op.name in walk.RANDOM_OPS:
        return {}
    return {(d, i): _out_one(op, fn, s, d) for d in walk.DTYPES for i, s in enumerate(walk.samples(op, d, n=CAP))}


# ------------------------------------------------------------------------------------------ the walk

COLUMNS = ("error_inputs", "gradgrad", "inplace", "out")
GOOD = {"agree", "refuses", "skipped"}


def walk_variants(op, columns=COLUMNS):
    """``{column: {key: (outcome, detail)}}`` for one OpInfo minitorch_ln provides, or None when it lacks it."""
    fn = walk.function_for(op)
    if fn is None:
        return None
    torch = walk._torch()
    res = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for col in columns:
            torch.manual_seed(0)
            res[col] = {"error_inputs": lambda: error_outcomes(op, fn), "gradgrad": lambda: gradgrad_outcomes(op, fn),
                        "inplace": lambda: inplace_outcomes(op), "out": lambda: out_outcomes(op, fn)}[col]()
    return res


def main() -> None:
    totals = {c: collections.Counter() for c in COLUMNS}
    for op in walk.op_database():
        res = walk_variants(op)
        if res is None:
            continue
        for col, outcomes in res.items():
            counts = collections.Counter(o for o, _ in outcomes.values())
            totals[col].update(counts)
            bad = [(k, v) for k, v in outcomes.items() if v[0] not in GOOD]
            if bad:
                print(f"{col:12s} {walk.op_key(op):36s} {dict(counts)}  e.g. {bad[0][1][0]}: {bad[0][1][1]}")
    print()
    for col in COLUMNS:
        print(f"{col:12s} {dict(totals[col])}")


if __name__ == "__main__":
    main()

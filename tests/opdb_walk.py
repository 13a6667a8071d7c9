"""Walk PyTorch's own op database (``torch.testing._internal.common_methods_invocations.op_db``) against
minitorch_ln: find each OpInfo's function here through the ``torch`` alias, convert its samples, run
both, and classify every sample.

Outcomes of one sample:

- ``agree``: same shape, dtype and values (NaN where PyTorch's NaN are; complex values part by part), and
  in float64 and complex128 the same gradient of every input under one random upstream gradient (complex
  outputs get a random complex one);
- ``differ``: a number, dtype or shape that is not PyTorch's -- *silently wrong*, the worst outcome;
- ``error``: minitorch_ln raised an exception with a message (an argument or dtype it does not support);
- ``crash``: a bare Python or NumPy error from inside the code (AttributeError, IndexError, KeyError,
  ZeroDivisionError, NameError, NumPy's AxisError) -- never acceptable.

``python tests/opdb_walk.py`` prints the per-op table and the totals; ``tests/test_torch_op_db.py``
holds every op to its recorded outcome.
"""

from __future__ import annotations

import collections
import dis
import numbers
import types
import warnings

import numpy as np

import minitorch_ln as mt
from minitorch_ln.interop import torch_alias

SAMPLES_PER_OP = int(__import__("os").environ.get("OPDB_SAMPLES", "3"))  # per dtype, the first ones the OpInfo yields (deterministic), to fit CI's budget
DTYPES = tuple(__import__("os").environ.get("OPDB_DTYPES", "float64,float32,complex128,complex64").split(","))
GRAD_DTYPES = ("float64", "complex128")  # gradients are compared in double precision only

# Ops whose values are random draws: only shape and dtype are compared.
RANDOM_OPS = {"bernoulli", "cauchy", "exponential", "geometric", "log_normal", "normal", "uniform", "multinomial",
              "rand_like", "randint_like", "randn_like", "randint", "randn", "rand", "nn.functional.dropout",
              "nn.functional.dropout2d", "nn.functional.dropout3d", "nn.functional.alpha_dropout",
              "nn.functional.feature_alpha_dropout", "nn.functional.rrelu",
              "nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool3d", "randperm", "empty",
              "empty_like", "new_empty", "empty_strided", "new_empty_strided", "empty_permuted"}

# Outputs defined up to a sign per column (eigenvectors, singular vectors; a phase e^{iφ} for complex ones):
# each column is turned so that its largest entry is real and positive, on both sides, before comparing; gradients of such outputs are
# compared by the ops' own tests (gauge-invariant losses), not here.
# torch.svd and pca_lowrank return V (vectors as columns), linalg.svd Vh (as rows)
GAUGE_OPS = {"linalg.eigh": (1,), "linalg.svd": (0, 2), "svd": (0, 2), "linalg.eig": (1,), "pca_lowrank": (0, 2)}


def _fix_sign(x, transpose):
    a = (x.detach().cpu().resolve_conj().numpy() if hasattr(x, "numpy") and not isinstance(x, mt.Tensor)
         else np.asarray(x.detach().array))
    a = np.swapaxes(a, -1, -2) if transpose else a
    if a.size == 0:
        return a
    idx = np.argmax(np.abs(a), axis=-2)[..., None, :]
    a = a * np.conj(np.sign(np.take_along_axis(a, idx, axis=-2)))  # complex: the phase e^{iφ} taken out
    return np.swapaxes(a, -1, -2) if transpose else a


def gauge(op, ours, theirs):
    """``(ours, theirs)`` with sign-ambiguous outputs normalized (see :data:`GAUGE_OPS`)."""
    if op.name not in GAUGE_OPS:
        return ours, theirs
    ours, theirs = list(ours), list(theirs)
    for i in GAUGE_OPS[op.name]:
        transpose = op.name == "linalg.svd" and i == 2  # Vh: rows are the vectors (torch.svd's V: columns)
        ours[i], theirs[i] = _fix_sign(ours[i], transpose), _fix_sign(theirs[i], transpose)
    return tuple(ours), tuple(theirs)


_BARE = (AttributeError, IndexError, KeyError, ZeroDivisionError, NameError, UnboundLocalError,
         np.exceptions.AxisError)


def _alias_namespace(name: str):
    return torch_alias._AliasModule(name)  # noqa: SLF001 - the alias's own namespace, without installing it


def resolve(op):
    """minitorch_ln's function for an OpInfo, or None: a function in the alias's namespaces; else, for an
    OpInfo whose op is a Tensor method or property only (``x.contiguous()``, ``x.T``, ``Tensor.__radd__``),
    the database's own wrapper (rebound by :func:`function_for`) when every name it uses exists here, or a
    call of the same-named method of minitorch_ln's Tensor."""
    parts = op.name.split(".")
    ns = "torch" if len(parts) == 1 else "torch." + ".".join(parts[:-1])
    if ns not in torch_alias.NAMESPACES:
        return None
    try:
        fn = getattr(_alias_namespace(ns), parts[-1])
    except AttributeError:
        fn = None
    if callable(fn):
        return fn
    if ns != "torch":
        return None
    if _is_db_wrapper(op.op):
        # the op itself must exist here too (a wrapper may reach torch through a helper the check cannot see,
        # as svd_lowrank's): a Tensor method or property of that name (or its in-place form, cauchy -> cauchy_)
        named = any(hasattr(mt.Tensor, n) for n in (parts[-1], parts[-1] + "_"))
        return op.op if named and _wrapper_names_exist(op.op) else None
    method = getattr(op.method_variant, "__name__", None)
    if method and hasattr(mt.Tensor, method):
        return lambda self, *args, **kwargs: getattr(self, method)(*args, **kwargs)
    return None


def _is_db_wrapper(fn) -> bool:
    return getattr(fn, "__module__", "").startswith("torch.testing") and hasattr(fn, "__code__")


def _wrapper_names_exist(fn) -> bool:
    """Whether every attribute a database wrapper reads exists here: ``torch.X`` in the alias's ``torch``,
    anything else (``x.contiguous``, ``torch.Tensor.item``) on minitorch_ln's Tensor."""
    torch_ns, prev = _alias_namespace("torch"), None
    for ins in dis.get_instructions(fn):
        if ins.opname in ("LOAD_ATTR", "LOAD_METHOD"):
            owner = torch_ns if prev is not None and prev.opname == "LOAD_GLOBAL" and prev.argval == "torch" else mt.Tensor
            if not hasattr(owner, ins.argval):
                return False
        prev = ins
    return True


class _Namespace:
    """``torch``, ``torch.nn``, ... as the alias shows them, for rebinding the database's wrappers."""

    def __init__(self, name):
        self._name, self._module = name, _alias_namespace(name)

    def __getattr__(self, attr):
        sub = f"{self._name}.{attr}"
        return _Namespace(sub) if sub in torch_alias.NAMESPACES else getattr(self._module, attr)


def _seeded_call(f, *a, **k):
    """PyTorch's ``wrapper_set_seed`` on minitorch_ln's side: seed 42, then call (its generator draws PyTorch's
    CPU stream, so an op whose draws follow PyTorch's gets the same values)."""
    mt.manual_seed(42)
    return f(*a, **k)


def rebind(fn):
    """A wrapper the database defines itself (``lambda self, cond, other: torch.where(cond, self, other)``)
    with ``torch`` meaning minitorch_ln (and its seed helper calling straight through)."""
    glb = dict(fn.__globals__)
    glb["torch"] = _Namespace("torch")
    glb["wrapper_set_seed"] = _seeded_call
    return types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__, fn.__closure__)


def function_for(op):
    """What to call on minitorch_ln's side for an OpInfo: its own function, or the database's wrapper
    rebound to minitorch_ln; None when minitorch_ln lacks the op."""
    fn = resolve(op)
    if fn is None:
        return None
    if _is_db_wrapper(op.op):
        return rebind(op.op)
    return fn


def _torch():
    import torch  # noqa: PLC0415 - only the walk needs the reference

    return torch


def to_ours(value, dtype_map, memo=None):
    """A sample's argument converted: tensors to minitorch_ln tensors (requires_grad kept; one tensor
    used twice stays one tensor, so its gradients add up), torch dtypes, devices and sizes to ours;
    anything unconvertible raises TypeError (the sample is skipped)."""
    torch = _torch()
    memo = {} if memo is None else memo
    if isinstance(value, torch.Tensor):
        if value.dtype not in dtype_map:
            raise TypeError(f"dtype {value.dtype}")
        if id(value) not in memo:
            arr = _numpy(value.detach().cpu().resolve_conj().resolve_neg(), torch).copy()
            memo[id(value)] = mt.tensor(arr, requires_grad=value.requires_grad)
        return memo[id(value)]
    if isinstance(value, torch.dtype):
        if value not in dtype_map:
            raise TypeError(f"dtype {value}")
        return dtype_map[value]
    if isinstance(value, torch.device):
        return str(value)
    if isinstance(value, torch.Size):
        return tuple(value)
    if isinstance(value, (list, tuple)):
        return type(value)(to_ours(v, dtype_map, memo) for v in value) if not hasattr(value, "_fields") else value
    if isinstance(value, dict):
        return {k: to_ours(v, dtype_map, memo) for k, v in value.items()}
    if isinstance(value, (numbers.Number, str, type(None), slice, type(Ellipsis))):
        return value
    if isinstance(value, (torch.memory_format, torch.layout, torch.Generator)):
        raise TypeError(type(value).__name__)
    if callable(value) and getattr(value, "__module__", "") == "torch.nn.functional":
        ours = getattr(mt.nn.functional, value.__name__, None)  # activation=F.gelu -> our F.gelu
        if ours is None:
            raise TypeError(f"torch.nn.functional.{value.__name__}")
        return ours
    if callable(value):
        raise TypeError("callable argument")
    return value


def _numpy(t, torch):  # bfloat16 through its bits: NumPy has none, ml_dtypes has
    return t.view(torch.int16).numpy().view(mt.bfloat16) if t.dtype == torch.bfloat16 else t.numpy()


def _fresh(value, memo):
    """PyTorch's side of a sample with fresh leaves (samples may share one tensor, whose ``.grad`` would
    otherwise carry over from sample to sample); one tensor used twice stays one tensor."""
    torch = _torch()
    if isinstance(value, torch.Tensor):
        if id(value) not in memo:
            memo[id(value)] = value.detach().clone().requires_grad_(value.requires_grad)
        return memo[id(value)]
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_fresh(v, memo) for v in value)
    if isinstance(value, dict):
        return {k: _fresh(v, memo) for k, v in value.items()}
    return value


def _dtype_map():
    torch = _torch()
    return {torch.float64: mt.float64, torch.float32: mt.float32, torch.float16: mt.float16, torch.bfloat16: mt.bfloat16,
            torch.int64: mt.int64, torch.int32: mt.int32, torch.int16: mt.int16, torch.int8: mt.int8,
            torch.uint8: mt.uint8, torch.bool: mt.bool, torch.complex64: mt.complex64, torch.complex128: mt.complex128}


def _leaves(value):
    """Flatten an output (tensor, tuple, namedtuple, list, number) into a list."""
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _leaves(v)]
    return [value]


def _as_array(x):
    torch = _torch()
    if isinstance(x, torch.Tensor):
        return _numpy(x.detach().cpu().resolve_conj().resolve_neg(), torch), str(x.dtype).replace("torch.", "")
    if isinstance(x, mt.Tensor):
        return np.asarray(x.detach().cpu().array), str(x.dtype)
    if isinstance(x, (bool, np.bool_)):
        return np.asarray(x), "pybool"
    if isinstance(x, numbers.Integral):
        return np.asarray(x), "pyint"
    if isinstance(x, numbers.Real):
        return np.asarray(x), "pyfloat"
    return None, type(x).__name__


def _close(a, b, dtype_name) -> str | None:
    """None when ``a`` (ours) equals ``b`` (PyTorch's) to the dtype's tolerance, else why not (complex
    values: their real and imaginary parts, each to the tolerance of the parts' dtype)."""
    if a.shape != b.shape:
        return f"shape {a.shape} vs {b.shape}"
    if a.dtype.kind == "c" or b.dtype.kind == "c":
        a, b = (np.stack([np.real(v), np.imag(v)], -1) for v in (a, b))
        dtype_name = {"complex64": "float32", "complex128": "float64"}.get(dtype_name, dtype_name)
    if b.dtype.kind in "biu" and a.dtype.kind in "biu":
        return None if np.array_equal(a, b) else "integer values differ"
    a, b = a.astype(np.float64), b.astype(np.float64)
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return "NaN positions differ"
    tol = {"float64": 1e-7, "float32": 1e-4, "float16": 1e-2, "bfloat16": 1.6e-2}.get(dtype_name, 1e-5)
    fin = np.isfinite(b)
    if not np.array_equal(a[~fin & ~np.isnan(b)], b[~fin & ~np.isnan(b)]):
        return "infinities differ"
    scale = max(1.0, float(np.abs(b[fin]).max())) if fin.any() else 1.0
    err = np.abs(a[fin] - b[fin]) - tol * np.abs(b[fin]) if fin.any() else np.zeros(0)
    worst = float(err.max()) if err.size else 0.0
    return None if worst <= tol * scale else f"values differ by {worst:.3g} (scale {scale:.3g})"


def compare_outputs(ours, theirs, dtype_name, values=True) -> str | None:
    lo, lt = _leaves(ours), _leaves(theirs)
    if len(lo) != len(lt):
        return f"{len(lo)} outputs vs {len(lt)}"
    for i, (o, t) in enumerate(zip(lo, lt)):
        a, da = _as_array(o)
        b, db = _as_array(t)
        if a is None or b is None:
            if (a is None) != (b is None) or type(o).__name__ != type(t).__name__ and da != db:
                return f"output {i}: {da} vs {db}"
            continue
        if da != db and not (da.startswith("py") and db.startswith("py")):
            return f"output {i}: dtype {da} vs {db}"
        if values:
            why = _close(a, b, dtype_name)
            if why:
                return f"output {i}: {why}"
        elif a.shape != b.shape:
            return f"output {i}: shape {a.shape} vs {b.shape}"
    return None


def _grad_check(op, fn, sample, ours_in, ours_out, theirs_in, theirs_out, seed) -> str | None:
    """Backpropagate one random upstream gradient through both; compare every input's gradient."""
    torch = _torch()
    pairs = [(o, t) for o, t in zip(_leaves(ours_out), _leaves(theirs_out))
             if isinstance(t, torch.Tensor) and t.requires_grad and (t.dtype.is_floating_point or t.dtype.is_complex)]
    if not pairs:
        return None
    if any(not (isinstance(o, mt.Tensor) and o.requires_grad) for o, _ in pairs):
        return "an output does not require grad where PyTorch's does"
    rng = np.random.default_rng(seed)
    ups = [np.asarray(rng.standard_normal(tuple(t.shape)) + (1j * rng.standard_normal(tuple(t.shape))
                                                             if t.dtype.is_complex else 0)) for _, t in pairs]
    mt.autograd.backward([o for o, _ in pairs], [mt.tensor(u.astype(o.dtype)) for u, (o, _) in zip(ups, pairs)])
    torch.autograd.backward([t for _, t in pairs], [torch.from_numpy(u).to(t.dtype) for u, (_, t) in zip(ups, pairs)])
    for i, (o, t) in enumerate(zip(_leaves(ours_in), _leaves(theirs_in))):
        if not (isinstance(t, torch.Tensor) and t.requires_grad):
            continue
        if t.grad is None:
            continue
        if o.grad is None:
            return f"input {i}: no gradient, PyTorch has one"
        tg = torch.zeros_like(t.grad) if t.grad._is_zerotensor() else t.grad  # PyTorch's symbolic zeros (sgn of reals)
        why = _close(np.asarray(o.grad.array), tg.resolve_conj().resolve_neg().numpy(), "float64")
        if why:
            return f"gradient of input {i}: {why}"
    return None


def run_sample(op, fn, sample, dtype_name, seed=0):
    """(outcome, detail) of one sample."""
    torch = _torch()
    dmap = _dtype_map()
    fresh = {}
    args_t = [_fresh(a, fresh) for a in (sample.input, *sample.args)]
    kwargs_t = _fresh(dict(sample.kwargs), fresh)
    try:
        memo = {}
        args_m = [to_ours(a, dmap, memo) for a in args_t]
        kwargs_m = to_ours(kwargs_t, dmap, memo)
    except TypeError as exc:
        return "skipped", f"unconvertible argument: {exc}"
    try:
        theirs = op.op(*args_t, **kwargs_t)
    except Exception as exc:  # noqa: BLE001 - PyTorch refusing its own sample: not comparable
        return "skipped", f"PyTorch raises {type(exc).__name__}"
    try:
        with np.errstate(all="ignore"):
            ours = fn(*args_m, **kwargs_m)
    except _BARE as exc:
        if type(exc).__module__.startswith("minitorch_ln"):
            return "error", f"{type(exc).__name__}: {str(exc)[:120]}"
        return "crash", f"{type(exc).__name__}: {str(exc)[:120]}"
    except Exception as exc:  # noqa: BLE001 - any other exception with a message is a clear refusal
        return "error", f"{type(exc).__name__}: {str(exc)[:120]}"
    random = op.name in RANDOM_OPS or bool(kwargs_t.get("dropout_p")) or bool(kwargs_t.get("p")) and "dropout" in op.name
    why = compare_outputs(*gauge(op, ours, theirs), dtype_name, values=not random)
    if why:
        return "differ", why
    if dtype_name in GRAD_DTYPES and op.supports_autograd and not random and op.name not in GAUGE_OPS:
        try:
            why = _grad_check(op, fn, sample, args_m, ours, args_t, theirs, seed)
        except _BARE as exc:
            return "crash", f"backward: {type(exc).__name__}: {str(exc)[:120]}"
        except Exception as exc:  # noqa: BLE001
            return "error", f"backward: {type(exc).__name__}: {str(exc)[:120]}"
        if why:
            return "differ", why
    return "agree", ""


def op_key(op) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def samples(op, dtype_name, n=SAMPLES_PER_OP):
    torch = _torch()
    dtype = getattr(torch, dtype_name)
    if dtype not in op.supported_dtypes("cpu"):
        return []
    grad = dtype_name in GRAD_DTYPES and op.supports_autograd and op.name not in RANDOM_OPS
    out = []
    try:
        gen = op.sample_inputs("cpu", dtype, requires_grad=grad)
        for s in gen:
            out.append(s)
            if len(out) >= n:
                break
    except Exception:  # noqa: BLE001 - a sample generator that needs something absent here
        return out
    return out


def walk_op(op):
    """``{(dtype, i): (outcome, detail)}`` for one OpInfo, or None when minitorch_ln lacks it."""
    with warnings.catch_warnings():  # the samples' deprecation and degrees-of-freedom warnings
        warnings.simplefilter("ignore")
        return _walk_op(op)


def _walk_op(op):
    fn = function_for(op)
    if fn is None:
        return None
    torch = _torch()
    results = {}
    for dtype_name in DTYPES:
        for i, s in enumerate(samples(op, dtype_name)):
            torch.manual_seed(0)
            results[(dtype_name, i)] = run_sample(op, fn, s, dtype_name, seed=i)
    return results


def op_database():
    from torch.testing._internal.common_methods_invocations import op_db  # noqa: PLC0415

    unfreeze_torch_backend_flags()
    return op_db


def unfreeze_torch_backend_flags() -> None:
    """Importing ``torch.testing._internal`` freezes ``torch.backends``' flags for the whole process
    (``disable_global_flags``, for PyTorch's own test runner); scripts run later in the same test session
    set ``torch.backends.cudnn.benchmark`` and must still be able to."""
    import torch  # noqa: PLC0415

    torch.backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True


def main(names=()) -> None:
    """Walk every OpInfo, or only those whose name or key (``name.variant``) is in ``names``."""
    totals = collections.Counter()
    provided = 0
    per_ns = collections.defaultdict(lambda: [0, 0])
    db = op_database()
    for op in db:
        if names and op.name not in names and op_key(op) not in names:
            continue
        ns = op.name.rpartition(".")[0] or "torch"
        per_ns[ns][1] += 1
        res = walk_op(op)
        if res is None:
            continue
        provided += 1
        per_ns[ns][0] += 1
        outcomes = collections.Counter(o for o, _ in res.values())
        totals.update(outcomes)
        bad = {k: v for k, v in res.items() if v[0] in ("differ", "crash", "error")}
        if bad:
            first = next(iter(bad.items()))
            print(f"{op_key(op):40s} {dict(outcomes)}  e.g. {first[0]}: {first[1][0]}: {first[1][1]}")
            if names:  # a chosen op: every sample that does not agree, with its reason
                for (dtype_name, i), (outcome, why) in bad.items():
                    print(f"    {dtype_name}[{i}] {outcome}: {why}")
        elif names:
            print(f"{op_key(op):40s} {dict(outcomes)}")
    print()
    print(f"OpInfos provided: {provided} of {len(db)}")
    for ns, (have, total) in sorted(per_ns.items()):
        print(f"  {ns:24s} {have:4d} / {total}")
    n = sum(totals.values()) - totals["skipped"]
    print(f"samples: {dict(totals)}; agree {totals['agree']} of {n} compared ({100 * totals['agree'] / max(n, 1):.1f}%)")


if __name__ == "__main__":
    main(tuple(__import__("sys").argv[1:]))

"""Walk PyTorch's own module database (``torch.testing._internal.common_modules.module_db``) against
minitorch_ln: each ModuleInfo whose class the ``torch.nn`` alias provides is built from the same
constructor arguments on both sides, PyTorch's parameters and buffers are copied into ours, and every
forward input is run, compared and (in float64) backpropagated with one random upstream gradient;
input and parameter gradients are compared. Outcomes as in ``opdb_walk.py``.

``python tests/moddb_walk.py`` prints the table and totals; ``tests/test_torch_op_db.py`` holds
every module to its recorded outcome.
"""

from __future__ import annotations

import collections
import warnings

import numpy as np
from opdb_walk import _BARE, _dtype_map, _fresh, _leaves, _torch, compare_outputs, to_ours, unfreeze_torch_backend_flags

import minitorch_ln as mt
from minitorch_ln.interop import torch_alias

DTYPES = ("float64", "float32")


def resolve_module(info):
    """minitorch_ln's class for a ModuleInfo (``nn.Linear`` -> ``torch.nn`` alias -> ``minitorch_ln.nn.Linear``)."""
    name = info.name.rpartition(".")[2]
    try:
        cls = getattr(torch_alias._AliasModule("torch.nn"), name)  # noqa: SLF001
    except AttributeError:
        return None
    return cls if isinstance(cls, type) else None


def module_inputs(info, dtype_name):
    torch = _torch()
    dtype = getattr(torch, dtype_name)
    if dtype not in info.dtypes:
        return []
    try:
        return list(info.module_inputs_func(info, device="cpu", dtype=dtype, requires_grad=dtype_name == "float64",
                                            training=True))
    except Exception:  # noqa: BLE001 - an input generator that needs something absent here
        return []


def _copy_state(ours, theirs) -> None:
    """PyTorch's parameters and buffers, by name, into ours (cast to our tensors' dtypes)."""
    state = ours.state_dict()
    for name, value in theirs.state_dict().items():
        if name in state and hasattr(value, "numpy"):
            target = state[name]
            target.detach().copy_(mt.tensor(value.detach().numpy().copy()).to(target.dtype))


def run_module_input(cls, info, mi, dtype_name, seed=0):
    """(outcome, detail) of one ModuleInput."""
    torch = _torch()
    dmap = _dtype_map()
    fresh = {}
    c_args = _fresh(list(mi.constructor_input.args), fresh)
    c_kwargs = _fresh(dict(mi.constructor_input.kwargs), fresh)
    f_args = _fresh(list(mi.forward_input.args), fresh)
    f_kwargs = _fresh(dict(mi.forward_input.kwargs), fresh)
    try:
        memo = {}
        oc_args, oc_kwargs = to_ours(c_args, dmap, memo), to_ours(c_kwargs, dmap, memo)
        of_args, of_kwargs = to_ours(f_args, dmap, memo), to_ours(f_kwargs, dmap, memo)
    except TypeError as exc:
        return "skipped", f"unconvertible argument: {exc}"
    try:
        torch.manual_seed(seed)
        theirs_m = info.module_cls(*c_args, **c_kwargs).to(getattr(torch, dtype_name))
        theirs = theirs_m(*f_args, **f_kwargs)
    except Exception as exc:  # noqa: BLE001
        return "skipped", f"PyTorch raises {type(exc).__name__}"
    try:
        ours_m = cls(*oc_args, **oc_kwargs).to(getattr(mt, dtype_name))
        if isinstance(ours_m, mt.nn.LazyModuleMixin):  # its first forward infers the shapes; then PyTorch's values
            with mt.no_grad(), np.errstate(all="ignore"):
                ours_m(*of_args, **of_kwargs)
        _copy_state(ours_m, theirs_m)
        with np.errstate(all="ignore"):
            ours = ours_m(*of_args, **of_kwargs)
    except _BARE as exc:
        kind = "error" if type(exc).__module__.startswith("minitorch_ln") else "crash"
        return kind, f"{type(exc).__name__}: {str(exc)[:120]}"
    except Exception as exc:  # noqa: BLE001
        return "error", f"{type(exc).__name__}: {str(exc)[:120]}"
    random = any(k in info.name for k in ("Dropout", "Fractional", "RReLU"))
    why = compare_outputs(ours, theirs, dtype_name, values=not random)
    if why or dtype_name != "float64" or random:
        return ("differ", why) if why else ("agree", "")
    pairs = [(o, t) for o, t in zip(_leaves(ours), _leaves(theirs))
             if isinstance(t, torch.Tensor) and t.requires_grad and t.dtype.is_floating_point]
    if not pairs:
        return "agree", ""
    if any(not (isinstance(o, mt.Tensor) and o.requires_grad) for o, _ in pairs):
        return "differ", "an output does not require grad where PyTorch's does"
    rng = np.random.default_rng(seed)
    ups = [rng.standard_normal(tuple(t.shape)) for _, t in pairs]
    try:
        mt.autograd.backward([o for o, _ in pairs], [mt.tensor(u.astype(o.dtype)) for u, (o, _) in zip(ups, pairs)])
    except Exception as exc:  # noqa: BLE001
        return "error", f"backward: {type(exc).__name__}: {str(exc)[:120]}"
    torch.autograd.backward([t for _, t in pairs], [torch.from_numpy(u).to(t.dtype) for u, (_, t) in zip(ups, pairs)])
    ours_named = dict(ours_m.named_parameters())
    for name, p in theirs_m.named_parameters():
        if p.grad is None:
            continue
        mine = ours_named.get(name)
        if mine is None or mine.grad is None:
            return "differ", f"parameter {name}: no gradient, PyTorch has one"
        why = compare_outputs(mine.grad, p.grad, "float64")
        if why:
            return "differ", f"gradient of {name}: {why}"
    for i, (o, t) in enumerate(zip(_leaves(of_args), _leaves(f_args))):
        if isinstance(t, torch.Tensor) and t.requires_grad and t.grad is not None:
            if o.grad is None:
                return "differ", f"input {i}: no gradient, PyTorch has one"
            why = compare_outputs(o.grad, t.grad, "float64")
            if why:
                return "differ", f"gradient of input {i}: {why}"
    return "agree", ""


def walk_module(info, cap=None):
    """``{(dtype, i): (outcome, detail)}`` for one ModuleInfo, or None when minitorch_ln lacks it."""
    cls = resolve_module(info)
    if cls is None:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {(d, i): run_module_input(cls, info, mi, d, seed=i)
                for d in DTYPES for i, mi in enumerate(module_inputs(info, d)[:cap])}


def module_database():
    from torch.testing._internal.common_modules import module_db  # noqa: PLC0415

    unfreeze_torch_backend_flags()
    return module_db


def main() -> None:
    totals, provided = collections.Counter(), 0
    db = module_database()
    for info in db:
        res = walk_module(info)
        if res is None:
            continue
        provided += 1
        outcomes = collections.Counter(o for o, _ in res.values())
        totals.update(outcomes)
        bad = {k: v for k, v in res.items() if v[0] in ("differ", "crash", "error")}
        if bad:
            first = next(iter(bad.items()))
            print(f"{info.name:32s} {dict(outcomes)}  e.g. {first[0]}: {first[1][0]}: {first[1][1]}")
    n = sum(totals.values()) - totals["skipped"]
    print(f"\nModuleInfos provided: {provided} of {len(db)}")
    print(f"inputs: {dict(totals)}; agree {totals['agree']} of {n} compared ({100 * totals['agree'] / max(n, 1):.1f}%)")


if __name__ == "__main__":
    main()

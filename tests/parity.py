"""Module-level PyTorch parity: same weights, same inputs, same random upstream gradients.

``module_parity(ours, theirs, arrays, call)`` loads ``theirs.state_dict()`` into ``ours``, runs
``call(module, *inputs)`` in both frameworks, compares every output, then backpropagates one
random upstream gradient per output and compares the gradient of every input that requires grad
and of every parameter (matched by name, so a missing or misnamed parameter fails loudly).

Tolerance: the one rule of :func:`helpers.assert_close` (float64 1e-10, float32 1e-5).
"""

from __future__ import annotations

import numpy as np

import minitorch_ln as mt
from helpers import assert_close, to_numpy, to_torch, torch

def _close(ours, theirs, dtype, what, tol):
    """The one tolerance rule of :mod:`helpers` (``tol`` overrides both of its parts)."""
    assert np.all(np.isfinite(to_numpy(ours))), f"{what}: non-finite values in ours"
    return assert_close(ours, theirs, dtype, what, rtol=tol, atol=tol)


def module_parity(ours, theirs, arrays, call, dtype=np.float64, requires_grad=None, device="cpu", seed=0,
                  tol=None, load=True):
    """Compare ``call(ours, *inputs)`` with ``call(theirs, *inputs)``: outputs, input and parameter grads.

    Args:
        arrays: NumPy arrays (converted to ``dtype`` when floating) or other values passed as they are.
            The *same* array object given twice becomes the same tensor twice (self-attention).
        call: ``call(module, *inputs) -> Tensor | tuple`` (``None`` outputs are skipped).
    Returns:
        the largest error seen.
    """
    dtype = np.dtype(dtype)
    theirs = theirs.to(device=device, dtype=getattr(torch, dtype.name))
    ours.to(device, dtype)
    if load:
        ours.load_state_dict(theirs.state_dict())
    if requires_grad is None:
        requires_grad = [isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in arrays]
    made = {}
    ours_in, theirs_in = [], []
    for a, rg in zip(arrays, requires_grad):
        if not isinstance(a, np.ndarray):
            ours_in.append(a)
            theirs_in.append(a)
            continue
        if id(a) not in made:
            arr = a.astype(dtype) if a.dtype.kind == "f" else a
            made[id(a)] = (mt.tensor(arr, device=device, requires_grad=rg), to_torch(arr, rg, device))
        ours_in.append(made[id(a)][0])
        theirs_in.append(made[id(a)][1])
    out_m, out_t = call(ours, *ours_in), call(theirs, *theirs_in)
    out_m = out_m if isinstance(out_m, tuple) else (out_m,)
    out_t = out_t if isinstance(out_t, tuple) else (out_t,)
    worst = 0.0
    pairs = []
    for i, (m, t) in enumerate(zip(out_m, out_t)):
        assert (m is None) == (t is None), f"output {i}: ours {m is None and 'None'} vs torch {t is None and 'None'}"
        if m is None:
            continue
        assert str(m.dtype) == str(t.dtype).replace("torch.", ""), f"output {i}: dtype {m.dtype} vs {t.dtype}"
        worst = max(worst, _close(m, t, dtype, f"output {i}", tol))
        if m.requires_grad:
            pairs.append((m, t))
    rng = np.random.default_rng(seed)
    ups = [rng.standard_normal(m.shape).astype(m.dtype) for m, _ in pairs]
    mt.autograd.backward([m for m, _ in pairs], [mt.tensor(u, device=device) for u in ups])
    torch.autograd.backward([t for _, t in pairs], [to_torch(u, device=device) for u in ups])
    seen = set()
    for i, (m, t) in enumerate(zip(ours_in, theirs_in)):
        if isinstance(m, mt.Tensor) and m.requires_grad and id(m) not in seen:
            seen.add(id(m))
            assert m.grad is not None, f"input {i}: no gradient"
            worst = max(worst, _close(m.grad, t.grad, dtype, f"grad of input {i}", tol))
    ours_p, theirs_p = dict(ours.named_parameters()), dict(theirs.named_parameters())
    assert sorted(ours_p) == sorted(theirs_p), f"parameter names differ: {sorted(set(ours_p) ^ set(theirs_p))}"
    for name, p in theirs_p.items():
        if p.grad is None:
            assert ours_p[name].grad is None or not np.any(to_numpy(ours_p[name].grad)), f"{name}: torch has no grad"
            continue
        assert ours_p[name].grad is not None, f"grad of parameter {name}: ours is None"
        worst = max(worst, _close(ours_p[name].grad, p.grad, dtype, f"grad of parameter {name}", tol))
    return worst

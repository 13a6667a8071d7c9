"""One helper for PyTorch comparisons: forward values, shapes, dtypes and every gradient.

``compare_with_torch(ours, theirs, arrays, ...)`` builds minitorch_ln and PyTorch tensors from the
same NumPy arrays, runs both functions, checks outputs, then backpropagates the same *random*
upstream gradient through both (an all-ones upstream gradient hides errors: for LayerNorm it gives
an input gradient of exactly zero) and checks the gradient of every input that requires grad.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_ln as mt

torch = pytest.importorskip("torch")

TOL = {
    np.dtype(np.float64): dict(rtol=1e-10, atol=1e-10),
    np.dtype(np.float32): dict(rtol=1e-5, atol=1e-5),
    np.dtype(np.float16): dict(rtol=1e-2, atol=1e-2),
}


def to_torch(a, requires_grad=False, device="cpu"):
    t = torch.from_numpy(np.array(a, copy=True)).to(device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def to_numpy(x):
    if isinstance(x, mt.Tensor):
        return np.asarray(x.detach().cpu().array)
    return x.detach().cpu().numpy()


def compare_with_torch(ours, theirs, arrays, requires_grad=None, device="cpu", rtol=None, atol=None, seed=0,
                       check_dtype=True):
    """Run ``ours(*mt_tensors)`` and ``theirs(*torch_tensors)`` and compare values and gradients.

    Args:
        arrays: NumPy arrays (or Python scalars passed to both functions as they are).
        requires_grad: one bool per array (default: float arrays require grad).
    Returns:
        (our outputs, their outputs) as tuples of NumPy arrays.
    """
    if requires_grad is None:
        requires_grad = [isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in arrays]
    ours_in = [mt.tensor(a, device=device, requires_grad=rg) if isinstance(a, np.ndarray) else a
               for a, rg in zip(arrays, requires_grad)]
    theirs_in = [to_torch(a, rg, "cuda" if device == "cuda" else "cpu") if isinstance(a, np.ndarray) else a
                 for a, rg in zip(arrays, requires_grad)]
    out_m, out_t = ours(*ours_in), theirs(*theirs_in)
    out_m = out_m if isinstance(out_m, tuple) else (out_m,)
    out_t = out_t if isinstance(out_t, tuple) else (out_t,)
    assert len(out_m) == len(out_t)
    for i, (m, t) in enumerate(zip(out_m, out_t)):
        assert tuple(m.shape) == tuple(t.shape), f"output {i}: shape {tuple(m.shape)} vs torch {tuple(t.shape)}"
        if check_dtype:
            assert str(m.dtype) == str(t.dtype).replace("torch.", ""), f"output {i}: dtype {m.dtype} vs torch {t.dtype}"
        tol = TOL.get(np.dtype(m.dtype), dict(rtol=0, atol=0))
        np.testing.assert_allclose(to_numpy(m).astype(np.float64), to_numpy(t).astype(np.float64),
                                   rtol=rtol if rtol is not None else tol["rtol"],
                                   atol=atol if atol is not None else tol["atol"], err_msg=f"output {i}")
    diff_m = [(o, t) for o, t in zip(out_m, out_t) if o.requires_grad]
    if not diff_m:
        return tuple(to_numpy(o) for o in out_m), tuple(to_numpy(t) for t in out_t)
    rng = np.random.default_rng(seed)
    ups = [rng.standard_normal(o.shape).astype(o.dtype) for o, _ in diff_m]
    mt.autograd.backward([o for o, _ in diff_m], [mt.tensor(u, device=device) for u in ups])
    torch.autograd.backward([t for _, t in diff_m], [to_torch(u, device=t.device) for u, (_, t) in zip(ups, diff_m)])
    for i, (m, t) in enumerate(zip(ours_in, theirs_in)):
        if not (isinstance(m, mt.Tensor) and m.requires_grad):
            continue
        if t.grad is None:
            assert m.grad is None or np.all(to_numpy(m.grad) == 0), f"input {i}: torch has no grad"
            continue
        assert m.grad is not None, f"input {i}: no gradient, torch has one"
        assert m.grad.shape == tuple(t.grad.shape)
        tol = TOL[np.dtype(m.dtype)]
        np.testing.assert_allclose(to_numpy(m.grad).astype(np.float64), to_numpy(t.grad).astype(np.float64),
                                   rtol=rtol if rtol is not None else tol["rtol"],
                                   atol=atol if atol is not None else tol["atol"], err_msg=f"grad of input {i}")
    return tuple(to_numpy(o) for o in out_m), tuple(to_numpy(t) for t in out_t)


def t64(a, requires_grad=True):
    """A float64 leaf tensor for gradcheck."""
    return mt.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)

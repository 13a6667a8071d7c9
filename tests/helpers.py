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

# One tolerance rule for every comparison with PyTorch (ops and modules alike):
#     |ours - torch| <= atol · scale + rtol · |torch|,   scale = max(1, max |torch|)
# The absolute part is relative to the largest reference magnitude, so that an error of 1e-5 on
# entries of size 30 counts as float32 rounding, not as a bug; NaN must sit where PyTorch's are.
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
    return x.detach().cpu().resolve_conj().resolve_neg().numpy()  # PyTorch's lazy conj (conj(), ihfft) made real


def assert_close(ours, theirs, dtype, what, rtol=None, atol=None):
    """Assert ``ours`` (a minitorch_ln Tensor or array) equals ``theirs`` (a torch tensor or array) by
    the one rule above; returns the largest absolute difference."""
    a = ours if isinstance(ours, np.ndarray) else to_numpy(ours)
    b = theirs if isinstance(theirs, np.ndarray) else to_numpy(theirs)
    if a.dtype.kind == "c" or b.dtype.kind == "c":  # complex: real and imaginary parts side by side (..., 2)
        a, b = (np.stack([np.real(v), np.imag(v)], -1) for v in (a, b))
        dtype = np.dtype(np.dtype(dtype).char.lower()) if np.dtype(dtype).kind == "c" else dtype
    a, b = a.astype(np.float64), b.astype(np.float64)
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs torch {b.shape}"
    tol = TOL.get(np.dtype(dtype), dict(rtol=0.0, atol=0.0))
    rtol = tol["rtol"] if rtol is None else rtol
    atol = tol["atol"] if atol is None else atol
    finite = np.isfinite(b)
    scale = max(1.0, float(np.abs(b[finite]).max())) if finite.any() else 1.0
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol * scale, err_msg=what)
    both = np.isfinite(a) & finite
    return float(np.abs(a[both] - b[both]).max()) if both.any() else 0.0


def compare_with_torch(ours, theirs, arrays, requires_grad=None, device="cpu", rtol=None, atol=None, seed=0,
                       check_dtype=True):
    """Run ``ours(*mt_tensors)`` and ``theirs(*torch_tensors)``; compare outputs and every gradient.

    Checks, for each output: shape, dtype (unless ``check_dtype=False``), values, and that it
    requires grad exactly when PyTorch's does (an op that drops its graph fails here). Then one
    random upstream gradient per differentiable output goes back through both, and the gradient
    of every input that requires grad is compared.

    Args:
        arrays: NumPy arrays (or Python scalars passed to both functions as they are).
        requires_grad: one bool per array (default: float arrays require grad).
    Returns:
        (our outputs, their outputs) as tuples of NumPy arrays.
    """
    if requires_grad is None:
        requires_grad = [isinstance(a, np.ndarray) and a.dtype.kind in "fc" for a in arrays]
    ours_in = [mt.tensor(a, device=device, requires_grad=rg) if isinstance(a, np.ndarray) else a
               for a, rg in zip(arrays, requires_grad)]
    theirs_in = [to_torch(a, rg, "cuda" if device == "cuda" else "cpu") if isinstance(a, np.ndarray) else a
                 for a, rg in zip(arrays, requires_grad)]
    out_m, out_t = ours(*ours_in), theirs(*theirs_in)
    out_m = out_m if isinstance(out_m, tuple) else (out_m,)
    out_t = out_t if isinstance(out_t, tuple) else (out_t,)
    assert len(out_m) == len(out_t), f"{len(out_m)} outputs vs torch {len(out_t)}"
    for i, (m, t) in enumerate(zip(out_m, out_t)):
        assert tuple(m.shape) == tuple(t.shape), f"output {i}: shape {tuple(m.shape)} vs torch {tuple(t.shape)}"
        if check_dtype:
            assert str(m.dtype) == str(t.dtype).replace("torch.", ""), f"output {i}: dtype {m.dtype} vs torch {t.dtype}"
        assert m.requires_grad == t.requires_grad, (
            f"output {i}: requires_grad={m.requires_grad}, torch's is {t.requires_grad}")
        assert_close(m, t, m.dtype, f"output {i}", rtol, atol)
    diff = [(o, t) for o, t in zip(out_m, out_t) if t.requires_grad]
    if diff:
        rng = np.random.default_rng(seed)
        ups = [np.asarray(rng.standard_normal(o.shape) + (1j * rng.standard_normal(o.shape) if o.dtype.kind == "c"
                                                          else 0)).astype(o.dtype) for o, _ in diff]  # complex: both parts
        mt.autograd.backward([o for o, _ in diff], [mt.tensor(u, device=device) for u in ups])
        torch.autograd.backward([t for _, t in diff], [to_torch(u, device=t.device) for u, (_, t) in zip(ups, diff)])
    for i, (m, t) in enumerate(zip(ours_in, theirs_in)):
        if not (isinstance(m, mt.Tensor) and m.requires_grad):
            continue
        if t.grad is None:
            assert m.grad is None or np.all(to_numpy(m.grad) == 0), f"input {i}: torch has no grad"
            continue
        assert m.grad is not None, f"input {i}: no gradient, torch has one"
        assert m.grad.shape == tuple(t.grad.shape), f"grad of input {i}: shape {m.grad.shape} vs {tuple(t.grad.shape)}"
        assert_close(m.grad, t.grad, m.dtype, f"grad of input {i}", rtol, atol)
    return tuple(to_numpy(o) for o in out_m), tuple(to_numpy(t) for t in out_t)


def t64(a, requires_grad=True):
    """A float64 (complex128 for complex ``a``) leaf tensor for gradcheck."""
    return mt.tensor(np.asarray(a, dtype=np.complex128 if np.iscomplexobj(a) else np.float64), requires_grad=requires_grad)


def noncontiguous_leaf(a):
    """A float64 leaf holding ``a`` in memory that is neither C- nor F-contiguous: axes reversed (a
    transpose) and every other element (a slice of a larger buffer)."""
    v = np.zeros([2 * n for n in reversed(np.shape(a))], dtype=np.complex128 if np.iscomplexobj(a) else np.float64)
    v = v.T[(..., *[slice(None, None, 2)] * np.ndim(a))]
    v[...] = a
    assert v.size < 2 or not (v.flags.c_contiguous or v.flags.f_contiguous)
    return mt.Tensor(v, requires_grad=True)


def gradcheck_noncontiguous(fn, arrays, gg=False):
    """``fn`` at non-contiguous float64 leaves gives what it gives on contiguous ones, and passes
    gradcheck (and gradgradcheck) there; integer arrays are passed as index tensors."""
    from minitorch_ln.autograd import gradcheck, gradgradcheck  # noqa: PLC0415

    leaves = [noncontiguous_leaf(a) if a.dtype.kind in "fc" else mt.tensor(a) for a in arrays]
    plain = [t64(a) if a.dtype.kind in "fc" else mt.tensor(a) for a in arrays]
    got, want = fn(*leaves), fn(*plain)
    for p, q in zip(*((o if isinstance(o, (tuple, list)) else (o,)) for o in (got, want))):
        np.testing.assert_allclose(p.array, q.array, rtol=1e-12, atol=1e-14)
    assert gradcheck(fn, tuple(leaves))
    if gg:
        assert gradgradcheck(fn, tuple(leaves))


def gradcheck_contiguous_and_transposed(fn, rng, shape=(3, 4, 5), gg=False, gg_shape=(2, 3, 4)):
    """``fn`` of one float64 tensor passes gradcheck on a contiguous leaf and on a transposed view of one
    (dims 0 and 1 swapped), and gradgradcheck too when ``gg``."""
    from minitorch_ln.autograd import gradcheck, gradgradcheck  # noqa: PLC0415

    assert gradcheck(fn, (t64(rng.standard_normal(shape)),))
    swapped = (shape[1], shape[0], *shape[2:])
    assert gradcheck(lambda t: fn(t.transpose(0, 1)), (t64(rng.standard_normal(swapped)),))  # non-contiguous
    if gg:
        assert gradgradcheck(fn, (t64(rng.standard_normal(gg_shape)),))

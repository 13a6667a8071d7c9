"""The Jacobians a gradient check compares: analytical (one backward per output element) and numerical
(central differences), and the error a failed check raises.
"""

from __future__ import annotations

import weakref

import numpy as np

from .. import backend
from ..tensor import Tensor
from .engine import grad as autograd_grad


class GradcheckError(RuntimeError):
    """A gradient check failed; the message names the input, the element and both values."""

    def __init__(self, message, *, input_index=None, output_index=None, worst=None):
        super().__init__(message)
        self.input_index = input_index
        self.output_index = output_index
        self.worst = worst or []
        self.terms = []  # [(node name, TermReport)] for LayerNorm-family ops, filled on failure


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _outputs(fn, inputs):
    out = _as_tuple(fn(*inputs))
    return tuple(o for o in out if isinstance(o, Tensor) and (backend.is_floating(o.dtype) or o.dtype.kind == "c"))


def _to_numpy(a):
    # a copy: an output may be a view of the input that the finite differences perturb in place
    return np.array(backend.to_device(a, "cpu"), dtype=np.float64)


# ---------------------------------------------------------------- where the perturbation goes
# The finite differences perturb an input in place, one logical element at a time, through
# ``array[index]``: that writes through any strided view (transposed, Fortran-ordered, sliced), so
# ``fn`` sees the perturbed value whatever the layout, and tensors that ``fn`` builds from the input
# (views included) follow it, as they should. In place is wrong in three cases, where the check
# perturbs a private contiguous copy passed to ``fn`` instead:
#   * the array overlaps itself (a stride-0 ``broadcast_to``/``expand`` result, an ``as_strided``
#     window): one stored value is several logical elements, so writing it moves all of them.
#     Autograd's gradient of such a leaf has one entry per *logical* element (``x.grad`` has
#     ``x.shape``), so the math is the derivative with respect to each logical element moved alone,
#     which only a non-overlapping copy can hold. (PyTorch's gradcheck refuses a stride-0 input
#     instead; here the check does the math.)
#   * the array is read-only (``np.broadcast_to`` returns one);
#   * the array shares memory with another input that is not computed from it (two leaves made
#     from one buffer): perturbing one would move the other, which autograd treats as independent.
# An input that aliases both an input computed from it and one that is not cannot be perturbed
# either way and raises :class:`GradcheckInputError`.


class GradcheckInputError(RuntimeError, ValueError):
    """An input gradcheck cannot perturb correctly (it names the inputs and the memory they share)."""


def _address(a) -> int:
    iface = getattr(a, "__cuda_array_interface__", None) or a.__array_interface__
    return int(iface["data"][0])


def _byte_offsets(a):
    """Byte address of every element of ``a``, in C order of the logical indices."""
    off = np.zeros((), dtype=np.int64)
    for d, (n, s) in enumerate(zip(a.shape, a.strides)):
        shape = [1] * a.ndim
        shape[d] = n
        off = off + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return np.broadcast_to(off, a.shape).ravel() + _address(a)                     # (numel,)


def _bounds(a):
    lo = _address(a) + sum(min(0, (n - 1) * s) for n, s in zip(a.shape, a.strides))
    hi = _address(a) + sum(max(0, (n - 1) * s) for n, s in zip(a.shape, a.strides)) + a.itemsize
    return lo, hi


def _self_overlaps(a) -> bool:
    if a.size <= 1 or a.flags.c_contiguous or a.flags.f_contiguous:
        return False
    if any(s == 0 and n > 1 for n, s in zip(a.shape, a.strides)):
        return True
    return bool(np.any(np.diff(np.sort(_byte_offsets(a))) < a.itemsize))


def _shares_memory(a, b) -> bool:
    """Whether some element of ``a`` and some element of ``b`` occupy a common byte (exact)."""
    if a.size == 0 or b.size == 0 or type(a) is not type(b):
        return False
    (lo_a, hi_a), (lo_b, hi_b) = _bounds(a), _bounds(b)
    if hi_a <= lo_b or hi_b <= lo_a:
        return False
    oa, ob = np.sort(_byte_offsets(a)), np.sort(_byte_offsets(b))
    for starts, width, probes in ((oa, a.itemsize, ob), (ob, b.itemsize, oa)):
        j = np.searchsorted(starts, probes, side="right") - 1                  # the last start <= probe
        hit = (j >= 0) & (starts[np.maximum(j, 0)] + width > probes)
        if hit.any():
            return True
    return False


def _descends_from(y, x) -> bool:
    """Whether ``y``'s graph reaches ``x`` (``y`` was computed from ``x``)."""
    target = x.grad_fn
    if target is None:  # a leaf: its AccumulateGrad node (held weakly by the leaf, strongly by the graph)
        target = x._accumulator
        target = target() if isinstance(target, weakref.ref) else target
    if target is None or y.grad_fn is None:
        return False
    stack, seen = [y.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is target:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(e[0] for e in node.next_edges if e is not None)
    return False


def _copy_reason(inputs, i):
    """Why input ``i`` must be perturbed in a private copy (see above), or None for in place."""
    x = inputs[i]
    a = x.array
    reason = None
    if not getattr(a.flags, "writeable", True):
        reason = "is read-only"
    elif _self_overlaps(a):
        reason = f"overlaps itself in memory (strides {a.strides})"
    downstream, upstream = [], []
    for k, y in enumerate(inputs):
        if isinstance(y, Tensor) and y is not x and _shares_memory(a, y.array):
            (downstream if _descends_from(y, x) else upstream).append(k)
    if upstream and reason is None:
        reason = f"shares memory with input {upstream[0]}, which is not computed from it"
    if reason is not None and downstream:
        raise GradcheckInputError(
            f"gradcheck: input {i} (shape {tuple(x.shape)}) {reason}, so it must be perturbed in a private "
            f"copy, but input {downstream[0]} is computed from it and shares its memory, so it must be "
            "perturbed in place; pass inputs that do not share memory (.clone() them)"
        )
    return reason


def _copy_note(inputs, i) -> str:
    """For a failure report: a reminder when input ``i`` was perturbed in a private copy."""
    reason = _copy_reason(inputs, i)
    if reason is None:
        return ""
    return (f"\n  note: input {i} {reason}, so the finite differences perturbed a private copy passed to fn; "
            "if fn reads the original tensor some other way (a closure, a module's parameter), it never saw "
            "the perturbation and the numerical column is 0")


def _fd_target(inputs, i):
    """``(inputs for fn, array to perturb)`` for the finite differences of input ``i``: in place where
    that moves input ``i`` alone (with what is computed from it), else a private copy (see above)."""
    x = inputs[i]
    if _copy_reason(inputs, i) is None:
        return inputs, x.array
    copy = Tensor._from_op(x.array.copy(), requires_grad=x.requires_grad)          # C-contiguous, writable
    return tuple(copy if y is x else y for y in inputs), copy.array


def _numerical_columns(fn, inputs, i, eps):
    """Yield ``(index, column)``: the central difference of every output (flattened, concatenated)
    for each logical element ``index`` of input ``i``, in C order (the order of ``x.ravel()``)."""
    fd_inputs, arr = _fd_target(inputs, i)
    # fn runs with grad mode on: it may itself differentiate (gradgradcheck's first derivative)
    for idx in np.ndindex(*arr.shape):
        orig = arr[idx].item()
        arr[idx] = orig + eps
        plus = [_to_numpy(o.array).ravel() for o in _outputs(fn, fd_inputs)]
        arr[idx] = orig - eps
        minus = [_to_numpy(o.array).ravel() for o in _outputs(fn, fd_inputs)]
        arr[idx] = orig
        yield idx, np.concatenate([(p - m) / (2 * eps) for p, m in zip(plus, minus)])


def _numerical_jacobian(fn, inputs, i, eps):
    """(n_out_total, n_in) central-difference Jacobian of every output w.r.t. input ``i`` (any layout)."""
    cols = [c for _, c in _numerical_columns(fn, inputs, i, eps)]
    if cols:
        return np.stack(cols, axis=1)
    return np.zeros((sum(o.numel() for o in _outputs(fn, inputs)), 0))


def _analytical_jacobians(outputs, inputs, diff_idx):
    """{input index: (n_out_total, n_in) Jacobian} by one backward per output element."""
    rows = {i: [] for i in diff_idx}
    diff_inputs = [inputs[i] for i in diff_idx]
    for out in outputs:
        xp = backend.get_array_module(out.array)
        for k in range(out.numel()):
            seed = xp.zeros(out.numel(), dtype=out.dtype)
            seed[k] = 1
            grads = autograd_grad(
                out, diff_inputs, grad_outputs=Tensor._from_op(seed.reshape(out.shape)),
                retain_graph=True, allow_unused=True,
            )
            for i, g in zip(diff_idx, grads):
                rows[i].append(np.zeros(inputs[i].numel()) if g is None else _to_numpy(g.array).ravel())
    return {i: (np.stack(r) if r else np.zeros((0, inputs[i].numel()))) for i, r in rows.items()}


def _locate(outputs, flat_k):
    for oi, o in enumerate(outputs):
        if flat_k < o.numel():
            return oi, np.unravel_index(flat_k, o.shape) if o.ndim else ()
        flat_k -= o.numel()
    return None, ()  # pragma: no cover

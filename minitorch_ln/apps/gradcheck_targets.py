"""The ops and modules ``minitorch-ln gradcheck NAME`` can check, and the report it prints.

Each target builds random inputs of a given shape (float64 by default), a function of them, and
names for them; :func:`run_gradcheck` hands them to :func:`minitorch_ln.autograd.gradcheck`
(central finite differences against the backward, every Jacobian entry) and prints, per input,
how many entries were compared and the largest disagreement, or the failure report.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["TARGETS", "Target", "run_gradcheck", "MAX_JACOBIAN_ENTRIES"]

# The full check holds an analytical and a numerical Jacobian (float64, 8 bytes an entry) and runs
# two forward passes per input element: 10 million entries is 160 MB and seconds, not hours.
MAX_JACOBIAN_ENTRIES = 10_000_000
MAX_EPS = 0.1  # a larger step measures a secant, not a derivative


@dataclass(frozen=True)
class Target:
    """``build(shape, dtype, device, rng) -> (fn, inputs, names)``; ``shape`` as the user gives it."""

    description: str
    default_shape: tuple
    ndim: "tuple[int, ...]"  # the numbers of dimensions ``shape`` may have
    build: object


def _t(rng, shape, dtype, device, requires_grad=True, scale=1.0):
    from ..tensor import tensor  # noqa: PLC0415

    return tensor(rng.standard_normal(shape) * scale, dtype=dtype, device=device, requires_grad=requires_grad)


def _op(name):
    """``nn.functional.<name>``, or a ValueError saying this build lacks it."""
    from ..nn import functional  # noqa: PLC0415

    if not hasattr(functional, name):
        raise ValueError(f"nn.functional.{name} is not available in this build")
    return getattr(functional, name)


def _layer_norm(shape, dtype, device, rng):
    layer_norm = _op("layer_norm")
    d = shape[-1]
    x, w, b = _t(rng, shape, dtype, device), _t(rng, (d,), dtype, device), _t(rng, (d,), dtype, device)
    return (lambda x, w, b: layer_norm(x, (d,), w, b, eps=1e-5)), (x, w, b), ("input", "weight", "bias")


def _rms_norm(shape, dtype, device, rng):
    rms_norm = _op("rms_norm")
    d = shape[-1]
    x, w = _t(rng, shape, dtype, device), _t(rng, (d,), dtype, device)
    return (lambda x, w: rms_norm(x, (d,), w, eps=1e-6)), (x, w), ("input", "weight")


def _batch_norm(shape, dtype, device, rng):
    batch_norm = _op("batch_norm")
    c = shape[1]
    x, w, b = _t(rng, shape, dtype, device), _t(rng, (c,), dtype, device), _t(rng, (c,), dtype, device)
    return ((lambda x, w, b: batch_norm(x, None, None, w, b, training=True, eps=1e-5)),
            (x, w, b), ("input", "weight", "bias"))


def _embedding(shape, dtype, device, rng):
    embedding = _op("embedding")
    from ..tensor import tensor  # noqa: PLC0415

    vocab, dim = 5, 3
    idx = tensor(rng.integers(0, vocab, size=shape), device=device)  # (*shape,) int64
    w = _t(rng, (vocab, dim), dtype, device)
    return (lambda i, w: embedding(i, w)), (idx, w), ("indices", "weight")


def _linear(shape, dtype, device, rng):
    linear = _op("linear")
    out_features = 3
    x = _t(rng, shape, dtype, device)
    w, b = _t(rng, (out_features, shape[-1]), dtype, device), _t(rng, (out_features,), dtype, device)
    return (lambda x, w, b: linear(x, w, b)), (x, w, b), ("input", "weight", "bias")


def _attention(shape, dtype, device, rng):
    scaled_dot_product_attention = _op("scaled_dot_product_attention")
    q, k, v = (_t(rng, shape, dtype, device) for _ in range(3))
    return ((lambda q, k, v: scaled_dot_product_attention(q, k, v, is_causal=True)),
            (q, k, v), ("query", "key", "value"))


def _multihead_attention(shape, dtype, device, rng):
    from ..nn import MultiheadAttention  # noqa: PLC0415

    b, t, e = shape
    mha = MultiheadAttention(e, num_heads=2 if e % 2 == 0 else 1, batch_first=True, device=device, dtype=dtype)
    x = _t(rng, shape, dtype, device)
    names, params = zip(*mha.named_parameters())
    # the parameters themselves are inputs: gradcheck perturbs them in place, which moves the module
    return (lambda x, *ps: mha(x, x, x, need_weights=False)[0]), (x, *params), ("input",) + names


def _softmax(shape, dtype, device, rng):
    softmax = _op("softmax")
    x = _t(rng, shape, dtype, device)
    return (lambda x: softmax(x, dim=-1)), (x,), ("input",)


def _log_softmax(shape, dtype, device, rng):
    log_softmax = _op("log_softmax")
    x = _t(rng, shape, dtype, device)
    return (lambda x: log_softmax(x, dim=-1)), (x,), ("input",)


def _cross_entropy(shape, dtype, device, rng):
    cross_entropy = _op("cross_entropy")
    from ..tensor import tensor  # noqa: PLC0415

    x = _t(rng, shape, dtype, device)
    target = tensor(rng.integers(0, shape[1], size=(shape[0],) + tuple(shape[2:])), device=device)
    return (lambda x, y: cross_entropy(x, y)), (x, target), ("input", "target")


def _gelu(shape, dtype, device, rng):
    gelu = _op("gelu")
    x = _t(rng, shape, dtype, device)
    return (lambda x: gelu(x)), (x,), ("input",)


def _matmul(shape, dtype, device, rng):
    a, b = _t(rng, shape, dtype, device), _t(rng, (shape[-1], 3), dtype, device)
    return (lambda a, b: a @ b), (a, b), ("input", "other")


TARGETS = {
    "layer_norm": Target("F.layer_norm over the last dimension, with weight and bias (fused, hand-derived)",
                         (2, 3, 4), (2, 3, 4), _layer_norm),
    "rms_norm": Target("F.rms_norm over the last dimension, with weight", (2, 3, 4), (2, 3, 4), _rms_norm),
    "batch_norm": Target("F.batch_norm in training mode (batch statistics) over (N, C)", (4, 3), (2, 3),
                         _batch_norm),
    "embedding": Target("F.embedding: rows of a (5, 3) weight picked by random indices of this shape", (2, 3),
                        (1, 2), _embedding),
    "linear": Target("F.linear to 3 output features, with bias", (2, 4), (1, 2, 3), _linear),
    "attention": Target("F.scaled_dot_product_attention, causal, on (B, H, T, E) query/key/value",
                        (1, 2, 3, 2), (2, 3, 4), _attention),
    "multihead_attention": Target("nn.MultiheadAttention self-attention on (B, T, E), all its parameters",
                                  (1, 3, 4), (3,), _multihead_attention),
    "softmax": Target("F.softmax over the last dimension", (2, 5), (1, 2, 3), _softmax),
    "log_softmax": Target("F.log_softmax over the last dimension", (2, 5), (1, 2, 3), _log_softmax),
    "cross_entropy": Target("F.cross_entropy of (N, C) logits against random classes", (3, 5), (2,),
                            _cross_entropy),
    "gelu": Target("F.gelu (exact, with erf)", (2, 3), (1, 2, 3), _gelu),
    "matmul": Target("input @ other, other of shape (last dim, 3)", (2, 4), (1, 2, 3), _matmul),
}


def _max_errors(fn, inputs, eps):
    """Per checked input: (Jacobian entries compared, max |analytical - numerical|), or None if unavailable."""
    try:
        from ..autograd.check import _analytical_jacobians, _numerical_jacobian, _outputs  # noqa: PLC0415
    except ImportError:  # pragma: no cover - the check module's internals changed
        return None
    diff = [i for i, x in enumerate(inputs) if getattr(x, "requires_grad", False)]
    try:
        ana = _analytical_jacobians(_outputs(fn, inputs), inputs, diff)
        return {i: (ana[i].size, float(np.abs(ana[i] - _numerical_jacobian(fn, inputs, i, eps)).max(initial=0.0)))
                for i in diff}
    except Exception:  # pragma: no cover - only a report; the check itself already passed
        return None


def _check_tolerances(eps, atol, rtol) -> None:
    import math  # noqa: PLC0415

    if not (isinstance(eps, (int, float)) and math.isfinite(eps) and 0 < eps <= MAX_EPS):
        raise ValueError(f"--eps must be a finite number > 0 and <= {MAX_EPS:g} (a finite-difference step), got {eps}")
    for flag, v in (("--atol", atol), ("--rtol", rtol)):
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
            raise ValueError(f"{flag} must be a finite number >= 0, got {v}")


def _mib(n_bytes: float) -> str:
    return f"{n_bytes / 2**30:,.1f} GiB" if n_bytes >= 2**30 else f"{n_bytes / 2**20:,.1f} MiB"


def _refuse_large_jacobian(name, shape, entries, at_least=False) -> None:
    """Refuse, before any Jacobian is built, a full check whose Jacobians would not fit."""
    if entries <= MAX_JACOBIAN_ENTRIES:
        return
    smaller = list(shape)  # halve the largest size until (input elements)² fits, as for an elementwise op
    while int(np.prod(smaller)) ** 2 > MAX_JACOBIAN_ENTRIES and max(smaller) > 1:
        k = smaller.index(max(smaller))
        smaller[k] = max(1, smaller[k] // 2)
    raise ValueError(
        f"{name} --shape {','.join(map(str, shape))}: the full check would build {'at least ' if at_least else ''}"
        f"{entries:,} Jacobian entries ({_mib(2 * 8 * entries)} for the analytical and numerical Jacobians; the "
        f"limit is {MAX_JACOBIAN_ENTRIES:,} entries): use a smaller shape (e.g. --shape "
        f"{','.join(map(str, smaller))}) or --fast-mode, which checks one random direction instead of every entry"
    )


def _jacobian_entries(fn, inputs) -> int:
    """(output elements) x (differentiable input elements), from one forward pass without a graph."""
    from ..autograd import no_grad  # noqa: PLC0415

    with no_grad():
        y = fn(*inputs)
    n_out = sum(int(np.prod(o.shape)) for o in (y if isinstance(y, (tuple, list)) else (y,)))
    return n_out * sum(int(np.prod(x.shape)) for x in inputs if getattr(x, "requires_grad", False))


def run_gradcheck(name: str, shape=None, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  dtype: str = "float64", seed: int = 0, device: str = "cpu", out=print,
                  fast_mode: bool = False) -> bool:
    """Gradient-check target ``name`` and print a report; True when it passes.

    ``fast_mode`` checks ``uᵀJv`` for random ``u``, ``v`` (see :func:`autograd.gradcheck`) and so
    takes any shape; the full check refuses Jacobians over :data:`MAX_JACOBIAN_ENTRIES` entries.

    Raises:
        ValueError: an unknown name, a shape with the wrong number of dimensions or a zero size, an
            eps outside ``(0, 0.1]``, a negative or non-finite tolerance, a Jacobian too large to
            build, or an op this build lacks.
        DeviceError: an unknown device, or CUDA without CuPy/a GPU.
    """
    from .. import backend  # noqa: PLC0415
    from ..autograd import GradcheckError, gradcheck  # noqa: PLC0415

    if name not in TARGETS:
        raise ValueError(f"unknown gradcheck target {name!r}: expected one of {', '.join(TARGETS)}")
    target = TARGETS[name]
    shape = tuple(target.default_shape if shape is None else shape)
    if len(shape) not in target.ndim:
        raise ValueError(f"{name} takes a shape of {' or '.join(map(str, target.ndim))} dimensions, got {shape}")
    if any(s < 1 for s in shape):
        raise ValueError(f"every size in --shape must be >= 1, got {shape}")
    _check_tolerances(eps, atol, rtol)
    if not fast_mode:  # every target's Jacobian has at least as many entries as its input: refuse before allocating
        _refuse_large_jacobian(name, shape, int(np.prod(shape)), at_least=True)
    dev = backend.Device(device)
    if dev.type == "cuda":
        backend.cupy_or_error()
    rng = np.random.default_rng(seed)
    fn, inputs, names = target.build(shape, backend.as_dtype(dtype), str(dev), rng)
    if not fast_mode:
        _refuse_large_jacobian(name, shape, _jacobian_entries(fn, inputs))
    out(f"gradcheck {name}: {target.description}")
    out(f"  inputs: " + ", ".join(f"{n} {tuple(x.shape)}" for n, x in zip(names, inputs)) + f"; dtype {dtype}, "
        f"eps {eps:g}, pass when |analytical - numerical| <= {atol:g} + {rtol:g}·|numerical|"
        + ("; fast mode: uᵀJv for random u, v" if fast_mode else ""))
    import warnings  # noqa: PLC0415

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the float32 warning is explained below instead
        try:
            gradcheck(fn, inputs, eps=eps, atol=atol, rtol=rtol, fast_mode=fast_mode)
        except GradcheckError as exc:
            out(f"FAILED\n{exc}")
            if dtype != "float64":
                out(f"  note: in {dtype}, f(x+eps) - f(x-eps) loses most of its digits to rounding, so central "
                    "differences are noise at eps 1e-6; the backward may well be right: rerun in float64")
            return False
        errors = None if fast_mode else _max_errors(fn, inputs, eps)
    if errors:
        for i, (n_entries, err) in errors.items():
            out(f"  {names[i]:<20} {n_entries:>6} Jacobian entries, max |analytical - numerical| = {err:.3g}")
    out("PASSED: the backward agrees with finite differences of the forward")
    return True

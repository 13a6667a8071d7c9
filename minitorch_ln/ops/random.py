"""Random sampling: ``normal``, ``bernoulli``, ``poisson``, ``multinomial``, ``randperm``, and the in-place
initialisers ``bernoulli_``, ``exponential_``, ``random_``, ``cauchy_``, ``log_normal_``, ``geometric_``.

Every op draws from ``generator=`` (a :class:`~minitorch_ln.ops.generator.Generator`) or, by
default, the device's global stream, which ``mt.manual_seed`` reseeds. On the CPU the numbers are
PyTorch's (the words of its mt19937 turned into samples by its kernels' formulas,
:mod:`minitorch_ln.random_torch`, ``docs/random.md``); ``poisson`` is drawn by NumPy from a seed taken
from that stream. On a GPU they are CuPy's. Distributions, dtypes, shapes and errors are PyTorch's.

Samples are not differentiable: as in PyTorch (``derivatives.yaml``), ``normal``, ``bernoulli`` and
``poisson`` of an input that requires grad give an output that requires grad, whose gradient with
respect to that input is zero.

Continuous draws use the inverse CDF of a uniform ``u`` in [0, 1): exponential ``-log(1-u)/lambd``,
Cauchy ``median + sigma*tan(pi*(u-1/2))``, geometric ``ceil(log(u)/log(1-p))`` (Devroye,
*Non-Uniform Random Variate Generation*, 1986, ch. 2 and 10).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import backend, random_torch
from ..autograd.function import Function
from ..errors import DtypeError, ShapeError
from ..tensor import Tensor
from .creation import _check_int_range, zeros
from .generator import rng_for

__all__ = ["bernoulli", "multinomial", "normal", "poisson", "randperm"]


class Sampled(Function):
    """Wraps a sample drawn from distribution parameters: the output, with a zero gradient for each."""

    @staticmethod
    def forward(ctx, sample, *params):
        ctx.metas = [(p.shape, p.dtype) for p in params]
        return sample

    @staticmethod
    def backward(ctx, dy):
        return (None,) + tuple(zeros(s, dtype=d, device=dy.device) if need else None
                               for (s, d), need in zip(ctx.metas, ctx.needs_input_grad[1:]))


def _sampled(sample, *params):
    tensors = [p for p in params if isinstance(p, Tensor)]
    if any(t.requires_grad for t in tensors):
        return Sampled.apply(sample, *tensors)
    return Tensor._from_op(sample)


def _float_input(x, op):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, got {type(x).__name__}")
    if not backend.is_floating(x.dtype):
        raise DtypeError(f"{op}: expected a floating point tensor (float16, float32 or float64), got {x.dtype}")


def _g(v) -> str:
    return f"{v:g}"


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Normal samples ``mean + std * z`` (``torch.normal``).

    Forms: ``normal(mean: Tensor, std: Tensor)`` (broadcast), ``normal(mean: Tensor, std=1.0)``,
    ``normal(mean: float, std: Tensor)`` — each of the tensor's (the broadcast) shape and dtype —
    and ``normal(mean: float, std: float, size)`` of shape ``size``, float32 unless ``dtype``.

    Raises:
        RuntimeError: ``std < 0`` (PyTorch's message); shapes that do not broadcast.
        TypeError: both numbers without ``size``, a ``size`` with a tensor, an integer tensor.
    """
    mt_, st_ = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not (mt_ or st_):
        if size is None:
            raise TypeError("normal(): with a float mean and std, give the output size: normal(mean, std, size)")
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {_g(std)}")
        from .creation import _shape_arg  # noqa: PLC0415

        dev = backend.device(device)
        dt = backend.as_dtype(dtype) if dtype is not None else backend.default_float_dtype()
        z = random_torch.normal(rng_for(generator, dev), _shape_arg((size,)), dt, mean, std)  # (*size)
        return Tensor(z, requires_grad=requires_grad)
    if size is not None:
        raise TypeError("normal(): size is only taken with a float mean and std; with a tensor, its shape is used")
    for t in (mean, std):
        if isinstance(t, Tensor):
            _float_input(t, "normal")
    if st_:
        xp = backend.get_array_module(std.array)
        if not bool(xp.all(std.array >= 0)):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_g(std)}")
    ref = mean if mt_ else std
    shapes = [t.shape for t in (mean, std) if isinstance(t, Tensor)]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ShapeError(f"normal: the shapes of mean {tuple(shapes[0])} and std {tuple(shapes[1])} do not "
                         "broadcast") from None
    dt = np.result_type(*(t.dtype for t in (mean, std) if isinstance(t, Tensor)))
    m = mean.array if mt_ else dt.type(mean)
    s = std.array if st_ else dt.type(std)
    rng = rng_for(generator, ref.device)
    if st_:  # as PyTorch: N(0, 1) draws, then * std + mean
        z = random_torch.normal(rng, shape, dt) * s  # (*shape)
    else:  # a float std: N(0, std) draws, then + mean
        z = random_torch.normal(rng, shape, dt, 0.0, float(std))  # (*shape)
    return _sampled((z + m).astype(dt), mean, std)


def bernoulli(input, p=None, *, generator=None) -> Tensor:  # noqa: A002
    """0/1 draws, 1 with probability ``input`` (or with the float ``p`` everywhere); ``input``'s shape and dtype.

    Raises:
        RuntimeError: a probability outside [0, 1] or NaN (PyTorch's message). TypeError: an
        integer ``input`` without ``p``.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli(): argument 'input' must be a Tensor, got {type(input).__name__}")
    xp = backend.get_array_module(input.array)
    rng = rng_for(generator, input.device)
    if p is None:
        _float_input(input, "bernoulli")
        prob = input.array
        if not bool(xp.all((prob >= 0) & (prob <= 1))):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false. (bernoulli: every "
                               "probability in input must be in [0, 1])")
    else:
        _check_p(p, "bernoulli_")
        prob = p
    if p is None:
        draws = random_torch.bernoulli_tensor(rng, prob, input.dtype)  # (*input.shape)
    else:
        draws = random_torch.bernoulli_scalar(rng, input.shape, input.dtype, float(p))
    return _sampled(draws, input)


def _check_p(p, what):
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0 <= p <= 1:
        raise RuntimeError(f"{what} expects p to be in [0, 1], but got p={p}")


def poisson(input, generator=None) -> Tensor:  # noqa: A002
    """Poisson draws with rates ``input`` (``torch.poisson``); ``input``'s shape and float dtype.

    Raises:
        RuntimeError: a negative or NaN rate (PyTorch's message). TypeError: an integer input.
    """
    _float_input(input, "poisson")
    xp = backend.get_array_module(input.array)
    lam = input.array.astype(np.float64)
    if not bool(xp.all(lam >= 0)):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    big = lam > 1e15  # NumPy refuses rates near 2**63; the normal limit is exact to float64 there
    rng = rng_for(generator, input.device)
    if random_torch.is_torch_stream(rng):  # not PyTorch's sampler: NumPy's, seeded by one 64-bit word
        rng = np.random.default_rng(int(rng.random64(1)[0]))
    out = rng.poisson(xp.where(big, 0.0, lam)).astype(np.float64)  # (*input.shape)
    if bool(xp.any(big)):
        out = xp.where(big, xp.round(lam + xp.sqrt(xp.where(big, lam, 0.0)) * rng.standard_normal(lam.shape)), out)
    return _sampled(out.astype(input.dtype), input)


def multinomial(input, num_samples, replacement=False, *, generator=None) -> Tensor:  # noqa: A002
    """Category indices drawn with weights ``input`` (``torch.multinomial``): ``(C,) -> (n,)``, ``(B, C) -> (B, n)``, int64.

    Weights need not sum to one. Without replacement each row's samples are distinct, and drawn as
    torch.multinomial draws them: the ``n`` largest of ``w_i / E_i`` with ``E_i ~ Exp(1)`` (the
    exponential race, equivalent to sequential sampling without replacement, Efraimidis and
    Spirakis 2006); zero-weight categories come only after all the others. With replacement:
    inverse CDF on the normalised cumulative weights (the exponential race when ``n == 1``, as
    torch). Zero-weight categories are never drawn with replacement.

    Raises:
        RuntimeError: not 1-D or 2-D, an integer dtype, ``num_samples <= 0``, more samples than
        categories without replacement, an inf/NaN/negative weight, a row of zero sum (PyTorch's
        messages).
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): argument 'input' must be a Tensor, got {type(input).__name__}")
    arr = input.array  # read once: the properties cost more than the checks on a small row
    if arr.ndim not in (1, 2):
        raise ShapeError(f"prob_dist must be 1 or 2 dim, got a tensor of shape {tuple(input.shape)}")
    if not backend.is_floating(arr.dtype):
        raise DtypeError(f"multinomial only supports floating-point dtypes for input, got: {input.dtype}")
    if type(num_samples) is not int and (isinstance(num_samples, bool) or not isinstance(num_samples, numbers.Integral)):
        raise TypeError(f"multinomial(): argument 'num_samples' must be int, not {type(num_samples).__name__}")
    n, c = int(num_samples), arr.shape[-1]
    if n <= 0:
        raise RuntimeError(f"cannot sample n_sample <= 0 samples (got num_samples={n})")
    if not replacement and n > c:
        raise RuntimeError(f"cannot sample n_sample > prob_dist.size(-1) samples without replacement "
                           f"({n} > {c})")
    if c > 2**24:
        raise RuntimeError(f"number of categories cannot exceed 2^24, got {c}")
    if c == 0:  # NumPy's reshape(-1, 0) raised a bare ValueError; PyTorch: a RuntimeError (from aminmax)
        raise RuntimeError(f"multinomial(): no categories to draw from (input of shape {tuple(arr.shape)})")
    xp = backend.get_array_module(arr)
    w = arr.astype(np.float64).reshape(-1, c)  # (B, C)
    out_shape = arr.shape[:-1] + (n,)
    if w.shape[0] == 0:
        return Tensor._from_op(xp.zeros(out_shape, dtype=np.int64))
    total = w.sum(axis=1)  # (B,)
    totals = total.tolist()
    # every weight finite and >= 0: a NaN makes the minimum NaN, an inf the total inf, so the first test
    # passing is enough (one reduction and Python floats, not four array ops per draw); a failing one (or
    # float64 weights whose total overflows) takes the exact test
    if not (w.size and w.min() >= 0 and max(totals) < math.inf) and not bool((xp.isfinite(w) & (w >= 0)).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if not min(totals) > 0:  # no NaN here: the weights are >= 0 and finite
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = rng_for(generator, backend.device_of(arr))
    if random_torch.is_torch_stream(rng):
        w = arr.reshape(-1, c)  # (B, C), the input's dtype as PyTorch computes
        w = w.astype(np.float32) if w.dtype == np.float16 else w
        return Tensor._from_op(random_torch.multinomial(rng, w, n, replacement).reshape(out_shape))
    if not replacement or n == 1:
        e = -xp.log1p(-rng.random(w.shape))  # (B, C) Exp(1)
        keys = w / e  # (B, C); larger wins
        idx = xp.argsort(-keys, axis=1, kind="stable")[:, :n]  # (B, n) the top n, zero weights last
    else:
        cdf = xp.cumsum(w, axis=1) / total[:, None]  # (B, C), last entry exactly 1
        u = rng.random((w.shape[0], n))  # (B, n) in [0, 1)
        idx = xp.stack([xp.searchsorted(cdf[b], u[b], side="right") for b in range(w.shape[0])])  # (B, n)
        idx = xp.minimum(idx, c - 1)
    return Tensor._from_op(idx.astype(np.int64).reshape(out_shape))


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A random permutation of ``0 .. n-1``, shape ``(n,)``, int64 unless ``dtype``.

    Raises:
        RuntimeError: ``n < 0``, or ``n`` values that ``dtype`` cannot hold (PyTorch's messages).
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"randperm(): argument 'n' must be int, not {type(n).__name__}")
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dt = backend.as_dtype(dtype) if dtype is not None else np.dtype(np.int64)
    limit = (2 ** np.finfo(dt).nmant) if backend.is_floating(dt) else (1 if dt.kind == "b" else int(np.iinfo(dt).max))
    if n - 1 > limit:
        raise RuntimeError(f"randperm: n={n} is too large for dtype {dt} (its values go up to {limit})")
    dev = backend.device(device)
    rng = rng_for(generator, dev)
    perm = random_torch.randperm(rng, n)  # (n,): Fisher-Yates on the CPU, random keys on a GPU
    return Tensor(perm.astype(dt), requires_grad=requires_grad)


# ==================================================================================================
# In-place initialisers (Tensor methods), in the pattern of ops/inplace.py's normal_ / uniform_
# ==================================================================================================


def _fill(t: Tensor, what: str, draw) -> Tensor:
    """Fill ``t`` with ``draw(shape, perm)`` taken in memory order (``random_torch.in_memory_order``), as PyTorch."""
    t._check_inplace(what)
    t.array[...] = random_torch.in_memory_order(t.array, draw).astype(t.dtype)
    t._bump_version()
    return t


def _continuous(t: Tensor, name: str, what: str):
    if not backend.is_floating(t.dtype):
        raise DtypeError(f"{name} distribution is a continuous probability distribution. dtype must be a floating "
                         f"point but you specified {t.dtype} ({what})")


def bernoulli_(self, p=0.5, *, generator=None) -> Tensor:
    """Fill with 0/1, 1 with probability ``p`` (a float, or a tensor broadcastable to this one)."""
    rng = rng_for(generator, self.device)
    if isinstance(p, Tensor):
        xp = backend.get_array_module(p.array)
        if not bool(xp.all((p.array >= 0) & (p.array <= 1))):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false. (bernoulli_: p must be "
                               "in [0, 1])")
        xp = backend.get_array_module(p.array)
        return _fill(self, "bernoulli_", lambda s, perm: random_torch.bernoulli_tensor(
            rng, xp.broadcast_to(p.array, self.shape).transpose(perm), self.dtype))
    _check_p(p, "bernoulli_")
    return _fill(self, "bernoulli_", lambda s, _: random_torch.bernoulli_scalar(rng, s, self.dtype, float(p)))


def exponential_(self, lambd=1.0, *, generator=None) -> Tensor:
    """Fill with Exp(``lambd``) draws (density ``lambd * exp(-lambd x)``)."""
    _continuous(self, "Exponential", "exponential_")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_g(lambd)}")
    rng = rng_for(generator, self.device)
    return _fill(self, "exponential_", lambda s, _: random_torch.exponential(rng, s, self.dtype, float(lambd)))


def _random_bound(dt) -> int:
    """The largest value ``random_()`` draws: 2**digits for floats (every integer exact), the max for ints."""
    if backend.is_floating(dt):
        return 2 ** (np.finfo(dt).nmant + 1)
    return 1 if dt.kind == "b" else int(np.iinfo(dt).max)


def random_(self, *args, generator=None, **kwargs) -> Tensor:
    """``random_()``: integers in [0, 2**mantissa] (floats) or [0, max] (ints); ``random_(to)``: [0, to);
    ``random_(from, to)``: [from, to). ``from``/``to`` may be keywords.

    Raises:
        RuntimeError: ``from >= to`` or a bound outside the dtype (PyTorch's messages).
    """
    if len(args) > 2 or set(kwargs) - {"from", "to"}:
        raise TypeError(f"random_() takes (from=0, to=None), got {len(args)} positional and {sorted(kwargs)}")
    low, high = 0, None
    if len(args) == 1 and "to" not in kwargs and "from" not in kwargs:
        high = args[0]
    else:
        vals = dict(zip(("from", "to"), args), **kwargs)
        low, high = vals.get("from", 0), vals.get("to")
    dt = self.dtype
    rng = rng_for(generator, self.device)
    if high is None:
        bound = _random_bound(dt)
        _check_int_range(int(low), bound + 1, dt)
        if not args and not kwargs:  # random_(): PyTorch's own kernel (random_(0) is from-to: int32 differs)
            return _fill(self, "random_", lambda s, _: random_torch.random_default(rng, s, dt))
        if int(low) == -(2**63) and dt == np.int64:
            return _fill(self, "random_", lambda s, _: random_torch.random_full_64(rng, s, dt))
        return _fill(self, "random_", lambda s, _: random_torch.random_from_to(rng, s, dt, int(low), bound + 1))
    _check_int_range(int(low), int(high), dt)
    return _fill(self, "random_", lambda s, _: random_torch.random_from_to(rng, s, dt, int(low), int(high)))


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None) -> Tensor:
    """Fill with Cauchy(``median``, ``sigma``) draws."""
    _continuous(self, "Cauchy", "cauchy_")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_g(sigma)}")
    rng = rng_for(generator, self.device)
    return _fill(self, "cauchy_", lambda s, _: random_torch.cauchy(rng, s, self.dtype, median, sigma))


def log_normal_(self, mean=1.0, std=2.0, *, generator=None) -> Tensor:
    """Fill with ``exp(N(mean, std**2))`` draws."""
    if not backend.is_floating(self.dtype):
        raise DtypeError(f"log_normal_: expected a floating point tensor, got {self.dtype}")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_g(std)}")
    rng = rng_for(generator, self.device)
    return _fill(self, "log_normal_", lambda s, _: random_torch.log_normal(rng, s, self.dtype, mean, std))


def geometric_(self, p, *, generator=None) -> Tensor:
    """Fill with the number of Bernoulli(``p``) trials up to the first success (1, 2, ...)."""
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    rng = rng_for(generator, self.device)
    return _fill(self, "geometric_", lambda s, _: random_torch.geometric(rng, s, self.dtype, p))

"""Complex inputs and outputs in ``gradcheck``: the check runs on the real function underneath.

A function of complex tensors is a function of their real and imaginary parts. :func:`realify` turns
``fn`` into ``fn_r``, whose inputs are the parts of every complex input that requires grad (two float
leaves in its place) and whose complex outputs are returned as ``(..., 2)`` real pairs; the real check
then compares ``fn_r``'s analytical Jacobian with finite differences that perturb the real and the
imaginary part of each element, as PyTorch's gradcheck does.

The analytical Jacobian of ``fn_r`` goes through ``fn``'s own backward. The two conversions at its ends
are exact under PyTorch's convention (for a real loss the gradient of ``z = x + iy`` is
``dL/dx + i·dL/dy``, docs/complex.md): parts -> ``z`` sends ``dz`` back as ``(Re dz, Im dz)``, and
``z`` -> pairs sends ``(gx, gy)`` back as ``gx + i·gy``. So a complex backward that breaks the convention
(a missing conjugate) gives a Jacobian that disagrees, and the check fails. Input indices in a failure
report are those of ``fn_r``: a complex input ``i`` becomes two (its real part, then its imaginary part).
"""

from __future__ import annotations

import numpy as np

from ..backend import get_array_module
from ..tensor import Tensor
from .function import Function


class FromParts(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, re, im):
        out = get_array_module(re).empty(re.shape, dtype=np.complex128 if re.dtype == np.float64 else np.complex64)
        out.real, out.imag = re, im  # (*re.shape)
        return out

    @staticmethod
    def backward(ctx, dz):
        return Part.apply(dz, True), Part.apply(dz, False)


class Part(Function):
    """The real (``real=True``) or imaginary part of a complex tensor, as a new array."""

    supports_complex = True

    @staticmethod
    def forward(ctx, z, real):
        ctx.real = real
        return (z.real if real else z.imag).copy()

    @staticmethod
    def backward(ctx, g):
        zero = Tensor._from_op(get_array_module(g.array).zeros_like(g.array))
        return (FromParts.apply(g, zero) if ctx.real else FromParts.apply(zero, g)), None


class AsPairs(Function):
    """``z`` -> ``(*z.shape, 2)`` reals; the adjoint of :class:`FromPairs`."""

    supports_complex = True

    @staticmethod
    def forward(ctx, z):
        return get_array_module(z).stack([z.real, z.imag], axis=-1)  # (*z.shape, 2)

    @staticmethod
    def backward(ctx, g):
        return FromPairs.apply(g)


class FromPairs(Function):
    supports_complex = True

    @staticmethod
    def forward(ctx, g):
        out = get_array_module(g).empty(g.shape[:-1], dtype=np.complex128 if g.dtype == np.float64 else np.complex64)
        out.real, out.imag = g[..., 0], g[..., 1]  # (*g.shape[:-1])
        return out

    @staticmethod
    def backward(ctx, dz):
        return AsPairs.apply(dz)


def _is_complex(x) -> bool:
    return isinstance(x, Tensor) and x.dtype.kind == "c"


def realify(fn, inputs: tuple):
    """``(fn_r, inputs_r)``: ``fn`` and ``inputs`` as a function of real tensors (see the module docstring);
    ``(fn, inputs)`` unchanged when no input or output is complex."""
    outs = fn(*inputs)
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    split = [_is_complex(x) and x.requires_grad for x in inputs]
    if not any(split) and not any(_is_complex(o) for o in outs):
        return fn, inputs
    real_inputs = []
    for x, s in zip(inputs, split):
        if s:
            a = x.detach().array
            real_inputs += [Tensor(a.real.copy(), requires_grad=True), Tensor(a.imag.copy(), requires_grad=True)]
        else:
            real_inputs.append(x)

    def fn_r(*args):
        args, rebuilt = list(args), []
        for s in split:
            rebuilt.append(FromParts.apply(args.pop(0), args.pop(0)) if s else args.pop(0))
        out = fn(*rebuilt)
        many = isinstance(out, (tuple, list))
        out = tuple(AsPairs.apply(o) if _is_complex(o) else o for o in (out if many else (out,)))
        return out if many else out[0]

    return fn_r, tuple(real_inputs)

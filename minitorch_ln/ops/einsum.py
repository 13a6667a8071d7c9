"""``einsum``: Einstein summation over any subscripts PyTorch accepts, differentiable to any order.

The public function turns the equation into a plain one first: the ellipsis becomes explicit
letters (aligned from the right, as broadcasting aligns), the implicit output (``'ij,jk'``) becomes
its explicit form (the ellipsis dims, then the letters seen once, in ASCII order), and a size-1
dim is expanded to the size its letter has elsewhere (PyTorch broadcasts those; the ``expand``
sums the gradient back). What reaches :class:`Einsum` is one array per operand with consistent
sizes and explicit subscripts such as ``'iij,jk->ik'``.

Backward of operand ``k`` (the letters it shares are read, the others are summed or broadcast):
``dA_k = einsum(out, *others -> letters of A_k)`` — the upstream gradient contracted with the other
operands — followed by two fix-ups that einsum's output cannot express: a letter of ``A_k`` seen
nowhere else was summed over, so its gradient is broadcast along it, and a letter repeated in
``A_k`` (``'ii'``, a diagonal) gets the gradient on that diagonal only (a 0/1 mask), zero elsewhere.
The gradient is an einsum of Tensors, so its own backward is this same rule.
"""

from __future__ import annotations

import string

import numpy as np

from ..autograd.function import Function
from ..backend import get_array_module
from ..tensor import Tensor
from ._util import promote
from .autocast_policies import autocast
from .complex_parts import cj
from .shape import reshape

__all__ = ["einsum"]

_LETTERS = string.ascii_uppercase + string.ascii_lowercase  # PyTorch's order: A-Z before a-z


class Einsum(Function):
    """``xp.einsum`` on operands whose subscripts are explicit (no ellipsis) and sizes consistent."""

    supports_complex = True

    @staticmethod
    def forward(ctx, *arrays, inputs, output):
        ctx.inputs, ctx.output = inputs, output
        ctx.save_for_backward(*arrays)
        eq = ",".join(inputs) + "->" + output
        out = get_array_module(arrays[0]).einsum(eq, *arrays, optimize=len(arrays) > 1)
        # one operand: NumPy returns a view of it for 'ij->ji' or 'ii->i'; an op's output owns its memory
        return out.copy() if out.base is not None and len(arrays) == 1 else out

    @staticmethod
    def backward(ctx, dout):
        operands = ctx.saved_tensors
        return tuple(_operand_grad(dout, ctx.output, ctx.inputs, operands, k) if need else None
                     for k, need in enumerate(ctx.needs_input_grad))


def _operand_grad(dout, out_sub, subs, operands, k):
    """``d operand_k`` as an einsum of ``dout`` with the other operands, broadcast and diagonal-masked."""
    sub, x = subs[k], operands[k]
    others = [(s, t) for i, (s, t) in enumerate(zip(subs, operands)) if i != k]
    seen = set(out_sub).union(*[set(s) for s, _ in others])
    letters = [c for i, c in enumerate(sub) if sub.index(c) == i]  # first occurrences, in order
    kept = [c for c in letters if c in seen]
    g = Einsum.apply(dout, *[cj(t) for _, t in others], inputs=(out_sub, *[s for s, _ in others]), output="".join(kept))
    # g has one dim per kept letter; put it at that letter's first position, size 1 elsewhere
    shape = tuple(x.shape[i] if (sub.index(c) == i and c in seen) else 1 for i, c in enumerate(sub))
    if g.shape != shape:
        g = reshape(g, shape)
    if len(letters) < len(sub):  # a repeated letter: only its diagonal receives the gradient
        g = g * _diagonal_mask(sub, x.shape, x.array)
    if tuple(g.shape) != tuple(x.shape):
        g = g.expand(*x.shape)
    return g


def _diagonal_mask(sub, shape, like):
    """0/1 array of ``shape``: 1 where the positions sharing a letter in ``sub`` have equal indices."""
    xp = get_array_module(like)
    mask = xp.ones(shape, dtype=like.dtype)
    for c in set(sub):
        pos = [i for i, s in enumerate(sub) if s == c]
        for p in pos[1:]:
            n = shape[p]
            eye_shape = [1] * len(sub)
            eye_shape[pos[0]], eye_shape[p] = n, n
            mask = mask * xp.eye(n, dtype=like.dtype).reshape(eye_shape)
    return mask


# ==================================================================================================
# Parsing: equation -> explicit subscripts
# ==================================================================================================


def _parse_operand(term: str, pos: int) -> list:
    """``term`` (one operand's subscripts) as a list of letters and ``'...'``; checks the characters."""
    out, i = [], 0
    while i < len(term):
        c = term[i]
        if c == ".":
            if term[i:i + 3] != "..." or "..." in out:
                raise RuntimeError(f"einsum(): found '.' for operand at index {pos + i} that is not part of any ellipsis"
                                   if term[i:i + 3] != "..." else "einsum(): found more than one ellipsis ('...') for an operand")
            out.append("...")
            i += 3
            continue
        if c not in _LETTERS:
            raise RuntimeError(f"einsum(): invalid subscript given at index {pos + i} in the equation string, "
                               f"subscripts must be in [a-zA-Z], got {c!r}")
        out.append(c)
        i += 1
    return out


def _from_sublists(args):
    """PyTorch's sublist form ``einsum(op1, [0, 1], op2, [1, 2], [0, 2])`` as an equation and operands."""
    ops, subs = list(args[0::2]), list(args[1::2])
    out = None
    if len(args) % 2 == 1:  # a trailing output sublist
        ops, out = ops[:-1], args[-1]

    def conv(sl):
        parts = []
        for s in sl:
            if s is Ellipsis:
                parts.append("...")
            elif isinstance(s, (int, np.integer)) and 0 <= s < 52:
                parts.append(_LETTERS[26 + s] if s < 26 else _LETTERS[s - 26])
            else:
                raise ValueError(f"einsum(): expected subscripts to be Ellipsis or integers in [0, 52), got {s!r}")
        return "".join(parts)

    eq = ",".join(conv(s) for s in subs) + ("->" + conv(out) if out is not None else "")
    return eq, ops


@autocast("einsum")
def einsum(*args) -> Tensor:
    """Einstein summation: ``einsum('bij,bjk->bik', a, b)`` is a batched matrix product.

    Accepts PyTorch's three forms: ``einsum(equation, *operands)``, ``einsum(equation, [operands])``
    and the sublist form ``einsum(op1, [0, 1], op2, [1, 2], [0, 2])``. Subscripts are letters
    ``[a-zA-Z]``; ``...`` stands for broadcast dims; without ``->`` the output is the ellipsis dims
    then the letters seen exactly once, sorted (A-Z before a-z); a letter repeated in one operand
    takes a diagonal; a letter missing from the output is summed. Size-1 dims broadcast against
    their letter's size in other operands, as in PyTorch. Operands are promoted to one dtype.

    Raises:
        RuntimeError: a bad character, more/fewer operands than the equation names, a subscript
            count that does not match an operand's dims, sizes of one letter that do not
            broadcast, an output letter that is repeated or not in any input (PyTorch's messages).
        ValueError: no operands.
    """
    if args and not isinstance(args[0], str):
        if len(args) < 2:
            raise ValueError("einsum(): must specify the equation string and at least one operand, "
                             "or at least one operand and its subscripts list")
        equation, operands = _from_sublists(args)
    else:
        if len(args) < 2:
            raise ValueError("einsum(): must specify the equation string and at least one operand, "
                             "or at least one operand and its subscripts list")
        equation, operands = args[0], list(args[1:])
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = list(operands[0])
    for i, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum(): expected operand {i} to be a Tensor, got {type(t).__name__}")
    operands = _promote_all(operands)
    inputs, output, operands = _explicit(equation.replace(" ", ""), operands)
    return Einsum.apply(*operands, inputs=tuple(inputs), output=output)


def _promote_all(operands):
    if len({t.dtype for t in operands}) <= 1:
        return operands
    ref = operands[0]
    for t in operands[1:]:
        ref, _ = promote(ref, t, "einsum")
    return [promote(t, ref, "einsum")[0] for t in operands]


def _explicit(eq: str, operands):
    """``(input subscripts, output subscripts, operands)`` with no ellipsis and broadcast sizes."""
    lhs, arrow, rhs = eq.partition("->")
    terms, pos = [], 0
    for term in lhs.split(","):
        terms.append(_parse_operand(term, pos))
        pos += len(term) + 1
    if len(terms) > len(operands):
        raise RuntimeError(f"einsum(): fewer operands were provided than specified in the equation "
                           f"('{eq}' names {len(terms)}, got {len(operands)})")
    if len(terms) < len(operands):
        raise RuntimeError(f"einsum(): more operands were provided than specified in the equation "
                           f"('{eq}' names {len(terms)}, got {len(operands)})")
    out_terms = _parse_operand(rhs, len(lhs) + 2) if arrow else None
    used = {c for t in terms for c in t if c != "..."}
    n_ell = 0
    for i, (t, x) in enumerate(zip(terms, operands)):
        n_sub = len(t) - ("..." in t)
        if ("..." in t and x.ndim < n_sub) or ("..." not in t and x.ndim != n_sub):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n_sub}) does not match the "
                               f"number of dimensions ({x.ndim}) for operand {i}"
                               + ("" if "..." in t else " and no ellipsis was given"))
        if "..." in t:
            n_ell = max(n_ell, x.ndim - n_sub)
    free = [c for c in _LETTERS if c not in used]
    if n_ell > len(free):
        raise RuntimeError(f"einsum(): the equation needs {len(used) + n_ell} distinct dims, more than the 52 available")
    ell = "".join(free[:n_ell])
    inputs = []
    for t, x in zip(terms, operands):
        k = x.ndim - (len(t) - ("..." in t))
        inputs.append("".join(ell[n_ell - k:] if c == "..." else c for c in t))
    if out_terms is None:
        once = sorted(c for c in used if sum(s.count(c) for s in inputs) == 1)
        output = ell + "".join(once)
    else:
        output = "".join(ell if c == "..." else c for c in out_terms)
        for c in out_terms:
            if c != "..." and c not in used:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input operand")
            if c != "..." and out_terms.count(c) > 1:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
    # sizes: a letter's sizes must agree (size 1 broadcasts); expand the size-1 dims
    sizes = {}
    for i, (s, x) in enumerate(zip(inputs, operands)):
        own = {}
        for c, n in zip(s, x.shape):
            if c in own and own[c] != n:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {i} but the sizes don't "
                                   f"match, {n} != {own[c]}")
            own[c] = n
        for c, n in own.items():
            if c in sizes and n != sizes[c] and 1 not in (n, sizes[c]):
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {i} which does not broadcast "
                                   f"with previously seen size {sizes[c]}")
            sizes[c] = max(n, sizes.get(c, n)) if n != 0 and sizes.get(c, n) != 0 else 0
    fixed = []
    for s, x in zip(inputs, operands):
        full = tuple(sizes[c] for c in s)
        fixed.append(x if tuple(x.shape) == full else x.expand(*full))
    return inputs, output, fixed

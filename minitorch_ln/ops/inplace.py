"""In-place ops: ``add_``, ``sub_``, ``mul_``, ``div_``, ``floor_divide_``, ``remainder_``, ``pow_``, the
``bitwise_*_`` family, ``clamp_``, ``masked_fill_``, ``copy_``, ``fill_``, ``zero_``, ``uniform_``,
``normal_``, and Python's augmented assignments (``x += y`` is ``x.add_(y)``, ``p -= lr * g`` is
``p.sub_(lr * g)``, ...), attached to ``Tensor``.

An in-place op runs its out-of-place twin on an alias of the tensor's old value, writes the result
into the tensor's array and bumps its version counter, so every node that saved the old values
raises instead of giving a wrong gradient. On a view, the write lands in the base's memory and the
base's history is rewritten (``autograd/views.py``: CopySlices), as in PyTorch (docs/autograd.md).
"""

from __future__ import annotations

import numpy as np

from .. import backend, random_torch
from ..errors import ShapeError
from ..autograd import function as _function, tracing as _tracing
from ..autograd.grad_mode import _state as _grad_state, is_grad_enabled
from ..autograd.views import alias, check_no_overlap, check_view_inplace, check_writable, rebase_history
from ..autograd.function import _set_history
from ..tensor import Tensor
from .conversion import cast
from .generator import rng_for
from .bitwise import bitwise_and, bitwise_left_shift, bitwise_or, bitwise_right_shift, bitwise_xor
from .division import floor_divide, remainder
from .elementwise import add, div, mul, pow, sub  # noqa: A004 - PyTorch's name
from .selection import clamp, masked_fill, where
from .shape import broadcast_to
from ._util import _wrap_int
from .fill_values import checked_number

_NUMBERS = (int, float)  # exact types: a bool or a NumPy scalar takes the general path
_F16 = np.dtype(np.float16)


class _InPlace:
    """The in-place methods, attached to :class:`Tensor` by ``ops/methods.py``."""

    def _check_inplace(self, what: str) -> None:
        check_writable(self, what)
        if not is_grad_enabled():
            return
        if self._base is not None:
            check_view_inplace(self, what)
        elif self._requires_grad and self._grad_fn is None:
            raise RuntimeError(
                f"a leaf tensor that requires grad is being used in an in-place operation ({what}); "
                "wrap the update in `with no_grad():` (as optimizers do) or use an out-of-place op"
            )

    def _inplace(self, what: str, result_fn, *operands) -> "Tensor":
        """Run ``result_fn(old_self)`` out of place, then write the result into this tensor.

        ``operands``: the op's other arguments; a Tensor among them that shares part of this tensor's
        memory raises (``check_no_overlap``: ``a[1:].add_(a[:-1])``, as PyTorch), a number costs nothing.

        When the graph is recorded, the op's input is an alias of this tensor *before* the change
        (same array, version counter and history), and this tensor takes over the op's output in
        the graph (a view's base takes a CopySlices node instead). The write bumps the shared
        version counter, so any node that saved the old values notices.
        """
        self._check_inplace(what)
        for o in operands:
            if isinstance(o, Tensor):
                check_no_overlap(self, o, what)
        recording = is_grad_enabled()
        if recording:
            self.requires_grad  # noqa: B018 - brings a view's history up to date first
            old = alias(self)
            result = result_fn(old)
            _check_result_dtype(what, result.dtype, self.dtype)
            if result.dtype != self.dtype:  # the op's output, as the target stores it
                result = cast(result, self.dtype)
            if old.requires_grad and not result._requires_grad:
                # new values that do not depend differentiably on the old ones (``y.lt_(0)``, ``y.copy_(c)``):
                # the old history gets a zero gradient, as PyTorch's LtBackward gives; without this node the
                # tensor would keep its old grad_fn and backward would pass gradients through it unchanged
                result = where(self._everywhere(), result, old)
            _snapshot_saved(result, old)
        else:
            result = result_fn(self.detach())
            _check_result_dtype(what, result.dtype, self.dtype)
        if result.shape != self.shape:
            raise ShapeError(
                f"{what}: the result has shape {tuple(result.shape)}, which does not fit the in-place "
                f"target of shape {tuple(self.shape)}"
            )
        if recording and result._requires_grad and self._base is not None and self.dtype != self._base.dtype:
            raise RuntimeError(f"{what}: writing a value that requires grad through a view of another dtype "
                               f"({self.dtype} of {self._base.dtype}, as z.real) is not supported; build the "
                               "tensor out of place instead (complex(re, im))")  # before anything is written
        xp = backend.get_array_module(self.array)
        xp.copyto(self.array, result.array, casting="unsafe")
        self._bump_version()
        _tracing.notify_write(self, result)
        if recording and result._requires_grad:
            if self._base is None:
                _set_history(self, result._grad_fn, result._output_nr)
                self._requires_grad = True
            else:
                rebase_history(self, result)
        return self

    def _overwrite(self, what: str, write) -> "Tensor":
        """Set every element without reading the old ones: ``write(array)`` fills it in place.

        Tracked (the old values get a zero gradient) when this tensor has a history in grad mode.
        """
        if is_grad_enabled() and self.requires_grad:
            self._check_inplace(what)
            xp = backend.get_array_module(self.array)
            values = xp.empty_like(self.array)
            write(values)
            const = Tensor._from_op(values)
            return self._inplace(what, lambda s: where(self._everywhere(), const, s))
        self._check_inplace(what)
        write(self.array)
        self._bump_version()
        return self

    def add_(self, other, alpha=1):
        if type(alpha) is int and alpha == 1 and (done := _number_inplace(self, "add_", "add", other)) is not None:
            return done
        return self._inplace("add_", lambda s: add(s, other, alpha=alpha), other)  # add checks alpha (alpha_scaled)

    def sub_(self, other, alpha=1):
        if type(alpha) is int and alpha == 1 and (done := _number_inplace(self, "sub_", "subtract", other)) is not None:
            return done
        return self._inplace("sub_", lambda s: sub(s, other, alpha=alpha), other)

    def mul_(self, other):
        if (done := _number_inplace(self, "mul_", "multiply", other)) is not None:
            return done
        return self._inplace("mul_", lambda s: mul(s, other), other)

    def div_(self, other, *, rounding_mode=None):
        if rounding_mode is None:
            return self._inplace("div_", lambda s: div(s, other), other)
        return self._inplace("div_", lambda s: s.div(other, rounding_mode=rounding_mode), other)

    def floor_divide_(self, other):
        return self._inplace("floor_divide_", lambda s: floor_divide(s, other), other)

    def remainder_(self, other):
        return self._inplace("remainder_", lambda s: remainder(s, other), other)

    def pow_(self, exponent):
        return self._inplace("pow_", lambda s: pow(s, exponent), exponent)

    def bitwise_and_(self, other):
        return self._inplace("bitwise_and_", lambda s: bitwise_and(s, other), other)

    def bitwise_or_(self, other):
        return self._inplace("bitwise_or_", lambda s: bitwise_or(s, other), other)

    def bitwise_xor_(self, other):
        return self._inplace("bitwise_xor_", lambda s: bitwise_xor(s, other), other)

    def bitwise_left_shift_(self, other):
        return self._inplace("bitwise_left_shift_", lambda s: bitwise_left_shift(s, other), other)

    def bitwise_right_shift_(self, other):
        return self._inplace("bitwise_right_shift_", lambda s: bitwise_right_shift(s, other), other)

    # Python's augmented assignments. Without them ``p -= lr * p.grad`` falls back to
    # ``p = p - lr * p.grad``: a new tensor bound to the loop variable, the parameter untouched
    # (a training loop that silently never trains). As in PyTorch each changes the tensor in place
    # and returns it. ``@=`` is left undefined, as in PyTorch: Python falls back to ``x = x @ y``.
    def __iadd__(self, other):
        return self.add_(other)

    def __isub__(self, other):
        return self.sub_(other)

    def __imul__(self, other):
        return self.mul_(other)

    def __itruediv__(self, other):
        return self.div_(other)

    __idiv__ = __itruediv__  # PyTorch keeps Python 2's name too

    def __ifloordiv__(self, other):
        return self.floor_divide_(other)

    def __imod__(self, other):
        return self.remainder_(other)

    def __ipow__(self, other):
        return self.pow_(other)

    def __iand__(self, other):
        return self.bitwise_and_(other)

    def __ior__(self, other):
        return self.bitwise_or_(other)

    def __ixor__(self, other):
        return self.bitwise_xor_(other)

    def __ilshift__(self, other):
        return self.bitwise_left_shift_(other)

    def __irshift__(self, other):
        return self.bitwise_right_shift_(other)

    def clamp_(self, min=None, max=None):  # noqa: A002
        return self._inplace("clamp_", lambda s: clamp(s, min, max), min, max)

    def masked_fill_(self, mask, value):
        return self._inplace("masked_fill_", lambda s: masked_fill(s, mask, value))

    def _everywhere(self) -> "Tensor":
        return Tensor._from_op(backend.get_array_module(self.array).ones(self.shape, dtype=bool))

    def copy_(self, src):
        src = src if isinstance(src, Tensor) else Tensor(src, dtype=self.dtype, device=self.device)
        # where(True, src, s), not src + 0*s: the old values get a zero gradient without being saved
        # (saving them would trip this very write's version check) and an inf in them can't give NaN.
        return self._inplace("copy_", lambda s: where(
            self._everywhere(), broadcast_to(cast(src.to(self.device), self.dtype), self.shape), s), src)

    def fill_(self, value):
        if isinstance(value, Tensor) and value.requires_grad and is_grad_enabled():
            return self._inplace("fill_", lambda s: masked_fill(s, self._everywhere(), value))
        if isinstance(value, Tensor):
            if value.numel() != 1:
                raise ShapeError(f"fill_ expects a number or a 1-element tensor, got shape {tuple(value.shape)}")
            with np.errstate(over="ignore", invalid="ignore"):  # a tensor's value is cast (wraps), as PyTorch
                value = backend.to_device(value.array, "cpu").reshape(()).astype(self.dtype)[()]
        else:  # a number is checked, as PyTorch's checked_convert: None, str, 300 into uint8 raise
            value = checked_number(value, self.array.dtype, "fill_")
        return self._overwrite("fill_", lambda arr: _fill(arr, value))

    def zero_(self):
        return self.fill_(0)

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        if a > b:
            raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}")
        rng = rng_for(generator, self.device)

        def write(arr):  # in memory order, as PyTorch (x.t().uniform_())
            arr[...] = random_torch.in_memory_order(self.array,
                                                    lambda s, _: random_torch.uniform(rng, s, self.dtype, a, b))

        return self._overwrite("uniform_", write)

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        rng = rng_for(generator, self.device)

        def write(arr):  # PyTorch's 16-at-a-time path needs a contiguous tensor; memory order (x.t().normal_())
            arr[...] = random_torch.in_memory_order(self.array, lambda s, _: random_torch.normal(
                rng, s, self.dtype, mean, std, contiguous=self.is_contiguous()))

        return self._overwrite("normal_", write)


def _number_inplace(self, what: str, ufunc: str, other) -> Tensor | None:
    """The fast path of ``x += n``, ``x -= n``, ``x *= n`` (issue 26: ``N[a, b] += 1``, ``ll += log(p)``)
    when the change is not recorded, for ``other`` a Python int or float or a CPU tensor of ``x``'s dtype
    (not bool) and of its shape or 0-d, whenever the general path's result dtype is ``x``'s own (a float
    tensor; an integer tensor with an int). The same checks (``_check_inplace``; ``check_no_overlap`` for a
    tensor operand, which refuses partly shared memory and lets the very same memory through, where NumPy's
    ``out=`` reads each element before it writes it), the same operand (the NumPy scalar ``number_operands``
    makes, ``promote``'s wrapped int, the other's array), the same ufunc, the same version bump; None for
    every other case, which takes :meth:`_InPlace._inplace`."""
    if _function._tracer is not None:  # an ONNX export records the write through the op path (_tracing.active())
        return None
    arr = self.array
    dt = arr.dtype
    kind = dt.kind
    if isinstance(other, Tensor):
        o = other.array
        if (type(arr) is not np.ndarray or type(o) is not np.ndarray or o.dtype != dt or kind == "b"
                or (o.shape != arr.shape and o.ndim) or _grad_state.enabled and (self.requires_grad or other.requires_grad)):
            return None
        self._check_inplace(what)
        if o is not arr and (o.base is not None or arr.base is not None):  # else two owners: no shared memory
            check_no_overlap(self, other, what)  # as the general path (_inplace's operands)
        _ufunc_into(np, ufunc, arr, o)
        self._bump_version()
        return self
    if not (kind == "f" and type(other) in _NUMBERS or kind in "iu" and type(other) is int):
        return None
    if ufunc == "multiply" and dt is _F16:  # float16 x *= 0.1 reads 0.1 in float32 (number_operands): general path
        return None
    if is_grad_enabled() and self.requires_grad:
        return None
    self._check_inplace(what)
    xp = backend.get_array_module(arr)
    operand = dt.type(other) if kind == "f" else xp.asarray(_wrap_int(other, dt, what[:-1]), dtype=dt)
    _ufunc_into(xp, ufunc, arr, operand)
    self._bump_version()
    return self


def _fill(arr, value) -> None:
    """``arr.fill(value)``; a value beyond float16's range is inf (checked by ``checked_number``), without NumPy's
    overflow warning."""
    if arr.dtype is not _F16:  # only float16 can overflow a checked number (bfloat16 has float32's range)
        arr.fill(value)
        return
    with np.errstate(over="ignore"):
        arr.fill(value)


def _ufunc_into(xp, ufunc: str, arr, operand) -> None:
    """``ufunc(arr, operand, out=arr)``, the result's dtype being ``arr``'s (``_number_inplace`` checks it). On a 0-d
    NumPy ``arr`` (``ll += log(p)``, ``N[a, b] += 1``) the same ufunc's scalar result is stored instead: the same
    value and floating-point errors, without ``out=``'s argument handling (0.7 -> 0.3 µs, issue 26)."""
    f = getattr(xp, ufunc)
    if xp is np and arr.ndim == 0:
        arr[()] = f(arr, operand)
    else:
        f(arr, operand, out=arr)


def _snapshot_saved(result, old) -> None:
    """Where the op's node saved ``old`` (this tensor before the write), keep a copy instead.

    ``y.mul_(w)`` needs the old ``y`` for ``w``'s gradient; the write is about to change it, and the
    version check would then raise. PyTorch saves ``original_self`` as a clone in the same case.
    The copy keeps ``old``'s history, so a second derivative still reaches it.
    """
    node = result._grad_fn
    saved = node._saved if node is not None else None
    if not saved:
        return
    for i, (t, _version) in enumerate(saved):
        if t is old:
            snap = Tensor._from_op(old.array.copy(), old._requires_grad)
            snap._grad_fn, snap._output_nr, snap._accumulator_ref = old._grad_fn, old._output_nr, old._accumulator_ref
            saved[i] = (snap, 0)


def _check_result_dtype(what: str, result_dtype, target_dtype) -> None:
    """Raise as PyTorch does when an in-place op's result type can't be stored in the target.

    ``int_tensor += 0.5`` computes a float result; truncating it into the integers would be a silently
    wrong number, so PyTorch refuses ("result type Float can't be cast to the desired output type
    Long"). Within a category (float64 into float32, int64 into int32) the result is cast.
    """
    if not backend.can_cast(result_dtype, target_dtype):
        raise RuntimeError(
            f"{what}: result type {backend.torch_type_name(result_dtype)} can't be cast to the desired "
            f"output type {backend.torch_type_name(target_dtype)} (the in-place target's dtype is "
            f"{target_dtype}; compute out of place, or convert the tensor first)"
        )



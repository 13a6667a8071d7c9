"""In-place ops: ``add_``, ``sub_``, ``mul_``, ``div_``, ``clamp_``, ``masked_fill_``, ``copy_``, ``fill_``,
``zero_``, ``uniform_``, ``normal_``, attached to ``Tensor``.

An in-place op runs its out-of-place twin on an alias of the tensor's old value, writes the result
into the tensor's array and bumps its version counter, so every node that saved the old values
raises instead of giving a wrong gradient (docs/autograd.md).
"""

from __future__ import annotations

from .. import backend
from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor
from .conversion import cast
from .elementwise import add, div, mul, sub
from .selection import clamp, masked_fill, where
from .shape import broadcast_to


class _InPlace:
    """The in-place methods, attached to :class:`Tensor` below."""

    def _check_inplace(self, what: str) -> None:
        if self.is_leaf and self.requires_grad and is_grad_enabled():
            raise RuntimeError(
                f"a leaf tensor that requires grad is being used in an in-place operation ({what}); "
                "wrap the update in `with no_grad():` (as optimizers do) or use an out-of-place op"
            )

    def _inplace(self, what: str, result_fn) -> "Tensor":
        """Run ``result_fn(old_self)`` out of place, then write the result into this tensor.

        When the graph is recorded, the op's input is an alias of this tensor *before* the change
        (same array and version counter), and this tensor takes over the op's output in the graph.
        The write bumps the shared version counter, so any node that saved the old values notices.
        """
        self._check_inplace(what)
        if is_grad_enabled():
            old = Tensor._from_op(self.array, requires_grad=self.requires_grad)
            old.grad_fn, old._output_nr, old._version = self.grad_fn, self._output_nr, self._version
            old._accumulator = self._accumulator
            result = result_fn(old)
        else:
            result = result_fn(self.detach())
        if result.shape != self.shape:
            raise RuntimeError(
                f"{what}: the result has shape {tuple(result.shape)}, which does not fit the in-place "
                f"target of shape {tuple(self.shape)}"
            )
        xp = backend.get_array_module(self.array)
        xp.copyto(self.array, result.array, casting="unsafe")
        self._version[0] += 1
        if result.requires_grad:
            self.grad_fn, self._output_nr = result.grad_fn, result._output_nr
            self._requires_grad = True
        return self

    def add_(self, other, alpha=1):
        return self._inplace("add_", lambda s: add(s, _scaled(other, alpha)))

    def sub_(self, other, alpha=1):
        return self._inplace("sub_", lambda s: sub(s, _scaled(other, alpha)))

    def mul_(self, other):
        return self._inplace("mul_", lambda s: mul(s, other))

    def div_(self, other):
        return self._inplace("div_", lambda s: div(s, other))

    def clamp_(self, min=None, max=None):  # noqa: A002
        return self._inplace("clamp_", lambda s: clamp(s, min, max))

    def masked_fill_(self, mask, value):
        return self._inplace("masked_fill_", lambda s: masked_fill(s, mask, value))

    def _everywhere(self) -> "Tensor":
        return Tensor._from_op(backend.get_array_module(self.array).ones(self.shape, dtype=bool))

    def copy_(self, src):
        src = src if isinstance(src, Tensor) else Tensor(src, dtype=self.dtype, device=self.device)
        # where(True, src, s), not src + 0*s: the old values get a zero gradient without being saved
        # (saving them would trip this very write's version check) and an inf in them can't give NaN.
        return self._inplace("copy_", lambda s: where(
            self._everywhere(), broadcast_to(cast(src.to(self.device), self.dtype), self.shape), s))

    def fill_(self, value):
        if self.requires_grad and not self.is_leaf and is_grad_enabled():
            # a non-leaf's history must be cut (its old values get a zero gradient)
            return self._inplace("fill_", lambda s: masked_fill(s, self._everywhere(), value))
        self._check_inplace("fill_")
        self.array.fill(value)
        self._version[0] += 1
        return self

    def zero_(self):
        return self.fill_(0)

    def uniform_(self, a=0.0, b=1.0):
        self._check_inplace("uniform_")
        gen = backend.generator(self.device)
        self.array[...] = gen.uniform(a, b, size=self.shape).astype(self.dtype)
        self._version[0] += 1
        return self

    def normal_(self, mean=0.0, std=1.0):
        self._check_inplace("normal_")
        gen = backend.generator(self.device)
        self.array[...] = (gen.standard_normal(size=self.shape) * std + mean).astype(self.dtype)
        self._version[0] += 1
        return self


def _scaled(other, alpha):
    """``alpha * other`` for ``add_``/``sub_``; plain arithmetic when ``other`` is a number."""
    if alpha == 1:
        return other
    return mul(other, alpha) if isinstance(other, Tensor) else other * alpha


# ==================================================================================================
# Factories
# ==================================================================================================


for _name, _method in vars(_InPlace).items():
    if not _name.startswith("__"):
        setattr(Tensor, _name, _method)

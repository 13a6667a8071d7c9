"""``Tensor.resize_`` / ``resize_as_`` (in place, to a size that fits the current elements) and the adjoint views
``Tensor.H`` / ``Tensor.mH``.

``resize_`` keeps the first ``numel(size)`` elements in row-major order, as PyTorch's (whose storage is
contiguous for a freshly made tensor), and bumps the version counter; growing is refused here, because the
new elements would be uninitialized memory (PyTorch's "undefined values"), and a tensor that requires grad
is refused as PyTorch refuses it. ``H`` (matrices only) and ``mH`` are the conjugate transposes: ``T``/``mT``
for real dtypes, conjugated for complex ones.
"""

from __future__ import annotations

import numbers

from ..errors import ShapeError
from ..tensor import Tensor

__all__ = ["resize_as_"]  # torch.resize_as_; the rest are Tensor methods only (ops/methods.py)


def _resize_(self: Tensor, *sizes) -> Tensor:
    """``Tensor.resize_(*sizes)``: this tensor, reshaped in place to ``sizes`` (at most as many elements).

    Raises RuntimeError for a tensor that requires grad, ShapeError to grow it or for a negative size.
    """
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    if not all(isinstance(n, numbers.Integral) and n >= 0 for n in sizes):
        raise ShapeError(f"resize_(): sizes must be non-negative ints, got {sizes}")
    if self.requires_grad:
        raise RuntimeError("resize_(): cannot resize variables that require grad")
    if self._base is not None:  # its memory is another tensor's: a new shape would stop sharing it
        raise RuntimeError("resize_(): cannot resize a view of another tensor; resize a clone instead")
    n = 1
    for s in sizes:
        n *= int(s)
    if n > self.numel():
        raise ShapeError(f"resize_(): growing a tensor of {self.numel()} elements to {n} is not supported (the new "
                         "elements would be uninitialized memory); make a new tensor instead")
    self.array = self.array.reshape(-1)[:n].reshape(tuple(int(s) for s in sizes))
    self._bump_version()
    return self


def resize_as_(input: Tensor, the_template: Tensor) -> Tensor:
    """``torch.resize_as_`` / ``Tensor.resize_as_``: ``input`` resized in place to ``the_template``'s shape
    (:func:`_resize_`'s rules)."""
    if not isinstance(input, Tensor) or not isinstance(the_template, Tensor):
        raise TypeError("resize_as_(): expected two Tensors, got "
                        f"{type(input).__name__} and {type(the_template).__name__}")
    return _resize_(input, tuple(the_template.shape))


def _H(self: Tensor) -> Tensor:  # noqa: N802 - PyTorch's name
    """``Tensor.H``: the conjugate transpose of a matrix (2-D; ``T`` for real dtypes)."""
    if self.ndim != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.")
    t = self.T
    return t.conj() if self.dtype.kind == "c" else t


def _mH(self: Tensor) -> Tensor:  # noqa: N802 - PyTorch's name
    """``Tensor.mH``: the conjugate transpose of the last two dims (``mT`` for real dtypes)."""
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. Got {self.ndim}-D tensor.")
    t = self.mT
    return t.conj() if self.dtype.kind == "c" else t

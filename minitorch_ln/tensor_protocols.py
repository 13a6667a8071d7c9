"""The Python and array protocols of :class:`~minitorch_ln.tensor.Tensor` beyond arithmetic: NumPy's
conversion (``np.asarray(t)``), ``operator.index``, copying (``copy.deepcopy``), pickling, DLPack
(``np.from_dlpack(t)``), CUDA's array interface and NumPy's ufunc wrapping (``np.sin(t)`` gives a
tensor), each as PyTorch's Tensor does it.

``Tensor`` inherits them from :class:`TensorProtocols`; this module knows arrays and the backend only.
"""

from __future__ import annotations

import copy

import numpy as np

from . import backend


class TensorProtocols:
    """Mixin of :class:`Tensor` (``self`` is the Tensor)."""

    def __delitem__(self, index):
        raise TypeError("Tensor does not support deleting items")

    _tensor_class = None  # set by tensor.py: the class a ufunc's result is wrapped in

    def __array__(self, dtype=None, copy=None):
        if self.requires_grad:  # as PyTorch: NumPy would drop the gradient without a word
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                               "instead (np.asarray(t) and NumPy functions of t convert it the same way).")
        arr = backend.to_device(self.array, "cpu")
        return arr.astype(dtype) if dtype is not None else arr

    def __index__(self) -> int:
        if self.dtype.kind not in "iu" or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __array_wrap__(self, array, context=None, return_scalar=False):
        # a NumPy ufunc applied to a tensor (``np.sin(t)``) gives a tensor back, as in PyTorch
        # (no history: NumPy computed it)
        return self._tensor_class(np.asarray(array))

    def __dlpack__(self, *args, **kwargs):
        """The DLPack capsule of the array (``np.from_dlpack(t)``, ``cupy.from_dlpack(t)``), sharing memory."""
        if self.requires_grad:
            raise RuntimeError("can't export a tensor that requires grad through DLPack: use tensor.detach()")
        return self.array.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

    @property
    def __cuda_array_interface__(self):
        if self.device.type != "cuda":
            raise AttributeError(
                f"Can't get __cuda_array_interface__ on a non-CUDA tensor (device {self.device}): "
                "move it with tensor.cuda() first"
            )
        if self.requires_grad:
            raise RuntimeError("can't export a tensor that requires grad through __cuda_array_interface__: "
                               "use tensor.detach()")
        return self.array.__cuda_array_interface__

    # ---------------------------------------------------------------- copying and pickling
    # Autograd's bookkeeping (the node that made the tensor, the leaf's AccumulateGrad, view links,
    # hooks) never travels with a copy: a copy that kept the leaf's AccumulateGrad would send its
    # gradients into the original's ``.grad``.
    _NOT_COPIED = frozenset({
        "array", "_version", "_requires_grad", "_grad", "_grad_fn", "_output_nr", "_accumulator_ref",
        "_leaf_hooks", "_retains_grad", "_retain_hook", "_base", "_view_fn", "_view_version",
        "_view_no_grad", "_saved_output_nr",
    })

    def _user_state(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in TensorProtocols._NOT_COPIED}

    def __deepcopy__(self, memo):
        """A leaf with its own copy of the values, ``requires_grad``, ``.grad`` and any attributes set
        on it (as PyTorch). Raises RuntimeError for a non-leaf, as PyTorch does."""
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol "
                f"at the moment (this tensor was made by {self.grad_fn.name()}): deepcopy t.detach() instead"
            )
        if id(self) in memo:
            return memo[id(self)]
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        new.array = self.array.copy()
        new._version = [0]
        new._requires_grad = self._requires_grad
        if self._grad is not None:
            new._grad = copy.deepcopy(self._grad, memo)
        for k, v in self._user_state().items():
            setattr(new, k, copy.deepcopy(v, memo))
        return new

    def __reduce_ex__(self, protocol):
        # pickle: the values (on the CPU), device, requires_grad and user attributes, as PyTorch (which
        # turns a non-leaf into a leaf that requires grad; its ``.grad`` is not pickled)
        return (_rebuild_tensor, (type(self), backend.to_device(self.array, "cpu"), str(self.device),
                                  self.requires_grad, self._user_state()))

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)


def _rebuild_tensor(cls, array, device, requires_grad, state):
    """Unpickling: a leaf of class ``cls`` (Tensor, Parameter, ...) holding ``array`` on ``device``."""
    t = cls.__new__(cls)
    t.array = backend.to_device(array, device)
    t._version = [0]
    t._requires_grad = False
    t.__dict__.update(state)
    if requires_grad:
        t.requires_grad_(True)
    return t

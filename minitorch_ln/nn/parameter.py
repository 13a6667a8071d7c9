"""``Parameter``: a leaf Tensor that a Module registers as one of its learnable weights."""

from __future__ import annotations

from ..ops.creation import empty
from ..tensor import Tensor


class Parameter(Tensor):
    """A Tensor that requires grad by default and is registered when assigned to a Module attribute."""

    def __init__(self, data=None, requires_grad: bool = True):
        if data is None:
            data = Tensor([])
        array = data.array if isinstance(data, Tensor) else data
        super().__init__(array, requires_grad=requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet (the weights of a ``Lazy*`` module), as PyTorch's.

    It holds an empty placeholder of its dtype and device (``Module.to`` changes them, as for any
    parameter) until :meth:`materialize` gives it a shape; it then *becomes* a :class:`Parameter`
    (``cls_to_become``), the same object, so anything holding it sees the materialized tensor.
    Unlike PyTorch's, reading it before then is not refused: it is a 0-element tensor.
    """

    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device=None, dtype=None):
        super().__init__(Tensor([], dtype=dtype, device=device), requires_grad)

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give it ``shape`` (uninitialized memory, as ``torch.empty``), on ``device`` and of ``dtype``
        (default: its own), and turn it into a :class:`Parameter`."""
        made = empty(*tuple(shape), dtype=dtype or self.dtype, device=device or self.device)
        self.__class__ = self.cls_to_become
        self.array = made.array

    def __repr__(self) -> str:
        return "<UninitializedParameter>"

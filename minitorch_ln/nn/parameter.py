"""``Parameter``: a leaf Tensor that a Module registers as one of its learnable weights."""

from __future__ import annotations

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

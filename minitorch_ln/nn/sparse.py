"""``Embedding``: a lookup table of learnable vectors, one row per token id; ``EmbeddingBag``: bags of them."""

from __future__ import annotations

import numbers

from ..autograd.grad_mode import no_grad
from ..ops.creation import empty
from ..tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class Embedding(Module):
    """``weight[input]``: integer ids ``(*)`` → vectors ``(*, embedding_dim)`` of the weight's dtype.

    ``weight`` is ``(num_embeddings, embedding_dim)``, initialised N(0, 1) as in PyTorch, with the
    ``padding_idx`` row (if any) zeroed. Backward scatter-adds the upstream gradient into the rows
    that were looked up (a repeated id gets the sum of its gradients); the ``padding_idx`` row gets
    no gradient, so it stays what it is (zero unless you set it).

    Args:
        padding_idx: a row that is not trained; negative values count from the end, as in PyTorch.
        max_norm, norm_type: each forward first rescales every looked-up row whose ``norm_type``-norm
            exceeds ``max_norm`` to that norm, in the weight itself (no gradient), as PyTorch.
        device, dtype: of the weight (default CPU, float32).
    Raises:
        ValueError: non-positive sizes, or ``padding_idx`` outside ``[-num_embeddings, num_embeddings)``.
        IndexError (in forward): an id outside ``[0, num_embeddings)``, naming the id and the size.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 device=None, dtype=None, _weight: Tensor | None = None, _freeze: bool = False):
        super().__init__()
        for name, v in (("num_embeddings", num_embeddings), ("embedding_dim", embedding_dim)):
            if not isinstance(v, numbers.Integral) or isinstance(v, bool) or v <= 0:
                raise ValueError(f"Embedding: {name} must be a positive int, got {v!r}")
        if padding_idx is not None:
            if not isinstance(padding_idx, numbers.Integral) or not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(
                    f"Embedding: padding_idx must be within [-{num_embeddings}, {num_embeddings}) "
                    f"(num_embeddings={num_embeddings}), got {padding_idx!r}"
                )
            padding_idx = int(padding_idx) % num_embeddings
        self.num_embeddings, self.embedding_dim, self.padding_idx = int(num_embeddings), int(embedding_dim), padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, device=device, dtype=dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(
                    f"Embedding: _weight has shape {tuple(_weight.shape)}, expected ({num_embeddings}, {embedding_dim})"
                )
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight.array[self.padding_idx] = 0
                self.weight._bump_version()

    def forward(self, input):  # noqa: A002 - PyTorch's name
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0) -> "Embedding":
        """An Embedding whose weight is (a copy of) the 2-D ``embeddings``; frozen unless ``freeze=False``."""
        if embeddings.ndim != 2:
            raise ValueError(f"Embedding.from_pretrained: embeddings must be 2-D, got shape {tuple(embeddings.shape)}")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   _weight=embeddings.detach().clone(), _freeze=freeze)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        s += f", padding_idx={self.padding_idx}" if self.padding_idx is not None else ""
        s += f", max_norm={self.max_norm}" if self.max_norm is not None else ""
        return s + (f", norm_type={self.norm_type}" if self.norm_type != 2 else "")


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings, as ``torch.nn.EmbeddingBag``:
    ``forward(input, offsets=None, per_sample_weights=None)`` → ``(B, embedding_dim)``; see
    :func:`~minitorch_ln.ops.embedding_bag.embedding_bag`. ``weight`` ``(num_embeddings, embedding_dim)``,
    N(0, 1) with the ``padding_idx`` row zeroed. Raises ValueError as :class:`Embedding`.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                 _weight: Tensor | None = None, include_last_offset: bool = False, padding_idx: int | None = None,
                 device=None, dtype=None):
        super().__init__()
        table = Embedding(num_embeddings, embedding_dim, padding_idx, max_norm, norm_type, device, dtype, _weight)
        self.num_embeddings, self.embedding_dim, self.padding_idx = table.num_embeddings, table.embedding_dim, \
            table.padding_idx
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset
        self.weight = table.weight

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight.array[self.padding_idx] = 0
                self.weight._bump_version()

    def forward(self, input, offsets=None, per_sample_weights=None):  # noqa: A002
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        s += f", max_norm={self.max_norm}" if self.max_norm is not None else ""
        s += f", norm_type={self.norm_type}" if self.norm_type != 2 else ""
        s += ", scale_grad_by_freq=True" if self.scale_grad_by_freq else ""
        s += f", mode='{self.mode}'"
        return s + (f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")

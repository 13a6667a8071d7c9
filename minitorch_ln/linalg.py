"""``minitorch_ln.linalg``: the norms of ``torch.linalg`` (``vector_norm``, ``matrix_norm``); the ops are in
``ops/norms.py``."""

from .ops.norms import linalg_matrix_norm as matrix_norm
from .ops.norms import linalg_vector_norm as vector_norm

__all__ = ["vector_norm", "matrix_norm"]

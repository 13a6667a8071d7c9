"""``minitorch_ln.linalg``: the ``torch.linalg`` functions. The norms are in ``ops/linalg_norms.py``; inv and
solve in ``ops/linalg_ops.py``; det, slogdet and the factorizations in ``ops/linalg_decomp.py``;
cross in ``ops/products.py``."""

from .ops.linalg_decomp import cholesky, det, eigh, eigvalsh, qr, slogdet, svd, svdvals
from .ops.linalg_ops import LinAlgError, inv, solve
from .ops.linalg_norms import linalg_matrix_norm as matrix_norm
from .ops.linalg_norms import linalg_vector_norm as vector_norm
from .ops.products import linalg_cross as cross

__all__ = ["LinAlgError", "cholesky", "cross", "det", "eigh", "eigvalsh", "inv", "matrix_norm", "qr", "slogdet",
           "solve", "svd", "svdvals", "vector_norm"]

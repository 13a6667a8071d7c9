"""``minitorch_ln.linalg``: the ``torch.linalg`` functions. The norms are in ``ops/linalg_norms.py``; inv and
solve in ``ops/linalg_ops.py``; det, slogdet and the factorizations in ``ops/linalg_decomp.py``;
eig and eigvals in ``ops/linalg_eig.py``;
cross in ``ops/products.py``; solve_triangular, pinv, lstsq, matrix_rank and the ``*_ex`` variants in
``ops/linalg_solvers.py``; norm, matrix_power, multi_dot, vecdot, tensorinv/tensorsolve, cond and diagonal
in ``ops/linalg_composed.py``."""

from .ops.linalg_composed import (
           cond,
           diagonal,
           matrix_power,
           multi_dot,
           norm,
           tensorinv,
           tensorsolve,
           vecdot,
)
from .ops.linalg_decomp import cholesky, det, eigh, eigvalsh, qr, slogdet, svd, svdvals
from .ops.linalg_eig import eig, eigvals
from .ops.linalg_householder import (
           householder_product,
           ldl_factor,
           ldl_factor_ex,
           ldl_solve,
)
from .ops.linalg_lu import linalg_lu as lu
from .ops.linalg_lu import linalg_lu_solve as lu_solve
from .ops.linalg_lu import lu_factor, lu_factor_ex
from .ops.linalg_norms import linalg_matrix_norm as matrix_norm
from .ops.linalg_norms import linalg_vector_norm as vector_norm
from .ops.linalg_ops import LinAlgError, inv, solve
from .ops.linalg_solvers import (
           cholesky_ex,
           inv_ex,
           lstsq,
           matrix_rank,
           pinv,
           solve_ex,
           solve_triangular,
)
from .ops.linalg_torch import vander
from .ops.matmul import matmul
from .ops.products import linalg_cross as cross

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh",
           "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve", "lstsq", "lu",
           "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot",
           "norm", "pinv", "qr",
           "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vander",
           "vecdot", "vector_norm"]

from .ops.out_variants import add_out

add_out(globals(), __all__, "linalg")  # every torch.linalg function takes out= (ops/out_variants.py)

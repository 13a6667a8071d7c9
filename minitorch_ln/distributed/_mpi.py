"""mpi4py, imported only when a process group is made: the core never needs it.

``pip install 'minitorch-ln[distributed]'`` installs ``mpi4py`` and the ``mpich`` wheel (an MPI library
with its ``mpiexec``). Importing ``mpi4py.MPI`` initialises MPI: under ``mpiexec`` the process joins
its job; alone it is a job of one rank (a "singleton").
"""

from __future__ import annotations

import importlib.util

INSTALL_HINT = "pip install 'minitorch-ln[distributed]' (mpi4py and the mpich wheel, which ships mpiexec)"


def mpi_available() -> bool:
    """True when mpi4py can be imported (without importing it, which would start MPI)."""
    return importlib.util.find_spec("mpi4py") is not None


def load_mpi():
    """The ``mpi4py.MPI`` module, or a RuntimeError saying how to install it."""
    try:
        from mpi4py import MPI  # noqa: PLC0415 - lazy: an optional extra
    except ImportError as exc:
        raise RuntimeError(f"torch.distributed runs on MPI, and mpi4py is not installed: {INSTALL_HINT}") from exc
    return MPI

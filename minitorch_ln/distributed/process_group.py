"""The default process group on MPI: ``init_process_group``, ranks, ``ReduceOp``, and work handles.

Every rank is an MPI process; MPI's own start-up (``mpiexec``, or ``minitorch-ln run
--nproc-per-node N``, which calls it) does the rendezvous that torchrun's store does in PyTorch, so
``init_method`` and ``MASTER_ADDR``/``MASTER_PORT`` are accepted and checked, never used to open a
socket. Backends ``"gloo"`` and ``"mpi"`` both run the collectives on MPI (CPU arrays);
``"nccl"`` runs them on NCCL through CuPy for GPU arrays (:mod:`.nccl`), with MPI carrying the
NCCL id. One group, the world: ``group=`` takes None or the default group.
"""

from __future__ import annotations

import os

from .. import backend as _backend
from . import faults
from ._mpi import load_mpi, mpi_available
from .work import ReduceOp, Work

__all__ = ["Backend", "ReduceOp", "ProcessGroup", "GroupMember", "group", "Work", "init_process_group",
           "destroy_process_group", "is_available", "is_initialized", "is_mpi_available", "is_gloo_available",
           "is_nccl_available", "is_torchelastic_launched", "get_rank", "get_world_size", "get_backend",
           "default_group", "check_group"]

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


class Backend(str):
    """``torch.distributed.Backend``: ``Backend("GLOO") == "gloo"``; the names PyTorch has."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"
    backend_list = ["gloo", "nccl", "mpi"]

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got {type(name).__name__}")
        value = name.lower()
        if value not in cls.backend_list:
            raise ValueError(f"Invalid backend: '{name}' (minitorch_ln has {', '.join(cls.backend_list)}; gloo and "
                             "mpi both run on MPI, nccl on NCCL through CuPy)")
        return super().__new__(cls, value)


class ProcessGroup:
    """All ranks of the job: an MPI communicator (a duplicate of COMM_WORLD) and, for nccl, an NCCL one."""

    def __init__(self, comm, backend: str):
        self.comm = comm
        self._rank, self._size = comm.Get_rank(), comm.Get_size()
        self.backend = backend
        self.nccl = None  # a cupy.cuda.nccl.NcclCommunicator when backend == "nccl"

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def name(self) -> str:
        return self.backend

    def __repr__(self) -> str:
        return f"ProcessGroup(backend={self.backend!r}, rank={self._rank}, size={self._size})"


class GroupMember:
    """``torch.distributed.GroupMember``: ``WORLD`` is the default group once it exists."""

    WORLD = None
    NON_GROUP_MEMBER = -100


group = GroupMember  # torch.distributed.group.WORLD


_STATE = {"group": None}


def is_available() -> bool:
    """True when mpi4py is installed (``pip install 'minitorch-ln[distributed]'``)."""
    return mpi_available()


is_mpi_available = is_available
is_gloo_available = is_available  # "gloo" runs on MPI here


def is_nccl_available() -> bool:
    from .nccl import nccl_available  # noqa: PLC0415

    return mpi_available() and nccl_available()


def is_initialized() -> bool:
    return _STATE["group"] is not None


def is_torchelastic_launched() -> bool:
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def default_group() -> ProcessGroup:
    pg = _STATE["group"]
    if pg is None:
        raise ValueError(_NOT_INITIALIZED)
    return pg


def check_group(group_arg) -> ProcessGroup:
    """The default group for ``group=None`` (or the default group itself); anything else raises."""
    pg = default_group()
    if group_arg is not None and group_arg is not pg:
        raise RuntimeError(f"group={group_arg!r}: minitorch_ln.distributed has one process group, the world "
                           "(new_group is not provided); pass group=None")
    return pg


def get_rank(group=None) -> int:
    return check_group(group).rank()


def get_world_size(group=None) -> int:
    return check_group(group).size()


def get_backend(group=None) -> str:
    return check_group(group).backend


def _env_int(name: str):
    value = os.environ.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"environment variable {name} must be an integer, got {value!r}") from None


def _check_against_mpi(what: str, given, expected: int, mpi_rank: int, mpi_size: int) -> None:
    if given is None or given < 0 or given == expected:
        return
    hint = ("" if mpi_size > 1 else "; this process was started alone: start all ranks with `minitorch-ln run "
            "--nproc-per-node N script.py` or `mpiexec -n N minitorch-ln run script.py` (torchrun's rendezvous "
            "is not used here: MPI starts and connects the ranks)")
    raise RuntimeError(f"init_process_group: {what} is {given}, but MPI started this process as rank {mpi_rank} "
                       f"of {mpi_size}{hint}")


def init_process_group(backend=None, init_method=None, timeout=None, world_size: int = -1, rank: int = -1,
                       store=None, group_name: str = "", pg_options=None, device_id=None) -> None:
    """Join the job's default process group (``torch.distributed.init_process_group``).

    ``backend``: "gloo" or "mpi" (MPI, CPU arrays; the default) or "nccl" (GPU arrays, needs CuPy).
    Rank and world size come from MPI; ``RANK``/``WORLD_SIZE`` in the environment (torchrun's, set
    by ``minitorch-ln run --nproc-per-node``) and the ``rank``/``world_size`` arguments, when given,
    must agree with them. Raises ValueError when called twice or for an unknown backend, RuntimeError
    when mpi4py is missing (naming the pip command) or the ranks disagree with MPI's.
    """
    if _STATE["group"] is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = Backend(backend if backend is not None else "gloo") if not (
        isinstance(backend, str) and ":" in backend) else Backend(_cpu_backend_of(backend))
    if store is not None:
        raise RuntimeError("init_process_group: store= is not supported (MPI connects the ranks); leave it None")
    MPI = load_mpi()
    world = MPI.COMM_WORLD
    mpi_rank, mpi_size = world.Get_rank(), world.Get_size()
    for what, given, expected in (("WORLD_SIZE (environment)", _env_int("WORLD_SIZE"), mpi_size),
                                  ("world_size", world_size, mpi_size),
                                  ("RANK (environment)", _env_int("RANK"), mpi_rank), ("rank", rank, mpi_rank)):
        _check_against_mpi(what, given, expected, mpi_rank, mpi_size)
    pg = ProcessGroup(world.Dup(), str(name))
    # under `run --cuda-as-cpu` every tensor is a CPU tensor (backend.Device): "nccl" is MPI's, as "gloo" (nanoGPT's
    # default backend then runs unchanged)
    if name == "nccl" and not _backend.CUDA_AS_CPU:
        from .nccl import make_communicator  # noqa: PLC0415

        pg.nccl = make_communicator(pg.comm, device_id)
    _STATE["group"] = pg
    GroupMember.WORLD = pg
    faults.install_excepthook(mpi_rank, mpi_size)


def _cpu_backend_of(spec: str) -> str:
    """``"cpu:gloo,cuda:nccl"`` (PyTorch's per-device form) -> the CPU backend's name."""
    for part in spec.split(","):
        dev, _, be = part.partition(":")
        if dev.strip() == "cpu":
            return be.strip()
    return spec.split(",")[0].partition(":")[2].strip()


def destroy_process_group(group=None) -> None:
    """Leave the default group (MPI itself is finalised when the process exits)."""
    pg = check_group(group)
    pg.comm.Free()
    _STATE["group"] = None
    GroupMember.WORLD = None
    faults.uninstall_excepthook()

"""``torch.distributed`` on MPI: process groups, collectives, and DistributedDataParallel.

Ranks are MPI processes started by ``minitorch-ln run --nproc-per-node N script.py`` (which sets
torchrun's environment and calls the mpich wheel's ``mpiexec``) or by ``mpiexec -n N minitorch-ln
run script.py``. Needs the optional extra: ``pip install 'minitorch-ln[distributed]'`` (mpi4py and
mpich); without it ``is_available()`` is False and ``init_process_group`` raises, naming that
command. See ``docs/distributed.md``.
"""

from .collectives import (
    all_gather, all_gather_into_tensor, all_reduce, barrier, broadcast, gather, irecv, isend, monitored_barrier, recv,
    reduce, reduce_scatter_tensor, scatter, send,
)
from .ddp import DistributedDataParallel
from .objects import all_gather_object, broadcast_object_list, gather_object, scatter_object_list
from .process_group import (
    Backend, GroupMember, ProcessGroup, ReduceOp, Work, destroy_process_group, get_backend, get_rank, get_world_size,
    group, init_process_group, is_available, is_gloo_available, is_initialized, is_mpi_available, is_nccl_available,
    is_torchelastic_launched,
)

__all__ = [
    "Backend", "DistributedDataParallel", "GroupMember", "ProcessGroup", "ReduceOp", "Work", "all_gather",
    "all_gather_into_tensor", "all_gather_object", "all_reduce", "barrier", "broadcast", "broadcast_object_list",
    "destroy_process_group", "gather", "gather_object", "get_backend", "get_rank", "get_world_size", "group",
    "init_process_group", "irecv", "is_available", "is_gloo_available", "is_initialized", "is_mpi_available",
    "is_nccl_available", "is_torchelastic_launched", "isend", "monitored_barrier", "recv", "reduce",
    "reduce_scatter_tensor", "scatter", "scatter_object_list", "send",
]

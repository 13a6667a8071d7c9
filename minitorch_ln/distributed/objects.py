"""``broadcast_object_list`` and ``all_gather_object``: picklable Python objects between the ranks.

The objects are pickled by mpi4py and unpickled on the other ranks of the same job only: they never
come from a file or the network outside the job, so no untrusted pickle is ever loaded (as PyTorch,
whose docs warn that these functions unpickle what the other ranks send).
"""

from __future__ import annotations

from .process_group import check_group

__all__ = ["broadcast_object_list", "all_gather_object", "gather_object", "scatter_object_list"]


def _check_list(object_list, what: str) -> None:
    if not isinstance(object_list, list):
        raise TypeError(f"{what} must be a list, got {type(object_list).__name__}")


def broadcast_object_list(object_list: list, src: int = 0, group=None, device=None, group_src=None) -> None:
    """Replace ``object_list``'s items, in place on every rank, by rank ``src``'s (the lists' lengths must match)."""
    pg = check_group(group)
    _check_list(object_list, "broadcast_object_list: object_list")
    src = src if group_src is None else group_src
    if not 0 <= src < pg.size():
        raise ValueError(f"broadcast_object_list: src must be a rank in [0, {pg.size()}), got {src!r}")
    got = pg.comm.bcast(list(object_list) if pg.rank() == src else None, root=src)
    if len(got) != len(object_list):
        raise ValueError(f"broadcast_object_list: rank {src} sent {len(got)} objects, but this rank's list holds "
                         f"{len(object_list)}: the lists must have the same length on every rank")
    object_list[:] = got


def all_gather_object(object_list: list, obj, group=None) -> None:
    """``object_list[r]`` becomes rank r's ``obj`` (``object_list`` must have world_size items)."""
    pg = check_group(group)
    _check_list(object_list, "all_gather_object: object_list")
    if len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list must have world_size ({pg.size()}) items, got "
                         f"{len(object_list)}")
    object_list[:] = pg.comm.allgather(obj)


def gather_object(obj, object_gather_list=None, dst: int = 0, group=None) -> None:
    """On rank ``dst``, ``object_gather_list[r]`` becomes rank r's ``obj``; the others pass None."""
    pg = check_group(group)
    if pg.rank() == dst and (not isinstance(object_gather_list, list) or len(object_gather_list) != pg.size()):
        raise ValueError(f"gather_object: on the destination rank object_gather_list must be a list of world_size "
                         f"({pg.size()}) items")
    got = pg.comm.gather(obj, root=dst)
    if pg.rank() == dst:
        object_gather_list[:] = got


def scatter_object_list(scatter_object_output_list: list, scatter_object_input_list=None, src: int = 0,
                        group=None) -> None:
    """``scatter_object_output_list[0]`` becomes rank ``src``'s ``scatter_object_input_list[rank]``."""
    pg = check_group(group)
    _check_list(scatter_object_output_list, "scatter_object_list: scatter_object_output_list")
    if len(scatter_object_output_list) < 1:
        raise ValueError("scatter_object_list: scatter_object_output_list must have at least one item")
    if pg.rank() == src and (not isinstance(scatter_object_input_list, list)
                             or len(scatter_object_input_list) != pg.size()):
        raise ValueError(f"scatter_object_list: on the source rank scatter_object_input_list must be a list of "
                         f"world_size ({pg.size()}) items")
    scatter_object_output_list[0] = pg.comm.scatter(scatter_object_input_list if pg.rank() == src else None,
                                                    root=src)

"""``minitorch-ln train --nproc N``: the main training job, data-parallel on N ranks through MPI.

The command re-runs itself under the mpich wheel's ``mpiexec`` (``python -m
minitorch_ln.apps.train_ranks ARGS``, one thread per rank), and each rank trains the same model:

- every rank draws the same global batch of ``--batch-size`` sequences from the same seeded stream
  and keeps its ``1/N`` slice (``--batch-size`` must divide by N), so the run sees the batches a
  one-process run sees; DistributedDataParallel averages the gradients, so each step is the
  one-process step on the whole batch (up to the order of float32 sums);
- the loss logged is the mean over ranks, and a stop request (Ctrl-C, SIGTERM) is agreed on by all
  ranks at the top of a step, so every rank stops after the same step;
- only rank 0 takes the run directory's lock and writes metrics, checkpoints (atomically, see
  :mod:`.checkpoint`), the sample and the plot; the checkpoint records the rank count, and resuming
  with another count is refused, naming the count to use (the split of the batch, and so the
  float32 sums, would differ: not the exact continuation a resume promises);
- a rank that fails aborts the whole job (:mod:`minitorch_ln.distributed.faults`).
"""

from __future__ import annotations

import os
import sys

ENV = "MINITORCH_LN_TRAIN_NPROC"

__all__ = ["ENV", "DataParallelRun", "Parallel", "launch_train", "parallel_run"]


class Parallel:
    """One process: every method leaves things as they are."""

    rank, world, writer = 0, 1, True

    def wrap(self, model, batch_size: int):
        return model

    def shard(self, t):
        return t

    def mean(self, value: float) -> float:
        return value

    def agree(self, flag) -> bool:
        return bool(flag)

    def check_resume(self, state: dict, out_dir: str) -> None:
        saved = state.get("world_size", 1)
        if saved != self.world:
            from .train_setup import ConfigError  # noqa: PLC0415

            now = f"--nproc {self.world}" if self.world > 1 else "one process"
            raise ConfigError(f"the run in {out_dir} was trained on {saved} rank(s) and is resumed on {now}: refused "
                              f"(another rank count splits each batch differently, so the continuation would not be "
                              f"exact); resume with {'--nproc ' + str(saved) if saved > 1 else 'no --nproc'}")


class DataParallelRun(Parallel):
    """This rank of an ``--nproc N`` run (the process group is made here)."""

    def __init__(self):
        from .. import distributed as dist  # noqa: PLC0415

        if not dist.is_initialized():
            dist.init_process_group("gloo")
        self.dist = dist
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.writer = self.rank == 0

    def wrap(self, model, batch_size: int):
        from .train_setup import ConfigError  # noqa: PLC0415

        if batch_size % self.world:
            raise ConfigError(f"--batch-size {batch_size} does not divide among --nproc {self.world} ranks: use a "
                              f"multiple of {self.world}")
        return self.dist.DistributedDataParallel(model)

    def shard(self, t):
        b = t.shape[0] // self.world
        return t[self.rank * b:(self.rank + 1) * b]  # (B/N, T)

    def _sum(self, value: float) -> float:
        from ..tensor import Tensor  # noqa: PLC0415

        t = Tensor([float(value)], dtype="float64")
        self.dist.all_reduce(t)
        return float(t.array[0])

    def mean(self, value: float) -> float:
        return self._sum(value) / self.world

    def agree(self, flag) -> bool:
        return self._sum(1.0 if flag else 0.0) > 0


_CURRENT = {}


def parallel_run() -> Parallel:
    """This process's part: :class:`DataParallelRun` under ``train --nproc``, else :class:`Parallel`."""
    if "run" not in _CURRENT:
        _CURRENT["run"] = DataParallelRun() if os.environ.get(ENV) else Parallel()
    return _CURRENT["run"]


def launch_train(nproc: int, argv) -> int:
    """Start ``nproc`` ranks of ``minitorch-ln train`` with ``argv`` (the options, ``--nproc`` left out)."""
    from .launch import find_mpiexec, launch_environment, run_job  # noqa: PLC0415

    if not isinstance(nproc, int) or nproc < 1:
        raise ValueError(f"--nproc must be a positive integer, got {nproc!r}")
    args, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--nproc":
            skip = True
        elif not a.startswith("--nproc="):
            args.append(a)
    if args[:1] == ["train"]:
        args = args[1:]
    env = launch_environment(nproc)
    env[ENV] = str(nproc)
    return run_job([find_mpiexec(), "-n", str(nproc), sys.executable, "-m", "minitorch_ln.apps.train_ranks", *args],
                   env)

"""One rank of ``minitorch-ln train --nproc N`` (``python -m minitorch_ln.apps.train_ranks ARGS``, under mpiexec).

It runs ``minitorch-ln train ARGS`` in this rank (see :mod:`.train_parallel`). Exit codes every rank
agrees on (0, 3 for a non-finite loss, 130 for a stop) end at a barrier, after rank 0's last
checkpoint; anything else (an exception, a user error) aborts the whole job, naming this rank.
"""

from __future__ import annotations

import sys
import traceback

from ..distributed.faults import abort_job, describe
from .cli import main
from .train import EXIT_INTERRUPTED, EXIT_NONFINITE, EXIT_OK
from .train_parallel import parallel_run

__all__ = ["rank_main"]


def rank_main(argv) -> int:
    """One rank: ``minitorch-ln train ARGS``; a failure other than a stop all ranks agreed on aborts the job."""
    run = parallel_run()
    try:
        code = main(["train", *argv])
    except BaseException as exc:  # noqa: BLE001 - any failure of one rank stops all of them
        traceback.print_exc()
        abort_job(run.rank, run.world, describe(exc), 130 if isinstance(exc, KeyboardInterrupt) else 1)
        raise
    if code not in (EXIT_OK, EXIT_NONFINITE, EXIT_INTERRUPTED):  # those are agreed by every rank
        abort_job(run.rank, run.world, f"minitorch-ln train exited with status {code}", code)
    run.dist.barrier()  # rank 0 has written its last checkpoint
    return code


if __name__ == "__main__":
    raise SystemExit(rank_main(sys.argv[1:]))

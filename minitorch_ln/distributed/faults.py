"""One failing rank stops the whole job, within seconds, naming itself and its error.

MPI has no timeout: a rank that raises while the others wait in a collective would leave them
waiting forever. So once a process group of two or more ranks exists, an uncaught exception (the
interpreter's ``sys.excepthook``, and ``minitorch-ln run``, which catches the script's exceptions
itself) prints the traceback, then one line ``[rank R/W] <error>: stopping all ranks``, and calls
``MPI_Abort``, after which ``mpiexec`` kills every rank and exits non-zero. A rank killed by a
signal is seen by ``mpiexec`` itself, which then kills the others. Ctrl-C reaches every rank (they
share the terminal's process group); each one aborts with status 130.
"""

from __future__ import annotations

import sys

_installed = {"previous": None}


def abort_job(rank: int, world_size: int, what: str, code: int = 1) -> None:
    """Print ``[rank R/W] what`` and abort every rank of the job with ``code`` (does not return)."""
    from ._mpi import load_mpi  # noqa: PLC0415

    sys.stdout.flush()
    print(f"[rank {rank}/{world_size}] {what}: stopping all {world_size} ranks (MPI_Abort)", file=sys.stderr,
          flush=True)
    load_mpi().COMM_WORLD.Abort(code)


def describe(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted (KeyboardInterrupt)"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def exit_code(exc: BaseException) -> int:
    return 130 if isinstance(exc, KeyboardInterrupt) else 1


def install_excepthook(rank: int, world_size: int) -> None:
    """Make an uncaught exception abort the job (after printing its traceback as usual)."""
    if _installed["previous"] is not None or world_size < 2:
        return
    previous = sys.excepthook

    def hook(tp, value, tb):
        previous(tp, value, tb)
        abort_job(rank, world_size, describe(value), exit_code(value))

    _installed["previous"] = previous
    sys.excepthook = hook


def uninstall_excepthook() -> None:
    if _installed["previous"] is not None:
        sys.excepthook = _installed["previous"]
        _installed["previous"] = None

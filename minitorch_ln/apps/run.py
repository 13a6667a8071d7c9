"""``minitorch-ln run SCRIPT.py [args...]``: run a PyTorch script on minitorch_ln, unmodified.

The script runs as ``python SCRIPT.py args...`` would run it: ``sys.argv`` is ``[SCRIPT.py, *args]``,
``sys.path[0]`` is the script's directory, ``__name__ == "__main__"``, and its exit status is the
command's (``sys.exit(3)`` gives 3; an uncaught exception prints its traceback, from the script's
own frames on, and gives 1; Ctrl-C gives 130). For its whole run the ``torch`` alias
(:mod:`minitorch_ln.interop.torch_alias`) is installed, so ``import torch`` and its submodules
resolve to minitorch_ln; afterwards the alias, ``sys.argv`` and ``sys.path`` are put back.

DataLoader worker processes are forked on Linux and inherit the alias; a ``spawn`` start method
would start workers without it.
"""

from __future__ import annotations

import os
import runpy
import sys
import traceback

from ..interop.torch_alias import torch_alias

EXIT_CANNOT_OPEN = 2  # what `python missing.py` exits with


def _exit_code(exc: SystemExit) -> int:
    """The status Python gives a ``SystemExit``: None is 0, an int is itself, anything else is printed and 1."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _print_script_traceback(script: str, exc: BaseException) -> None:
    """The traceback as Python prints it for the script: frames of runpy and of this module left out."""
    tb, target = exc.__traceback__, os.path.abspath(script)
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != target:
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb if tb is not None else exc.__traceback__)


def _stop_other_ranks(code: int, what: str) -> int:
    """A rank of a distributed job that fails aborts all of them (distributed/faults.py), else ``code``."""
    from .. import distributed  # noqa: PLC0415

    if code != 0 and distributed.is_initialized() and distributed.get_world_size() > 1:
        from ..distributed.faults import abort_job  # noqa: PLC0415

        abort_job(distributed.get_rank(), distributed.get_world_size(), what, code)
    return code


def run_script(script: str, args=(), *, prog: str = "minitorch-ln run") -> int:
    """Run ``script`` with ``args`` under the torch alias and return its exit status."""
    if not os.path.isfile(script):
        why = "is a directory" if os.path.isdir(script) else "No such file or directory"
        print(f"{prog}: error: can't open file {script!r}: {why}", file=sys.stderr)
        return EXIT_CANNOT_OPEN
    saved_argv, saved_path0 = sys.argv[:], sys.path[0] if sys.path else None
    sys.argv = [script, *args]
    script_dir = os.path.dirname(os.path.abspath(script))
    if sys.path:
        sys.path[0] = script_dir
    else:
        sys.path.insert(0, script_dir)
    try:
        with torch_alias():
            runpy.run_path(script, run_name="__main__")
        return 0
    except SystemExit as exc:
        return _stop_other_ranks(_exit_code(exc), f"exited with status {_exit_code(exc)}")
    except KeyboardInterrupt as exc:
        _print_script_traceback(script, exc)
        return _stop_other_ranks(130, "interrupted (KeyboardInterrupt)")
    except BaseException as exc:  # noqa: BLE001 - as Python: any uncaught exception is a traceback and 1
        _print_script_traceback(script, exc)
        return _stop_other_ranks(1, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
    finally:
        sys.argv = saved_argv
        if saved_path0 is not None:
            sys.path[0] = saved_path0
        sys.stdout.flush()


def main(argv=None) -> int:
    """``python -m minitorch_ln.run SCRIPT.py [args...]``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m minitorch_ln.run SCRIPT.py [args...]\n\n" + __doc__.split("\n\n")[1],
              file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    return run_script(argv[0], argv[1:], prog="python -m minitorch_ln.run")

"""The launcher: ``minitorch-ln run --nproc-per-node N script.py args`` starts N ranks through MPI.

It runs the mpich wheel's ``mpiexec`` (the one next to the interpreter, else the first on PATH)
as ``mpiexec -n N python -m minitorch_ln run script.py args``, with torchrun's environment:
``MASTER_ADDR``, ``MASTER_PORT``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``TORCHELASTIC_RUN_ID``,
and ``OMP_NUM_THREADS=1`` unless set (torchrun's default: one thread per rank). Each rank's own
``RANK`` and ``LOCAL_RANK`` come from MPI when it starts (:func:`set_rank_environment`), which is
also what makes ``mpiexec -n N minitorch-ln run script.py`` work without this launcher.

Its exit status is mpiexec's: 0 when every rank succeeded; when one raises, it aborts the job
(:mod:`minitorch_ln.distributed.faults`) and mpiexec exits non-zero. Ctrl-C reaches every rank
(they share the terminal's process group) and the launcher waits for them, then exits with 130.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import uuid

__all__ = ["find_mpiexec", "launch", "launch_command", "run_command", "run_job", "set_rank_environment"]

INSTALL_HINT = "pip install 'minitorch-ln[distributed]' (mpi4py and the mpich wheel, which ships mpiexec)"


def find_mpiexec() -> str:
    """The path of ``mpiexec``: beside the interpreter (the mpich wheel's), else on PATH; raises when none."""
    for folder in (os.path.dirname(sys.executable), sysconfig.get_path("scripts")):
        here = os.path.join(folder, "mpiexec")
        if os.path.isfile(here) and os.access(here, os.X_OK):
            return here
    found = shutil.which("mpiexec")
    if found is None:
        raise FileNotFoundError(f"no mpiexec found next to {sys.executable} or on PATH: {INSTALL_HINT}")
    return found


def launch_command(nproc: int, script: str, args=(), python: str = sys.executable) -> list:
    return [find_mpiexec(), "-n", str(nproc), python, "-m", "minitorch_ln", "run", script, *args]


def launch_environment(nproc: int, master_addr: str = "127.0.0.1", master_port: int = 29500) -> dict:
    env = dict(os.environ)
    env.update({"MASTER_ADDR": master_addr, "MASTER_PORT": str(master_port), "WORLD_SIZE": str(nproc),
                "LOCAL_WORLD_SIZE": str(nproc),
                "TORCHELASTIC_RUN_ID": env.get("TORCHELASTIC_RUN_ID", uuid.uuid4().hex)})
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("NUMBA_NUM_THREADS", "1")
    for key in ("RANK", "LOCAL_RANK"):  # each rank's own, set from MPI at its start
        env.pop(key, None)
    return env


def launch(nproc: int, script: str, args=(), master_addr: str = "127.0.0.1", master_port: int = 29500) -> int:
    """Run ``script`` on ``nproc`` ranks and return the job's exit status (see the module docstring)."""
    if not isinstance(nproc, int) or nproc < 1:
        raise ValueError(f"--nproc-per-node must be a positive integer, got {nproc!r}")
    if not os.path.isfile(script):
        raise FileNotFoundError(f"can't open file {script!r}: No such file or directory")
    return run_job(launch_command(nproc, script, args), launch_environment(nproc, master_addr, master_port))


def run_job(cmd, env) -> int:
    """Run the ``mpiexec`` command line ``cmd``; its status, or 130 after Ctrl-C (the ranks got it too)."""
    proc = subprocess.Popen(cmd, env=env)
    try:
        return proc.wait()
    except KeyboardInterrupt:  # the ranks got the same SIGINT; give them a moment, then stop them
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGTERM)
            proc.wait()
        return 130


def set_rank_environment() -> None:
    """Under ``mpiexec``, fill torchrun's ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ... from MPI's variables.

    Hydra (mpich) sets ``PMI_RANK``/``PMI_SIZE`` and ``MPI_LOCALRANKID``/``MPI_LOCALNRANKS``; Open MPI
    sets ``OMPI_COMM_WORLD_*``. Nothing changes outside mpiexec, or where a variable is already set.
    """
    env = os.environ
    rank = env.get("PMI_RANK", env.get("OMPI_COMM_WORLD_RANK"))
    size = env.get("PMI_SIZE", env.get("OMPI_COMM_WORLD_SIZE"))
    if rank is None or size is None:
        return
    local = env.get("MPI_LOCALRANKID", env.get("OMPI_COMM_WORLD_LOCAL_RANK", rank))
    local_size = env.get("MPI_LOCALNRANKS", env.get("OMPI_COMM_WORLD_LOCAL_SIZE", size))
    for key, value in (("RANK", rank), ("WORLD_SIZE", size), ("LOCAL_RANK", local), ("LOCAL_WORLD_SIZE", local_size),
                       ("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "29500")):
        env.setdefault(key, value)


def whole_lines() -> None:
    """Every rank writes whole lines: the ranks share mpiexec's output, and an unbuffered stream
    (``PYTHONUNBUFFERED``, ``python -u``) writes each piece of a ``print`` on its own, so that two ranks'
    lines came out mixed ("RANK RANK 1 ... 0 ..."). Line buffering hands each line to the pipe in one write."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(line_buffering=True, write_through=False)
        except (AttributeError, ValueError, OSError):  # not a TextIOWrapper (a test's capture): leave it
            pass


def run_command(script: str, args, nproc_per_node=None, cuda_as_cpu: bool = False) -> int:
    """``minitorch-ln run``: with ``nproc_per_node``, the launcher; else the script in this process (a rank
    of an MPI job when started by mpiexec: torchrun's variables come from MPI's).

    ``cuda_as_cpu`` (``--cuda-as-cpu``) makes every ``"cuda:N"`` the CPU here and in every rank (through
    the environment, :data:`minitorch_ln.backend.CUDA_AS_CPU_ENV`), said once on standard error."""
    if cuda_as_cpu:
        from .. import backend  # noqa: PLC0415

        os.environ[backend.CUDA_AS_CPU_ENV] = "1"
        backend.CUDA_AS_CPU = True
        if nproc_per_node is not None or os.environ.get("RANK", "0") == "0":
            print("minitorch-ln run: --cuda-as-cpu: 'cuda' and 'cuda:N' devices are the CPU in this run",
                  file=sys.stderr)
    if nproc_per_node is not None:
        try:
            return launch(nproc_per_node, script, args)
        except (ValueError, FileNotFoundError) as exc:
            print(f"minitorch-ln run: error: {exc}", file=sys.stderr)
            return 1
    from .run import run_script  # noqa: PLC0415

    set_rank_environment()
    if os.environ.get("WORLD_SIZE", "1") != "1":  # one of several ranks sharing mpiexec's output
        whole_lines()
    return run_script(script, args)

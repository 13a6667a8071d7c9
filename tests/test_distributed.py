"""torch.distributed on MPI, DistributedDataParallel and the launcher, on 2 ranks (tests/dist_scripts/).

Each multi-rank test starts a real job through ``minitorch-ln run --nproc-per-node 2`` (mpich's
mpiexec) in a subprocess with a timeout, so a hang fails the test instead of hanging CI. Skipped
without mpi4py (``pip install -e '.[distributed]'``; .ci/run installs it).
"""

import os
import re
import pathlib
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

pytest.importorskip("mpi4py")  # imports mpi4py only, not mpi4py.MPI: MPI is not started in this process

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "tests" / "dist_scripts"
TIMEOUT = 120


def _env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for key in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "PMI_RANK", "PMI_SIZE"):
        env.pop(key, None)
    env.update(extra)
    return env


def launch(script, *args, nproc=2, cwd=None, timeout=TIMEOUT):
    """Run ``minitorch-ln run --nproc-per-node nproc script args`` and return the CompletedProcess."""
    cmd = [sys.executable, "-m", "minitorch_ln", "run", "--nproc-per-node", str(nproc), str(script), *args]
    try:
        return subprocess.run(cmd, env=_env(), cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the {nproc}-rank job hung (killed after {timeout} s): {exc.stdout!r} {exc.stderr!r}")


def run_one(script, *args, cwd=None, **env):
    cmd = [sys.executable, "-m", "minitorch_ln", "run", str(script), *args]
    return subprocess.run(cmd, env=_env(**env), cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)


def test_every_collective_against_hand_worked_values():
    res = launch(SCRIPTS / "collectives.py")
    assert res.returncode == 0, res.stderr
    assert "COLLECTIVES OK rank 0" in res.stdout and "COLLECTIVES OK rank 1" in res.stdout


def test_ddp_broadcast_buckets_no_sync_and_unused_parameters():
    res = launch(SCRIPTS / "ddp_features.py")
    assert res.returncode == 0, res.stderr
    assert "DDP OK rank 0" in res.stdout and "DDP OK rank 1" in res.stdout


def _weights(prefix, rank=0):
    return np.load(f"{prefix}.rank{rank}.npy"), np.array(open(f"{prefix}.rank{rank}.txt").read().split(), float)


def test_two_ranks_give_the_weights_of_one_process_on_the_combined_batch(tmp_path):
    # a plain PyTorch DDP script (init_process_group, DDP, DistributedSampler, no_sync, all_reduce, barrier),
    # unchanged: 2 ranks against one process replaying the union of the ranks' micro-batches, float64
    res = launch(SCRIPTS / "ddp_train.py", "--out", "W", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    one = run_one(SCRIPTS / "ddp_train.py", "--world", "2", "--out", "R", cwd=tmp_path)
    assert one.returncode == 0, one.stderr
    (w0, loss0), (w1, loss1), (ref, loss_ref) = (_weights(tmp_path / "W", 0), _weights(tmp_path / "W", 1),
                                                 _weights(tmp_path / "R"))
    np.testing.assert_array_equal(w0, w1)  # the replicas never drift apart
    np.testing.assert_array_equal(loss0, loss1)  # the all-reduced loss is the same on both ranks
    np.testing.assert_allclose(w0, ref, rtol=0, atol=1e-9)
    np.testing.assert_allclose(loss0, loss_ref, rtol=0, atol=1e-9)
    assert not np.allclose(ref, np.load(tmp_path / "W.rank0.npy") + 1e-3)  # the comparison can fail


@pytest.mark.slow
def test_the_same_script_under_pytorch_ddp_gloo_gives_the_same_weights(tmp_path):
    torch = pytest.importorskip("torch")
    torchrun = pathlib.Path(sys.executable).with_name("torchrun")
    if not torchrun.exists():
        pytest.skip("torchrun not found next to the interpreter")
    ours = launch(SCRIPTS / "ddp_train.py", "--out", "W", cwd=tmp_path)
    assert ours.returncode == 0, ours.stderr
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    theirs = subprocess.run([str(torchrun), "--nproc-per-node", "2", str(SCRIPTS / "ddp_train.py"), "--out", "T"],
                            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert theirs.returncode == 0, theirs.stderr
    assert torch.__version__
    np.testing.assert_allclose(_weights(tmp_path / "W")[0], _weights(tmp_path / "T")[0], rtol=0, atol=1e-9)


# ------------------------------------------------------------------------------------------ faults

def _write(tmp_path, name, body):
    path = tmp_path / name
    path.write_text("import os, sys, time\nimport torch, torch.distributed as dist\ndist.init_process_group('gloo')\n"
                    "r = dist.get_rank()\n" + body)
    return path


def test_a_rank_that_raises_stops_every_rank_within_seconds_naming_itself(tmp_path):
    script = _write(tmp_path, "boom.py", "if r == 1:\n    raise ValueError('boom on purpose')\n"
                                         "dist.barrier()\nprint('rank 0 passed the barrier')\n")
    t0 = time.monotonic()
    res = launch(script, timeout=60)
    assert res.returncode != 0 and time.monotonic() - t0 < 30
    assert "[rank 1/2] ValueError: boom on purpose: stopping all 2 ranks" in res.stderr
    assert "passed the barrier" not in res.stdout


def test_a_rank_that_exits_non_zero_or_dies_stops_every_rank(tmp_path):
    for body, what in (("if r == 0:\n    sys.exit(3)\ndist.barrier()\n", "[rank 0/2] exited with status 3"),
                       ("if r == 1:\n    os.kill(os.getpid(), 9)\ndist.barrier()\n", "")):
        t0 = time.monotonic()
        res = launch(_write(tmp_path, "die.py", body), timeout=60)
        assert res.returncode != 0 and time.monotonic() - t0 < 30, res.stderr
        assert what in res.stderr


def _alive(pid) -> bool:
    """Running (a zombie waiting for its parent to reap it counts as stopped)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_ctrl_c_stops_every_rank(tmp_path):
    script = _write(tmp_path, "wait.py", "print('ready', r, os.getpid(), flush=True)\ntime.sleep(120)\n")
    cmd = [sys.executable, "-m", "minitorch_ln", "run", "--nproc-per-node", "2", str(script)]
    proc = subprocess.Popen(cmd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # its own process group, as a terminal's job
    try:
        text, pids = "", []
        while len(pids) < 2 and proc.poll() is None:  # the ranks' lines may interleave in one pipe
            text += proc.stdout.readline()
            pids = [int(n) for n in re.findall(r"\d+", text) if int(n) > 1]  # ranks are 0 and 1; pids are > 1
        assert text.count("ready") == 2 and len(pids) == 2, (text, proc.stderr.read() if proc.poll() else "")
        t0 = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: SIGINT to the whole foreground group
        code = proc.wait(timeout=30)
        assert code != 0 and time.monotonic() - t0 < 30
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(pid) for pid in pids), "a rank outlived Ctrl-C"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


# ------------------------------------------------------------------------------------------ start-up

def test_mpiexec_directly_gives_torchruns_environment(tmp_path):
    from minitorch_ln.apps.launch import find_mpiexec

    script = tmp_path / "env.py"
    script.write_text("import os\nprint('ENV', *(os.environ[k] for k in ('RANK', 'LOCAL_RANK', 'WORLD_SIZE', "
                      "'LOCAL_WORLD_SIZE', 'MASTER_ADDR')), flush=True)\n")
    res = subprocess.run([find_mpiexec(), "-n", "2", sys.executable, "-m", "minitorch_ln", "run", str(script)],
                         env=_env(), capture_output=True, text=True, timeout=TIMEOUT)
    assert res.returncode == 0, res.stderr
    lines = sorted(line for line in res.stdout.splitlines() if line.startswith("ENV"))
    assert lines == ["ENV 0 0 2 2 127.0.0.1", "ENV 1 1 2 2 127.0.0.1"]


def test_a_process_started_alone_with_world_size_2_is_told_how_to_start_the_ranks(tmp_path):
    script = tmp_path / "alone.py"
    script.write_text("import torch.distributed as dist\ndist.init_process_group('gloo')\n")
    res = run_one(script, RANK="0", WORLD_SIZE="2")
    assert res.returncode == 1
    assert "WORLD_SIZE (environment) is 2, but MPI started this process as rank 0 of 1" in res.stderr
    assert "--nproc-per-node" in res.stderr


def test_one_rank_alone_works(tmp_path):
    script = tmp_path / "one.py"
    script.write_text("import torch, torch.distributed as dist\ndist.init_process_group()\nt = torch.ones(2)\n"
                      "dist.all_reduce(t)\nprint('ONE', dist.get_rank(), dist.get_world_size(), t.tolist())\n")
    res = run_one(script)
    assert res.returncode == 0, res.stderr
    assert "ONE 0 1 [1.0, 1.0]" in res.stdout


def test_launcher_bad_arguments_are_one_line_errors(tmp_path, capsys):
    from minitorch_ln.apps.cli import main

    assert main(["run", "--nproc-per-node", "0", str(SCRIPTS / "collectives.py")]) == 1
    assert "--nproc-per-node must be a positive integer, got 0" in capsys.readouterr().err
    assert main(["run", "--nproc-per-node", "2", str(tmp_path / "missing.py")]) == 1
    assert "can't open file" in capsys.readouterr().err


def test_plain_python_under_mpiexec_aborts_through_the_excepthook(tmp_path):
    # no `minitorch-ln run`: init_process_group installs sys.excepthook, which aborts the job
    from minitorch_ln.apps.launch import find_mpiexec

    script = tmp_path / "plain.py"
    script.write_text("import minitorch_ln.distributed as dist\ndist.init_process_group()\n"
                      "if dist.get_rank() == 0:\n    raise KeyError('plain failure')\ndist.barrier()\n")
    t0 = time.monotonic()
    res = subprocess.run([find_mpiexec(), "-n", "2", sys.executable, str(script)], env=_env(), capture_output=True,
                         text=True, timeout=60)
    assert res.returncode != 0 and time.monotonic() - t0 < 30
    assert "[rank 0/2] KeyError: 'plain failure': stopping all 2 ranks" in res.stderr


def test_ranks_print_whole_lines_even_unbuffered(tmp_path):
    # (2000 lines x 2 ranks) with PYTHONUNBUFFERED (set on many machines, and by `python -u`) each piece of a print was its own write,
    # so two ranks' lines came out mixed ("RANKRANK 1 ... 0 ..."); the ranks now write whole lines
    script = tmp_path / "lines.py"
    script.write_text("import os\nr = os.environ['RANK']\nfor i in range(2000):\n"
                      "    print('LINE', r, i, *range(20), 'END')\n")
    cmd = [sys.executable, "-m", "minitorch_ln", "run", "--nproc-per-node", "2", str(script)]
    res = subprocess.run(cmd, env=_env(PYTHONUNBUFFERED="1"), capture_output=True, text=True, timeout=TIMEOUT)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    want = " ".join(map(str, range(20)))
    assert len(lines) == 4000
    assert all(re.fullmatch(rf"LINE [01] \d+ {want} END", line) for line in lines), lines[:5]

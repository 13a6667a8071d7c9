"""``minitorch-ln train --nproc 2`` (apps/train_parallel.py): the data-parallel run equals the one-process
run, rank 0 writes, Ctrl-C stops both ranks with a checkpoint, a resume with another rank count is
refused. Each run is a subprocess with a timeout (a hang fails). Skipped without mpi4py."""

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

pytest.importorskip("mpi4py")

ROOT = pathlib.Path(__file__).resolve().parents[1]
OPTS = ["--preset", "tiny", "--block-size", "16", "--batch-size", "8", "--eval-batches", "2", "--no-progress",
        "--sample-chars", "0"]


def _env():
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "PMI_RANK", "PMI_SIZE"):
        env.pop(key, None)
    return env


@pytest.fixture(scope="module")
def text(tmp_path_factory):
    rng = np.random.default_rng(0)
    words = ["the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "far"]
    path = tmp_path_factory.mktemp("corpus") / "text.txt"
    path.write_text(" ".join(rng.choice(words, 4000)) + "\n")
    return path


def train(*args, timeout=300):
    cmd = [sys.executable, "-m", "minitorch_ln", "train", *args]
    try:
        return subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"train hung (killed after {timeout} s): {exc.stderr!r}")


def _losses(out):
    return [r["loss"] for r in map(json.loads, open(out / "metrics.jsonl")) if "loss" in r]


def test_two_ranks_train_as_one_process_and_rank_0_writes(tmp_path, text):
    one = train(*OPTS, "--text", str(text), "--steps", "4", "--out", str(tmp_path / "one"))
    assert one.returncode == 0, one.stderr
    two = train("--nproc", "2", *OPTS, "--text", str(text), "--steps", "4", "--out", str(tmp_path / "two"))
    assert two.returncode == 0, two.stderr
    # the same batches, the gradient averaged over the two halves: the one-process losses, up to float32 sums
    np.testing.assert_allclose(_losses(tmp_path / "two"), _losses(tmp_path / "one"), rtol=1e-5)
    assert len(_losses(tmp_path / "two")) == 4  # one writer: each step logged once
    assert sorted(p.name for p in (tmp_path / "two").iterdir() if p.name.startswith("ckpt-")) == ["ckpt-00000004"]
    assert two.stdout.count("model:  GPT preset") == 1  # only rank 0 reports

    # a resume on one process is refused, naming the rank count; on 2 ranks it continues
    refused = train(*OPTS, "--text", str(text), "--steps", "6", "--out", str(tmp_path / "two"), "--resume")
    assert refused.returncode == 1
    assert "trained on 2 rank(s) and is resumed on one process: refused" in refused.stderr
    assert "resume with --nproc 2" in refused.stderr
    more = train("--nproc", "2", *OPTS, "--text", str(text), "--steps", "6", "--out", str(tmp_path / "two"),
                 "--resume")
    assert more.returncode == 0, more.stderr
    assert len(_losses(tmp_path / "two")) == 6


def test_bad_batch_split_stops_every_rank(tmp_path, text):
    res = train("--nproc", "2", *OPTS[:4], "--batch-size", "7", "--text", str(text), "--steps", "2",
                "--out", str(tmp_path / "odd"), timeout=120)
    assert res.returncode != 0
    assert "--batch-size 7 does not divide among --nproc 2 ranks" in res.stderr


def test_ctrl_c_stops_both_ranks_after_the_same_step_with_a_checkpoint(tmp_path, text):
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "minitorch_ln", "train", "--nproc", "2", *OPTS, "--text", str(text),
           "--steps", "100000", "--eval-interval", "100000", "--out", str(out)]
    proc = subprocess.Popen(cmd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while not (out / "metrics.jsonl").exists() or len(_losses(out)) < 2:
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read() if proc.poll() else ""
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the whole foreground group
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    step = len(_losses(out))
    assert (out / f"ckpt-{step:08d}").is_dir() and (out / "latest").read_text().strip().endswith(f"{step:08d}")

"""Data-parallel scaling: one training step of the GPT presets on 1 process and on 2 ranks, minitorch_ln's
DistributedDataParallel (MPI) beside PyTorch's (gloo), one thread per process.

Strong scaling: the global batch (tiny 32 x 64 tokens, small 16 x 256) is the same on 1 and 2 ranks,
each rank taking its half, so the efficiency is ``t(1 process) / (2 t(2 ranks))``: 100% when two
ranks take half the time. A step is zero_grad, forward with the loss, backward (with the bucketed
gradient reduction) and AdamW. The median step after ``--warmup`` steps is reported.

It also measures how much of the gradient reduction the backward hides. On 2 ranks, every other
timed step runs under ``no_sync()`` (the same compute, no communication); the exposed
communication is the median synchronised step minus the median ``no_sync()`` step, and the
reduction alone is one blocking all-reduce of all gradients (minitorch_ln: its buckets, best of
10): ``hidden = 1 - exposed / reduction``. On a machine shared with other work, the two ranks'
skew counts as exposed communication, so this is a lower bound.

    python benchmarks/bench_ddp.py [--preset tiny|small|all] [--steps 20] [--no-torch] [--bucket-cap-mb MB]

(the driver; it starts the ranks itself: ``minitorch-ln run --nproc-per-node 2`` and ``torchrun``).
Needs ``pip install -e '.[distributed]'``; the PyTorch column needs torch.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

SETUPS = {"tiny": 32, "small": 16}  # global batch (sequences of the preset's context length)
VOCAB = 65
THREADS = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS",
                             "MINITORCH_LN_NUM_THREADS")}


def worker(framework: str, preset: str, steps: int, warmup: int, cap) -> None:
    import numpy as np  # noqa: PLC0415

    import minitorch_ln as mt  # noqa: PLC0415
    from minitorch_ln.nn import GPT, GPTConfig  # noqa: PLC0415

    ddp = "RANK" in os.environ
    rank, world = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
    mt.manual_seed(0)
    config = GPTConfig.preset(preset, vocab_size=VOCAB)
    B, T = SETUPS[preset], config.block_size
    b = B // world
    rng = np.random.default_rng(0)
    mine = slice(rank * b, (rank + 1) * b)  # this rank's sequences of the global batch
    idx, tgt = rng.integers(0, VOCAB, (B, T))[mine], rng.integers(0, VOCAB, (B, T))[mine]
    model = GPT(config)
    if framework == "mt":
        import minitorch_ln.distributed as dist  # noqa: PLC0415
        from minitorch_ln.optim import AdamW  # noqa: PLC0415

        if ddp:
            dist.init_process_group("gloo")
            net = dist.DistributedDataParallel(model, bucket_cap_mb=cap)
        else:
            net = model
        x, y = mt.tensor(idx), mt.tensor(tgt)
        opt = AdamW(model.parameters(), lr=1e-3)
    else:
        import torch  # noqa: PLC0415

        from minitorch_ln.interop.torch_models import torch_twin  # noqa: PLC0415

        torch.set_num_threads(1)
        twin = torch_twin(model)
        if ddp:
            torch.distributed.init_process_group("gloo")
            net = torch.nn.parallel.DistributedDataParallel(twin, bucket_cap_mb=cap)
        else:
            net = twin
        x, y = torch.from_numpy(idx), torch.from_numpy(tgt)
        opt = torch.optim.AdamW(twin.parameters(), lr=1e-3, foreach=False)
    import contextlib  # noqa: PLC0415

    times, local = [], []
    for i in range(warmup + 2 * steps):  # with ddp, every other step under no_sync(): the compute alone
        quiet = ddp and i >= warmup and i % 2 == 1
        t0 = time.perf_counter()
        opt.zero_grad()
        with net.no_sync() if quiet else contextlib.nullcontext():
            _, loss = net(x, y)
            loss.backward()
        opt.step()
        if i >= warmup:
            (local if quiet else times).append(time.perf_counter() - t0)
        if not ddp and i >= warmup + steps:
            break
    out = {"framework": framework, "preset": preset, "world": world, "step_s": statistics.median(times),
           "loss": float(loss.item())}
    if ddp:  # exposed communication: a synchronised step minus a no_sync() one; against the reduction alone
        blocking = _blocking_reduction_s(framework, net, [p for p in net.parameters() if p.requires_grad])
        exposed = max(statistics.median(times) - statistics.median(local), 0.0)
        out.update(local_step_s=statistics.median(local), blocking_reduce_s=blocking, exposed_s=exposed,
                   hidden=1 - exposed / blocking)
        if framework == "mt":  # the share of the gradient bytes whose reduction finished inside the backward
            st = net.reducer.stats
            out.update(buckets=len(net.reducer.buckets), hidden_bytes=st["hidden_bytes"] / st["reduce_bytes"])
    if rank == 0:
        print("RESULT " + json.dumps(out), flush=True)


def _blocking_reduction_s(framework, net, params, repeats: int = 10) -> float:
    """The best time of one blocking all-reduce of all gradients (one flat buffer per bucket for minitorch_ln)."""
    best = float("inf")
    if framework == "mt":
        from minitorch_ln.distributed.ddp import time_blocking_reduction  # noqa: PLC0415

        return time_blocking_reduction(net, repeats)
    import torch  # noqa: PLC0415

    flat = torch.cat([p.detach().reshape(-1) for p in params])
    for _ in range(repeats):
        torch.distributed.barrier()
        t0 = time.perf_counter()
        torch.distributed.all_reduce(flat)
        best = min(best, time.perf_counter() - t0)
    return best


def _run(cmd, env) -> dict:
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    lines = [line for line in res.stdout.splitlines() if line.startswith("RESULT ")]
    if res.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(cmd)} failed ({res.returncode}):\n{res.stderr[-3000:]}")
    return json.loads(lines[0][7:])


def driver(presets, steps: int, warmup: int, with_torch: bool, cap) -> None:
    me = os.path.abspath(__file__)
    env = dict(os.environ, **THREADS)
    env.pop("RANK", None)
    args = ["--worker", "--steps", str(steps), "--warmup", str(warmup)]
    args += [] if cap is None else ["--bucket-cap-mb", str(cap)]
    torchrun = shutil.which("torchrun") or os.path.join(os.path.dirname(sys.executable), "torchrun")
    print(f"{'preset':6} {'framework':10} {'1 process':>10} {'2 ranks':>9} {'speed-up':>9} {'efficiency':>10}  "
          f"reduction hidden behind the backward")
    for preset in presets:
        for fw in ["mt"] + (["torch"] if with_torch else []):
            one = _run([sys.executable, me, *args, "--framework", fw, "--preset", preset], env)
            if fw == "mt":
                two = _run([sys.executable, "-m", "minitorch_ln", "run", "--nproc-per-node", "2", me, *args,
                            "--framework", fw, "--preset", preset], env)
            else:
                two = _run([torchrun, "--nproc-per-node", "2", me, *args, "--framework", fw, "--preset", preset], env)
            speedup = one["step_s"] / two["step_s"]
            by_bytes = f"; {two['hidden_bytes']:.0%} of the bytes reduced inside the backward, {two['buckets']} " \
                f"buckets" if "hidden_bytes" in two else ""
            hidden = (f"{two['hidden']:.0%} (reduction alone {two['blocking_reduce_s'] * 1e3:.1f} ms; a step "
                      f"{two['step_s'] * 1e3:.1f} ms synchronised, {two['local_step_s'] * 1e3:.1f} ms under no_sync{by_bytes})")
            name = "minitorch" if fw == "mt" else "PyTorch"
            print(f"{preset:6} {name:10} {one['step_s'] * 1e3:8.1f}ms {two['step_s'] * 1e3:7.1f}ms "
                  f"{speedup:8.2f}x {speedup / 2:9.0%}  {hidden}", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--preset", default="all", choices=["tiny", "small", "all"])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--bucket-cap-mb", type=float, default=None,
                   help="DDP's bucket_cap_mb (default 25, the first 1 MiB)")
    p.add_argument("--framework", default="mt", choices=["mt", "torch"])
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    presets = list(SETUPS) if a.preset == "all" else [a.preset]
    if a.worker:
        worker(a.framework, presets[0], a.steps, a.warmup, a.bucket_cap_mb)
    else:
        driver(presets, a.steps, a.warmup, not a.no_torch, a.bucket_cap_mb)


if __name__ == "__main__":
    main()

"""nanoGPT's CPU recipe: ``python train.py`` (PyTorch) against ``python -m minitorch_ln run train.py`` (issue 26).

Runs karpathy/nanoGPT's ``train.py`` with the issue's flags (``config/train_shakespeare_char.py --device=cpu
--compile=False --eval_iters=20 --log_interval=1 --block_size=64 --batch_size=12 --n_layer=4 --n_head=4
--n_embd=128 --max_iters=N --lr_decay_iters=N --dropout=0.0``) once under PyTorch and once under minitorch_ln,
alternated for ``--rounds`` rounds, each in its own process with the environment it was given (threads,
``OPENBLAS_CORETYPE``: nothing is overridden). Prints each run's wall time and final evaluation line, every
evaluation line of both runs side by side (they must agree: same seed, same data), and the median ratio.

The clone needs ``data/shakespeare_char/{train,val}.bin`` and ``meta.pkl``: nanoGPT's ``prepare.py`` makes
them from ``input.txt`` (it downloads that file; karpathy/ng-video-lecture ships the same tiny Shakespeare).

    python benchmarks/bench_nanogpt_recipe.py --nanogpt DIR [--iters 2000] [--rounds 2] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

EVAL_LINE = re.compile(r"^step \d+: train loss [\d.]+, val loss [\d.]+$")


def recipe_flags(iters: int, out_dir: str) -> list[str]:
    return ["config/train_shakespeare_char.py", "--device=cpu", "--compile=False", "--eval_iters=20",
            "--log_interval=1", "--block_size=64", "--batch_size=12", "--n_layer=4", "--n_head=4",
            "--n_embd=128", f"--max_iters={iters}", f"--lr_decay_iters={iters}", "--dropout=0.0",
            f"--out_dir={out_dir}", "--always_save_checkpoint=False"]


def run_once(which: str, nanogpt: pathlib.Path, iters: int) -> tuple[float, list[str]]:
    """Wall seconds and the evaluation lines of one run of train.py (``which``: "torch" or "minitorch_ln")."""
    with tempfile.TemporaryDirectory() as out_dir:
        cmd = [sys.executable] + (["-m", "minitorch_ln", "run"] if which == "minitorch_ln" else [])
        cmd += ["train.py"] + recipe_flags(iters, out_dir)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=nanogpt, capture_output=True, text=True, env=dict(os.environ))
        wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{which} run failed (exit {proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return wall, [line for line in proc.stdout.splitlines() if EVAL_LINE.match(line.strip())]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nanogpt", required=True, help="a karpathy/nanoGPT clone with shakespeare_char prepared")
    p.add_argument("--iters", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=1, help="alternated pairs of runs (PyTorch first in each)")
    p.add_argument("--out", default=None, help="also write the report to this file")
    args = p.parse_args(argv)
    nanogpt = pathlib.Path(args.nanogpt).resolve()
    if not (nanogpt / "data/shakespeare_char/train.bin").exists():
        raise SystemExit(f"{nanogpt}/data/shakespeare_char/train.bin not found: run nanoGPT's prepare.py first")
    walls = {"torch": [], "minitorch_ln": []}
    evals = {}
    report = [f"nanoGPT CPU recipe, {args.iters} iterations, {args.rounds} round(s); "
              f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}"]
    for r in range(args.rounds):
        for which in ("torch", "minitorch_ln"):
            wall, lines = run_once(which, nanogpt, args.iters)
            walls[which].append(wall)
            evals.setdefault(which, lines)
            report.append(f"round {r + 1} {which:12s} wall {wall:7.1f} s; {lines[-1] if lines else '(no eval line)'}")
            print(report[-1], flush=True)
        report.append(f"round {r + 1} ratio minitorch_ln / torch: {walls['minitorch_ln'][-1] / walls['torch'][-1]:.3f}")
        print(report[-1], flush=True)
    med = {k: statistics.median(v) for k, v in walls.items()}
    same = evals["torch"] == evals["minitorch_ln"]
    report.append(f"median wall: torch {med['torch']:.1f} s, minitorch_ln {med['minitorch_ln']:.1f} s, "
                  f"ratio {med['minitorch_ln'] / med['torch']:.3f}; evaluation lines "
                  f"{'all equal' if same else 'DIFFER'}")
    report.append("--- evaluation lines: torch | minitorch_ln")
    for a, b in zip(evals["torch"], evals["minitorch_ln"]):
        report.append(f"{a} | {b}{'' if a == b else '   <- differs'}")
    print("\n".join(report[-(len(evals['torch']) + 2):]))
    if args.out:
        pathlib.Path(args.out).write_text("\n".join(report) + "\n")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())

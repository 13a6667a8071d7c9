"""Run the public programs people learn PyTorch from, on minitorch_ln and on PyTorch, side by side.

    python scripts/run_lectures.py --nn-zero-to-hero DIR --makemore DIR --ng-video-lecture DIR [--out DIR]

Each DIR is a clone (or a bare git directory, as `git clone --bare` or a mirror gives) of
karpathy/nn-zero-to-hero, karpathy/makemore and karpathy/ng-video-lecture. The makemore lecture
notebooks (parts 1-5) are converted to scripts with jupytext (`pip install jupytext`) and run cell
by cell as Jupyter runs them (CELL_RUNNER: the value of a cell's last expression is printed, and a
cell that raises prints its error and the next cell runs). Only iteration counts are shrunk (the
table SHRINK below lists every change). Each program then runs twice in its own process: with
``python -m minitorch_ln.run`` (the ``torch`` alias, i.e. ``minitorch-ln run``) and with ``python``
and the real PyTorch (makemore.py's SummaryWriter needs ``pip install tensorboard`` there). The
script prints each program's outcome, its time both ways and its output lines side by side,
marking the lines that differ (``|``).

Numbers that come from random draws (weights from ``torch.Generator().manual_seed(...)``,
minibatches, samples) differ between the two until minitorch_ln reproduces PyTorch's CPU random
streams (issue 25, item 1); computations from the same inputs agree to float32 rounding (every
``cmp`` line of lecture 4, "backprop ninja", for one).

Needs the network only to clone the repositories first; nothing here runs in CI.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent

LECTURES = ["makemore_part1_bigrams", "makemore_part2_mlp", "makemore_part3_bn", "makemore_part4_backprop",
            "makemore_part5_cnn1"]

# program -> [(regex, replacement)]: only iteration counts shrink; every program keeps its code otherwise.
SHRINK = {
    "makemore_part2_mlp": [(r"range\(200000\)", "range(300)")],
    # a multiple of 1000: the lectures plot the loss averaged over rows of 1000 steps
    "makemore_part3_bn": [(r"max_steps = 200000", "max_steps = 1000")],
    "makemore_part4_backprop": [(r"max_steps = 200000", "max_steps = 1000")],
    "makemore_part5_cnn1": [(r"max_steps = 200000", "max_steps = 1000")],
    "bigram": [(r"max_iters = 3000", "max_iters = 300"), (r"eval_iters = 200", "eval_iters = 20")],
    "gpt": [(r"max_iters = 5000", "max_iters = 3"), (r"eval_iters = 200", "eval_iters = 2"),
            (r"max_new_tokens=500", "max_new_tokens=20"), (r"max_new_tokens=10000", "max_new_tokens=20")],
}
MAKEMORE_ARGS = ["-i", "names.txt", "-o", "out", "--max-steps", "30", "--device", "cpu", "--num-workers", "0"]

# Runs a notebook converted to py:percent as Jupyter would run it top to bottom: cell by cell in one
# namespace, showing the value of a cell's last expression, and going on after a cell that raises (a
# notebook's cells were not always run in their order: lecture 1 reads `P` a cell before defining it).
# It runs as the program itself (`minitorch-ln run cells.py LECTURE.py`), so `import torch` inside a
# cell is the alias there and PyTorch under plain `python`.
CELL_RUNNER = """\
import ast, re, sys, traceback
import matplotlib
matplotlib.use("Agg")
source = open(sys.argv[1]).read()
namespace = {"__name__": "__main__"}
for n, cell in enumerate(re.split(r"^# %%.*$", source, flags=re.M)):
    try:
        tree = ast.parse(cell)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, f"cell {n}", "exec"), namespace)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), f"cell {n}", "eval"), namespace)
            if value is not None:
                print(re.sub(r" at 0x[0-9a-f]+", "", repr(value)))
    except Exception as exc:
        print(f"[cell {n}] {type(exc).__name__}: {exc}".splitlines()[0])
sys.stdout.flush()
"""


def _read(repo: pathlib.Path, path: str) -> bytes:
    """A file of a clone, or of a bare git directory (``git show HEAD:path``)."""
    if (repo / path).is_file():
        return (repo / path).read_bytes()
    return subprocess.run(["git", "--git-dir", str(repo), "show", f"HEAD:{path}"], check=True,
                          capture_output=True).stdout


def _shrink(name: str, source: str) -> str:
    for pattern, repl in SHRINK.get(name, []):
        source, n = re.subn(pattern, repl, source)
        if n == 0:
            raise SystemExit(f"{name}: the iteration count {pattern!r} is not in the program any more")
    return source


def prepare(args, work: pathlib.Path) -> list:
    """Write the programs into ``work`` and return ``[(name, [argv after the interpreter])]``."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "names.txt").write_bytes(_read(args.makemore, "names.txt"))
    (work / "input.txt").write_bytes(_read(args.ng_video_lecture, "input.txt"))
    programs = []
    if args.nn_zero_to_hero:
        import jupytext  # noqa: PLC0415 - only this step needs it

        for name in LECTURES:
            nb = jupytext.reads(_read(args.nn_zero_to_hero, f"lectures/makemore/{name}.ipynb").decode(), fmt="ipynb")
            source = jupytext.writes(nb, fmt="py:percent")
            (work / f"{name}.py").write_text(_shrink(name, source))
            programs.append((name, ["cells.py", f"{name}.py"]))
        (work / "cells.py").write_text(CELL_RUNNER)
    if args.makemore:
        (work / "makemore.py").write_bytes(_read(args.makemore, "makemore.py"))
        programs.append(("makemore", ["makemore.py", *MAKEMORE_ARGS]))
    if args.ng_video_lecture:
        for name in ("bigram", "gpt"):
            (work / f"{name}.py").write_text(_shrink(name, _read(args.ng_video_lecture, f"{name}.py").decode()))
            programs.append((name, [f"{name}.py"]))
    return programs


def run(argv: list, cwd: pathlib.Path, alias: bool, timeout: float) -> tuple:
    """(exit status, output lines, seconds) of one program, on minitorch_ln (alias) or PyTorch."""
    cmd = [sys.executable, *(["-m", "minitorch_ln.run"] if alias else []), *argv]
    env = dict(os.environ, MPLBACKEND="Agg")
    if alias:
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
        rc, out = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out = "timeout", (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
    return rc, out.splitlines(), time.perf_counter() - t0


def side_by_side(left: list, right: list, width: int, max_lines: int) -> list:
    rows = []
    for i in range(max(len(left), len(right))):
        a = left[i] if i < len(left) else ""
        b = right[i] if i < len(right) else ""
        mark = " " if a == b else "|"
        rows.append(f"{a[:width]:<{width}} {mark} {b[:width]}")
    if len(rows) > max_lines:
        rows = rows[: max_lines // 2] + [f"... {len(rows) - max_lines} lines ..."] + rows[-max_lines // 2:]
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nn-zero-to-hero", type=pathlib.Path, help="karpathy/nn-zero-to-hero (clone or git dir)")
    p.add_argument("--makemore", type=pathlib.Path, required=True, help="karpathy/makemore (names.txt comes from it)")
    p.add_argument("--ng-video-lecture", type=pathlib.Path, required=True, help="karpathy/ng-video-lecture")
    p.add_argument("--out", type=pathlib.Path, default=pathlib.Path("runs/lectures"), help="work directory")
    p.add_argument("--only", nargs="*", help="run only these programs (e.g. makemore_part4_backprop gpt)")
    p.add_argument("--timeout", type=float, default=1800, help="seconds per run (default 1800)")
    p.add_argument("--width", type=int, default=70, help="column width (default 70)")
    p.add_argument("--max-lines", type=int, default=80, help="output lines shown per program (default 80)")
    args = p.parse_args(argv)
    programs = prepare(args, args.out.resolve())
    summary = []
    for name, prog_argv in programs:
        if args.only and name not in args.only:
            continue
        rc_m, out_m, t_m = run(prog_argv, args.out.resolve(), True, args.timeout)
        rc_t, out_t, t_t = run(prog_argv, args.out.resolve(), False, args.timeout)
        same = sum(a == b for a, b in zip(out_m, out_t))
        print(f"\n=== {name}: minitorch_ln exit {rc_m} in {t_m:.1f} s | PyTorch exit {rc_t} in {t_t:.1f} s; "
              f"{same} of {max(len(out_m), len(out_t))} lines equal")
        print(f"{'minitorch-ln run':<{args.width}}   python (PyTorch)")
        print("\n".join(side_by_side(out_m, out_t, args.width, args.max_lines)))
        summary.append((name, rc_m, rc_t, t_m, t_t))
    print("\nprogram                     minitorch_ln  PyTorch   time (s) minitorch_ln / PyTorch")
    for name, rc_m, rc_t, t_m, t_t in summary:
        print(f"{name:<28}{'ok' if rc_m == 0 else f'exit {rc_m}':<14}{'ok' if rc_t == 0 else f'exit {rc_t}':<10}"
              f"{t_m:8.1f} / {t_t:.1f}")
    return 0 if all(r[1] == 0 for r in summary) else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""README's example figures, taken from one run of the examples, so that they cannot drift by hand.

    python scripts/readme_figures.py            # run the examples (about a minute on 2 CPU cores),
                                                # record their output, write the figures into README.md
    python scripts/readme_figures.py --check    # README.md against the record: exit 1 if they differ
    python scripts/readme_figures.py --verify   # run the examples again: exit 1 if README.md is stale
    python scripts/readme_figures.py --fast     # quick --fast runs, figures printed, nothing written

Each figure in README.md stands between two markers, ``<!-- fig:NAME -->7.97<!-- /fig -->``; NAME
is a key of :data:`FIGURES`, a regular expression over one example's printed output. The outputs
of the run the figures come from are kept in ``docs/figures/readme_figures.txt`` (the record), and
``tests/test_apps_faults.py`` checks that README.md shows exactly the record's figures and that the
expressions still find their figures in what the examples print today. The figures are those of
one machine: the examples are seeded, but training amplifies differences in the last bits of
floating-point sums, so another CPU or BLAS can print slightly different numbers.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
RECORD = os.path.join(ROOT, "docs", "figures", "readme_figures.txt")
EXAMPLES = ("covariate_shift", "pre_ln_vs_post_ln")

# NAME: (example, regular expression whose group 1 is the figure, as printed)
FIGURES = {
    "covariate_shift.var_drift_without": ("covariate_shift", r"^without LayerNorm:.*?largest variance drift: (\S+);"),
    "covariate_shift.var_drift_with": ("covariate_shift", r"^with LayerNorm:.*?largest variance drift: (\S+);"),
    "pre_ln.post_6": ("pre_ln_vs_post_ln", r"^ *6 layers: Post-LN (\S+) "),
    "pre_ln.post_12": ("pre_ln_vs_post_ln", r"^ *12 layers: Post-LN (\S+) "),
    "pre_ln.pre_6": ("pre_ln_vs_post_ln", r"^ *6 layers: Post-LN [^\n]*, Pre-LN (\S+) "),
    "pre_ln.pre_12": ("pre_ln_vs_post_ln", r"^ *12 layers: Post-LN [^\n]*, Pre-LN (\S+) "),
    "pre_ln.post_no_warmup": ("pre_ln_vs_post_ln", r"Post-LN, no warm-up +held-out loss (\S+)"),
    "pre_ln.post_warmup": ("pre_ln_vs_post_ln", r"Post-LN, with warm-up +held-out loss (\S+)"),
}
MARKER = re.compile(r"<!-- fig:([\w.]+) -->(.*?)<!-- /fig -->")
_SECTION = re.compile(r"^### examples/(\w+)\.py$", re.M)


def run_example(name: str, fast: bool = False) -> str:
    """The example's standard output, without its last line naming the figure file (a temporary path)."""
    env = dict(os.environ, MPLBACKEND="Agg", OPENBLAS_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([ROOT, env.get("PYTHONPATH", "")])
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, os.path.join(ROOT, "examples", f"{name}.py"), "--figure", os.path.join(tmp, "f.png")]
        proc = subprocess.run(cmd + (["--fast"] if fast else []), capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"examples/{name}.py failed:\n{proc.stderr[-3000:]}")
    return "".join(line for line in proc.stdout.splitlines(True) if not line.startswith("figure: "))


def figures(outputs: dict) -> dict:
    """``{NAME: figure as printed}`` from ``{example: its output}``.

    Raises:
        ValueError: a figure whose expression finds nothing (the example's output has changed).
    """
    found = {}
    for name, (example, pattern) in FIGURES.items():
        m = re.search(pattern, outputs[example], re.M | re.S)
        if m is None:
            raise ValueError(f"figure {name}: {pattern!r} finds nothing in the output of examples/{example}.py")
        found[name] = m.group(1)
    return found


def format_record(outputs: dict) -> str:
    return "".join(f"### examples/{name}.py\n{outputs[name].rstrip()}\n\n" for name in EXAMPLES)


def parse_record(text: str) -> dict:
    parts = _SECTION.split(text)  # ['', name, body, name, body, ...]
    return {name: body.strip("\n") + "\n" for name, body in zip(parts[1::2], parts[2::2])}


def readme_figures(readme_text: str) -> dict:
    """``{NAME: figure}`` as README.md shows them (a NAME twice is an error)."""
    shown = {}
    for name, value in MARKER.findall(readme_text):
        if name in shown:
            raise ValueError(f"README.md shows figure {name} twice")
        shown[name] = value
    return shown


def write_readme(readme_text: str, values: dict) -> str:
    unknown = set(readme_figures(readme_text)) - set(values)
    if unknown:
        raise ValueError(f"README.md has markers for unknown figures: {sorted(unknown)}")
    return MARKER.sub(lambda m: f"<!-- fig:{m.group(1)} -->{values[m.group(1)]}<!-- /fig -->", readme_text)


def differences(readme_text: str, values: dict) -> list:
    shown = readme_figures(readme_text)
    out = [f"{n}: README.md has no marker for it" for n in values if n not in shown]
    out += [f"{n}: README.md shows {shown[n]}, the run printed {v}" for n, v in values.items()
            if n in shown and shown[n] != v]
    return out + [f"{n}: not a figure of scripts/readme_figures.py" for n in shown if n not in values]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="compare README.md with the record; run nothing")
    mode.add_argument("--verify", action="store_true", help="run the examples; fail if README.md differs")
    mode.add_argument("--fast", action="store_true", help="quick runs; print the figures, write nothing")
    args = p.parse_args(argv)
    with open(README, encoding="utf-8") as f:
        readme = f.read()
    if args.check:
        with open(RECORD, encoding="utf-8") as f:
            outputs = parse_record(f.read())
    else:
        outputs = {name: run_example(name, fast=args.fast) for name in EXAMPLES}
    values = figures(outputs)
    if args.fast:
        for n, v in values.items():
            print(f"{n:36s} {v}")
        return 0
    if args.check or args.verify:
        diff = differences(readme, values)
        for line in diff:
            print(line, file=sys.stderr)
        return 1 if diff else 0
    os.makedirs(os.path.dirname(RECORD), exist_ok=True)
    with open(RECORD, "w", encoding="utf-8") as f:
        f.write(format_record(outputs))
    with open(README, "w", encoding="utf-8") as f:
        f.write(write_readme(readme, values))
    for n, v in values.items():
        print(f"{n:36s} {v}")
    print(f"wrote {os.path.relpath(RECORD, ROOT)} and the figures in README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())

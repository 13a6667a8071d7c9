"""Coverage figures of PyTorch's op and module databases, written into ``docs/torch_compat.md``.

``OPDB_SAMPLES=100000 python tests/opdb_report.py docs/torch_compat.md`` walks every sample of every OpInfo
and ModuleInfo minitorch_ln provides (``opdb_walk.py``, ``moddb_walk.py``) and the other columns
(``opdb_variants.py``), and replaces the section between the report's markers with: OpInfos provided per
namespace, sample outcomes per namespace (float and complex apart), the ops under 98% agreement, modules,
and the variant columns.
Without a path it prints the section; ``--only NAME ...`` prints it for those ops and modules alone (a check).
Sample outcomes are counted per namespace in float64/float32 (the issue's target) and in complex128/complex64,
in separate columns, and the ops under 98% are listed per group.
"""

from __future__ import annotations

import collections
import pathlib
import sys

import moddb_walk
import opdb_variants
import opdb_walk

BEGIN, END = "<!-- BEGIN OPDB REPORT (tests/opdb_report.py) -->", "<!-- END OPDB REPORT -->"


def _pct(agree: int, n: int) -> str:
    return f"{100 * agree / n:.1f}%" if n else "-"


# The target is in float64/float32 (forward in both, gradients in float64); complex128/complex64 samples
# are counted on their own, so that complex refusals neither hide nor stand for float disagreements.
GROUPS = {"float64": "float", "float32": "float", "complex128": "complex", "complex64": "complex"}
GROUP_TITLES = {"float": "float64/float32", "complex": "complex128/complex64"}


def split_counts(results) -> dict:
    """``{group: Counter of outcomes}`` of one op's ``{(dtype, i): (outcome, detail)}``, groups as :data:`GROUPS`
    (any other dtype walked, e.g. bfloat16 through ``OPDB_DTYPES``, is its own group)."""
    out = collections.defaultdict(collections.Counter)
    for (dtype_name, _), (outcome, _) in results.items():
        out[GROUPS.get(dtype_name, dtype_name)][outcome] += 1
    return out


def _compared(c) -> int:
    return sum(c.values()) - c["skipped"]


def _below(key: str, c) -> str | None:
    """``"`op` agree/n (the rest: ...)"`` when fewer than 98% of the compared samples agree, else None."""
    n = _compared(c)
    if not n or c["agree"] >= 0.98 * n:
        return None
    return f"`{key}` {c['agree']}/{n} (the rest: " + ", ".join(
        f"{k} {v}" for k, v in sorted(c.items()) if k not in ("agree", "skipped")) + ")"


def _cells(c) -> str:
    n = _compared(c)
    return f"{c['agree']} / {n} ({_pct(c['agree'], n)}) | {c['differ']} | {c['error']} | {c['crash']}"


def report(names=()) -> str:
    """The generated section; ``names`` (op keys, e.g. ``"gather"``, ``"linalg.norm.subgradients_at_zero"``,
    and module names) limits the walk to those, for checking the report on a few entries."""
    per_ns = collections.defaultdict(lambda: [0, 0, collections.defaultdict(collections.Counter)])
    low = collections.defaultdict(list)
    columns = {c: collections.Counter() for c in opdb_variants.COLUMNS}
    for op in opdb_walk.op_database():
        if names and op.name not in names and opdb_walk.op_key(op) not in names:
            continue
        prefix = op.name.rpartition(".")[0]
        ns = prefix if prefix.startswith("torch") else ("torch." + prefix if prefix else "torch")
        per_ns[ns][1] += 1
        res = opdb_walk.walk_op(op)
        if res is None:
            continue
        per_ns[ns][0] += 1
        for group, counts in split_counts(res).items():
            per_ns[ns][2][group].update(counts)
            line = _below(opdb_walk.op_key(op), counts)
            if line:
                low[group].append(line)
        for col, outcomes in opdb_variants.walk_variants(op).items():
            columns[col].update(o for o, _ in outcomes.values())
    mods, mod_counts, mod_total = 0, collections.Counter(), 0
    for info in moddb_walk.module_database():
        if names and info.name not in names:
            continue
        mod_total += 1
        res = moddb_walk.walk_module(info)
        if res is not None:
            mods += 1
            mod_counts.update(o for o, _ in res.values())
    groups = list(GROUP_TITLES) + sorted({g for v in per_ns.values() for g in v[2]} - set(GROUP_TITLES))
    head = " | ".join(f"{GROUP_TITLES.get(g, g)}: agree | differ | error | crash" for g in groups)
    lines = [BEGIN, "", "## PyTorch's op and module databases (generated)", "",
             "`torch.testing._internal`'s `op_db` and `module_db` (PyTorch 2.13), every sample of every entry "
             "minitorch_ln provides, forward in float64 and float32 (complex128/complex64 where provided) and the "
             "float64 (complex128) gradient under a random upstream gradient (`tests/opdb_walk.py`, "
             "`tests/moddb_walk.py`; CI walks a capped subset through `tests/test_torch_op_db.py`). *agree*: same "
             "values, dtype and shape; *differ*: a different number (each one is listed under \"What differs on "
             "purpose\"); *error*: a clear refusal; *crash*: a bare Python/NumPy error. The target (at least 98% of "
             "every provided op's samples agree) is in float64/float32; complex samples have their own columns.", "",
             f"| namespace | OpInfos provided | {head} |", "|---|---|" + "---|---|---|---|" * len(groups)]
    tot = [0, 0, collections.defaultdict(collections.Counter)]
    for ns in sorted(per_ns):
        have, total, c = per_ns[ns]
        tot[0], tot[1] = tot[0] + have, tot[1] + total
        for g in groups:
            tot[2][g].update(c[g])
        lines.append(f"| `{ns}` | {have} / {total} | " + " | ".join(_cells(c[g]) for g in groups) + " |")
    lines += [f"| **all** | **{tot[0]} / {tot[1]}** | " + " | ".join(_cells(tot[2][g]) for g in groups) + " |", ""]
    n = _compared(mod_counts)
    lines += [f"ModuleInfos provided: **{mods} / {mod_total}**; their inputs agree {mod_counts['agree']} / {n} "
              f"({_pct(mod_counts['agree'], n)}), differ {mod_counts['differ']}, error {mod_counts['error']}, "
              f"crash {mod_counts['crash']}.", ""]
    lines += ["Provided ops under 98% agreement in float64/float32 (the target): "
              + ("; ".join(low["float"]) if low["float"] else "none") + ".", ""]
    lines += ["Provided ops under 98% agreement in complex128/complex64 (mostly complex refusals): "
              + ("; ".join(low["complex"]) if low["complex"] else "none") + ".", ""]
    for g in groups[len(GROUP_TITLES):]:
        lines += [f"Provided ops under 98% agreement in {g}: " + ("; ".join(low[g]) if low[g] else "none") + ".", ""]
    lines += ["The other columns (`tests/opdb_variants.py`, the first samples of each provided op; held by "
              "`tests/test_torch_op_db_variants.py`):", "", "| column | outcomes |", "|---|---|"]
    for col, counts in columns.items():
        lines.append(f"| {col} | " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + " |")
    lines += ["", END]
    return "\n".join(lines) + "\n"


def write(path) -> None:
    p = pathlib.Path(path)
    text = p.read_text()
    section = report()
    if BEGIN in text:
        head, rest = text.split(BEGIN, 1)
        text = head + section + rest.split(END, 1)[1].lstrip("\n")
    else:  # before the generated name lists
        marker = "<!-- BEGIN GENERATED"
        i = text.find(marker)
        text = (text[:i] + section + "\n" + text[i:]) if i >= 0 else text.rstrip("\n") + "\n\n" + section
    p.write_text(text)


if __name__ == "__main__":
    # python tests/opdb_report.py [docs/torch_compat.md] [--only NAME ...]: write (or print) the section; --only
    # walks just the named ops/modules (a check of the report; never write a partial report into the docs)
    args = sys.argv[1:]
    only = tuple(args[args.index("--only") + 1:]) if "--only" in args else ()
    paths = args[:args.index("--only")] if "--only" in args else args
    if paths and only:
        sys.exit("opdb_report.py: --only is for checking the report; it does not write a partial one into a file")
    if paths:
        write(paths[0])
    else:
        print(report(only), end="")

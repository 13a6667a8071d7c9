"""Coverage figures of PyTorch's op and module databases, written into ``docs/torch_compat.md``.

``OPDB_SAMPLES=100000 python tests/opdb_report.py docs/torch_compat.md`` walks every sample of every OpInfo
and ModuleInfo minitorch_ln provides (``opdb_walk.py``, ``moddb_walk.py``) and the other columns
(``opdb_variants.py``), and replaces the section between the report's markers with: OpInfos provided per
namespace, sample outcomes per namespace, the ops under 98% agreement, modules, and the variant columns.
Without a path it prints the section.
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


def report() -> str:
    per_ns = collections.defaultdict(lambda: [0, 0, collections.Counter()])
    low, columns = [], {c: collections.Counter() for c in opdb_variants.COLUMNS}
    for op in opdb_walk.op_database():
        prefix = op.name.rpartition(".")[0]
        ns = prefix if prefix.startswith("torch") else ("torch." + prefix if prefix else "torch")
        per_ns[ns][1] += 1
        res = opdb_walk.walk_op(op)
        if res is None:
            continue
        per_ns[ns][0] += 1
        counts = collections.Counter(o for o, _ in res.values())
        per_ns[ns][2].update(counts)
        n = sum(counts.values()) - counts["skipped"]
        if n and counts["agree"] < 0.98 * n:
            low.append(f"`{opdb_walk.op_key(op)}` {counts['agree']}/{n} (the rest: "
                       + ", ".join(f"{k} {v}" for k, v in counts.items() if k not in ("agree", "skipped")) + ")")
        for col, outcomes in opdb_variants.walk_variants(op).items():
            columns[col].update(o for o, _ in outcomes.values())
    mods, mod_counts, mod_total = 0, collections.Counter(), 0
    for info in moddb_walk.module_database():
        mod_total += 1
        res = moddb_walk.walk_module(info)
        if res is not None:
            mods += 1
            mod_counts.update(o for o, _ in res.values())
    lines = [BEGIN, "", "## PyTorch's op and module databases (generated)", "",
             "`torch.testing._internal`'s `op_db` and `module_db` (PyTorch 2.13), every sample of every entry "
             "minitorch_ln provides, forward in float64 and float32 (complex128/complex64 where provided) and the "
             "float64 gradient under a random upstream gradient (`tests/opdb_walk.py`, `tests/moddb_walk.py`; CI "
             "walks a capped subset through `tests/test_torch_op_db.py`). *agree*: same values, dtype and shape; "
             "*differ*: a different number (each one is listed under \"What differs on purpose\"); *error*: a "
             "clear refusal; *crash*: a bare Python/NumPy error.", "",
             "| namespace | OpInfos provided | samples agree | differ | error | crash |", "|---|---|---|---|---|---|"]
    tot = [0, 0, collections.Counter()]
    for ns in sorted(per_ns):
        have, total, c = per_ns[ns]
        tot[0], tot[1] = tot[0] + have, tot[1] + total
        tot[2].update(c)
        n = sum(c.values()) - c["skipped"]
        lines.append(f"| `{ns}` | {have} / {total} | {c['agree']} / {n} ({_pct(c['agree'], n)}) | {c['differ']} | "
                     f"{c['error']} | {c['crash']} |")
    c = tot[2]
    n = sum(c.values()) - c["skipped"]
    lines += [f"| **all** | **{tot[0]} / {tot[1]}** | **{c['agree']} / {n} ({_pct(c['agree'], n)})** | {c['differ']} | "
              f"{c['error']} | {c['crash']} |", ""]
    n = sum(mod_counts.values()) - mod_counts["skipped"]
    lines += [f"ModuleInfos provided: **{mods} / {mod_total}**; their inputs agree {mod_counts['agree']} / {n} "
              f"({_pct(mod_counts['agree'], n)}), differ {mod_counts['differ']}, error {mod_counts['error']}, "
              f"crash {mod_counts['crash']}.", ""]
    lines += ["Provided ops under 98% agreement: " + ("; ".join(low) if low else "none") + ".", ""]
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
    if len(sys.argv) == 2:
        write(sys.argv[1])
    else:
        print(report(), end="")

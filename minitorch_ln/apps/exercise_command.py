"""``minitorch-ln exercise list | start NAME [--dir D] | check NAME FILE [--train]``: graded backward exercises.

``check`` exits 0 when the backward is right (and, with ``--train``, its loss curve follows the
reference's), 1 when it is wrong or cannot be loaded; argparse's usage errors exit 2.
"""

from __future__ import annotations

import sys

from .cli_args import check_seed
from .exercises import EXERCISES, check, get, load_function, start


def _cmd_list(args) -> int:
    for ex in EXERCISES.values():
        print(f"{ex.name:<14} {ex.signature}")
    return 0


def _cmd_start(args) -> int:
    path = start(args.name, args.dir, overwrite=args.force)
    ex = get(args.name)
    print(f"wrote {path}: fill in {ex.function}, then run")
    print(f"  minitorch-ln exercise check {ex.name} {path}")
    return 0


def _cmd_check(args) -> int:
    check_seed(args.seed)
    if not args.train and (args.steps is not None or args.figure is not None):
        raise ValueError(f"{'--steps' if args.steps is not None else '--figure'} applies to training: add --train")
    fn = load_function(args.name, args.file)
    steps = 200 if args.steps is None else args.steps
    result = check(args.name, fn, train=args.train, steps=steps, figure=args.figure, seed=args.seed)
    print(result)
    return result.exit_code


def _run(args) -> int:
    try:
        return {"list": _cmd_list, "start": _cmd_start, "check": _cmd_check}[args.action](args)
    except (ValueError, TypeError, OSError, ImportError, SyntaxError) as exc:  # OSError: no file, file exists, ...
        print(f"minitorch-ln exercise {args.action}: error: {exc}", file=sys.stderr)
        return 1


def register_exercise_command(subparsers) -> None:
    """Add ``minitorch-ln exercise ...`` to the CLI's subparsers (listed in ``cli.SUBCOMMANDS``)."""
    p = subparsers.add_parser(
        "exercise", help="graded exercises: write a backward in NumPy, get it checked, train with it",
        description="Write the backward of an op in NumPy; `check` grades it against the project's backward and "
                    "float64 finite differences, names what is wrong, and with --train trains a small model with it. "
                    "docs/exercises.md lists the exercises.")
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    sub.add_parser("list", help="the exercises and their signatures")
    s = sub.add_parser("start", help="write a skeleton file NAME's function.py to fill in")
    s.add_argument("name", choices=list(EXERCISES), metavar="NAME", help=", ".join(EXERCISES))
    s.add_argument("--dir", default=".", help="where to write it (default: here)")
    s.add_argument("--force", action="store_true", help="overwrite an existing file")
    c = sub.add_parser("check", help="grade FILE's backward (exit 0 right, 1 wrong)")
    c.add_argument("name", choices=list(EXERCISES), metavar="NAME", help=", ".join(EXERCISES))
    c.add_argument("file", metavar="FILE", help="the .py file with the function")
    c.add_argument("--train", action="store_true", help="also train a small model 200 steps with it")
    c.add_argument("--steps", type=int, default=None, help="training steps with --train (default 200)")
    c.add_argument("--figure", default=None, metavar="PNG", help="where --train saves the loss curves "
                                                                 "(default NAME_train.png)")
    c.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.set_defaults(func=_run)

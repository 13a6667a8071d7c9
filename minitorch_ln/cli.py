"""The ``minitorch-ln`` command (also ``python -m minitorch_ln``)."""

from __future__ import annotations

import argparse
import sys


def _cmd_info(args) -> int:
    import numpy as np  # noqa: PLC0415

    from . import __version__, backend  # noqa: PLC0415

    print(f"minitorch_ln {__version__}")
    print(f"python       {sys.version.split()[0]}")
    print(f"numpy        {np.__version__}")
    try:
        import cupy  # noqa: PLC0415

        print(f"cupy         {cupy.__version__}")
    except ImportError:
        print("cupy         not installed (GPU support: pip install 'minitorch-ln[cuda12]' or '[cuda13]')")
    if backend.cuda_is_available():
        cp = backend.cupy_or_error()
        n = cp.cuda.runtime.getDeviceCount()
        names = [cp.cuda.runtime.getDeviceProperties(i)["name"].decode() for i in range(n)]
        print(f"gpu          {n} usable: {', '.join(names)}")
    else:
        print("gpu          none usable")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="minitorch-ln",
        description="minitorch_ln: a tensor/autograd mini-framework built around LayerNorm.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("info", help="versions, and whether CuPy and a GPU are usable")
    p.set_defaults(func=_cmd_info)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return args.func(args)

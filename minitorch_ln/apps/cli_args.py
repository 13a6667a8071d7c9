"""Argument checks shared by the ``minitorch-ln`` subcommands: ``--seed``, ``--shape``, negative values."""

from __future__ import annotations

import re


def check_seed(seed) -> int:
    """``--seed`` of every subcommand: an integer in ``[0, 2**64)`` (what NumPy's generators take)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ValueError(f"--seed must be an integer >= 0 (and < 2**64), got {seed}")
    return seed


def parse_shape(parts, option: str = "--shape") -> tuple:
    """``--shape`` as ``2,3,4``, ``2 3 4`` or a mix (``2, 3 4``): a tuple of positive ints.

    Raises:
        ValueError: a part that is not an integer, no size at all, or a size below 1.
    """
    text = " ".join(str(p) for p in parts).strip()
    try:
        shape = tuple(int(s) for s in text.replace(",", " ").split())
    except ValueError:
        raise ValueError(f"{option} expects integers like 2,3,4 or 2 3 4, got {text!r}") from None
    if not shape:
        raise ValueError(f"{option} expects integers like 2,3,4 or 2 3 4, got {text!r}")
    if any(s < 1 for s in shape):
        raise ValueError(f"every size in {option} must be >= 1, got {text!r}")
    return shape


def allow_negative_values(parser) -> None:
    """Let ``--shape -1,3`` and ``--seed -1`` reach our checks (and their clear messages) instead of
    argparse taking ``-1,3`` for an unknown option: argparse decides what looks like a negative
    number with this one pattern."""
    parser._negative_number_matcher = re.compile(r"^-\d[\d,.\s]*$|^-\d*\.\d+$")

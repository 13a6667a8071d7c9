"""How a tensor prints: PyTorch's format (``torch/_tensor_str.py``), on the NumPy array.

``tensor(0.0130)``, ``tensor([1.5000, 2.0000])``, ``tensor([1., 2.])`` (whole numbers),
``tensor([1.0000e-05, 1.0000e+03])`` (scientific when the magnitudes span more than 1000x, or
reach 1e8, or go below 1e-4), ints and bools as Python prints them, every element padded to the
widest, rows wrapped at 80 characters, tensors over 1000 elements summarized to their first and
last 3 items per dimension with ``...``. Suffixes as PyTorch's: ``device='cuda:0'``, ``dtype=torch.float64``
(for dtypes other than the default float, int64 and bool), ``size=(0, 3)`` for empty tensors,
``grad_fn=<...>`` or ``requires_grad=True``. ``set_printoptions`` / ``printoptions`` take PyTorch's
``precision``, ``threshold``, ``edgeitems``, ``linewidth``, ``profile`` and ``sci_mode``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math

import numpy as np

from . import backend

__all__ = ["set_printoptions", "get_printoptions", "printoptions", "tensor_repr", "dtype_name"]


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: "bool | None" = None


PRINT_OPTS = _PrintOptions()

_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """As ``torch.set_printoptions``; ``profile`` is ``"default"``, ``"short"`` or ``"full"``."""
    if profile is not None:
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = _PROFILES[profile]
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """``with printoptions(precision=2):`` changes the options inside the block only."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


def dtype_name(dtype) -> str:
    """``torch.float32``, ``torch.int64``, ``torch.bool``, ...: a dtype as PyTorch prints it."""
    return f"torch.{np.dtype(dtype).name if np.dtype(dtype) != np.bool_ else 'bool'}"


class _Formatter:
    """Picks one format for all of ``values`` (a NumPy array, real): int, whole-number float, fixed or sci."""

    def __init__(self, values: np.ndarray):
        self.floating = values.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        flat = values.reshape(-1)
        if not self.floating:
            self.max_width = max([1, *(len(str(v)) for v in flat.tolist())])
            return
        finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)  # (K,)
        if finite.size == 0:
            return
        lo, hi = np.abs(finite).min(), np.abs(finite).max()
        self.int_mode = bool((finite == np.ceil(finite)).all())
        self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4) if PRINT_OPTS.sci_mode is None \
            else PRINT_OPTS.sci_mode
        p = PRINT_OPTS.precision
        if self.sci_mode:
            widths = (len(f"{v:.{p}e}") for v in finite.tolist())
        elif self.int_mode:
            widths = (len(f"{v:.0f}") + 1 for v in finite.tolist())
        else:
            widths = (len(f"{v:.{p}f}") for v in finite.tolist())
        self.max_width = max(self.max_width, *widths)

    def format(self, value) -> str:
        if self.floating:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
            elif self.int_mode:
                ret = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
            else:
                ret = f"{value:.{PRINT_OPTS.precision}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


class _ComplexFormatter:
    """PyTorch's pair of formatters for a complex tensor: one for the real parts, one for the imaginary."""

    def __init__(self, values: np.ndarray):
        self.real, self.imag = _Formatter(values.real), _Formatter(values.imag)
        self.max_width = self.real.max_width + self.imag.max_width + 1

    def format(self, value) -> str:
        re, im = self.real.format(value.real), (self.imag.format(value.imag) + "j").lstrip()
        return re + im if im[0] in "+-" else re + "+" + im


def _summarized(a: np.ndarray) -> np.ndarray:
    """The items a summarized print shows (the first and last ``edgeitems`` per dimension), for the formatter."""
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.shape[0] > 2 * e:
        a = np.concatenate([a[:e], a[-e:]]) if e else a[:0]
    return np.stack([_summarized(x) for x in a]) if a.ndim > 1 and len(a) else a


def _vector_str(a: np.ndarray, indent: int, summarize: bool, fmt) -> str:
    e = PRINT_OPTS.edgeitems
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (fmt.max_width + 2)))
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = [fmt.format(v) for v in a[:e].tolist()] + [" ..."] + [fmt.format(v) for v in a[-e:].tolist()]
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _array_str(a: np.ndarray, indent: int, summarize: bool, fmt) -> str:
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, fmt)
    e = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        rows = [*range(e), None, *range(len(a) - e, len(a))]
    else:
        rows = range(a.shape[0])
    slices = ["..." if i is None else _array_str(a[i], indent + 1, summarize, fmt) for i in rows]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _add_suffixes(text: str, suffixes: list, indent: int) -> str:
    out, last_len = [text], len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            out.append(",\n" + " " * indent + suffix)
            last_len = indent + len(suffix)
        else:
            out.append(", " + suffix)
            last_len += len(suffix) + 2
    return "".join(out) + ")"


def tensor_repr(array, device, grad_fn_name=None, requires_grad=False, prefix="tensor(") -> str:
    """The text of ``repr(t)`` for a tensor holding ``array`` (NumPy or CuPy) on ``device``."""
    a = backend.to_device(array, "cpu")
    indent, suffixes = len(prefix), []
    if device.type != "cpu":
        suffixes.append(f"device='{device}'")
    default_float = backend.default_float_dtype()
    default_complex = np.dtype(np.complex128 if default_float == np.float64 else np.complex64)
    if a.size == 0:
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
        if a.dtype != default_float:
            suffixes.append(f"dtype={dtype_name(a.dtype)}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(a.shape)}")
        if a.dtype not in (default_float, default_complex, np.dtype(np.int64), np.dtype(np.bool_)):
            suffixes.append(f"dtype={dtype_name(a.dtype)}")
        summarize = a.size > PRINT_OPTS.threshold
        shown = _summarized(a) if summarize else a
        if a.dtype == np.float16 or getattr(a.dtype, "name", "") == "bfloat16":
            shown = shown.astype(np.float32)
        fmt = _ComplexFormatter(shown) if a.dtype.kind == "c" else _Formatter(shown)
        body = _array_str(a, indent, summarize, fmt)
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)

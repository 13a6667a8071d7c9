"""Graded exercises: a student writes a backward in NumPy; the project grades it and trains with it.

``list_exercises()`` names them; ``start(name, dir)`` writes a skeleton (signature, shapes, a
pointer to the derivation, a ``raise NotImplementedError`` body; never the solution);
``check(name, fn)`` grades a function (``grading.py``) and, with ``train=True``, trains a small
model with it (``train.py``). ``minitorch-ln exercise list|start|check`` is the same from the shell
(``apps/exercise_command.py``); ``minitorch_ln.exercises`` re-exports these for notebooks.
The exercises are listed here by import, one module each; docs/exercises.md documents them.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys
import traceback

from . import (
    attention,
    batch_norm,
    cross_entropy,
    embedding,
    gelu,
    group_norm,
    layer_norm,
    linear,
    rms_norm,
    softmax,
)
from .grading import GradeReport, grade, rel_error
from .spec import Exercise
from .train import plot_curves, summarize, train_both

__all__ = [
    "EXERCISES",
    "CheckResult",
    "Exercise",
    "GradeReport",
    "check",
    "get",
    "list_exercises",
    "load_function",
    "rel_error",
    "skeleton",
    "start",
]

EXERCISES = {m.EXERCISE.name: m.EXERCISE for m in (
    layer_norm, batch_norm, rms_norm, group_norm, softmax, cross_entropy, linear, gelu, embedding, attention)}


def list_exercises() -> list:
    """The exercise names, in teaching order."""
    return list(EXERCISES)


def get(name) -> Exercise:
    """The :class:`Exercise` called ``name``; ``ValueError`` naming the choices when there is none."""
    if isinstance(name, Exercise):
        return name
    if name not in EXERCISES:
        raise ValueError(f"no exercise {name!r}; the exercises are: {', '.join(EXERCISES)}")
    return EXERCISES[name]


def skeleton(name) -> str:
    """The text of the skeleton file ``start`` writes."""
    ex = get(name)
    doc = "\n".join(("    " + line) if line else "" for line in ex.shapes.splitlines())
    return (f'"""Exercise {ex.name}: write {ex.function}.\n\n'
            f"Grade it:      minitorch-ln exercise check {ex.name} {ex.function}.py\n"
            f"Train with it: minitorch-ln exercise check {ex.name} {ex.function}.py --train\n"
            f"The math:      {ex.derivation}\n"
            + ("               (docs/ is in minitorch_ln's source repository; a pip install has no docs/)\n"
               if "docs/" in ex.derivation else "")
            + f"From Python:   import minitorch_ln; minitorch_ln.exercises.check({ex.name!r}, {ex.function})\n"
            '"""\n\nimport numpy as np\n\n\n'
            f"def {ex.function}({', '.join(ex.args)}):\n"
            f'    """{doc.lstrip()}\n    """\n'
            f'    raise NotImplementedError("write the backward of {ex.name} here")\n')


def start(name, dir=".", overwrite=False) -> pathlib.Path:
    """Write the skeleton ``<dir>/<function>.py`` and return its path.

    Raises:
        ValueError: no such exercise. FileExistsError: the file exists (your work is never
            overwritten unless ``overwrite=True``). NotADirectoryError: ``dir`` is a file.
    """
    ex = get(name)
    if pathlib.Path(dir).exists() and not pathlib.Path(dir).is_dir():
        raise NotADirectoryError(f"--dir {dir} is a file, not a directory: name the folder to write "
                                 f"{ex.function}.py into")
    path = pathlib.Path(dir) / f"{ex.function}.py"
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} already exists; not overwriting your work (delete it to start over)")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(skeleton(ex))
    return path


def load_function(name, file):
    """Import ``file`` and return its function of the exercise's name (``layer_norm_backward``).

    The file's folder is put first on ``sys.path`` (as ``python file.py`` does), so a helper module
    next to it imports.

    Raises:
        FileNotFoundError: no such file. ValueError: the file defines no such function.
        SyntaxError: the file does not parse. ImportError: importing it raised (or called ``exit()``);
            the message names the error and the file's line.
    """
    ex = get(name)
    path = pathlib.Path(file)
    if not path.is_file():
        raise FileNotFoundError(f"no file {path} (write one with: minitorch-ln exercise start {ex.name})")
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(f"_exercise_{ex.name}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SyntaxError:
        raise  # its message already names the file and line
    except SystemExit:
        raise ImportError(f"importing {path} called exit() ({_line_in(path)}); "
                          f"define {ex.function} and return from it instead") from None
    except Exception as e:  # noqa: BLE001 - any error at import time is one clear line, not a traceback
        raise ImportError(f"importing {path} raised {type(e).__name__}: {e} ({_line_in(path, e)})") from None
    fn = getattr(module, ex.function, None)
    if not callable(fn):
        raise ValueError(f"{path} defines no function {ex.function}; expected {ex.signature}")  # noqa: TRY004
    return fn


def _line_in(path, e=None) -> str:
    """``at FILE:LINE``: the last frame of ``path`` in the traceback being handled."""
    tb = traceback.extract_tb(e.__traceback__ if e is not None else sys.exc_info()[2])
    own = [f for f in tb if pathlib.Path(f.filename).resolve() == pathlib.Path(path).resolve()]
    return f"at {own[-1].filename}:{own[-1].lineno}" if own else f"in {path}"


class CheckResult:
    """What :func:`check` returns: ``grade`` (a :class:`GradeReport`), and with ``train``: the loss curves
    ``reference``/``yours``, the text ``train_summary``, ``train_ok`` and the ``figure`` path.
    ``ok`` and ``exit_code`` (0 right, 1 wrong) cover both: with ``train``, right means the check passes
    *and* the curves agree. ``str()`` is the printed report; its last line, ``RESULT: ... (exit N)``,
    is the verdict (with ``train``, the check's own line reads ``check: ...`` and comes first)."""

    def __init__(self, report):
        self.grade = report
        self.reference = self.yours = None
        self.train_summary, self.train_ok, self.figure = "", True, None

    @property
    def ok(self) -> bool:
        return self.grade.ok and self.train_ok

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def __str__(self) -> str:
        if not self.train_summary:
            return str(self.grade)
        head, _, verdict = str(self.grade).rpartition("\nRESULT: ")
        parts = [head, "check: " + verdict.rsplit(" (exit", 1)[0], self.train_summary]
        if self.figure:
            parts.append(f"  loss curves: {self.figure}")
        if not self.grade.ok:
            parts.append(f"RESULT: wrong: {', '.join(self.grade.wrong) or 'your function failed'} (exit 1)")
        elif self.train_ok:
            parts.append("RESULT: right: the check passes and training follows the reference (exit 0)")
        else:
            parts.append("RESULT: wrong: the check passes, but training with your backward parts from the "
                         "reference's (exit 1)")
        return "\n".join(parts)

    __repr__ = __str__


def check(name, fn, train=False, steps=200, figure=None, seed=0, verbose=False) -> CheckResult:
    """Grade ``fn`` (the student's backward) for exercise ``name``; with ``train``, also train with it.

    Args:
        name: an exercise of :func:`list_exercises`.
        fn: the student's function (``layer_norm_backward(dy, x, weight, eps) -> (dx, dweight, dbias)``).
        train: also train the exercise's small model ``steps`` steps with ``fn`` as the backward.
        figure: where to save the loss curves (PNG; default ``<name>_train.png`` when training).
        verbose: print the report.

    Returns:
        a :class:`CheckResult` (``.ok``, ``.exit_code``, ``print`` it).

    Raises:
        ValueError: no such exercise. TypeError: ``fn`` is not callable.
    """
    ex = get(name)
    if not callable(fn):
        raise TypeError(f"check: expected the function {ex.signature}, got {type(fn).__name__}")
    if train and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
        raise ValueError(f"check: steps must be a positive integer, got {steps!r}")
    if train and figure is not None and not pathlib.Path(figure).parent.is_dir():  # before the work, not after
        raise FileNotFoundError(f"check: cannot save the loss curves to {figure}: "
                                f"no directory {pathlib.Path(figure).parent}")
    result = CheckResult(grade(ex, fn, seed=seed))
    if train and result.grade.error is not None:
        result.train_summary = f"--train: not run, since {ex.function} does not run on the graded inputs"
        result.train_ok = False
    elif train:
        ref, mine, error = train_both(ex, fn, steps=steps, seed=seed)
        result.reference, result.yours = ref, mine
        result.train_summary, result.train_ok = summarize(ex, ref, mine, error)
        if not error:
            try:
                result.figure = plot_curves(ex, ref, mine, figure or f"{ex.name}_train.png")
            except ImportError as e:  # the picture is optional (the plot extra); the text summary is not
                result.train_summary += f"\n  no picture: {e}"
    if verbose:
        print(result)
    return result

"""Text corpora for the trainer: any UTF-8 file, or the built-in standard-library docstrings.

The built-in corpus is real English prose that every CPython installation already carries: the
docstrings of the standard library's modules, classes and functions, read from the ``.py`` source
files with :mod:`ast` (parsed, never imported, so no module's import-time code runs). Files are
visited in sorted path order, so one Python build always gives the same text; different builds give
different text, which is why every run records the corpus's size and SHA-256.
"""

from __future__ import annotations

import ast
import hashlib
import os
import sysconfig
from dataclasses import asdict, dataclass

__all__ = ["Corpus", "CorpusError", "default_corpus", "load_text", "clean_text", "stdlib_dir"]

# Directories of the standard library whose docstrings are tests, vendored code or tooling rather
# than documentation prose.
_SKIP_DIRS = {"site-packages", "dist-packages", "test", "tests", "idle_test", "__pycache__", "lib2to3",
              "ensurepip", "turtledemo"}
# A binary file almost always has a NUL byte within its first few kilobytes; text never does.
_SNIFF_BYTES = 8192
_BOM = b"\xef\xbb\xbf"  # the UTF-8 byte-order mark


class CorpusError(ValueError):
    """A text file that cannot be used as a corpus: missing, empty, binary, not UTF-8, too short."""


@dataclass(frozen=True)
class Corpus:
    """A training text and where it came from.

    Attributes:
        text: the cleaned text (``str``).
        source: ``"stdlib-docstrings"`` or the path of the file given with ``--text``.
        description: one line saying what the text is, for logs and ``--help``.
        num_chars: ``len(text)``.
        sha256: hex SHA-256 of ``text`` encoded as UTF-8 (identifies the corpus across machines).
        num_documents: docstrings (built-in corpus) or 1 (a file).
    """

    text: str
    source: str
    description: str
    num_chars: int
    sha256: str
    num_documents: int = 1

    def info(self) -> dict:
        """Everything but the text: what a run records about its corpus."""
        d = asdict(self)
        del d["text"]
        return d


def _make(text: str, source: str, description: str, num_documents: int) -> Corpus:
    return Corpus(text, source, description, len(text), hashlib.sha256(text.encode("utf-8")).hexdigest(),
                  num_documents)


def clean_text(text: str) -> str:
    """Normalise line endings to ``\\n``, tabs to four spaces, and strip trailing spaces on each line."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
    return "\n".join(line.rstrip() for line in text.split("\n"))


def load_text(path) -> Corpus:
    """Read a UTF-8 text file as a corpus.

    Args:
        path: a path to a UTF-8 text file (a leading byte-order mark is dropped).

    Returns:
        a :class:`Corpus` with the file's cleaned text.

    Raises:
        CorpusError: when the path does not exist, is a directory, is empty (or only whitespace),
            looks binary (contains NUL bytes), or is not valid UTF-8 (naming the byte offset).
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise CorpusError(f"text file {path!r} does not exist: expected a path to a UTF-8 text file")
    if os.path.isdir(path):
        raise CorpusError(f"{path!r} is a directory: expected a path to a UTF-8 text file")
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:  # no permission, a FIFO that fails, ...
        raise CorpusError(f"cannot read text file {path!r}: {exc.strerror or exc}") from None
    skipped = len(_BOM) if raw.startswith(_BOM) else 0  # a byte-order mark some editors write: not text
    raw = raw[skipped:]
    if not raw:
        raise CorpusError(f"text file {path!r} is empty: expected some UTF-8 text to train on")
    if b"\x00" in raw[:_SNIFF_BYTES]:
        raise CorpusError(
            f"{path!r} looks like a binary file (it contains NUL bytes): expected a UTF-8 text file"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorpusError(
            f"{path!r} is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start + skipped}): "
            "expected a UTF-8 text file; re-encode it, e.g. `iconv -f latin1 -t utf-8`"
        ) from None
    if not text.strip():
        raise CorpusError(f"text file {path!r} has no text besides whitespace: expected some UTF-8 text to train on")
    text = clean_text(text)
    return _make(text, path, f"the text file {path}", 1)


def stdlib_dir() -> str:
    """The directory holding this interpreter's standard-library ``.py`` files."""
    return sysconfig.get_paths()["stdlib"]


def _stdlib_sources(root: str):
    """Every standard-library ``.py`` file under ``root``, in sorted (deterministic) order."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(".py"):
                yield os.path.join(dirpath, name)


def _docstrings(source: str):
    """Docstrings of the module and every class and function in ``source``, in source order."""
    tree = ast.parse(source)
    nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                                            ast.AsyncFunctionDef))]
    nodes.sort(key=lambda n: getattr(n, "lineno", 0))  # ast.walk is breadth-first; source order reads better
    for node in nodes:
        doc = ast.get_docstring(node, clean=True)  # clean=True removes the common indentation
        if doc:
            yield doc


def default_corpus(root: str | None = None, ascii_only: bool = True) -> Corpus:
    """The built-in corpus: the standard library's own docstrings, read with ``ast``.

    Each ``.py`` file under ``root`` (default: this interpreter's standard library, skipping tests
    and ``site-packages``) is parsed, never imported; the docstrings of its module, classes and
    functions are cleaned (:func:`clean_text`), repeated docstrings are kept once, and the
    docstrings are joined with blank lines. ``ascii_only`` drops the few non-ASCII characters
    (box-drawing characters, accented letters), which would each cost a vocabulary entry for a
    handful of occurrences. About 1.8 million characters on CPython 3.11; a few seconds to build.

    Raises:
        CorpusError: when no docstring is found under ``root``.
    """
    root = stdlib_dir() if root is None else os.fspath(root)
    seen, docs = set(), []
    for path in _stdlib_sources(root):
        try:
            with open(path, "rb") as f:
                source = f.read().decode("utf-8")
            found = list(_docstrings(source))
        except (SyntaxError, UnicodeDecodeError, ValueError, OSError):
            continue  # a file this interpreter cannot parse (e.g. a deliberately broken test input)
        for doc in found:
            doc = clean_text(doc)
            if ascii_only:
                doc = "".join(c for c in doc if c == "\n" or " " <= c <= "~")
            doc = doc.strip()
            if doc and doc not in seen:
                seen.add(doc)
                docs.append(doc)
    if not docs:
        raise CorpusError(f"no docstrings found under {root!r}: expected a Python standard-library directory")
    text = "\n\n".join(docs) + "\n"
    description = (f"docstrings of the Python standard library in {root} "
                   f"(read with ast, never imported; {len(docs)} docstrings)")
    return _make(text, "stdlib-docstrings", description, len(docs))

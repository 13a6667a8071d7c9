"""Text corpora for the trainer: any UTF-8 file, or the built-in standard-library docstrings.

A text file is read in bounded memory (:func:`load_text_ids`): a few megabytes at a time are
decoded, cleaned and turned into token ids, which go to a NumPy memmap of ``uint16`` (2 bytes a
character, as nanoGPT's ``train.bin``) in an unlinked temporary file; a text too large for the
space there is refused, saying so, before the space is used. :func:`load_text` (the whole text as
one ``str``) is for small files and tests.

The built-in corpus is real English prose that every CPython installation already carries: the
docstrings of the standard library's modules, classes and functions, read from the ``.py`` source
files with :mod:`ast` (parsed, never imported, so no module's import-time code runs). Files are
visited in sorted path order, so one Python build always gives the same text; different builds give
different text, which is why every run records the corpus's size and SHA-256.
"""

from __future__ import annotations

import ast
import codecs
import hashlib
import os
import re
import shutil
import stat
import sysconfig
import tempfile
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Corpus", "CorpusError", "default_corpus", "load_text", "load_text_ids", "iter_clean_text", "clean_text",
           "stdlib_dir"]

# Directories of the standard library whose docstrings are tests, vendored code or tooling rather
# than documentation prose.
_SKIP_DIRS = {"site-packages", "dist-packages", "test", "tests", "idle_test", "__pycache__", "lib2to3",
              "ensurepip", "turtledemo"}
# A binary file almost always has a NUL byte within its first few kilobytes; text never does.
_SNIFF_BYTES = 8192
_BOM = b"\xef\xbb\xbf"  # the UTF-8 byte-order mark
_CHUNK_BYTES = 1 << 22  # a text file is read 4 MiB at a time
_LINE_LIMIT = 1 << 22  # an unfinished line longer than this is emitted up to its trailing whitespace
_MAX_VOCAB = 65535  # token ids are stored as uint16
_MAX_WORDS = 1 << 18  # distinct words kept to judge samples (corpus_word_fraction)
_SPARE_BYTES = 128 << 20  # left free in the temporary directory


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

    text: "str | None"
    source: str
    description: str
    num_chars: int
    sha256: str
    num_documents: int = 1
    # set by load_text_ids (then text is None): the sorted vocabulary, the token ids (a uint16
    # memmap of shape (num_chars,)) and up to _MAX_WORDS distinct words of the text
    chars: "tuple | None" = field(default=None, compare=False, repr=False)
    ids: "np.ndarray | None" = field(default=None, compare=False, repr=False)
    words: "frozenset | None" = field(default=None, compare=False, repr=False)

    def info(self) -> dict:
        """Everything but the text: what a run records about its corpus."""
        return {k: getattr(self, k) for k in ("source", "description", "num_chars", "sha256", "num_documents")}


def _make(text: str, source: str, description: str, num_documents: int) -> Corpus:
    return Corpus(text, source, description, len(text), hashlib.sha256(text.encode("utf-8")).hexdigest(),
                  num_documents)


def clean_text(text: str) -> str:
    """Normalise line endings to ``\\n``, tabs to four spaces, and strip trailing spaces on each line."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
    return "\n".join(line.rstrip() for line in text.split("\n"))


def load_text(path) -> Corpus:
    """Read a UTF-8 text file as a corpus, the whole text in memory (for small files; the trainer
    uses :func:`load_text_ids`).

    Args:
        path: a path to a UTF-8 text file (a leading byte-order mark is dropped).

    Returns:
        a :class:`Corpus` with the file's cleaned text.

    Raises:
        CorpusError: when the path does not exist, is a directory, is empty (or only whitespace),
            looks binary (contains NUL bytes), or is not valid UTF-8 (naming the byte offset).
    """
    path = os.fspath(path)
    text = "".join(iter_clean_text(path))
    return _make(text, path, f"the text file {path}", 1)


def _open_text(path: str):
    if not os.path.exists(path):
        raise CorpusError(f"text file {path!r} does not exist: expected a path to a UTF-8 text file")
    if os.path.isdir(path):
        raise CorpusError(f"{path!r} is a directory: expected a path to a UTF-8 text file")
    try:
        return open(path, "rb")
    except OSError as exc:  # no permission, ...
        raise CorpusError(f"cannot read text file {path!r}: {exc.strerror or exc}") from None


def _decoded_pieces(path: str, chunk_bytes: int):
    """The file's text, decoded piece by piece, with :func:`load_text`'s checks (BOM, empty, binary, UTF-8)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    with _open_text(path) as f:
        try:
            raw = f.read(len(_BOM) + max(_SNIFF_BYTES, chunk_bytes))
            skipped = len(_BOM) if raw.startswith(_BOM) else 0  # a byte-order mark some editors write: not text
            raw = raw[skipped:]
            if not raw:
                raise CorpusError(f"text file {path!r} is empty: expected some UTF-8 text to train on")
            if b"\x00" in raw[:_SNIFF_BYTES]:
                raise CorpusError(
                    f"{path!r} looks like a binary file (it contains NUL bytes): expected a UTF-8 text file"
                )
            offset, text_seen = skipped, False  # offset: bytes given to the decoder so far, counting the mark
            while True:
                final = not raw
                pending = len(decoder.getstate()[0])
                try:
                    piece = decoder.decode(raw, final=final)
                except UnicodeDecodeError as exc:
                    raise CorpusError(
                        f"{path!r} is not valid UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset "
                        f"{offset - pending + exc.start}): expected a UTF-8 text file; re-encode it, e.g. "
                        "`iconv -f latin1 -t utf-8`"
                    ) from None
                offset += len(raw)
                text_seen = text_seen or bool(piece.strip())
                if piece:
                    yield piece
                if final:
                    break
                raw = f.read(chunk_bytes)
        except OSError as exc:  # a read error on the way (an I/O error, a FIFO that fails)
            raise CorpusError(f"cannot read text file {path!r}: {exc.strerror or exc}") from None
    if not text_seen:
        raise CorpusError(f"text file {path!r} has no text besides whitespace: expected some UTF-8 text to train on")


def _clean_pieces(pieces, line_limit: int = _LINE_LIMIT):
    """:func:`clean_text` of the concatenation of ``pieces``, yielded piece by piece in bounded memory.

    Whole lines are cleaned as they complete; an unfinished line longer than ``line_limit`` is
    emitted up to its last non-whitespace character (its trailing whitespace waits for the rest of
    the line), and a ``\r`` ending a piece waits for the next piece (it may begin ``\r\n``).
    """
    carry, cr = "", False
    for s in pieces:
        if cr:
            s = "\r" + s
        cr = s.endswith("\r")
        if cr:
            s = s[:-1]
        buf = carry + s.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
        k = buf.rfind("\n")
        out, carry = ("", buf) if k < 0 else \
            ("\n".join(line.rstrip() for line in buf[:k].split("\n")) + "\n", buf[k + 1:])
        if len(carry) > line_limit:
            head = carry.rstrip()
            out, carry = out + head, carry[len(head):]
        if out:
            yield out
    last = "\n".join(line.rstrip() for line in (carry + ("\n" if cr else "")).split("\n"))
    if last:
        yield last


def iter_clean_text(path, chunk_bytes: int = _CHUNK_BYTES):
    """The cleaned text of a UTF-8 file, piece by piece: ``"".join(iter_clean_text(p)) == load_text(p).text``.

    Raises:
        CorpusError: as :func:`load_text` (the checks that need the whole file raise at its end).
    """
    return _clean_pieces(_decoded_pieces(os.fspath(path), chunk_bytes))


def load_text_ids(path, chunk_bytes: int = _CHUNK_BYTES, tmp_dir=None) -> Corpus:
    """Read a UTF-8 text file as token ids in bounded memory (what ``minitorch-ln train --text`` does).

    The file is read ``chunk_bytes`` at a time; each piece is cleaned (:func:`clean_text`),
    hashed, and its characters' ids appended to an unlinked temporary file in ``tmp_dir`` (default:
    ``tempfile.gettempdir()``, i.e. ``$TMPDIR`` or ``/tmp``), at 2 bytes a character; at the end
    the ids are renumbered in place to the sorted vocabulary (as ``CharTokenizer`` numbers it) and
    memory-mapped. Memory use does not grow with the file; the file's space is given back when the
    process exits, however it exits.

    Returns:
        a :class:`Corpus` with ``text=None`` and ``chars`` (sorted vocabulary), ``ids`` (uint16
        memmap of shape ``(num_chars,)``), ``words`` (up to 262,144 distinct words) set; its
        ``sha256`` and ``num_chars`` are those :func:`load_text` gives.

    Raises:
        CorpusError: :func:`load_text`'s errors; a text whose ids cannot fit in the space free in
            ``tmp_dir`` (before that space is used); more than 65,535 distinct characters.
    """
    path = os.fspath(path)
    tmp_dir = tempfile.gettempdir() if tmp_dir is None else os.fspath(tmp_dir)
    free = shutil.disk_usage(tmp_dir).free - _SPARE_BYTES

    def too_large(chars: str) -> CorpusError:
        return CorpusError(
            f"text file {path!r} is too large to train on here: its token ids need {chars} x 2 bytes (in a "
            f"memory-mapped file in {tmp_dir}, the temporary directory), more than the {max(free, 0) / 2**30:.2f} "
            "GiB free there: set TMPDIR to a directory with more free space, or use a shorter text"
        )

    st_ = os.stat(path) if os.path.exists(path) else None
    if st_ is not None and stat.S_ISREG(st_.st_mode) and 2 * (st_.st_size // 4) > free:
        raise too_large(f"at least {st_.st_size // 4:,} characters")  # a UTF-8 character is at most 4 bytes
    lut = np.full(0x110000, -1, dtype=np.int32)  # code point -> id, in order of first appearance
    seen = []  # code points by id
    sha, n, words = hashlib.sha256(), 0, set()
    with tempfile.TemporaryFile(prefix="minitorch-ln-tokens-", dir=tmp_dir) as tmp:
        for piece in iter_clean_text(path, chunk_bytes):
            sha.update(piece.encode("utf-8"))
            cps = np.frombuffer(piece.encode("utf-32-le"), dtype=np.uint32)  # (len(piece),) code points
            ids = lut[cps]
            if (ids < 0).any():
                new = np.unique(cps[ids < 0])
                if len(seen) + len(new) > _MAX_VOCAB:
                    raise CorpusError(f"text file {path!r} has more than {_MAX_VOCAB:,} distinct characters: a "
                                      "character-level model needs one embedding row for each; use another text")
                lut[new] = np.arange(len(seen), len(seen) + len(new))
                seen.extend(new.tolist())
                ids = lut[cps]
            if 2 * (n + len(cps)) > free:
                raise too_large(f"more than {n + len(cps):,} characters")
            tmp.write(ids.astype(np.uint16).tobytes())
            n += len(cps)
            if len(words) < _MAX_WORDS:
                words.update(re.findall(r"[A-Za-z]+", piece))
        tmp.flush()
        order = np.argsort(np.array(seen, dtype=np.int64), kind="stable")  # ids sorted by code point
        rank = np.empty(len(seen), dtype=np.uint16)
        rank[order] = np.arange(len(seen), dtype=np.uint16)
        ids = np.memmap(tmp, dtype=np.uint16, mode="r+", shape=(n,))  # the mapping outlives the file object
        for i in range(0, n, chunk_bytes):
            ids[i:i + chunk_bytes] = rank[ids[i:i + chunk_bytes]]
        ids.flush()
    chars = tuple(chr(c) for c in sorted(seen))
    return Corpus(None, path, f"the text file {path}", n, sha.hexdigest(), 1, chars=chars, ids=ids,
                  words=frozenset(words))


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


_DEFINITIONS = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)  # what can hold statements (``body``, ``orelse``, ...)


def _definitions(node):
    """The class and function definitions in ``node``'s statements, at any depth.

    Definitions are statements, so only statements (and the ``except``/``case`` clauses holding
    them) are walked, never expressions: ``ast.walk`` over every node took half of the corpus's
    build time.
    """
    for value in ast.iter_fields(node):
        block = value[1]
        if not isinstance(block, list):
            continue
        for child in block:
            if isinstance(child, _BLOCKS):
                if isinstance(child, _DEFINITIONS):
                    yield child
                yield from _definitions(child)


def _docstrings(source: str):
    """Docstrings of the module and every class and function in ``source``, in source order."""
    tree = ast.parse(source)
    nodes = [tree, *_definitions(tree)]
    nodes.sort(key=lambda n: getattr(n, "lineno", 0))  # the module first, then by line
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

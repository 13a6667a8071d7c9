"""``CharTokenizer``: one token per character, the vocabulary being the characters of the corpus."""

from __future__ import annotations

import numpy as np

__all__ = ["CharTokenizer", "TokenizerError"]


class TokenizerError(ValueError):
    """Text with a character outside the vocabulary, an id outside it, or a malformed saved tokenizer."""


class CharTokenizer:
    """Maps each character to an integer id: ids are the positions in the sorted vocabulary.

    Args:
        chars: the vocabulary, an iterable of distinct one-character strings (sorted here, so
            ``CharTokenizer(set(text))`` does not depend on set order).

    Raises:
        TokenizerError: for an empty vocabulary, a duplicate, or an item that is not one character.
    """

    def __init__(self, chars):
        chars = list(chars)
        for c in chars:
            if not isinstance(c, str) or len(c) != 1:
                raise TokenizerError(f"vocabulary items must be one-character strings, got {c!r}")
        if not chars:
            raise TokenizerError("the vocabulary is empty: expected at least one character")
        if len(set(chars)) != len(chars):
            raise TokenizerError("the vocabulary has repeated characters")
        self.chars = sorted(chars)
        self.stoi = {c: i for i, c in enumerate(self.chars)}

    @classmethod
    def from_text(cls, text: str) -> "CharTokenizer":
        """The tokenizer whose vocabulary is every character occurring in ``text``."""
        return cls(set(text))

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> np.ndarray:
        """``text`` as ids: an int64 array of shape ``(len(text),)``.

        Raises:
            TokenizerError: naming the first character (and its position) missing from the vocabulary.
        """
        if not isinstance(text, str):
            raise TypeError(f"encode expects a str, got {type(text).__name__}")
        stoi = self.stoi
        try:
            return np.fromiter((stoi[c] for c in text), dtype=np.int64, count=len(text))  # (N,)
        except KeyError:
            for i, c in enumerate(text):
                if c not in stoi:
                    raise TokenizerError(
                        f"character {c!r} (U+{ord(c):04X}) at position {i} is not in the vocabulary of "
                        f"{self.vocab_size} characters this model was trained on"
                    ) from None
            raise  # pragma: no cover - unreachable

    def decode(self, ids) -> str:
        """Ids (a sequence, a 1-D array or a 1-D int Tensor) back to a string.

        Raises:
            TokenizerError: for an id outside ``[0, vocab_size)``.
        """
        arr = np.asarray(ids).reshape(-1)
        if arr.size and (arr.min() < 0 or arr.max() >= self.vocab_size):
            bad = int(arr[(arr < 0) | (arr >= self.vocab_size)][0])
            raise TokenizerError(f"token id {bad} is outside the vocabulary [0, {self.vocab_size})")
        return "".join(self.chars[int(i)] for i in arr)

    def to_dict(self) -> dict:
        """A JSON-able description: ``{"type": "char", "chars": [...]}``."""
        return {"type": "char", "chars": list(self.chars)}

    @classmethod
    def from_dict(cls, d: dict) -> "CharTokenizer":
        """Rebuild a tokenizer from :meth:`to_dict`'s output.

        Raises:
            TokenizerError: when ``d`` is not such a description.
        """
        if not isinstance(d, dict) or d.get("type") != "char" or not isinstance(d.get("chars"), list):
            raise TokenizerError(f"expected a saved char tokenizer {{'type': 'char', 'chars': [...]}}, got {d!r:.80}")
        return cls(d["chars"])

    def __eq__(self, other) -> bool:
        return isinstance(other, CharTokenizer) and self.chars == other.chars

    __hash__ = None

    def __repr__(self) -> str:
        return f"CharTokenizer(vocab_size={self.vocab_size})"

"""Corpora, the character tokenizer and the batch sampler."""

import hashlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.apps.corpus import CorpusError, clean_text, default_corpus, load_text
from minitorch_ln.apps.dataset import DatasetError, TokenDataset
from minitorch_ln.apps.tokenizer import CharTokenizer, TokenizerError

# ------------------------------------------------------------------------------------------ corpus


def test_load_text_reads_utf8_and_records_size_and_hash(tmp_path):
    p = tmp_path / "t.txt"
    p.write_bytes("\ufeffcafé\r\nnaïve\tline  \r\n".encode("utf-8"))
    c = load_text(p)
    assert c.text == "café\nnaïve    line\n"
    assert c.num_chars == len(c.text) == 19
    assert c.sha256 == hashlib.sha256(c.text.encode("utf-8")).hexdigest()
    assert c.source == str(p)
    assert "text" not in c.info() and c.info()["num_chars"] == 19


@pytest.mark.parametrize("content, message", [
    (None, "does not exist"),
    (b"", "is empty"),
    (b" \n\n\t ", "has no text besides whitespace"),
    (b"\xef\xbb\xbf", "is empty"),  # only a byte-order mark
    (b"\xef\xbb\xbf \r\n", "has no text besides whitespace"),
    (b"\xef\xbb\xbfcaf\xe9", "not valid UTF-8 (byte 0xe9 at offset 6)"),  # the offset counts the mark
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
    (b"caf\xe9 au lait", "not valid UTF-8 (byte 0xe9 at offset 3)"),
])
def test_load_text_bad_files_give_clear_errors(tmp_path, content, message):
    p = tmp_path / "t.txt"
    if content is not None:
        p.write_bytes(content)
    with pytest.raises(CorpusError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_text(p)


def test_load_text_drops_only_a_leading_byte_order_mark(tmp_path):
    p = tmp_path / "t.txt"
    p.write_bytes(b"\xef\xbb\xbfab\xef\xbb\xbfc")
    assert load_text(p).text == "ab\ufeffc"


def test_load_text_directory_is_refused(tmp_path):
    with pytest.raises(CorpusError, match="is a directory"):
        load_text(tmp_path)


def test_clean_text():
    assert clean_text("a \r\nb\t\rc  ") == "a\nb\nc"


def _fake_stdlib(root):
    (root / "pkg").mkdir()
    (root / "test").mkdir()
    (root / "site-packages").mkdir()
    (root / "b.py").write_text('"""Module b."""\n\ndef f():\n    """Function f.\n\n    More about f.\n    """\n')
    # importing this file would create a file: the corpus must parse it, never import it
    (root / "a.py").write_text(
        'import pathlib\npathlib.Path(__file__).with_name("IMPORTED").write_text("x")\n'
        'class A:\n    """Class A."""\n    def g(self):\n        """Function f.\n\n        More about f.\n        """\n'
    )
    (root / "pkg" / "c.py").write_text('"""Pkg c \u2500 with a box char."""\n')
    (root / "test" / "t.py").write_text('"""A test docstring."""\n')
    (root / "site-packages" / "s.py").write_text('"""Third party."""\n')
    (root / "broken.py").write_text('"""Broken."""\ndef (:\n')


def test_default_corpus_reads_docstrings_with_ast_in_sorted_order(tmp_path):
    _fake_stdlib(tmp_path)
    c = default_corpus(tmp_path)
    # a.py before b.py before pkg/c.py; the repeated docstring kept once; tests, site-packages and
    # the unparsable file skipped; the non-ASCII box character dropped
    assert c.text == "Class A.\n\nFunction f.\n\nMore about f.\n\nModule b.\n\nPkg c  with a box char.\n"
    assert c.num_documents == 4
    assert not (tmp_path / "IMPORTED").exists()
    assert c.sha256 == default_corpus(tmp_path).sha256


def test_default_corpus_empty_dir_is_an_error(tmp_path):
    with pytest.raises(CorpusError, match="no docstrings found"):
        default_corpus(tmp_path)


@pytest.fixture(scope="module")
def stdlib_corpus():
    return default_corpus()


def test_default_corpus_is_the_real_stdlib(stdlib_corpus):
    c = stdlib_corpus
    assert c.source == "stdlib-docstrings"
    assert c.num_chars > 300_000 and c.num_documents > 1000
    assert "Return" in c.text and "\t" not in c.text
    assert all(ch == "\n" or " " <= ch <= "~" for ch in set(c.text))
    assert c.sha256 == hashlib.sha256(c.text.encode()).hexdigest()


# ------------------------------------------------------------------------------------------ tokenizer


@given(st.text(min_size=1, max_size=200))
def test_tokenizer_round_trip(text):
    tok = CharTokenizer.from_text(text)
    ids = tok.encode(text)
    assert ids.dtype == np.int64 and ids.shape == (len(text),)
    assert ids.min() >= 0 and ids.max() < tok.vocab_size
    assert tok.decode(ids) == text
    assert CharTokenizer.from_dict(tok.to_dict()) == tok


def test_tokenizer_ids_follow_sorted_vocabulary():
    tok = CharTokenizer.from_text("hello world")
    assert tok.chars == [" ", "d", "e", "h", "l", "o", "r", "w"]
    assert tok.encode("hello").tolist() == [3, 2, 4, 4, 5]
    assert tok.decode(mt.tensor([7, 5, 6])) == "wor"


def test_tokenizer_bad_input():
    tok = CharTokenizer.from_text("abc")
    with pytest.raises(TokenizerError, match=r"character 'z' \(U\+007A\) at position 2 is not in the vocabulary of 3"):
        tok.encode("abz")
    with pytest.raises(TokenizerError, match=r"token id 3 is outside the vocabulary \[0, 3\)"):
        tok.decode([0, 3])
    with pytest.raises(TypeError, match="encode expects a str"):
        tok.encode(b"abc")
    with pytest.raises(TokenizerError, match="one-character strings"):
        CharTokenizer(["ab"])
    with pytest.raises(TokenizerError, match="empty"):
        CharTokenizer([])
    with pytest.raises(TokenizerError, match="expected a saved char tokenizer"):
        CharTokenizer.from_dict({"type": "bpe"})


# ------------------------------------------------------------------------------------------ dataset


def test_split_is_a_contiguous_tail():
    ds = TokenDataset(np.arange(100), val_fraction=0.1)
    assert ds.splits["train"].tolist() == list(range(90))
    assert ds.splits["val"].tolist() == list(range(90, 100))


@given(st.integers(1, 6), st.integers(1, 12), st.integers(0, 2**31))
def test_get_batch_targets_are_inputs_shifted(batch_size, block_size, seed):
    mt.manual_seed(seed)
    data = np.arange(40) * 3 % 17
    ds = TokenDataset(data, val_fraction=0.5)
    x, y = ds.get_batch("train", batch_size, block_size)
    assert x.shape == y.shape == (batch_size, block_size)
    assert x.dtype == y.dtype == np.int64
    train = ds.splits["train"]
    for row_x, row_y in zip(x.array, y.array):
        # each row is a window of the training split, and y is x moved on by one token
        starts = [s for s in range(len(train) - block_size) if (train[s:s + block_size] == row_x).all()]
        assert any((train[s + 1:s + block_size + 1] == row_y).all() for s in starts)


def test_get_batch_is_seeded():
    ds = TokenDataset(np.arange(1000))
    mt.manual_seed(3)
    a = ds.get_batch("train", 4, 8)[0].array
    mt.manual_seed(3)
    b = ds.get_batch("train", 4, 8)[0].array
    c = ds.get_batch("train", 4, 8)[0].array
    assert (a == b).all() and not (a == c).all()


def test_eval_batches_are_fixed_and_cover_the_split():
    ds = TokenDataset(np.arange(1000))
    b1 = ds.eval_batches(4, 8, 3)
    b2 = ds.eval_batches(4, 8, 3)
    assert len(b1) == 3 and all((x1.array == x2.array).all() for (x1, _), (x2, _) in zip(b1, b2))
    firsts = np.concatenate([x.array[:, 0] for x, _ in b1])
    assert firsts[0] == 900 and firsts[-1] == 1000 - 9  # first and last possible windows


def test_unigram_loss_is_the_cross_entropy_of_smoothed_frequencies():
    ds = TokenDataset(np.array([0, 0, 0, 1, 1, 2, 0, 1]), val_fraction=0.25)
    # train counts 0:3, 1:2, 2:1, +1 each -> 4, 3, 2 out of 9
    lp = ds.unigram_log_probs(3)
    np.testing.assert_allclose(np.exp(lp), [4 / 9, 3 / 9, 2 / 9])
    assert ds.unigram_loss([0, 1], 3) == pytest.approx(-(np.log(4 / 9) + np.log(3 / 9)) / 2)


def test_dataset_bad_input():
    with pytest.raises(DatasetError, match="context length 64 is too long for this corpus: the held-out split has only 20"):
        TokenDataset(np.arange(200)).check_block_size(64)
    with pytest.raises(DatasetError, match="the training split has only 45 tokens and a window needs 65"):
        TokenDataset(np.arange(50)).check_block_size(64)
    with pytest.raises(DatasetError, match="val_fraction must be in"):
        TokenDataset(np.arange(50), val_fraction=1.5)
    with pytest.raises(DatasetError, match="too few to split"):
        TokenDataset(np.arange(1))
    with pytest.raises(DatasetError, match="1-D integer array"):
        TokenDataset(np.ones(10))
    with pytest.raises(DatasetError, match="unknown split"):
        TokenDataset(np.arange(50)).get_batch("test", 2, 2)
    with pytest.raises(DatasetError, match="batch_size must be at least 1"):
        TokenDataset(np.arange(50)).get_batch("train", 0, 2)


def test_get_batch_on_device(device):
    ds = TokenDataset(np.arange(100))
    x, y = ds.get_batch("train", 2, 4, device=device)
    assert x.device == device and y.device == device
    assert (np.asarray(y)[:, :-1] == np.asarray(x)[:, 1:]).all()

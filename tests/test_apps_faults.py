"""``minitorch-ln train`` and ``sample`` under faults (issue 15, found by a break-it trial).

A huge or endless ``--text`` is read in bounded memory and refused when it cannot fit; a full disk
while writing a checkpoint is one line and keeps the earlier checkpoint; two runs into one
``--out`` cannot both run; ``--lr 1e300`` prints no raw NumPy warnings; SIGTERM is Ctrl-C;
README's example figures come from the recorded run of ``scripts/readme_figures.py``; ``sample``
decodes greedily and reads a bare ``.safetensors`` file (e.g. written by PyTorch).
"""

import errno
import hashlib
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import tracemalloc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.apps import checkpoint as checkpoint_mod
from minitorch_ln.apps import corpus as corpus_mod
from minitorch_ln.apps.checkpoint import LOCK_FILE, RunLock, latest_step, read_checkpoint
from minitorch_ln.apps.cli import main
from minitorch_ln.apps.corpus import CorpusError, clean_text, load_text, load_text_ids
from minitorch_ln.apps.dataset import TokenDataset
from minitorch_ln.apps.tokenizer import CharTokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORDS = "norm layer batch token mean variance gradient scale shift residual attention head".split()

# ------------------------------------------------------------------------------------------ strategies
# text with everything clean_text touches: \r, \r\n, tabs, trailing (also non-ASCII) whitespace, multibyte
_messy_text = st.text(alphabet=st.sampled_from(list("ab c\t\r\n\x0c\u00e9\u2028\u3000\U0001f600 ")), max_size=80)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    rng = np.random.default_rng(1)
    path = tmp_path_factory.mktemp("corpus") / "words.txt"
    path.write_text(" ".join(rng.choice(WORDS, size=1200)) + "\n", encoding="utf-8")
    return path


def small(corpus, out, *extra, steps=4):
    return ["train", "--text", str(corpus), "--steps", str(steps), "--batch-size", "4", "--block-size", "16",
            "--warmup-steps", "1", "--eval-interval", "2", "--eval-batches", "1", "--out", str(out), "--no-progress",
            "--sample-chars", "20", *extra]


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ROOT, env.get("PYTHONPATH", "")])
    return env


# ------------------------------------------------------------------------------------------ bounded reading


@given(st.lists(_messy_text, max_size=6), st.integers(1, 6))
def test_cleaning_piece_by_piece_equals_cleaning_the_whole(pieces, line_limit):
    assert "".join(corpus_mod._clean_pieces(pieces, line_limit)) == clean_text("".join(pieces))


@given(_messy_text.filter(lambda t: t.strip()), st.integers(1, 9))
def test_ids_read_in_chunks_equal_the_in_memory_encoding(tmp_path_factory, text, chunk):
    p = tmp_path_factory.mktemp("t") / "t.txt"
    p.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))  # chunks cut through the mark and multibyte characters
    whole = load_text(p)
    c = load_text_ids(p, chunk_bytes=chunk)
    assert c.text is None and c.ids.dtype == np.uint16
    assert (c.num_chars, c.sha256) == (whole.num_chars, whole.sha256)
    tok = CharTokenizer.from_text(whole.text)
    assert list(c.chars) == tok.chars
    np.testing.assert_array_equal(np.asarray(c.ids), tok.encode(whole.text))
    assert c.sha256 == hashlib.sha256(whole.text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize("content, message", [
    (b"\xef\xbb\xbfcaf\xe9", "not valid UTF-8 (byte 0xe9 at offset 6)"),
    (b"x" * 10 + b"caf\xe9 au lait", "not valid UTF-8 (byte 0xe9 at offset 13)"),  # past the first chunks
    (b"abc\xe2\x82", "not valid UTF-8 (byte 0xe2 at offset 3)"),  # cut at the end of the file
    (b" \n\t" * 5, "has no text besides whitespace"),
])
def test_chunked_reading_reports_as_the_whole_file_does(tmp_path, content, message):
    p = tmp_path / "t.txt"
    p.write_bytes(content)
    for read in (load_text, lambda q: load_text_ids(q, chunk_bytes=2)):
        with pytest.raises(CorpusError, match=message.replace("(", r"\(").replace(")", r"\)")):
            read(p)


def test_memory_does_not_grow_with_the_text(tmp_path):
    line = "the layer norm keeps each token on its own scale\n"
    peaks = []
    for mb in (2, 8):
        p = tmp_path / f"{mb}.txt"
        p.write_text(line * (mb * 2**20 // len(line)), encoding="utf-8")
        tracemalloc.start()
        c = load_text_ids(p, chunk_bytes=1 << 19)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert c.num_chars == os.path.getsize(p) and len(c.ids) == c.num_chars
    # the whole text in memory (as `train --text` read it before) took about 25 bytes a character;
    # here the peak (chunks, a 4 MiB code-point table) is the same for 2 and 8 MiB of text
    assert peaks[1] < 1.2 * peaks[0] and peaks[1] < 4 * 8 * 2**20, peaks


def test_dev_zero_is_refused_at_once_in_one_line(tmp_path, capsys):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    t0 = time.perf_counter()
    assert main(small("/dev/zero", tmp_path / "run")) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "looks like a binary file" in err
    assert time.perf_counter() - t0 < 30 and not (tmp_path / "run").exists()


def _little_free_space(monkeypatch, usable):
    real = corpus_mod.shutil.disk_usage

    def fake(path):
        u = real(path)
        return type(u)(u.total, u.used, corpus_mod._SPARE_BYTES + usable)

    monkeypatch.setattr(corpus_mod.shutil, "disk_usage", fake)


def test_a_text_larger_than_the_free_space_is_refused_before_reading(tmp_path, monkeypatch):
    big = tmp_path / "big.txt"
    with open(big, "wb") as f:
        f.truncate(1 << 30)  # a sparse 1 GiB file: at least 256 Mi characters, 512 MiB of token ids
    _little_free_space(monkeypatch, 64 << 20)
    # refused from its size alone: had it been read, its NUL bytes would have been the error
    with pytest.raises(CorpusError, match=r"too large to train on here: its token ids need at least 268,435,456 "
                                          r"characters x 2 bytes .* more than the 0.06 GiB free there: set TMPDIR"):
        load_text_ids(big)


def test_an_endless_stream_is_refused_when_the_space_runs_out(tmp_path, monkeypatch):
    fifo = tmp_path / "endless"
    os.mkfifo(fifo)
    stop = threading.Event()

    def writer():
        try:
            with open(fifo, "wb") as f:
                while not stop.is_set():
                    f.write(b"the layer norm keeps each token on its scale\n" * 1000)
        except BrokenPipeError:
            pass

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    _little_free_space(monkeypatch, 4 << 20)  # room for 2 Mi characters
    try:
        with pytest.raises(CorpusError, match="too large to train on here: its token ids need more than"):
            load_text_ids(fifo, chunk_bytes=1 << 18)
    finally:
        stop.set()
    thread.join(timeout=10)


def test_training_reads_the_text_as_a_memmap_and_batches_are_int64(corpus):
    c = load_text_ids(corpus)
    data = TokenDataset(c.ids, val_fraction=0.1)
    assert isinstance(c.ids, np.memmap) and data.splits["train"].dtype == np.uint16
    x, y = data.get_batch("train", 4, 16)
    assert x.dtype == mt.int64 and x.shape == (4, 16) and (x.numpy()[:, 1:] == y.numpy()[:, :-1]).all()
    ref = TokenDataset(CharTokenizer.from_text(load_text(corpus).text).encode(load_text(corpus).text))
    assert data.unigram_loss(np.arange(5), len(c.chars)) == ref.unigram_loss(np.arange(5), len(c.chars))


# ------------------------------------------------------------------------------------------ a full disk


def test_a_full_disk_while_writing_a_checkpoint_is_one_line_and_keeps_the_last(corpus, tmp_path, capsys, monkeypatch):
    real_save, calls = checkpoint_mod.save, []

    def save_on_a_full_disk(obj, path, **kw):
        calls.append(path)
        if len(calls) <= 2:  # the first checkpoint (model and optimizer files) fits
            return real_save(obj, path, **kw)
        with open(path, "wb") as f:  # the disk fills up halfway through the file
            f.write(b"\x00" * 100)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)

    monkeypatch.setattr(checkpoint_mod, "save", save_on_a_full_disk)
    out = tmp_path / "run"
    assert main(small(corpus, out)) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"minitorch-ln train: error: could not write the checkpoint of step 4 into {out}: "
                          "No space left on device; the previous checkpoint (step 2) is intact")
    assert latest_step(out) == 2 and read_checkpoint(out)["state"]["step"] == 2  # hash-checked: intact
    assert sorted(os.listdir(out)) == ["ckpt-00000002", "latest", "metrics.jsonl"]  # no partial files, no lock


def test_a_full_disk_elsewhere_in_the_run_is_one_line(corpus, tmp_path, capsys, monkeypatch):
    from minitorch_ln import serialization

    real = serialization.atomic_write_text

    def full_at_the_sample(path, text):
        if os.path.basename(path) != "sample.txt":
            return real(path, text)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(serialization, "atomic_write_text", full_at_the_sample)  # the end of the run
    out = tmp_path / "run"
    assert main(small(corpus, out)) == 1
    err = capsys.readouterr().err
    assert err == (f"minitorch-ln train: error: cannot write into --out {out} ({out / 'sample.txt'}): "
                   "No space left on device\n")
    assert latest_step(out) == 4 and not (out / LOCK_FILE).exists()


# ------------------------------------------------------------------------------------------ one run at a time


def test_a_second_run_into_a_locked_out_is_refused_naming_the_first(corpus, tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    with RunLock(out):
        assert main(small(corpus, out)) == 1
        err = capsys.readouterr().err
        assert f"is in use by another `minitorch-ln train` run (process {os.getpid()})" in err
        assert err.count("\n") == 1
        assert main(["train", "--out", str(out), "--resume", "--no-progress"]) == 1
        assert f"process {os.getpid()}" in capsys.readouterr().err
        assert sorted(os.listdir(out)) == [LOCK_FILE]
    assert os.listdir(out) == []  # released and removed
    assert main(small(corpus, out, steps=2)) == 0


def test_a_crashed_run_leaves_no_stale_lock(corpus, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    code = ("import os, signal, sys; from minitorch_ln.apps.checkpoint import RunLock; "
            "RunLock(sys.argv[1]).acquire(); os.kill(os.getpid(), signal.SIGKILL)")
    proc = subprocess.run([sys.executable, "-c", code, str(out)], env=_env(), timeout=120)
    assert proc.returncode == -signal.SIGKILL and (out / LOCK_FILE).exists()  # the file stays, the lock does not
    with RunLock(out):
        assert (out / LOCK_FILE).read_text().strip() == str(os.getpid())
    assert main(small(corpus, out, steps=2)) == 0  # the leftover lock file is not "someone else's file"


def test_sigterm_is_ctrl_c_and_the_lock_holds_until_then(corpus, tmp_path, capsys):
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "minitorch_ln", *small(corpus, out, steps=100000)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    metrics = out / "metrics.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and not (metrics.exists() and metrics.read_text().count('"lr"') >= 3):
        time.sleep(0.1)
    try:
        assert main(small(corpus, out)) == 1  # a second run into the same --out, while the first trains
        assert f"(process {proc.pid})" in capsys.readouterr().err
    finally:
        proc.send_signal(signal.SIGTERM)  # a plain `kill`
        stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "interrupted by SIGTERM at step" in stdout and "--resume" in stdout
    step = latest_step(out)
    assert step >= 3 and not (out / LOCK_FILE).exists()
    assert main(["train", "--out", str(out), "--resume", "--steps", str(step + 1), "--no-progress",
                 "--sample-chars", "5"]) == 0


# ------------------------------------------------------------------------------------------ --lr 1e300


def test_a_huge_learning_rate_prints_no_raw_numpy_warnings(corpus, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "minitorch_ln", *small(corpus, tmp_path / "run", "--lr", "1e300")],
                          capture_output=True, text=True, timeout=300, env=_env())
    assert proc.returncode == 3, proc.stderr
    assert "RuntimeWarning" not in proc.stderr and proc.stderr.strip() == "", proc.stderr
    assert "made parameter" in proc.stdout and "lower --lr" in proc.stdout


# ------------------------------------------------------------------------------------------ README figures


def _readme_figures_script():
    spec = importlib.util.spec_from_file_location("readme_figures", os.path.join(ROOT, "scripts", "readme_figures.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_readme_shows_the_figures_of_the_recorded_run():
    rf = _readme_figures_script()
    with open(rf.RECORD, encoding="utf-8") as f:
        values = rf.figures(rf.parse_record(f.read()))  # every expression finds its figure in the record
    with open(rf.README, encoding="utf-8") as f:
        readme = f.read()
    assert rf.differences(readme, values) == []
    assert rf.readme_figures(readme) == values
    assert rf.write_readme(readme, values) == readme


def test_the_figure_expressions_read_what_the_examples_print_today():
    pytest.importorskip("matplotlib")
    rf = _readme_figures_script()
    out = rf.run_example("covariate_shift", fast=True)  # seconds; the other example is checked by the record
    with open(rf.RECORD, encoding="utf-8") as f:
        record = rf.parse_record(f.read())
    got = rf.figures({**record, "covariate_shift": out})
    assert all(float(v) >= 0 for v in got.values())
    # the record is real output of today's example: the same lines, with the full run's numbers
    strip = lambda s: [re.sub(r"\d+\.\d+", "#", line) for line in s.splitlines()]  # noqa: E731
    assert strip(out) == strip(record["covariate_shift"])


def test_readme_says_graph_needs_graphviz_dot():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    assert "needs Graphviz's `dot`" in text


# ------------------------------------------------------------------------------------------ sample


@pytest.fixture(scope="module")
def run_dir(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("sample") / "run"
    assert main(small(corpus, out)) == 0
    return out


def test_greedy_decoding_is_the_argmax_and_ignores_the_seed(run_dir, capsys):
    outs = []
    for seed in ("0", "7"):
        assert main(["sample", "--checkpoint", str(run_dir), "--temperature", "0", "--seed", seed,
                     "--prompt", "norm", "--max-new-tokens", "12"]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]
    from minitorch_ln.apps.sampling import load_model

    model, tok, _ = load_model(run_dir)
    ids = list(tok.encode("norm"))
    with mt.no_grad():
        for _ in range(12):
            logits = model(mt.tensor(np.array([ids[-model.config.block_size:]])))  # (1, T, V)
            ids.append(int(np.argmax(logits.numpy()[0, -1])))
    assert outs[0] == tok.decode(ids) + "\n"


def _torch_weights(tmp_path, cfg, tied=False):
    """A PyTorch GPT (the same-named twin) saved with safetensors.torch; its greedy continuation of [1, 2, 3]."""
    torch = pytest.importorskip("torch")
    st_torch = pytest.importorskip("safetensors.torch")
    from minitorch_ln.interop.torch_models import torch_gpt

    torch.manual_seed(0)
    theirs = torch_gpt(cfg).eval()
    path = tmp_path / "torch_gpt.safetensors"
    if tied:  # save_model drops one of two tied tensors, as safetensors wants
        st_torch.save_model(theirs, str(path))
    else:
        st_torch.save_file(theirs.state_dict(), str(path))
    ids = [1, 2, 3]
    with torch.no_grad():
        for _ in range(6):
            out = theirs(torch.tensor([ids[-cfg.block_size:]]))
            logits = out[0] if isinstance(out, tuple) else out
            ids.append(int(logits[0, -1].argmax()))
    return path, ids


def test_sample_reads_a_pytorch_safetensors_file_with_a_json_config(tmp_path, capsys):
    cfg = mt.nn.GPTConfig(vocab_size=11, block_size=8, n_layer=2, n_head=2, d_model=16)
    path, expected = _torch_weights(tmp_path, cfg)
    config = json.dumps({"n_layer": 2, "n_head": 2, "d_model": 16})  # vocab and context: from the shapes
    assert main(["sample", "--checkpoint", str(path), "--config", config, "--temperature", "0",
                 "--prompt", "1 2 3", "--max-new-tokens", "6"]) == 0
    assert capsys.readouterr().out.split() == [str(i) for i in expected]


def test_sample_reads_a_tied_pytorch_file_with_preset_flags_and_a_vocabulary(tmp_path, capsys):
    cfg = mt.nn.GPTConfig.preset("tiny", vocab_size=12, n_layer=1, block_size=8, tie_weights=True)
    path, expected = _torch_weights(tmp_path, cfg, tied=True)
    text = tmp_path / "text.txt"
    text.write_text("abcdefghijk\n", encoding="utf-8")  # 12 characters: "\n" a b ... k
    cfg_file = tmp_path / "cfg.json"
    cfg_file.write_text(json.dumps({"tie_weights": True}))
    assert main(["sample", "--checkpoint", str(path), "--preset", "tiny", "--n-layer", "1", "--block-size", "8",
                 "--config", str(cfg_file), "--vocab-from", str(text), "--temperature", "0",
                 "--prompt", "abc", "--max-new-tokens", "6"]) == 0
    tok = CharTokenizer.from_text("abcdefghijk\n")
    assert capsys.readouterr().out == tok.decode(expected) + "\n"


def test_sample_reads_a_runs_own_weights_with_its_config_json(run_dir, capsys):
    ckpt = read_checkpoint(run_dir)["dir"]
    args = ["--temperature", "0", "--prompt", "norm", "--max-new-tokens", "10"]
    assert main(["sample", "--checkpoint", str(run_dir), *args]) == 0
    expected = capsys.readouterr().out
    assert main(["sample", "--checkpoint", os.path.join(ckpt, "model.safetensors"), "--config",
                 os.path.join(ckpt, "config.json"), *args]) == 0
    assert capsys.readouterr().out == expected


@pytest.mark.parametrize("extra, message", [
    ([], "holds no model configuration: give it with --config"),
    (["--preset", "tiny", "--n-layer", "3"], "do not fit the model configuration"),
    (["--config", "{not json"], "is not valid JSON"),
    (["--config", '{"n_heads": 2}'], "unknown keys ['n_heads']"),
    (["--preset", "tiny", "--vocab-from", "TEXT"], "has 3 distinct characters, but the model has"),
])
def test_sample_bare_file_errors_are_one_line(run_dir, tmp_path, capsys, extra, message):
    ckpt = read_checkpoint(run_dir)["dir"]
    text = tmp_path / "t.txt"
    text.write_text("ab\n")
    extra = [str(text) if e == "TEXT" else e for e in extra]
    assert main(["sample", "--checkpoint", os.path.join(ckpt, "model.safetensors"), *extra]) == 1
    err = capsys.readouterr().err
    assert message in err and err.startswith("minitorch-ln sample: error: ")


def test_sample_config_flags_with_a_checkpoint_directory_are_refused(run_dir, capsys):
    assert main(["sample", "--checkpoint", str(run_dir), "--preset", "tiny"]) == 1
    assert "--preset apply to a bare .safetensors weights file only" in capsys.readouterr().err

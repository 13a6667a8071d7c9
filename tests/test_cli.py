"""The ``minitorch-ln`` command: train, sample, gradcheck, info; every bad input a clear message."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import minitorch_ln as mt
from minitorch_ln.cli import build_parser, main
from minitorch_ln.gradcheck_targets import TARGETS

WORDS = "norm layer batch token mean variance gradient scale shift residual attention head".split()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    rng = np.random.default_rng(1)
    path = tmp_path_factory.mktemp("corpus") / "words.txt"
    path.write_text(" ".join(rng.choice(WORDS, size=1200)) + "\n", encoding="utf-8")
    return path


def small(corpus, out, *extra):
    return ["train", "--text", str(corpus), "--steps", "4", "--batch-size", "4", "--block-size", "16",
            "--warmup-steps", "1", "--eval-interval", "2", "--eval-batches", "1", "--out", str(out), "--no-progress",
            "--sample-chars", "30", *extra]


@pytest.fixture(scope="module")
def run_dir(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "run"
    assert main(small(corpus, out)) == 0
    return out


def test_train_prints_baseline_sample_and_ratio(corpus, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(small(corpus, out)) == 0
    printed = capsys.readouterr().out
    assert f"the text file {corpus}" in printed
    assert "unigram baseline" in printed and "--- sample" in printed
    assert "x the unigram baseline" in printed and "0.7x target" in printed
    assert (out / "latest").exists() and (out / "metrics.jsonl").exists()


def test_help_describes_the_default_corpus(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["train", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert "docstrings" in text and "standard library" in text and "SHA-256" in text
    for flag in ("--text", "--preset", "--steps", "--batch-size", "--block-size", "--lr", "--warmup-steps", "--norm",
                 "--device", "--seed", "--out", "--resume", "--eval-interval"):
        assert flag in text


def test_info_still_works(capsys):
    assert main(["info"]) == 0
    assert "minitorch_ln" in capsys.readouterr().out


def test_every_subcommand_is_registered():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert {"info", "train", "sample", "gradcheck"} <= set(sub.choices)


# ------------------------------------------------------------------------------------------ sample


@pytest.mark.parametrize("n", [0, 1, 25])
def test_sample_has_the_requested_length(run_dir, capsys, n):
    assert main(["sample", "--checkpoint", str(run_dir), "--prompt", "norm ", "--max-new-tokens", str(n)]) == 0
    text = capsys.readouterr().out
    assert text.endswith("\n")
    body = text[:-1]  # print() adds one newline
    assert body.startswith("norm ") and len(body) == len("norm ") + n


def test_sample_is_seeded(run_dir, capsys):
    args = ["sample", "--checkpoint", str(run_dir), "--max-new-tokens", "40", "--top-k", "3", "--temperature", "0.7"]
    main(args + ["--seed", "1"])
    a = capsys.readouterr().out
    main(args + ["--seed", "1"])
    b = capsys.readouterr().out
    assert a == b and len(a) == 1 + 40 + 1  # prompt "\n", 40 characters, final newline


@pytest.mark.parametrize("args, message", [
    (["--prompt", "xyz\u00e9"], "character 'x' (U+0078) at position 0 is not in the vocabulary"),
    (["--temperature", "0"], "--temperature must be > 0"),
    (["--max-new-tokens", "-1"], "--max-new-tokens must be >= 0"),
    (["--top-k", "0"], "--top-k must be >= 1"),
    (["--prompt", ""], "the prompt is empty"),
])
def test_sample_bad_input(run_dir, capsys, args, message):
    assert main(["sample", "--checkpoint", str(run_dir), *args]) == 1
    assert message in capsys.readouterr().err


def test_sample_missing_or_corrupt_checkpoint(run_dir, tmp_path, capsys):
    assert main(["sample", "--checkpoint", str(tmp_path / "nope")]) == 1
    assert "does not exist" in capsys.readouterr().err
    assert main(["sample", "--checkpoint", str(tmp_path)]) == 1
    assert "holds no checkpoint" in capsys.readouterr().err
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(run_dir, bad)
    ckpt = bad / (bad / "latest").read_text().strip() / "model.safetensors"
    ckpt.write_bytes(ckpt.read_bytes()[:-100])
    assert main(["sample", "--checkpoint", str(bad)]) == 1
    assert "corrupt or truncated" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ train: bad input


def _bad_train(tmp_path, capsys, args, message):
    out = tmp_path / "out"
    assert main(["train", *args, "--out", str(out), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("minitorch-ln train: error: ") and message in err, err
    assert "Traceback" not in err
    assert not out.exists()  # nothing written


@pytest.mark.parametrize("content, message", [
    (None, "does not exist"),
    (b"", "is empty"),
    (b"GIF89a\x00\x00\x01", "looks like a binary file"),
    (b"na\xefve", "is not valid UTF-8 (byte 0xef at offset 2)"),
])
def test_train_bad_text_file(tmp_path, capsys, content, message):
    path = tmp_path / "t.txt"
    if content is not None:
        path.write_bytes(content)
    _bad_train(tmp_path, capsys, ["--text", str(path)], message)


def test_train_context_longer_than_the_corpus(tmp_path, capsys):
    path = tmp_path / "t.txt"
    path.write_text("a short text of a few words.\n" * 3)
    _bad_train(tmp_path, capsys, ["--text", str(path), "--block-size", "64"],
               "the context length 64 is too long for this corpus")


def test_train_unknown_device(corpus, tmp_path, capsys):
    _bad_train(tmp_path, capsys, ["--text", str(corpus), "--device", "tpu"], "unknown device 'tpu'")


def test_train_cuda_without_a_gpu_names_the_extra(corpus, tmp_path, capsys):
    if mt.cuda_is_available():
        pytest.skip("a GPU is usable here")
    out = tmp_path / "out"
    assert main(["train", "--text", str(corpus), "--device", "cuda", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "minitorch-ln[cuda12]" in err and "minitorch-ln[cuda13]" in err
    assert not out.exists()


def test_train_bad_numbers(corpus, tmp_path, capsys):
    _bad_train(tmp_path, capsys, ["--text", str(corpus), "--steps", "-3"], "--steps must be a positive integer")
    _bad_train(tmp_path, capsys, ["--text", str(corpus), "--lr", "0"], "--lr must be a positive number")


def test_train_argparse_rejects_bad_choices(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["train", "--norm", "sideways"])
    assert exc.value.code == 2
    assert "invalid choice: 'sideways'" in capsys.readouterr().err


def test_resume_changed_option_is_refused(run_dir, capsys):
    before = (run_dir / "metrics.jsonl").read_bytes()
    assert main(["train", "--out", str(run_dir), "--resume", "--batch-size", "9", "--no-progress"]) == 1
    assert "only --steps and --device may change" in capsys.readouterr().err
    assert (run_dir / "metrics.jsonl").read_bytes() == before


def test_resume_corrupt_checkpoint(run_dir, tmp_path, capsys):
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(run_dir, bad)
    state = bad / (bad / "latest").read_text().strip() / "optimizer.safetensors"
    raw = bytearray(state.read_bytes())
    raw[-1] ^= 1
    state.write_bytes(bytes(raw))
    listing = sorted(os.listdir(bad))
    assert main(["train", "--out", str(bad), "--resume", "--steps", "6", "--no-progress"]) == 1
    assert "optimizer.safetensors is corrupt or truncated" in capsys.readouterr().err
    assert sorted(os.listdir(bad)) == listing and state.read_bytes() == bytes(raw)


def test_fresh_train_into_an_existing_run_is_refused(run_dir, corpus, capsys):
    assert main(small(corpus, run_dir)) == 1
    assert "already holds a run" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ gradcheck


@pytest.mark.parametrize("name", list(TARGETS))
def test_gradcheck_passes(name, capsys):
    assert main(["gradcheck", name]) == 0
    out = capsys.readouterr().out
    assert "PASSED" in out and "max |analytical - numerical|" in out


def test_gradcheck_shape_and_list(capsys):
    assert main(["gradcheck", "layer_norm", "--shape", "3", "5"]) == 0
    assert "input (3, 5), weight (5,), bias (5,)" in capsys.readouterr().out
    assert main(["gradcheck", "--list"]) == 0
    listing = capsys.readouterr().out
    assert all(n in listing for n in ("layer_norm", "rms_norm", "batch_norm", "embedding", "attention", "linear"))


def test_gradcheck_float32_shows_a_failure(capsys):
    assert main(["gradcheck", "softmax", "--dtype", "float32"]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "rerun in float64" in out


@pytest.mark.parametrize("args, message", [
    (["conv2d"], "unknown gradcheck target 'conv2d'"),
    (["layer_norm", "--shape", "1", "2", "3", "4", "5"], "layer_norm takes a shape of 2 or 3 or 4 dimensions"),
    (["linear", "--shape", "0", "3"], "every size in --shape must be >= 1"),
    (["linear", "--eps", "0"], "--eps must be > 0"),
    (["linear", "--device", "tpu"], "unknown device 'tpu'"),
    ([], "name an op or module to check"),
])
def test_gradcheck_bad_input(capsys, args, message):
    assert main(["gradcheck", *args]) == 1
    assert message in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ real processes


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")])
    return env


def test_python_dash_m_entry_point(corpus, tmp_path):
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "minitorch_ln", *small(corpus, out)], capture_output=True,
                          text=True, timeout=300, env=_env())
    assert proc.returncode == 0, proc.stderr
    assert "held-out loss" in proc.stdout


def test_ctrl_c_saves_and_resume_finishes(corpus, tmp_path):
    out = tmp_path / "run"
    args = small(corpus, out)
    args[args.index("--steps") + 1] = "100000"
    proc = subprocess.Popen([sys.executable, "-m", "minitorch_ln", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env())
    metrics = out / "metrics.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and not (metrics.exists() and metrics.read_text().count('"lr"') >= 3):
        time.sleep(0.1)  # until three training steps are logged
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "interrupted at step" in stdout and "--resume" in stdout
    step = int((out / "latest").read_text().strip().split("-")[1])
    assert step >= 3
    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    assert max(r["step"] for r in records) == step
    # continue to a total of step + 2 steps
    assert main(["train", "--out", str(out), "--resume", "--steps", str(step + 2), "--no-progress", "--sample-chars", "10"]) == 0
    assert (out / "latest").read_text().strip() == f"ckpt-{step + 2:08d}"


def test_sample_and_gradcheck_on_cuda_without_a_gpu(run_dir, capsys):
    if mt.cuda_is_available():
        pytest.skip("a GPU is usable here")
    assert main(["sample", "--checkpoint", str(run_dir), "--device", "cuda"]) == 1
    assert "minitorch-ln[cuda12]" in capsys.readouterr().err
    assert main(["gradcheck", "layer_norm", "--device", "cuda"]) == 1
    assert "minitorch-ln[cuda13]" in capsys.readouterr().err

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
from minitorch_ln.apps.cli import build_parser, main
from minitorch_ln.apps.gradcheck_targets import TARGETS

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
    assert "x the unigram baseline" in printed
    assert "0.7x target" not in printed  # the target was set for the built-in corpus, not for this text
    assert f"weights: {out / 'ckpt-00000004' / 'model.safetensors'}" in printed  # the real path
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


def test_info_still_works(capsys, monkeypatch):
    from minitorch_ln import kernels

    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "minitorch_ln" in out
    assert f"cpu kernels  {kernels.get_cpu_kernels()}, {kernels.get_num_threads()} thread(s)" in out
    monkeypatch.setitem(sys.modules, "numba", None)  # as if Numba were not installed
    assert main(["info"]) == 0
    assert "numba        not installed" in capsys.readouterr().out


def test_a_closed_pipe_ends_quietly():
    # `minitorch-ln info | head -1`: once the reader is gone, writes fail with EPIPE; the command
    # stops with the shell's SIGPIPE status and no traceback.
    r, w = os.pipe()
    os.close(r)  # the reader is gone before the first write
    try:
        out = subprocess.run([sys.executable, "-m", "minitorch_ln", "info"], stdout=w, stderr=subprocess.PIPE,
                             text=True, timeout=120)
    finally:
        os.close(w)
    assert out.returncode == 141, out.stderr
    assert "Traceback" not in out.stderr


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
    (["--temperature", "-1"], "--temperature must be >= 0"),  # 0 is greedy decoding (issue 15)
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


@pytest.mark.parametrize("n", ["100000000000", "100001", "-1"])
def test_train_refuses_a_sample_too_long_to_generate_before_training(tmp_path, capsys, n):
    # the preview is sampled one forward pass per character after training: 1e11 of them was accepted and
    # hung after the run. Refused first, before the text is even read (this one does not exist).
    _bad_train(tmp_path, capsys, ["--text", str(tmp_path / "missing.txt"), "--steps", "2", "--sample-chars", n],
               "--sample-chars must be")


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
    assert "already holds a run (checkpoint at step 4): pass --resume" in capsys.readouterr().err


@pytest.mark.parametrize("command", [
    ["train", "--text", "TEXT", "--out", "OUT"],
    ["sample", "--checkpoint", "OUT"],
    ["gradcheck", "layer_norm"],
    ["graph", "layer_norm", "--out", "-"],
])
def test_a_negative_seed_is_named(command, corpus, tmp_path, capsys):
    args = [str(corpus) if a == "TEXT" else str(tmp_path / "out") if a == "OUT" else a for a in command]
    assert main([*args, "--seed", "-1"]) == 1
    err = capsys.readouterr().err
    assert err == f"minitorch-ln {command[0]}: error: --seed must be an integer >= 0 (and < 2**64), got -1\n"
    assert not (tmp_path / "out").exists()


def test_train_corpus_with_one_distinct_character(tmp_path, capsys):
    path = tmp_path / "aaa.txt"
    path.write_text("a" * 500)
    _bad_train(tmp_path, capsys, ["--text", str(path)], "has only 1 distinct character ('a'): expected at least 2")


def test_train_text_from_stdin_is_refused_clearly(tmp_path, capsys):
    _bad_train(tmp_path, capsys, ["--text", "-"], "--text -: reading the text from standard input is not supported")


def test_train_whitespace_only_text(tmp_path, capsys):
    path = tmp_path / "t.txt"
    path.write_text("  \n\t\n")
    _bad_train(tmp_path, capsys, ["--text", str(path)], "has no text besides whitespace")


def test_train_out_of_memory_is_one_line(corpus, tmp_path, capsys, monkeypatch):
    import minitorch_ln.apps.train as train_mod

    def build(cfg, vocab_size):
        raise MemoryError  # what NumPy raises (as _ArrayMemoryError) for --block-size 4096

    monkeypatch.setattr(train_mod, "build_model", build)
    assert main(small(corpus, tmp_path / "run")) == 1
    err = capsys.readouterr().err
    assert err.startswith("minitorch-ln train: error: out of memory") and err.count("\n") == 1
    assert "--batch-size" in err and "--block-size" in err and "--preset" in err


def test_train_unusable_out_paths(corpus, tmp_path, capsys):
    afile = tmp_path / "existing_file.txt"
    afile.write_text("keep me")
    cases = [(afile, "it is a file, expected a directory"), (afile / "sub", "is a file, not a directory")]
    if os.path.isdir("/proc/self"):
        cases.append(("/proc/x", "cannot be created"))
    for out, message in cases:
        assert main(["train", "--text", str(corpus), "--out", str(out), "--no-progress"]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"minitorch-ln train: error: cannot write to --out {out}: ") and message in err, err
        assert err.count("\n") == 1
    assert afile.read_text() == "keep me" and sorted(os.listdir(tmp_path)) == ["existing_file.txt"]


def test_a_run_that_stopped_before_its_first_checkpoint_can_be_started_again(corpus, tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "metrics.jsonl").write_text('{"step": 1, "loss": 3.0}\n{"step": 4, "event": "nonfinite"}\n')
    assert main(["train", "--out", str(out), "--resume", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "holds no checkpoint to resume (the run there stopped before its first checkpoint)" in err
    assert "without --resume" in err
    assert main(small(corpus, out)) == 0
    records = [json.loads(line) for line in open(out / "metrics.jsonl")]
    assert "nonfinite" not in str(records) and [r["step"] for r in records if "loss" in r][0] == 1
    (out / "notes.txt").write_text("mine")  # a file the trainer never writes: not a failed run's leftover
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    assert main(small(corpus, other)) == 1
    assert "already holds files that are not a run's checkpoint (notes.txt)" in capsys.readouterr().err


def test_short_run_caps_the_default_warmup(corpus, tmp_path, capsys):
    base = ["train", "--text", str(corpus), "--steps", "5", "--batch-size", "2", "--block-size", "8",
            "--eval-batches", "1", "--no-progress", "--sample-chars", "5"]
    assert main([*base, "--out", str(tmp_path / "a")]) == 0
    cfg = json.loads((tmp_path / "a" / "ckpt-00000005" / "config.json").read_text())
    assert cfg["train"]["warmup_steps"] == 0  # min(50, 5 // 10)
    capsys.readouterr()
    assert main([*base, "--warmup-steps", "50", "--out", str(tmp_path / "b")]) == 1  # given explicitly: an error
    assert "--lr-decay-steps must be larger than --warmup-steps (50)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    assert "capped at a tenth" in capsys.readouterr().out


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
    (["linear", "--eps", "0"], "--eps must be a finite number > 0 and <= 0.1"),
    (["layer_norm", "--eps", "1e300"], "--eps must be a finite number > 0 and <= 0.1"),
    (["layer_norm", "--eps", "nan"], "--eps must be a finite number > 0"),
    (["layer_norm", "--rtol", "nan"], "--rtol must be a finite number >= 0, got nan"),
    (["layer_norm", "--atol", "-1"], "--atol must be a finite number >= 0, got -1.0"),
    (["layer_norm", "--atol", "inf"], "--atol must be a finite number >= 0, got inf"),
    (["layer_norm", "--seed", "-1"], "--seed must be an integer >= 0"),
    (["layer_norm", "--shape", "-1", "3"], "every size in --shape must be >= 1, got '-1 3'"),
    (["layer_norm", "--shape", "2,-3"], "every size in --shape must be >= 1, got '2,-3'"),
    (["layer_norm", "--shape", "2,x"], "--shape expects integers like 2,3,4 or 2 3 4, got '2,x'"),
    (["linear", "--device", "tpu"], "unknown device 'tpu'"),
    ([], "name an op or module to check"),
])
def test_gradcheck_bad_input(capsys, args, message):
    assert main(["gradcheck", *args]) == 1
    err = capsys.readouterr().err
    assert err.startswith("minitorch-ln gradcheck: error: ") and message in err, err
    assert "Traceback" not in err


def test_gradcheck_takes_the_shape_with_commas_or_spaces(capsys):
    for shape in (["3,5"], ["3", "5"], ["3,", "5"]):
        assert main(["gradcheck", "layer_norm", "--shape", *shape]) == 0
        assert "input (3, 5), weight (5,), bias (5,)" in capsys.readouterr().out


def test_gradcheck_refuses_a_jacobian_too_large_before_building_it(capsys):
    t0 = time.perf_counter()
    assert main(["gradcheck", "layer_norm", "--shape", "200", "300"]) == 1
    err = capsys.readouterr().err
    assert "3,636,000,000 Jacobian entries" in err and "GiB" in err and "--fast-mode" in err and "--shape " in err
    assert err.count("\n") == 1
    assert main(["gradcheck", "layer_norm", "--shape", "100000,100000"]) == 1  # refused before the input exists
    assert "at least 10,000,000,000 Jacobian entries" in capsys.readouterr().err
    assert time.perf_counter() - t0 < 5


def test_gradcheck_fast_mode_takes_a_large_shape(capsys):
    assert main(["gradcheck", "layer_norm", "--shape", "200,300", "--fast-mode"]) == 0
    out = capsys.readouterr().out
    assert "input (200, 300)" in out and "fast mode" in out and "PASSED" in out


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

"""``minitorch-ln export`` and ``minitorch-ln sample --onnx``: the trained GPT through ONNX Runtime."""

from __future__ import annotations

import numpy as np
import pytest

from minitorch_ln.apps.cli import build_parser, main

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

WORDS = ["norm", "layer", "batch", "token", "mean", "variance", "gradient", "scale", "shift", "residual"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("onnx_cli")
    corpus = tmp / "words.txt"
    corpus.write_text(" ".join(np.random.default_rng(1).choice(WORDS, size=800)) + "\n", encoding="utf-8")
    run = tmp / "run"
    assert main(["train", "--text", str(corpus), "--steps", "3", "--batch-size", "4", "--block-size", "16",
                 "--warmup-steps", "1", "--eval-interval", "2", "--eval-batches", "1", "--out", str(run),
                 "--no-progress", "--sample-chars", "10"]) == 0
    path = tmp / "model.onnx"
    assert main(["export", "--checkpoint", str(run), str(path)]) == 0
    return run, path


def test_export_writes_a_checked_model_with_its_vocabulary(exported, capsys):
    _run, path = exported
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    meta = {p.key: p.value for p in model.metadata_props}
    assert meta["minitorch_ln.block_size"] == "16" and '"chars"' in meta["minitorch_ln.tokenizer"]
    assert [n.op_type for n in model.graph.node].count("LayerNormalization") == 2 * 4 + 1  # the tiny preset


@pytest.mark.parametrize("extra", [["--temperature", "0"], ["--seed", "3", "--top-k", "5"]])
def test_sample_through_onnx_runtime_equals_the_eager_sample(exported, capsys, extra):
    """Greedy decoding, and seeded sampling with the same generator: the same text as `sample` eager."""
    run, path = exported
    common = ["--prompt", "norm ", "--max-new-tokens", "40", *extra]
    assert main(["sample", "--checkpoint", str(run), *common]) == 0
    eager = capsys.readouterr().out
    assert main(["sample", "--onnx", str(path), *common]) == 0
    assert capsys.readouterr().out == eager
    assert len(eager) == len("norm ") + 40 + 1


def test_sample_onnx_bad_input_is_one_line(exported, tmp_path, capsys):
    _, path = exported
    assert main(["sample", "--onnx", str(tmp_path / "missing.onnx")]) == 1
    assert "no ONNX model at" in capsys.readouterr().err
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a model")
    assert main(["sample", "--onnx", str(junk)]) == 1
    assert "is not an ONNX model" in capsys.readouterr().err
    assert main(["sample", "--onnx", str(path), "--max-new-tokens", "-1"]) == 1
    assert main(["sample", "--onnx", str(path), "--prompt", "\u2603"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "max-new-tokens" in err


def test_export_of_a_missing_checkpoint_is_one_line(tmp_path, capsys):
    assert main(["export", "--checkpoint", str(tmp_path / "nope"), str(tmp_path / "m.onnx")]) == 1
    assert capsys.readouterr().err.count("\n") == 1


def test_export_is_registered():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert "export" in sub.choices

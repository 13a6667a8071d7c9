"""The trainer: end-to-end runs on a small generated corpus, exact resume, checkpoints, NaN stops."""

import json
import os
import signal

import numpy as np
import pytest

import minitorch_ln as mt
from minitorch_ln.apps.checkpoint import CheckpointError, latest_step, read_checkpoint, write_checkpoint
from minitorch_ln.apps.corpus import CorpusError
from minitorch_ln.apps.dataset import DatasetError
from minitorch_ln.apps.train import (
    EXIT_INTERRUPTED, EXIT_NONFINITE, EXIT_OK, ConfigError, TrainConfig, train,
)
from minitorch_ln.apps.sampling import load_model

SAMPLE = 40  # characters of the final sample (the default is longer)
WORDS = ("the layer norm keeps each token on its own scale while batch norm mixes the batch "
         "so the gradient of the mean and the variance flows back through every row ").split()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    rng = np.random.default_rng(0)
    path = tmp_path_factory.mktemp("corpus") / "words.txt"
    path.write_text(" ".join(rng.choice(WORDS, size=1500)) + "\n", encoding="utf-8")
    return path


# a tiny, fast run: context 16, batch 4, a few steps; dropout on so that the RNG state matters
def opts(corpus, **kw):
    base = dict(text=str(corpus), steps=8, batch_size=4, block_size=16, warmup_steps=2, eval_interval=4,
                eval_batches=2, dropout=0.1, seed=5)
    base.update(kw)
    return base


def losses(out_dir):
    with open(os.path.join(out_dir, "metrics.jsonl")) as f:
        return [(r["step"], r["loss"]) for r in map(json.loads, f) if "loss" in r and "event" not in r]


def weights(out_dir):
    ck = read_checkpoint(out_dir)
    return ck["model"], ck["optimizer"], ck["state"]["step"]


@pytest.fixture(scope="module")
def uninterrupted(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("full") / "run"
    summary = train(opts(corpus), out_dir=out, quiet=True, sample_chars=SAMPLE)
    return out, summary


def test_end_to_end_run_writes_everything(uninterrupted):
    out, summary = uninterrupted
    assert summary["exit_code"] == EXIT_OK and summary["step"] == 8
    assert latest_step(out) == 8
    # the loss curve is drawn only where matplotlib (the `plot` extra) is installed
    try:
        import matplotlib  # noqa: F401
        plots = ["loss.png"]
    except ImportError:
        plots = []
    assert sorted(os.listdir(out)) == sorted(["ckpt-00000008", "latest", "metrics.jsonl", "sample.txt", *plots])
    assert sorted(os.listdir(out / "ckpt-00000008")) == ["config.json", "model.safetensors", "optimizer.safetensors",
                                                          "state.json"]
    assert [s for s, _ in losses(out)] == list(range(1, 9))
    records = [json.loads(line) for line in open(out / "metrics.jsonl")]
    evals = [r for r in records if "val_loss" in r]
    assert [r["step"] for r in evals] == [4, 8]
    assert all(r["ratio"] == pytest.approx(r["val_loss"] / r["unigram_loss"]) for r in evals)
    # the sample: the prompt (a newline) and the requested number of generated characters
    sample = (out / "sample.txt").read_text()
    assert len(sample) == 1 + SAMPLE and sample == summary["sample"]
    assert 0.0 <= summary["corpus_word_fraction"] <= 1.0
    if plots:
        assert (out / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_config_records_corpus_and_schedule(uninterrupted, corpus):
    out, _ = uninterrupted
    cfg = json.loads((out / "ckpt-00000008" / "config.json").read_text())
    text = corpus.read_text()
    assert cfg["corpus"]["num_chars"] == len(text)
    import hashlib

    assert cfg["corpus"]["sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert cfg["train"]["lr_decay_steps"] == 8 and cfg["train"]["steps"] == 8
    assert cfg["model"]["block_size"] == 16 and cfg["model"]["vocab_size"] == len(set(text))


def test_the_learning_rate_follows_warmup_then_cosine(uninterrupted):
    out, _ = uninterrupted
    lrs = [json.loads(line)["lr"] for line in open(out / "metrics.jsonl") if '"lr"' in line]
    d = TrainConfig()
    # linear warm-up over 2 steps (from 0), then cosine from lr to min_lr at step 8
    expected = [0.0, d.lr / 2] + [d.min_lr + (d.lr - d.min_lr) * 0.5 * (1 + np.cos(np.pi * (t - 2) / 6)) for t in range(2, 8)]
    np.testing.assert_allclose(lrs, expected, rtol=1e-12)


def _interrupt_at(k):
    def on_step(step, loss):
        if step == k:
            os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C, caught by the trainer's handler
    return on_step


def test_ctrl_c_then_resume_equals_the_uninterrupted_run(uninterrupted, corpus, tmp_path):
    full_out, _ = uninterrupted
    out = tmp_path / "run"
    first = train(opts(corpus), out_dir=out, quiet=True, on_step=_interrupt_at(3), sample_chars=SAMPLE)
    assert first["exit_code"] == EXIT_INTERRUPTED and first["step"] == 3
    assert latest_step(out) == 3
    # as if the process had logged a step past its last checkpoint and died mid-line: resuming drops both
    with open(out / "metrics.jsonl", "a") as f:
        f.write(json.dumps({"step": 4, "loss": 99.0}) + "\n" + '{"step": 5, "lo')
    second = train({}, out_dir=out, resume=True, quiet=True, sample_chars=SAMPLE)
    assert second["exit_code"] == EXIT_OK and second["step"] == 8
    assert losses(out) == losses(full_out)  # same losses, step for step
    (wa, oa, sa), (wb, ob, sb) = weights(full_out), weights(out)
    assert sa == sb == 8 and list(wa) == list(wb)
    for k in wa:  # bit-identical weights on the CPU
        assert np.array_equal(wa[k].numpy(), wb[k].numpy()), k
    for i, st in oa["state"].items():  # and AdamW's moments
        for name in ("exp_avg", "exp_avg_sq"):
            assert np.array_equal(np.asarray(st[name]), np.asarray(ob["state"][i][name]))
    assert second["sample"] == uninterrupted[1]["sample"]
    assert second["val_loss"] == uninterrupted[1]["val_loss"]


def test_resume_with_more_steps_follows_the_saved_schedule(uninterrupted, corpus, tmp_path):
    full_out, _ = uninterrupted
    out = tmp_path / "run"
    # a run of 5 steps whose schedule decays over 8; continued to 8 it matches the 8-step run
    train(opts(corpus, steps=5, lr_decay_steps=8), out_dir=out, quiet=True, sample_chars=SAMPLE)
    assert latest_step(out) == 5
    train({"steps": 8}, out_dir=out, resume=True, quiet=True, sample_chars=SAMPLE)
    assert losses(out) == losses(full_out)
    wa, wb = weights(full_out)[0], weights(out)[0]
    assert all(np.array_equal(wa[k].numpy(), wb[k].numpy()) for k in wa)


def test_resume_refuses_changed_options_and_changes_nothing(uninterrupted, tmp_path):
    import shutil

    out = tmp_path / "run"
    shutil.copytree(uninterrupted[0], out)
    before = {p: (out / p).read_bytes() for p in ("latest", "metrics.jsonl", "ckpt-00000008/model.safetensors")}
    with pytest.raises(ConfigError, match=r"only --steps and --device may change.*--lr 0\.1 \(the run has 0\.003\).*"
                                          r"--batch-size 8 \(the run has 4\)"):
        train({"lr": 0.1, "batch_size": 8, "steps": 20}, out_dir=out, resume=True, quiet=True, sample_chars=SAMPLE)
    # giving an option with its saved value is not a change
    summary = train({"batch_size": 4, "steps": 8}, out_dir=out, resume=True, quiet=True, sample_chars=SAMPLE)
    assert summary["exit_code"] == EXIT_OK and summary["step"] == 8
    with pytest.raises(ConfigError, match="already at step 8, past --steps 5"):
        train({"steps": 5}, out_dir=out, resume=True, quiet=True, sample_chars=SAMPLE)
    assert {p: (out / p).read_bytes() for p in before} == before


def test_resume_refuses_a_changed_corpus(corpus, tmp_path):
    text = tmp_path / "t.txt"
    text.write_text(corpus.read_text())
    out = tmp_path / "run"
    train(opts(text, steps=4), out_dir=out, quiet=True, sample_chars=SAMPLE)
    text.write_text(corpus.read_text().replace("norm", "NORM"))
    with pytest.raises(ConfigError, match="the corpus has changed since the run started"):
        train({"steps": 6}, out_dir=out, resume=True, quiet=True, sample_chars=SAMPLE)


def test_fresh_run_into_a_used_directory_is_refused(uninterrupted, corpus):
    out = uninterrupted[0]
    before = (out / "metrics.jsonl").read_bytes()
    with pytest.raises(ConfigError, match="already holds a run .* pass --resume"):
        train(opts(corpus), out_dir=out, quiet=True, sample_chars=SAMPLE)
    assert (out / "metrics.jsonl").read_bytes() == before


def test_resume_without_a_checkpoint(tmp_path):
    with pytest.raises(CheckpointError, match="holds no checkpoint to resume"):
        train({}, out_dir=tmp_path / "nothing", resume=True, quiet=True, sample_chars=SAMPLE)


@pytest.mark.parametrize("kw, message", [
    (dict(steps=0), "--steps must be a positive integer, got 0"),
    (dict(norm="middle"), "--norm must be 'pre' or 'post'"),
    (dict(lr=-1.0), "--lr must be a positive number"),
    (dict(dropout=1.0), r"--dropout must be in \[0, 1\)"),
    (dict(warmup_steps=10, steps=8), "--lr-decay-steps must be larger than --warmup-steps"),
    (dict(preset="huge"), "--preset must be one of small, tiny"),
    (dict(block_size=4000), "context length 4000 is too long for this corpus"),
])
def test_bad_options_are_refused_before_writing(corpus, tmp_path, kw, message):
    out = tmp_path / "run"
    with pytest.raises((ConfigError, DatasetError), match=message):
        train(opts(corpus, **kw), out_dir=out, quiet=True, sample_chars=SAMPLE)
    assert not out.exists()


@pytest.mark.parametrize("content, message", [
    (b"", "is empty"), (b"\x00\x01\x02binary", "binary"), (b"\xff\xfe caf\xe9", "not valid UTF-8"),
])
def test_bad_text_files(tmp_path, content, message):
    path = tmp_path / "t.txt"
    path.write_bytes(content)
    with pytest.raises(CorpusError, match=message):
        train({"text": str(path)}, out_dir=tmp_path / "run", quiet=True, sample_chars=SAMPLE)
    assert not (tmp_path / "run").exists()


def test_cuda_without_a_gpu_names_the_extra(corpus, tmp_path):
    if mt.cuda_is_available():
        pytest.skip("a GPU is usable here")
    with pytest.raises(mt.backend.DeviceError, match=r"cuda12.*cuda13"):
        train(opts(corpus, device="cuda"), out_dir=tmp_path / "run", quiet=True, sample_chars=SAMPLE)
    with pytest.raises(mt.backend.DeviceError, match="unknown device 'tpu'"):
        train(opts(corpus, device="tpu"), out_dir=tmp_path / "run", quiet=True, sample_chars=SAMPLE)
    assert not (tmp_path / "run").exists()


def test_nan_loss_stops_naming_the_step_and_keeps_the_last_good_checkpoint(corpus, tmp_path):
    out = tmp_path / "run"

    def poison(step, loss):
        if step == 2:  # after step 2's checkpoint: a weight turns NaN, so step 3's loss is NaN
            w = next(iter(model_params()))
            w.array[...] = np.nan

    def model_params():
        return poison.model.parameters()

    import minitorch_ln.apps.train as train_mod

    real_build = train_mod.build_model

    def build(cfg, vocab_size):
        poison.model = real_build(cfg, vocab_size)
        return poison.model

    train_mod.build_model = build
    try:
        summary = train(opts(corpus, checkpoint_interval=1, dropout=0.0), out_dir=out, quiet=True, on_step=poison, sample_chars=SAMPLE)
    finally:
        train_mod.build_model = real_build
    assert summary["exit_code"] == EXIT_NONFINITE and summary["failed_step"] == 3
    assert latest_step(out) == 2
    ck = read_checkpoint(out)
    assert all(np.isfinite(t.numpy()).all() for t in ck["model"].values())
    # the NaN was planted in a weight: the report names it
    first = next(iter(dict(poison.model.named_parameters())))
    assert summary["anomaly"] == f"parameter '{first}' already held NaN/Inf before this step's forward pass"
    nonfinite = [json.loads(line) for line in open(out / "metrics.jsonl") if "nonfinite" in line]
    assert nonfinite and nonfinite[0]["step"] == 3


def test_diverging_run_stops_before_the_update(corpus, tmp_path):
    out = tmp_path / "run"
    with np.errstate(all="ignore"):
        summary = train(opts(corpus, lr=1e30, min_lr=0.0, warmup_steps=2, grad_clip=0.0, checkpoint_interval=1,
                             dropout=0.0, steps=6), out_dir=out, quiet=True, sample_chars=SAMPLE)
    assert summary["exit_code"] == EXIT_NONFINITE
    # step 1 runs at lr 0 (the warm-up starts at 0); then the weights blow up: either an update
    # overflows or the next loss is NaN, whichever comes first for this model
    failed = summary["failed_step"]
    assert failed >= 2
    assert latest_step(out) == failed - 1  # every completed step was checkpointed; the failed one was not
    assert "non-finite" in summary["anomaly"] or "NaN" in summary["anomaly"] or "Inf" in summary["anomaly"]
    # here (seeded) the weights grow until a forward overflows; the re-run under detect_anomaly names the op
    assert summary["anomaly"].startswith("detect_anomaly (re-running the step): the loss is not finite: the ")
    assert "came from op '" in summary["anomaly"]
    ck = read_checkpoint(out)  # and the checkpoint kept is a good one
    assert all(np.isfinite(t.numpy()).all() for t in ck["model"].values())


# ------------------------------------------------------------------------------------------ checkpoints


def test_checkpoint_loads_in_pytorch(uninterrupted):
    pytest.importorskip("torch")
    from safetensors.torch import load_file

    out = uninterrupted[0]
    theirs = load_file(out / "ckpt-00000008" / "model.safetensors")
    model, tok, config = load_model(out)
    ours = model.state_dict()
    assert set(theirs) == set(ours)
    for k, v in ours.items():
        np.testing.assert_array_equal(theirs[k].numpy(), v.numpy())
    assert tok.vocab_size == config["model"]["vocab_size"]


def test_corrupt_checkpoint_is_reported_and_left_alone(uninterrupted, tmp_path):
    import shutil

    out = tmp_path / "run"
    shutil.copytree(uninterrupted[0], out)
    model_file = out / "ckpt-00000008" / "model.safetensors"
    raw = bytearray(model_file.read_bytes())
    raw[len(raw) // 2] ^= 0x55
    model_file.write_bytes(bytes(raw))
    listing = sorted(os.listdir(out))
    with pytest.raises(CheckpointError, match="model.safetensors is corrupt or truncated"):
        train({"steps": 10}, out_dir=out, resume=True, quiet=True, sample_chars=SAMPLE)
    with pytest.raises(CheckpointError, match="corrupt"):
        load_model(out)
    assert model_file.read_bytes() == bytes(raw) and sorted(os.listdir(out)) == listing

    state = out / "ckpt-00000008" / "state.json"
    state.write_text(state.read_text()[:100])
    with pytest.raises(CheckpointError, match="state.json is unreadable or corrupt"):
        read_checkpoint(out)
    (out / "latest").write_text("ckpt-99999999\n")
    with pytest.raises(CheckpointError, match="names checkpoint 'ckpt-99999999', which does not exist"):
        read_checkpoint(out)


@pytest.mark.parametrize("field", ["step", "lr", "rng"])
def test_an_edited_state_json_is_refused(uninterrupted, tmp_path, field):
    # state.json holds what a resume continues from (the step, the random generators' states, the
    # optimizer's learning rates); only the other files were hashed, so one changed digit resumed silently
    # with other batches or a 10x learning rate. Its content now carries a SHA-256 of its own.
    import shutil

    out = tmp_path / "run"
    shutil.copytree(uninterrupted[0], out)
    path = out / "ckpt-00000008" / "state.json"
    state = json.loads(path.read_text())
    assert "state_sha256" in state and read_checkpoint(out)["state"]["step"] == 8
    if field == "step":
        state["step"] = 9
    elif field == "lr":
        group = state["optimizer"]["param_groups"][0]
        group["lr"] *= 10
    else:
        state["rng"] = json.loads(json.dumps(state["rng"]).replace("1", "2", 1))
    path.write_text(json.dumps(state) + "\n")
    listing = sorted(os.listdir(out))
    with pytest.raises(CheckpointError, match="state.json has been changed since it was written"):
        read_checkpoint(out)
    with pytest.raises(CheckpointError, match="state.json has been changed"):
        train({"steps": 10}, out_dir=out, resume=True, quiet=True, sample_chars=SAMPLE)
    assert sorted(os.listdir(out)) == listing
    del state["state_sha256"]  # no hash at all: refused as well, never trusted
    path.write_text(json.dumps(state) + "\n")
    with pytest.raises(CheckpointError, match="records none"):
        read_checkpoint(out)


def test_a_crash_while_writing_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    import minitorch_ln.apps.checkpoint as ckmod

    sd = {"w": mt.ones(3)}
    write_checkpoint(tmp_path, 1, sd, {"state": {}}, {"a": 1}, {"rng": {}})
    real_save = ckmod.save

    def crash(obj, path, metadata=None):
        if path.endswith("optimizer.safetensors"):
            raise KeyboardInterrupt
        real_save(obj, path, metadata)

    monkeypatch.setattr(ckmod, "save", crash)
    with pytest.raises(KeyboardInterrupt):
        write_checkpoint(tmp_path, 2, {"w": mt.zeros(3)}, {"state": {}}, {"a": 1}, {"rng": {}})
    assert latest_step(tmp_path) == 1
    assert sorted(os.listdir(tmp_path)) == ["ckpt-00000001", "latest"]
    assert read_checkpoint(tmp_path)["model"]["w"].tolist() == [1.0, 1.0, 1.0]
    monkeypatch.setattr(ckmod, "save", real_save)
    write_checkpoint(tmp_path, 2, {"w": mt.zeros(3)}, {"state": {}}, {"a": 1}, {"rng": {}})
    assert sorted(os.listdir(tmp_path)) == ["ckpt-00000002", "latest"]  # the old one is removed after the switch


def test_optimizer_state_round_trip(tmp_path):
    from minitorch_ln.apps.checkpoint import flatten_state, unflatten_state

    state = {"state": {0: {"step": 3, "exp_avg": mt.ones(2)}, 1: {"step": 3, "exp_avg": mt.zeros(1)}},
             "param_groups": [{"lr": 0.1, "betas": (0.9, 0.99), "params": [0, 1]}]}
    tensors = {}
    js = flatten_state(state, tensors)
    back = unflatten_state(json.loads(json.dumps(js)), tensors)
    assert back["state"][0]["step"] == 3 and back["state"][1]["exp_avg"] is tensors["s.state.1.exp_avg"]
    assert back["param_groups"][0]["betas"] == [0.9, 0.99]


def test_the_built_in_corpus_gets_the_verdict_and_is_named_on_resume(corpus, tmp_path, monkeypatch, capsys):
    import minitorch_ln.apps.train_setup as setup_mod
    from minitorch_ln.apps.corpus import load_text
    monkeypatch.setattr(setup_mod, "default_corpus", lambda: load_text(corpus))
    out = tmp_path / "run"
    kw = {k: v for k, v in opts(corpus, steps=4).items() if k != "text"}
    train(kw, out_dir=out, progress=False, sample_chars=SAMPLE)
    printed = capsys.readouterr().out
    assert "the 0.7x target)" in printed
    assert f"weights: {out / 'ckpt-00000004' / 'model.safetensors'}" in printed
    with pytest.raises(ConfigError, match=r"--text '.*' \(the run has the built-in corpus\)"):
        train({"text": str(corpus)}, out_dir=out, resume=True, quiet=True, sample_chars=SAMPLE)


def test_default_warmup_is_capped_for_short_runs(corpus, tmp_path):
    kw = {k: v for k, v in opts(corpus, steps=30).items() if k != "warmup_steps"}
    train(kw, out_dir=tmp_path / "run", quiet=True, sample_chars=SAMPLE)
    assert read_checkpoint(tmp_path / "run")["config"]["train"]["warmup_steps"] == 3  # min(50, 30 // 10)
    assert TrainConfig().warmup_steps == 50


def test_seed_must_be_non_negative(corpus, tmp_path):
    with pytest.raises(ConfigError, match=r"--seed must be an integer >= 0"):
        train(opts(corpus, seed=-1), out_dir=tmp_path / "run", quiet=True, sample_chars=SAMPLE)
    assert not (tmp_path / "run").exists()


def test_a_context_whose_attention_cannot_fit_in_memory_is_refused(corpus, tmp_path, monkeypatch):
    import minitorch_ln.apps.train_setup as setup_mod

    monkeypatch.setattr(setup_mod, "_physical_memory", lambda: 2**30)  # a 1 GiB machine
    # (4 layers + 1) x 32 x 4 heads x 1024² x 4 bytes = 2.5 GiB, before any of it is allocated
    with pytest.raises(ConfigError, match=r"--block-size 1024 with --batch-size 32 needs at least 2 GiB .* "
                                          r"than this machine's 1 GiB: use a smaller --batch-size"):
        train(opts(corpus, block_size=1024, batch_size=32), out_dir=tmp_path / "run", quiet=True, sample_chars=SAMPLE)
    assert not (tmp_path / "run").exists()

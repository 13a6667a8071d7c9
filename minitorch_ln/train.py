"""The trainer behind ``minitorch-ln train``: a character-level GPT on real text, without PyTorch.

One run, top to bottom (:func:`train`):

1. read the corpus (``--text PATH``, or the standard library's docstrings), build a character
   tokenizer, hold out the last ``val_fraction`` of the text;
2. build ``nn.GPT`` from a preset, AdamW (weight decay on matrices only, as in nanoGPT), a linear
   warm-up then cosine decay of the learning rate, gradient-norm clipping;
3. train for ``steps`` steps with a tqdm bar (loss, tokens/s), evaluating the held-out loss every
   ``eval_interval`` steps against the unigram baseline (the cross-entropy of predicting every
   character by its frequency), writing ``metrics.jsonl`` and a checkpoint;
4. at the end: a loss-curve PNG (when matplotlib is installed), a text sample, and the held-out loss
   as a fraction of the unigram baseline.

Resuming (``resume=True``) reloads the weights, AdamW's moments, the step, and the CPU random
generators' states (GPU generators are re-seeded from the seed and the step at every checkpoint
instead, see :mod:`minitorch_ln.checkpoint`), so the resumed run draws the same batches and dropout
masks and its losses and final weights equal the uninterrupted run's (bit for bit on the CPU). Ctrl-C finishes the current
step, saves a checkpoint and returns :data:`EXIT_INTERRUPTED`; a NaN/Inf loss or gradient stops the
run before the update (keeping the last good checkpoint), and the step is re-run under
``detect_anomaly`` to name the op that made it.
"""

from __future__ import annotations

import json
import math
import os
import signal
import sys
import time
from dataclasses import asdict, dataclass, fields

import numpy as np

from . import backend
from .autograd import AnomalyError, detect_anomaly, no_grad
from .autograd.anomaly import explain_nonfinite
from .checkpoint import (
    CheckpointError, get_rng_states, latest_step, read_checkpoint, reseed_devices, resolve_checkpoint, set_rng_states,
    write_checkpoint,
)
from .data import CharTokenizer, CorpusError, TokenDataset, default_corpus, load_text
from .sampling import corpus_word_fraction, generate_text, load_model, plot_losses

__all__ = ["TrainConfig", "ConfigError", "train", "build_model", "build_optimizer", "build_scheduler", "evaluate",
           "load_model", "unigram_baseline", "EXIT_OK", "EXIT_ERROR", "EXIT_NONFINITE", "EXIT_INTERRUPTED"]

EXIT_OK, EXIT_ERROR, EXIT_NONFINITE, EXIT_INTERRUPTED = 0, 1, 3, 130
SAMPLE_CHARS = 300
SAMPLE_TEMPERATURE = 0.8


class ConfigError(ValueError):
    """A bad training option, or an option changed on ``--resume`` that must not change."""


@dataclass
class TrainConfig:
    """Every option of a training run (the defaults are ``minitorch-ln train``'s).

    The defaults were measured on the standard-library docstrings on a 2-core CPU: held-out loss
    about 0.53x the unigram baseline (0.7x is passed near step 300) in about 2 minutes on an idle
    machine, up to about 5 on a busy one (see the README).
    """

    text: "str | None" = None  # a UTF-8 file; None: the standard library's docstrings
    preset: str = "tiny"  # nn.GPTConfig.preset name
    steps: int = 1000  # the run's total number of optimizer steps
    batch_size: int = 32
    block_size: "int | None" = 32  # context length in characters; None: the preset's (64 for tiny)
    lr: float = 3e-3  # peak learning rate
    min_lr: float = 3e-4  # the cosine decay's floor
    warmup_steps: int = 50  # when not given: min(50, a tenth of the schedule), see default_warmup_steps
    lr_decay_steps: "int | None" = None  # where the cosine reaches min_lr; None: `steps` at the start
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.99
    grad_clip: float = 1.0  # max global gradient norm; 0 disables clipping
    dropout: float = 0.0
    norm: str = "pre"  # "pre": Pre-LN blocks (norm_first=True); "post": Post-LN
    device: str = "cpu"
    seed: int = 1337
    eval_interval: int = 100
    eval_batches: int = 8
    checkpoint_interval: "int | None" = None  # None: every eval_interval
    val_fraction: float = 0.1

    # options that may differ between a run and its --resume
    RESUMABLE = ("steps", "device")

    def validate(self) -> "TrainConfig":
        """Check every option; raises :class:`ConfigError` naming the option, the rule and the value."""
        def need(ok, name, rule):
            if not ok:
                raise ConfigError(f"--{name.replace('_', '-')} must be {rule}, got {getattr(self, name)!r}")

        for name in ("steps", "batch_size", "eval_interval", "eval_batches"):
            need(isinstance(getattr(self, name), int) and getattr(self, name) >= 1, name, "a positive integer")
        for name in ("block_size", "lr_decay_steps", "checkpoint_interval"):
            v = getattr(self, name)
            need(v is None or (isinstance(v, int) and v >= 1), name, "a positive integer")
        need(isinstance(self.warmup_steps, int) and self.warmup_steps >= 0, "warmup_steps", "an integer >= 0")
        need(isinstance(self.seed, int) and not isinstance(self.seed, bool) and 0 <= self.seed < 2**64, "seed",
             "an integer >= 0 (and < 2**64)")
        if self.lr_decay_steps is not None:
            need(self.lr_decay_steps > self.warmup_steps, "lr_decay_steps",
                 f"larger than --warmup-steps ({self.warmup_steps}); it defaults to --steps")
        need(self.lr > 0 and math.isfinite(self.lr), "lr", "a positive number")
        need(0 <= self.min_lr <= self.lr, "min_lr", f"between 0 and --lr ({self.lr})")
        need(self.weight_decay >= 0, "weight_decay", ">= 0")
        need(0 <= self.beta1 < 1, "beta1", "in [0, 1)")
        need(0 <= self.beta2 < 1, "beta2", "in [0, 1)")
        need(self.grad_clip >= 0, "grad_clip", ">= 0 (0 disables clipping)")
        need(0 <= self.dropout < 1, "dropout", "in [0, 1)")
        need(self.norm in ("pre", "post"), "norm", "'pre' or 'post'")
        need(0 < self.val_fraction < 1, "val_fraction", "in (0, 1)")
        from .nn import gpt  # noqa: PLC0415

        presets = getattr(gpt, "PRESETS", None) or getattr(gpt.GPTConfig, "PRESETS", None)
        if presets is not None:
            need(self.preset in presets, "preset", "one of " + ", ".join(sorted(presets)))
        backend.Device(self.device)  # raises DeviceError for an unknown device string
        return self

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        names = {f.name for f in fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise ConfigError(f"unknown training options in the saved configuration: {sorted(unknown)}")
        return cls(**d)


# ----------------------------------------------------------------------------------------------
# Model, optimizer, schedule
# ----------------------------------------------------------------------------------------------


def build_model(cfg: TrainConfig, vocab_size: int):
    """``nn.GPT`` for ``cfg`` (preset, context length, dropout, Pre/Post-LN) on ``cfg.device``."""
    from .nn.gpt import GPT, GPTConfig  # noqa: PLC0415

    overrides = {"vocab_size": vocab_size, "dropout": cfg.dropout, "norm_first": cfg.norm == "pre"}
    if cfg.block_size is not None:
        overrides["block_size"] = cfg.block_size
    return GPT(GPTConfig.preset(cfg.preset, **overrides), device=cfg.device)


def build_optimizer(model, cfg: TrainConfig):
    """AdamW with weight decay on matrices (dim >= 2) only: biases and norm gains are not decayed."""
    from .optim import AdamW  # noqa: PLC0415

    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return AdamW(groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), weight_decay=cfg.weight_decay)


def build_scheduler(optimizer, cfg: TrainConfig):
    """Linear warm-up over ``warmup_steps``, then cosine decay to ``min_lr`` at ``lr_decay_steps``."""
    from .optim.lr_scheduler import LinearWarmupCosineLR  # noqa: PLC0415

    return LinearWarmupCosineLR(optimizer, warmup_steps=cfg.warmup_steps, total_steps=cfg.lr_decay_steps,
                                min_lr=cfg.min_lr)


def unigram_baseline(dataset: TokenDataset, eval_batches, vocab_size: int) -> float:
    """Held-out cross-entropy (nats/char) of predicting each character by its training frequency,
    on exactly the characters the model's held-out loss is measured on."""
    targets = np.concatenate([backend.to_device(y.array, "cpu").reshape(-1) for _, y in eval_batches])
    return dataset.unigram_loss(targets, vocab_size)


def evaluate(model, eval_batches) -> float:
    """Mean cross-entropy over fixed held-out batches, in eval mode without recording a graph."""
    model.eval()
    total = 0.0
    with no_grad():
        for x, y in eval_batches:
            _, loss = model(x, y)
            total += float(loss.item())
    model.train()
    return total / len(eval_batches)


# ----------------------------------------------------------------------------------------------
# The run
# ----------------------------------------------------------------------------------------------


class _StopFlag:
    """First Ctrl-C: finish the step, save, exit. Second Ctrl-C: the usual KeyboardInterrupt."""

    def __init__(self):
        self.requested = False
        self._previous = None

    def __enter__(self):
        try:
            self._previous = signal.signal(signal.SIGINT, self._handle)
        except ValueError:  # not the main thread: leave Ctrl-C as it is
            self._previous = None
        return self

    def _handle(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def __exit__(self, *exc):
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
        return False


def _say(msg: str, quiet: bool = False) -> None:
    if not quiet:
        from tqdm import tqdm  # noqa: PLC0415

        tqdm.write(msg, file=sys.stdout)


def _resolve_resume(out_dir, overrides: dict):
    """The saved run's config with ``--steps``/``--device`` applied; refuses any other change."""
    ck = read_checkpoint(out_dir)
    saved = TrainConfig.from_dict(ck["config"]["train"])
    changed = []
    for name, value in overrides.items():
        if value is None or name in TrainConfig.RESUMABLE:
            continue
        old = getattr(saved, name)
        if name == "text" and value is not None and old is not None:
            same = os.path.abspath(value) == os.path.abspath(old)
        else:
            same = value == old or (isinstance(old, float) and isinstance(value, (int, float)) and float(value) == old)
        if not same:
            had = "the built-in corpus" if name == "text" and old is None else repr(old)
            changed.append(f"--{name.replace('_', '-')} {value!r} (the run has {had})")
    if changed:
        raise ConfigError(
            "on --resume only --steps and --device may change; the run in "
            f"{out_dir} was started with other values: " + "; ".join(changed)
            + ". Drop these options to continue it, or start a new run with another --out"
        )
    for name in TrainConfig.RESUMABLE:
        if overrides.get(name) is not None:
            setattr(saved, name, overrides[name])
    return saved, ck


def default_warmup_steps(decay_steps: int) -> int:
    """The warm-up when ``--warmup-steps`` is not given: 50 steps, or a tenth of a shorter schedule."""
    return min(TrainConfig.warmup_steps, decay_steps // 10)


def _read_corpus(cfg: TrainConfig):
    corpus = load_text(cfg.text) if cfg.text is not None else default_corpus()
    distinct = sorted(set(corpus.text))
    if len(distinct) < 2:
        raise CorpusError(
            f"{corpus.description} has only {len(distinct)} distinct character ({''.join(distinct)!r}): expected "
            "at least 2, or there is nothing for the model to predict"
        )
    return corpus


# What a run writes into --out before its first checkpoint: a directory holding only these (a run
# that failed or was killed before step `checkpoint_interval`) may be started over.
_RUN_FILES = ("metrics.jsonl", "loss.png", "sample.txt")


def _leftover_of_a_failed_run(name: str) -> bool:
    return name in _RUN_FILES or (name.startswith(".ckpt-") and name.endswith(".tmp"))


def _check_out_dir(out_dir: str) -> None:
    """Refuse an --out that cannot be a run directory (a file, a path through a file) before anything is written."""
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise ConfigError(f"cannot write to --out {out_dir}: it is a file, expected a directory (new or empty)")
    parent = os.path.dirname(os.path.abspath(out_dir))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise ConfigError(f"cannot write to --out {out_dir}: {parent} is a file, not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"cannot write to --out {out_dir}: no permission to write in {parent}")


def _make_out_dir(out_dir: str, fresh: bool) -> None:
    """Create --out; for a fresh run, remove what a failed run left before its first checkpoint."""
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot write to --out {out_dir}: the directory cannot be created there "
                          f"({exc.strerror or exc})") from None
    try:
        if fresh:
            for name in filter(_leftover_of_a_failed_run, os.listdir(out_dir)):  # _prepare refused anything else
                path = os.path.join(out_dir, name)
                if os.path.isdir(path):
                    import shutil  # noqa: PLC0415

                    shutil.rmtree(path)
                else:
                    os.remove(path)
        with open(os.path.join(out_dir, "metrics.jsonl"), "a", encoding="utf-8"):
            pass  # the first file the run writes: fails here, before training, when --out is not writable
    except OSError as exc:
        raise ConfigError(f"cannot write to --out {out_dir}: {exc.strerror or exc}") from None


def _physical_memory() -> "int | None":
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # not a POSIX system
        return None


def _check_attention_memory(cfg: TrainConfig) -> None:
    """Refuse a CPU run whose attention scores alone cannot fit in this machine's memory.

    A lower bound: every layer keeps its (B, H, T, T) attention probabilities for backward, and the
    layer being computed holds its scores beside them, at 4 bytes an entry (float32).
    """
    from .nn import gpt  # noqa: PLC0415

    total = _physical_memory()
    preset = getattr(gpt, "PRESETS", {}).get(cfg.preset)
    if total is None or preset is None or backend.Device(cfg.device).type != "cpu":
        return
    T = cfg.block_size or preset["block_size"]
    need = (preset["n_layer"] + 1) * cfg.batch_size * preset["n_head"] * T * T * 4
    if need > total:
        raise ConfigError(
            f"--block-size {T} with --batch-size {cfg.batch_size} needs at least {need / 2**30:,.0f} GiB for the "
            f"attention scores alone (({preset['n_layer']} layers + 1) x {cfg.batch_size} x {preset['n_head']} heads x "
            f"{T}² x 4 bytes), more than this machine's {total / 2**30:,.0f} GiB: use a smaller --batch-size, "
            f"--block-size or --preset"
        )


def _check_device(cfg: TrainConfig) -> None:
    dev = backend.Device(cfg.device)
    if dev.type == "cuda":
        backend.cupy_or_error()  # DeviceError naming the extra to install when CuPy/a GPU is missing


def _truncate_metrics(path, step: int) -> None:
    """Drop metric records after ``step`` (written after the checkpoint a run resumes from)."""
    if not os.path.exists(path):
        return
    from .serialization import atomic_write_text  # noqa: PLC0415

    kept = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                if json.loads(line).get("step", 0) <= step:
                    kept.append(line if line.endswith("\n") else line + "\n")
            except json.JSONDecodeError:
                break  # a line cut by a crash: everything after it is dropped too
    atomic_write_text(path, "".join(kept))


def _prepare(overrides, out_dir: str, resume: bool):
    """Check everything a run needs before anything is written: ``(cfg, checkpoint or None, corpus,
    tokenizer, dataset)``."""
    overrides = dict(overrides or {})
    unknown = set(overrides) - {f.name for f in fields(TrainConfig)}
    if unknown:
        raise ConfigError(f"unknown training options: {sorted(unknown)}")
    ck = None
    if resume:
        if latest_step(out_dir) is None:
            stopped = os.path.isfile(os.path.join(out_dir, "metrics.jsonl"))
            raise CheckpointError(
                f"--resume: {out_dir!r} holds no checkpoint to resume"
                + (" (the run there stopped before its first checkpoint)" if stopped else "")
                + f": start the run afresh with the same command without --resume (--out {out_dir})"
            )
        cfg, ck = _resolve_resume(out_dir, overrides)
    else:
        _check_out_dir(out_dir)
        held = sorted(os.listdir(out_dir)) if os.path.isdir(out_dir) else []
        if latest_step(out_dir) is not None:
            raise ConfigError(
                f"{out_dir!r} already holds a run (checkpoint at step {latest_step(out_dir)}): pass --resume to "
                "continue it, or choose a new or empty directory with --out; nothing was overwritten"
            )
        others = [n for n in held if not _leftover_of_a_failed_run(n)]
        if others:
            shown = ", ".join(others[:5]) + (", ..." if len(others) > 5 else "")
            raise ConfigError(
                f"{out_dir!r} already holds files that are not a run's checkpoint ({shown}): choose a new or empty "
                "directory with --out; nothing was overwritten"
            )
        cfg = TrainConfig(**{k: v for k, v in overrides.items() if v is not None})
        if cfg.lr_decay_steps is None:
            cfg.lr_decay_steps = cfg.steps
        if overrides.get("warmup_steps") is None:
            cfg.warmup_steps = default_warmup_steps(cfg.lr_decay_steps)
    cfg.validate()
    _check_device(cfg)
    _check_attention_memory(cfg)
    corpus = _read_corpus(cfg)
    if ck is not None and corpus.sha256 != ck["config"]["corpus"]["sha256"]:
        raise ConfigError(
            f"the corpus has changed since the run started (SHA-256 {corpus.sha256[:12]}... now, "
            f"{ck['config']['corpus']['sha256'][:12]}... then): resuming would train on different text"
        )
    tok = CharTokenizer.from_dict(ck["config"]["tokenizer"]) if ck else CharTokenizer.from_text(corpus.text)
    dataset = TokenDataset(tok.encode(corpus.text), val_fraction=cfg.val_fraction)
    return cfg, ck, corpus, tok, dataset


def train(overrides: "dict | None" = None, out_dir="runs/train", resume: bool = False, progress: bool = True,
          quiet: bool = False, on_step=None, sample_chars: int = SAMPLE_CHARS) -> dict:
    """Run (or resume) a training run; see the module docstring.

    Args:
        overrides: ``{option: value}`` for :class:`TrainConfig` fields; ``None`` values mean "not
            given" (the default, or on resume the saved value).
        out_dir: the run directory (checkpoints, ``metrics.jsonl``, ``loss.png``, ``sample.txt``).
        resume: continue the run in ``out_dir``; only ``steps`` and ``device`` may differ.
        progress: show the tqdm bar. quiet: print nothing (tests).
        on_step: optional ``callback(step, loss)`` after each optimizer step (tests use it to press Ctrl-C).
        sample_chars: length of the final sample (not part of the run's configuration).

    Returns:
        a summary dict with ``exit_code`` (:data:`EXIT_OK`, :data:`EXIT_NONFINITE` or
        :data:`EXIT_INTERRUPTED`), ``step``, ``val_loss``, ``unigram_loss``, ``ratio``, ``sample``, ...

    Raises:
        ConfigError, CorpusError, DatasetError, DeviceError, CheckpointError, TokenizerError: bad
        input, each raised before anything in ``out_dir`` is written.
    """
    out_dir = os.fspath(out_dir)
    cfg, ck, corpus, tok, dataset = _prepare(overrides, out_dir, resume)
    backend.manual_seed(cfg.seed)
    model = build_model(cfg, tok.vocab_size)
    block_size = model.config.block_size
    dataset.check_block_size(block_size)  # DatasetError: context longer than the corpus allows
    optimizer = build_optimizer(model, cfg)
    scheduler = build_scheduler(optimizer, cfg)
    eval_set = dataset.eval_batches(cfg.batch_size, block_size, cfg.eval_batches, device=cfg.device)
    baseline = unigram_baseline(dataset, eval_set, tok.vocab_size)
    run_config = {"model": model.config.to_dict(), "train": cfg.to_dict(), "tokenizer": tok.to_dict(),
                  "corpus": corpus.info(), "unigram_loss": baseline}

    step = 0
    if ck is not None:
        model.load_state_dict(ck["model"])
        optimizer.load_state_dict(ck["optimizer"])
        scheduler.load_state_dict(ck["state"]["scheduler"])
        set_rng_states(ck["state"]["rng"])
        step = ck["state"]["step"]
        reseed_devices(cfg.seed, step)  # as the original run did right after writing this checkpoint
        if step > cfg.steps:
            raise ConfigError(f"the run in {out_dir} is already at step {step}, past --steps {cfg.steps}")
    _make_out_dir(out_dir, fresh=ck is None)
    metrics_path = os.path.join(out_dir, "metrics.jsonl")
    _truncate_metrics(metrics_path, step)

    _say(f"corpus: {corpus.description}\n        {corpus.num_chars:,} characters, vocabulary {tok.vocab_size}, "
         f"sha256 {corpus.sha256[:16]}...", quiet)
    _say(f"model:  GPT preset '{cfg.preset}', {model.num_parameters():,} parameters, {cfg.norm.capitalize()}-LN, "
         f"context {block_size}, on {cfg.device}", quiet)
    _say(f"run:    {'resuming at step ' + str(step) + ' of ' if step else ''}{cfg.steps} steps of "
         f"{cfg.batch_size}x{block_size} tokens into {out_dir}; unigram baseline {baseline:.3f} nats/char", quiet)
    if cfg.steps > cfg.lr_decay_steps:
        _say(f"note:   the learning-rate schedule of this run ends at step {cfg.lr_decay_steps}; "
             f"steps after it use --min-lr {cfg.min_lr:g}", quiet)

    def checkpoint(val_loss=None):
        if latest_step(out_dir) == step:
            return
        write_checkpoint(out_dir, step, model.state_dict(), optimizer.state_dict(), run_config,
                         {"rng": get_rng_states(), "scheduler": scheduler.state_dict(),
                          "val_loss": val_loss, "unigram_loss": baseline})
        reseed_devices(cfg.seed, step)  # GPU generators: their state is too large to save (see checkpoint.py)

    from tqdm import tqdm  # noqa: PLC0415

    summary = {"exit_code": EXIT_OK, "out_dir": out_dir, "unigram_loss": baseline, "val_loss": None,
               "corpus": corpus.info(), "num_parameters": model.num_parameters()}
    val_loss = None
    tokens_per_step = cfg.batch_size * block_size
    ckpt_every = cfg.checkpoint_interval or cfg.eval_interval
    params = list(model.parameters())
    model.train()
    bar = tqdm(total=cfg.steps, initial=step, disable=not progress or quiet, dynamic_ncols=True, unit="step",
               file=sys.stderr)
    t_run = time.perf_counter()
    tok_rate = None
    with _StopFlag() as stop, open(metrics_path, "a", encoding="utf-8") as metrics:
        def log(record):
            metrics.write(json.dumps(record) + "\n")
            metrics.flush()

        def stop_nonfinite(what, report):  # the step failed: nothing is saved, the last checkpoint stays
            bar.close()
            last = latest_step(out_dir)
            kept = (f"the last good checkpoint (step {last}) in {out_dir} is kept" if last is not None
                    else "no checkpoint had been written yet")
            _say(f"stopped at step {step + 1}: {what}; {kept}.\n{report}", quiet)
            log({"step": step + 1, "event": "nonfinite", "loss": loss_value, "grad_norm": grad_norm})
            summary.update(exit_code=EXIT_NONFINITE, step=step, failed_step=step + 1, anomaly=report)
            return summary

        while step < cfg.steps:
            if stop.requested:
                break
            t0 = time.perf_counter()
            rng_before = get_rng_states()
            x, y = dataset.get_batch("train", cfg.batch_size, block_size, device=cfg.device)
            _, loss = model(x, y)
            loss_value = float(loss.item())
            optimizer.zero_grad()
            grad_norm = float("nan")
            if math.isfinite(loss_value):
                loss.backward()
                grad_norm = _clip(params, cfg.grad_clip)
            if not (math.isfinite(loss_value) and math.isfinite(grad_norm)):
                what = f"the loss is {loss_value}" if not math.isfinite(loss_value) else f"the gradient norm is {grad_norm}"
                return stop_nonfinite(what + "; the weights were not updated",
                                      _diagnose(model, dataset, cfg, block_size, rng_before))
            lr = optimizer.param_groups[0]["lr"]
            optimizer.step()
            bad = _nonfinite_parameter(model)
            if bad is not None:  # finite gradients, but the update itself overflowed (a huge --lr)
                return stop_nonfinite(
                    f"the AdamW update made parameter '{bad}' non-finite",
                    f"the loss ({loss_value:.4g}) and gradient norm ({grad_norm:.4g}) were finite, but the AdamW "
                    f"update at learning rate {lr:g} made parameter '{bad}' non-finite: lower --lr")
            scheduler.step()
            step += 1
            dt = time.perf_counter() - t0
            tok_rate = tokens_per_step / dt if tok_rate is None else 0.9 * tok_rate + 0.1 * tokens_per_step / dt
            log({"step": step, "loss": loss_value, "lr": lr, "grad_norm": grad_norm,
                 "tokens_per_s": round(tokens_per_step / dt, 1)})
            bar.update(1)
            bar.set_postfix({"loss": f"{loss_value:.3f}", "tokens/s": f"{tok_rate:,.0f}"}, refresh=False)
            if step % cfg.eval_interval == 0 or step == cfg.steps:
                val_loss = evaluate(model, eval_set)
                log({"step": step, "val_loss": val_loss, "unigram_loss": baseline, "ratio": val_loss / baseline})
                _say(f"step {step}: held-out loss {val_loss:.4f} ({val_loss / baseline:.3f} x unigram baseline "
                     f"{baseline:.3f}); {time.perf_counter() - t_run:.0f} s", quiet)
            if step % ckpt_every == 0 or step == cfg.steps:
                checkpoint(val_loss)
            if on_step is not None:
                on_step(step, loss_value)
        bar.close()
        summary["step"] = step
        summary["train_seconds"] = time.perf_counter() - t_run
        if step < cfg.steps:  # Ctrl-C
            checkpoint(val_loss)
            _say(f"interrupted at step {step} of {cfg.steps}: checkpoint saved in {out_dir}; continue with "
                 f"`minitorch-ln train --out {out_dir} --resume`", quiet)
            summary["exit_code"] = EXIT_INTERRUPTED
            return summary

    if val_loss is None or latest_step(out_dir) != step:  # a resume with nothing left to train
        val_loss = evaluate(model, eval_set)
        checkpoint(val_loss)
    summary.update(val_loss=val_loss, ratio=val_loss / baseline)
    _report(summary, model, tok, corpus, cfg, out_dir, metrics_path, sample_chars, quiet)
    return summary


def _report(summary, model, tok, corpus, cfg, out_dir, metrics_path, sample_chars, quiet) -> None:
    """The end of a run: loss curve, sample, and the held-out loss against the unigram baseline."""
    val_loss, baseline, step = summary["val_loss"], summary["unigram_loss"], summary["step"]
    png = plot_losses(metrics_path, os.path.join(out_dir, "loss.png"), baseline)
    backend.manual_seed(cfg.seed)  # the sample depends on the weights and the seed, not on the run's history
    sample = generate_text(model, tok, "\n" if "\n" in tok.stoi else tok.chars[0], sample_chars, SAMPLE_TEMPERATURE)
    words = corpus_word_fraction(sample, corpus.text)
    from .serialization import atomic_write_text  # noqa: PLC0415

    atomic_write_text(os.path.join(out_dir, "sample.txt"), sample)
    summary.update(sample=sample, corpus_word_fraction=words, loss_png=png)
    _say(f"\n--- sample ({sample_chars} characters, temperature {SAMPLE_TEMPERATURE}) ---\n{sample.strip()}\n---", quiet)
    _say(f"words of the sample found in the corpus: {words:.0%}", quiet)
    # the 0.7x target was set for the built-in corpus; another text has its own attainable ratio
    verdict = "" if cfg.text is not None else \
        f" ({'meets' if val_loss <= 0.7 * baseline else 'does not meet'} the 0.7x target)"
    _say(f"held-out loss {val_loss:.4f} nats/char = {val_loss / baseline:.3f} x the unigram baseline {baseline:.4f}"
         f"{verdict}; {step} steps in {summary['train_seconds']:.0f} s", quiet)
    weights = os.path.join(resolve_checkpoint(out_dir), "model.safetensors")
    summary["weights"] = weights
    _say(f"checkpoint: {out_dir} (weights: {weights}, loadable with safetensors.torch)"
         + (f"; loss curve: {png}" if png else ""), quiet)


def _nonfinite_parameter(model) -> "str | None":
    """The name of the first parameter holding NaN/Inf, or None."""
    for name, p in model.named_parameters():
        xp = backend.get_array_module(p.array)
        if not bool(xp.isfinite(p.array).all()):
            return name
    return None


def _clip(params, max_norm: float) -> float:
    """Clip gradients to ``max_norm`` (when > 0) and return the global norm before clipping."""
    from .nn.utils import clip_grad_norm_  # noqa: PLC0415

    return float(clip_grad_norm_(params, max_norm if max_norm > 0 else math.inf).item())


def _diagnose(model, dataset, cfg, block_size, rng_before) -> str:
    """Re-run the failing step under ``detect_anomaly`` (same batch, same dropout) and name the op."""
    bad = _nonfinite_parameter(model)
    if bad is not None:  # the updates are checked, so only code outside the trainer can have done this
        return f"parameter '{bad}' already held NaN/Inf before this step's forward pass"
    after = get_rng_states()
    set_rng_states(rng_before)
    try:
        with detect_anomaly(check_forward=False):
            x, y = dataset.get_batch("train", cfg.batch_size, block_size, device=cfg.device)
            _, loss = model(x, y)
            model.zero_grad()
            explained = explain_nonfinite(loss)
            if explained is not None:
                return "detect_anomaly (re-running the step): the loss is not finite: " + explained
            loss.backward()
        return ("detect_anomaly (re-running the step) found no NaN/Inf in the backward pass either; the gradient "
                "overflowed only in the norm: lower --lr or keep --grad-clip")
    except AnomalyError as exc:
        return f"detect_anomaly (re-running the step): {exc}"
    finally:
        model.zero_grad()
        set_rng_states(after)

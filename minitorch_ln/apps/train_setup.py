"""The trainer's configuration and set-up: ``TrainConfig``, the model, optimizer and schedule it builds,
reading the corpus, checking and preparing the output folder, resuming a run.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, fields


from .. import backend
from .checkpoint import (
    LOCK_FILE, CheckpointError, RunLock, latest_step, read_checkpoint,
)
from .corpus import CorpusError, default_corpus, load_text_ids
from .dataset import TokenDataset
from .tokenizer import CharTokenizer

__all__ = ["TrainConfig", "ConfigError", "build_model", "build_optimizer", "build_scheduler", "default_warmup_steps"]
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
        from ..nn import gpt  # noqa: PLC0415

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
    from ..nn.gpt import GPT, GPTConfig  # noqa: PLC0415

    overrides = {"vocab_size": vocab_size, "dropout": cfg.dropout, "norm_first": cfg.norm == "pre"}
    if cfg.block_size is not None:
        overrides["block_size"] = cfg.block_size
    return GPT(GPTConfig.preset(cfg.preset, **overrides), device=cfg.device)


def build_optimizer(model, cfg: TrainConfig):
    """AdamW with weight decay on matrices (dim >= 2) only: biases and norm gains are not decayed."""
    from ..optim import AdamW  # noqa: PLC0415

    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return AdamW(groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), weight_decay=cfg.weight_decay)


def build_scheduler(optimizer, cfg: TrainConfig):
    """Linear warm-up over ``warmup_steps``, then cosine decay to ``min_lr`` at ``lr_decay_steps``."""
    from ..optim.lr_scheduler import LinearWarmupCosineLR  # noqa: PLC0415

    return LinearWarmupCosineLR(optimizer, warmup_steps=cfg.warmup_steps, total_steps=cfg.lr_decay_steps,
                                min_lr=cfg.min_lr)


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
    # a text file is read in bounded memory, as token ids in a memmap; the built-in corpus is small
    corpus = load_text_ids(cfg.text) if cfg.text is not None else default_corpus()
    distinct = list(corpus.chars) if corpus.chars is not None else sorted(set(corpus.text))
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


def _remove_empty(dirs) -> None:
    for d in dirs:
        try:
            os.rmdir(d)
        except OSError:  # not empty: the run wrote into it
            break


def _lock_out_dir(out_dir: str, resume: bool):
    """Lock ``out_dir`` (creating it for a fresh run): ``(RunLock or None, [directories created, deepest first])``."""
    if resume and not os.path.isdir(out_dir):
        return None, []  # _prepare says there is nothing to resume
    if not resume:
        _check_out_dir(out_dir)
    created, d = [], os.path.abspath(out_dir)
    while not os.path.exists(d):
        created.append(d)
        d = os.path.dirname(d)
    try:
        try:
            os.makedirs(out_dir, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot write to --out {out_dir}: the directory cannot be created there "
                              f"({exc.strerror or exc})") from None
        try:
            return RunLock(out_dir).acquire(), created
        except OSError as exc:
            raise ConfigError(f"cannot write to --out {out_dir}: {exc.strerror or exc}") from None
    except BaseException:
        _remove_empty(created)
        raise


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
    from ..nn import gpt  # noqa: PLC0415

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
    from ..serialization import atomic_write_text  # noqa: PLC0415

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
        held = sorted(n for n in os.listdir(out_dir) if n != LOCK_FILE) if os.path.isdir(out_dir) else []
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
    if corpus.ids is None:  # the text is in memory
        tok = CharTokenizer.from_dict(ck["config"]["tokenizer"]) if ck else CharTokenizer.from_text(corpus.text)
        ids = tok.encode(corpus.text)
    else:  # ids numbered by the corpus's sorted vocabulary, as CharTokenizer numbers them
        tok = CharTokenizer(corpus.chars)
        if ck is not None and CharTokenizer.from_dict(ck["config"]["tokenizer"]) != tok:
            raise ConfigError("the corpus's characters differ from the vocabulary the run was started with")
        ids = corpus.ids
    dataset = TokenDataset(ids, val_fraction=cfg.val_fraction)
    return cfg, ck, corpus, tok, dataset

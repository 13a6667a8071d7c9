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
masks and its losses and final weights equal the uninterrupted run's (bit for bit on the CPU). Ctrl-C
(SIGINT), and equally SIGTERM (a plain ``kill``, a job scheduler) and SIGHUP (a closed terminal), finishes
the current step, saves a checkpoint and returns :data:`EXIT_INTERRUPTED`; a NaN/Inf loss or gradient
stops the run before the update (keeping the last good checkpoint), and the step is re-run under
``detect_anomaly`` to name the op that made it.

A run holds a lock on its directory (:class:`~minitorch_ln.apps.checkpoint.RunLock`): a second run
into the same ``out_dir`` is refused, naming the first one's process. A checkpoint that cannot be
written (a full disk) stops the run with a :class:`CheckpointError` saying so; the previous
checkpoint stays the current one, intact.
"""

from __future__ import annotations

import json
import math
import os
import signal
import sys
import time

import numpy as np

from .. import backend
from ..autograd import AnomalyError, detect_anomaly, no_grad
from ..autograd.anomaly import explain_nonfinite
from .train_parallel import parallel_run
from .checkpoint import (
    CheckpointError, get_rng_states, latest_step, reseed_devices, resolve_checkpoint, set_rng_states,
    write_checkpoint,
)
from .dataset import TokenDataset
from .sampling import corpus_word_fraction, generate_text, load_model, plot_losses

__all__ = ["TrainConfig", "ConfigError", "train", "build_model", "build_optimizer", "build_scheduler", "evaluate",
           "load_model", "unigram_baseline", "EXIT_OK", "EXIT_ERROR", "EXIT_NONFINITE", "EXIT_INTERRUPTED"]

EXIT_OK, EXIT_ERROR, EXIT_NONFINITE, EXIT_INTERRUPTED = 0, 1, 3, 130
SAMPLE_CHARS = 300
MAX_SAMPLE_CHARS = 100_000  # one forward pass per character: more is hours of sampling after the run
SAMPLE_TEMPERATURE = 0.8


from .train_setup import (  # noqa: F401 - TrainConfig and the builders are re-exported
    ConfigError, TrainConfig, _lock_out_dir, _make_out_dir, _prepare, _remove_empty, _truncate_metrics,
    build_model, build_optimizer, build_scheduler, default_warmup_steps,
)



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
    """First Ctrl-C (or SIGTERM, SIGHUP): finish the step, save, exit. A second one: KeyboardInterrupt.

    An ignored SIGHUP (``nohup``) is left ignored.
    """

    SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")

    def __init__(self):
        self.requested = None  # the name of the signal that asked to stop
        self._previous = {}

    def __enter__(self):
        for name in self.SIGNALS:
            sig = getattr(signal, name, None)
            if sig is None:  # SIGHUP does not exist on Windows
                continue
            try:
                if name == "SIGHUP" and signal.getsignal(sig) is signal.SIG_IGN:
                    continue  # under nohup: the terminal's closing must not stop the run
                self._previous[sig] = signal.signal(sig, self._handle)
            except ValueError:  # not the main thread: leave the signals as they are
                break
        return self

    def _handle(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = signal.Signals(signum).name

    def __exit__(self, *exc):
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        self._previous = {}
        return False


def _say(msg: str, quiet: bool = False) -> None:
    if not quiet:
        from tqdm import tqdm  # noqa: PLC0415

        tqdm.write(msg, file=sys.stdout)


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
        sample_chars: length of the final sample (not part of the run's configuration), at most
            :data:`MAX_SAMPLE_CHARS`.

    Returns:
        a summary dict with ``exit_code`` (:data:`EXIT_OK`, :data:`EXIT_NONFINITE` or
        :data:`EXIT_INTERRUPTED`), ``step``, ``val_loss``, ``unigram_loss``, ``ratio``, ``sample``, ...

    Raises:
        ConfigError, CorpusError, DatasetError, DeviceError, CheckpointError, TokenizerError: bad
        input, each raised before anything in ``out_dir`` is written.
        RunDirLocked: another run is writing ``out_dir``.
        CheckpointError: a checkpoint could not be written (e.g. the disk is full); the previous one is intact.
    """
    if not isinstance(sample_chars, int) or isinstance(sample_chars, bool) or not 0 <= sample_chars <= MAX_SAMPLE_CHARS:
        raise ConfigError(f"--sample-chars must be an int in [0, {MAX_SAMPLE_CHARS}] (the preview printed after "
                          f"training), got {sample_chars!r}; for longer text: `minitorch-ln sample --max-new-tokens`")
    out_dir = os.fspath(out_dir)
    lock, created = _lock_out_dir(out_dir, resume) if parallel_run().writer else (None, [])  # rank 0 writes
    try:
        return _train(overrides, out_dir, resume, progress, quiet, on_step, sample_chars)
    finally:
        if lock is not None:
            lock.release()
        _remove_empty(created)  # what this call created, when nothing was written into it (bad input)


def _train(overrides, out_dir, resume, progress, quiet, on_step, sample_chars) -> dict:
    cfg, ck, corpus, tok, dataset = _prepare(overrides, out_dir, resume)
    par = parallel_run()  # train --nproc N: this rank's part (train_parallel.py); else a no-op
    quiet, progress = quiet or not par.writer, progress and par.writer
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
        par.check_resume(ck["state"], out_dir)
        reseed_devices(cfg.seed, step)  # as the original run did right after writing this checkpoint
        if step > cfg.steps:
            raise ConfigError(f"the run in {out_dir} is already at step {step}, past --steps {cfg.steps}")
    net = par.wrap(model, cfg.batch_size)  # DistributedDataParallel: rank 0's weights on every rank
    metrics_path = os.path.join(out_dir, "metrics.jsonl")
    if par.writer:
        _make_out_dir(out_dir, fresh=ck is None)
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
        if latest_step(out_dir) == step or not par.writer:
            return
        try:
            write_checkpoint(out_dir, step, model.state_dict(), optimizer.state_dict(), run_config,
                             {"rng": get_rng_states(), "scheduler": scheduler.state_dict(),
                              "val_loss": val_loss, "unigram_loss": baseline, "world_size": par.world})
        except OSError as exc:  # a full disk, a quota, an I/O error: write_checkpoint removed its partial files
            bar.close()
            last = latest_step(out_dir)
            kept = (f"the previous checkpoint (step {last}) is intact and still the current one" if last is not None
                    else "no earlier checkpoint exists")
            raise CheckpointError(f"could not write the checkpoint of step {step} into {out_dir}: "
                                  f"{exc.strerror or exc}; {kept}") from None
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
    with _StopFlag() as stop, open(metrics_path if par.writer else os.devnull, "a", encoding="utf-8") as metrics:
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
            if par.agree(stop.requested):  # every rank stops after the same step
                break
            t0 = time.perf_counter()
            rng_before = get_rng_states()
            x, y = dataset.get_batch("train", cfg.batch_size, block_size, device=cfg.device)
            _, loss = net(par.shard(x), par.shard(y))  # this rank's slice of the batch
            loss_value = par.mean(float(loss.item()))
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
            with np.errstate(over="ignore", invalid="ignore"):  # an overflowing update is reported just below
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
        if step < cfg.steps:  # Ctrl-C, SIGTERM or SIGHUP
            checkpoint(val_loss)
            by = "" if stop.requested == "SIGINT" else f" by {stop.requested}"
            _say(f"interrupted{by} at step {step} of {cfg.steps}: checkpoint saved in {out_dir}; continue with "
                 f"`minitorch-ln train --out {out_dir} --resume`", quiet)
            summary["exit_code"] = EXIT_INTERRUPTED
            return summary

    if val_loss is None or latest_step(out_dir) != step:  # a resume with nothing left to train
        val_loss = evaluate(model, eval_set)
        checkpoint(val_loss)
    summary.update(val_loss=val_loss, ratio=val_loss / baseline)
    if par.writer:
        _report(summary, model, tok, corpus, cfg, out_dir, metrics_path, sample_chars, quiet)
    return summary


def _report(summary, model, tok, corpus, cfg, out_dir, metrics_path, sample_chars, quiet) -> None:
    """The end of a run: loss curve, sample, and the held-out loss against the unigram baseline."""
    val_loss, baseline, step = summary["val_loss"], summary["unigram_loss"], summary["step"]
    png = plot_losses(metrics_path, os.path.join(out_dir, "loss.png"), baseline)
    backend.manual_seed(cfg.seed)  # the sample depends on the weights and the seed, not on the run's history
    sample = generate_text(model, tok, "\n" if "\n" in tok.stoi else tok.chars[0], sample_chars, SAMPLE_TEMPERATURE)
    words = corpus_word_fraction(sample, corpus.text if corpus.text is not None else corpus.words)
    from ..serialization import atomic_write_text  # noqa: PLC0415

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
    from ..nn.utils import clip_grad_norm_  # noqa: PLC0415

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

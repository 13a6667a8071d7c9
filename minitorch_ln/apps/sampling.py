"""Using a trained run: load a checkpoint, sample text from it, and judge and plot the run.

``minitorch-ln sample`` is :func:`load_model` (a checkpoint of ``minitorch-ln train``) or
:func:`load_weights` (a bare ``.safetensors`` state dict, e.g. written by PyTorch from the
same-named GPT, with its configuration given separately), then :func:`generate_text`; the trainer
uses the same functions for the sample it prints at the end, plus :func:`corpus_word_fraction` (how
much of a sample is real words) and :func:`plot_losses` (the loss curve).
"""

from __future__ import annotations

import json
import os

import numpy as np

from .. import backend
from ..autograd import no_grad
from .checkpoint import CheckpointError, read_checkpoint
from .tokenizer import CharTokenizer

__all__ = ["load_model", "load_weights", "bare_config", "IdCodec", "generate_text", "corpus_word_fraction",
           "plot_losses"]


def load_model(path, device=None):
    """``(model, tokenizer, config)`` from a checkpoint (run directory or ``ckpt-*`` directory).

    Raises:
        CheckpointError: missing, corrupt or incompatible checkpoint.
    """
    from ..nn.gpt import GPT, GPTConfig  # noqa: PLC0415

    ck = read_checkpoint(path, load_optimizer=False)
    try:
        gcfg = GPTConfig.from_dict(ck["config"]["model"])
        tok = CharTokenizer.from_dict(ck["config"]["tokenizer"])
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(f"{ck['dir']}/config.json is not a training configuration ({exc})") from None
    dev = device or ck["config"]["train"].get("device", "cpu")
    model = GPT(gcfg, device=dev)
    try:
        model.load_state_dict(ck["model"])
    except Exception as exc:  # StateDictError: names the missing/unexpected/wrong-shaped keys
        raise CheckpointError(f"checkpoint {ck['dir']} does not match its own model config: {exc}") from None
    model.eval()
    return model, tok, ck["config"]



class IdCodec:
    """The "tokenizer" of a bare weights file without a vocabulary: text is token ids written as
    integers separated by spaces (``"5 12 0"``), in and out."""

    def __init__(self, vocab_size: int):
        self.vocab_size = vocab_size
        self.stoi, self.chars = {}, ["0"]

    def encode(self, text: str) -> np.ndarray:
        from .tokenizer import TokenizerError  # noqa: PLC0415

        try:
            ids = np.array([int(t) for t in text.replace(",", " ").split()], dtype=np.int64)
        except ValueError:
            raise TokenizerError(f"without a vocabulary the prompt is token ids like '0 5 12', got {text!r}") from None
        if ids.size and (ids.min() < 0 or ids.max() >= self.vocab_size):
            raise TokenizerError(f"prompt ids must be in [0, {self.vocab_size}), got {text!r}")
        return ids

    def decode(self, ids) -> str:
        return " ".join(str(int(i)) for i in np.asarray(ids).reshape(-1))


def _read_json_option(value: str) -> dict:
    """``--config``: a JSON object given inline (``'{"n_head": 4}'``) or the path of a JSON file."""
    try:
        if value.lstrip().startswith("{"):
            d = json.loads(value)
        else:
            with open(value, encoding="utf-8") as f:
                d = json.load(f)
    except OSError as exc:
        raise CheckpointError(f"--config {value!r}: cannot read it ({exc.strerror or exc})") from None
    except json.JSONDecodeError as exc:
        raise CheckpointError(f"--config {value!r} is not valid JSON ({exc})") from None
    if not isinstance(d, dict):
        raise CheckpointError(f"--config must be a JSON object of GPTConfig fields, got {type(d).__name__}")
    return d


def bare_config(state: dict, preset=None, config=None, **fields):
    """The ``GPTConfig`` (and tokenizer description, or ``None``) for a bare weights file.

    Layers, from the bottom: the preset's sizes; ``vocab_size`` and ``block_size`` read from the
    shapes of the embeddings (or the head) in ``state``; the ``--config`` JSON (``GPTConfig``
    fields, or a run's ``config.json`` with ``"model"`` and ``"tokenizer"``; ``"chars"``: the
    vocabulary as a string); the ``fields`` given as flags (``None``: not given).

    Raises:
        CheckpointError: neither a preset nor a config; unknown or invalid fields.
    """
    from ..nn.gpt import PRESETS, GPTConfig  # noqa: PLC0415

    if preset is None and config is None:
        raise CheckpointError(
            "a bare .safetensors weights file holds no model configuration: give it with --config (a JSON file "
            "or inline object of GPTConfig fields, or a run's config.json) or --preset NAME (with --vocab-size, "
            "--block-size, --n-layer, --n-head, --d-model, --norm where the model differs)")
    d, tokenizer = (dict(PRESETS[preset]) if preset is not None else {}), None
    for key, name in (("vocab_size", "tok_emb.weight"), ("vocab_size", "lm_head.weight"),
                      ("block_size", "pos_emb.weight")):
        if name in state and len(state[name].shape) == 2:
            d[key] = int(state[name].shape[0])
    if config is not None:
        c = _read_json_option(config)
        if "model" in c and isinstance(c["model"], dict):  # a run's config.json
            tokenizer = c.get("tokenizer")
            c = c["model"]
        c = dict(c)
        if "chars" in c:
            tokenizer = {"type": "char", "chars": list(c.pop("chars"))}
        d.update(c)
    d.update({k: v for k, v in fields.items() if v is not None})
    try:
        return GPTConfig.from_dict(d), tokenizer
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"the model configuration given for the weights file is not valid: {exc}") from None


def load_weights(path, preset=None, config=None, device=None, **fields):
    """``(model, tokenizer or None, GPTConfig)`` from a bare ``.safetensors`` state dict of ``nn.GPT``.

    The file may come from PyTorch (``safetensors.torch.save_file(model.state_dict(), path)`` of the
    same-named GPT, :func:`minitorch_ln.interop.torch_models.torch_gpt`, or ``save_model``, which
    drops one of two tied weights: the missing one is taken from the other when
    ``tie_weights``). Its dtype is converted to float32. See :func:`bare_config` for the configuration.

    Raises:
        CheckpointError: an unreadable file, a missing configuration, weights that do not fit it
            (naming the missing, unexpected and wrong-shaped keys).
    """
    from ..nn.gpt import GPT  # noqa: PLC0415
    from ..serialization import SerializationError, load  # noqa: PLC0415

    path = os.fspath(path)
    try:
        state = load(path)
    except (SerializationError, OSError) as exc:
        raise CheckpointError(f"cannot read the weights file {path!r}: {exc}") from None
    if not isinstance(state, dict) or not all(hasattr(v, "shape") for v in state.values()):
        raise CheckpointError(f"{path!r} is not a state dict of tensors (a flat safetensors file)")
    gcfg, tokenizer = bare_config(state, preset, config, **fields)
    if gcfg.tie_weights:
        for a, b in (("lm_head.weight", "tok_emb.weight"), ("tok_emb.weight", "lm_head.weight")):
            if a not in state and b in state:
                state[a] = state[b]
    model = GPT(gcfg, device=device or "cpu")
    try:
        model.load_state_dict(state)
    except Exception as exc:  # StateDictError: names the missing/unexpected/wrong-shaped keys
        raise CheckpointError(f"the weights in {path} do not fit the model configuration {gcfg}: "
                              + " ".join(str(exc).split())) from None
    model.eval()
    tok = CharTokenizer.from_dict(tokenizer) if tokenizer is not None else None
    if tok is not None and tok.vocab_size != gcfg.vocab_size:
        raise CheckpointError(f"the vocabulary has {tok.vocab_size} characters but the model {gcfg.vocab_size} "
                              "token embeddings")
    return model, tok, gcfg


def generate_text(model, tok: CharTokenizer, prompt: str, max_new_tokens: int, temperature: float = 1.0,
                  top_k=None) -> str:
    """``prompt`` followed by ``max_new_tokens`` sampled characters (the prompt is kept, cropped to the
    model's context while sampling).

    Raises:
        TokenizerError: a prompt character the model never saw. ValueError: an empty prompt.
    """
    from ..tensor import tensor  # noqa: PLC0415

    if not prompt:
        raise ValueError("the prompt is empty: give at least one character")
    ids = tok.encode(prompt)
    idx = tensor(ids[None, :], device=next(model.parameters()).device)  # (1, T)
    model.eval()
    with no_grad():
        out = model.generate(idx, max_new_tokens, temperature=temperature, top_k=top_k)  # (1, T + new)
    return tok.decode(backend.to_device(out.array, "cpu")[0])


def corpus_word_fraction(sample: str, corpus_text) -> float:
    """The fraction of the sample's words (runs of letters) that occur as words in the corpus
    (its text, or a set of its words such as :attr:`Corpus.words`)."""
    import re  # noqa: PLC0415

    words = re.findall(r"[A-Za-z]+", sample)
    if not words:
        return 0.0
    vocab = set(re.findall(r"[A-Za-z]+", corpus_text)) if isinstance(corpus_text, str) else corpus_text
    return sum(w in vocab for w in words) / len(words)


def plot_losses(metrics_path, png_path, baseline: float) -> "str | None":
    """Training and held-out loss against step, with the unigram baseline; ``None`` without matplotlib."""
    try:
        import matplotlib  # noqa: PLC0415

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError:
        return None
    train, val = [], []
    with open(metrics_path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if "loss" in r and r.get("event") is None:
                train.append((r["step"], r["loss"]))
            if "val_loss" in r:
                val.append((r["step"], r["val_loss"]))
    fig, ax = plt.subplots(figsize=(7, 4))
    if train:
        s, v = np.array(train).T
        k = max(1, len(v) // 50)
        smooth = np.convolve(v, np.ones(k) / k, mode="valid")
        ax.plot(s, v, color="tab:blue", alpha=0.25, lw=0.8)
        ax.plot(s[k - 1:], smooth, color="tab:blue", label="training loss")
    if val:
        s, v = np.array(val).T
        ax.plot(s, v, "o-", color="tab:orange", label="held-out loss")
    ax.axhline(baseline, color="gray", ls="--", label=f"unigram baseline {baseline:.2f}")
    ax.axhline(0.7 * baseline, color="gray", ls=":", label="0.7 x baseline")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats/char)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)
    plt.close(fig)
    return os.fspath(png_path)

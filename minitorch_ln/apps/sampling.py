"""Using a trained run: load a checkpoint, sample text from it, and judge and plot the run.

``minitorch-ln sample`` is :func:`load_model` then :func:`generate_text`; the trainer uses the
same functions for the sample it prints at the end, plus :func:`corpus_word_fraction` (how much of
a sample is real words) and :func:`plot_losses` (the loss curve).
"""

from __future__ import annotations

import json
import os

import numpy as np

from .. import backend
from ..autograd import no_grad
from .checkpoint import CheckpointError, read_checkpoint
from .tokenizer import CharTokenizer

__all__ = ["load_model", "generate_text", "corpus_word_fraction", "plot_losses"]


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


def corpus_word_fraction(sample: str, corpus_text: str) -> float:
    """The fraction of the sample's words (runs of letters) that occur as words in the corpus."""
    import re  # noqa: PLC0415

    words = re.findall(r"[A-Za-z]+", sample)
    if not words:
        return 0.0
    vocab = set(re.findall(r"[A-Za-z]+", corpus_text))
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

"""Post-LN vs Pre-LN Transformers: gradients at initialization, and training with and without warm-up.

Xiong et al. (2020), "On Layer Normalization in the Transformer Architecture", show that with the
LayerNorm *after* each residual addition (Post-LN, the original Transformer) the gradient of the
last layers' weights is large at initialization and grows with the layer index, which is why
Post-LN needs a learning-rate warm-up; with the LayerNorm *inside* each residual branch (Pre-LN)
the gradient norms do not grow toward the output, and warm-up can be dropped. (The paper finds
Pre-LN's level across layers; in these small models they shrink somewhat with depth instead: a
Pre-LN layer also receives gradient through every later residual branch, and with d_model 64
those paths weigh more than at the paper's 512.)

1. the gradient norm of each layer's second feed-forward weight (``linear2.weight``, the paper's
   W²) at initialization, for 6- and 12-layer Post-LN and Pre-LN stacks (Xavier-initialised as
   ``nn.Transformer``, causal character language model on the standard library's docstrings);
2. the 6-layer models trained with Adam at a high learning rate, with and without warm-up.

    python examples/pre_ln_vs_post_ln.py [--fast]
"""

import os

# One BLAS thread: these models multiply small matrices, which a second OpenBLAS thread does not
# speed up, and on a busy machine makes wait milliseconds for a time slice (set before NumPy loads).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import math  # noqa: E402

import numpy as np  # noqa: E402

import minitorch_ln as mt  # noqa: E402
import minitorch_ln.nn as nn  # noqa: E402
import minitorch_ln.nn.functional as F  # noqa: E402
from minitorch_ln.apps.corpus import default_corpus
from minitorch_ln.apps.dataset import TokenDataset
from minitorch_ln.apps.tokenizer import CharTokenizer
from minitorch_ln.optim import Adam  # noqa: E402
from minitorch_ln.optim.lr_scheduler import LambdaLR  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--fast", action="store_true", help="smaller model, fewer batches and steps (seconds)")
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--figure", default=os.path.join(os.path.dirname(__file__), "figures", "pre_ln_vs_post_ln.png"))
args = parser.parse_args()

d_model, n_head = 64, 4
T, B = (16, 8) if args.fast else (32, 16)
grad_batches = 4 if args.fast else 16
train_steps = 15 if args.fast else 400
lr, warmup = 3e-3, (5 if args.fast else 100)

text = default_corpus().text[: 100_000 if args.fast else 1_000_000]
tok = CharTokenizer.from_text(text)
data = TokenDataset(tok.encode(text), val_fraction=0.1)


class CharLM(nn.Module):
    """Embedding + sinusoidal positions → n causal encoder layers (Post- or Pre-LN) → [LayerNorm] → logits."""

    def __init__(self, n_layers, norm_first):
        super().__init__()
        self.embed = nn.Embedding(tok.vocab_size, d_model)
        self.pos = nn.PositionalEncoding(d_model, dropout=0.0, max_len=T, batch_first=True)
        layer = nn.TransformerEncoderLayer(d_model, n_head, 4 * d_model, dropout=0.0, batch_first=True,
                                           norm_first=norm_first)
        # Pre-LN ends with a LayerNorm (its residual stream is never normalized otherwise); Post-LN's
        # last layer already ends with one
        self.encoder = nn.TransformerEncoder(layer, n_layers, norm=nn.LayerNorm(d_model) if norm_first else None)
        self.head = nn.Linear(d_model, tok.vocab_size)
        for p in self.parameters():
            if p.ndim > 1:
                nn.init.xavier_uniform_(p)  # as nn.Transformer and the paper

    def forward(self, idx):
        x = self.pos(self.embed(idx) * math.sqrt(d_model))  # (B, T, D)
        return self.head(self.encoder(x, is_causal=True, mask=nn.Transformer.generate_square_subsequent_mask(T)))


def lm_loss(model, x, y):
    logits = model(x)  # (B, T, V)
    return F.cross_entropy(logits.reshape(-1, tok.vocab_size), y.reshape(-1))


# ---------------------------------------------------------------------------------------------- 1
print(f"1. ||grad of linear2.weight|| per layer at initialization (mean of {grad_batches} batches of {B}x{T} characters)")
grad_norms = {}
for n_layers in (6, 12):
    for kind, norm_first in (("Post-LN", False), ("Pre-LN", True)):
        mt.manual_seed(args.seed)
        model = CharLM(n_layers, norm_first)
        norms = np.zeros(n_layers)
        for _ in range(grad_batches):
            x, y = data.get_batch("train", B, T)
            model.zero_grad()
            lm_loss(model, x, y).backward()
            norms += [float(np.linalg.norm(layer.linear2.weight.grad.numpy())) for layer in model.encoder.layers]
        norms /= grad_batches
        grad_norms[(kind, n_layers)] = norms
        print(f"   {kind:7s} {n_layers:2d} layers: " + " ".join(f"{v:.3f}" for v in norms))


def trend(norms):
    """Mean gradient norm of the last third of the layers over that of the first third."""
    k = len(norms) // 3
    return norms[-k:].mean() / norms[:k].mean()


def verdict(r):
    return "grows toward the output" if r > 1.1 else ("level" if r >= 0.9 else "shrinks toward the output")


print("   last third of the layers / first third:")
for n_layers in (6, 12):
    post, pre = trend(grad_norms[("Post-LN", n_layers)]), trend(grad_norms[("Pre-LN", n_layers)])
    print(f"   {n_layers:2d} layers: Post-LN {post:.2f} ({verdict(post)}), Pre-LN {pre:.2f} ({verdict(pre)})")

# ---------------------------------------------------------------------------------------------- 2
print(f"2. 6-layer models, Adam at lr {lr:g}, {train_steps} steps, with and without {warmup} warm-up steps")
curves, final = {}, {}
eval_set = data.eval_batches(B, T, 4)
for kind, norm_first in (("Post-LN", False), ("Pre-LN", True)):
    for use_warmup in (False, True):
        mt.manual_seed(args.seed)
        model = CharLM(6, norm_first)
        opt = Adam(model.parameters(), lr=lr, betas=(0.9, 0.98))
        sched = LambdaLR(opt, (lambda t: min(1.0, (t + 1) / warmup)) if use_warmup else (lambda t: 1.0))
        curve = []
        for step in range(train_steps):
            x, y = data.get_batch("train", B, T)
            loss = lm_loss(model, x, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            curve.append(loss.item())
        with mt.no_grad():
            held = float(np.mean([lm_loss(model, x, y).item() for x, y in eval_set]))
        name = f"{kind}, {'with' if use_warmup else 'no'} warm-up"
        curves[name], final[name] = curve, held
        print(f"   {name:24s} held-out loss {held:.3f} (last 20 training steps {np.mean(curve[-20:]):.3f})")

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib is not installed: no figure")
else:
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    for ax, n_layers in zip(axes[:2], (6, 12)):
        for kind, color in (("Post-LN", "tab:red"), ("Pre-LN", "tab:blue")):
            v = grad_norms[(kind, n_layers)]
            ax.plot(np.arange(1, n_layers + 1), v, "o-", color=color, label=kind)
        ax.set_xlabel("layer")
        ax.set_ylabel("||grad W2|| at init")
        ax.set_title(f"{n_layers} layers")
        ax.legend()
    k = 10
    for (name, curve), style in zip(curves.items(), ("r--", "r-", "b--", "b-")):
        axes[2].plot(np.arange(k, len(curve) + 1), np.convolve(curve, np.ones(k) / k, "valid"), style, label=name)
    axes[2].set_xlabel("step")
    axes[2].set_ylabel("training loss (moving average)")
    axes[2].set_title(f"6 layers, Adam lr {lr:g}")
    axes[2].legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(args.figure)), exist_ok=True)
    fig.savefig(args.figure, dpi=110)
    print(f"figure: {args.figure}")

"""An encoder-decoder Transformer learns to reverse digit sequences, on the CPU, without PyTorch.

    source  3 1 4 1 5 9 2          (5 to 12 digits)
    target  <bos> 2 9 5 1 4 1 3 <eos>

The model is ``nn.Transformer`` (Pre-LN, 2 + 2 layers, d_model 64) between a shared token
embedding with sinusoidal positions and a linear read-out, trained with teacher forcing
(cross-entropy on the next target token) and evaluated by greedy decoding on held-out sequences
that never appear in training: a sequence counts only when every digit and the end token are right.

    python examples/train_reverse.py            # about 3 minutes on a 2-core CPU: 99.9% exact match
    python examples/train_reverse.py --fast     # seconds: a smoke test with a smaller model
"""

import os

# One BLAS thread: these models multiply small matrices, which a second OpenBLAS thread does not
# speed up, and on a busy machine makes wait milliseconds for a time slice (set before NumPy loads).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import minitorch_ln as mt  # noqa: E402
import minitorch_ln.nn as nn  # noqa: E402
import minitorch_ln.nn.functional as F  # noqa: E402
from minitorch_ln.optim import AdamW  # noqa: E402
from minitorch_ln.optim.lr_scheduler import LinearWarmupCosineLR  # noqa: E402

PAD, BOS, EOS = 10, 11, 12  # digits are tokens 0-9
VOCAB = 13
MIN_LEN, MAX_LEN = 5, 12

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--fast", action="store_true", help="a few seconds: small model, few steps")
parser.add_argument("--steps", type=int, default=None, help="training steps (default 4000; 60 with --fast)")
parser.add_argument("--batch-size", type=int, default=64)
parser.add_argument("--lr", type=float, default=2e-3)
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--figure", default=os.path.join(os.path.dirname(__file__), "figures", "train_reverse.png"))
args = parser.parse_args()

steps = args.steps or (60 if args.fast else 4000)
d_model, n_layers, ff = (32, 1, 64) if args.fast else (64, 2, 128)
n_heldout = 200 if args.fast else 1000
eval_every = max(steps // 5, 1)
mt.manual_seed(args.seed)
rng = np.random.default_rng(args.seed)


# ---------------------------------------------------------------------------------------------- data
def random_sequences(n):
    lengths = rng.integers(MIN_LEN, MAX_LEN + 1, size=n)
    return [tuple(rng.integers(0, 10, size=k).tolist()) for k in lengths]


heldout = list(dict.fromkeys(random_sequences(n_heldout)))  # distinct
heldout_set = set(heldout)


def encode(seqs):
    """(src (B, 12), tgt (B, 14)) int64 arrays: src padded; tgt = <bos> reversed <eos>, padded."""
    src = np.full((len(seqs), MAX_LEN), PAD, dtype=np.int64)  # (B, S)
    tgt = np.full((len(seqs), MAX_LEN + 2), PAD, dtype=np.int64)  # (B, S + 2)
    for i, s in enumerate(seqs):
        src[i, :len(s)] = s
        tgt[i, 0], tgt[i, 1:len(s) + 1], tgt[i, len(s) + 1] = BOS, s[::-1], EOS
    return src, tgt


def training_batch(n):
    seqs = [s for s in random_sequences(n) if s not in heldout_set]  # held-out sequences never train
    return encode(seqs)


# ---------------------------------------------------------------------------------------------- model
class Reverser(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d_model)
        self.pos = nn.PositionalEncoding(d_model, dropout=0.0, max_len=MAX_LEN + 2, batch_first=True)
        self.transformer = nn.Transformer(d_model, nhead=4, num_encoder_layers=n_layers, num_decoder_layers=n_layers,
                                          dim_feedforward=ff, dropout=0.0, batch_first=True, norm_first=True)
        self.head = nn.Linear(d_model, VOCAB)

    def forward(self, src, tgt_in):
        src_pad = src == PAD  # (B, S) True where padding: never attended to
        s = self.pos(self.embed(src) * math.sqrt(d_model))  # (B, S, D)
        t = self.pos(self.embed(tgt_in) * math.sqrt(d_model))  # (B, T, D)
        causal = nn.Transformer.generate_square_subsequent_mask(tgt_in.shape[1])  # (T, T)
        h = self.transformer(s, t, tgt_mask=causal, src_key_padding_mask=src_pad, memory_key_padding_mask=src_pad,
                             tgt_is_causal=True)  # (B, T, D)
        return self.head(h)  # (B, T, V)


def greedy_decode(model, src):
    """Greedy decoding of every source at once: (B, 13) predicted tokens after <bos>."""
    model.eval()
    out = np.full((src.shape[0], 1), BOS, dtype=np.int64)  # (B, 1)
    with mt.no_grad():
        for _ in range(MAX_LEN + 1):
            logits = model(mt.tensor(src), mt.tensor(out))  # (B, t, V)
            nxt = logits.array[:, -1, :].argmax(-1)  # (B,)
            out = np.concatenate([out, nxt[:, None]], axis=1)  # (B, t + 1)
    model.train()
    return out[:, 1:]


def exact_match(model, seqs):
    """Per sequence: True when the decoded output is the reversal followed by <eos>."""
    src, tgt = encode(seqs)
    pred = greedy_decode(model, src)  # (B, 13)
    ok = []
    for s, p in zip(seqs, pred):
        want = list(s[::-1]) + [EOS]
        ok.append(p[:len(want)].tolist() == want)
    return np.array(ok)


model = Reverser()
decay = [p for p in model.parameters() if p.ndim >= 2]
rest = [p for p in model.parameters() if p.ndim < 2]
opt = AdamW([{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}], lr=args.lr,
            betas=(0.9, 0.98))
sched = LinearWarmupCosineLR(opt, warmup_steps=min(100, steps // 10), total_steps=steps, min_lr=args.lr / 20)
print(f"nn.Transformer: {sum(p.numel() for p in model.parameters()):,} parameters, d_model {d_model}, "
      f"{n_layers}+{n_layers} Pre-LN layers; {len(heldout)} held-out sequences of lengths {MIN_LEN}-{MAX_LEN}")

# ---------------------------------------------------------------------------------------------- training
losses, evals = [], []
t0 = time.perf_counter()
for step in range(1, steps + 1):
    src, tgt = training_batch(args.batch_size)
    logits = model(mt.tensor(src), mt.tensor(tgt[:, :-1]))  # (B, 13, V)
    B, T, V = logits.shape
    loss = F.cross_entropy(logits.reshape(B * T, V), mt.tensor(tgt[:, 1:].reshape(-1)), ignore_index=PAD)
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    losses.append(loss.item())
    if step % eval_every == 0 or step == steps:
        acc = exact_match(model, heldout[:200]).mean()
        evals.append((step, acc))
        print(f"step {step:5d}  loss {np.mean(losses[-eval_every:]):.4f}  held-out exact match (200 seqs) "
              f"{acc:.1%}  {time.perf_counter() - t0:.0f} s")
train_seconds = time.perf_counter() - t0

# ---------------------------------------------------------------------------------------------- results
ok = exact_match(model, heldout)
lengths = np.array([len(s) for s in heldout])
print(f"trained {steps} steps in {train_seconds:.0f} s ({train_seconds / 60:.1f} min)")
print(f"first/last 50-step mean loss: {np.mean(losses[:50]):.4f} -> {np.mean(losses[-50:]):.4f}")
print(f"held-out exact-match accuracy: {ok.mean():.2%} ({ok.sum()}/{len(ok)} sequences of lengths {MIN_LEN}-{MAX_LEN})")
by_length = {k: ok[lengths == k].mean() for k in range(MIN_LEN, MAX_LEN + 1) if (lengths == k).any()}
print("by length: " + ", ".join(f"{k}: {v:.0%}" for k, v in by_length.items()))
src, _ = encode(heldout[:3])
for s, p in zip(heldout[:3], greedy_decode(model, src)):
    print(f"  {''.join(map(str, s)):>12} -> {''.join(str(t) for t in p if t < 10)}")

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib is not installed: no figure")
else:
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.6))
    k = 25
    a.plot(np.arange(1, len(losses) + 1), losses, alpha=0.3, color="tab:blue")
    if len(losses) >= k:
        a.plot(np.arange(k, len(losses) + 1), np.convolve(losses, np.ones(k) / k, "valid"), color="tab:blue")
    a.set_yscale("log")
    a.set_xlabel("step")
    a.set_ylabel("cross-entropy per target token")
    a.set_title("training loss (teacher forcing)")
    b.bar(list(by_length), [100 * v for v in by_length.values()], color="tab:green")
    b.set_ylim(0, 105)
    b.set_xlabel("sequence length")
    b.set_ylabel("exact match (%)")
    b.set_title(f"held-out greedy decoding: {ok.mean():.1%} overall")
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(args.figure)), exist_ok=True)
    fig.savefig(args.figure, dpi=110)
    print(f"figure: {args.figure}")

"""BatchNorm, GroupNorm and LayerNorm in a small CNN on 8x8 handwritten digits, at batch sizes 2, 8, 64.

With image batches (B, C, H, W) the three norms are one formula over different axes:

    BatchNorm2d(C)        each channel over (B, H, W): its statistics depend on the other images
    GroupNorm(G, C)       each image, each group of C/G channels, over (C/G, H, W)
    LayerNorm([C, H, W])  each image over (C, H, W): its statistics never depend on the batch

So BatchNorm alone has a training mode (batch statistics) and an eval mode (the running averages
it collected); the smaller the batch, the noisier the batch statistics it trained with, and the
further apart the two modes. Every norm (and none) trains the same CNN with the same optimizer on
the same images, at each batch size for the same number of epochs (so every run sees the same
examples, and the batch-2 runs take 32 times as many steps as the batch-64 ones). Reported per
(norm, batch size), as mean (and std over seeds, in full mode):

    eval acc    test accuracy in eval mode (BatchNorm: the running statistics)
    batch acc   test accuracy in training mode, the test set fed in batches of the training batch
                size (BatchNorm: each test batch's own statistics, as in training)
    gap         eval acc - batch acc, in points (exactly 0 for a norm without batch statistics)
    flips       % of test images whose predicted digit differs between the two modes
    moved       the probability that moves between the two modes, in % (the total variation
                distance between their predicted distributions, averaged over the test images)
    ms/step     median time of one training step (forward, backward, Adam step), timed apart

and verdicts computed from these numbers (not asserted: whatever comes out is printed). BatchNorm
has two sources of train/eval mismatch: the noise of small batches' statistics, and, after few
steps (batch 64 in --fast: 44 steps), running averages that lag behind the changing weights.

    python examples/batchnorm_images.py [--fast] [--seeds N]
"""

import os

# One BLAS thread: these models multiply small matrices, which a second OpenBLAS thread does not
# speed up, and on a busy machine makes wait milliseconds for a time slice (set before NumPy loads).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
try:
    from sklearn.datasets import load_digits  # noqa: E402 - the 8x8 digits ship with scikit-learn
except ImportError:
    raise SystemExit("examples/batchnorm_images.py needs scikit-learn for its 8x8 digits: "
                     "pip install 'minitorch-ln[examples]' (or pip install scikit-learn)") from None

import minitorch_ln as mt  # noqa: E402
import minitorch_ln.nn as nn  # noqa: E402
import minitorch_ln.nn.functional as F  # noqa: E402
from minitorch_ln.optim import Adam  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--fast", action="store_true", help="one seed, fewer epochs (seconds)")
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--seeds", type=int, default=None, help="training seeds (default 1 fast, 3 full)")
parser.add_argument("--epochs", type=int, default=None, help="epochs at every batch size (default 2 fast, 12 full)")
parser.add_argument("--figure", default=os.path.join(os.path.dirname(__file__), "figures", "batchnorm_images.png"))
args = parser.parse_args()
n_seeds = args.seeds or (1 if args.fast else 3)
epochs = args.epochs or (2 if args.fast else 12)
batch_sizes = (2, 8, 64)
norms = ("BatchNorm", "GroupNorm", "LayerNorm", "none")
lr = 2e-3

# ------------------------------------------------------------------------------------------ data
# 1,797 grey 8x8 images with values 0..16, shipped with scikit-learn (no download). 1,408 train
# images (divisible by 2, 8 and 64: every step has exactly B images) and 384 test images (the same
# for the test batches); 5 images are left out. The split is fixed by --seed, not by the training seeds.
digits = load_digits()
images = (digits.images / 16.0).astype(np.float32)[:, None]  # (1797, 1, 8, 8) in [0, 1]
perm = np.random.default_rng(args.seed).permutation(len(images))
train, test = perm[:1408], perm[1408:1408 + 384]
x_train, y_train = images[train], digits.target[train]
x_test, y_test = images[test], digits.target[test]
chance = np.bincount(y_test).max() / len(y_test)

# ----------------------------------------------------------------------------------------- model
channels = (8, 16, 32)


def make_norm(kind, c, side):
    if kind == "BatchNorm":
        return nn.BatchNorm2d(c)
    if kind == "GroupNorm":
        return nn.GroupNorm(4, c)
    if kind == "LayerNorm":
        # the LayerNorm module itself over (C, H, W), with a weight per element. GroupNorm(1, C)
        # has the same statistics but one weight per channel: checked equal at initialization below
        return nn.LayerNorm([c, side, side])
    return nn.Identity()


class CNN(nn.Module):
    def __init__(self, kind):
        super().__init__()
        c1, c2, c3 = channels
        self.features = nn.Sequential(
            nn.Conv2d(1, c1, 3, padding=1), make_norm(kind, c1, 8), nn.ReLU(), nn.MaxPool2d(2),  # (B, c1, 4, 4)
            nn.Conv2d(c1, c2, 3, padding=1), make_norm(kind, c2, 4), nn.ReLU(), nn.MaxPool2d(2),  # (B, c2, 2, 2)
            nn.Conv2d(c2, c3, 3, padding=1), make_norm(kind, c3, 2), nn.ReLU(),  # (B, c3, 2, 2)
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(c3 * 4, 10))

    def forward(self, x):  # (B, 1, 8, 8)
        return self.head(self.features(x))  # (B, 10)


probe = mt.tensor(np.random.default_rng(1).standard_normal((4, 8, 4, 4)), dtype=mt.float32)  # (4, C, H, W)
with mt.no_grad():
    ln_vs_gn1 = np.abs(nn.LayerNorm([8, 4, 4])(probe).numpy() - nn.GroupNorm(1, 8)(probe).numpy()).max()
print(f"LayerNorm([C, H, W]) vs GroupNorm(1, C) at initialization: max |difference| {ln_vs_gn1:.2g}")


def predict(model, x, batch_size):
    with mt.no_grad():
        logits = [model(mt.tensor(x[i:i + batch_size])).numpy() for i in range(0, len(x), batch_size)]
    logits = np.concatenate(logits)  # (N, 10)
    p = np.exp(logits - logits.max(1, keepdims=True))
    return p / p.sum(1, keepdims=True)  # (N, 10): the predicted probabilities


def train_step(model, opt, batch):
    loss = F.cross_entropy(model(mt.tensor(x_train[batch])), mt.tensor(y_train[batch]))
    opt.zero_grad()
    loss.backward()
    opt.step()


def run(kind, batch_size, seed):
    mt.manual_seed(seed)  # the same initial weights for every norm and batch size (norms start at 1 and 0)
    order = np.random.default_rng(seed + 1000)  # the same image order for every norm
    model = CNN(kind)
    opt = Adam(model.parameters(), lr=lr)
    for _ in range(epochs):
        idx = order.permutation(len(x_train))
        for i in range(0, len(x_train), batch_size):
            train_step(model, opt, idx[i:i + batch_size])
    eval_p = predict(model.eval(), x_test, len(x_test))
    # training mode after eval mode: in training mode BatchNorm also updates its running statistics
    batch_p = predict(model.train(), x_test, batch_size)
    eval_pred, batch_pred = eval_p.argmax(1), batch_p.argmax(1)
    return dict(eval=100 * (eval_pred == y_test).mean(), batch=100 * (batch_pred == y_test).mean(),
                flips=100 * (eval_pred != batch_pred).mean(),
                moved=100 * 0.5 * np.abs(eval_p - batch_p).sum(1).mean())


print(f"{len(x_train)} train / {len(x_test)} test digits, {epochs} epochs at every batch size, Adam lr {lr}, "
      f"{n_seeds} seed(s); chance (the most common test digit) {100 * chance:.1f}%")
results = {}  # (norm, batch size) -> dict of per-seed arrays
for kind in norms:
    for b in batch_sizes:
        runs = [run(kind, b, args.seed + s) for s in range(n_seeds)]
        results[kind, b] = {k: np.array([r[k] for r in runs]) for k in ("eval", "batch", "flips", "moved")}

# Speed, timed apart from training and in turns (10 steps of each model, round after round), so that
# a busy machine slows every norm alike; the median, since the first steps also compile the kernels.
timers = {}
for kind, b in results:
    model = CNN(kind)
    timers[kind, b] = (model, Adam(model.parameters(), lr=lr), [])
for _ in range(5 if args.fast else 20):
    for (kind, b), (model, opt, times) in timers.items():
        for _ in range(10):
            start = time.perf_counter()
            train_step(model, opt, np.arange(b))
            times.append(time.perf_counter() - start)
for key, (model, opt, times) in timers.items():
    results[key]["ms"] = np.array([1e3 * np.median(times)])


def cell(values):
    return f"{values.mean():5.1f}" + (f" ±{values.std():3.1f}" if n_seeds > 1 else "")


print(" " * 7 + f"{'norm':<10} {'batch':>5} {'eval acc':>10} {'batch acc':>10} {'gap':>10} {'flips':>10} "
      f"{'moved':>9} {'ms/step':>8} {'examples/s':>10}")
for (kind, b), r in results.items():
    ms = r["ms"].mean()
    print(f"table: {kind:<10} {b:>5} {cell(r['eval']):>10} {cell(r['batch']):>10} {cell(r['eval'] - r['batch']):>10} "
          f"{cell(r['flips']):>10} {r['moved'].mean():9.3g} {ms:8.2f} {b / ms * 1e3:10.0f}")

# -------------------------------------------------------------------------------------- verdicts
acc = {key: r["eval"].mean() for key, r in results.items()}
gap = {key: np.abs(r["eval"] - r["batch"]).mean() for key, r in results.items()}  # mean |gap| over seeds
moved = {key: r["moved"].mean() for key, r in results.items()}


def verdict(name, holds, numbers):
    print(f"verdict: {name}: {'yes' if holds else 'no'} ({numbers})")


verdict("BatchNorm at batch 64 >= LayerNorm at batch 64 - 1 point", acc["BatchNorm", 64] >= acc["LayerNorm", 64] - 1,
        f"{acc['BatchNorm', 64]:.1f} vs {acc['LayerNorm', 64]:.1f}")
drop = {kind: acc[kind, 64] - acc[kind, 2] for kind in norms}  # negative: batch 2 is better
verdict("BatchNorm's eval accuracy falls more (or rises less) from batch 64 to batch 2 than LayerNorm's",
        drop["BatchNorm"] > drop["LayerNorm"],
        f"eval acc at 64 - at 2: BatchNorm {drop['BatchNorm']:+.1f}, LayerNorm {drop['LayerNorm']:+.1f} points")
verdict("BatchNorm's train/eval gap is larger at batch 2 than at batch 64", gap["BatchNorm", 2] > gap["BatchNorm", 64],
        f"|gap| {gap['BatchNorm', 2]:.2f} at 2, {gap['BatchNorm', 64]:.2f} at 64 points")
verdict("BatchNorm moves more probability between the modes at batch 2 than at batch 64",
        moved["BatchNorm", 2] > moved["BatchNorm", 64],
        f"moved {moved['BatchNorm', 2]:.2f}% at 2, {moved['BatchNorm', 64]:.2f}% at 64")
# the same predictions in both modes; the probabilities may differ by float rounding (a GEMM of
# another shape), so "moved" is compared with 0.001%, far below BatchNorm's
others = [(kind, b) for kind in norms[1:] for b in batch_sizes]
verdict("GroupNorm, LayerNorm and none: training mode = eval mode at every batch size",
        all(gap[key] == 0 and results[key]["flips"].max() == 0 and moved[key] < 1e-3 for key in others),
        f"largest |gap| {max(gap[key] for key in others):.2f} points, "
        f"largest moved {max(moved[key] for key in others):.2g}%")
spread = {kind: np.ptp([acc[kind, b] for b in batch_sizes]) for kind in norms}
verdict("LayerNorm and GroupNorm accuracy within 2 points across batch sizes",
        spread["LayerNorm"] <= 2 and spread["GroupNorm"] <= 2,
        ", ".join(f"{kind} range {spread[kind]:.1f}" for kind in norms))
worst = min(acc[kind, b] for kind in norms[:3] for b in batch_sizes)
verdict(f"every run with a norm well above chance (> 3 x {100 * chance:.1f}%)", worst > 300 * chance,
        f"lowest eval acc {worst:.1f}")
verdict("without a norm, batch 64 (the fewest steps) is the lowest of the four norms",
        acc["none", 64] < min(acc[kind, 64] for kind in norms[:3]),
        ", ".join(f"{kind} {acc[kind, 64]:.1f}" for kind in norms))
if n_seeds > 1:
    std = {b: results["BatchNorm", b]["eval"].std() for b in batch_sizes}
    verdict("BatchNorm varies more over seeds at batch 2 than at batch 64", std[2] > std[64],
            f"std {std[2]:.2f} at 2, {std[64]:.2f} at 64 points")
ms = {kind: np.mean([results[kind, b]["ms"].mean() for b in batch_sizes]) for kind in norms}
print("speed: ms/step averaged over batch sizes: " + ", ".join(f"{kind} {ms[kind]:.2f}" for kind in norms))

# ---------------------------------------------------------------------------------------- figure
try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib is not installed: no figure")
else:
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    for i, kind in enumerate(norms):
        ev = [results[kind, b]["eval"] for b in batch_sizes]
        ba = [results[kind, b]["batch"] for b in batch_sizes]
        axes[0].errorbar(batch_sizes, [v.mean() for v in ev], [v.std() for v in ev], color=f"C{i}", marker="o",
                         capsize=3, label=f"{kind} eval mode")
        axes[0].plot(batch_sizes, [v.mean() for v in ba], color=f"C{i}", ls="--", marker="x")
        mv = [results[kind, b]["moved"] for b in batch_sizes]
        axes[1].errorbar(batch_sizes, [v.mean() for v in mv], [v.std() for v in mv], color=f"C{i}", marker="o",
                         capsize=3, label=kind)
        axes[2].bar(np.arange(len(batch_sizes)) + 0.2 * (i - 1.5), [results[kind, b]["ms"].mean() for b in batch_sizes],
                    0.2, color=f"C{i}", label=kind)
    for ax, ylabel, title in ((axes[0], "test accuracy (%)", "test accuracy: eval mode (solid), training mode (dashed)"),
                              (axes[1], "probability moved (%)", "training mode vs eval mode: probability moved")):
        ax.set_xscale("log", base=2)
        ax.set_xticks(batch_sizes, [str(b) for b in batch_sizes])
        ax.set_xlabel("batch size")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend(fontsize=8)
    axes[2].set_xticks(np.arange(len(batch_sizes)), [f"batch {b}" for b in batch_sizes])
    axes[2].set_ylabel("ms per training step (median)")
    axes[2].set_title("training speed")
    axes[2].legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(args.figure)), exist_ok=True)
    fig.savefig(args.figure, dpi=110)
    print(f"figure: {args.figure}")

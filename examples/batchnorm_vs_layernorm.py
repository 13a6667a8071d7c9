"""BatchNorm normalizes each feature over the batch; LayerNorm normalizes each token over its features.

So a token's LayerNorm output is a function of that token alone, while its BatchNorm output depends
on whichever other examples share its batch. This script measures what follows from that:

1. one token's output when the rest of the batch is replaced: LayerNorm unchanged (to the bit),
   BatchNorm changed;
2. the spread of one token's BatchNorm output over random batches of size 2 and of size 64;
3. train vs eval mode: BatchNorm switches from batch statistics to running averages, so the same
   input gives a different output; LayerNorm has no such switch;
4. the same small classifier trained at batch size 2 with each norm.

    python examples/batchnorm_vs_layernorm.py [--fast]
"""

import os

# One BLAS thread: these models multiply small matrices, which a second OpenBLAS thread does not
# speed up, and on a busy machine makes wait milliseconds for a time slice (set before NumPy loads).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402

import numpy as np  # noqa: E402

import minitorch_ln as mt  # noqa: E402
import minitorch_ln.nn as nn  # noqa: E402
import minitorch_ln.nn.functional as F  # noqa: E402
from minitorch_ln.optim import Adam  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--fast", action="store_true", help="fewer batches and training steps (seconds)")
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--figure", default=os.path.join(os.path.dirname(__file__), "figures", "batchnorm_vs_layernorm.png"))
args = parser.parse_args()
mt.manual_seed(args.seed)
rng = np.random.default_rng(args.seed)
D = 16  # features per token

ln = nn.LayerNorm(D)
bn = nn.BatchNorm1d(D)  # training mode: normalizes with the batch's own mean and variance

# ---------------------------------------------------------------------------------------------- 1
token = rng.standard_normal(D) * 2 + 1  # (D,)
batch_a = np.vstack([token, rng.standard_normal((7, D))])  # (8, D): the token and 7 others
batch_b = np.vstack([token, rng.standard_normal((7, D)) * 3 - 2])  # (8, D): the same token, different others


def first_row(module, batch):
    with mt.no_grad():
        return module(mt.tensor(batch, dtype=mt.float32)).numpy()[0]  # (D,)


ln_change = np.abs(first_row(ln, batch_a) - first_row(ln, batch_b)).max()
bn_change = np.abs(first_row(bn, batch_a) - first_row(bn, batch_b)).max()
print("1. one token, two different batches around it: max |change| of its output")
print(f"   LayerNorm: {ln_change:.3g}")
print(f"   BatchNorm: {bn_change:.3g}")

# ---------------------------------------------------------------------------------------------- 2
n_batches = 50 if args.fast else 300
spread, samples = {}, {}
for size in (2, 64):
    outs = []
    for _ in range(n_batches):
        batch = np.vstack([token, rng.standard_normal((size - 1, D))])  # (size, D)
        outs.append(first_row(bn, batch))
    outs = np.array(outs)  # (n_batches, D)
    spread[size] = outs.std(axis=0).mean()
    samples[size] = outs[:, 0]
ln_outs = np.array([first_row(ln, np.vstack([token, rng.standard_normal((1, D))])) for _ in range(20)])  # (20, D)
ln_spread = np.abs(ln_outs - ln_outs[0]).max()  # not .std(): the std of equal float32 values can round to 1e-8
print(f"2. std of the token's output over {n_batches} random batches (mean over features)")
print(f"   BatchNorm, batch size 2:  {spread[2]:.3f}")
print(f"   BatchNorm, batch size 64: {spread[64]:.3f}")
print(f"   LayerNorm, any batch:     {ln_spread:.3g} (max |change| over 20 batches of 2)")

# ---------------------------------------------------------------------------------------------- 3
bn3 = nn.BatchNorm1d(D)  # momentum 0.1, as PyTorch
data_mean, data_std = 3.0, 2.0
for _ in range(5 if args.fast else 20):  # a few training-mode batches fill the running averages
    with mt.no_grad():
        bn3(mt.tensor(rng.standard_normal((2, D)) * data_std + data_mean, dtype=mt.float32))
probe = mt.tensor(rng.standard_normal((32, D)) * data_std + data_mean, dtype=mt.float32)
with mt.no_grad():
    bn_train = bn3.train()(probe).numpy()
    bn_eval = bn3.eval()(probe).numpy()
    ln_train = ln.train()(probe).numpy()
    ln_eval = ln.eval()(probe).numpy()
print("3. the same 32 inputs in train mode and in eval mode: mean |difference| of the outputs")
print(f"   BatchNorm (running stats after {5 if args.fast else 20} batches of 2): {np.abs(bn_train - bn_eval).mean():.3f}")
print(f"   LayerNorm: {np.abs(ln_train - ln_eval).mean():.3g}")

# ---------------------------------------------------------------------------------------------- 4
n_classes, in_dim, width = 4, 8, 64
centers = rng.standard_normal((n_classes, in_dim)) * 1.2  # (K, in_dim)


def make_data(n):
    y = rng.integers(0, n_classes, size=n)
    x = centers[y] + rng.standard_normal((n, in_dim))  # (n, in_dim)
    return x.astype(np.float32), y


x_train, y_train = make_data(2000)
x_test, y_test = make_data(2000)


class Classifier(nn.Module):
    def __init__(self, norm):
        super().__init__()
        self.fc1, self.norm1 = nn.Linear(in_dim, width), norm(width)
        self.fc2, self.norm2 = nn.Linear(width, width), norm(width)
        self.out = nn.Linear(width, n_classes)

    def forward(self, x):
        h = F.relu(self.norm1(self.fc1(x)))  # (B, W)
        h = F.relu(self.norm2(self.fc2(h)))  # (B, W)
        return self.out(h)  # (B, K)


steps = 300 if args.fast else 3000
curves, accuracy = {}, {}
for name, norm in (("LayerNorm", nn.LayerNorm), ("BatchNorm", nn.BatchNorm1d)):
    mt.manual_seed(args.seed)
    order = np.random.default_rng(args.seed + 1)
    model = Classifier(norm)
    opt = Adam(model.parameters(), lr=3e-3)
    curve = []
    for step in range(steps):
        idx = order.integers(0, len(x_train), size=2)  # batch size 2
        loss = F.cross_entropy(model(mt.tensor(x_train[idx])), mt.tensor(y_train[idx]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        curve.append(loss.item())
    model.eval()
    with mt.no_grad():
        logits = model(mt.tensor(x_test))
        test_loss = F.cross_entropy(logits, mt.tensor(y_test)).item()
        acc = (logits.numpy().argmax(1) == y_test).mean()
    curves[name], accuracy[name] = curve, acc
    print(f"4. {name}: trained {steps} steps at batch size 2; eval-mode test accuracy {acc:.1%}, test loss {test_loss:.3f}")

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib is not installed: no figure")
else:
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    bins = np.linspace(-2.5, 2.5, 41)
    axes[0].hist(samples[2], bins=bins, alpha=0.6, label="BatchNorm, batch 2")
    axes[0].hist(samples[64], bins=bins, alpha=0.6, label="BatchNorm, batch 64")
    axes[0].axvline(first_row(ln, batch_a)[0], color="k", ls="--", label="LayerNorm (any batch)")
    axes[0].set_title("one token's output (feature 0) over random batches")
    axes[0].legend(fontsize=8)
    axes[1].bar(["BN train", "BN eval", "LN train", "LN eval"],
                [bn_train.std(), bn_eval.std(), ln_train.std(), ln_eval.std()], color=["C0", "C0", "C1", "C1"])
    axes[1].set_title(f"output std, train vs eval mode\n(mean |diff|: BN {np.abs(bn_train - bn_eval).mean():.2f}, LN 0)")
    k = 50
    for name, curve in curves.items():
        axes[2].plot(np.convolve(curve, np.ones(k) / k, "valid"), label=f"{name} (test acc {accuracy[name]:.0%})")
    axes[2].set_title("classifier trained at batch size 2")
    axes[2].set_xlabel("step")
    axes[2].set_ylabel("training loss (moving average)")
    axes[2].legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(args.figure)), exist_ok=True)
    fig.savefig(args.figure, dpi=110)
    print(f"figure: {args.figure}")

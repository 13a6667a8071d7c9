"""How the statistics of each layer's inputs drift during training, with and without LayerNorm.

"Internal covariate shift" (Ioffe & Szegedy, 2015) names the change, during training, of the
distribution each layer receives as the layers before it learn. Two 6-layer MLPs of identical
width are trained on the same data with the same optimizer; one normalizes each hidden layer with
LayerNorm before its ReLU. On a fixed probe batch, every few steps, the script records the mean
and the variance of what each ReLU receives, and reports how far they drifted from their values at
initialization: the drift of the variance as ``|log(var_t / var_0)|`` (a factor of e is 1.0), the
drift of the mean in units of the initial standard deviation.

    python examples/covariate_shift.py [--fast]
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
from minitorch_ln.optim import SGD  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--fast", action="store_true", help="fewer steps (seconds)")
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--figure", default=os.path.join(os.path.dirname(__file__), "figures", "covariate_shift.png"))
args = parser.parse_args()

depth, width, in_dim, n_classes = 6, 64, 16, 5
steps = 150 if args.fast else 2000
record_every = 10 if args.fast else 50
lr = 0.05
rng = np.random.default_rng(args.seed)
centers = rng.standard_normal((n_classes, in_dim)) * 1.5  # (K, in_dim)


def make_data(n):
    y = rng.integers(0, n_classes, size=n)
    return (centers[y] + rng.standard_normal((n, in_dim))).astype(np.float32), y


x_train, y_train = make_data(5000)
probe = mt.tensor(make_data(256)[0])  # (256, in_dim): the fixed batch the statistics are measured on


class MLP(nn.Module):
    def __init__(self, layer_norm):
        super().__init__()
        dims = [in_dim] + [width] * depth
        self.fcs = nn.ModuleList([nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:])])
        self.norms = nn.ModuleList([nn.LayerNorm(width) if layer_norm else nn.Identity() for _ in range(depth)])
        self.out = nn.Linear(width, n_classes)

    def forward(self, x, record=None):
        for fc, norm in zip(self.fcs, self.norms):
            h = norm(fc(x))  # (B, W): what this layer's ReLU receives
            if record is not None:
                record.append((float(h.mean().item()), float(h.var().item())))
            x = F.relu(h)
        return self.out(x)


history = {}
for name, layer_norm in (("without LayerNorm", False), ("with LayerNorm", True)):
    mt.manual_seed(args.seed)
    order = np.random.default_rng(args.seed + 1)
    model = MLP(layer_norm)
    opt = SGD(model.parameters(), lr=lr, momentum=0.9)
    stats, losses = [], []
    for step in range(steps + 1):
        if step % record_every == 0:
            rec = []
            with mt.no_grad():
                model(probe, record=rec)
            stats.append(rec)  # (depth, 2) per record
        if step == steps:
            break
        idx = order.integers(0, len(x_train), size=32)
        loss = F.cross_entropy(model(mt.tensor(x_train[idx])), mt.tensor(y_train[idx]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    stats = np.array(stats)  # (records, depth, 2)
    mean, var = stats[..., 0], stats[..., 1]
    var_drift = np.abs(np.log(var / var[0])).max(axis=0)  # (depth,)
    mean_drift = (np.abs(mean - mean[0]) / np.sqrt(var[0])).max(axis=0)  # (depth,)
    history[name] = dict(mean=mean, var=var, var_drift=var_drift, mean_drift=mean_drift, losses=losses)
    print(f"{name}: final training loss {np.mean(losses[-20:]):.3f}")
    print("   layer:                    " + " ".join(f"{i + 1:6d}" for i in range(depth)))
    print("   variance drift |log ratio|" + " ".join(f"{v:6.2f}" for v in var_drift))
    print("   mean drift (initial stds) " + " ".join(f"{v:6.2f}" for v in mean_drift))
    print(f"   largest variance drift: {var_drift.max():.2f}; largest mean drift: {mean_drift.max():.2f}")

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib is not installed: no figure")
else:
    fig, axes = plt.subplots(2, 2, figsize=(11, 6.5), sharex=True)
    t = np.arange(history["with LayerNorm"]["var"].shape[0]) * record_every
    cmap = plt.get_cmap("viridis")
    for col, name in enumerate(("without LayerNorm", "with LayerNorm")):
        h = history[name]
        for layer in range(depth):
            c = cmap(layer / max(depth - 1, 1))
            axes[0, col].plot(t, h["mean"][:, layer], color=c, label=f"layer {layer + 1}")
            axes[1, col].plot(t, h["var"][:, layer], color=c)
        axes[0, col].set_title(f"{name}: mean of each ReLU's input")
        axes[1, col].set_title(f"{name}: variance of each ReLU's input")
        axes[1, col].set_yscale("log")
        axes[1, col].set_xlabel("step")
    axes[0, 0].legend(fontsize=7, ncol=2)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(args.figure)), exist_ok=True)
    fig.savefig(args.figure, dpi=110)
    print(f"figure: {args.figure}")

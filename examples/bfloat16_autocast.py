"""bfloat16 autocast against float32 on the trainer's tiny GPT: loss curves and memory, same seed.

The model, optimizer (AdamW, decay on matrices), schedule and batches are `minitorch-ln train`'s
defaults (apps/train_setup.py) on the standard library's docstrings. One run keeps everything in
float32; the other runs the forward under `autocast("cpu", dtype=bfloat16)`, PyTorch's CPU mixed
precision: matmuls and linears compute in float32 and round their results to bfloat16 (their saved
activations are half the bytes), the float32 ops (softmax, layer_norm, losses) stay float32, the
weights and their gradients stay float32. Memory is the peak of Python's allocation tracer
(`tracemalloc`, which NumPy reports to) over one training step after warm-up.

    python examples/bfloat16_autocast.py            # 300 steps each
    python examples/bfloat16_autocast.py --fast     # 20 steps each
"""

import argparse
import time
import tracemalloc

import numpy as np

import minitorch_ln as mt
from minitorch_ln.apps.corpus import default_corpus
from minitorch_ln.apps.train_setup import TrainConfig, build_model, build_optimizer, build_scheduler
from minitorch_ln.nn import functional as F

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--fast", action="store_true", help="20 steps instead of 300")
parser.add_argument("--steps", type=int, default=None)
parser.add_argument("--figure", default="bfloat16_autocast.png")
args = parser.parse_args()
steps = args.steps or (20 if args.fast else 300)

text = default_corpus().text
chars = sorted(set(text))
lookup = {c: i for i, c in enumerate(chars)}
ids = np.fromiter((lookup[c] for c in text), np.int64, len(text))


def run(dtype):
    cfg = TrainConfig(steps=steps, lr_decay_steps=steps, warmup_steps=min(50, steps // 10))
    mt.manual_seed(cfg.seed)
    model = build_model(cfg, len(chars))
    opt = build_optimizer(model, cfg)
    sched = build_scheduler(opt, cfg)
    rng = np.random.default_rng(cfg.seed)  # the same batches for both runs
    T, B = cfg.block_size, cfg.batch_size
    losses, peak = [], 0
    t0 = time.perf_counter()
    for step in range(steps):
        start = rng.integers(0, len(ids) - T - 1, B)
        x = mt.tensor(np.stack([ids[s:s + T] for s in start]))  # (B, T)
        y = mt.tensor(np.stack([ids[s + 1:s + T + 1] for s in start]))  # (B, T)
        if step == 2:
            tracemalloc.start()
        with mt.autocast("cpu", dtype=mt.bfloat16, enabled=dtype == "bfloat16"):
            logits = model(x)
            logits = logits[0] if isinstance(logits, tuple) else logits
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        loss.backward()
        mt.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        opt.zero_grad(set_to_none=True)
        sched.step()
        if step == 2:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        losses.append(loss.item())
    return np.array(losses), peak, time.perf_counter() - t0


results = {d: run(d) for d in ("float32", "bfloat16")}
for d, (losses, peak, secs) in results.items():
    print(f"{d:9s} loss first {losses[0]:.4f}  mean of last 20 {losses[-20:].mean():.4f}  "
          f"peak step memory {peak / 2**20:.2f} MiB  time {secs:.1f} s")
(l32, m32, _), (l16, m16, _) = results["float32"], results["bfloat16"]
print(f"bfloat16/float32: peak step memory {m16 / m32:.2f}x; last-20 mean loss difference "
      f"{l16[-20:].mean() - l32[-20:].mean():+.4f}")

import matplotlib.pyplot as plt  # noqa: E402 - only needed for the figure

plt.figure(figsize=(6, 3.5))
for d, (losses, _, _) in results.items():
    plt.plot(losses, label=d)
plt.xlabel("step")
plt.ylabel("training loss")
plt.title("tiny GPT: float32 vs autocast bfloat16")
plt.legend()
plt.tight_layout()
plt.savefig(args.figure)
print(f"figure: {args.figure}")

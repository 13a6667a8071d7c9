"""Attention and the GPT train step against PyTorch on the CPU, as ratios (above 1: minitorch_ln is slower).

1. ``scaled_dot_product_attention`` with ``is_causal=True``, forward+backward, ``(B, H, T, Dh)``.
2. ``MultiheadAttention`` self-attention (causal, ``need_weights=False``), forward+backward, ``(B, T, D)``.
3. One GPT train step (forward, mean cross-entropy, backward; no optimizer) of the ``tiny`` preset
   (D 128, 4 layers, 4 heads, context 64) against its PyTorch twin holding the same weights.

Both sides run in this one process, float32, timed in alternation (repetition i of one right after
repetition i of the other, so a busy machine slows both alike); the best repetition and the
median are printed. Threads: PyTorch's default unless ``--threads N`` (which also sets it for
PyTorch; set ``OPENBLAS_NUM_THREADS`` for NumPy's BLAS before starting Python).

    python benchmarks/bench_attention.py [--fast] [--threads N] [--batch B]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import minitorch_ln as mt
import minitorch_ln.nn.functional as F
from minitorch_ln.interop.torch_models import torch_twin
from minitorch_ln.nn import GPT, GPTConfig, MultiheadAttention


def sdpa_steps(B, H, T, Dh):
    rng = np.random.default_rng(0)
    q, k, v, dy = (rng.standard_normal((B, H, T, Dh)).astype(np.float32) for _ in range(4))
    ours = [mt.tensor(a, requires_grad=True) for a in (q, k, v)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    dym, dyt = mt.tensor(dy), torch.from_numpy(dy)

    def mt_step():
        F.scaled_dot_product_attention(*ours, is_causal=True).backward(dym)

    def torch_step():
        torch.nn.functional.scaled_dot_product_attention(*theirs, is_causal=True).backward(dyt)

    return mt_step, torch_step


def mha_steps(B, T, D, H):
    rng = np.random.default_rng(0)
    m = MultiheadAttention(D, H, batch_first=True)
    tm = torch.nn.MultiheadAttention(D, H, batch_first=True)
    tm.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in m.state_dict().items()})
    x, dy = (rng.standard_normal((B, T, D)).astype(np.float32) for _ in range(2))
    xm, xt = mt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    dym, dyt = mt.tensor(dy), torch.from_numpy(dy)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(T)

    def mt_step():
        m.zero_grad()
        m(xm, xm, xm, need_weights=False, is_causal=True)[0].backward(dym)

    def torch_step():
        tm.zero_grad()
        tm(xt, xt, xt, need_weights=False, attn_mask=mask, is_causal=True)[0].backward(dyt)

    return mt_step, torch_step


def gpt_steps(B):
    cfg = GPTConfig.preset("tiny", vocab_size=65)
    model = GPT(cfg)
    twin = torch_twin(model)
    rng = np.random.default_rng(0)
    idx, tgt = rng.integers(0, 65, (B, cfg.block_size)), rng.integers(0, 65, (B, cfg.block_size))
    im, tm_ = mt.tensor(idx), mt.tensor(tgt)
    it, tt = torch.from_numpy(idx), torch.from_numpy(tgt)

    def mt_step():
        model.zero_grad()
        model(im, tm_)[1].backward()

    def torch_step():
        twin.zero_grad()
        twin(it, tt)[1].backward()

    return mt_step, torch_step


def race(mt_step, torch_step, reps):
    mt_step(), torch_step()  # warm-up (caches, allocator)
    times = {"mt": [], "torch": []}
    for _ in range(reps):
        for name, fn in (("mt", mt_step), ("torch", torch_step)):
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return {k: (min(v), float(np.median(v))) for k, v in times.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fast", action="store_true", help="fewer repetitions")
    ap.add_argument("--threads", type=int, default=None, help="PyTorch threads")
    ap.add_argument("--batch", type=int, default=16, help="batch size B (default 16)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    reps = 5 if args.fast else 20
    B = args.batch
    cases = [
        (f"sdpa causal fwd+bwd (B={B}, H=4, T=64, Dh=32)", sdpa_steps(B, 4, 64, 32)),
        (f"MultiheadAttention fwd+bwd (B={B}, T=64, D=128, H=4)", mha_steps(B, 64, 128, 4)),
        (f"GPT tiny train step (B={B}, T=64)", gpt_steps(B)),
    ]
    print(f"torch threads: {torch.get_num_threads()}; float32; best / median of {reps}")
    for name, (m, t) in cases:
        r = race(m, t, reps)
        (mb, mm), (tb, tmed) = r["mt"], r["torch"]
        print(f"{name:55s} mt {mb * 1e3:8.2f} / {mm * 1e3:8.2f} ms   torch {tb * 1e3:8.2f} / {tmed * 1e3:8.2f} ms   "
              f"ratio {mb / tb:5.2f} (median {mm / tmed:5.2f})")


if __name__ == "__main__":
    main()

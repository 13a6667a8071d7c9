"""Convolution on the CPU against PyTorch, as ratios: ``conv2d`` forward+backward and a small CNN training step.

1. ``F.conv2d`` at input ``(64, 32, 32, 32)`` float32 with a ``3×3`` kernel of 64 output channels
   (padding 1, a bias), forward and forward+backward under a random upstream gradient.
2. One training step of a small CNN on ``(64, 3, 32, 32)`` images: two blocks of
   ``Conv2d(3×3) → BatchNorm2d → ReLU → MaxPool2d(2)`` (32 and 64 channels), then a ``Linear`` to
   10 classes, cross-entropy, backward and an SGD step with momentum; the same weights in both.

Both run in this one process, timed in alternation (each repetition of one right after the same
repetition of the other), best of the repetitions reported and the median in brackets. A ratio
above 1 means minitorch_ln is slower; the target is at most 2 for both. ``--single-thread`` runs
both on one thread and measures CPU time (``time.process_time``), the steady measure on a shared
machine (see benchmarks/README.md).

    python benchmarks/bench_conv.py [--fast] [--single-thread]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

if "--single-thread" in sys.argv[1:]:  # read by OpenBLAS when it starts
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

import minitorch_ln as mt  # noqa: E402
import minitorch_ln.nn.functional as F  # noqa: E402
from minitorch_ln import kernels  # noqa: E402

from _timing import time_pair  # noqa: E402  (benchmarks/_timing.py)


def conv_steps():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 32, 32, 32)).astype(np.float32)
    w = (rng.standard_normal((64, 32, 3, 3)) / np.sqrt(32 * 9)).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    dy = rng.standard_normal((64, 64, 32, 32)).astype(np.float32)
    xm, wm, bm = (mt.tensor(a, requires_grad=True) for a in (x, w, b))
    xt, wt, bt = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    dym, dyt = mt.tensor(dy), torch.from_numpy(dy)

    def mt_fwd():
        with mt.no_grad():
            F.conv2d(xm, wm, bm, padding=1)

    def torch_fwd():
        with torch.no_grad():
            torch.nn.functional.conv2d(xt, wt, bt, padding=1)

    def mt_fb():
        xm.grad = wm.grad = bm.grad = None
        F.conv2d(xm, wm, bm, padding=1).backward(dym)

    def torch_fb():
        xt.grad = wt.grad = bt.grad = None
        torch.nn.functional.conv2d(xt, wt, bt, padding=1).backward(dyt)

    return {"forward": (mt_fwd, torch_fwd), "forward+backward": (mt_fb, torch_fb)}


def small_cnn(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 8 * 8, 10),
    )


def cnn_steps():
    rng = np.random.default_rng(1)
    images = rng.standard_normal((64, 3, 32, 32)).astype(np.float32)
    labels = rng.integers(0, 10, 64)
    theirs = small_cnn(torch)
    ours = small_cnn(mt)
    ours.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    opt_m = mt.optim.SGD(ours.parameters(), lr=0.01, momentum=0.9)
    opt_t = torch.optim.SGD(theirs.parameters(), lr=0.01, momentum=0.9)
    xm, ym = mt.tensor(images), mt.tensor(labels)
    xt, yt = torch.from_numpy(images), torch.from_numpy(labels)

    def mt_step():
        opt_m.zero_grad()
        F.cross_entropy(ours(xm), ym).backward()
        opt_m.step()

    def torch_step():
        opt_t.zero_grad()
        torch.nn.functional.cross_entropy(theirs(xt), yt).backward()
        opt_t.step()

    return mt_step, torch_step


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="fewer repetitions")
    parser.add_argument("--single-thread", action="store_true", help="one thread each, CPU time")
    args = parser.parse_args(argv)
    clock = time.perf_counter
    if args.single_thread:
        torch.set_num_threads(1)
        kernels.set_num_threads(1)
        clock = time.process_time
    repeat = 3 if args.fast else 10
    print(f"PyTorch {torch.__version__}: {torch.get_num_threads()} threads; minitorch_ln kernels: "
          f"{kernels.get_num_threads()} threads; {'CPU' if args.single_thread else 'wall'} time, best of {repeat} (median)")
    print(f"{'benchmark':<44} {'minitorch_ln':>21} {'PyTorch':>21} {'ratio':>6}")
    rows = [(f"conv2d (64, 32, 32, 32) 3x3 -> 64, {mode}", fns) for mode, fns in conv_steps().items()]
    rows.append(("small CNN train step, (64, 3, 32, 32)", cnn_steps()))
    for name, (ours, theirs) in rows:
        best_m, med_m, best_t, med_t = time_pair(ours, theirs, repeat, clock)
        print(f"{name:<44} {best_m * 1e3:8.1f} ms ({med_m * 1e3:7.1f}) {best_t * 1e3:8.1f} ms ({med_t * 1e3:7.1f}) "
              f"{best_m / best_t:6.2f}")


if __name__ == "__main__":
    main()

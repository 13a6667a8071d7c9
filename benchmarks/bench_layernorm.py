"""LayerNorm forward and forward+backward against ``torch.nn.functional.layer_norm`` on the CPU, as ratios.

Shapes ``(32, 128, 768)``, ``(8, 64, 64)`` and ``(64, 256, 1024)``, float32 and float64, with a weight
and a bias and a random upstream gradient; gradients are reset before every step, so neither side
pays for accumulating into ``.grad``. Both libraries run in this one process with their default
threads (PyTorch: one per core; minitorch_ln's NumPy kernels: blocks of rows on
``kernels.get_num_threads()`` threads). The two are timed in alternation, each repetition of one
right after the same repetition of the other, so that a busy machine slows both alike; the best of
the repetitions is reported (the median is printed too), with two ratios: of the best times and of
the medians. A ratio above 1 means minitorch_ln is slower. The target is at most 1 at
``(32, 128, 768)`` float32, forward+backward (issue 26). ``--shape B,L,D`` times that shape alone
(as many times as given), ``--repeat N`` sets the repetitions (default 20, 5 with ``--fast``).

``--single-thread`` runs both on one thread and measures CPU time (``time.process_time``) instead
of wall time: on a machine shared with other work, that ratio is the steadier one. In wall-time
mode idle threads are set to sleep rather than spin (``OMP_WAIT_POLICY=PASSIVE``,
``OPENBLAS_THREAD_TIMEOUT=4``, unless set already), as in ``bench_train_step.py``: PyTorch's
OpenMP threads otherwise spin after each of its calls and take the second core from the call of
minitorch_ln's kernel threads that follows (forward+backward at ``(32, 128, 768)`` measured 1.9x
with spinning, where each alone is within 1.1x).

Also printed: the bytes that each save-for-backward option keeps between forward and backward.

    python benchmarks/bench_layernorm.py [--fast] [--threads N] [--single-thread] [--shape B,L,D] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

if "--single-thread" not in sys.argv[1:]:  # read by OpenMP and OpenBLAS when they start
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # spin for 2**4 cycles at most

import numpy as np  # noqa: E402
import torch  # noqa: E402

import minitorch_ln as mt  # noqa: E402
import minitorch_ln.nn.functional as F  # noqa: E402
from minitorch_ln import kernels  # noqa: E402

from _timing import time_pair  # noqa: E402  (benchmarks/_timing.py)

SHAPES = [(32, 128, 768), (8, 64, 64), (64, 256, 1024)]


def steps(shape, dtype):
    """``{(lib, mode): step()}`` for lib in mt/torch and mode in fwd/fwd+bwd."""
    rng = np.random.default_rng(0)
    D = shape[-1]
    x, dy = rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)
    w, b = rng.standard_normal(D).astype(dtype), rng.standard_normal(D).astype(dtype)
    xm, wm, bm = (mt.tensor(a, requires_grad=True) for a in (x, w, b))
    xt, wt, bt = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    dym, dyt = mt.tensor(dy), torch.from_numpy(dy)

    def mt_fwd():
        with mt.no_grad():
            F.layer_norm(xm, D, wm, bm)

    def torch_fwd():
        with torch.no_grad():
            torch.nn.functional.layer_norm(xt, (D,), wt, bt)

    def mt_fb():
        xm.grad = wm.grad = bm.grad = None
        F.layer_norm(xm, D, wm, bm).backward(dym)

    def torch_fb():
        xt.grad = wt.grad = bt.grad = None
        torch.nn.functional.layer_norm(xt, (D,), wt, bt).backward(dyt)

    return {("mt", "forward"): mt_fwd, ("torch", "forward"): torch_fwd,
            ("mt", "forward+backward"): mt_fb, ("torch", "forward+backward"): torch_fb}


def saved_bytes(shape, dtype):
    """Bytes kept for backward by each option, read from the graph node itself."""
    D = shape[-1]
    x = mt.zeros(*shape, dtype=dtype, requires_grad=True)
    w = mt.ones(D, dtype=dtype, requires_grad=True)
    out = {}
    for recompute in (False, True):
        y = F.layer_norm(x, D, w, recompute_stats=recompute)
        out[recompute] = sum(t.array.nbytes for t in y.grad_fn.saved_tensors if t is not None)
    return out


def _shape(text):
    """``"32,128,768"`` -> ``(32, 128, 768)``."""
    try:
        shape = tuple(int(s) for s in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated sizes such as 32,128,768, got {text!r}") from None
    if not shape or min(shape) < 1:
        raise argparse.ArgumentTypeError(f"expected sizes of at least 1, got {text!r}")
    return shape


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="fewer repetitions")
    parser.add_argument("--threads", type=int, default=None, help="threads for minitorch_ln's CPU kernels")
    parser.add_argument("--single-thread", action="store_true", help="one thread each, CPU time")
    parser.add_argument("--shape", type=_shape, action="append", default=None, metavar="B,L,D",
                        help="time this shape only (repeatable); default: the three shapes above")
    parser.add_argument("--repeat", type=int, default=None, help="repetitions (default 20, 5 with --fast)")
    args = parser.parse_args(argv)
    shapes = args.shape or SHAPES
    clock = time.perf_counter
    if args.single_thread:
        torch.set_num_threads(1)
        kernels.set_num_threads(1)
        clock = time.process_time
    elif args.threads is not None:
        kernels.set_num_threads(args.threads)
    repeat = args.repeat or (5 if args.fast else 20)
    print(f"PyTorch {torch.__version__}: {torch.get_num_threads()} threads; "
          f"minitorch_ln kernels: {kernels.get_num_threads()} threads; "
          f"{'CPU' if args.single_thread else 'wall'} time, best of {repeat} (median)")
    print(f"{'shape':<18} {'dtype':<8} {'pass':<17} {'minitorch_ln':>21} {'PyTorch':>21} {'ratio':>6} {'median':>6}")
    for shape in shapes:
        for dtype in (np.float32, np.float64):
            fns = steps(shape, dtype)
            for mode in ("forward", "forward+backward"):
                best_m, med_m, best_t, med_t = time_pair(fns[("mt", mode)], fns[("torch", mode)], repeat, clock)
                print(f"{str(shape):<18} {np.dtype(dtype).name:<8} {mode:<17} "
                      f"{best_m * 1e3:8.2f} ms ({med_m * 1e3:7.2f}) {best_t * 1e3:8.2f} ms ({med_t * 1e3:7.2f}) "
                      f"{best_m / best_t:6.2f} {med_m / med_t:6.2f}")
    print("\nbytes kept between forward and backward (x, weight, and mean/rstd unless recomputed):")
    for shape in shapes:
        for dtype in (np.float32, np.float16):
            kept = saved_bytes(shape, dtype)
            extra = kept[False] - kept[True]
            print(f"{str(shape):<18} {np.dtype(dtype).name:<8} save stats {kept[False]:>12,d} B   "
                  f"recompute {kept[True]:>12,d} B   stats cost {extra:>9,d} B ({100 * extra / kept[True]:.2f}%)")


if __name__ == "__main__":
    main()

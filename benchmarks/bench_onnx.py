"""The tiny GPT's forward three ways on the CPU: ONNX Runtime on the exported model, minitorch_ln
eager, PyTorch eager; as ratios.

The model is :class:`minitorch_ln.nn.GPT` with the ``tiny`` preset (d_model 128, 4 layers, 4 heads,
context 64, vocabulary 65), exported once with :func:`minitorch_ln.onnx.export` (dynamic batch and
sequence), and its PyTorch twin (:func:`minitorch_ln.interop.torch_models.torch_twin`) with the same
weights. The three outputs are compared first (ORT and PyTorch against minitorch_ln, 1e-5 relative),
then each forward of a ``(batch, 64)`` batch of ids is timed in alternation with the others
(``no_grad``/``inference_mode`` for the eager two), best of ``--repeat`` and the median beside it.
``--single-thread`` gives every library one thread and measures CPU time (``time.process_time``),
the steady measure on a shared machine.

    python benchmarks/bench_onnx.py [--batch 32] [--repeat 20] [--single-thread]
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--single-thread", action="store_true", help="one thread each, CPU time")
    return p.parse_args(argv)


ARGS = _parse(sys.argv[1:] if __name__ == "__main__" else [])
if ARGS.single_thread:  # BLAS reads these when NumPy is first imported
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "MINITORCH_LN_NUM_THREADS"):
        os.environ[var] = "1"
else:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # idle threads sleep (see bench_train_step.py)
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import numpy as np
import onnxruntime as ort
import torch

import minitorch_ln as mt
from minitorch_ln.interop.torch_models import torch_twin
from minitorch_ln.nn import GPT, GPTConfig
from minitorch_ln.onnx import export


def main() -> None:
    clock = time.process_time if ARGS.single_thread else time.perf_counter
    if ARGS.single_thread:
        torch.set_num_threads(1)
    mt.manual_seed(0)
    cfg = GPTConfig.preset("tiny", vocab_size=65)
    model = GPT(cfg).eval()
    twin = torch_twin(model).eval()
    ids = np.random.default_rng(0).integers(0, 65, (ARGS.batch, cfg.block_size)).astype(np.int64)
    t0 = time.perf_counter()
    proto = export(model, (mt.tensor(ids[:2, :8]),), None, input_names=["idx"], output_names=["logits"],
                   dynamic_axes={"idx": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}})
    t_export = time.perf_counter() - t0
    so = ort.SessionOptions()
    if ARGS.single_thread:
        so.intra_op_num_threads = so.inter_op_num_threads = 1
    sess = ort.InferenceSession(proto.SerializeToString(), so, providers=["CPUExecutionProvider"])
    x_mt, x_torch = mt.tensor(ids), torch.from_numpy(ids)

    def run_ort():
        return sess.run(None, {"idx": ids})[0]

    def run_mt():
        with mt.no_grad():
            return model(x_mt).numpy()

    def run_torch():
        with torch.inference_mode():
            out = twin(x_torch)
            return (out[0] if isinstance(out, tuple) else out).numpy()

    ref = run_mt()
    for name, fn in (("ONNX Runtime", run_ort), ("PyTorch", run_torch)):
        rel = np.abs(fn() - ref).max() / np.abs(ref).max()
        assert rel <= 1e-5, f"{name} disagrees with minitorch_ln: {rel:.2e} relative"
    fns = {"minitorch_ln": run_mt, "ONNX Runtime": run_ort, "PyTorch": run_torch}
    times = {k: [] for k in fns}
    for fn in fns.values():
        fn()  # warm-up
    for _ in range(ARGS.repeat):
        for k, fn in fns.items():
            t = clock()
            fn()
            times[k].append(clock() - t)
    best = {k: min(v) for k, v in times.items()}
    mode = "one thread each, CPU time" if ARGS.single_thread else "default threads, wall time"
    print(f"tiny GPT forward, batch {ARGS.batch} x {cfg.block_size} tokens, float32, {mode}, best of {ARGS.repeat}")
    print(f"export (3 traces + checker): {t_export:.2f} s, {len(proto.graph.node)} nodes")
    for k, v in times.items():
        print(f"  {k:13s} best {best[k] * 1e3:8.2f} ms   median {float(np.median(v)) * 1e3:8.2f} ms")
    print(f"  minitorch_ln / ONNX Runtime = {best['minitorch_ln'] / best['ONNX Runtime']:.2f}")
    print(f"  minitorch_ln / PyTorch      = {best['minitorch_ln'] / best['PyTorch']:.2f}")
    print(f"  ONNX Runtime / PyTorch      = {best['ONNX Runtime'] / best['PyTorch']:.2f}")


if __name__ == "__main__":
    main()

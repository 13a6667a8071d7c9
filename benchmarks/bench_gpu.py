"""GPU benchmarks: the fused LayerNorm kernels against PyTorch on the same GPU, and a GPT train step.

Prints, for ``(65536, 768)`` and ``(16384, 4096)`` in float32 and float16:

- the copy bandwidth of the GPU (a device-to-device copy, bytes read + written per second);
- forward, and forward+backward, of ``kernels/cuda_layer_norm.py`` (the kernels alone) and of
  ``torch.nn.functional.layer_norm`` (forward; forward + ``backward``), timed with CUDA events
  (median of ``--iters`` runs after a warm-up), with the ratio ours/PyTorch (below 1: we are faster)
  and each one's bytes moved per second as a fraction of the copy bandwidth;
- the same LayerNorm through our autograd (``nn.LayerNorm`` module, forward + backward), which
  adds our Python overhead;
- a training step (forward, backward, AdamW) of the ``small`` GPT preset (context 256, batch 16)
  in minitorch_ln on the GPU against the same model in PyTorch eager.

    python benchmarks/bench_gpu.py [--iters 20] [--quick]

Needs CuPy and PyTorch with CUDA on one GPU; exits with status 2 and a message otherwise. Timings,
never assertions: the targets of the GPU issue are printed next to the ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import minitorch_ln as mt  # noqa: E402
from minitorch_ln import backend  # noqa: E402

SHAPES = [(65536, 768), (16384, 4096)]


def need_gpu():
    try:
        cp = backend.cupy_or_error()
    except backend.DeviceError as exc:
        print(f"bench_gpu: no GPU: {exc}", file=sys.stderr)
        sys.exit(2)
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        print("bench_gpu: PyTorch is not installed (it is the reference)", file=sys.stderr)
        sys.exit(2)
    if not torch.cuda.is_available():
        print("bench_gpu: this PyTorch has no CUDA; the comparison needs PyTorch on the same GPU", file=sys.stderr)
        sys.exit(2)
    return cp, torch


def time_cupy(cp, fn, iters: int) -> float:
    """Median milliseconds of ``fn()`` measured with CuPy CUDA events (after 3 warm-up calls)."""
    for _ in range(3):
        fn()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(iters):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return statistics.median(times)


def time_torch(torch, fn, iters: int) -> float:
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def time_wall(sync, fn, iters: int) -> float:
    """Median wall-clock milliseconds (for steps that mix host and device work)."""
    for _ in range(2):
        fn()
    sync()
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def copy_bandwidth(cp, iters: int) -> float:
    """Bytes read + written per second by a 1 GiB device-to-device copy."""
    src = cp.ones(1 << 28, dtype=cp.float32)  # 1 GiB
    dst = cp.empty_like(src)
    ms = time_cupy(cp, lambda: dst.__setitem__(Ellipsis, src), iters)
    del src, dst
    return 2 * (1 << 30) / (ms * 1e-3)


def bench_layernorm(cp, torch, iters: int, bw: float, shapes) -> None:
    from minitorch_ln.kernels import cuda_layer_norm  # noqa: PLC0415

    print("\nLayerNorm (kernels alone, CUDA events, median)  [target: ours/torch <= 1.0; fwd >= 50% of copy bw]")
    print(f"{'shape':>14} {'dtype':>8} {'pass':>8} {'ours us':>9} {'torch us':>9} {'ours/torch':>10} "
          f"{'ours %bw':>8} {'torch %bw':>9}")
    for N, D in shapes:
        for dtype in (np.float32, np.float16):
            rng = np.random.default_rng(0)
            x = cp.asarray(rng.standard_normal((N, D)).astype(dtype))
            dy = cp.asarray(rng.standard_normal((N, D)).astype(dtype))
            w = cp.asarray(rng.standard_normal(D).astype(dtype))
            b = cp.asarray(rng.standard_normal(D).astype(dtype))
            xt, dyt = torch.as_tensor(x, device="cuda"), torch.as_tensor(dy, device="cuda")
            wt = torch.as_tensor(w, device="cuda").requires_grad_(True)
            bt = torch.as_tensor(b, device="cuda").requires_grad_(True)
            xt_g = xt.clone().requires_grad_(True)
            item = np.dtype(dtype).itemsize

            _, mean, rstd = cuda_layer_norm.layer_norm_fwd(x, w, b, 1e-5)
            ours_f = time_cupy(cp, lambda: cuda_layer_norm.layer_norm_fwd(x, w, b, 1e-5), iters)
            ours_b = time_cupy(cp, lambda: cuda_layer_norm.layer_norm_bwd(dy, x, w, mean, rstd), iters)
            theirs_f = time_torch(torch, lambda: torch.nn.functional.layer_norm(xt, (D,), wt, bt, 1e-5), iters)

            def torch_fb():
                y = torch.nn.functional.layer_norm(xt_g, (D,), wt, bt, 1e-5)
                y.backward(dyt)
                xt_g.grad = wt.grad = bt.grad = None

            theirs_fb = time_torch(torch, torch_fb, iters)
            fwd_bytes = 2 * N * D * item            # read x, write y
            fb_bytes = fwd_bytes + 3 * N * D * item  # + read x, dy; write dx
            for name, ours, theirs, nbytes in (("fwd", ours_f, theirs_f, fwd_bytes),
                                                ("fwd+bwd", ours_f + ours_b, theirs_fb, fb_bytes)):
                print(f"{str((N, D)):>14} {np.dtype(dtype).name:>8} {name:>8} {ours * 1e3:9.1f} {theirs * 1e3:9.1f} "
                      f"{ours / theirs:10.2f} {nbytes / (ours * 1e-3) / bw:8.0%} {nbytes / (theirs * 1e-3) / bw:9.0%}")
            del x, dy, xt, dyt, xt_g
            cp.get_default_memory_pool().free_all_blocks()
            torch.cuda.empty_cache()


def bench_layernorm_module(cp, torch, iters: int) -> None:
    print("\nnn.LayerNorm through autograd (forward + backward, includes our Python overhead)")
    N, D = SHAPES[0]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N // 256, 256, D)).astype(np.float32)
    ln = mt.nn.LayerNorm(D).to("cuda")
    xm = mt.tensor(x, device="cuda", requires_grad=True)
    dym = mt.tensor(rng.standard_normal(x.shape).astype(np.float32), device="cuda")

    def ours():
        ln(xm).backward(dym)
        xm.grad = ln.weight.grad = ln.bias.grad = None

    lt = torch.nn.LayerNorm(D).cuda()
    xt = torch.tensor(x, device="cuda", requires_grad=True)
    dyt = torch.as_tensor(dym.array, device="cuda")

    def theirs():
        lt(xt).backward(dyt)
        xt.grad = lt.weight.grad = lt.bias.grad = None

    o, t = time_cupy(cp, ours, iters), time_torch(torch, theirs, iters)
    print(f"  {(N // 256, 256, D)} float32: ours {o * 1e3:.1f} us, torch {t * 1e3:.1f} us, ours/torch {o / t:.2f}")


def bench_gpt_step(cp, torch, iters: int) -> None:
    try:
        from minitorch_ln.interop.torch_models import torch_twin  # noqa: PLC0415
        from minitorch_ln.nn.gpt import GPT, GPTConfig  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover - the GPT issue not merged
        print(f"\nGPT train step: skipped ({exc})")
        return
    B, vocab = 16, 65
    cfg = GPTConfig.preset("small", vocab_size=vocab)
    mt.manual_seed(0)
    model = GPT(cfg, device="cuda")
    twin = torch_twin(model, device="cuda")
    n_params = sum(p.numel() for p in model.parameters())
    rng = np.random.default_rng(0)
    idx = rng.integers(0, vocab, (B, cfg.block_size))
    tgt = rng.integers(0, vocab, (B, cfg.block_size))
    opt = mt.optim.AdamW(model.parameters(), lr=3e-4)
    ids_m, tgt_m = mt.tensor(idx, device="cuda"), mt.tensor(tgt, device="cuda")

    def ours():
        opt.zero_grad()
        _, loss = model(ids_m, tgt_m)
        loss.backward()
        opt.step()

    topt = torch.optim.AdamW(twin.parameters(), lr=3e-4, foreach=True)
    ids_t, tgt_t = torch.tensor(idx, device="cuda"), torch.tensor(tgt, device="cuda")

    def theirs():
        topt.zero_grad(set_to_none=True)
        _, loss = twin(ids_t, tgt_t)
        loss.backward()
        topt.step()

    o = time_wall(cp.cuda.Device().synchronize, ours, iters)
    t = time_wall(torch.cuda.synchronize, theirs, iters)
    print(f"\nGPT 'small' train step ({n_params / 1e6:.1f}M parameters, context {cfg.block_size}, batch {B}; "
          "wall clock, median)  [target: ours/torch <= 1.5]")
    print(f"  ours {o:.2f} ms, PyTorch eager {t:.2f} ms, ours/torch {o / t:.2f}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=20, help="timed runs per measurement (median)")
    parser.add_argument("--quick", action="store_true", help="the first shape only, 5 iterations")
    args = parser.parse_args(argv)
    cp, torch = need_gpu()
    iters = 5 if args.quick else args.iters
    print(f"GPU: {cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)['name'].decode()}, "
          f"CuPy {cp.__version__}, PyTorch {torch.__version__}")
    bw = copy_bandwidth(cp, iters)
    print(f"copy bandwidth (device-to-device, read + write): {bw / 1e9:,.0f} GB/s")
    bench_layernorm(cp, torch, iters, bw, SHAPES[:1] if args.quick else SHAPES)
    bench_layernorm_module(cp, torch, iters)
    bench_gpt_step(cp, torch, max(3, iters // 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

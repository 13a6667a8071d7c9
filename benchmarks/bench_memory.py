"""Peak memory of one GPT training step against the theoretical need, as a ratio.

The step is the one of ``bench_train_step.py`` (``zero_grad``, forward with the mean cross-entropy,
backward, ``AdamW``), float32, on the ``tiny`` (batch 32, context 64) and ``small`` (batch 16,
context 256) presets. Memory is measured with :mod:`tracemalloc`, which sees NumPy's array
allocations: tracing starts before the model is built, one step is run (the optimizer creates its
moments), the peak is reset, and the peak of the next step is read. That peak holds everything
alive at its moment: parameters, optimizer moments, activations kept for backward, gradients,
and the temporaries of whichever op was running.

The theoretical need is what no implementation of this step can do without:

    parameters + gradients + the two Adam moments     (4 × parameters × 4 bytes)
  + the activations PyTorch saves for backward in the same model (its PyTorch twin, same weights),
    counted with ``torch.autograd.graph.saved_tensors_hooks``: every distinct storage packed for
    backward during the forward, parameters excluded.

Also printed, to explain the peak: the bytes our own graph keeps for backward (the saved tensors
of every node reachable from the loss, each array counted once). The target is a peak of at most
1.5 × the theoretical need.

    python benchmarks/bench_memory.py [--preset tiny|small|all]
"""

from __future__ import annotations

import argparse
import gc
import tracemalloc

import numpy as np
import torch

import minitorch_ln as mt
from minitorch_ln.interop.torch_models import torch_twin
from minitorch_ln.nn import GPT, GPTConfig
from minitorch_ln.optim import AdamW

VOCAB = 65
BATCH = {"tiny": 32, "small": 16}
MB = 2**20


def torch_saved_bytes(twin, idx, targets) -> int:
    """Bytes of the distinct non-parameter storages PyTorch packs for backward in one forward."""
    params = {p.untyped_storage().data_ptr() for p in twin.parameters()}
    storages = {}

    def pack(t):
        s = t.untyped_storage()
        if s.data_ptr() not in params:
            storages[s.data_ptr()] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        _, loss = twin(torch.from_numpy(idx), torch.from_numpy(targets))
    del loss
    return sum(storages.values())


def our_saved_bytes(loss, params) -> int:
    """Bytes of the distinct arrays kept by the nodes of ``loss``'s graph (parameters excluded)."""
    param_ids = {id(p.array) for p in params}
    arrays, seen, stack = {}, set(), [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        for t, _ in node._saved or ():
            if t is not None and id(t.array) not in param_ids:
                base = t.array if t.array.base is None else t.array.base
                if id(base) not in param_ids:
                    arrays[id(base)] = base.nbytes
        stack.extend(edge[0] for edge in node.next_edges if edge is not None)
    return sum(arrays.values())


def measure(preset: str) -> dict:
    config = GPTConfig.preset(preset, vocab_size=VOCAB)
    B, T = BATCH[preset], config.block_size
    rng = np.random.default_rng(0)
    idx, targets = rng.integers(0, VOCAB, size=(B, T)), rng.integers(0, VOCAB, size=(B, T))

    # One untraced step first: it compiles the Numba kernels (kernels/cpu_layer_norm.py) and makes
    # every lazy import. The compiler's own Python objects stay alive afterwards and are no part of
    # a training step's memory (traced, they added 26 MB to the `tiny` figure).
    warm = GPT(config)
    warm(mt.tensor(idx), mt.tensor(targets))[1].backward()
    del warm
    gc.collect()
    tracemalloc.start()
    mt.manual_seed(0)
    model = GPT(config)
    opt = AdamW(model.parameters(), lr=1e-3)
    idx_m, tgt_m = mt.tensor(idx), mt.tensor(targets)

    def step(inspect=None):
        opt.zero_grad()
        _, loss = model(idx_m, tgt_m)
        if inspect is not None:
            inspect(loss)
        loss.backward()
        opt.step()

    step()  # the optimizer creates its moments
    gc.collect()
    tracemalloc.reset_peak()
    step()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()

    kept = {}
    step(lambda loss: kept.setdefault("bytes", our_saved_bytes(loss, model.parameters())))
    n_params = model.num_parameters()
    itemsize = model.tok_emb.weight.dtype.itemsize
    twin = torch_twin(model)
    torch_saved = torch_saved_bytes(twin, idx, targets)
    state = 4 * n_params * itemsize  # parameters, gradients, exp_avg, exp_avg_sq
    return dict(params=n_params, state=state, torch_saved=torch_saved, ours_saved=kept["bytes"], peak=peak,
                need=state + torch_saved)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--preset", choices=("tiny", "small", "all"), default="all")
    args = p.parse_args(argv)
    presets = ("tiny", "small") if args.preset == "all" else (args.preset,)
    print("MB; need = 4 x parameters (params, grads, 2 moments) + activations PyTorch saves; peak traced by tracemalloc")
    print(f"{'preset':<7} {'params':>7} {'4 x params':>10} {'torch saves':>11} {'need':>8} {'we save':>8} "
          f"{'our peak':>9} {'peak/need':>9} {'target':>7}")
    for preset in presets:
        r = measure(preset)
        print(f"{preset:<7} {r['params'] / 1e6:6.2f}M {r['state'] / MB:10.1f} {r['torch_saved'] / MB:11.1f} "
              f"{r['need'] / MB:8.1f} {r['ours_saved'] / MB:8.1f} {r['peak'] / MB:9.1f} "
              f"{r['peak'] / r['need']:9.2f} {1.5:7.1f}")


if __name__ == "__main__":
    main()

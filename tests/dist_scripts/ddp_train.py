"""A plain PyTorch DDP training script (runs unchanged on PyTorch with torchrun, and on minitorch_ln).

    minitorch-ln run --nproc-per-node 2 ddp_train.py --out W          # two ranks, DDP
    minitorch-ln run ddp_train.py --world 2 --out R                     # one process, the combined batches
    torchrun --nproc-per-node 2 ddp_train.py --out W                    # the same under PyTorch (gloo)

Each rank starts from different random weights (seeded by rank): DDP's broadcast at wrap must make
them rank 0's. The data are split by DistributedSampler; each optimizer step accumulates two
micro-batches, the first under no_sync(). One process with --world W replays the same steps on the
union of the W ranks' micro-batches: its mean loss is the mean of the ranks' means, so its weights
must equal the ranks' (float64). Writes OUT.rank<R>.npy (the flat weights) and OUT.rank<R>.txt (losses).
"""

import argparse
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

p = argparse.ArgumentParser()
p.add_argument("--out", required=True)
p.add_argument("--world", type=int, default=1, help="one process: replay this many ranks' batches")
p.add_argument("--epochs", type=int, default=2)
args = p.parse_args()

ddp = int(os.environ.get("RANK", -1)) != -1
if ddp:
    dist.init_process_group(backend="gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
else:
    rank, world = 0, args.world

rng = np.random.default_rng(0)
X = torch.tensor(rng.standard_normal((48, 5)))  # (N, 5) float64
Y = torch.tensor(rng.standard_normal((48, 3)))  # (N, 3)
data = TensorDataset(X, Y)

torch.manual_seed(1234 + rank)  # different per rank: DDP must broadcast rank 0's
model = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 3)).double()
if ddp:
    model = DDP(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loss_fn = nn.MSELoss()
B = 4  # micro-batch per rank


def rank_batches(r, epoch):
    sampler = DistributedSampler(data, num_replicas=world, rank=r, shuffle=True, seed=7)
    sampler.set_epoch(epoch)
    idx = list(sampler)
    return [idx[i:i + B] for i in range(0, len(idx), B)]


losses = []
for epoch in range(args.epochs):
    if ddp:
        sampler = DistributedSampler(data, shuffle=True, seed=7)
        sampler.set_epoch(epoch)
        loader = DataLoader(data, batch_size=B, sampler=sampler)
        micro = list(loader)
    else:  # the union of every rank's k-th micro-batch
        per_rank = [rank_batches(r, epoch) for r in range(world)]
        micro = [(X[sum((b[k] for b in per_rank), [])], Y[sum((b[k] for b in per_rank), [])])
                 for k in range(len(per_rank[0]))]
    for k in range(0, len(micro), 2):
        opt.zero_grad()
        (x0, y0), (x1, y1) = micro[k], micro[k + 1]
        if ddp:
            with model.no_sync():
                (loss_fn(model(x0), y0) / 2).backward()
        else:
            (loss_fn(model(x0), y0) / 2).backward()
        loss = loss_fn(model(x1), y1) / 2
        loss.backward()
        opt.step()
        reported = loss.detach().clone()
        if ddp:
            dist.all_reduce(reported)  # SUM of the ranks' means ...
            reported /= world  # ... over the ranks: the combined batch's mean
        losses.append(reported.item())

if ddp:
    dist.barrier()
weights = np.concatenate([q.detach().numpy().ravel() for q in model.parameters()])
np.save(f"{args.out}.rank{rank}.npy", weights)
with open(f"{args.out}.rank{rank}.txt", "w") as f:
    f.write("\n".join(repr(v) for v in losses) + "\n")
print(f"rank {rank}/{world}: {len(losses)} steps, last loss {losses[-1]:.6f}")
if ddp:
    dist.destroy_process_group()

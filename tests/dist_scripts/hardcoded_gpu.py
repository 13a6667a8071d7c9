"""nanoGPT's DDP device code (``device = f'cuda:{local_rank}'``, ``torch.cuda.set_device``,
``DDP(device_ids=[local_rank])``, ``pin_memory().to(device, non_blocking=True)``), which only runs on a
CPU under ``minitorch-ln run --cuda-as-cpu``; ``--cpu`` takes the CPU spelling of the same steps (the
reference). Writes OUT.rank<R>.npy (the flat float64 weights after three steps).
"""

import argparse
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

p = argparse.ArgumentParser()
p.add_argument("--out", required=True)
p.add_argument("--cpu", action="store_true")
args = p.parse_args()

dist.init_process_group(backend="gloo")
rank, local_rank = dist.get_rank(), int(os.environ["LOCAL_RANK"])
if args.cpu:
    device = "cpu"
else:
    device = f"cuda:{local_rank}"
    torch.cuda.set_device(device)
torch.manual_seed(1337 + rank)  # as nanoGPT: DDP's broadcast makes rank 0's weights everyone's
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2)).double().to(device)
model = DDP(model) if args.cpu else DDP(model, device_ids=[local_rank])
opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
g = torch.Generator().manual_seed(rank)
for _ in range(3):
    x, y = torch.randn(6, 4, generator=g, dtype=torch.float64), torch.randn(6, 2, generator=g, dtype=torch.float64)
    if not args.cpu:
        x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
    loss = ((model(x) - y) ** 2).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
if not args.cpu:
    torch.cuda.synchronize()  # nothing to wait for on the CPU; a GPU-only call that must not stop the run
flat = np.concatenate([p.detach().cpu().numpy().ravel() for p in model.module.parameters()])
np.save(f"{args.out}.rank{rank}.npy", flat)
print(f"DEVICE {model.module[0].weight.device} rank {rank}")
dist.destroy_process_group()

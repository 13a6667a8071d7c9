"""DistributedDataParallel's behaviour on 2 ranks (run by tests/test_distributed.py through mpiexec).

Checks: rank 0's weights broadcast at wrap; ``module.`` state-dict keys; gradients equal to the
hand-averaged local gradients with many small buckets (float64, random upstream gradient);
``require_backward_grad_sync = False`` accumulation; ``find_unused_parameters``; PyTorch's error
for an unused parameter without it. Prints ``DDP OK rank R``.
"""

import copy

import numpy as np

import minitorch_ln as mt
import minitorch_ln.distributed as dist
from minitorch_ln import nn
from minitorch_ln.distributed import DistributedDataParallel as DDP

dist.init_process_group("gloo")
r, W = dist.get_rank(), dist.get_world_size()


def gathered(arr):
    out = [None] * W
    dist.all_gather_object(out, np.asarray(arr))
    return out


# --- broadcast at wrap, state-dict keys
mt.manual_seed(100 + r)  # different weights per rank
net = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 2)).double()
ref = copy.deepcopy(net)  # this rank's own initial weights, no DDP
w0 = gathered(net[0].weight.detach().numpy())
assert not np.array_equal(w0[0], w0[1])
model = DDP(net, bucket_cap_mb=0.0003)  # ~300-byte buckets: several reductions in flight during the backward
assert model.module is net and len(model.reducer.buckets) >= 3
assert list(model.state_dict())[0] == "module.0.weight" and set(model.state_dict()) == {
    "module." + k for k in net.state_dict()}
w1 = gathered(net[0].weight.detach().numpy())
np.testing.assert_array_equal(w1[0], w1[1])
np.testing.assert_array_equal(w1[0], w0[0])

# --- gradients: DDP's equal the average over ranks of the local ones (reference: rank 0's weights)
ref.load_state_dict(net.state_dict())
rng = np.random.default_rng(r)
x = mt.tensor(rng.standard_normal((5, 6)))  # (5, 6): different data per rank
up = mt.tensor(rng.standard_normal((5, 2)))  # a random upstream gradient
(model(x) * up).sum().backward()
(ref(x) * up).sum().backward()
for p, q in zip(net.parameters(), ref.parameters()):
    local = gathered(q.grad.numpy())
    np.testing.assert_allclose(p.grad.numpy(), (local[0] + local[1]) / 2, rtol=1e-12, atol=1e-14)
assert model.reducer.stats["backwards"] == 1

# --- an evaluation forward under no_grad between a forward and its backward leaves the reduction armed
for p, q in zip(net.parameters(), ref.parameters()):
    p.grad, q.grad = None, None
out = model(x)
with mt.no_grad():
    model(x)
(out * up).sum().backward()
(ref(x) * up).sum().backward()
for p, q in zip(net.parameters(), ref.parameters()):
    local = gathered(q.grad.numpy())
    np.testing.assert_allclose(p.grad.numpy(), (local[0] + local[1]) / 2, rtol=1e-12, atol=1e-14)

# --- nanoGPT's accumulation: require_backward_grad_sync False on all micro-steps but the last
for p, q in zip(net.parameters(), ref.parameters()):
    p.grad, q.grad = None, None
for micro in range(3):
    model.require_backward_grad_sync = micro == 2
    xb = mt.tensor(rng.standard_normal((4, 6)))
    (model(xb) * up[:4]).sum().backward()
    (ref(xb) * up[:4]).sum().backward()
    if micro < 2:  # not synchronised yet: the local gradient
        np.testing.assert_allclose(net[0].weight.grad.numpy(), ref[0].weight.grad.numpy(), rtol=1e-12)
for p, q in zip(net.parameters(), ref.parameters()):
    local = gathered(q.grad.numpy())
    np.testing.assert_allclose(p.grad.numpy(), (local[0] + local[1]) / 2, rtol=1e-12, atol=1e-14)


# --- find_unused_parameters: `b` used on rank 1 only, `c` on no rank
class Branches(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = nn.Linear(3, 3), nn.Linear(3, 3), nn.Linear(3, 3)

    def forward(self, x, use_b):
        y = self.a(x)
        return self.b(y) if use_b else y


mt.manual_seed(0)
branches = Branches().double()
ddp_b = DDP(branches, find_unused_parameters=True)
xb = mt.tensor(np.full((2, 3), 1.0 + r))
ddp_b(xb, use_b=(r == 1)).sum().backward()
assert branches.c.weight.grad is None  # unused on every rank: left None, as PyTorch
bw = gathered(branches.b.weight.grad.numpy())
np.testing.assert_array_equal(bw[0], bw[1])  # rank 0 gets rank 1's gradient / 2 (its own counts as zero)
ddp_b(xb, use_b=(r == 1)).sum().backward()  # a second iteration works as well

# --- without find_unused_parameters, an unused parameter is PyTorch's error at the next forward
mt.manual_seed(0)
strict = DDP(Branches().double())
strict(xb, use_b=False).sum().backward()
try:
    strict(xb, use_b=False)
except RuntimeError as exc:
    assert "Expected to have finished reduction in the prior iteration" in str(exc)
    assert "find_unused_parameters=True" in str(exc)
else:
    raise AssertionError("an unused parameter without find_unused_parameters did not raise")

try:
    DDP(nn.Linear(2, 2).requires_grad_(False))
except RuntimeError as exc:
    assert "doesn't have any parameter that requires a gradient" in str(exc)
else:
    raise AssertionError("DDP of a module without trainable parameters did not raise")

try:  # PyTorch's error: device_ids is for GPU modules (nanoGPT passes it; on the CPU it must be None)
    DDP(nn.Linear(2, 2), device_ids=[r])
except ValueError as exc:
    assert f"but got device_ids [{r}], output_device None, and module parameters {{device(type='cpu')}}" in str(exc)
else:
    raise AssertionError("device_ids with a CPU module did not raise")

dist.barrier()
dist.destroy_process_group()
print(f"DDP OK rank {r}", flush=True)

"""The parts of minitorch_ln.distributed that need no MPI job: DistributedSampler (against PyTorch's),
bucket assignment, the post-accumulate-grad hook DDP reduces through, the launcher's environment, and
the errors before ``init_process_group``. MPI is never started in this process."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitorch_ln as mt
import minitorch_ln.distributed as dist
from helpers import torch  # the real PyTorch, the reference
from minitorch_ln.apps import launch
from minitorch_ln.distributed.reducer import DEFAULT_FIRST_BUCKET_BYTES, assign_buckets
from minitorch_ln.utils.data.distributed import DistributedSampler


# ------------------------------------------------------------------------------------------ sampler

@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 40), world=st.integers(1, 5), data=st.data(), shuffle=st.booleans(),
       drop_last=st.booleans(), seed=st.integers(0, 2**31 - 1), epoch=st.integers(0, 50))
def test_distributed_sampler_matches_pytorch(n, world, data, shuffle, drop_last, seed, epoch):
    from torch.utils.data.distributed import DistributedSampler as TorchSampler

    rank = data.draw(st.integers(0, world - 1))
    if drop_last and n < world:
        return  # PyTorch's sampler has no samples then: nothing to compare
    theirs = TorchSampler(range(n), num_replicas=world, rank=rank, shuffle=shuffle, seed=seed, drop_last=drop_last)
    ours = DistributedSampler(range(n), num_replicas=world, rank=rank, shuffle=shuffle, seed=seed,
                              drop_last=drop_last)
    theirs.set_epoch(epoch)
    ours.set_epoch(epoch)
    assert list(ours) == list(theirs) and len(ours) == len(theirs)


def test_distributed_sampler_ranks_cover_the_dataset_once_padded_by_its_start():
    # 10 indices on 4 ranks: 3 each, 12 in all, the permutation's first 2 repeated (hand-worked)
    parts = [list(DistributedSampler(range(10), num_replicas=4, rank=r, shuffle=False)) for r in range(4)]
    assert parts == [[0, 4, 8], [1, 5, 9], [2, 6, 0], [3, 7, 1]]
    cut = [list(DistributedSampler(range(10), num_replicas=4, rank=r, shuffle=False, drop_last=True))
           for r in range(4)]
    assert cut == [[0, 4], [1, 5], [2, 6], [3, 7]]


def test_distributed_sampler_bad_arguments():
    with pytest.raises(ValueError, match=r"Invalid rank 4, rank should be in the interval \[0, 3\]"):
        DistributedSampler(range(5), num_replicas=4, rank=4)
    with pytest.raises(ValueError, match="num_replicas should be a positive integer, got 0"):
        DistributedSampler(range(5), num_replicas=0, rank=0)
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(range(5))


# ------------------------------------------------------------------------------------------ buckets

def test_buckets_reverse_order_first_small_one_dtype_each():
    params = [mt.zeros(300_000, dtype=mt.float32), mt.zeros(10, dtype=mt.float64),  # 1.2 MB, 80 B
              mt.zeros(100, dtype=mt.float32), mt.zeros(2_000_000, dtype=mt.float32)]  # 400 B, 8 MB
    # reversed: 3 (8 MB >= 1 MiB closes the first bucket), then 2 and 0 (float32), 1 alone (float64)
    assert assign_buckets(params, 25 * 2**20) == [[3], [2, 0], [1]]
    assert DEFAULT_FIRST_BUCKET_BYTES == 2**20  # PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES
    # a 1-KB cap: every parameter over it gets a bucket of its own
    assert assign_buckets(params, 1024, 1024) == [[3], [2, 0], [1]]
    small = [mt.zeros(100) for _ in range(4)]  # 400 B each: two per 800-B bucket
    assert assign_buckets(small, 800, 800) == [[3, 2], [1, 0]]


# ------------------------------------------------------------------------------------------ the hook

def test_post_accumulate_grad_hook_sees_the_accumulated_grad_once_per_backward():
    rng = np.random.default_rng(0)
    x = mt.tensor(rng.standard_normal(4), requires_grad=True)
    up = mt.tensor(rng.standard_normal(4))
    seen = []
    handle = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.numpy().copy()))
    (x * x * up + x * up).sum().backward()  # x used three times: one call, after the sum
    expected = (2 * x.detach().numpy() + 1) * up.numpy()  # d/dx (x^2 u + x u)
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], expected, rtol=1e-12)
    (x * up).sum().backward()  # accumulates: the hook sees the sum
    np.testing.assert_allclose(seen[1], expected + up.numpy(), rtol=1e-12)
    handle.remove()
    (x * up).sum().backward()
    assert len(seen) == 2
    mt.autograd.grad((x * up).sum(), x)  # autograd.grad leaves .grad alone: no call either
    assert len(seen) == 2


def test_post_accumulate_grad_hook_matches_pytorch_order_and_errors():
    calls, tcalls = [], []
    a, b = mt.ones(2, requires_grad=True), mt.ones(3, requires_grad=True)
    ta, tb = torch.ones(2, requires_grad=True), torch.ones(3, requires_grad=True)
    for t, log, name in ((a, calls, "a"), (b, calls, "b"), (ta, tcalls, "a"), (tb, tcalls, "b")):
        t.register_post_accumulate_grad_hook(lambda _t, n=name, log=log: log.append(n))
    (a.sum() * 2 + b.sum()).backward()
    (ta.sum() * 2 + tb.sum()).backward()
    assert sorted(calls) == sorted(tcalls) == ["a", "b"]
    with pytest.raises(RuntimeError, match="non-leaf"):
        (a * 2).register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        mt.ones(2).register_post_accumulate_grad_hook(lambda t: None)


# ------------------------------------------------------------------------------------------ start-up

def test_set_rank_environment_from_mpich_variables(monkeypatch):
    for key in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("PMI_RANK", "3")
    monkeypatch.setenv("PMI_SIZE", "4")
    monkeypatch.setenv("MPI_LOCALRANKID", "1")
    monkeypatch.setenv("MPI_LOCALNRANKS", "2")
    launch.set_rank_environment()
    import os

    assert [os.environ[k] for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")] == ["3", "4", "1", "2"]


def test_launch_environment_is_torchruns():
    env = launch.launch_environment(3, master_port=1234)
    assert env["WORLD_SIZE"] == env["LOCAL_WORLD_SIZE"] == "3" and env["MASTER_PORT"] == "1234"
    assert "RANK" not in env and env["TORCHELASTIC_RUN_ID"]
    assert launch.find_mpiexec().endswith("mpiexec")


def test_backend_and_reduce_op_names():
    assert dist.Backend("GLOO") == "gloo" and dist.Backend.NCCL == "nccl"
    with pytest.raises(ValueError, match="Invalid backend: 'tcp'"):
        dist.Backend("tcp")
    assert dist.ReduceOp.SUM != dist.ReduceOp.AVG and dist.ReduceOp.MAX.name == "MAX"
    assert not dist.is_initialized() and dist.is_available()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.all_reduce(mt.ones(2))

"""``minitorch-ln run --cuda-as-cpu``: a script that hard-codes the GPU (nanoGPT's DDP path) runs
unchanged on a CPU, giving exactly the weights of the same steps written for the CPU; without the
option it stops with the clear no-GPU error. Multi-rank tests are skipped without mpi4py.
"""

import json
import subprocess
import sys

import numpy as np
import pytest

import minitorch_ln as mt
from minitorch_ln import backend, cuda

from test_distributed import SCRIPTS, _env, launch


@pytest.fixture
def cuda_as_cpu(monkeypatch):
    monkeypatch.setattr(backend, "CUDA_AS_CPU", True)


def test_cuda_devices_parse_as_the_cpu_only_when_asked(cuda_as_cpu):
    for spec in ("cuda", "cuda:0", "cuda:3", " CUDA:1 "):
        assert backend.Device(spec) == "cpu" and backend.Device(spec).index is None
    t = mt.ones(2, device="cuda:1")
    assert t.device == "cpu" and t.to("cuda:0", non_blocking=True).device == "cpu"
    with pytest.raises(backend.DeviceError, match="must be an integer"):
        backend.Device("cuda:x")  # a malformed string is still refused
    with pytest.raises(backend.DeviceError, match="unknown device"):
        backend.Device("tpu")


@pytest.mark.skipif(backend.cuda_is_available(), reason="a real GPU answers; the mapping is for machines without")
def test_set_device_and_synchronize_accept_the_scripts_gpu(cuda_as_cpu):
    cuda.set_device("cuda:1")
    cuda.set_device(0)
    cuda.synchronize()
    with pytest.raises(TypeError, match="device index"):
        cuda.set_device(1.5)
    with pytest.raises(backend.DeviceError):
        cuda.set_device("cuda:one")


def test_without_the_option_cuda_is_cuda():
    assert not backend.CUDA_AS_CPU  # never on unless asked for
    assert backend.Device("cuda:1").type == "cuda"


@pytest.mark.skipif(backend.cuda_is_available(), reason="a real GPU answers")
def test_hard_coded_gpu_script_runs_on_two_cpu_ranks_with_the_cpu_weights(tmp_path):
    pytest.importorskip("mpi4py")
    cmd = [sys.executable, "-m", "minitorch_ln", "run", "--nproc-per-node", "2", "--cuda-as-cpu",
           str(SCRIPTS / "hardcoded_gpu.py"), "--out", "G"]
    res = subprocess.run(cmd, env=_env(), cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stderr.count("--cuda-as-cpu: 'cuda' and 'cuda:N' devices are the CPU") == 1  # said once
    assert "DEVICE cpu rank 0" in res.stdout and "DEVICE cpu rank 1" in res.stdout
    ref = launch(SCRIPTS / "hardcoded_gpu.py", "--out", "C", "--cpu", cwd=tmp_path)
    assert ref.returncode == 0, ref.stderr
    g0, g1, c0 = (np.load(tmp_path / name) for name in ("G.rank0.npy", "G.rank1.npy", "C.rank0.npy"))
    np.testing.assert_array_equal(g0, g1)  # DDP kept the replicas equal
    np.testing.assert_array_equal(g0, c0)  # and the 'cuda' spelling computed exactly the CPU steps
    assert np.abs(g0).max() > 0


@pytest.mark.skipif(backend.cuda_is_available(), reason="a real GPU answers")
def test_hard_coded_gpu_script_without_the_option_stops_every_rank_with_the_no_gpu_error(tmp_path):
    pytest.importorskip("mpi4py")
    res = launch(SCRIPTS / "hardcoded_gpu.py", "--out", "G", cwd=tmp_path, timeout=60)
    assert res.returncode != 0
    assert "CuPy" in res.stderr  # the DeviceError naming the extra to install


def test_a_bare_index_names_a_gpu_as_in_pytorch(cuda_as_cpu):
    # DDP scripts write `model.to(rank)` and `x.to(rank)`; before, .to(0) said "expected a dtype ... got 0" and
    # device=0 "expected a device string"
    lin = mt.nn.Linear(2, 2).to(1)
    assert lin.weight.device == "cpu" and lin.weight.dtype == mt.float32
    x = mt.ones(2, device=0)
    assert x.device == "cpu" and x.to(1).device == "cpu" and x.to(0, mt.float64).dtype == mt.float64
    assert x.cuda(device=backend.Device("cuda:1"), non_blocking=True).device == "cpu" and x.cuda(1).device == "cpu"
    with pytest.raises(backend.DeviceError, match="device index >= 0.*got -1"):
        x.to(-1)  # PyTorch: "Device index must not be negative"


@pytest.mark.skipif(backend.cuda_is_available(), reason="a real GPU answers")
def test_a_bare_index_without_the_option_is_the_no_gpu_error():
    assert backend.Device(1).type == "cuda" and backend.Device(1).index == 1
    with pytest.raises(backend.DeviceError, match="CuPy"):
        mt.ones(2).to(0)
    with pytest.raises(backend.DeviceError, match="CuPy"):
        mt.nn.Linear(2, 2).to(0)


@pytest.mark.skipif(backend.cuda_is_available(), reason="a real GPU answers; the mapping is for machines without")
def test_cuda_manual_seed_seeds_the_cpu_stream_that_cuda_names(cuda_as_cpu):
    # the script's 'cuda' tensors draw from the CPU's stream, so its torch.cuda.manual_seed must seed that stream;
    # before, it was ignored and the draws were not reproducible
    for seed_fn in (cuda.manual_seed, cuda.manual_seed_all):
        seed_fn(5)
        a = mt.randn(3, device="cuda")
        mt.randn(2)  # the stream moves on
        seed_fn(5)
        assert np.array_equal(mt.randn(3, device="cuda:1").numpy(), a.numpy())
    cuda.manual_seed(-1)  # PyTorch's negative seeds wrap around
    b = mt.randn(3, device="cuda")
    cuda.manual_seed(2**64 - 1)
    assert np.array_equal(mt.randn(3).numpy(), b.numpy())


@pytest.mark.skipif(backend.cuda_is_available(), reason="a real GPU answers; the mapping is for machines without")
def test_synchronize_and_set_device_refuse_what_pytorch_refuses(cuda_as_cpu):
    cuda.synchronize("cuda:1")
    cuda.synchronize(backend.Device("cuda:0"))
    with pytest.raises(TypeError, match="synchronize: expected a device index, 'cuda:N' or a device, got float"):
        cuda.synchronize(1.5)
    for fn in (cuda.synchronize, cuda.set_device):
        with pytest.raises(ValueError, match="expected a CUDA device, got 'cpu'"):
            fn("cpu")


_TUTORIAL_DDP = '''
import os, sys, torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
dist.init_process_group(backend="nccl")  # PyTorch's DDP tutorial, unchanged: nccl, .to(rank), device_ids=[rank]
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
torch.cuda.set_device(rank)
torch.manual_seed(0)
model = torch.nn.Linear(3, 2).to(rank)
ddp = DDP(model, device_ids=[rank], output_device=rank)
opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
x, y = torch.arange(12.0).reshape(4, 3) / 10, torch.ones(4, 2)
for _ in range(2):
    opt.zero_grad()
    ((ddp(x[rank::world].to(rank)) - y[rank::world].to(rank)) ** 2).mean().backward()
    opt.step()
t = torch.tensor([rank + 1.0], device=f"cuda:{rank}")
dist.all_reduce(t)
print("RANK", rank, t.item(), model.weight.detach().flatten().tolist())
dist.destroy_process_group()
'''


@pytest.mark.skipif(backend.cuda_is_available(), reason="a real GPU answers")
def test_the_pytorch_ddp_tutorial_runs_unchanged_with_nccl_and_bare_ranks(tmp_path):
    # before: `.to(rank)` failed ("expected a dtype ... got 0") and backend="nccl" asked for CuPy
    pytest.importorskip("mpi4py")
    (tmp_path / "tutorial.py").write_text(_TUTORIAL_DDP)
    cmd = [sys.executable, "-m", "minitorch_ln", "run", "--nproc-per-node", "2", "--cuda-as-cpu", "tutorial.py"]
    res = subprocess.run(cmd, env=_env(), cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    lines = sorted(line.split(" ", 3) for line in res.stdout.splitlines() if line.startswith("RANK"))
    assert [ln[1:3] for ln in lines] == [["0", "3.0"], ["1", "3.0"]]  # all_reduce of 1 and 2 on 'cuda:rank'
    w0, w1 = (np.array(json.loads(ln[3])) for ln in lines)
    mt.manual_seed(0)  # the same two steps in one process: the mean of the two ranks' gradients
    lin = mt.nn.Linear(3, 2)
    opt = mt.optim.SGD(lin.parameters(), lr=0.1)
    x, y = mt.arange(12.0).reshape(4, 3) / 10, mt.ones(4, 2)
    for _ in range(2):
        opt.zero_grad()
        (sum(((lin(x[r::2]) - y[r::2]) ** 2).mean() for r in range(2)) / 2).backward()
        opt.step()
    np.testing.assert_array_equal(w0, w1)
    np.testing.assert_allclose(w0, lin.weight.detach().numpy().ravel(), rtol=1e-6, atol=1e-7)


@pytest.mark.skipif(backend.cuda_is_available(), reason="a real GPU answers; the mapping is for machines without")
def test_current_device_and_name_answer_for_the_cpu(cuda_as_cpu, monkeypatch):
    # before: both said "device 'cuda' needs CuPy", though the run was asked to take 'cuda' as the CPU
    monkeypatch.setattr(cuda, "_as_cpu_index", [0])
    assert cuda.current_device() == 0
    cuda.set_device("cuda:3")
    assert cuda.current_device() == 3
    cuda.set_device(1)
    assert cuda.current_device() == 1
    assert "--cuda-as-cpu" in cuda.get_device_name() and "CPU" in cuda.get_device_name(0)

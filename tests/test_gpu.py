"""On the GPU: every op and gradient against NumPy and PyTorch (CUDA), the fused kernels, devices.

Every test here is marked ``cuda`` (skipped where CuPy or a GPU is missing: ``pytest -m cuda`` runs
them on a GPU machine; ``scripts/gpu_check.sh`` does that and then the benchmarks). The kernels'
logic is also tested without a GPU, through the emulator (``tests/test_cuda_emulated.py``).
"""

import numpy as np
import pytest

import gpu_op_table as table
import minitorch_ln as mt
import minitorch_ln.nn.functional as F
from helpers import compare_with_torch, torch
from minitorch_ln import backend, nn
from minitorch_ln.kernels import cuda_layer_norm, cuda_softmax
from minitorch_ln.kernels import layer_norm as oracle

pytestmark = pytest.mark.cuda


@pytest.fixture(scope="module")
def cp():
    return backend.cupy_or_error()


def rel_err(got, ref):
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    if not ref.size:
        return 0.0
    both_inf = np.isinf(got) & np.isinf(ref) & (np.sign(got) == np.sign(ref))
    got, ref = np.where(both_inf, 0, got), np.where(both_inf, 0, ref)
    return float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30))


TOL = {np.float64: 1e-10, np.float32: 1e-4}


# ==================================================================================================
# Every op: CuPy against NumPy, and against PyTorch on the GPU
# ==================================================================================================


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op", table.OPS, ids=lambda op: op.name)
def test_op_cupy_matches_numpy(op, dtype):
    arrays = op.make(np.random.default_rng(0), dtype)
    out_cpu, grads_cpu = table.run_ours(op, arrays, "cpu")
    out_gpu, grads_gpu = table.run_ours(op, arrays, "cuda")
    for i, (g, c) in enumerate(zip(out_gpu, out_cpu)):
        assert g.dtype == c.dtype and g.shape == c.shape, f"{op.name} output {i}"
        assert rel_err(g, c) <= TOL[dtype], f"{op.name} output {i}: {rel_err(g, c):.3g}"
    for i, (g, c) in enumerate(zip(grads_gpu, grads_cpu)):
        assert (g is None) == (c is None), f"{op.name} grad {i}"
        if g is not None:
            assert g.dtype == c.dtype and rel_err(g, c) <= TOL[dtype], f"{op.name} grad {i}: {rel_err(g, c):.3g}"


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op", table.OPS, ids=lambda op: op.name)
def test_op_cupy_matches_torch_cuda(op, dtype):
    arrays = op.make(np.random.default_rng(1), dtype)
    kw = {} if dtype == np.float64 else dict(rtol=1e-4, atol=1e-4)
    compare_with_torch(op.ours, op.theirs, arrays, device="cuda", **kw)


@pytest.mark.parametrize("op", table.FORWARD_ONLY, ids=lambda op: op.name)
def test_forward_only_ops_on_cuda(op):
    arrays = op.make(np.random.default_rng(2), np.float32)
    out_cpu, _ = table.run_ours(op, arrays, "cpu")
    out_gpu, _ = table.run_ours(op, arrays, "cuda")
    for g, c in zip(out_gpu, out_cpu):
        assert g.dtype == c.dtype and np.array_equal(g, c)


def test_dropout_on_cuda_keeps_or_scales():
    x = mt.ones(1000, device="cuda", requires_grad=True)
    y = F.dropout(x, p=0.25)
    vals = np.unique(y.detach().cpu().numpy())
    assert set(vals.tolist()) <= {0.0, np.float32(1 / 0.75)} and y.device == "cuda:0"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.cpu().numpy(), y.detach().cpu().numpy())  # dx = mask / (1 - p)


# ==================================================================================================
# Fused LayerNorm kernels against the NumPy oracle (stress inputs of the LayerNorm issue)
# ==================================================================================================


@pytest.mark.parametrize("dtype, pdtype", [(np.float32, np.float32), (np.float64, np.float64),
                                            (np.float16, np.float16), (np.float16, np.float32)])
@pytest.mark.parametrize("N, D", [(300, 768), (64, 4096), (7, 1), (33, 1000), (5, 12288), (3, 40000)])
def test_layer_norm_kernels_match_oracle(cp, dtype, pdtype, N, D, rng):
    x = (rng.standard_normal((N, D)) * 2 + 3).astype(dtype)
    w, b = rng.standard_normal(D).astype(pdtype), rng.standard_normal(D).astype(pdtype)
    dy = rng.standard_normal((N, D)).astype(dtype)
    got = cuda_layer_norm.layer_norm_fwd(cp.asarray(x), cp.asarray(w), cp.asarray(b), 1e-5)
    got_b = cuda_layer_norm.layer_norm_bwd(cp.asarray(dy), cp.asarray(x), cp.asarray(w), got[1], got[2])
    ref = oracle.layer_norm_fwd(x, w, b, 1e-5)
    ref_b = oracle.layer_norm_bwd(dy, x, w, ref[1], ref[2])
    tol = {np.float64: 1e-12, np.float32: 1e-5, np.float16: 3e-3}[dtype]
    for name, g, r in zip(("y", "mean", "rstd", "dx", "dweight", "dbias"), got + got_b, ref + ref_b):
        g = cp.asnumpy(g)
        assert g.dtype == r.dtype and g.shape == r.shape, name
        assert rel_err(g, r) <= tol, (name, rel_err(g, r))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("value", [0.0, 1.0, -3.3, 1e4 + 0.1, 7e-5])
def test_layer_norm_constant_rows_exactly_bias(cp, dtype, value, rng):
    D = 768
    x = cp.full((4, D), value, dtype=dtype)
    w, b = cp.asarray(rng.standard_normal(D).astype(dtype)), cp.asarray(rng.standard_normal(D).astype(dtype))
    y, mean, rstd = cuda_layer_norm.layer_norm_fwd(x, w, b, 1e-5)
    assert bool((y == b[None]).all())
    dx, dw, _ = cuda_layer_norm.layer_norm_bwd(cp.asarray(rng.standard_normal((4, D)).astype(dtype)), x, w, mean, rstd)
    assert bool(cp.isfinite(dx).all()) and bool((dw == 0).all())


def test_layer_norm_large_mean_small_spread(cp, rng):
    D = 768
    x = (1e4 + 1e-3 * rng.standard_normal((16, D))).astype(np.float32)
    w, dy = rng.standard_normal(D).astype(np.float32), rng.standard_normal((16, D)).astype(np.float32)
    y, mean, rstd = cuda_layer_norm.layer_norm_fwd(cp.asarray(x), cp.asarray(w), None, 1e-12)
    dx, dw, _ = cuda_layer_norm.layer_norm_bwd(cp.asarray(dy), cp.asarray(x), cp.asarray(w), mean, rstd)
    xt = torch.tensor(x.astype(np.float64), requires_grad=True)
    wt = torch.tensor(w.astype(np.float64), requires_grad=True)
    torch.nn.functional.layer_norm(xt, (D,), wt, None, 1e-12).backward(torch.tensor(dy.astype(np.float64)))
    np.testing.assert_allclose(cp.asnumpy(dw), wt.grad.numpy(), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(cp.asnumpy(dx), xt.grad.numpy(), rtol=1e-3, atol=1e-4 * np.abs(xt.grad.numpy()).max())


def test_layer_norm_float16_near_overflow(cp, rng):
    x = rng.uniform(-6e4, 6e4, (64, 1024)).astype(np.float16)
    w, b = np.ones(1024, np.float16), np.zeros(1024, np.float16)
    got = cuda_layer_norm.layer_norm_fwd(cp.asarray(x), cp.asarray(w), cp.asarray(b), 1e-5)
    ref = oracle.layer_norm_fwd(x, w, b, 1e-5)
    for g, r in zip(got, ref):
        g = cp.asnumpy(g)
        assert np.all(np.isfinite(g)) and rel_err(g, r) < 3e-3


def test_layer_norm_backward_is_deterministic(cp, rng):
    x = cp.asarray(rng.standard_normal((4096, 768)).astype(np.float32))
    dy = cp.asarray(rng.standard_normal((4096, 768)).astype(np.float32))
    w = cp.asarray(rng.standard_normal(768).astype(np.float32))
    _, mean, rstd = cuda_layer_norm.layer_norm_fwd(x, w, None, 1e-5)
    first = cuda_layer_norm.layer_norm_bwd(dy, x, w, mean, rstd)
    for _ in range(3):
        again = cuda_layer_norm.layer_norm_bwd(dy, x, w, mean, rstd)
        for a, b in zip(first, again):
            assert bool((a == b).all())  # bit for bit: no float atomics


def test_layer_norm_module_uses_the_kernels_and_matches_cpu(rng):
    ln_cpu = nn.LayerNorm(768)
    ln_gpu = nn.LayerNorm(768).to("cuda")
    ln_gpu.load_state_dict(ln_cpu.state_dict())
    x = rng.standard_normal((4, 16, 768)).astype(np.float32)
    xc, xg = mt.tensor(x, requires_grad=True), mt.tensor(x, device="cuda", requires_grad=True)
    dy = rng.standard_normal(x.shape).astype(np.float32)
    ln_cpu(xc).backward(mt.tensor(dy))
    ln_gpu(xg).backward(mt.tensor(dy, device="cuda"))
    assert rel_err(xg.grad.cpu().numpy(), xc.grad.numpy()) < 1e-5
    assert rel_err(ln_gpu.weight.grad.cpu().numpy(), ln_cpu.weight.grad.numpy()) < 1e-5


# ==================================================================================================
# Fused softmax / cross-entropy / Adam kernels
# ==================================================================================================


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("C", [10, 1000, 50257])
def test_softmax_and_cross_entropy_kernels(cp, dtype, C, rng):
    x = (rng.standard_normal((37, C)) * 3).astype(dtype)
    target = rng.integers(0, C, 37)
    target[3] = -100
    xt = torch.tensor(x.astype(np.float64), requires_grad=True)
    tol = 1e-2 if dtype == np.float16 else 1e-5
    y = cuda_softmax.softmax_fwd(cp.asarray(x))
    assert rel_err(cp.asnumpy(y), torch.softmax(xt, -1).detach().numpy()) < tol
    loss, lse = cuda_softmax.cross_entropy_fwd(cp.asarray(x), cp.asarray(target), -100, 0.1)
    rows = torch.nn.functional.cross_entropy(xt, torch.tensor(target), reduction="none", label_smoothing=0.1)
    assert rel_err(cp.asnumpy(loss), rows.detach().numpy()) < tol
    g = rng.standard_normal(37)
    rows.backward(torch.tensor(g))
    dx = cuda_softmax.cross_entropy_bwd(cp.asarray(g), cp.asarray(x), cp.asarray(target), lse, -100, 0.1)
    assert rel_err(cp.asnumpy(dx), xt.grad.numpy()) < (3e-3 if dtype == np.float16 else 1e-5)


@pytest.mark.parametrize("cls, kw", [(mt.optim.AdamW, dict(weight_decay=0.1)), (mt.optim.Adam, dict(amsgrad=True)),
                                     (mt.optim.Adam, dict(weight_decay=0.01, maximize=True))])
def test_fused_adam_matches_cpu_and_keeps_state_on_device(cls, kw, rng):
    shapes = [(64, 32), (32,), (200001,)]  # the last spans several chunks
    init = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    cpu = [nn.Parameter(mt.tensor(a)) for a in init]
    gpu = [nn.Parameter(mt.tensor(a, device="cuda")) for a in init]
    opt_c, opt_g = cls(cpu, lr=1e-2, **kw), cls(gpu, lr=1e-2, **kw)
    for _ in range(3):
        grads = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        for pc, pg, g in zip(cpu, gpu, grads):
            pc.grad, pg.grad = mt.tensor(g), mt.tensor(g, device="cuda")
        opt_c.step()
        opt_g.step()
    for pc, pg in zip(cpu, gpu):
        assert pg.device == "cuda:0" and opt_g.state[pg]["exp_avg"].device == "cuda:0"
        assert opt_g.state[pg]["step"] == 3
        assert rel_err(pg.detach().cpu().numpy(), pc.detach().numpy()) < 1e-6


# ==================================================================================================
# Devices
# ==================================================================================================


def test_factories_and_moves(rng):
    for make in (lambda: mt.zeros(2, 3, device="cuda"), lambda: mt.ones(2, device="cuda:0"),
                 lambda: mt.randn(3, device="cuda"), lambda: mt.rand(3, device="cuda"),
                 lambda: mt.arange(5, device="cuda"), lambda: mt.full((2,), 1.5, device="cuda"),
                 lambda: mt.eye(3, device="cuda"), lambda: mt.tensor([1.0, 2.0], device="cuda"),
                 lambda: mt.randint(0, 5, (4,), device="cuda"), lambda: mt.zeros_like(mt.ones(2, device="cuda"))):
        t = make()
        assert t.device == "cuda:0" and type(t.array).__module__.startswith("cupy")
    a = mt.tensor(rng.standard_normal(4).astype(np.float32), requires_grad=True)
    b = a.cuda()
    assert b.device == "cuda:0" and a.to("cuda").device == "cuda:0"
    c = b.cpu()
    assert c.device == "cpu" and np.array_equal(c.detach().numpy(), a.detach().numpy())
    (c * 2).sum().backward()  # the move is differentiable: the gradient comes back to the CPU
    np.testing.assert_array_equal(a.grad.numpy(), np.full(4, 2.0, np.float32))
    assert b.to("cuda") is b  # no copy when already there


def test_seeded_generator_on_cuda_reproduces():
    mt.manual_seed(5)
    a = mt.randn(8, device="cuda").cpu().numpy()
    mt.manual_seed(5)
    np.testing.assert_array_equal(mt.randn(8, device="cuda").cpu().numpy(), a)


@pytest.mark.parametrize("op", [lambda a, b: a + b, lambda a, b: a @ b, lambda a, b: mt.where(a > 0, a, b),
                                lambda a, b: mt.cat([a, b])], ids=["add", "matmul", "where", "cat"])
def test_device_mismatch_names_both_devices(op):
    a, b = mt.ones(3, 3), mt.ones(3, 3, device="cuda")
    with pytest.raises((RuntimeError, ValueError), match="(cpu.*cuda:0|cuda:0.*cpu)"):
        op(a, b)


def test_module_to_cuda_and_a_training_step_matches_cpu(rng):
    def model():
        mt.manual_seed(0)
        return nn.Sequential(nn.Linear(16, 32), nn.LayerNorm(32), nn.GELU(), nn.Linear(32, 5))

    cpu, gpu = model(), model().to("cuda")
    assert all(p.device == "cuda:0" for p in gpu.parameters())
    opt_c, opt_g = mt.optim.AdamW(cpu.parameters(), lr=1e-2), mt.optim.AdamW(gpu.parameters(), lr=1e-2)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    t = rng.integers(0, 5, 8)
    for _ in range(3):
        for m, opt, dev in ((cpu, opt_c, "cpu"), (gpu, opt_g, "cuda")):
            opt.zero_grad()
            F.cross_entropy(m(mt.tensor(x, device=dev)), mt.tensor(t, device=dev)).backward()
            opt.step()
    for (name, pc), (_, pg) in zip(cpu.named_parameters(), gpu.named_parameters()):
        assert rel_err(pg.detach().cpu().numpy(), pc.detach().numpy()) < 1e-4, name
    assert all(opt_g.state[p]["exp_avg"].device == "cuda:0" for p in gpu.parameters())

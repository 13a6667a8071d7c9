"""The CUDA kernels and their Python wrappers, run on the CPU through the emulator (``cuda_emu.py``).

The kernel text is the one the GPU compiles; the wrappers are the ones the GPU path calls, here on
NumPy arrays, and every launch is checked against the kernel's C++ signature. The references are
the NumPy kernels (``kernels/layer_norm.py``), the CPU ops (softmax, cross-entropy) and the CPU
optimizer. The emulator pretends to have 2 SMs running 1 block each, so the persistent-grid loops
of the backward kernels go round several times even on small inputs.
"""

import importlib

import numpy as np
import pytest
import torch

import cuda_emu
import minitorch_ln as mt
import minitorch_ln.nn.functional as F
from minitorch_ln.kernels import cuda_common, cuda_layer_norm, cuda_optim, cuda_softmax
from minitorch_ln.kernels import layer_norm as oracle
from minitorch_ln.kernels.layer_norm import stat_dtype

pytestmark = pytest.mark.skipif(not cuda_emu.compiler_available(), reason="the CUDA emulator needs g++")

LN_SHAPES = [(37, 768), (3, 4096), (7, 33), (2, 1), (19, 1000), (4, 130)]


@pytest.fixture(scope="module")
def emulator():
    names = set(cuda_layer_norm.example_kernels())
    for dt, pdt in ((np.float32,) * 2, (np.float64,) * 2, (np.float16,) * 2, (np.float16, np.float32)):
        ct, cp = cuda_common.CTYPE[np.dtype(dt)], cuda_common.CTYPE[np.dtype(pdt)]
        for _, D in LN_SHAPES + [(4, 37), (8, 64), (6, 512)]:
            for kind, budget in (("ln_fwd", cuda_layer_norm.FWD_ELEMENTS), ("ln_bwd", cuda_layer_norm.BWD_ELEMENTS)):
                vec, items, wpr, _ = cuda_layer_norm.row_config(D, dt, budget)
                names.add(f"{kind}<{ct}, {cp}, {vec}, {items}, {wpr}>")
        names.add(f"ln_param_grads<{cuda_common.CTYPE[stat_dtype(dt)]}, {cp}>")
        names.add(f"ln_param_grads<{cuda_common.CTYPE[stat_dtype(dt)]}, {ct}>")
    sm_names = set(cuda_softmax.example_kernels())
    for t in ("float", "double", "half_t"):
        for C in (10, 300, 2000):
            wpr, _ = cuda_softmax.row_config(C)
            sm_names |= {f"{k}<{t}, {wpr}>" for k in ("softmax_fwd", "softmax_bwd", "ce_fwd", "ce_bwd")}
    with cuda_emu.installed({
        cuda_layer_norm.SOURCE: sorted(names), cuda_softmax.SOURCE: sorted(sm_names),
        cuda_optim.SOURCE: cuda_optim.example_kernels(),
    }) as emu:
        yield emu


rel_err = cuda_emu.rel_err


TOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 1e-5, np.dtype(np.float16): 3e-3}


# ==================================================================================================
# LayerNorm
# ==================================================================================================


@pytest.mark.parametrize("dtype, pdtype", [(np.float32, np.float32), (np.float64, np.float64),
                                            (np.float16, np.float16), (np.float16, np.float32)])
@pytest.mark.parametrize("N, D", LN_SHAPES)
def test_layer_norm_matches_numpy_oracle(emulator, dtype, pdtype, N, D, rng):
    x = (rng.standard_normal((N, D)) * 2 + 3).astype(dtype)
    w, b = rng.standard_normal(D).astype(pdtype), rng.standard_normal(D).astype(pdtype)
    dy = rng.standard_normal((N, D)).astype(dtype)
    got = cuda_layer_norm.layer_norm_fwd(x, w, b, 1e-5)
    ref = oracle.layer_norm_fwd(x, w, b, 1e-5)
    got_b = cuda_layer_norm.layer_norm_bwd(dy, x, w, got[1], got[2])
    ref_b = oracle.layer_norm_bwd(dy, x, w, ref[1], ref[2])
    tol = TOL[np.dtype(dtype)]
    for name, g, r in zip(("y", "mean", "rstd", "dx", "dweight", "dbias"), got + got_b, ref + ref_b):
        assert g.dtype == r.dtype and g.shape == r.shape, name
        assert rel_err(g, r) <= tol, (name, rel_err(g, r))


@pytest.mark.parametrize("affine", ["none", "weight", "both"])
def test_layer_norm_without_affine_parameters(emulator, affine, rng):
    x, dy = rng.standard_normal((8, 64)), rng.standard_normal((8, 64))
    w = rng.standard_normal(64) if affine != "none" else None
    b = rng.standard_normal(64) if affine == "both" else None
    got, (dx, _, _) = cuda_emu.check_norm_kernels(cuda_layer_norm, oracle, "layer_norm_fwd", "layer_norm_bwd",
                                                  x, dy, w, b, 1e-5)
    dx2, dw2, db2 = cuda_layer_norm.layer_norm_bwd(dy, x, w, got[1], got[2], need_param_grads=False)
    assert dw2 is None and db2 is None and np.array_equal(dx2, dx)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("value", [0.0, 1.0, -3.3, 1e4 + 0.1, 7e-5])
def test_constant_rows_give_exactly_bias(emulator, dtype, value, rng):
    D = 37
    x = np.full((4, D), value, dtype=dtype)
    w, b = rng.standard_normal(D).astype(dtype), rng.standard_normal(D).astype(dtype)
    y, mean, rstd = cuda_layer_norm.layer_norm_fwd(x, w, b, 1e-5)
    np.testing.assert_array_equal(y, np.broadcast_to(b, (4, D)))
    dx, dw, _ = cuda_layer_norm.layer_norm_bwd(rng.standard_normal((4, D)).astype(dtype), x, w, mean, rstd)
    assert np.all(np.isfinite(dx)) and np.all(dw == 0)


def test_large_mean_small_spread_against_float64_torch(emulator, rng):
    # float32 rows 1e4 + 1e-3·noise: shifted in forward, re-centred in backward (as the oracle)
    D = 512
    x = (1e4 + 1e-3 * rng.standard_normal((6, D))).astype(np.float32)
    w, dy = rng.standard_normal(D).astype(np.float32), rng.standard_normal((6, D)).astype(np.float32)
    y, mean, rstd = cuda_layer_norm.layer_norm_fwd(x, w, None, 1e-12)
    dx, dw, _ = cuda_layer_norm.layer_norm_bwd(dy, x, w, mean, rstd)
    xt = torch.tensor(x.astype(np.float64), requires_grad=True)
    wt = torch.tensor(w.astype(np.float64), requires_grad=True)
    yt = torch.nn.functional.layer_norm(xt, (D,), wt, None, 1e-12)
    yt.backward(torch.tensor(dy.astype(np.float64)))
    np.testing.assert_allclose(y, yt.detach().numpy(), atol=1e-4 * np.abs(w).max())
    np.testing.assert_allclose(dw, wt.grad.numpy(), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(dx, xt.grad.numpy(), rtol=1e-3, atol=1e-4 * np.abs(xt.grad.numpy()).max())


def test_float16_near_overflow(emulator, rng):
    # values up to ~6e4 (float16 max 65504): statistics in float32 do not overflow
    x = (rng.uniform(-6e4, 6e4, (5, 256))).astype(np.float16)
    w, b = np.ones(256, np.float16), np.zeros(256, np.float16)
    y, mean, rstd = cuda_layer_norm.layer_norm_fwd(x, w, b, 1e-5)
    ry, rmean, rrstd = oracle.layer_norm_fwd(x, w, b, 1e-5)
    assert np.all(np.isfinite(y)) and mean.dtype == np.float32
    assert rel_err(y, ry) < 3e-3 and rel_err(mean, rmean) < 1e-6 and rel_err(rstd, rrstd) < 1e-6
    dy = rng.standard_normal((5, 256)).astype(np.float16)
    got, ref = cuda_layer_norm.layer_norm_bwd(dy, x, w, mean, rstd), oracle.layer_norm_bwd(dy, x, w, rmean, rrstd)
    for g, r in zip(got, ref):
        assert np.all(np.isfinite(g)) and rel_err(g, r) < 3e-3


def test_backward_is_deterministic_and_walks_the_grid(emulator, rng):
    x, dy, w = rng.standard_normal((53, 768)).astype(np.float32), rng.standard_normal((53, 768)).astype(np.float32), \
        rng.standard_normal(768).astype(np.float32)
    _, mean, rstd = cuda_layer_norm.layer_norm_fwd(x, w, None, 1e-5)
    first = cuda_layer_norm.layer_norm_bwd(dy, x, w, mean, rstd)
    second = cuda_layer_norm.layer_norm_bwd(dy, x, w, mean, rstd)
    for a, b in zip(first, second):
        assert a.tobytes() == b.tobytes()  # no float atomics: the same bits every run
    name, grid, block = [rec for rec in emulator.launches if rec[0].startswith("ln_bwd")][-1]
    groups = -(-53 // block[1])
    assert grid[0] == 2 < groups  # 2 SMs x 1 block: each block visits several row groups


def test_long_rows_fall_back_to_array_expressions(emulator, rng):
    x, dy, w = rng.standard_normal((3, 40000)), rng.standard_normal((3, 40000)), rng.standard_normal(40000)
    before = len(emulator.launches)
    got = cuda_layer_norm.layer_norm_fwd(x, w, w, 1e-5) + cuda_layer_norm.layer_norm_bwd(dy, x, w, *oracle.layer_norm_fwd(x, w, w, 1e-5)[1:])
    ref = oracle.layer_norm_fwd(x, w, w, 1e-5) + oracle.layer_norm_bwd(dy, x, w, *oracle.layer_norm_fwd(x, w, w, 1e-5)[1:])
    assert len(emulator.launches) == before  # no kernel for rows of 40,000
    for g, r in zip(got, ref):
        assert rel_err(g, r) < 1e-12


@pytest.mark.parametrize(
    "call, err, words",
    [(lambda x: cuda_layer_norm.layer_norm_fwd(x.T, None, None, 1e-5), ValueError, "C-contiguous array of shape \\(N, D\\)"),
     (lambda x: cuda_layer_norm.layer_norm_fwd(x[None], None, None, 1e-5), ValueError, "shape \\(N, D\\), got shape \\(1, 4, 6\\)"),
     (lambda x: cuda_layer_norm.layer_norm_fwd(x.astype(np.int64), None, None, 1e-5), TypeError, "float16, float32 or float64, got int64"),
     (lambda x: cuda_layer_norm.layer_norm_fwd(x, np.ones(5), None, 1e-5), ValueError, "expected shape \\(6,\\).*got \\(5,\\)"),
     (lambda x: cuda_layer_norm.layer_norm_bwd(x[:2], x, None, np.zeros(4), np.ones(4)), ValueError, "dy must match x"),
     (lambda x: cuda_layer_norm.layer_norm_bwd(x, x, None, np.zeros(3), np.ones(4)), ValueError, "one per row")],
)
def test_layer_norm_bad_input(emulator, call, err, words):
    with pytest.raises(err, match=words):
        call(np.ones((4, 6)))


# ==================================================================================================
# Softmax and cross-entropy
# ==================================================================================================


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("N, C", [(13, 10), (5, 300), (3, 2000)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_matches_cpu_ops(emulator, dtype, N, C, log, rng):
    x = (rng.standard_normal((N, C)) * 3).astype(dtype)
    x[0] = -np.inf  # a fully masked row: zeros (softmax) or -inf (log-softmax), not NaN
    x[1, ::3] = -np.inf
    xt = mt.tensor(x, requires_grad=True)
    yt = xt.log_softmax(-1) if log else xt.softmax(-1)
    dy = rng.standard_normal((N, C)).astype(dtype)
    yt.backward(mt.tensor(dy))
    y = cuda_softmax.softmax_fwd(x, log=log)
    dx = cuda_softmax.softmax_bwd(dy, y, log=log)
    ref_y, ref_dx = yt.detach().numpy(), xt.grad.numpy()
    assert y.dtype == x.dtype and dx.dtype == x.dtype
    assert np.array_equal(np.isneginf(y), np.isneginf(ref_y)) and not np.isnan(y).any()
    finite = np.isfinite(ref_y)
    tol = 1e-4 if dtype != np.float16 else 1e-2
    np.testing.assert_allclose(y[finite].astype(np.float64), ref_y[finite], rtol=tol, atol=tol)
    np.testing.assert_allclose(dx.astype(np.float64), ref_dx, rtol=tol, atol=tol * max(1, np.abs(ref_dx).max()))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("N, C", [(13, 10), (6, 2000)])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_cross_entropy_matches_cpu_ops(emulator, dtype, N, C, label_smoothing, rng):
    x = (rng.standard_normal((N, C)) * 3).astype(dtype)
    target = rng.integers(0, C, N)
    target[N // 2] = -100
    xt = mt.tensor(x.astype(np.float64), requires_grad=True)
    rows = F.cross_entropy(xt, mt.tensor(target), reduction="none", label_smoothing=label_smoothing)
    dloss = rng.standard_normal(N)
    rows.backward(mt.tensor(dloss))
    loss, lse = cuda_softmax.cross_entropy_fwd(x, target, -100, label_smoothing)
    assert loss.dtype == stat_dtype(dtype) and loss.shape == (N,)
    tol = 1e-5 if dtype != np.float16 else 1e-3
    assert rel_err(loss, rows.detach().numpy()) < tol
    assert loss[N // 2] == 0
    dx = cuda_softmax.cross_entropy_bwd(dloss, x, target, lse, -100, label_smoothing)
    assert dx.dtype == x.dtype and np.all(dx[N // 2] == 0)
    assert rel_err(dx, xt.grad.numpy()) < (1e-5 if dtype != np.float16 else 3e-3)
    # one upstream value for every row (the mean/sum reductions)
    dx_one = cuda_softmax.cross_entropy_bwd(np.array(0.5), x, target, lse, -100, label_smoothing)
    dx_rows = cuda_softmax.cross_entropy_bwd(np.full(N, 0.5), x, target, lse, -100, label_smoothing)
    assert np.array_equal(dx_one, dx_rows)


def test_cross_entropy_bad_target_gives_nan_not_a_wild_read(emulator):
    loss, _ = cuda_softmax.cross_entropy_fwd(np.zeros((2, 4), np.float32), np.array([1, 9]))
    assert loss[0] == pytest.approx(np.log(4)) and np.isnan(loss[1])


@pytest.mark.parametrize(
    "call, words",
    [(lambda: cuda_softmax.softmax_fwd(np.ones((3, 4)).T), "C-contiguous"),
     (lambda: cuda_softmax.softmax_bwd(np.ones((3, 4)), np.ones((3, 5))), "dy must match y"),
     (lambda: cuda_softmax.cross_entropy_fwd(np.ones((3, 4)), np.zeros(2, np.int64)), "class indices of shape \\(3,\\)"),
     (lambda: cuda_softmax.cross_entropy_bwd(np.ones(2), np.ones((3, 4)), np.zeros(3, np.int64), np.ones(3)), "1 or 3 values")],
)
def test_softmax_bad_input(emulator, call, words):
    with pytest.raises(ValueError, match=words):
        call()


# ==================================================================================================
# Fused Adam / AdamW
# ==================================================================================================


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("opts", [dict(decoupled_weight_decay=True, weight_decay=0.1),
                                  dict(weight_decay=0.1, amsgrad=True, maximize=True), dict()])
def test_adam_multi_tensor_matches_cpu_adam(emulator, monkeypatch, dtype, opts, rng):
    monkeypatch.setattr(cuda_optim, "CHUNK", 64)  # several chunks per tensor, more chunks than blocks
    shapes = [(3, 200), (5,), (1001,)]
    params = [mt.nn.Parameter(mt.tensor(rng.standard_normal(s), dtype=dtype)) for s in shapes]
    opt = mt.optim.Adam(params, lr=1e-2, **opts)
    arrays = [p.array.copy() for p in params]
    m, v, vmax = ([np.zeros(s, dtype) for s in shapes] for _ in range(3))
    for step in (1, 2, 3):
        grads = [rng.standard_normal(s).astype(dtype) for s in shapes]
        for p, g in zip(params, grads):
            p.grad = mt.tensor(g)
        opt.step()
        cuda_optim.adam_multi_tensor(
            arrays, grads, m, v, vmax if opts.get("amsgrad") else None, lr=1e-2, beta1=0.9, beta2=0.999, eps=1e-8,
            weight_decay=opts.get("weight_decay", 0.0), step=step,
            decoupled_weight_decay=opts.get("decoupled_weight_decay", False), maximize=opts.get("maximize", False),
        )
    tol = 1e-6 if dtype == np.float32 else 1e-14
    for p, a, st_m in zip(params, arrays, m):
        assert rel_err(a, p.array) < tol
    for p, st_m, st_v in zip(params, m, v):
        assert rel_err(st_m, opt.state[p]["exp_avg"].array) < tol
        assert rel_err(st_v, opt.state[p]["exp_avg_sq"].array) < tol
    blocks = [rec for rec in emulator.launches if rec[0].startswith("adam_multi")][-1][1][0]
    assert blocks == 2 * 8 < sum(-(-int(np.prod(s)) // 64) for s in shapes)


def test_adam_multi_tensor_float16_stays_close(emulator, rng):
    p = [rng.standard_normal(300).astype(np.float16)]
    ref = p[0].astype(np.float64)
    g = [rng.standard_normal(300).astype(np.float16)]
    cuda_optim.adam_multi_tensor(p, g, [np.zeros(300, np.float16)], [np.zeros(300, np.float16)], lr=1e-2, beta1=0.9,
                                 beta2=0.999, eps=1e-8, weight_decay=0.0, step=1, decoupled_weight_decay=False)
    # first step: m̂/sqrt(v̂) = sign(g), so each parameter moves by lr
    np.testing.assert_allclose(p[0].astype(np.float64), ref - 1e-2 * np.sign(g[0]), atol=2e-3)


def test_adam_multi_tensor_bad_input(emulator):
    a = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match="same length"):
        cuda_optim.adam_multi_tensor([a], [], [a], [a], lr=1, beta1=0.9, beta2=0.9, eps=1e-8, weight_decay=0, step=1,
                                     decoupled_weight_decay=False)
    with pytest.raises(ValueError, match="C-contiguous float32 arrays of shape \\(4,\\)"):
        cuda_optim.adam_multi_tensor([a], [a], [np.zeros(4)], [a], lr=1, beta1=0.9, beta2=0.9, eps=1e-8,
                                     weight_decay=0, step=1, decoupled_weight_decay=False)
    with pytest.raises(ValueError, match="gradient 0 has shape \\(3,\\)"):
        cuda_optim.adam_multi_tensor([a], [a[:3]], [a], [a], lr=1, beta1=0.9, beta2=0.9, eps=1e-8,
                                     weight_decay=0, step=1, decoupled_weight_decay=False)


def test_every_launch_was_checked(emulator):
    # by now every wrapper ran; each launch passed the signature check (pointer dtypes, scalar widths)
    kinds = {name.split("<")[0] for name, _, _ in emulator.launches}
    assert {"ln_fwd", "ln_bwd", "ln_param_grads", "softmax_fwd", "softmax_bwd", "ce_fwd", "ce_bwd", "adam_multi"} <= kinds
    for _, grid, block in emulator.launches:
        assert block[0] * block[1] * block[2] <= 1024 and block[0] % 32 == 0


# ==================================================================================================
# The ops and the optimizer on top of the kernels (the GPU branches, taken here on NumPy arrays)
# ==================================================================================================


@pytest.fixture
def gpu_branches(emulator, monkeypatch):
    """Make the ops, the kernel dispatch and Adam take their CUDA branch for NumPy arrays."""
    from minitorch_ln.kernels import layer_norm_dispatch

    softmax_ops = importlib.import_module("minitorch_ln.ops.softmax")  # the module, not the function

    def fused_rows(x, dim):
        ok = dim == x.ndim - 1 and x.flags.c_contiguous and x.size > 0
        return cuda_softmax if ok else None

    monkeypatch.setattr(softmax_ops, "_fused_rows", fused_rows)
    monkeypatch.setattr(importlib.import_module("minitorch_ln.ops.loss"), "_fused_rows", fused_rows)
    monkeypatch.setattr(layer_norm_dispatch, "on_gpu", lambda a: True)
    monkeypatch.setattr(importlib.import_module("minitorch_ln.optim.adam"), "_on_gpu", lambda a: True)
    return emulator


def _train_steps(gpu_like, rng_seed=0):
    mt.manual_seed(0)
    model = mt.nn.Sequential(mt.nn.Linear(12, 32), mt.nn.LayerNorm(32), mt.nn.GELU(), mt.nn.Linear(32, 7))
    opt = mt.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    rng = np.random.default_rng(rng_seed)
    x, t = rng.standard_normal((9, 12)).astype(np.float32), rng.integers(0, 7, 9)
    t[2] = -100
    losses = []
    for _ in range(3):
        opt.zero_grad()
        out = model(mt.tensor(x))
        loss = F.cross_entropy(out, mt.tensor(t), label_smoothing=0.05) + out.log_softmax(-1).exp().softmax(-1).sum() * 0.01
        loss.backward()
        if gpu_like:
            for group in opt.param_groups:
                assert opt._fused_group_step(group)
        else:
            opt.step()
        losses.append(float(loss.item()))
    return losses, [p.detach().numpy().copy() for p in model.parameters()], opt


def test_training_step_through_the_cuda_branches_matches_cpu(gpu_branches):
    ref_losses, ref_params, ref_opt = _train_steps(False)
    before = len(gpu_branches.launches)
    losses, params, opt = _train_steps(True)
    kinds = {name.split("<")[0] for name, _, _ in gpu_branches.launches[before:]}
    assert {"ln_fwd", "ln_bwd", "ce_fwd", "ce_bwd", "softmax_fwd", "softmax_bwd", "adam_multi"} <= kinds
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5)
    for p, r in zip(params, ref_params):
        assert rel_err(p, r) < 1e-5
    for group in opt.param_groups:
        for p in group["params"]:
            assert opt.state[p]["step"] == 3


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_op_branch_matches_dense_path(gpu_branches, reduction, rng):
    x = rng.standard_normal((6, 11))
    t = rng.integers(0, 11, 6)
    t[0] = -100
    dy = rng.standard_normal(6) if reduction == "none" else 0.7
    outs = []
    for fused in (True, False):
        if not fused:
            gpu_branches_off = pytest.MonkeyPatch()
            for name in ("minitorch_ln.ops.softmax", "minitorch_ln.ops.loss"):
                gpu_branches_off.setattr(importlib.import_module(name), "_fused_rows", lambda x, dim: None)
        xt = mt.tensor(x, requires_grad=True)
        loss = F.cross_entropy(xt, mt.tensor(t), reduction=reduction, label_smoothing=0.1)
        loss.backward(mt.tensor(dy))
        outs.append((loss.detach().numpy(), xt.grad.numpy()))
        if not fused:
            gpu_branches_off.undo()
    assert rel_err(outs[0][0], outs[1][0]) < 1e-12 and rel_err(outs[0][1], outs[1][1]) < 1e-12
    with pytest.raises(IndexError, match="out of bounds"):
        F.cross_entropy(mt.tensor(x), mt.tensor(np.array([0, 1, 2, 3, 4, 99])))


def test_cross_entropy_fused_forward_then_double_backward(gpu_branches, rng):
    # create_graph after the fused forward takes the dense, differentiable path
    x = mt.tensor(rng.standard_normal((4, 5)), requires_grad=True)
    t = mt.tensor(rng.integers(0, 5, 4))
    (g,) = mt.autograd.grad(F.cross_entropy(x, t), [x], create_graph=True)
    (g * g).sum().backward()
    x2 = torch.tensor(x.detach().numpy(), requires_grad=True)
    (g2,) = torch.autograd.grad(torch.nn.functional.cross_entropy(x2, torch.tensor(t.numpy())), [x2], create_graph=True)
    (g2 * g2).sum().backward()
    assert rel_err(g.detach().numpy(), g2.detach().numpy()) < 1e-12
    assert rel_err(x.grad.numpy(), x2.grad.numpy()) < 1e-10


def test_layer_norm_views_that_start_unaligned_use_narrower_packs(emulator, rng):
    # a C-contiguous view 4 bytes into its buffer: 16-byte packs would be misaligned on a GPU
    N, D = 6, 64
    buf = rng.standard_normal(N * D + 1).astype(np.float32)
    x = buf[1:].reshape(N, D)
    assert x.flags.c_contiguous and x.ctypes.data % 16 != 0
    w = rng.standard_normal(D).astype(np.float32)
    got = cuda_layer_norm.layer_norm_fwd(x, w, None, 1e-5)
    name = [rec[0] for rec in emulator.launches if rec[0].startswith("ln_fwd")][-1]
    assert name.startswith("ln_fwd<float, float, 1,")
    ref = oracle.layer_norm_fwd(x.copy(), w, None, 1e-5)
    for g, r in zip(got, ref):
        assert rel_err(g, r) < 1e-5
    dy = rng.standard_normal(N * D + 2).astype(np.float32)[2:].reshape(N, D)  # 8 bytes in: packs of 2
    cuda_layer_norm.layer_norm_bwd(dy, x.copy(), w, got[1], got[2])  # a fresh, aligned x
    name = [rec[0] for rec in emulator.launches if rec[0].startswith("ln_bwd")][-1]
    assert name.startswith("ln_bwd<float, float, 2,")

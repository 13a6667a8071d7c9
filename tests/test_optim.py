"""Optimizers and schedulers follow PyTorch's parameter trajectories; state dicts; clip_grad_norm_; bad input."""

import copy
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln import nn, optim
from minitorch_ln.optim import lr_scheduler

from helpers import torch
from strategies import arrays

TORCH_DTYPE = {np.float64: torch.float64, np.float32: torch.float32}
TOL = {np.float64: dict(rtol=1e-10, atol=1e-12), np.float32: dict(rtol=2e-5, atol=2e-6)}

OPTIMIZERS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True, eps=1e-6)),
]
SCHEDULERS = [
    (None, {}),
    ("StepLR", dict(step_size=5, gamma=0.5)),
    ("CosineAnnealingLR", dict(T_max=8, eta_min=1e-3)),  # 20 steps: past T_max, the lr rises again
    ("LambdaLR", dict(lr_lambda=lambda t: 0.9**t)),
]


def twin_models(dtype):
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2)).to(TORCH_DTYPE[dtype])
    ours = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 2)).to(dtype)
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


def data(dtype):
    rng = np.random.default_rng(0)
    return rng.standard_normal((8, 4)).astype(dtype), rng.standard_normal((8, 2)).astype(dtype)


def train_steps(model, opt, sched, x, y, steps, lib):
    """``steps`` steps of full-batch regression; returns the parameters after each step (NumPy)."""
    trajectory = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        trajectory.append([np.array(p.detach().numpy() if lib is torch else p.array) for p in model.parameters()])
    return trajectory


def run_pair(opt_name, opt_kw, sched_name, sched_kw, dtype, steps=20, groups=None):
    ours, theirs = twin_models(dtype)
    x, y = data(dtype)
    p_ours = groups(ours) if groups else ours.parameters()
    p_theirs = groups(theirs) if groups else theirs.parameters()
    opt_o = getattr(optim, opt_name)(p_ours, **opt_kw)
    opt_t = getattr(torch.optim, opt_name)(p_theirs, **opt_kw, foreach=False)
    sched_o = getattr(lr_scheduler, sched_name)(opt_o, **sched_kw) if sched_name else None
    sched_t = getattr(torch.optim.lr_scheduler, sched_name)(opt_t, **sched_kw) if sched_name else None
    traj_o = train_steps(ours, opt_o, sched_o, mt.tensor(x), mt.tensor(y), steps, mt)
    traj_t = train_steps(theirs, opt_t, sched_t, torch.from_numpy(x), torch.from_numpy(y), steps, torch)
    for step, (po, pt) in enumerate(zip(traj_o, traj_t)):
        for i, (a, b) in enumerate(zip(po, pt)):
            np.testing.assert_allclose(a, b, **TOL[dtype], err_msg=f"step {step + 1}, parameter {i}")
    if sched_o is not None:
        assert sched_o.get_last_lr() == pytest.approx(sched_t.get_last_lr(), rel=1e-12)
    assert not np.allclose(traj_o[0][0], traj_o[-1][0])  # the parameters did move
    return opt_o, opt_t


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sched", SCHEDULERS, ids=lambda s: str(s[0]))
@pytest.mark.parametrize("opt", OPTIMIZERS, ids=lambda o: f"{o[0]}-{'-'.join(map(str, o[1].values()))}")
def test_optimizer_follows_pytorch_trajectory_for_20_steps(opt, sched, dtype):
    run_pair(opt[0], opt[1], sched[0], sched[1], dtype)


@pytest.mark.parametrize("name", ["SGD", "AdamW"])
def test_param_groups_with_their_own_hyperparameters(name):
    def groups(model):
        params = list(model.parameters())
        return [{"params": [p for p in params if p.ndim == 2], "weight_decay": 0.1},
                {"params": [p for p in params if p.ndim == 1], "weight_decay": 0.0, "lr": 0.02}]

    kw = dict(lr=0.05, momentum=0.5) if name == "SGD" else dict(lr=0.01)
    opt_o, opt_t = run_pair(name, kw, "StepLR", dict(step_size=3), np.float64, groups=groups)
    assert [g["lr"] for g in opt_o.param_groups] == pytest.approx([g["lr"] for g in opt_t.param_groups])


def test_linear_warmup_cosine_matches_the_same_schedule_as_a_pytorch_lambda():
    base, warmup, total, min_lr = 0.1, 5, 25, 0.01

    def factor(t):  # the documented formula, as a multiplier of base
        if t < warmup:
            return t / warmup
        if t >= total:
            return min_lr / base
        p = (t - warmup) / (total - warmup)
        return (min_lr + (base - min_lr) * 0.5 * (1 + math.cos(math.pi * p))) / base

    ours = optim.SGD([nn.Parameter(mt.zeros(1))], lr=base)
    theirs = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=base)
    s_o = lr_scheduler.LinearWarmupCosineLR(ours, warmup, total, min_lr=min_lr)
    s_t = torch.optim.lr_scheduler.LambdaLR(theirs, factor)
    lrs = []
    for _ in range(30):
        assert s_o.get_last_lr() == pytest.approx(s_t.get_last_lr(), rel=1e-12, abs=1e-15)
        lrs.append(s_o.get_last_lr()[0])
        ours.step(), theirs.step()
        s_o.step(), s_t.step()
    assert lrs[0] == 0 and lrs[warmup] == pytest.approx(base) and lrs[total] == pytest.approx(min_lr)
    assert all(a <= b for a, b in zip(lrs[:warmup], lrs[1:warmup + 1]))  # rises during warm-up
    assert all(a >= b for a, b in zip(lrs[warmup:], lrs[warmup + 1:]))  # then never rises


@pytest.mark.parametrize("name,kw", [("StepLR", dict(step_size=3, gamma=0.3)),
                                     ("CosineAnnealingLR", dict(T_max=10, eta_min=0.001)),
                                     ("LambdaLR", dict(lr_lambda=[lambda t: 1 / (t + 1), lambda t: 0.5**t]))])
def test_scheduler_values_and_state_dict_round_trip(name, kw):
    def make(lib_optim, lib_sched, params):
        opt = lib_optim.SGD([{"params": params[:1]}, {"params": params[1:], "lr": 0.5}], lr=0.1)
        return opt, getattr(lib_sched, name)(opt, **kw)

    opt_o, s_o = make(optim, lr_scheduler, [nn.Parameter(mt.zeros(1)), nn.Parameter(mt.zeros(1))])
    opt_t, s_t = make(torch.optim, torch.optim.lr_scheduler, [torch.zeros(1, requires_grad=True) for _ in range(2)])
    for step in range(35):
        assert s_o.get_last_lr() == pytest.approx(s_t.get_last_lr(), rel=1e-12), f"step {step}"
        opt_o.step(), opt_t.step()
        s_o.step(), s_t.step()
    # a fresh scheduler on a fresh optimizer picks up exactly where the saved one was
    opt2, s2 = make(optim, lr_scheduler, [nn.Parameter(mt.zeros(1)), nn.Parameter(mt.zeros(1))])
    opt2.load_state_dict(opt_o.state_dict())
    s2.load_state_dict(s_o.state_dict())
    for _ in range(5):
        s_o.step(), s2.step()
        assert s2.get_last_lr() == s_o.get_last_lr()


# ----------------------------------------------------------------------------------------------- state dicts


@pytest.mark.parametrize("opt", [("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
                                 ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.01)),
                                 ("AdamW", dict(lr=0.01))], ids=lambda o: o[0])
def test_state_dict_round_trip_resumes_exactly(opt):
    name, kw = opt
    x, y = (mt.tensor(a) for a in data(np.float64))
    model, _ = twin_models(np.float64)
    o = getattr(optim, name)(model.parameters(), **kw)
    s = lr_scheduler.CosineAnnealingLR(o, T_max=15)
    train_steps(model, o, s, x, y, 10, mt)
    saved_model, saved_opt, saved_sched = copy.deepcopy(model.state_dict()), o.state_dict(), s.state_dict()
    assert list(saved_opt) == ["state", "param_groups"] and saved_opt["param_groups"][0]["params"] == [0, 1, 2, 3]
    straight = train_steps(model, o, s, x, y, 10, mt)

    resumed_model, _ = twin_models(np.float64)
    resumed_model.load_state_dict(saved_model)
    o2 = getattr(optim, name)(resumed_model.parameters(), **kw)
    s2 = lr_scheduler.CosineAnnealingLR(o2, T_max=15)  # made before loading, as in PyTorch
    # keys as strings and tensors as arrays, as after a trip through JSON and safetensors
    o2.load_state_dict({"state": {str(k): {n: (v.numpy() if isinstance(v, mt.Tensor) else v) for n, v in st_.items()}
                                  for k, st_ in saved_opt["state"].items()},
                        "param_groups": saved_opt["param_groups"]})
    s2.load_state_dict(saved_sched)
    resumed = train_steps(resumed_model, o2, s2, x, y, 10, mt)
    for a, b in zip(straight[-1], resumed[-1]):
        np.testing.assert_array_equal(a, b)


def test_state_dict_is_a_snapshot():
    p = nn.Parameter(mt.ones(3))
    o = optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = mt.ones(3)
    o.step()
    sd = o.state_dict()
    o.step()
    np.testing.assert_array_equal(sd["state"][0]["momentum_buffer"].array, np.ones(3))


def test_loads_a_pytorch_adam_state_dict_and_continues_like_pytorch():
    ours, theirs = twin_models(np.float64)
    x, y = data(np.float64)
    opt_t = torch.optim.Adam(theirs.parameters(), lr=0.01, foreach=False)
    train_steps(theirs, opt_t, None, torch.from_numpy(x), torch.from_numpy(y), 5, torch)
    ours.load_state_dict(theirs.state_dict())
    opt_o = optim.Adam(ours.parameters(), lr=0.01)
    opt_o.load_state_dict(opt_t.state_dict())
    assert opt_o.state[next(ours.parameters())]["step"] == 5
    a = train_steps(ours, opt_o, None, mt.tensor(x), mt.tensor(y), 5, mt)
    b = train_steps(theirs, opt_t, None, torch.from_numpy(x), torch.from_numpy(y), 5, torch)
    for pa, pb in zip(a[-1], b[-1]):
        np.testing.assert_allclose(pa, pb, rtol=1e-10)


def test_state_lives_on_the_parameters_device_and_dtype(device):
    p = nn.Parameter(mt.randn(3, 2, dtype="float64", device=device))
    o = optim.Adam([p], amsgrad=True)
    p.grad = mt.ones(3, 2, dtype="float64", device=device)
    o.step()
    for key in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
        t = o.state[p][key]
        assert t.device == device and t.dtype == np.float64 and t.shape == (3, 2)
    assert o.state[p]["step"] == 1


def test_zero_grad_and_closure():
    p = nn.Parameter(mt.tensor([1.0, 2.0]))
    o = optim.SGD([p], lr=0.5)

    def closure():
        o.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    assert o.step(closure).item() == 5.0
    np.testing.assert_allclose(p.array, [0.0, 0.0])  # p - 0.5 · 2p
    buf = p.grad.array
    o.zero_grad(set_to_none=False)
    assert p.grad.array is buf and not buf.any()
    o.zero_grad()
    assert p.grad is None
    o.step()  # no gradient: nothing changes, no error
    np.testing.assert_allclose(p.array, [0.0, 0.0])


# ----------------------------------------------------------------------------------------------- properties


@given(arrays((3, 2)), arrays((3, 2)), st.floats(1e-3, 1.0), st.floats(0, 0.5))
def test_sgd_step_property(p0, g, lr, wd):
    p = nn.Parameter(mt.tensor(p0))
    p.grad = mt.tensor(g)
    optim.SGD([p], lr=lr, weight_decay=wd).step()
    np.testing.assert_allclose(p.array, p0 - lr * (g + wd * p0), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(p.grad.array, g)  # the gradient itself is left unchanged


@given(arrays((4,), min_value=-5, max_value=5), st.floats(1e-4, 0.1))
def test_adam_first_step_moves_each_weight_by_about_lr(g, lr):
    # after one step m̂ = g and √v̂ = |g|: the update is lr · g / (|g| + eps)
    p = nn.Parameter(mt.zeros(4, dtype="float64"))
    p.grad = mt.tensor(g)
    optim.Adam([p], lr=lr).step()
    np.testing.assert_allclose(p.array, -lr * g / (np.abs(g) + 1e-8), rtol=1e-9, atol=1e-15)


# ----------------------------------------------------------------------------------------------- clip_grad_norm_


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.5, math.inf])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_pytorch(norm_type, max_norm, dtype, rng):
    grads = [rng.standard_normal(s).astype(dtype) for s in [(3, 4), (4,), (2, 2, 2)]]
    ours = [nn.Parameter(mt.zeros(*g.shape, dtype=dtype)) for g in grads]
    theirs = [torch.zeros(g.shape, dtype=TORCH_DTYPE[dtype], requires_grad=True) for g in grads]
    for p, t, g in zip(ours, theirs, grads):
        p.grad, t.grad = mt.tensor(g), torch.from_numpy(g.copy())
    ours.append(nn.Parameter(mt.zeros(2, dtype=dtype)))  # no gradient: skipped
    total_o = nn.utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    total_t = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type, foreach=False)
    tol = TOL[dtype]
    assert total_o.dtype == dtype and total_o.shape == ()
    np.testing.assert_allclose(total_o.item(), total_t.item(), **tol)
    for p, t in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.array, t.grad.numpy(), **tol)
    if max_norm == 100.0:  # below the limit: untouched
        for p, g in zip(ours, grads):
            np.testing.assert_allclose(p.grad.array, g, **tol)
    assert optim.clip_grad_norm_ is nn.utils.clip_grad_norm_


def test_clip_grad_norm_edge_cases():
    assert nn.utils.clip_grad_norm_([nn.Parameter(mt.ones(2))], 1.0).item() == 0.0  # no grads at all
    p = nn.Parameter(mt.ones(2))
    p.grad = mt.tensor([3.0, float("inf")])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    with pytest.raises(ValueError, match="max_norm must be a non-negative number, got -1.0"):
        nn.utils.clip_grad_norm_(p, -1.0)
    with pytest.raises(TypeError, match="element 0 is ndarray"):
        nn.utils.clip_grad_norm_([np.ones(2)], 1.0)
    q = nn.Parameter(mt.zeros(3))
    q.grad = mt.tensor([-5.0, 0.5, 5.0])
    nn.utils.clip_grad_value_([q], 1.0)
    np.testing.assert_array_equal(q.grad.array, [-1.0, 0.5, 1.0])


# ----------------------------------------------------------------------------------------------- bad input


def test_optimizer_bad_input():
    w = nn.Parameter(mt.ones(2))
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="only optimize Tensors .* element 1 .* ndarray"):
        optim.Adam([w, np.ones(2)])
    with pytest.raises(TypeError, match="single Tensor of shape \\(2,\\): wrap it in a list"):
        optim.SGD(w, lr=0.1)
    with pytest.raises(TypeError, match="Linear module: pass model.parameters"):
        optim.SGD(nn.Linear(2, 2), lr=0.1)
    with pytest.raises(ValueError, match="non-leaf Tensor"):
        optim.SGD([w * 2], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate: -0.1"):
        optim.SGD([w], lr=-0.1)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.AdamW([w], lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        optim.Adam([w], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Invalid epsilon value"):
        optim.Adam([w], eps=-1e-8)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        optim.SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid momentum value: -0.5"):
        optim.SGD([w], lr=0.1, momentum=-0.5)
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [w]}, {"params": [w]}], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate: -2"):
        optim.SGD([{"params": [w], "lr": -2}], lr=0.1)


def test_load_state_dict_bad_input_changes_nothing():
    a, b = nn.Parameter(mt.ones(2)), nn.Parameter(mt.ones(3))
    o = optim.Adam([a, b], lr=0.1)
    with pytest.raises(ValueError, match="2 parameter group\\(s\\), this optimizer has 1"):
        o.load_state_dict({"state": {}, "param_groups": [{"params": [0]}, {"params": [1]}]})
    with pytest.raises(ValueError, match="group 0 has 1 parameter\\(s\\), this optimizer's has 2"):
        o.load_state_dict({"state": {}, "param_groups": [{"params": [0], "lr": 1.0}]})
    bad = {"state": {0: {"step": 1, "exp_avg": np.zeros(5), "exp_avg_sq": np.zeros(2)}},
           "param_groups": [dict(o.param_groups[0], params=[0, 1], lr=9.0)]}
    with pytest.raises(ValueError, match="'exp_avg' has shape \\(5,\\), its parameter \\(2,\\)"):
        o.load_state_dict(bad)
    assert o.param_groups[0]["lr"] == 0.1 and not o.state


def test_scheduler_bad_input():
    o = optim.SGD([nn.Parameter(mt.ones(1))], lr=0.1)
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        lr_scheduler.StepLR([], step_size=2)
    with pytest.raises(ValueError, match="step_size must be a positive int, got 0"):
        lr_scheduler.StepLR(o, step_size=0)
    with pytest.raises(ValueError, match="T_max must be a positive int"):
        lr_scheduler.CosineAnnealingLR(o, T_max=0)
    with pytest.raises(ValueError, match="total_steps must be an int > warmup_steps \\(10\\), got 10"):
        lr_scheduler.LinearWarmupCosineLR(o, 10, 10)
    with pytest.raises(ValueError, match="Expected 1 lr_lambdas, but got 2"):
        lr_scheduler.LambdaLR(o, [lambda t: 1, lambda t: 1])


ADAM_VARIANTS = [
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.02, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True, maximize=True)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1)),
    ("AdamW", dict(lr=3e-3, weight_decay=0.0, amsgrad=True, eps=1e-6)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, kw", ADAM_VARIANTS)
def test_compiled_adam_update_is_bitwise_the_numpy_form(name, kw, dtype, monkeypatch):
    # kernels/cpu_adam.py runs kernels/adam.py's operations in its order and dtype: every parameter
    # and moment must come out bitwise the same as with the NumPy kernels, over several steps, on
    # values that test the rounding (tiny, huge, zeros of both signs, an infinite weight with
    # weight_decay=0, where 0 · inf must not be formed).
    from minitorch_ln import kernels  # noqa: PLC0415
    from minitorch_ln.kernels import cpu_adam  # noqa: PLC0415

    if not cpu_adam.AVAILABLE:
        pytest.skip("Numba is not installed")
    rng = np.random.default_rng(7)
    w0 = (rng.standard_normal((33, 17)) * np.logspace(-20, 20, 17)).astype(dtype)
    w0[0, :3] = [0.0, -0.0, 1e-45 if dtype == np.float32 else 5e-324]
    if kw.get("weight_decay", 0) == 0 and name == "AdamW":
        w0[1, 0] = np.inf
    grads = [(rng.standard_normal(w0.shape) * np.logspace(-15, 15, 17)).astype(dtype) for _ in range(4)]
    for g in grads:
        g[0, 0] = -0.0
    results = {}
    loops = []  # the compiled loop's runs: one per step with "numba", none with "numpy"
    real_loop = cpu_adam._adam_loop
    monkeypatch.setattr(cpu_adam, "_adam_loop", lambda *a: loops.append(1) or real_loop(*a))
    before = kernels.get_cpu_kernels()
    try:
        for choice in ("numba", "numpy"):
            kernels.set_cpu_kernels(choice)
            p = mt.tensor(w0.copy(), requires_grad=True)
            # NumPy float64 hyperparameters (from NumPy math or a schedule) must not change the dtype
            opt = getattr(optim, name)([p], **{k: np.float64(v) if isinstance(v, float) else v for k, v in kw.items()})
            for g in grads:
                p.grad = mt.tensor(g)
                loops.clear()
                opt.step()
                assert len(loops) == (choice == "numba")
            state = opt.state[p]
            results[choice] = [p.detach().numpy()] + [state[k].numpy() for k in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")
                                             if k in state]
    finally:
        kernels.set_cpu_kernels(before)
    for a, b in zip(results["numba"], results["numpy"]):
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))   # bitwise, signs of zero and NaNs too


def test_compiled_adam_update_leaves_other_layouts_to_numpy():
    from minitorch_ln.kernels import cpu_adam  # noqa: PLC0415

    a = np.zeros((4, 6), np.float32)
    assert cpu_adam.compiled_for(a, a, a, a, None) == cpu_adam.AVAILABLE
    assert not cpu_adam.compiled_for(a.T, a.T, a.T, a.T, None)                          # views
    assert not cpu_adam.compiled_for(a.astype(np.float16), *(a.astype(np.float16),) * 3, None)
    assert not cpu_adam.compiled_for(a, a.astype(np.float64), a, a, None)               # mixed dtypes
    # and such a parameter still trains like PyTorch (the NumPy form): a transposed float32 view
    w = np.arange(24, dtype=np.float32).reshape(6, 4) / 10
    p = mt.from_numpy(w.copy().T).requires_grad_()                 # non-contiguous (4, 6)
    assert not p.array.flags.c_contiguous
    pt = torch.tensor(w.copy().T, requires_grad=True)
    opt, opt_t = optim.AdamW([p], lr=0.1), torch.optim.AdamW([pt], lr=0.1)
    g = np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6)
    for _ in range(3):
        p.grad, pt.grad = mt.tensor(g), torch.tensor(g)
        opt.step()
        opt_t.step()
    np.testing.assert_allclose(p.detach().numpy(), pt.detach().numpy(), rtol=1e-6, atol=1e-7)

"""The schedulers beyond StepLR/Cosine/Lambda (optim/lr_scheduler/{multiplicative,cyclic,combined}.py)
against PyTorch's: the lr (and cycled momentum) of every group at every step for 50-100 steps,
state-dict round trips, ``step(epoch)``, and PyTorch's errors for bad arguments."""

import numpy as np
import pytest

import minitorch_ln as mt
from minitorch_ln import nn, optim
from minitorch_ln.optim import lr_scheduler

from helpers import torch

TL = torch.optim.lr_scheduler


def make_optimizer(lib, kind="SGD"):
    """Two groups with their own lr; SGD with momentum (cycled by OneCycleLR/CyclicLR) or Adam (betas)."""
    if lib is torch:
        params = [torch.zeros(2, requires_grad=True), torch.zeros(3, requires_grad=True)]
        o = torch.optim
    else:
        params = [nn.Parameter(mt.zeros(2)), nn.Parameter(mt.zeros(3))]
        o = optim
    groups = [{"params": params[:1]}, {"params": params[1:], "lr": 0.05}]
    if kind == "Adam":
        return o.Adam(groups, lr=0.1)
    return o.SGD(groups, lr=0.1, momentum=0.9)


def record(opt, sched, steps, metrics=None):
    """``get_last_lr()`` and each group's lr/momentum/betas after construction and after each step."""
    def snapshot():
        return (list(sched.get_last_lr()), [g["lr"] for g in opt.param_groups],
                [g.get("momentum") for g in opt.param_groups], [g.get("betas") for g in opt.param_groups])
    out = [snapshot()]
    for i in range(steps):
        opt.step()
        if metrics is None:
            sched.step()
        else:
            sched.step(metrics[i])
        out.append(snapshot())
    return out


def assert_same_sequence(ours, theirs):
    for step, (a, b) in enumerate(zip(ours, theirs)):
        for what, x, y in zip(("get_last_lr", "lr", "momentum", "betas"), a, b):
            x, y = ([np.nan] if v is None else v for v in np.ravel(np.array(x, dtype=object))), \
                ([np.nan] if v is None else v for v in np.ravel(np.array(y, dtype=object)))
            x, y = np.concatenate([np.ravel(v) for v in x]), np.concatenate([np.ravel(v) for v in y])
            np.testing.assert_allclose(x.astype(float), y.astype(float), rtol=1e-12, atol=1e-15,
                                       err_msg=f"step {step}: {what}")
    assert len(ours) == len(theirs)


# name -> (build(sched_module, optimizer), steps, optimizer kind). Each builds the same thing with either library.
CASES = {
    "ExponentialLR": (lambda L, o: L.ExponentialLR(o, gamma=0.93), 60, "SGD"),
    "MultiStepLR": (lambda L, o: L.MultiStepLR(o, milestones=[10, 25, 25, 60], gamma=0.5), 70, "SGD"),
    "ConstantLR": (lambda L, o: L.ConstantLR(o, factor=0.5, total_iters=7), 50, "SGD"),
    "LinearLR": (lambda L, o: L.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=30), 50, "SGD"),
    "LinearLR-down": (lambda L, o: L.LinearLR(o, start_factor=1.0, end_factor=0.0, total_iters=20), 50, "SGD"),
    "PolynomialLR": (lambda L, o: L.PolynomialLR(o, total_iters=40, power=2.0), 60, "SGD"),
    "MultiplicativeLR": (lambda L, o: L.MultiplicativeLR(o, lr_lambda=[lambda t: 0.97, lambda t: 0.9 + t / 1000]),
                         50, "SGD"),
    "OneCycleLR-cos": (lambda L, o: L.OneCycleLR(o, max_lr=[0.5, 1.0], total_steps=100), 100, "SGD"),
    "OneCycleLR-linear-3phase": (lambda L, o: L.OneCycleLR(o, max_lr=0.4, epochs=10, steps_per_epoch=9,
                                                           pct_start=0.25, anneal_strategy="linear",
                                                           three_phase=True, div_factor=10.0,
                                                           final_div_factor=100.0), 90, "SGD"),
    "OneCycleLR-adam": (lambda L, o: L.OneCycleLR(o, max_lr=0.01, total_steps=80, base_momentum=0.8,
                                                  max_momentum=[0.9, 0.95]), 80, "Adam"),
    "OneCycleLR-no-momentum": (lambda L, o: L.OneCycleLR(o, max_lr=0.3, total_steps=60, cycle_momentum=False),
                               60, "SGD"),
    "CosineAnnealingWarmRestarts": (lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=7, T_mult=2, eta_min=0.01),
                                    100, "SGD"),
    "CosineAnnealingWarmRestarts-T_mult1": (lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=10), 80, "SGD"),
    "CyclicLR-triangular": (lambda L, o: L.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=6), 80, "SGD"),
    "CyclicLR-triangular2": (lambda L, o: L.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=5, step_size_down=3,
                                                     mode="triangular2"), 80, "SGD"),
    "CyclicLR-exp_range-adam": (lambda L, o: L.CyclicLR(o, base_lr=1e-3, max_lr=1e-2, step_size_up=4,
                                                        mode="exp_range", gamma=0.98), 80, "Adam"),
    "CyclicLR-scale_fn": (lambda L, o: L.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=5,
                                                  scale_fn=lambda x: 0.5 ** x, scale_mode="iterations",
                                                  cycle_momentum=False), 60, "SGD"),
    "SequentialLR": (lambda L, o: L.SequentialLR(o, [L.LinearLR(o, start_factor=0.1, total_iters=10),
                                                     L.ExponentialLR(o, gamma=0.9)], milestones=[10]), 60, "SGD"),
    "SequentialLR-3": (lambda L, o: L.SequentialLR(o, [L.ConstantLR(o, factor=0.25, total_iters=3),
                                                       L.StepLR(o, step_size=4, gamma=0.5),
                                                       L.CosineAnnealingLR(o, T_max=15, eta_min=0.001)],
                                                   milestones=[5, 20]), 60, "SGD"),
    "ChainedScheduler": (lambda L, o: L.ChainedScheduler([L.ConstantLR(o, factor=0.1, total_iters=2),
                                                          L.ExponentialLR(o, gamma=0.9)]), 50, "SGD"),
    "ChainedScheduler-3": (lambda L, o: L.ChainedScheduler([L.LinearLR(o, start_factor=0.5, total_iters=10),
                                                            L.MultiStepLR(o, milestones=[15, 30], gamma=0.3),
                                                            L.PolynomialLR(o, total_iters=50, power=0.5)],
                                                           optimizer=o), 60, "SGD"),
    "SequentialLR-of-chained": (lambda L, o: L.SequentialLR(o, [
        L.ChainedScheduler([L.LinearLR(o, start_factor=0.5, total_iters=4), L.ExponentialLR(o, gamma=0.95)]),
        L.MultiStepLR(o, milestones=[5, 10], gamma=0.5)], milestones=[8]), 50, "SGD"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_lr_sequence_matches_pytorch(name):
    build, steps, kind = CASES[name]
    opt_o, opt_t = make_optimizer(mt, kind), make_optimizer(torch, kind)
    ours = record(opt_o, build(lr_scheduler, opt_o), steps)
    theirs = record(opt_t, build(TL, opt_t), steps)
    assert_same_sequence(ours, theirs)
    assert len({round(r[0][1], 12) for r in ours}) >= 2  # the schedule did move


@pytest.mark.parametrize("name", sorted(CASES))
def test_state_dict_round_trip_continues_identically(name):
    build, steps, kind = CASES[name]
    opt = make_optimizer(mt, kind)
    sched = build(lr_scheduler, opt)
    record(opt, sched, steps // 2)
    saved_opt, saved_sched = opt.state_dict(), sched.state_dict()
    straight = record(opt, sched, steps // 2)

    opt2 = make_optimizer(mt, kind)
    sched2 = build(lr_scheduler, opt2)  # made first, then both loaded (the order PyTorch documents)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved_sched)
    resumed = record(opt2, sched2, steps // 2)
    assert resumed[1:] == straight[1:]


def test_state_dict_keys_are_pytorchs():
    # PyTorch also saves `_get_lr_called_within_step` (its warning machinery, absent here)
    for name, (build, _, kind) in sorted(CASES.items()):
        opt_o, opt_t = make_optimizer(mt, kind), make_optimizer(torch, kind)
        s_o, s_t = build(lr_scheduler, opt_o), build(TL, opt_t)
        opt_o.step(), opt_t.step(), s_o.step(), s_t.step()
        theirs = set(s_t.state_dict()) - {"_get_lr_called_within_step"}
        assert set(s_o.state_dict()) == theirs, name


# ------------------------------------------------------------------------------------------- ReduceLROnPlateau

def plateau_metrics(n=100, seed=0):
    """Falling with long flat stretches and noise: improvements, plateaus, a relapse."""
    rng = np.random.default_rng(seed)
    base = np.concatenate([np.linspace(1.0, 0.5, 20), np.full(15, 0.5), np.linspace(0.5, 0.3, 10),
                           np.full(25, 0.31), np.linspace(0.31, 0.6, 10), np.full(20, 0.29)])[:n]
    return list(base + rng.normal(0, 1e-5, n))


@pytest.mark.parametrize("kw", [dict(),
                                dict(patience=3, cooldown=2, factor=0.5),
                                dict(patience=0, cooldown=0, factor=0.7, min_lr=[0.01, 0.02]),
                                dict(mode="max", patience=2, threshold=0.01, threshold_mode="abs", factor=0.5),
                                dict(mode="max", patience=4, threshold=0.05, threshold_mode="rel", cooldown=3),
                                dict(mode="min", patience=1, threshold=0.1, threshold_mode="abs", min_lr=0.004,
                                     eps=1e-3, factor=0.5)], ids=str)
def test_reduce_lr_on_plateau_matches_pytorch(kw):
    metrics = plateau_metrics()
    if kw.get("mode") == "max":
        metrics = [-m for m in metrics]
    opt_o, opt_t = make_optimizer(mt), make_optimizer(torch)
    s_o, s_t = lr_scheduler.ReduceLROnPlateau(opt_o, **kw), TL.ReduceLROnPlateau(opt_t, **kw)
    ours, theirs = record(opt_o, s_o, len(metrics), metrics), record(opt_t, s_t, len(metrics), metrics)
    assert_same_sequence(ours, theirs)
    assert ours[-1][1] != ours[0][1]  # it did reduce
    for key in ("best", "num_bad_epochs", "cooldown_counter", "last_epoch", "min_lrs"):
        assert getattr(s_o, key) == getattr(s_t, key), key
    # a metric given as a one-element tensor; state dict round trip
    s_o.step(mt.tensor(0.1)), s_t.step(torch.tensor(0.1))
    assert s_o.best == pytest.approx(s_t.best)
    s2 = lr_scheduler.ReduceLROnPlateau(make_optimizer(mt), **kw)
    s2.load_state_dict(s_o.state_dict())
    assert {k: v for k, v in vars(s2).items() if k != "optimizer"} == s_o.state_dict()


def test_step_with_epoch_uses_the_closed_form_as_pytorch():
    for build in (lambda L, o: L.StepLR(o, step_size=3, gamma=0.5), lambda L, o: L.ExponentialLR(o, gamma=0.9),
                  lambda L, o: L.MultiStepLR(o, [2, 5], gamma=0.1), lambda L, o: L.LinearLR(o, total_iters=6),
                  lambda L, o: L.CosineAnnealingLR(o, T_max=8), lambda L, o: L.PolynomialLR(o, total_iters=9),
                  lambda L, o: L.ConstantLR(o, total_iters=4),
                  lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2)):
        opt_o, opt_t = make_optimizer(mt), make_optimizer(torch)
        s_o, s_t = build(lr_scheduler, opt_o), build(TL, opt_t)
        for epoch in (4, 7, 1, 12, 5.5 if isinstance(s_o, lr_scheduler.CosineAnnealingWarmRestarts) else 5):
            opt_o.step(), opt_t.step()
            s_o.step(epoch)
            with pytest.warns(UserWarning) if not isinstance(s_t, TL.CosineAnnealingWarmRestarts) else _nothing():
                s_t.step(epoch)
            assert s_o.get_last_lr() == pytest.approx(s_t.get_last_lr(), rel=1e-12), (type(s_o).__name__, epoch)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_one_cycle_stepping_past_total_steps_raises_like_pytorch():
    opt_o, opt_t = make_optimizer(mt), make_optimizer(torch)
    s_o, s_t = lr_scheduler.OneCycleLR(opt_o, 0.1, total_steps=5), TL.OneCycleLR(opt_t, 0.1, total_steps=5)
    record(opt_o, s_o, 5), record(opt_t, s_t, 5)
    with pytest.raises(ValueError, match="Tried to step 6 times. The specified number of total steps is 5"):
        s_o.step()
    with pytest.raises(ValueError, match="Tried to step 6 times"):
        s_t.step()


BAD = [
    ("ConstantLR", dict(factor=1.5), "Constant multiplicative factor expected to be between 0 and 1"),
    ("LinearLR", dict(start_factor=0), "Starting multiplicative factor expected to be greater than 0"),
    ("LinearLR", dict(end_factor=2.0), "Ending multiplicative factor expected to be between 0 and 1"),
    ("MultiplicativeLR", dict(lr_lambda=[lambda t: 1.0]), "Expected 2 lr_lambdas, but got 1"),
    ("OneCycleLR", dict(max_lr=0.1), "You must define either total_steps OR"),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=0), "Expected positive integer total_steps, but got 0"),
    ("OneCycleLR", dict(max_lr=0.1, epochs=2, steps_per_epoch=-1), "Expected positive integer steps_per_epoch"),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=10, pct_start=1), "Expected float between 0 and 1 pct_start"),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=10, anneal_strategy="exp"), "anneal_strategy must be one of"),
    ("OneCycleLR", dict(max_lr=[0.1, 0.2, 0.3], total_steps=10), "max_lr must have the same length"),
    ("CosineAnnealingWarmRestarts", dict(T_0=0), "Expected positive integer T_0, but got 0"),
    ("CosineAnnealingWarmRestarts", dict(T_0=5, T_mult=0), "Expected integer T_mult >= 1, but got 0"),
    ("CosineAnnealingWarmRestarts", dict(T_0=5, eta_min="0"), "Expected float or int eta_min"),
    ("CyclicLR", dict(base_lr=0.1, max_lr=1.0, mode="sine"), "mode is invalid and scale_fn is None"),
    ("ReduceLROnPlateau", dict(factor=1.0), "Factor should be < 1.0."),
    ("ReduceLROnPlateau", dict(mode="median"), "mode median is unknown!"),
    ("ReduceLROnPlateau", dict(threshold_mode="pct"), "threshold mode pct is unknown!"),
    ("ReduceLROnPlateau", dict(min_lr=[0.1]), "expected 2 min_lrs, got 1"),
]


@pytest.mark.parametrize("name, kw, message", BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_arguments_raise_like_pytorch(name, kw, message):
    for lib, L in ((mt, lr_scheduler), (torch, TL)):
        with pytest.raises(ValueError, match=message.replace("(", "\\(").replace(".", "[.]")):
            getattr(L, name)(make_optimizer(lib), **kw)


def test_composite_bad_arguments_raise_like_pytorch():
    for lib, L in ((mt, lr_scheduler), (torch, TL)):
        o, other = make_optimizer(lib), make_optimizer(lib)
        e = L.ExponentialLR(o, gamma=0.9)
        with pytest.raises(ValueError, match="expects at least one scheduler"):
            L.SequentialLR(o, [], milestones=[])
        with pytest.raises(ValueError, match="number of schedulers 1 and the number of milestones to be equal to 1"):
            L.SequentialLR(o, [e], milestones=[3])
        with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
            L.ChainedScheduler([e, L.ReduceLROnPlateau(o)])
        with pytest.raises(ValueError, match="expects all schedulers to belong to the same optimizer"):
            L.SequentialLR(o, [e, L.ExponentialLR(other, gamma=0.5)], milestones=[2])
        with pytest.raises(TypeError, match="at index 0 should have `optimizer` as its attribute"):
            L.ChainedScheduler([object()], optimizer=o)
        with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
            L.OneCycleLR(_no_momentum(lib), max_lr=0.1, total_steps=5)


def _no_momentum(lib):
    p = torch.zeros(1, requires_grad=True) if lib is torch else nn.Parameter(mt.zeros(1))
    return (torch.optim if lib is torch else optim).Adagrad([p])


def test_the_torch_alias_names_every_new_scheduler_and_optimizer():
    from minitorch_ln.interop.torch_alias import torch_alias  # noqa: PLC0415

    names = ["ExponentialLR", "MultiStepLR", "ConstantLR", "LinearLR", "PolynomialLR", "OneCycleLR", "CyclicLR",
             "CosineAnnealingWarmRestarts", "ReduceLROnPlateau", "SequentialLR", "ChainedScheduler", "MultiplicativeLR"]
    with torch_alias():
        import torch as T  # noqa: PLC0415 - the alias's torch, inside the block
        from torch.optim.lr_scheduler import OneCycleLR  # noqa: PLC0415

        assert OneCycleLR is lr_scheduler.OneCycleLR
        for name in names:
            assert getattr(T.optim.lr_scheduler, name) is getattr(lr_scheduler, name)
        for name in ("RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"):
            assert getattr(T.optim, name) is getattr(optim, name)


@pytest.mark.parametrize("suffix", [".pt", ".mtl"])
def test_multistep_state_survives_a_checkpoint_file(tmp_path, suffix):
    # the milestones Counter comes back from a checkpoint as a plain dict: still counted, step(epoch) works
    opt = make_optimizer(mt)
    sched = lr_scheduler.MultiStepLR(opt, milestones=[3, 5, 5], gamma=0.5)
    mt.save(sched.state_dict(), tmp_path / f"s{suffix}")
    opt2 = make_optimizer(mt)
    sched2 = lr_scheduler.MultiStepLR(opt2, milestones=[1])
    sched2.load_state_dict(mt.load(tmp_path / f"s{suffix}"))
    for _ in range(6):
        opt.step(), opt2.step(), sched.step(), sched2.step()
        assert sched2.get_last_lr() == sched.get_last_lr()
    sched2.step(4)
    assert sched2.get_last_lr() == pytest.approx([0.05, 0.025])


def test_a_custom_scheduler_subclassing_the_old_base_class_runs_under_the_alias():
    # written for PyTorch < 2.0: `class Warmup(torch.optim.lr_scheduler._LRScheduler)` with get_lr()
    def define(base):
        class InverseSqrtWarmup(base):
            def __init__(self, optimizer, warmup, last_epoch=-1):
                self.warmup = warmup
                super().__init__(optimizer, last_epoch)

            def get_lr(self):
                t = max(self.last_epoch, 1)
                return [b * min(t / self.warmup, (self.warmup / t) ** 0.5) for b in self.base_lrs]
        return InverseSqrtWarmup

    from minitorch_ln.interop.torch_alias import torch_alias  # noqa: PLC0415

    with torch_alias():
        import torch as T  # noqa: PLC0415 - the alias's torch

        assert T.optim.lr_scheduler._LRScheduler is lr_scheduler._LRScheduler
        opt_o = make_optimizer(mt)
        ours = record(opt_o, define(T.optim.lr_scheduler._LRScheduler)(opt_o, warmup=5), 20)
    opt_t = make_optimizer(torch)
    assert_same_sequence(ours, record(opt_t, define(TL._LRScheduler)(opt_t, warmup=5), 20))

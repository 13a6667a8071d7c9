"""Autocast casts as PyTorch's: every op on the CPU lists against ``torch.autocast("cpu",
dtype=torch.float16)`` (result dtypes, values and gradients), the CUDA lists by their policies (no GPU
here: CPU tensors stand in for GPU ones), and the region rules (float64, nesting, threads, backward)."""

import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitorch_ln as mt
import minitorch_ln.nn.functional as F
from helpers import compare_with_torch, torch
from minitorch_ln import amp
from minitorch_ln.autograd import autocast_state
from minitorch_ln.ops import autocast_policies as policies

TF = torch.nn.functional
F16 = dict(rtol=2e-2, atol=2e-2)  # both sides compute in float16: they differ by its rounding


def _normal(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed + len(shape)).standard_normal(shape).astype(dtype)


def _in_region(fn, lib):
    def run(*args):
        if lib is torch:
            with torch.autocast("cpu", dtype=torch.float16):
                return fn(*args)
        with amp.autocast("cpu", dtype=mt.float16):
            return fn(*args)

    return run


def _targets(n=4, c=3):
    return np.array([0, 2, 1, 0][:n])


# (row id, our op, PyTorch's op (same body: the tensors' methods and F), the input arrays)
CPU_ROWS = [
    ("matmul", lambda a, b: a @ b, None, [_normal(3, 4), _normal(4, 5)]),
    ("mm", lambda a, b: a.mm(b), None, [_normal(3, 4), _normal(4, 2)]),
    ("bmm", lambda a, b: a.bmm(b), None, [_normal(2, 3, 4), _normal(2, 4, 2)]),
    ("addmm", lambda c, a, b: mt.addmm(c, a, b), lambda c, a, b: torch.addmm(c, a, b),
     [_normal(3, 2), _normal(3, 4), _normal(4, 2)]),
    ("baddbmm", lambda c, a, b: mt.baddbmm(c, a, b), lambda c, a, b: torch.baddbmm(c, a, b),
     [_normal(2, 3, 2), _normal(2, 3, 4), _normal(2, 4, 2)]),
    ("linear", lambda x, w, b: F.linear(x, w, b), lambda x, w, b: TF.linear(x, w, b),
     [_normal(2, 3, 4), _normal(5, 4), _normal(5)]),
    ("einsum", lambda a, b: mt.einsum("ij,jk->ik", a, b), lambda a, b: torch.einsum("ij,jk->ik", a, b),
     [_normal(3, 4), _normal(4, 2)]),
    ("conv1d", lambda x, w, b: F.conv1d(x, w, b, padding=1), lambda x, w, b: TF.conv1d(x, w, b, padding=1),
     [_normal(2, 3, 7), _normal(4, 3, 3), _normal(4)]),
    ("conv2d", lambda x, w, b: F.conv2d(x, w, b, stride=2), lambda x, w, b: TF.conv2d(x, w, b, stride=2),
     [_normal(2, 3, 6, 6), _normal(4, 3, 3, 3), _normal(4)]),
    ("conv_transpose2d", lambda x, w: F.conv_transpose2d(x, w), lambda x, w: TF.conv_transpose2d(x, w),
     [_normal(1, 3, 4, 4), _normal(3, 2, 3, 3)]),
    ("prelu", lambda x, w: F.prelu(x, w), lambda x, w: TF.prelu(x, w), [_normal(2, 3, 4), _normal(3)]),
    ("sdpa", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
     lambda q, k, v: TF.scaled_dot_product_attention(q, k, v, is_causal=True),
     [_normal(2, 5, 4), _normal(2, 5, 4), _normal(2, 5, 4)]),
    # not on the CPU lists: they run in their inputs' dtypes
    ("mv_unlisted", lambda a, v: a.mv(v), None, [_normal(3, 4), _normal(4)]),
    ("dot_unlisted", lambda a, b: mt.dot(a, b), lambda a, b: torch.dot(a, b), [_normal(4), _normal(4, seed=1)]),
    ("exp_unlisted", lambda x: x.exp(), None, [_normal(3, 4, dtype=np.float16)]),
    ("softmax_unlisted", lambda x: x.softmax(-1), None, [_normal(3, 4, dtype=np.float16)]),
    ("layer_norm_unlisted", lambda x: F.layer_norm(x, (4,)), lambda x: TF.layer_norm(x, (4,)),
     [_normal(3, 4, dtype=np.float16)]),
    # float32 on the CPU: the losses, prod, cdist
    ("cross_entropy", lambda x: F.cross_entropy(x, mt.tensor(_targets())),
     lambda x: TF.cross_entropy(x, torch.tensor(_targets())), [_normal(4, 3, dtype=np.float16)]),
    ("nll_loss", lambda x: F.nll_loss(x, mt.tensor(_targets())), lambda x: TF.nll_loss(x, torch.tensor(_targets())),
     [_normal(4, 3, dtype=np.float16)]),
    ("mse_loss", lambda a, b: F.mse_loss(a, b), lambda a, b: TF.mse_loss(a, b),
     [_normal(4, 3, dtype=np.float16), _normal(4, 3, dtype=np.float16, seed=1)]),
    ("l1_loss", lambda a, b: F.l1_loss(a, b), lambda a, b: TF.l1_loss(a, b),
     [_normal(4, 3, dtype=np.float16), _normal(4, 3, dtype=np.float16, seed=1)]),
    ("smooth_l1_loss", lambda a, b: F.smooth_l1_loss(a, b), lambda a, b: TF.smooth_l1_loss(a, b),
     [_normal(4, 3, dtype=np.float16), _normal(4, 3, dtype=np.float16, seed=1)]),
    ("huber_loss", lambda a, b: F.huber_loss(a, b), lambda a, b: TF.huber_loss(a, b),
     [_normal(4, 3, dtype=np.float16), _normal(4, 3, dtype=np.float16, seed=1)]),
    ("kl_div", lambda a, b: F.kl_div(a, b, reduction="batchmean"), lambda a, b: TF.kl_div(a, b, reduction="batchmean"),
     [_normal(4, 3, dtype=np.float16), np.abs(_normal(4, 3, dtype=np.float16, seed=1))]),
    ("bce_with_logits", lambda a, b: F.binary_cross_entropy_with_logits(a, b),
     lambda a, b: TF.binary_cross_entropy_with_logits(a, b),
     [_normal(4, 3, dtype=np.float16), np.full((4, 3), 0.25, np.float16)]),
    ("binary_cross_entropy", lambda a: F.binary_cross_entropy(a.sigmoid(), a.sigmoid().detach()),
     lambda a: TF.binary_cross_entropy(a.sigmoid(), a.sigmoid().detach()), [_normal(4, 3, dtype=np.float16)]),
    ("cdist", lambda a, b: mt.cdist(a, b), lambda a, b: torch.cdist(a, b),
     [_normal(4, 3, dtype=np.float16), _normal(5, 3, dtype=np.float16, seed=1)]),
    ("prod", lambda x: x.prod(-1), None, [np.random.default_rng(3).uniform(0.5, 1.5, (3, 4)).astype(np.float16)]),
    # promoted on the CPU: cat and stack of float16 with float32
    ("cat", lambda a, b: mt.cat([a, b]), lambda a, b: torch.cat([a, b]),
     [_normal(2, 3, dtype=np.float16), _normal(2, 3)]),
    ("stack", lambda a, b: mt.stack([a, b]), lambda a, b: torch.stack([a, b]),
     [_normal(2, 3), _normal(2, 3, dtype=np.float16)]),
]


@pytest.mark.parametrize("name,ours,theirs,arrays", CPU_ROWS, ids=[r[0] for r in CPU_ROWS])
def test_cpu_autocast_matches_pytorch(name, ours, theirs, arrays):
    # result dtypes exactly, values and the gradients of every input (float32 ones come back float32)
    compare_with_torch(_in_region(ours, mt), _in_region(theirs or ours, torch), arrays, **F16)


def test_cpu_autocast_mlp_end_to_end_matches_pytorch():
    # linear (float16) -> gelu (float16) -> layer_norm (its input's dtype on the CPU) -> linear ->
    # cross-entropy (float32); float32 weights get float32 gradients through the casts.
    def body(lib, Fn):
        def f(x, w1, b1, w2, g, b):
            h = Fn.gelu(Fn.linear(x, w1, b1))
            h = Fn.layer_norm(h, (6,), g, b)
            logits = Fn.linear(h, w2)
            return logits, Fn.cross_entropy(logits, lib.tensor([0, 1, 2, 1]))
        return f

    arrays = [_normal(4, 5), _normal(6, 5, seed=1), _normal(6, seed=2), _normal(3, 6, seed=3),
              1 + 0.1 * _normal(6, seed=4), 0.1 * _normal(6, seed=5)]
    compare_with_torch(_in_region(body(mt, F), mt), _in_region(body(torch, TF), torch), arrays, **F16)


# ------------------------------------------------------------------------------------------ CUDA lists


@pytest.fixture
def cuda_region(monkeypatch):
    """A CUDA autocast region over CPU tensors: no GPU here, so CPU arrays stand in for GPU ones
    (the cast rule only asks an array's device type)."""
    monkeypatch.setattr(autocast_state, "region_device_type", lambda a: "cuda")
    token = autocast_state.enter_region("cuda", True, np.dtype(np.float16))
    yield
    autocast_state.exit_region(token)


def _args_for(name):
    """Call arguments for each op on the CUDA lists (float32 unless the policy wants a float16 one)."""
    a, b, v = mt.randn(3, 4), mt.randn(4, 3), mt.randn(4)
    pos = mt.rand(3, 4) * 0.5 + 0.25
    t = mt.tensor([0, 2, 1])
    rows = {
        "matmul": lambda: a @ b, "mm": lambda: a.mm(b), "bmm": lambda: a[None].bmm(b[None]),
        "addmm": lambda: mt.addmm(mt.randn(3, 3), a, b), "baddbmm": lambda: mt.baddbmm(mt.randn(1, 3, 3), a[None], b[None]),
        "mv": lambda: a.mv(v), "linear": lambda: F.linear(a, b.T), "einsum": lambda: mt.einsum("ij,jk->ik", a, b),
        "conv1d": lambda: F.conv1d(a[None], mt.randn(2, 3, 2)), "conv2d": lambda: F.conv2d(a[None, None], mt.randn(1, 1, 2, 2)),
        "conv_transpose1d": lambda: F.conv_transpose1d(a[None], mt.randn(3, 2, 2)),
        "conv_transpose2d": lambda: F.conv_transpose2d(a[None, None], mt.randn(1, 1, 2, 2)),
        "conv3d": lambda: F.conv3d(a[None, None, None], mt.randn(1, 1, 1, 2, 2)),
        "conv_transpose3d": lambda: F.conv_transpose3d(a[None, None, None], mt.randn(1, 1, 1, 2, 2)),
        "prelu": lambda: F.prelu(a, mt.ones(1)),
        "scaled_dot_product_attention": lambda: F.scaled_dot_product_attention(a[None], a[None], a[None]),
        "rtruediv": lambda: 1 / a.half(), "pow": lambda: a.half() ** 2, "softplus": lambda: F.softplus(a.half()),
        "layer_norm": lambda: F.layer_norm(a.half(), (4,)), "group_norm": lambda: F.group_norm(a.half()[None], 3),
        "local_response_norm": lambda: F.local_response_norm(a.half()[None], 2),
        "interpolate": lambda: F.interpolate(a.half()[None], scale_factor=2), "logsumexp": lambda: a.half().logsumexp(-1),
        "cosine_similarity": lambda: F.cosine_similarity(a.half(), a.half()), "normalize": lambda: F.normalize(a.half()),
        "cdist": lambda: mt.cdist(a.half(), a.half()), "poisson_nll_loss": lambda: F.poisson_nll_loss(a.half(), pos.half()),
        "kl_div": lambda: F.kl_div(a.half(), pos.half(), reduction="batchmean"),
        "l1_loss": lambda: F.l1_loss(a.half(), pos.half()), "smooth_l1_loss": lambda: F.smooth_l1_loss(a.half(), pos.half()),
        "huber_loss": lambda: F.huber_loss(a.half(), pos.half()),
        "cosine_embedding_loss": lambda: F.cosine_embedding_loss(a.half(), a.half(), mt.ones(3)),
        "margin_ranking_loss": lambda: F.margin_ranking_loss(v.half(), v.half(), mt.ones(4)),
        "soft_margin_loss": lambda: F.soft_margin_loss(a.half(), mt.ones(3, 4)),
        "triplet_margin_loss": lambda: F.triplet_margin_loss(a.half(), a.half(), pos.half()),
        "multi_margin_loss": lambda: F.multi_margin_loss(a.half(), t),
        "pdist": lambda: F.pdist(a.half()),
        "multilabel_margin_loss": lambda: F.multilabel_margin_loss(a.half(), mt.tensor([[1, -1, 0, 0]] * 3)),
        "hinge_embedding_loss": lambda: F.hinge_embedding_loss(a.half(), mt.ones(3, 4)),
        "binary_cross_entropy_with_logits": lambda: F.binary_cross_entropy_with_logits(a.half(), pos.half()),
        "nll_loss": lambda: F.nll_loss(a.half(), t), "mse_loss": lambda: F.mse_loss(a.half(), pos.half()),
        "cross_entropy": lambda: F.cross_entropy(a.half(), t),
        "sum": lambda: a.half().sum(), "prod": lambda: pos.half().prod(), "cumsum": lambda: a.half().cumsum(0),
        "cumprod": lambda: pos.half().cumprod(0), "softmax": lambda: a.half().softmax(-1),
        "log_softmax": lambda: a.half().log_softmax(-1), "softmin": lambda: F.softmin(a.half(), -1),
        "norm": lambda: a.half().norm(), "linalg_vector_norm": lambda: mt.linalg.vector_norm(a.half()),
        "linalg_matrix_norm": lambda: mt.linalg.matrix_norm(a.half()),
        "atan2": lambda: mt.atan2(a.half(), a), "cross": lambda: mt.cross(a[:, :3].half(), a[:, :3], dim=1),
        "dot": lambda: mt.dot(v.half(), v), "vdot": lambda: mt.vdot(v, v.half()),
        "tensordot": lambda: mt.tensordot(a.half(), b, dims=1),
        "scatter_add": lambda: a.half().scatter_add(0, mt.zeros(1, 4, dtype=mt.int64), a[:1]),
        "index_put": lambda: mt.index_put(a.half(), (mt.tensor([0]),), a[0]),
        "binary_cross_entropy": lambda: F.binary_cross_entropy(pos.half(), pos.half()),
        "nan_to_num": lambda: a.half().nan_to_num(),
        "grid_sampler": lambda: F.grid_sample(a.half()[None, None], mt.zeros(1, 2, 2, 2), align_corners=False),
    }
    unary = {"acos": pos, "asin": pos, "cosh": a, "sinh": a, "tan": pos, "erfinv": pos * 0.5, "exp": a, "log": pos,
             "rsqrt": pos, "expm1": a, "log10": pos, "log2": pos, "log1p": pos, "reciprocal": pos}
    if name in unary:
        return lambda: getattr(unary[name].half(), name)()
    return rows.get(name)


CUDA_NAMES = sorted(n for n, (p, _, _) in policies.POLICIES.items() if "cuda" in p)


@pytest.mark.parametrize("name", CUDA_NAMES)
def test_cuda_autocast_lists_by_policy(name, cuda_region):
    call = _args_for(name)
    assert call is not None, f"no test call for {name}: every op on the CUDA lists is checked"
    policy = policies.policy_of(name, "cuda")
    if policy == "banned":
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            call()
        return
    out = call()
    expected = {"lower": np.float16, "fp32": np.float32, "fp32_opt_dtype": np.float32, "promote": np.float32,
                "as_is": np.float16}[policy]  # the as_is call has a float16 input
    assert out.dtype == expected, f"{name} ({policy}): {out.dtype}"


def test_cuda_fp32_ops_compute_on_the_float32_cast(cuda_region):
    # an fp32 op casts first and computes after: the same as the op on input.float(), bit for bit
    x = mt.tensor(_normal(3, 5, dtype=np.float16))
    for f in (lambda t: t.exp(), lambda t: t.softmax(-1), lambda t: F.layer_norm(t, (5,)), lambda t: t.sum(0)):
        got = f(x).array
        with autocast_state.autocast_excluded():
            want = f(x.float()).array
        np.testing.assert_array_equal(got, want)


def test_cuda_opt_dtype_ops_respect_an_explicit_dtype(cuda_region):
    x = mt.randn(3, 4).half()
    assert F.softmax(x, -1, dtype=mt.float16).dtype == np.float16  # dtype= wins, as PyTorch
    assert x.sum(dtype=mt.float16).dtype == np.float16
    assert x.cumsum(0, dtype=mt.float64).dtype == np.float64
    assert x.sum().dtype == np.float32


def test_cuda_autocast_does_not_act_inside_a_wrapped_op(cuda_region):
    # attention runs in float16 as a whole; its softmax (fp32 on the list) does not cast again
    q = mt.randn(2, 5, 4, requires_grad=True)
    out = F.scaled_dot_product_attention(q, q, q)
    assert out.dtype == np.float16
    out.float().sum().backward()
    assert q.grad.dtype == np.float32


# Op-table rows named otherwise than the torch op on the lists, and composites of listed ops in
# PyTorch too (pairwise_distance calls norm, gaussian_nll_loss calls log: float32 there as here).
ROW_ALIASES = {"attention": "scaled_dot_product_attention", "matvec": "matmul", "vector_norm": "linalg_vector_norm",
               "matrix_norm": "linalg_matrix_norm", "pairwise_distance": "norm", "gaussian_nll_loss": "log",
               "bce_with_logits": "binary_cross_entropy_with_logits"}


def _listed(row: str, device_type: str) -> bool:
    names = [k for k in policies.POLICIES if row.startswith(k)]
    names += [v for k, v in ROW_ALIASES.items() if row.startswith(k)]
    return any(policies.policy_of(n, device_type) not in (None, "as_is") for n in names)


@pytest.mark.parametrize("device_type", ["cpu", "cuda"])
def test_unlisted_ops_run_in_their_input_dtypes(device_type, monkeypatch):
    # every row of the op table whose op is not on the device's lists gives the same dtypes inside a
    # region as outside: nothing an op is composed of casts where PyTorch's one kernel would not
    import gpu_op_table as table

    if device_type == "cuda":
        monkeypatch.setattr(autocast_state, "region_device_type", lambda a: "cuda")
    leaks = []
    for op in table.OPS + table.FORWARD_ONLY:
        if _listed(op.name, device_type):
            continue
        for dt in (np.float32, np.float16):
            arrays = op.make(np.random.default_rng(0), dt)
            try:
                args = [mt.tensor(a) for a in arrays]
                outside = op.ours(*args)
            except Exception:  # noqa: BLE001 - a row that does not take float16 inputs
                continue
            token = autocast_state.enter_region(device_type, True, np.dtype(np.float16))
            try:
                inside = op.ours(*args)
            finally:
                autocast_state.exit_region(token)
            as_tuple = lambda o: o if isinstance(o, (tuple, list)) else (o,)  # noqa: E731
            if [t.dtype for t in as_tuple(inside)] != [t.dtype for t in as_tuple(outside)]:
                leaks.append((op.name, np.dtype(dt).name))
    assert not leaks, f"ops that cast under {device_type} autocast though not on its lists: {leaks}"


# ------------------------------------------------------------------------------------------ region rules


def test_float64_and_integers_are_never_cast():
    x64, w64 = mt.randn(3, 4, dtype=mt.float64), mt.randn(5, 4, dtype=mt.float64)
    ids = mt.tensor([0, 1])
    with amp.autocast("cpu", dtype=mt.float16):
        assert F.linear(x64, w64).dtype == np.float64
        assert F.embedding(ids, w64).dtype == np.float64
        assert (ids @ mt.tensor([[1, 2], [3, 4]])).dtype == np.int64


def test_backward_inside_a_region_runs_in_the_forward_dtypes():
    # backward ops run in the dtypes their forward ops ran in, also when backward() is called
    # inside the region (the engine turns autocast off for the pass), as PyTorch
    x = mt.tensor(_normal(3, 4), requires_grad=True)
    w = mt.tensor(_normal(5, 4, seed=1), requires_grad=True)
    xt, wt = (torch.tensor(a.array, requires_grad=True) for a in (x, w))
    with amp.autocast("cpu", dtype=mt.float16):
        F.cross_entropy(F.linear(x, w), mt.tensor([0, 1, 4])).backward()
    with torch.autocast("cpu", dtype=torch.float16):
        TF.cross_entropy(TF.linear(xt, wt), torch.tensor([0, 1, 4])).backward()
    for ours, theirs in ((x, xt), (w, wt)):
        assert ours.grad.dtype == np.float32
        np.testing.assert_allclose(ours.grad.array, theirs.grad.numpy(), **F16)


def test_nesting_decorator_and_threads():
    x = mt.randn(2, 2)

    @amp.autocast("cpu", dtype=mt.float16)
    def in_region():
        return (x @ x).dtype

    seen = []
    with amp.autocast("cpu", dtype=mt.float16):
        assert (x @ x).dtype == np.float16
        with amp.autocast("cpu", enabled=False):
            assert (x @ x).dtype == np.float32
        thread = threading.Thread(target=lambda: seen.append((x @ x).dtype))  # regions are per thread
        thread.start()
        thread.join()
        assert (x @ x).dtype == np.float16
    assert seen == [np.float32] and (x @ x).dtype == np.float32 and in_region() == np.float16
    with amp.autocast("cuda", enabled=False):  # a CUDA region does not touch CPU tensors
        assert (x @ x).dtype == np.float32


@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 6), k=st.integers(1, 6), n=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_lower_precision_matmul_is_the_float16_product(m, k, n, seed):
    # property: under autocast, a @ b is the float16 matmul of the float16-rounded operands
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    with amp.autocast("cpu", dtype=mt.float16):
        got = (mt.tensor(a) @ mt.tensor(b)).array
    want = (mt.tensor(a.astype(np.float16)) @ mt.tensor(b.astype(np.float16))).array
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, want)


def test_grad_scaler_with_cpu_autocast_trains_like_pytorch():
    # a float16 autocast regression loop with GradScaler and SGD: the losses follow PyTorch's
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((32, 4)).astype(np.float32), rng.standard_normal((32, 1)).astype(np.float32)
    W0 = rng.standard_normal((1, 4)).astype(np.float32)

    def run(lib, Fn, scaler_cls, region):
        w = (torch.nn.Parameter(torch.tensor(W0)) if lib is torch else mt.nn.Parameter(mt.tensor(W0)))
        opt = (torch.optim.SGD if lib is torch else mt.optim.SGD)([w], lr=0.1)
        scaler = scaler_cls("cpu", init_scale=2.0**10)
        losses = []
        for _ in range(5):
            with region():
                loss = Fn.mse_loss(Fn.linear(lib.tensor(X), w), lib.tensor(Y))
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            opt.zero_grad()
            losses.append(float(loss))
        return losses

    ours = run(mt, F, amp.GradScaler, lambda: amp.autocast("cpu", dtype=mt.float16))
    theirs = run(torch, TF, torch.amp.GradScaler, lambda: torch.autocast("cpu", dtype=torch.float16))
    np.testing.assert_allclose(ours, theirs, rtol=1e-2)
    assert ours[-1] < ours[0]


def test_bad_arguments():
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'mps'"):
        amp.autocast("mps")
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        amp.autocast(0)
    with pytest.warns(UserWarning, match="target dtype is not supported"):
        with amp.autocast("cpu", dtype=mt.int32):
            assert not amp.is_autocast_enabled("cpu")


def test_review_findings_nesting_dtype_and_more_cpu_lists():
    # a region without dtype= takes the current autocast dtype (PyTorch's get_autocast_dtype), so a
    # nested autocast("cpu") inside a float16 region stays float16 (it once switched autocast off)
    x, w = mt.randn(2, 3), mt.randn(4, 3)
    with mt.autocast("cpu", dtype=mt.float16):
        with mt.autocast("cpu"):
            assert F.linear(x, w).dtype == np.float16
    with torch.autocast("cpu", dtype=torch.float16):
        with torch.autocast("cpu"):
            assert TF.linear(torch.randn(2, 3), torch.randn(4, 3)).dtype == torch.float16
    mt.set_autocast_dtype("cpu", mt.float16)
    try:
        with amp.autocast("cpu"):
            assert amp.is_autocast_enabled("cpu") and (x @ x.T).dtype == np.float16
    finally:
        mt.set_autocast_dtype("cpu", amp.bfloat16)
    # more of the CPU lists, against PyTorch: reflect/replicate padding and 4-D LRN in float32,
    # constant padding and 3-D LRN as called, tensordot through its mm in float16, inverse in float32
    h4, h3 = _normal(1, 2, 3, 4, dtype=np.float16), _normal(2, 3, 5, dtype=np.float16)
    a = _normal(3, 3) + 3 * np.eye(3, dtype=np.float32)
    rows = [
        (lambda t: F.pad(t, (1, 1, 1, 1), mode="reflect"), lambda t: TF.pad(t, (1, 1, 1, 1), mode="reflect"), h4),
        (lambda t: F.pad(t, (1, 1, 1, 1), mode="replicate"),
         lambda t: TF.pad(t, (1, 1, 1, 1), mode="replicate"), h4),
        (lambda t: F.pad(t, (1, 1)), lambda t: TF.pad(t, (1, 1)), h4),
        (lambda t: F.local_response_norm(t, 2), lambda t: TF.local_response_norm(t, 2), h4),
        (lambda t: F.local_response_norm(t, 2), lambda t: TF.local_response_norm(t, 2), h3),
        (lambda t: mt.tensordot(t, t, dims=1), lambda t: torch.tensordot(t, t, dims=1), a),
        (lambda t: mt.inverse(t.half()), lambda t: torch.inverse(t.half()), a),
    ]
    for ours, theirs, arr in rows:
        compare_with_torch(_in_region(ours, mt), _in_region(theirs, torch), [arr], **F16)


def test_grad_scaler_step_without_gradients_says_so_as_pytorch():
    w = mt.nn.Parameter(mt.ones(2))
    opt = mt.optim.SGD([w], lr=0.1)
    scaler = amp.GradScaler("cpu")
    scaler.scale((w * 2).sum())  # backward() forgotten
    with pytest.raises(AssertionError, match="No inf checks were recorded for this optimizer"):
        scaler.step(opt)
    wt = torch.nn.Parameter(torch.ones(2))
    opt_t = torch.optim.SGD([wt], lr=0.1)
    scaler_t = torch.amp.GradScaler("cpu")
    scaler_t.scale((wt * 2).sum())
    with pytest.raises(AssertionError, match="No inf checks were recorded for this optimizer"):
        scaler_t.step(opt_t)


def test_every_listed_op_wears_its_decorator_where_it_is_defined():
    # ops/autocast_policies.py lists, per torch op, the functions that wear @autocast(name) and the Tensor
    # methods that reach them; the lists and the code stay in step
    import importlib

    for name, (_, functions, methods) in policies.POLICIES.items():
        for module_name, attr in functions:
            fn = getattr(importlib.import_module(f"minitorch_ln.ops.{module_name}"), attr)
            assert getattr(fn, "__autocast__", (None,))[0] == name, (name, module_name, attr)
        for method in methods:
            m = getattr(mt.Tensor, method)
            wrapped = getattr(m, "__autocast__", (None,))[0] == name
            forwards = any(getattr(importlib.import_module(f"minitorch_ln.ops.{mod}"), a) is m for mod, a in functions)
            assert wrapped or forwards or m.__module__ in ("minitorch_ln.ops.tensor_methods", "minitorch_ln.ops.methods"), \
                (name, method)

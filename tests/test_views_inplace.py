"""Views share memory and the version counter with their base; an in-place op on a view rewrites the
base's history (CopySlices), as PyTorch does (minitorch_ln/autograd/views.py, docs/autograd.md).

Every test checks PyTorch 2.13 and the math: a value worked out by hand (in a comment) or float64
finite differences (gradcheck) of the whole function, view chain and in-place op included.
"""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import minitorch_ln as mt
from helpers import assert_close, t64, torch
from minitorch_ln.autograd import gradcheck
from minitorch_ln.errors import ShapeError

# ==================================================================================================
# Strategies: random chains of view ops and an in-place op on the last view
# ==================================================================================================


@st.composite
def view_steps(draw, shape, max_steps=4):
    """A list of view ops, each valid for the shape the ones before it leave; returns (steps, shape)."""
    cur, steps = list(shape), []
    for _ in range(draw(st.integers(1, max_steps))):
        kinds = ["slice", "transpose", "unsqueeze", "reshape", "split", "flatten"]
        if len(cur) >= 2:
            kinds += ["int", "mT", "permute"]
        if 1 in cur:
            kinds.append("squeeze")
        kind = draw(st.sampled_from(kinds))
        nd = len(cur)
        if kind == "slice":
            d = draw(st.integers(0, nd - 1))
            start = draw(st.integers(0, cur[d] - 1))
            stop = draw(st.integers(start + 1, cur[d]))
            step = draw(st.integers(1, 2))
            steps.append(("slice", d, start, stop, step))
            cur[d] = len(range(start, stop, step))
        elif kind == "int":
            d = draw(st.integers(0, nd - 1))
            steps.append(("int", d, draw(st.integers(-cur[d], cur[d] - 1))))
            cur.pop(d)
        elif kind == "transpose":
            d0, d1 = draw(st.integers(0, nd - 1)), draw(st.integers(0, nd - 1))
            steps.append(("transpose", d0, d1))
            cur[d0], cur[d1] = cur[d1], cur[d0]
        elif kind == "permute":
            perm = draw(st.permutations(range(nd)))
            steps.append(("permute", tuple(perm)))
            cur = [cur[p] for p in perm]
        elif kind == "mT":
            steps.append(("T",) if nd == 2 else ("mT",))
            cur[-2], cur[-1] = cur[-1], cur[-2]
        elif kind == "unsqueeze":
            d = draw(st.integers(-nd - 1, nd))
            steps.append(("unsqueeze", d))
            cur.insert(d % (nd + 1), 1)
        elif kind == "squeeze":
            d = draw(st.sampled_from([i for i, s in enumerate(cur) if s == 1]))
            steps.append(("squeeze", d))
            cur.pop(d)
        elif kind == "reshape":  # merge two neighbouring dims or split one in two
            if nd >= 2 and draw(st.booleans()):
                d = draw(st.integers(0, nd - 2))
                cur = cur[:d] + [cur[d] * cur[d + 1]] + cur[d + 2 :]
            else:
                d = draw(st.integers(0, nd - 1))
                a = draw(st.sampled_from([k for k in range(1, cur[d] + 1) if cur[d] % k == 0]))
                cur = cur[:d] + [a, cur[d] // a] + cur[d + 1 :]
            steps.append(("reshape", tuple(cur)))
        elif kind == "flatten":
            s = draw(st.integers(0, nd - 1))
            e = draw(st.integers(s, nd - 1))
            steps.append(("flatten", s, e))
            cur = cur[:s] + [int(np.prod(cur[s : e + 1]))] + cur[e + 1 :]
        elif kind == "split":
            d = draw(st.integers(0, nd - 1))
            size = draw(st.integers(1, cur[d]))
            piece = draw(st.integers(0, -(-cur[d] // size) - 1))
            steps.append(("split", d, size, piece))
            cur[d] = min(size, cur[d] - piece * size)
        if not cur:  # keep at least one dimension
            steps.append(("unsqueeze", 0))
            cur = [1]
    return steps, tuple(cur)


INPLACE_OPS = ["mul", "div", "add_w", "sub_w", "mul_w", "zero", "fill", "copy_w", "clamp", "masked_fill",
               "setitem_w", "setitem_first"]


def apply_step(t, step, torch_side):
    kind = step[0]
    if kind == "slice":
        _, d, start, stop, stride = step
        return t[(slice(None),) * d + (slice(start, stop, stride),)]
    if kind == "int":
        return t[(slice(None),) * step[1] + (step[2],)]
    if kind == "transpose":
        return t.transpose(step[1], step[2])
    if kind == "permute":
        return t.permute(*step[1])
    if kind == "T":
        return t.T
    if kind == "mT":
        return t.mT
    if kind == "unsqueeze":
        return t.unsqueeze(step[1])
    if kind == "squeeze":
        return t.squeeze(step[1])
    if kind == "reshape":
        return t.reshape(*step[1])
    if kind == "flatten":
        return t.flatten(step[1], step[2])
    _, d, size, piece = step  # split: PyTorch refuses in-place ops on split's outputs, narrow is the same view
    if torch_side:
        return t.narrow(d, piece * size, min(size, t.shape[d] - piece * size))
    return t.split(size, d)[piece]


def apply_inplace(v, w, op):
    if op == "mul":
        v.mul_(-1.5)
    elif op == "div":
        v.div_(4.0)
    elif op == "add_w":
        v.add_(w)
    elif op == "sub_w":
        v.sub_(w, alpha=2.0)
    elif op == "mul_w":
        v.mul_(w)  # needs the old v for w's gradient: saved as a copy (PyTorch's original_self)
    elif op == "zero":
        v.zero_()
    elif op == "fill":
        v.fill_(0.25)
    elif op == "copy_w":
        v.copy_(w)
    elif op == "clamp":
        v.clamp_(-0.5, 0.7)
    elif op == "masked_fill":
        v.masked_fill_(v > 0.3, -2.0)
    elif op == "setitem_w":
        v[...] = w * 3
    elif op == "setitem_first":
        v[0] = w[0] * 2


def chain_program(x, w, g, steps, op, torch_side):
    """base = 1.5·x; v = chain(base); other = base.T (a view made before); op_(v); use all three."""
    base = x * 1.5
    other = base.mT if base.ndim >= 2 else base[1:]
    v = base
    for s in steps:
        v = apply_step(v, s, torch_side)
    apply_inplace(v, w, op)
    out = (base * base * g[0]).sum() + (v.sin() * w).sum() + (other * g[1]).sum()
    return out, base, v, other


# ==================================================================================================
# Hypothesis: view chain + in-place op, against PyTorch (values, x.grad, w.grad) and finite differences
# ==================================================================================================


@st.composite
def chain_cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(2, 3), min_size=ndim, max_size=ndim)))
    steps, vshape = draw(view_steps(shape))
    op = draw(st.sampled_from(INPLACE_OPS))
    seed = draw(st.integers(0, 2**16))
    return shape, steps, vshape, op, seed


@given(chain_cases())
def test_view_chain_then_inplace_matches_torch_and_finite_differences(case):
    shape, steps, vshape, op, seed = case
    rng = np.random.default_rng(seed)
    X, W = rng.standard_normal(shape), rng.standard_normal(vshape)
    other_shape = shape[:-2] + (shape[-1], shape[-2]) if len(shape) >= 2 else (shape[0] - 1,)
    G = [rng.standard_normal(shape), rng.standard_normal(other_shape)]

    x, w = t64(X), t64(W)
    out, base, v, other = chain_program(x, w, [mt.tensor(a) for a in G], steps, op, False)
    tx, tw = torch.tensor(X, requires_grad=True), torch.tensor(W, requires_grad=True)
    tout, tbase, tv, tother = chain_program(tx, tw, [torch.tensor(a) for a in G], steps, op, True)
    # a view or a copy, as PyTorch (an identity step, x.transpose(0, 0), returns x itself here)
    assert (v is base or v._base is base) == (tv is tbase or tv._base is tbase), f"view or copy differs from PyTorch for {steps}"
    for ours, theirs, what in ((base, tbase, "base"), (v, tv, "view"), (other, tother, "other view"), (out, tout, "out")):
        assert_close(ours, theirs, np.float64, what)
    out.backward()
    tout.backward()
    assert_close(x.grad, tx.grad, np.float64, f"x.grad after {steps} + {op}_")
    assert_close(w.grad, tw.grad, np.float64, f"w.grad after {steps} + {op}_")

    # the math: finite differences of the same program in float64
    gs = [mt.tensor(a) for a in G]
    assert gradcheck(lambda a, b: chain_program(a, b, gs, steps, op, False), (t64(X), t64(W)))


# ==================================================================================================
# Worked examples (the numbers of docs/autograd.md)
# ==================================================================================================


def test_inplace_on_a_row_rebases_the_base_as_torch():
    # a = x·1; a[0] *= 2; loss = Σ a·g  =>  dx = g with row 0 doubled: [2, 1, 1, 1]·g (g random)
    rng = np.random.default_rng(0)
    g = rng.standard_normal(4)
    x = t64([1.0, 2.0, 3.0, 4.0])
    a = x * 1
    a[0].mul_(2)
    (a * mt.tensor(g)).sum().backward()
    np.testing.assert_allclose(x.grad.array, g * [2, 1, 1, 1], rtol=1e-15)
    tx = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64, requires_grad=True)
    ta = tx * 1
    ta[0].mul_(2)
    (ta * torch.tensor(g)).sum().backward()
    assert_close(x.grad, tx.grad, np.float64, "x.grad")
    assert a.grad_fn.name() == "CopySlicesBackward0"


def test_docs_worked_example():
    # docs/autograd.md: x = [1, 2, 3]; a = 2x = [2, 4, 6]; v = a[1:]; v *= 10 -> a = [2, 40, 60]
    # loss = Σ a·g with g = [1, 2, 3]: CopySlices hands [1, 0, 0] to the old a and g[1:] = [2, 3]
    # to mul_; mul_'s backward gives [20, 30], the view scatters it to [0, 20, 30]: da_old = [1, 20, 30],
    # dx = 2·da_old = [2, 40, 60]. Using the view afterwards too, loss2 = Σ v·h with h = [5, 7],
    # adds h through the view and mul_: 2·10·[0, 5, 7] = [0, 100, 140].
    x = t64([1.0, 2.0, 3.0])
    a = x * 2
    v = a[1:]
    v.mul_(10)
    assert a.tolist() == [2.0, 40.0, 60.0] and v.tolist() == [40.0, 60.0]
    (a * t64([1.0, 2.0, 3.0], False)).sum().backward(retain_graph=True)
    assert x.grad.tolist() == [2.0, 40.0, 60.0]
    x.grad = None
    (v * t64([5.0, 7.0], False)).sum().backward()
    assert x.grad.tolist() == [0.0, 100.0, 140.0]


def test_other_views_see_the_new_history():
    # b = a.T made before a[0].zero_(): b's gradient must not reach row 0 of x (zeroed, constant)
    rng = np.random.default_rng(1)
    X, G = rng.standard_normal((2, 3)), rng.standard_normal((3, 2))
    for lib, x in ((mt, t64(X)), (torch, torch.tensor(X, requires_grad=True))):
        a = x * 1
        b = a.T
        a[0].zero_()
        (b * (mt.tensor(G) if lib is mt else torch.tensor(G))).sum().backward()
        want = G.T.copy()
        want[0] = 0.0  # by hand: row 0 of a was overwritten with zeros
        np.testing.assert_allclose(x.grad.detach().numpy() if lib is torch else x.grad.array, want, rtol=1e-15)


def test_copy_into_a_view_of_a_constant_base_makes_it_require_grad():
    # a = zeros(2, 3) (no grad); a[1].copy_(w): a and its view a[1:] now depend on w (dw = g[1])
    rng = np.random.default_rng(2)
    W, G = rng.standard_normal(3), rng.standard_normal((1, 3))
    for lib in (mt, torch):
        w = t64(W) if lib is mt else torch.tensor(W, requires_grad=True)
        a = lib.zeros(2, 3, dtype=lib.float64)
        v = a[1:]
        a[1].copy_(w)
        assert v.requires_grad and a.requires_grad and not a.is_leaf
        (v * (mt.tensor(G) if lib is mt else torch.tensor(G))).sum().backward()
        np.testing.assert_allclose(np.asarray(w.grad.tolist()), G[0], rtol=1e-15)


def test_setitem_on_a_view_of_a_view():
    # a[0][1:] = 3w: dx = g except the overwritten a[0, 1:], dw = 3·g[0, 1:]
    rng = np.random.default_rng(3)
    X, W, G = rng.standard_normal((2, 3)), rng.standard_normal(2), rng.standard_normal((2, 3))
    x, w = t64(X), t64(W)
    a = x * 1
    a[0][1:] = w * 3
    (a * mt.tensor(G)).sum().backward()
    want = G.copy()
    want[0, 1:] = 0
    np.testing.assert_allclose(x.grad.array, want, rtol=1e-15)
    np.testing.assert_allclose(w.grad.array, 3 * G[0, 1:], rtol=1e-15)


def test_inplace_mul_by_a_tensor_keeps_the_old_values_for_its_gradient():
    # y = 2x; y *= w: dx = 2w·g, dw = 2x·g (the old y, which the write overwrote)
    rng = np.random.default_rng(4)
    X, W, G = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(3)
    x, w = t64(X), t64(W)
    y = x * 2
    y.mul_(w)
    (y * mt.tensor(G)).sum().backward()
    np.testing.assert_allclose(x.grad.array, 2 * W * G, rtol=1e-14)
    np.testing.assert_allclose(w.grad.array, 2 * X * G, rtol=1e-14)
    assert gradcheck(lambda a, b: (a * 2).mul_(b), (t64(X), t64(W)))


# ==================================================================================================
# Views share the version counter; errors
# ==================================================================================================


def test_every_view_op_shares_memory_and_version():
    x = mt.tensor(np.arange(24.0).reshape(2, 3, 4))
    views = [x[0], x[:, 1:], x[..., None], x.view(6, 4), x.reshape(4, 6), x.transpose(0, 2), x.permute(2, 0, 1),
             x.mT, x[0].T, x[:, :1].expand(2, 5, 4), x[0].broadcast_to((2, 3, 4)), x[:, :1].squeeze(1),
             x.unsqueeze(0), x.flatten(), x.split(1, 1)[2], x.chunk(2, 2)[1]]
    for v in views:
        assert v._base is x and v._version is x._version
        assert np.shares_memory(v.array, x.array)
    assert x.transpose(0, 2).reshape(-1)._base is None  # needs a copy (as PyTorch)
    v = x[1][2]
    assert v.shape == (4,) and v._base is x  # a view of a view points to the root base, as PyTorch's _base
    x[1, 2, 3] = -1.0
    assert v.tolist()[3] == -1.0 and x._version[0] == 1


def test_expand_shares_the_version_counter_so_a_saved_expand_is_checked():
    # before: expand had a counter of its own, and changing the base gave a wrong gradient silently
    x = t64([1.0, 2.0])
    a = x * 1
    e = a.expand(3, 2)
    y = e * e  # saves e
    a.mul_(2.0)
    with pytest.raises(RuntimeError, match=r"needed by MulBackward0 .* saved at version 0 and is now at version 1"):
        y.sum().backward()
    ta = torch.tensor([1.0, 2.0], requires_grad=True) * 1
    ty = ta.expand(3, 2) * ta.expand(3, 2)
    ta.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        ty.sum().backward()


def test_writing_into_an_expanded_tensor_raises():
    x = mt.zeros(3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        x.expand(2, 3).mul_(2.0)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        torch.zeros(3).expand(2, 3).mul_(2.0)


@pytest.mark.parametrize("op", [lambda v: v.mul_(2.0), lambda v: v.add_(1.0), lambda v: v.zero_(),
                                lambda v: v.fill_(1.0), lambda v: v.copy_(mt.ones(2)), lambda v: v.clamp_(0, 1),
                                lambda v: v.normal_(), lambda v: v.uniform_(), lambda v: v.__setitem__(0, 5.0)])
def test_inplace_on_a_view_of_a_leaf_that_requires_grad_raises(op):
    # before: allowed silently (x[0].mul_(2) on a parameter changed it without a trace)
    x = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="view of a leaf tensor that requires grad"):
        op(x[1:])
    with mt.no_grad():
        op(x[1:])  # allowed under no_grad, as optimizers and init do; the base changes
    assert x.tolist()[0] == 1.0 and x._version[0] == 1
    tx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="view of a leaf Variable that requires grad"):
        tx[1:].mul_(2.0)


def test_normal_and_uniform_under_no_grad_write_through_a_view():
    w = mt.zeros(2, 3, requires_grad=True)
    with mt.no_grad():
        w[0].normal_(mean=5.0, std=0.1)
        w.T[1:].uniform_(-1.0, -0.5)  # columns 1, 2
    arr = w.array
    assert np.all(np.abs(arr[0, 0] - 5.0) < 1.0) and np.all((arr[:, 1:] >= -1.0) & (arr[:, 1:] < -0.5))
    assert np.all(arr[1, 0] == 0.0)


def test_view_made_under_no_grad_cannot_be_changed_in_place_with_grad():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    with mt.no_grad():
        v = a[:1]
    with pytest.raises(RuntimeError, match="view was created in no_grad mode"):
        v.mul_(2.0)


def test_retain_grad_reports_the_gradient_of_the_new_version():
    # y.retain_grad(); y *= 3; loss = Σ y·g: y.grad is g (of the new y), not 3g (the old one's)
    rng = np.random.default_rng(5)
    G = rng.standard_normal(3)
    x = t64([1.0, 2.0, 3.0])
    y = x * 2
    y.retain_grad()
    y.mul_(3.0)
    (y * mt.tensor(G)).sum().backward()
    np.testing.assert_allclose(y.grad.array, G, rtol=1e-15)
    np.testing.assert_allclose(x.grad.array, 6 * G, rtol=1e-15)
    ty = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True) * 2
    ty.retain_grad()
    ty.mul_(3.0)
    (ty * torch.tensor(G)).sum().backward()
    assert_close(y.grad, ty.grad, np.float64, "retained grad")


def test_retain_grad_on_a_base_follows_an_inplace_op_on_its_view():
    G = np.random.default_rng(6).standard_normal(3)
    x = t64([1.0, 2.0, 3.0])
    a = x * 1
    a.retain_grad()
    a[1:].mul_(2.0)
    (a * mt.tensor(G)).sum().backward()
    np.testing.assert_allclose(a.grad.array, G, rtol=1e-15)  # the gradient of the new a: g itself
    np.testing.assert_allclose(x.grad.array, G * [1, 2, 2], rtol=1e-15)


def test_view_of_noncontiguous_and_shape_errors_are_shape_errors():
    x = mt.zeros(2, 3)
    cases = [(lambda: x.view(4), r"view: shape \(4,\) is invalid for an input of shape \(2, 3\)"),
             (lambda: x.T.view(6), r"not compatible with the input's shape \(3, 2\)"),
             (lambda: x.reshape(5, -1), r"shape \(5, -1\) is invalid for an input of shape \(2, 3\)"),
             (lambda: x.permute(0, 0), r"not a permutation of the 2 dimensions of shape \(2, 3\)"),
             (lambda: x.expand(4, 3, 1), r"cannot be broadcast to \(4, 3, 1\)"),
             (lambda: x.expand(3), r"at least the number of dimensions of the tensor of shape \(2, 3\)"),
             (lambda: x.split([2, 2], 0), r"sum to 2, the size of dimension 0 of shape \(2, 3\)"),
             (lambda: x.__setitem__(0, mt.ones(2)), r"value of shape \(2,\) cannot be broadcast to the indexed shape \(3,\)")]
    for fn, msg in cases:
        with pytest.raises(ShapeError, match=msg):
            fn()
        with pytest.raises(RuntimeError):  # catchable as PyTorch code does
            fn()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        torch.zeros(2, 3).T.view(6)
    assert x.T.contiguous().view(6).shape == (6,) and not x.T.is_contiguous()


# The convolution and normalization families (issue 16): an in-place change of a view of the input
# before the op gives PyTorch's gradient; one of the base after the op gives either the error naming
# the versions or, where the op kept nothing the change touched, the gradient of the unchanged values.
_TF = torch.nn.functional
_FAMILY = {
    "conv2d": (lambda F, lib, x: F.conv2d(x, lib.ones(2, 4, 3, 3, dtype=x.dtype))),
    "max_pool2d": (lambda F, lib, x: F.max_pool2d(x, 2)),
    "batch_norm": (lambda F, lib, x: F.batch_norm(x, None, None, training=True)),
    "group_norm": (lambda F, lib, x: F.group_norm(x, 2)),
    "instance_norm": (lambda F, lib, x: F.instance_norm(x)),
    "local_response_norm": (lambda F, lib, x: F.local_response_norm(x, 3)),
    "interpolate": (lambda F, lib, x: F.interpolate(x, scale_factor=2, mode="bilinear")),
    "unfold": (lambda F, lib, x: F.unfold(x, 2)),
    "pixel_unshuffle": (lambda F, lib, x: F.pixel_unshuffle(x, 2)),
}


@pytest.mark.parametrize("name", sorted(_FAMILY))
def test_new_families_with_views_and_in_place_changes(name):
    import minitorch_ln.nn.functional as MF

    op = _FAMILY[name]
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 4, 6, 6))

    def before(lib, F):  # in-place on a view of the op's input, then the op
        leaf = (torch.tensor(a, requires_grad=True) if lib is torch else t64(a))
        base = leaf * 1
        base[:, :, :3].mul_(3)
        y = op(F, lib, base)
        g = np.random.default_rng(1).standard_normal(tuple(y.shape))
        y.backward(torch.tensor(g) if lib is torch else mt.tensor(g))
        return leaf.grad.numpy()

    assert_close(before(mt, MF), before(torch, _TF), np.float64, f"{name}: grad after an in-place change of a view")

    leaf = t64(a)
    base = leaf * 1
    y = op(MF, mt, base[:, :, 1:5, 1:5])
    g = np.random.default_rng(2).standard_normal(tuple(y.shape))
    base.mul_(2)  # after the op: what it saved of the input (if anything) is now stale
    try:
        y.backward(mt.tensor(g))
    except RuntimeError as e:
        assert "in-place operation" in str(e) and "version" in str(e)
        return
    fresh = t64(a)
    op(MF, mt, (fresh * 1)[:, :, 1:5, 1:5]).backward(mt.tensor(g))
    assert_close(leaf.grad, fresh.grad.numpy(), np.float64, f"{name}: a gradient after the base changed")

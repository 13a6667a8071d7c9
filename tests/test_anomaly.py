"""detect_anomaly: the op that made a NaN/Inf, its input shapes and the user's line that created it."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln import nn
from minitorch_ln.autograd import AnomalyError, detect_anomaly, explain_nonfinite, is_anomaly_enabled

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's divide-by-zero notes


def test_log_of_zero_names_log_and_the_line(device):
    x = mt.tensor([0.0, 1.0, 2.0], device=device, requires_grad=True)
    with detect_anomaly():
        loss = x.log().sum()  # planted: log(0) = -inf, and its backward 1/x = inf
        with pytest.raises(AnomalyError) as info:
            loss.backward()
    err = info.value
    assert err.op == "Log"
    assert err.kind == "Inf"
    assert err.node.name() == "LogBackward0"
    assert err.origin is err.node  # the forward of the same op made the -inf
    msg = str(err)
    assert "op 'Log'" in msg
    assert "input shapes: [(3,)]" in msg
    assert "test_anomaly.py" in msg and "loss = x.log().sum()  # planted" in msg
    assert "gradient for input 0 (shape (3,)) holds Inf" in msg


class SmallModel(nn.Module):
    """Linear -> tanh -> Linear -> sqrt (planted: its input goes negative) -> Linear."""

    def __init__(self, shift):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(4, 6), nn.Linear(6, 5), nn.Linear(5, 3)
        self.shift = shift

    def forward(self, x):
        h = self.fc1(x).tanh()
        h = self.fc2(h)
        h = (h - self.shift).sqrt()  # the planted NaN
        return self.fc3(h)


def test_sqrt_of_negative_deep_inside_a_model_names_sqrt(device):
    model = SmallModel(shift=0.5).to(device)
    x = mt.randn(7, 4, device=device)
    with detect_anomaly():
        loss = model(x).sum()
        with pytest.raises(AnomalyError) as info:
            loss.backward()
    err = info.value
    assert err.op == "Sqrt" and err.kind == "NaN"
    assert err.origin.fn.__name__ == "Sqrt"
    # backward notices the NaN downstream first: fc3's weight gradient hᵀ·dy is NaN as soon as h is
    assert err.node.name() == "LinearBackward0"  # a Linear layer is one fused node
    msg = str(err)
    assert msg.startswith("detect_anomaly: NaN first appeared in op 'Sqrt'")
    assert "input shapes: [(7, 5)]" in msg
    assert "h = (h - self.shift).sqrt()  # the planted NaN" in msg
    assert "in forward" in msg  # the function of the user's frame
    assert "called from" in msg and "loss = model(x).sum()" in msg  # the caller, one frame out


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
@pytest.mark.filterwarnings("ignore:Error detected in")
def test_pytorch_blames_the_downstream_op_we_name_the_origin():
    """PyTorch is a reference, not an oracle: its anomaly mode names the first *backward* that saw NaN."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    fc1, fc2 = torch.nn.Linear(4, 8), torch.nn.Linear(8, 3)
    with torch.autograd.detect_anomaly():
        with pytest.raises(RuntimeError, match="AddmmBackward0"):
            fc2((fc1(torch.randn(5, 4)) - 0.3).sqrt()).sum().backward()
    # ... and it does not flag log(0): its check is NaN only, the gradient 1/0 = inf passes
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    with torch.autograd.detect_anomaly():
        x.log().sum().backward()
    assert torch.isinf(x.grad[0])

    m1, m2 = nn.Linear(4, 8), nn.Linear(8, 3)
    with detect_anomaly(), pytest.raises(AnomalyError) as info:
        m2((m1(mt.randn(5, 4)) - 0.3).sqrt()).sum().backward()
    assert info.value.op == "Sqrt"


def test_nan_made_by_a_backward_formula_alone():
    x = mt.tensor([0.0, 4.0], requires_grad=True)
    with detect_anomaly():
        y = x.sqrt().sum()  # forward finite (sqrt(0) = 0); backward 1/(2·0) = inf
        with pytest.raises(AnomalyError) as info:
            y.backward()
    err = info.value
    assert err.op == "Sqrt" and err.origin is None and err.kind == "Inf"
    assert "backward formula itself" in str(err)
    assert "y = x.sqrt().sum()" in str(err)


def test_a_leaf_that_already_holds_nan_is_named():
    lin = nn.Linear(3, 2)
    data = mt.tensor([[1.0, float("nan"), 0.0]])
    data.name = "batch"
    with detect_anomaly():
        loss = lin(data).sum()
        with pytest.raises(AnomalyError) as info:
            loss.backward()
    err = info.value
    assert err.origin is None and err.op == "Linear"
    assert "'batch' of shape (1, 3) that held NaN/Inf before the forward pass" in str(err)


def test_check_forward_raises_at_the_op_and_lets_minus_inf_masks_through():
    x = mt.tensor([1.0, -1.0], requires_grad=True)
    with detect_anomaly(check_forward=True):
        masked = x.masked_fill(mt.tensor([False, True]), float("-inf"))  # legitimate -inf: no error
        assert masked.softmax(-1).array[1] == 0
        with pytest.raises(AnomalyError, match="turned finite inputs into NaN in its forward") as info:
            x.sqrt()
    assert info.value.op == "Sqrt" and info.value.node is None


def test_without_detect_anomaly_nothing_is_recorded_or_raised():
    x = mt.tensor([0.0, 1.0], requires_grad=True)
    y = x.log()
    assert y.grad_fn.creation_trace is None
    y.sum().backward()
    assert np.isinf(x.grad.array[0])
    assert not is_anomaly_enabled()


def test_context_restores_state_nests_and_decorates():
    assert not is_anomaly_enabled()
    with detect_anomaly():
        assert is_anomaly_enabled()
        with detect_anomaly(check_nan=False):
            x = mt.tensor([0.0], requires_grad=True)
            x.log().sum().backward()  # check_nan=False: records, does not raise
            assert np.isinf(x.grad.array[0])
        assert is_anomaly_enabled()
    assert not is_anomaly_enabled()

    @detect_anomaly()
    def step(t):
        t.log().sum().backward()

    with pytest.raises(AnomalyError, match="Inf first appeared in op 'Log'"):
        step(mt.tensor([0.0], requires_grad=True))
    assert not is_anomaly_enabled()


def test_explain_nonfinite_for_a_nan_loss_without_backward():
    model = SmallModel(shift=0.5)
    with detect_anomaly():
        loss = model(mt.randn(3, 4)).sum()
    text = explain_nonfinite(loss)
    assert text.startswith("the NaN came from op 'Sqrt'")
    assert "h = (h - self.shift).sqrt()" in text
    assert explain_nonfinite(mt.tensor([1.0])) is None
    outside = SmallModel(shift=0.5)(mt.randn(3, 4)).sum()
    assert "not recorded under detect_anomaly" in explain_nonfinite(outside)


def test_bad_arguments():
    with pytest.raises(TypeError, match="check_nan must be a bool, got str"):
        detect_anomaly(check_nan="yes")
    with pytest.raises(TypeError, match="check_forward must be a bool"):
        detect_anomaly(check_forward=1)


_SAFE_OPS = {
    "tanh": lambda t: t.tanh(),
    "scale": lambda t: t * 0.5,
    "sigmoid": lambda t: t.sigmoid(),
    "square": lambda t: t * t,
    "sin": lambda t: t.sin(),
}


@given(before=st.lists(st.sampled_from(sorted(_SAFE_OPS)), max_size=5),
       after=st.lists(st.sampled_from(sorted(_SAFE_OPS)), max_size=5),
       n=st.integers(1, 6))
def test_planted_sqrt_is_found_wherever_it_sits_in_a_chain(before, after, n):
    """Property: finite ops before and after a planted sqrt(negative); the error always names Sqrt."""
    x = mt.tensor(np.linspace(0.1, 1.0, n), requires_grad=True)
    w = mt.tensor(np.linspace(1.0, 2.0, n), requires_grad=True)
    with detect_anomaly():
        h = x
        for name in before:
            h = _SAFE_OPS[name](h)
        h = (h - 3.0).sqrt() * w  # every element negative: all NaN; Mul's weight gradient is NaN
        for name in after:
            h = _SAFE_OPS[name](h)
        loss = h.sum()
        with pytest.raises(AnomalyError) as info:
            loss.backward()
    assert info.value.op == "Sqrt"
    assert info.value.kind == "NaN"
    assert f"input shapes: [({n},)]" in str(info.value)


def test_explain_nonfinite_prefers_a_nan_weight_over_a_legitimate_minus_inf_mask():
    # The causal mask holds -inf by design; a NaN weight further up must still be the one named.
    from minitorch_ln import nn
    from minitorch_ln.autograd import explain_nonfinite

    cfg = nn.GPTConfig.preset("tiny", vocab_size=20, n_layer=1, block_size=8)
    model = nn.GPT(cfg)
    with mt.no_grad():
        model.blocks[0].linear1.weight.array[0, 0] = float("nan")
    idx = mt.randint(0, 20, (2, 8))
    with detect_anomaly():
        _, loss = model(idx, idx)
    text = explain_nonfinite(loss)
    assert "input 1 of 'Linear'" in text and "(512, 128)" in text

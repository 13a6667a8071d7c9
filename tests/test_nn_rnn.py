"""RNN / LSTM / GRU, their cells, and torch.nn.utils.rnn's packing against PyTorch (weights copied in):
outputs, final states, and the gradients of inputs, initial states and every parameter."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from helpers import gradcheck_noncontiguous, to_numpy, torch
from hypothesis import given, settings
from hypothesis import strategies as st
from parity import module_parity

import minitorch_ln as mt
from minitorch_ln.nn import utils_rnn

RNG = np.random.default_rng(7)
DTYPES = [np.float64, np.float32]
CONFIGS = [
    ("RNN", {}), ("RNN", {"nonlinearity": "relu"}), ("LSTM", {}), ("GRU", {}),
    ("RNN", {"num_layers": 2, "bidirectional": True}), ("LSTM", {"num_layers": 2, "batch_first": True}),
    ("GRU", {"num_layers": 2, "bidirectional": True, "batch_first": True}), ("LSTM", {"proj_size": 2}),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "proj_size": 3}), ("GRU", {"bias": False}),
    ("LSTM", {"bias": False, "bidirectional": True}),
]


def _flat(out):
    """``(output, h_n)`` / ``(output, (h_n, c_n))`` → a flat tuple of tensors."""
    output, state = out
    return (output, *(state if isinstance(state, tuple) else (state,)))


def _pair(name, kw, input_size=4, hidden=5):
    return getattr(mt.nn, name)(input_size, hidden, **kw), getattr(torch.nn, name)(input_size, hidden, **kw)


def _states(name, kw, batch, hidden=5, unbatched=False):
    d = (2 if kw.get("bidirectional") else 1) * kw.get("num_layers", 1)
    h_out = kw.get("proj_size") or hidden
    shape = (lambda h: (d, h) if unbatched else (d, batch, h))
    h0 = RNG.standard_normal(shape(h_out))
    return [h0, RNG.standard_normal(shape(hidden))] if name == "LSTM" else [h0]


def _call_with_states(name):
    if name == "LSTM":
        return lambda m, x, h0, c0: _flat(m(x, (h0, c0)))
    return lambda m, x, h0: _flat(m(x, h0))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("name", "kw"), CONFIGS)
def test_module_matches_torch_with_initial_states(name, kw, dtype):
    ours, theirs = _pair(name, kw)
    x = RNG.standard_normal((3, 6, 4))  # (T, B, I) or (B, T, I)
    module_parity(ours, theirs, [x, *_states(name, kw, 3 if kw.get("batch_first") else 6)], _call_with_states(name),
                  dtype=dtype)


@pytest.mark.parametrize(("name", "kw"), CONFIGS[:4] + CONFIGS[7:9])
def test_module_matches_torch_without_states_and_unbatched(name, kw):
    ours, theirs = _pair(name, kw)
    module_parity(ours, theirs, [RNG.standard_normal((5, 2, 4))], lambda m, x: _flat(m(x)))
    module_parity(ours, theirs, [RNG.standard_normal((5, 4))], lambda m, x: _flat(m(x)))  # (T, I)
    module_parity(ours, theirs, [RNG.standard_normal((5, 4)), *_states(name, kw, 0, unbatched=True)],
                  _call_with_states(name))


def _packed_call(enforce_sorted, lengths, batch_first):
    def call(m, x, *states):
        rnn = torch.nn.utils.rnn if isinstance(m, torch.nn.Module) else utils_rnn
        packed = rnn.pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
        out, state = m(packed, (states if len(states) == 2 else states[0]) if states else None)
        padded, lens = rnn.pad_packed_sequence(out, batch_first=batch_first, padding_value=-2.0, total_length=7)
        assert list(lens.tolist()) == list(lengths)
        return _flat((padded, state))
    return call


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("name", "kw"), CONFIGS)
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequences_with_unequal_lengths(name, kw, enforce_sorted, dtype):
    lengths = [6, 4, 4, 1] if enforce_sorted else [2, 6, 1, 4]
    bf = kw.get("batch_first", False)
    ours, theirs = _pair(name, kw)
    x = RNG.standard_normal((4, 6, 4) if bf else (6, 4, 4))
    call = _packed_call(enforce_sorted, lengths, bf)
    module_parity(ours, theirs, [x, *_states(name, kw, 4)], call, dtype=dtype)
    module_parity(ours, theirs, [x], call, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("name", "kw"), [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("LSTMCell", {}),
                                          ("GRUCell", {}), ("GRUCell", {"bias": False})])
def test_cells_match_torch(name, kw, dtype):
    ours, theirs = _pair(name, kw)
    for batch in ((3,), ()):
        x, h, c = (RNG.standard_normal((*batch, n)) for n in (4, 5, 5))
        if name == "LSTMCell":
            module_parity(ours, theirs, [x, h, c], lambda m, x, h, c: m(x, (h, c)), dtype=dtype)
        else:
            module_parity(ours, theirs, [x, h], lambda m, x, h: m(x, h), dtype=dtype)
        module_parity(ours, theirs, [x], lambda m, x: m(x), dtype=dtype)


def test_parameter_names_order_shapes_and_init_match_torch():
    for name, kw in CONFIGS + [("RNNCell", {}), ("LSTMCell", {}), ("GRUCell", {})]:
        ours, theirs = _pair(name, kw, hidden=9 if "proj_size" in kw else 5)
        want = [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
        assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == want, name
        bound = 1 / math.sqrt(ours.hidden_size)
        for _, p in ours.named_parameters():
            a = to_numpy(p)
            assert a.dtype == np.float32 and np.all(np.abs(a) <= bound) and a.std() > 0
        assert repr(ours) == repr(theirs)
    rnn = mt.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    assert len(rnn.all_weights) == 4 and [len(w) for w in rnn.all_weights] == [4] * 4


@pytest.mark.parametrize("name", ["LSTM", "GRU"])
def test_gradcheck_small_lstm_and_gru_float64(name):
    from minitorch_ln.autograd import gradcheck

    m = getattr(mt.nn, name)(3, 2, num_layers=2, bidirectional=True).double()
    x, h0, c0 = RNG.standard_normal((4, 2, 3)), RNG.standard_normal((4, 2, 2)), RNG.standard_normal((4, 2, 2))
    if name == "LSTM":
        gradcheck_noncontiguous(lambda x, h, c: _flat(m(x, (h, c))), [x, h0, c0])
    else:
        gradcheck_noncontiguous(lambda x, h: _flat(m(x, h)), [x, h0])
    # a parameter too: a tensor in its place is the leaf of the check
    w = mt.tensor(m.weight_hh_l1_reverse.array.copy(), requires_grad=True)
    assert gradcheck(lambda w: _flat(_with_weight(m, "weight_hh_l1_reverse", w)(mt.tensor(x))), (w,))


def _with_weight(m, name, w):
    m._parameters[name] = w
    return m


def test_gradcheck_packed_gru_float64():
    m = mt.nn.GRU(2, 3, bidirectional=True).double()

    def fn(x, h0):
        out, h_n = m(utils_rnn.pack_padded_sequence(x, [3, 1, 2], enforce_sorted=False), h0)
        return utils_rnn.pad_packed_sequence(out, padding_value=0.5)[0], h_n

    gradcheck_noncontiguous(fn, [RNG.standard_normal((3, 3, 2)), RNG.standard_normal((2, 3, 3))])


def test_dropout_between_layers_in_training_only():
    mt.manual_seed(0)
    m = mt.nn.GRU(3, 4, num_layers=2, dropout=0.5).double()
    x = mt.tensor(RNG.standard_normal((5, 2, 3)))
    m.eval()
    a, b = m(x)[0], m(x)[0]
    np.testing.assert_array_equal(to_numpy(a), to_numpy(b))
    m.train()
    assert not np.allclose(to_numpy(m(x)[0]), to_numpy(a))
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        one = mt.nn.LSTM(3, 4, dropout=0.5).double()
    one.train()
    y = one(x)[0]  # one layer: no dropout anywhere
    one.eval()
    np.testing.assert_array_equal(to_numpy(y), to_numpy(one(x)[0]))


def test_edge_values_follow_the_math():
    m = mt.nn.LSTM(2, 3).double()
    for p in m.parameters():
        p.array[...] = 0
    out, (_, c) = m(mt.zeros(4, 1, 2, dtype=np.float64))
    # zero weights: every gate is σ(0) = 1/2 and g = tanh(0) = 0, so c stays 0 and h = ½·tanh(0) = 0
    assert np.all(to_numpy(out) == 0) and np.all(to_numpy(c) == 0)
    r = mt.nn.RNN(2, 3).double()
    huge = r(mt.full((3, 1, 2), 1e300, dtype=np.float64))[0]
    assert np.all(np.abs(to_numpy(huge)) <= 1) and np.all(np.isfinite(to_numpy(huge)))  # tanh saturates
    g = mt.nn.GRU(2, 3).double()
    assert np.all(np.isnan(to_numpy(g(mt.full((2, 1, 2), float("nan"), dtype=np.float64))[0])))


def test_pack_pad_utilities_match_torch():
    seqs = [RNG.standard_normal((n, 3)) for n in (2, 5, 1)]
    for batch_first in (False, True):
        for side in ("right", "left"):
            ours = utils_rnn.pad_sequence([mt.tensor(s) for s in seqs], batch_first, 1.5, side)
            want = torch.nn.utils.rnn.pad_sequence([torch.from_numpy(s) for s in seqs], batch_first, 1.5, side)
            np.testing.assert_array_equal(to_numpy(ours), want.numpy())
    p = utils_rnn.pack_sequence([mt.tensor(s) for s in seqs], enforce_sorted=False)
    q = torch.nn.utils.rnn.pack_sequence([torch.from_numpy(s) for s in seqs], enforce_sorted=False)
    for a, b in zip(p, q):
        np.testing.assert_array_equal(to_numpy(a), b.numpy())
    back = utils_rnn.unpack_sequence(p)
    assert [tuple(t.shape) for t in back] == [s.shape for s in seqs]
    np.testing.assert_array_equal(to_numpy(back[1]), seqs[1])
    assert isinstance(p, tuple) and p.data is p[0]


def test_torch_nn_utils_rnn_through_the_alias():
    from minitorch_ln.interop import torch_alias

    with torch_alias.torch_alias():
        import torch as t
        from torch.nn.utils.rnn import pack_padded_sequence

        assert pack_padded_sequence is utils_rnn.pack_padded_sequence
        assert t.nn.utils.rnn.PackedSequence is utils_rnn.PackedSequence and t.nn.LSTM is mt.nn.LSTM
    assert mt.nn.utils.rnn.pad_sequence is utils_rnn.pad_sequence


def test_bad_inputs_raise_clear_errors():
    lstm = mt.nn.LSTM(4, 5, num_layers=2)
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 4, got 3"):
        lstm(mt.zeros(2, 1, 3))
    with pytest.raises(ValueError, match="Expected input to be 2D or 3D, got 4D"):
        lstm(mt.zeros(2, 1, 1, 4))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \[2, 1, 5\], got \[1, 1, 5\]"):
        lstm(mt.zeros(2, 1, 4), (mt.zeros(1, 1, 5), mt.zeros(2, 1, 5)))
    with pytest.raises(RuntimeError, match=r"Expected cell size \[2, 1, 5\], got \[2, 1, 4\]"):
        lstm(mt.zeros(2, 1, 4), (mt.zeros(2, 1, 5), mt.zeros(2, 1, 4)))
    with pytest.raises(RuntimeError, match="hx should also be 3-D but got 2-D"):
        mt.nn.GRU(4, 5)(mt.zeros(2, 1, 4), mt.zeros(1, 5))
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order when `enforce_sorted` is True"):
        utils_rnn.pack_padded_sequence(mt.zeros(3, 2, 1), [1, 3])
    with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
        utils_rnn.pack_padded_sequence(mt.zeros(3, 2, 1), [3, 0])
    with pytest.raises(ValueError, match="total_length to be at least"):
        utils_rnn.pad_packed_sequence(utils_rnn.pack_padded_sequence(mt.zeros(3, 1, 1), [3]), total_length=2)
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 3 expected 4"):
        mt.nn.GRUCell(4, 5)(mt.zeros(2, 3))
    with pytest.raises(RuntimeError, match=r"hidden0 has inconsistent size: got \[2, 4\], expected \[2, 5\]"):
        mt.nn.RNNCell(4, 5)(mt.zeros(2, 4), mt.zeros(2, 4))
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        mt.nn.RNNBase("GRU", 4, 5, proj_size=2)
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        mt.nn.LSTM(4, 5, proj_size=5)
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        mt.nn.GRU(4, 5, dropout=1.5)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'gelu'"):
        mt.nn.RNN(4, 5, nonlinearity="gelu")
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        mt.nn.LSTM(4, 0)


@settings(max_examples=12, deadline=None)
@given(name=st.sampled_from(["RNN", "LSTM", "GRU"]), steps=st.integers(1, 4), batch=st.integers(1, 3),
       in_size=st.integers(1, 4), hidden=st.integers(2, 4), layers=st.integers(1, 2), bidir=st.booleans(),
       batch_first=st.booleans(), packed=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_property_any_sizes_and_flags_match_torch(name, steps, batch, in_size, hidden, layers, bidir, batch_first,
                                                   packed, seed):
    rng = np.random.default_rng(seed)
    kw = {"num_layers": layers, "bidirectional": bidir, "batch_first": batch_first}
    ours, theirs = _pair(name, kw, in_size, hidden)
    x = rng.standard_normal((batch, steps, in_size) if batch_first else (steps, batch, in_size))
    if packed:
        lengths = [int(n) for n in rng.integers(1, steps + 1, batch)]
        lengths[0] = steps  # total_length=7 in the call; the longest must be there for torch's shape
        call = _packed_call(False, lengths, batch_first)
    else:
        call = (lambda m, x: _flat(m(x)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module_parity(ours, theirs, [x], call, seed=seed)

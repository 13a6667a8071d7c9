"""``torch.utils.tensorboard.SummaryWriter`` (utils/tensorboard.py): event files TensorBoard reads,
checked by reading them back with the protobuf records tensorboardX ships (issue 25)."""

import glob
import struct

import numpy as np
import pytest

import minitorch_ln as mt

pytest.importorskip("tensorboardX")
from tensorboardX.proto import event_pb2  # noqa: E402

from minitorch_ln.interop.torch_alias import torch_alias  # noqa: E402
from minitorch_ln.utils.tensorboard import SummaryWriter  # noqa: E402


def read_events(log_dir) -> list:
    """Every Event of the event files under ``log_dir`` (TFRecord framing: length, its CRC, data, its CRC)."""
    events = []
    for path in sorted(glob.glob(f"{log_dir}/events.out.tfevents.*")):
        raw = open(path, "rb").read()
        pos = 0
        while pos < len(raw):
            (n,) = struct.unpack("<Q", raw[pos:pos + 8])
            event = event_pb2.Event()
            event.ParseFromString(raw[pos + 12:pos + 12 + n])
            events.append(event)
            pos += 12 + n + 4
    return events


def scalars(events) -> dict:
    out = {}
    for e in events:
        for v in e.summary.value:
            if v.HasField("simple_value"):
                out.setdefault(v.tag, []).append((e.step, v.simple_value))
    return out


def test_makemore_usage_writes_scalars_read_back(tmp_path):
    # makemore.py: SummaryWriter(log_dir=...), add_scalar("Loss/train", float, step), flush(), close()
    writer = SummaryWriter(log_dir=str(tmp_path))
    for step, loss in enumerate([2.5, 2.25, 2.0]):
        writer.add_scalar("Loss/train", loss, step)
        writer.add_scalar("Loss/test", mt.tensor(loss + 0.5), step)  # a 0-d tensor, as scripts pass
    writer.flush()
    writer.close()
    got = scalars(read_events(tmp_path))
    assert got["Loss/train"] == [(0, 2.5), (1, 2.25), (2, 2.0)]
    assert got["Loss/test"] == [(0, 3.0), (1, 2.75), (2, 2.5)]
    assert writer.get_logdir() == str(tmp_path)


def test_histograms_text_and_scalars_of_tensors(tmp_path):
    x = mt.tensor(np.arange(100.0), requires_grad=True)  # a tensor that requires grad is logged as values
    with SummaryWriter(log_dir=str(tmp_path)) as writer:
        writer.add_histogram("w", x, 7)
        writer.add_text("note", "hello", 1)
        writer.add_scalars("run", {"a": mt.tensor(1.0), "b": 2.0}, 3)
    events = read_events(tmp_path)
    hist = [v.histo for e in events for v in e.summary.value if v.tag == "w"]
    assert len(hist) == 1 and hist[0].num == 100 and hist[0].min == 0 and hist[0].max == 99 and hist[0].sum == 4950
    texts = [v for e in events for v in e.summary.value if v.tag.startswith("note")]
    assert texts and b"hello" in texts[0].tensor.string_val[0]
    # add_scalars writes one run per key, as PyTorch's: <log_dir>/run/a, <log_dir>/run/b
    assert scalars(read_events(tmp_path / "run" / "a")) == {"run": [(3, 1.0)]}
    assert scalars(read_events(tmp_path / "run" / "b")) == {"run": [(3, 2.0)]}


def test_event_files_read_back_by_tensorboard_itself(tmp_path):
    ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    with SummaryWriter(log_dir=str(tmp_path)) as writer:
        writer.add_scalar("loss", 1.5, 0)
        writer.add_scalar("loss", 1.25, 10)
    acc = ea.EventAccumulator(str(tmp_path))
    acc.Reload()
    assert [(s.step, s.value) for s in acc.Scalars("loss")] == [(0, 1.5), (10, 1.25)]


def test_through_the_alias_with_pytorchs_signature(tmp_path):
    with torch_alias():
        from torch.utils.tensorboard import SummaryWriter as W

        w = W(log_dir=str(tmp_path), comment="", purge_step=None, max_queue=10, flush_secs=120, filename_suffix="")
        w.add_scalar("x", 1.0, 0)
        w.close()
    assert W is SummaryWriter and scalars(read_events(tmp_path))["x"] == [(0, 1.0)]


def test_add_graph_says_it_is_not_available(tmp_path):
    with SummaryWriter(log_dir=str(tmp_path)) as writer, pytest.raises(NotImplementedError, match="torch.jit"):
        writer.add_graph(mt.nn.Linear(2, 2), mt.zeros(1, 2))

"""``minitorch_ln.save`` / ``load``: safetensors round trips, PyTorch interop, atomic and checked writes."""

import json
import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch_ln as mt
import minitorch_ln.nn as nn
from minitorch_ln import serialization
from minitorch_ln.serialization import SerializationError, load, load_metadata, save


def _state():
    return {
        "w": mt.tensor(np.arange(12, dtype=np.float32).reshape(3, 4) / 7),
        "b64": mt.tensor(np.array([1.5, -2.25]), dtype=mt.float64),
        "h": mt.tensor(np.array([0.5, 1.0], dtype=np.float16)),
        "ids": mt.tensor([3, 1, 2]),
        "flag": mt.tensor([True, False]),
        "scalar": mt.tensor(2.0),
        "empty": mt.zeros(0, 3),
    }


def test_round_trip_keeps_values_dtypes_and_shapes(tmp_path):
    sd = _state()
    save(sd, tmp_path / "m.safetensors")
    back = load(tmp_path / "m.safetensors")
    assert set(back) == set(sd)
    for k, v in sd.items():
        assert back[k].dtype == v.dtype and back[k].shape == v.shape, k
        np.testing.assert_array_equal(back[k].numpy(), v.numpy())


@given(st.dictionaries(
    st.text(st.characters(min_codepoint=48, max_codepoint=122), min_size=1, max_size=8),
    hnp.arrays(st.sampled_from([np.float32, np.float64, np.int64]), hnp.array_shapes(min_dims=0, max_dims=3, max_side=4)),
    max_size=4,
))
def test_round_trip_property(tmp_path_factory, arrays):
    path = tmp_path_factory.mktemp("prop") / "x.safetensors"
    save(arrays, path)
    back = load(path)
    assert set(back) == set(arrays)
    for k, a in arrays.items():
        np.testing.assert_array_equal(back[k].numpy(), a)  # bit-exact, NaNs included
        assert back[k].dtype == a.dtype


def test_module_state_dict_round_trip(tmp_path):
    lin = nn.Linear(4, 3)
    save(lin.state_dict(), tmp_path / "lin.safetensors")
    other = nn.Linear(4, 3)
    other.load_state_dict(load(tmp_path / "lin.safetensors"))
    np.testing.assert_array_equal(other.weight.detach().numpy(), lin.weight.detach().numpy())


def test_files_load_in_pytorch_and_back(tmp_path):
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file, save_file

    sd = _state()
    save(sd, tmp_path / "m.safetensors")
    theirs = load_file(tmp_path / "m.safetensors")
    for k, v in sd.items():
        assert str(theirs[k].dtype) == "torch." + str(v.dtype)
        np.testing.assert_array_equal(theirs[k].numpy(), v.numpy())
    # and a file PyTorch wrote loads here (no checksum in its metadata: nothing to verify)
    save_file({"x": torch.arange(6, dtype=torch.float32).reshape(2, 3)}, tmp_path / "t.safetensors")
    assert load(tmp_path / "t.safetensors")["x"].tolist() == [[0, 1, 2], [3, 4, 5]]


def test_metadata_is_stored(tmp_path):
    save({"a": mt.ones(2)}, tmp_path / "m.safetensors", metadata={"step": "7"})
    meta = load_metadata(tmp_path / "m.safetensors")
    assert meta["step"] == "7" and len(meta["minitorch_ln.sha256"]) == 64


def test_load_to_device(tmp_path, device):
    save({"a": mt.ones(2, device=device)}, tmp_path / "m.safetensors")
    a = load(tmp_path / "m.safetensors", device=device)["a"]
    assert a.device == device and a.tolist() == [1.0, 1.0]


def test_write_is_atomic_when_interrupted(tmp_path, monkeypatch):
    path = tmp_path / "m.safetensors"
    save({"a": mt.ones(2)}, path)
    before = path.read_bytes()

    def crash(src, dst):
        raise KeyboardInterrupt  # as if Ctrl-C arrived between writing and renaming

    monkeypatch.setattr(serialization.os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        save({"a": mt.zeros(2)}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["m.safetensors"]  # no temporary file left behind


def _saved(tmp_path):
    path = tmp_path / "m.safetensors"
    save({"w": mt.arange(100, dtype=mt.float32)}, path)
    return path


def test_truncated_file(tmp_path):
    path = _saved(tmp_path)
    raw = path.read_bytes()
    path.write_bytes(raw[:-40])
    with pytest.raises(SerializationError, match="corrupt or truncated"):
        load(path)
    path.write_bytes(raw[:20])
    with pytest.raises(SerializationError, match="truncated or not a safetensors file"):
        load(path)
    path.write_bytes(raw[:3])
    with pytest.raises(SerializationError, match="only 3 bytes"):
        load(path)


def test_flipped_data_byte_fails_the_checksum(tmp_path):
    path = _saved(tmp_path)
    raw = bytearray(path.read_bytes())
    raw[-5] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(SerializationError, match="do not match the SHA-256"):
        load(path)


def test_not_safetensors(tmp_path):
    path = tmp_path / "x.safetensors"
    path.write_bytes(json.dumps({"hello": 1}).encode() * 3)
    with pytest.raises(SerializationError, match="not a safetensors file"):
        load(path)
    n = 10
    path.write_bytes(n.to_bytes(8, "little") + b"\xff" * n)
    with pytest.raises(SerializationError, match="header is not JSON"):
        load(path)


def test_load_bad_paths(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load(tmp_path / "nope.safetensors")
    with pytest.raises(SerializationError, match="is a directory"):
        load(tmp_path)


def test_save_bad_input_writes_nothing(tmp_path):
    path = tmp_path / "m.safetensors"
    # lists, int keys and list values are checkpoints now (test_serialization_nested.py); a
    # function is not data, and saving it would need pickle
    with pytest.raises(SerializationError, match="a function is not a Tensor"):
        save({"f": lambda: 0}, path)
    with pytest.raises(SerializationError, match="metadata must map str to str"):
        save({"a": mt.ones(2)}, path, metadata={"step": 3})
    with pytest.raises(FileNotFoundError, match="directory .* does not exist"):
        save({"a": mt.ones(2)}, tmp_path / "missing" / "m.safetensors")
    assert not path.exists()


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc, where no file can be created")
def test_save_to_an_unwritable_place_names_the_users_path(tmp_path):
    with pytest.raises(OSError) as exc:
        save({"w": mt.ones(2)}, "/proc/nope.safetensors")
    assert exc.value.filename == "/proc/nope.safetensors" and ".tmp" not in str(exc.value)


def test_save_onto_a_directory_is_refused(tmp_path):
    with pytest.raises(IsADirectoryError, match="it is a directory"):
        save({"w": mt.ones(2)}, tmp_path)
    assert os.listdir(tmp_path) == []

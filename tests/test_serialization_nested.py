"""``mt.save``/``mt.load`` of checkpoints of any shape: nesting, sharing, resume, file objects, bad files."""

import io
import json
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
import minitorch_ln.nn as nn
from minitorch_ln.serialization import SerializationError, load, load_metadata, save

# ---------------------------------------------------------------- strategies (this file's own)
_leaf = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=False),
                  st.text(max_size=6), st.binary(max_size=4))
_key = st.one_of(st.text(max_size=5), st.integers(-5, 5))
trees = st.recursive(_leaf, lambda kids: st.one_of(
    st.lists(kids, max_size=3), st.tuples(kids, kids), st.dictionaries(_key, kids, max_size=3)), max_leaves=12)


def _round_trip(obj, **kw):
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    return load(buf, **kw)


@given(trees)
def test_any_tree_of_plain_values_round_trips_exactly(tree):
    back = _round_trip({"x": tree})["x"]
    assert back == tree and repr(back) == repr(tree)  # types too: tuple vs list, int vs float, bool


def test_checkpoint_dict_keeps_every_type(tmp_path):
    obj = {"w": mt.arange(6, dtype=mt.float64).reshape(2, 3), "iter_num": 5, "best_val_loss": 1.25,
           "ninf": float("-inf"), "nan": float("nan"), "big": 2**80, "cfg": {"name": "gpt", "bias": False, "drop": None},
           "od": OrderedDict([("b", 1), ("a", 2)]), 7: "int key", (1, "t"): "tuple key", "__tensor__": "not a tag",
           "arr": np.arange(3, dtype=np.int16), "npf": np.float32(0.5), "ids": mt.tensor([3, 1]), "flag": mt.tensor(True),
           "empty": mt.zeros(0, 4), "list": [mt.ones(2), (mt.zeros(1), "s")]}
    save(obj, tmp_path / "ckpt.pt")
    back = load(tmp_path / "ckpt.pt")
    assert type(back) is dict and list(back) == list(obj)
    assert back["iter_num"] == 5 and back["best_val_loss"] == 1.25 and back["big"] == 2**80
    assert back["ninf"] == float("-inf") and np.isnan(back["nan"])
    assert back["cfg"] == obj["cfg"] and back[7] == "int key" and back[(1, "t")] == "tuple key"
    assert back["__tensor__"] == "not a tag"
    assert type(back["od"]) is OrderedDict and list(back["od"]) == ["b", "a"]
    assert type(back["arr"]) is np.ndarray and back["arr"].dtype == np.int16 and back["arr"].tolist() == [0, 1, 2]
    assert type(back["npf"]) is np.float32 and back["npf"] == 0.5
    for k in ("w", "ids", "flag", "empty"):
        assert isinstance(back[k], mt.Tensor) and back[k].dtype == obj[k].dtype and back[k].shape == obj[k].shape
        np.testing.assert_array_equal(back[k].numpy(), obj[k].numpy())
    assert isinstance(back["list"], list) and isinstance(back["list"][1], tuple) and back["list"][1][1] == "s"


def test_tied_weights_and_views_keep_sharing(tmp_path):
    w = mt.randn(4, 3)
    base = np.arange(12.0)
    obj = {"a": w, "b": w, "a_detached": w.detach(), "q": base[:4], "k": base[4:8], "all": base,
           "t": mt.tensor(np.arange(6.0)).reshape(2, 3).transpose(0, 1)}
    save(obj, tmp_path / "m.safetensors")
    from safetensors.numpy import load_file

    assert len(load_file(tmp_path / "m.safetensors")) == 3  # w once, base once, t once
    back = load(tmp_path / "m.safetensors")
    assert back["a"] is back["b"]  # the same object saved twice comes back as one object
    assert back["a_detached"] is not back["a"] and back["a_detached"].array is back["a"].array
    back["all"][5] = -1.0  # writes through every view of the one buffer
    assert back["k"][1] == -1.0 and np.shares_memory(back["q"], back["all"])
    assert back["t"].tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]


def test_requires_grad_and_parameters_are_kept():
    p = nn.Parameter(mt.randn(2))
    back = _round_trip({"p": p, "r": mt.ones(2, requires_grad=True), "n": mt.ones(2)})
    assert type(back["p"]) is nn.Parameter and back["p"].requires_grad
    assert back["r"].requires_grad and not back["n"].requires_grad


class _Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(11, 8)
        self.ln = nn.LayerNorm(8)
        self.head = nn.Linear(8, 11, bias=False)
        self.head.weight = self.emb.weight  # tied, as nanoGPT's wte / lm_head

    def forward(self, idx, targets):
        logits = self.head(self.ln(self.emb(idx)))
        return mt.cross_entropy(logits.reshape(-1, 11), targets.reshape(-1))


def _step(model, opt, i):
    rng = np.random.default_rng(i)
    idx, tgt = (mt.tensor(rng.integers(0, 11, size=(2, 5))) for _ in range(2))
    loss = model(idx, tgt)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


def test_nanogpt_style_checkpoint_resumes_with_identical_losses(tmp_path):
    mt.manual_seed(0)
    model = _Tiny()
    opt = mt.optim.AdamW(model.parameters(), lr=1e-2, betas=(0.9, 0.95), weight_decay=0.1)
    for i in range(3):
        _step(model, opt, i)
    ckpt = {"model": model.state_dict(), "optimizer": opt.state_dict(), "iter_num": 5, "best_val_loss": 1.25,
            "config": {"lr": 1e-2, "dataset": "shakespeare_char", "compile": True},
            "model_args": dict(n_layer=1, n_embd=8, bias=False, dropout=0.0)}
    mt.save(ckpt, tmp_path / "ckpt.pt")
    expected = [_step(model, opt, i) for i in range(3, 6)]

    back = mt.load(tmp_path / "ckpt.pt", map_location="cpu")
    assert back["iter_num"] == 5 and back["model_args"]["bias"] is False and back["config"]["compile"] is True
    model2 = _Tiny()
    opt2 = mt.optim.AdamW(model2.parameters(), lr=1e-2, betas=(0.9, 0.95), weight_decay=0.1)
    state_dict = back["model"]
    for k in list(state_dict):  # nanoGPT strips '_orig_mod.': the dict must be mutable
        state_dict[k.removeprefix("_orig_mod.")] = state_dict.pop(k)
    model2.load_state_dict(state_dict)
    opt2.load_state_dict(back["optimizer"])
    assert [_step(model2, opt2, i) for i in range(3, 6)] == expected


def test_map_location_forms(device):
    obj = {"w": mt.ones(2, device=device)}
    for loc in (None, "cpu", mt.device("cpu"), {device: "cpu"}):
        w = _round_trip(obj, map_location=loc)["w"]
        assert w.device == ("cpu" if loc is not None else device) and w.tolist() == [1.0, 1.0]
    w = _round_trip(obj, map_location=lambda t, loc: t.to("cpu") * 2)["w"]
    assert w.tolist() == [2.0, 2.0]
    assert _round_trip(obj, device="cpu", weights_only=False)["w"].device == "cpu"


def test_flat_state_dict_stays_a_plain_safetensors_file(tmp_path):
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file

    lin = nn.Linear(3, 2)
    save(lin.state_dict(), tmp_path / "lin.safetensors")
    theirs = load_file(tmp_path / "lin.safetensors")
    assert set(theirs) == {"weight", "bias"} and theirs["weight"].dtype == torch.float32
    back = load(tmp_path / "lin.safetensors")
    assert type(back) is OrderedDict and list(back) == ["weight", "bias"]


def test_file_written_by_the_old_flat_save_still_loads(tmp_path):
    from safetensors.numpy import save_file

    save_file({"b": np.ones(2, np.float32), "a": np.zeros(3)}, tmp_path / "old.safetensors", metadata={"format": "pt"})
    back = load(tmp_path / "old.safetensors")
    assert set(back) == {"a", "b"} and back["a"].dtype == np.float64 and type(back) is OrderedDict


def test_torch_save_files_load_and_plain_pickles_are_refused(tmp_path):
    torch = pytest.importorskip("torch")
    torch.save({"w": torch.ones(2)}, tmp_path / "t.pt")  # read by the allow-listed unpickler (test_torch_format.py)
    assert load(tmp_path / "t.pt")["w"].tolist() == [1.0, 1.0]
    import pickle

    (tmp_path / "p.pkl").write_bytes(pickle.dumps({"a": 1}, protocol=2))
    with pytest.raises(SerializationError, match="a pickle, not a torch.save file"):
        load(tmp_path / "p.pkl")


def test_corrupt_structure_or_data_is_reported(tmp_path):
    path = tmp_path / "c.safetensors"
    save({"a": [1, 2], "w": mt.ones(3)}, path)
    raw = bytearray(path.read_bytes())
    i = raw.index(b"[1,2]")
    raw[i + 1:i + 2] = b"7"  # same length, so the file still parses: the checksum must catch it
    path.write_bytes(bytes(raw))
    with pytest.raises(SerializationError, match="do not match the SHA-256"):
        load(path)
    path.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(SerializationError, match="corrupt or truncated"):
        load(path)
    with pytest.raises(SerializationError, match="only 0 bytes"):
        load(io.BytesIO(b""))


def test_metadata_holds_json_structure(tmp_path):
    save({"a": (1, mt.ones(1))}, tmp_path / "m.safetensors", metadata={"step": "3"})
    meta = load_metadata(tmp_path / "m.safetensors")
    assert meta["step"] == "3" and json.loads(meta["minitorch_ln.structure"])["a"]["__tuple__"][0] == 1


def test_unsavable_objects_name_where_they_are(tmp_path):
    with pytest.raises(SerializationError, match=r"obj\['cfg'\]\['fn'\]: a function is not a Tensor"):
        save({"cfg": {"fn": lambda: 0}}, io.BytesIO())
    with pytest.raises(SerializationError, match=r"dict key .* \(frozenset\)"):
        save({frozenset(): 1}, io.BytesIO())
    loop = []
    loop.append(loop)
    with pytest.raises(SerializationError, match="contains itself"):
        save(loop, io.BytesIO())
    with pytest.raises(SerializationError, match="metadata must map str to str"):
        save({}, io.BytesIO(), metadata={"minitorch_ln.structure": "x"})
    with pytest.raises(SerializationError, match="not a number type"):
        save({"s": np.array(["a"])}, io.BytesIO())
    assert list(tmp_path.iterdir()) == []

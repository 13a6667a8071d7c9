"""PyTorch's checkpoint files in and out (minitorch_ln/torch_format/): files written by real
``torch.save`` (zip and legacy) load here, ours load in real ``torch.load(weights_only=True)``, and
a pickle naming anything outside the allow-list is refused without running it."""

import io
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln import nn
from minitorch_ln.safe_globals import add_safe_globals, safe_globals
from minitorch_ln.serialization import SerializationError, load, save
from minitorch_ln.torch_format import ForbiddenGlobalError

torch = pytest.importorskip("torch")

INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8"]
FLOAT_DTYPES = ["float16", "float32", "float64"]


def _torch_sample(rng):
    """A checkpoint with every layout PyTorch writes: views of one storage, strides, offsets, 0-d, empty."""
    base = torch.from_numpy(rng.standard_normal((4, 6))).float()
    tensors = OrderedDict(
        base=base, t=base.t(), sl=base[1:, 2:5], step=base[:, ::2], row=base[2], scalar=torch.tensor(3.5, dtype=torch.float64),
        empty=torch.zeros(0, 3), expanded=torch.arange(3.0).expand(2, 3), grad=torch.ones(2, requires_grad=True),
        param=torch.nn.Parameter(torch.full((2, 2), 0.25)),
    )
    for name in INT_DTYPES:
        tensors[name] = torch.from_numpy(rng.integers(-100 if name != "uint8" else 0, 100, (3, 2))).to(getattr(torch, name))
    for name in FLOAT_DTYPES:
        tensors[name] = torch.from_numpy(rng.standard_normal((2, 3))).to(getattr(torch, name))
    tensors["bool"] = torch.tensor([True, False, True])
    tensors["nonfinite"] = torch.tensor([float("inf"), -float("inf"), float("nan"), 1e-45, 3e38])
    tensors._metadata = OrderedDict({"": {"version": 1}})  # what Module.state_dict() attaches
    return {"tensors": tensors, "int": 7, "float": 0.125, "str": "résumé", "none": None, "bool": True,
            "tuple": (1, (2.5, "x")), "list": [1, [2, {"k": 3}]], "bytes": b"\x00\xffab", "set": {1, 2},
            "complex": 1 + 2j, "size": torch.Size([2, 3]), "device": torch.device("cpu"),
            "dtypes": [torch.float32, torch.int64, torch.bool], 10: "int key"}


def _check_loaded(ours, theirs):
    ts, tt = ours["tensors"], theirs["tensors"]
    assert type(ts) is OrderedDict and list(ts) == list(tt) and ts._metadata == tt._metadata
    for name, t in tt.items():
        got = ts[name]
        assert isinstance(got, mt.Tensor), name
        assert got.shape == tuple(t.shape) and str(got.dtype) == str(t.dtype).replace("torch.", ""), name
        np.testing.assert_array_equal(got.array, t.detach().numpy(), err_msg=name)
        assert got.requires_grad == t.requires_grad, name
        assert isinstance(got, nn.Parameter) == isinstance(t, torch.nn.Parameter), name
    # views of one storage still share memory: writing through one shows in the others
    assert all(np.shares_memory(ts["base"].array, ts[k].array) for k in ("t", "sl", "step", "row"))
    ts["base"].array[2, 3] = 123.0
    assert ts["t"].array[3, 2] == 123.0 and ts["sl"].array[1, 1] == 123.0 and ts["row"].array[3] == 123.0
    for key in ("int", "float", "str", "none", "bool", "tuple", "list", "bytes", "set", "complex", 10):
        assert ours[key] == theirs[key] and type(ours[key]) is type(theirs[key]), key
    assert isinstance(ours["size"], mt.Size) and ours["size"] == (2, 3)
    assert ours["device"] == "cpu" and ours["dtypes"] == [mt.float32, mt.int64, mt.bool]


@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
def test_files_written_by_real_torch_save_load_with_every_layout_and_dtype(tmp_path, legacy):
    theirs = _torch_sample(np.random.default_rng(0))
    path = tmp_path / "ckpt.pt"
    torch.save(theirs, path, _use_new_zipfile_serialization=not legacy)
    _check_loaded(load(path), theirs)
    _check_loaded(load(io.BytesIO(path.read_bytes())), theirs)  # a file object, as torch.load takes


def test_mmap_load_shares_the_file_copy_on_write(tmp_path):
    theirs = _torch_sample(np.random.default_rng(1))
    torch.save(theirs, tmp_path / "m.pt")
    ours = load(tmp_path / "m.pt", mmap=True)
    _check_loaded(ours, theirs)  # writes into the arrays (copy-on-write) ...
    np.testing.assert_array_equal(load(tmp_path / "m.pt")["tensors"]["base"].array, theirs["tensors"]["base"].numpy())


def test_our_torch_format_loads_in_real_torch_weights_only(tmp_path):
    rng = np.random.default_rng(2)
    base = mt.tensor(rng.standard_normal((4, 6)).astype(np.float32))
    tensors = OrderedDict(base=base, t=base.t(), sl=base[1:, 2:5], step=base[:, ::2], row=base[2],
                          scalar=mt.tensor(3.5, dtype=mt.float64), empty=mt.zeros(0, 3),
                          expanded=mt.arange(3.0).expand(2, 3), grad=mt.ones(2, requires_grad=True),
                          param=nn.Parameter(mt.full((2, 2), 0.25)), flipped=mt.tensor(np.arange(5.0)[::-1]))
    for name in INT_DTYPES + FLOAT_DTYPES + ["bool"]:
        tensors[name] = mt.tensor(rng.integers(0, 2, (3, 2)).astype(name))
    obj = {"tensors": tensors, "int": 7, "float": 0.125, "np_float": np.float64(0.5), "np_int": np.int64(3),
           "str": "résumé", "none": None, "tuple": (1, (2.5, "x")), "list": [1, [2, {"k": 3}]], "bytes": b"\x00\xff",
           "set": {1, 2}, "size": mt.Size([2, 3]), "device": mt.device("cpu"), "dtype": mt.float16}
    save(obj, tmp_path / "ours.pt", format="torch")
    for mmap in (False, True):
        back = torch.load(tmp_path / "ours.pt", weights_only=True, mmap=mmap)
        for name, t in tensors.items():
            got = back["tensors"][name]
            assert str(got.dtype) == f"torch.{t.dtype}" and tuple(got.shape) == t.shape, name
            np.testing.assert_array_equal(got.detach().numpy(), t.array, err_msg=name)
            assert got.requires_grad == t.requires_grad and isinstance(got, torch.nn.Parameter) == isinstance(t, nn.Parameter)
        ptr = back["tensors"]["base"].untyped_storage().data_ptr()
        assert all(back["tensors"][k].untyped_storage().data_ptr() == ptr for k in ("t", "sl", "step", "row"))
        assert back["tensors"]["step"].stride() == (6, 2) and back["tensors"]["sl"].storage_offset() == 8
        assert back["np_float"] == 0.5 and type(back["np_float"]) is float and back["np_int"] == 3
        assert back["size"] == torch.Size([2, 3]) and back["device"] == torch.device("cpu")
        assert back["dtype"] is torch.float16 and back["bytes"] == b"\x00\xff" and back["set"] == {1, 2}
    assert zipfile.ZipFile(tmp_path / "ours.pt").namelist()[0] == "ours/data.pkl"


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=0, max_size=3), dtype=st.sampled_from(INT_DTYPES + FLOAT_DTYPES),
       perm=st.randoms(use_true_random=False), start=st.integers(0, 2))
def test_property_views_round_trip_both_ways(shape, dtype, perm, start):
    a = np.arange(int(np.prod([n + start for n in shape] or [1])) * 2).astype(dtype)
    arr = a[: int(np.prod([n + start for n in shape] or [1]))].reshape([n + start for n in shape])
    view = arr[tuple(slice(start, None) for _ in shape) + (Ellipsis,)]
    axes = list(range(view.ndim))
    perm.shuffle(axes)
    view = view.transpose(axes)
    obj = {"base": mt.Tensor._from_op(arr), "view": mt.Tensor._from_op(view)}
    buf = io.BytesIO()
    save(obj, buf, format="torch")
    theirs = torch.load(io.BytesIO(buf.getvalue()), weights_only=True)
    np.testing.assert_array_equal(theirs["view"].numpy(), view)
    buf2 = io.BytesIO()
    torch.save(theirs, buf2)
    ours = load(io.BytesIO(buf2.getvalue()))
    np.testing.assert_array_equal(ours["view"].array, view)
    assert ours["view"].dtype == view.dtype and (view.size == 0 or np.shares_memory(ours["view"].array, ours["base"].array))


class _Evil:
    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("how", ["torch.save", "pickle", "legacy"])
def test_a_forbidden_global_is_refused_by_name_and_nothing_runs(tmp_path, how):
    evil = _Evil()
    evil.marker = tmp_path / "MARKER"
    path = tmp_path / "evil.pt"
    if how == "pickle":
        path.write_bytes(pickle.dumps({"a": evil}, protocol=2))
    else:
        torch.save({"w": torch.ones(2), "a": evil}, path, _use_new_zipfile_serialization=how == "torch.save")
    for weights_only in (True, False):
        with pytest.raises(ForbiddenGlobalError, match=r"names the global posix\.system.*nothing was executed"):
            load(path, weights_only=weights_only)
    with pytest.raises(pickle.UnpicklingError):  # PyTorch's own error type catches it too
        load(path)
    assert not evil.marker.exists()


class Config:  # a user class a checkpoint may hold once registered
    def __init__(self, n):
        self.n = n


def test_add_safe_globals_lets_a_registered_class_in(tmp_path):
    path = tmp_path / "cfg.pt"
    torch.save({"cfg": Config(4), "w": torch.ones(2)}, path)
    with pytest.raises(ForbiddenGlobalError, match=f"global {__name__}.Config"):
        load(path)
    with safe_globals([Config]):
        got = load(path)
    assert type(got["cfg"]) is Config and got["cfg"].n == 4 and got["w"].tolist() == [1.0, 1.0]
    with pytest.raises(ForbiddenGlobalError):
        load(path)  # the block's registration ended with it
    add_safe_globals([(Config, f"{__name__}.Config")])
    try:
        assert load(path)["cfg"].n == 4
    finally:
        from minitorch_ln.safe_globals import clear_safe_globals

        clear_safe_globals()


def _rezip(src, dst, change):
    """Copy a zip-format checkpoint, passing each record's (name, bytes) through ``change``."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            out = change(info.filename, zin.read(info.filename))
            if out is not None:
                zout.writestr(info.filename, out)


def test_bad_files_are_one_line_errors(tmp_path):
    path = tmp_path / "good.pt"
    torch.save({"w": torch.arange(6.0).reshape(2, 3)[:, 1:]}, path)
    raw = path.read_bytes()
    (tmp_path / "trunc.pt").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(SerializationError, match="truncated or corrupt zip"):
        load(tmp_path / "trunc.pt")
    with zipfile.ZipFile(tmp_path / "foreign.zip", "w") as zf:
        zf.writestr("readme.txt", "hello")
    with pytest.raises(SerializationError, match="zip archive but not a torch.save file.*readme.txt"):
        load(tmp_path / "foreign.zip")
    # the storage is cut to 3 of its 6 floats: the view (offset 1, stride (3, 1), size (2, 2)) reaches element 5
    _rezip(path, tmp_path / "short.pt", lambda n, b: b[:12] if n.endswith("data/0") else b)
    with pytest.raises(SerializationError, match="storage 0 should hold 6 float32 elements"):
        load(tmp_path / "short.pt")
    _rezip(path, tmp_path / "small.pt", lambda n, b: b.replace(b"K\x06t", b"K\x03t") if n.endswith("data.pkl") else b)
    with pytest.raises(SerializationError, match=r"reaches element 5 of storage 0, which holds 3"):
        load(tmp_path / "small.pt")
    _rezip(path, tmp_path / "nodata.pt", lambda n, b: None if n.endswith("data/0") else b)
    with pytest.raises(SerializationError, match="record .*data/0 is missing"):
        load(tmp_path / "nodata.pt")
    (tmp_path / "plain.pkl").write_bytes(pickle.dumps({"a": 1}, protocol=2))
    with pytest.raises(SerializationError, match="is a pickle, not a torch.save file"):
        load(tmp_path / "plain.pkl")


def test_map_location_forms_and_a_gpu_checkpoint_on_a_cpu_machine(tmp_path):
    path = tmp_path / "g.pt"
    w = torch.arange(4.0)
    torch.save({"w": w, "v": w[1:]}, path)  # one storage: map_location's callable sees it once
    gpu = tmp_path / "gpu.pt"
    _rezip(path, gpu, lambda n, b: b.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
           if n.endswith("data.pkl") else b)
    seen = []
    got = load(gpu, map_location=lambda storage, loc: seen.append(loc) or storage)
    assert seen == ["cuda:0"] and got["v"].tolist() == [1.0, 2.0, 3.0]
    assert load(gpu, map_location="cpu")["w"].device == "cpu"
    assert load(gpu, map_location={"cuda:0": "cpu"})["w"].device == "cpu"
    if not mt.backend.cuda_is_available():
        with pytest.raises(mt.backend.DeviceError, match="saved on cuda:0.*map_location='cpu'"):
            load(gpu)


def test_save_refuses_what_torch_load_weights_only_would(tmp_path):
    with pytest.raises(SerializationError, match="cannot save .*Config in the torch format"):
        save({"cfg": Config(1)}, tmp_path / "x.pt", format="torch")
    with pytest.raises(SerializationError, match="ndarray in the torch format.*from_numpy"):
        save({"a": np.ones(2)}, tmp_path / "x.pt", format="torch")
    w = mt.ones(2, requires_grad=True)
    with pytest.raises(SerializationError, match="non-leaf tensor that requires grad"):
        save({"y": w * 2}, tmp_path / "x.pt", format="torch")
    with pytest.raises(ValueError, match="format must be 'safetensors' or 'torch'"):
        save({}, tmp_path / "x.pt", format="pickle")
    assert not (tmp_path / "x.pt").exists()  # nothing half-written


def test_gpt_state_dicts_both_ways_give_the_same_logits(tmp_path):
    cfg = nn.GPTConfig(vocab_size=17, block_size=8, n_layer=2, n_head=2, d_model=16)
    mt.manual_seed(0)
    model = nn.GPT(cfg)
    idx = mt.tensor(np.random.default_rng(0).integers(0, 17, (2, 8)))
    save(model.state_dict(), tmp_path / "gpt.pt", format="torch")
    sd = torch.load(tmp_path / "gpt.pt", weights_only=True)
    assert list(sd) == list(model.state_dict())
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(sd[k].numpy(), v.array)
    torch.save(sd, tmp_path / "back.pt")  # and back, from real PyTorch
    other = nn.GPT(cfg)
    other.load_state_dict(load(tmp_path / "back.pt"))
    np.testing.assert_array_equal(_logits(other(idx)), _logits(model(idx)))


def _logits(out):
    return (out[0] if isinstance(out, tuple) else out).detach().array


def test_alias_torch_save_writes_torch_format_for_pt_paths(tmp_path):
    from minitorch_ln.interop.torch_alias import torch_alias

    with torch_alias():
        import torch as alias

        alias.save({"w": alias.ones(2)}, tmp_path / "a.pt")
        alias.save({"w": alias.ones(2)}, tmp_path / "a.safetensors")
        buf = io.BytesIO()
        alias.save({"w": alias.ones(2)}, buf, _use_new_zipfile_serialization=True)
        assert alias.load(tmp_path / "a.pt")["w"].tolist() == [1.0, 1.0]
    assert zipfile.is_zipfile(tmp_path / "a.pt") and zipfile.is_zipfile(io.BytesIO(buf.getvalue()))
    assert not zipfile.is_zipfile(tmp_path / "a.safetensors")
    assert torch.load(tmp_path / "a.pt", weights_only=True)["w"].tolist() == [1.0, 1.0]


def test_a_safetensors_file_whose_length_looks_like_a_pickle_is_not_taken_for_one(tmp_path):
    # an 896-byte header: its length's first bytes are 0x80 0x03, a protocol-3 pickle's opening
    for n in range(900):
        save({"w": mt.ones(2)}, tmp_path / "s.safetensors", metadata={"pad": "x" * n})
        raw = (tmp_path / "s.safetensors").read_bytes()
        if raw[:2] == b"\x80\x03":
            break
    assert raw[:2] == b"\x80\x03"
    assert load(tmp_path / "s.safetensors")["w"].tolist() == [1.0, 1.0]


@pytest.mark.parametrize("dtype", ["complex64", "uint16", "float8_e4m3fn"])
def test_a_dtype_minitorch_ln_lacks_is_a_clear_error(tmp_path, dtype):
    if not hasattr(torch, dtype):
        pytest.skip(f"this PyTorch has no {dtype}")
    t = torch.zeros(3).to(getattr(torch, dtype))
    torch.save({"t": t}, tmp_path / "d.pt")
    try:
        mt.backend.as_dtype(np.dtype(dtype))
        pytest.skip(f"minitorch_ln has {dtype} now")  # complex lands with another branch
    except TypeError:
        pass
    with pytest.raises(SerializationError, match=rf"holds a tensor of (torch\.\w+Storage \({dtype}\)|dtype torch\.{dtype}),"):
        load(tmp_path / "d.pt")


def test_untyped_storage_with_rebuild_tensor_v3_reads_its_bytes_as_the_dtype(tmp_path):
    # PyTorch writes its newer dtypes as _rebuild_tensor_v3(UntypedStorage, ..., dtype); renaming the dtype
    # global torch.uint16 to torch.int16 (GLOBAL names end at a newline) gives one minitorch_ln has
    if not hasattr(torch, "uint16"):
        pytest.skip("this PyTorch has no uint16")
    torch.save({"t": torch.arange(6).to(torch.uint16).reshape(2, 3)[:, 1:]}, tmp_path / "u.pt")
    _rezip(tmp_path / "u.pt", tmp_path / "i.pt",
           lambda n, b: b.replace(b"ctorch\nuint16\n", b"ctorch\nint16\n") if n.endswith("data.pkl") else b)
    got = load(tmp_path / "i.pt")["t"]
    assert got.dtype == mt.int16 and got.tolist() == [[1, 2], [4, 5]]

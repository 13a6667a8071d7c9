"""The data pipeline (minitorch_ln.utils.data) against torch.utils.data.

Deterministic behaviour (sequential batches, drop_last, len, collate structures and dtypes,
BatchSampler, random_split sizes, errors) must equal PyTorch's. Random behaviour cannot equal it
(our draws are NumPy's), so it is checked for what it must be: a permutation, reproducible under
the same seed, different across epochs. Worker tests use fork, 2 workers and tiny datasets.
"""

import collections
import os
import time
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_ln as mt
from minitorch_ln.utils import data as D
from minitorch_ln.utils.data._worker import _generate_state

from helpers import torch

import torch.utils.data as TD  # noqa: E402 - after helpers, which skips the file without torch

# ------------------------------------------------------------------ strategies (this file only)
loader_cases = st.tuples(st.integers(1, 23), st.integers(1, 7), st.booleans())  # (n, batch_size, drop_last)
fraction_lists = st.lists(st.integers(1, 20), min_size=1, max_size=5).map(lambda w: [x / sum(w) for x in w])

Point = collections.namedtuple("Point", ["x", "y"])


class T:
    """A leaf of a sample spec: becomes an mt.Tensor or a torch.Tensor holding ``array``."""

    def __init__(self, array):
        self.array = np.asarray(array)


def build(spec, lib):
    """The sample ``spec`` with every ``T`` leaf turned into a tensor of ``lib`` ("mt" or "torch")."""
    if isinstance(spec, T):
        return mt.tensor(spec.array) if lib == "mt" else torch.from_numpy(spec.array.copy())
    if isinstance(spec, dict):
        return {k: build(v, lib) for k, v in spec.items()}
    if isinstance(spec, tuple) and hasattr(spec, "_fields"):
        return type(spec)(*(build(v, lib) for v in spec))
    if isinstance(spec, (list, tuple)):
        return type(spec)(build(v, lib) for v in spec)
    return spec


def assert_same(ours, theirs, path="batch"):
    """Same structure, container types, tensor dtypes, shapes and values as PyTorch's result."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, mt.Tensor), f"{path}: expected a Tensor, got {type(ours).__name__}"
        assert str(ours.dtype) == str(theirs.dtype).replace("torch.", ""), f"{path}: {ours.dtype} vs {theirs.dtype}"
        assert tuple(ours.shape) == tuple(theirs.shape), f"{path}: {ours.shape} vs {tuple(theirs.shape)}"
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=path)
        return
    assert type(ours) is type(theirs), f"{path}: {type(ours).__name__} vs {type(theirs).__name__}"
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs), path
        for k in theirs:
            assert_same(ours[k], theirs[k], f"{path}[{k!r}]")
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs), path
        for i, (o, t) in enumerate(zip(ours, theirs)):
            assert_same(o, t, f"{path}[{i}]")
    elif isinstance(theirs, np.ndarray):
        np.testing.assert_array_equal(ours, theirs)
    else:
        assert ours == theirs, path


def as_lists(batches):
    return [b.tolist() if hasattr(b, "tolist") else b for b in batches]


# ------------------------------------------------------------------ default_collate / default_convert
COLLATE_CASES = {
    "ints": [0, 1, 2, 3],
    "floats_are_float64": [0.5, 1.5],
    "int_then_float_is_float32": [1, 2.5],
    "float_then_int": [2.5, 1],
    "bools": [True, False],
    "bool_and_int": [True, 2],
    "np_float32_scalars": [np.float32(1), np.float32(2)],
    "np_float64_scalars": [np.float64(1), np.float64(2)],
    "np_int32_scalars": [np.int32(1), np.int32(2)],
    "np_bool_scalars": [np.bool_(True), np.bool_(False)],
    "np_arrays": [np.zeros((2, 3), np.float32), np.ones((2, 3), np.float32)],
    "np_int8_arrays": [np.arange(3, dtype=np.int8), np.arange(3, dtype=np.int8)],
    "np_0d_arrays": [np.array(1.0), np.array(2.0)],
    "tensors": [T(np.arange(6.0).reshape(2, 3)), T(np.ones((2, 3)))],
    "tensors_0d": [T(np.array(3)), T(np.array(4))],
    "tensors_float32": [T(np.arange(4, dtype=np.float32)), T(np.ones(4, np.float32))],
    "tensor_label_tuples": [(T(np.arange(3.0)), 0), (T(np.ones(3)), 1)],
    "strings": ["a", "bc", "d"],
    "bytes": [b"a", b"b"],
    "tuples_with_strings": [("a", 1), ("b", 2)],
    "lists": [[0, 1], [2, 3]],
    "dicts": [{"A": 0, "B": 1.5}, {"A": 100, "B": 2.5}],
    "nested": [{"x": (T(np.zeros(2)), [1, "s"]), "y": {"z": np.float32(1)}},
               {"x": (T(np.ones(2)), [2, "t"]), "y": {"z": np.float32(2)}}],
    "namedtuples": [Point(0, 0.5), Point(1, 1.5)],
    "namedtuple_of_tensors": [Point(T(np.zeros(2)), "a"), Point(T(np.ones(2)), "b")],
}


@pytest.mark.parametrize("name", list(COLLATE_CASES))
def test_default_collate_equals_torch(name):
    spec = COLLATE_CASES[name]
    assert_same(D.default_collate(build(spec, "mt")), TD.default_collate(build(spec, "torch")))


@pytest.mark.parametrize("sample", [
    np.arange(3, dtype=np.int32), np.float32(1.5), 1.0, 3, "s", (np.zeros(2), 1), [np.ones(1), "a"],
    {"a": np.array([1, 2])}, Point(np.array(0), np.array(1.0)), np.array(["a", "b"]),
], ids=lambda s: type(s).__name__)
def test_default_convert_equals_torch(sample):
    assert_same(D.default_convert(sample), TD.default_convert(sample))


def test_default_convert_shares_memory_with_numpy_arrays_as_torch_as_tensor():
    a = np.zeros(3)
    t = D.default_convert(a)
    a[0] = 5.0
    assert t.numpy()[0] == 5.0


def test_default_collate_keeps_the_graph_of_tensors_that_require_grad():
    xs = [mt.randn(2, requires_grad=True) for _ in range(3)]
    batch = D.default_collate(xs)
    assert batch.requires_grad and batch.shape == (3, 2)
    batch.sum().backward()
    np.testing.assert_array_equal(xs[1].grad.numpy(), np.ones(2))


def _error_of(fn, *args):
    with pytest.raises(Exception) as info:
        fn(*args)
    return info.type, str(info.value)


@pytest.mark.parametrize("spec", [
    [T(np.zeros(3)), T(np.zeros(4))],
    [np.zeros((2, 2)), np.zeros((2, 3))],
    [[1, 2], [3]],
    [object()],
    [np.array(["a"])],
], ids=["tensor_sizes", "array_sizes", "list_lengths", "unknown_type", "string_array"])
def test_default_collate_errors_equal_torch(spec):
    ours = _error_of(D.default_collate, build(spec, "mt"))
    theirs = _error_of(TD.default_collate, build(spec, "torch"))
    assert ours == theirs


def test_collate_fn_map_is_extensible():
    class Box:
        def __init__(self, v):
            self.v = v

    fn_map = {**D._collate.default_collate_fn_map, Box: lambda batch, *, collate_fn_map: sum(b.v for b in batch)}
    assert D._collate.collate([(Box(1), 2), (Box(3), 4)], collate_fn_map=fn_map)[0] == 4


# ------------------------------------------------------------------ samplers
@given(loader_cases)
def test_batch_sampler_equals_torch(case):
    n, bs, drop_last = case
    ours, theirs = D.BatchSampler(range(n), bs, drop_last), TD.BatchSampler(range(n), bs, drop_last)
    assert list(ours) == list(theirs)
    assert len(ours) == len(theirs)


def test_sequential_sampler_equals_torch():
    assert list(D.SequentialSampler(range(5))) == list(TD.SequentialSampler(range(5)))
    assert len(D.SequentialSampler([1, 2, 3])) == 3


@pytest.mark.parametrize("make", [
    lambda m: m.RandomSampler(range(3), num_samples=0),
    lambda m: m.RandomSampler([]),
    lambda m: m.RandomSampler(range(3), replacement=1),
    lambda m: m.RandomSampler(range(3), num_samples=2.0),
    lambda m: m.BatchSampler(range(3), 0, False),
    lambda m: m.BatchSampler(range(3), True, False),
    lambda m: m.BatchSampler(range(3), 2, 1),
    lambda m: m.WeightedRandomSampler([1.0], 0),
    lambda m: m.WeightedRandomSampler([1.0], 2, replacement=None),
    lambda m: m.WeightedRandomSampler([[1.0, 2.0]], 2),
])
def test_sampler_argument_errors_equal_torch(make):
    assert _error_of(make, D) == _error_of(make, TD)


@pytest.mark.parametrize("weights, n, replacement", [
    ([1.0, -1.0], 2, True), ([0.0, 0.0], 2, True), ([1.0, float("inf")], 2, True),
    ([1.0, float("nan")], 2, True), ([1.0, 0.0, 1.0], 4, False),
])
def test_weighted_sampler_bad_weights_raise_as_torch_when_iterated(weights, n, replacement):
    ours = D.WeightedRandomSampler(weights, n, replacement)  # accepted, as PyTorch
    theirs = TD.WeightedRandomSampler(weights, n, replacement)
    assert _error_of(list, ours) == _error_of(list, theirs)


def test_random_sampler_is_a_fresh_permutation_each_epoch_reproducible_under_manual_seed():
    mt.manual_seed(0)
    s = D.RandomSampler(range(20))
    first, second = list(s), list(s)
    assert sorted(first) == list(range(20)) and sorted(second) == list(range(20))
    assert first != second
    mt.manual_seed(0)
    assert list(s) == first and list(s) == second


@pytest.mark.parametrize("make_gen", [
    lambda: np.random.default_rng(7),
    lambda: torch.Generator().manual_seed(7),  # any object with manual_seed / initial_seed
], ids=["numpy", "manual_seed_object"])
def test_random_sampler_generator_reproducible(make_gen):
    a, b = D.RandomSampler(range(30), generator=make_gen()), D.RandomSampler(range(30), generator=make_gen())
    epochs_a, epochs_b = [list(a) for _ in range(3)], [list(b) for _ in range(3)]
    assert epochs_a == epochs_b
    assert epochs_a[0] != epochs_a[1]
    assert all(sorted(e) == list(range(30)) for e in epochs_a)


def test_manual_seed_object_reseeded_with_another_seed_starts_another_stream():
    g = torch.Generator().manual_seed(1)
    s = D.RandomSampler(range(30), generator=g)
    one = list(s)
    g.manual_seed(2)
    two = list(s)
    assert list(D.RandomSampler(range(30), generator=torch.Generator().manual_seed(2))) == two != one


def test_generator_of_wrong_type_is_a_type_error():
    with pytest.raises(TypeError, match="numpy.random.Generator.*got int"):
        list(D.RandomSampler(range(3), generator=3))


def test_random_sampler_num_samples_and_replacement():
    s = D.RandomSampler(range(4), num_samples=10, generator=np.random.default_rng(0))
    out = list(s)
    assert len(out) == len(s) == 10
    assert sorted(out[:8]) == [0, 0, 1, 1, 2, 2, 3, 3]  # two whole permutations, then a cut one
    r = list(D.RandomSampler(range(4), replacement=True, num_samples=50, generator=np.random.default_rng(0)))
    assert len(r) == 50 and set(r) <= {0, 1, 2, 3} and len(set(r)) == 4


def test_subset_random_sampler_permutes_the_indices():
    s = D.SubsetRandomSampler([10, 20, 30, 40], generator=np.random.default_rng(0))
    assert sorted(s) == [10, 20, 30, 40] and len(s) == 4


def test_weighted_random_sampler_frequencies_and_no_replacement():
    s = D.WeightedRandomSampler([0.0, 1.0, 3.0], 4000, generator=np.random.default_rng(0))
    counts = np.bincount(list(s), minlength=3) / 4000
    assert counts[0] == 0 and abs(counts[2] - 0.75) < 0.03
    w = D.WeightedRandomSampler([1.0, 0.0, 1.0, 5.0], 4, replacement=False, generator=np.random.default_rng(0))
    out = list(w)
    assert sorted(out) == [0, 1, 2, 3] and out[-1] == 1  # the zero weight comes last, as torch.multinomial
    assert len(w) == 4 and str(w.weights.dtype) == "float64"
    assert list(D.WeightedRandomSampler(mt.tensor([0.0, 1.0]), 3)) == [1, 1, 1]  # Tensor weights


# ------------------------------------------------------------------ datasets
def test_tensor_dataset_equals_torch():
    x, y = np.arange(12.0).reshape(4, 3), np.array([0, 1, 0, 1])
    ours, theirs = D.TensorDataset(mt.tensor(x), mt.tensor(y)), TD.TensorDataset(torch.tensor(x), torch.tensor(y))
    assert len(ours) == len(theirs) == 4
    for i in (0, 3, -1):
        assert_same(ours[i], theirs[i])
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        D.TensorDataset(mt.zeros(2), mt.zeros(3))


def test_concat_dataset_equals_torch():
    parts = [range(3), range(10, 12), range(20, 24)]
    ours, theirs = D.ConcatDataset(parts), TD.ConcatDataset(parts)
    assert len(ours) == len(theirs) == 9 and ours.cumulative_sizes == theirs.cumulative_sizes
    assert [ours[i] for i in range(-9, 9)] == [theirs[i] for i in range(-9, 9)]
    for make in [lambda m: m.ConcatDataset([]), lambda m: m.ConcatDataset(parts)[-10]]:
        assert _error_of(make, D) == _error_of(make, TD)

    class It(D.IterableDataset):
        def __iter__(self):
            return iter(range(2))

    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        D.ConcatDataset([It()])
    assert isinstance(D.TensorDataset(mt.zeros(2)) + D.TensorDataset(mt.ones(3)), D.ConcatDataset)
    assert list(It() + It()) == [0, 1, 0, 1]  # ChainDataset


def test_subset_and_stack_dataset():
    sub = D.Subset(list("abcdef"), [5, 0, 2])
    assert [sub[i] for i in range(3)] == ["f", "a", "c"] and sub.__getitems__([0, 2]) == ["f", "c"]

    def getitem_only_subclass(m):  # DataLoader would bypass its __getitem__ through __getitems__
        return type("Doubled", (m.Subset,), {"__getitem__": lambda self, i: 2 * self.dataset[i]})(range(3), [0])

    assert _error_of(getitem_only_subclass, D) == _error_of(getitem_only_subclass, TD)
    st_ = D.StackDataset(range(3), "xyz")
    assert st_[1] == (1, "y") and len(st_) == 3
    assert D.StackDataset(a=range(2), b="pq")[1] == {"a": 1, "b": "q"}
    for make in [lambda m: m.StackDataset(range(2), "abc"), lambda m: m.StackDataset(),
                 lambda m: m.StackDataset([1], a=[1])]:
        assert _error_of(make, D) == _error_of(make, TD)


@pytest.mark.parametrize("n, lengths", [
    (10, [3, 7]), (10, [0.33, 0.33, 0.34]), (7, [0.5, 0.5]), (30, [0.3, 0.3, 0.4]), (5, [1.0]), (10, [10, 0]),
])
def test_random_split_sizes_equal_torch_and_partition(n, lengths):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = D.random_split(range(n), lengths), TD.random_split(range(n), lengths)
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    assert sorted(i for s in ours for i in s) == list(range(n))


@given(st.integers(0, 40), fraction_lists)
def test_random_split_fraction_sizes_equal_torch(n, fractions):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = _result_or_error(D.random_split, range(n), fractions), \
            _result_or_error(TD.random_split, range(n), fractions)
    if isinstance(theirs, tuple):  # float sums just over 1 are not fractions for PyTorch either
        assert ours == theirs
    else:
        assert [len(s) for s in ours] == [len(s) for s in theirs]


def _result_or_error(fn, *args):
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - compared with PyTorch's
        return type(e), str(e)


def test_random_split_errors_and_warning_equal_torch():
    for lengths in ([3, 3], [1.2, -0.2], [0.5, 0.3]):
        assert _error_of(D.random_split, range(10), lengths) == _error_of(TD.random_split, range(10), lengths)
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        D.random_split(range(2), [0.1, 0.1, 0.8])


def test_random_split_reproducible():
    a = [list(s) for s in D.random_split(range(20), [5, 15], generator=np.random.default_rng(3))]
    b = [list(s) for s in D.random_split(range(20), [5, 15], generator=np.random.default_rng(3))]
    mt.manual_seed(4)
    c = [list(s) for s in D.random_split(range(20), [5, 15])]
    mt.manual_seed(4)
    assert a == b and c == [list(s) for s in D.random_split(range(20), [5, 15])]


# ------------------------------------------------------------------ DataLoader, one process
class Count(D.IterableDataset):
    """0 .. n-1, each worker taking every num_workers-th item when ``shard``; with ``__len__``."""

    def __init__(self, n, shard=True):
        self.n, self.shard = n, shard

    def __iter__(self):
        info = D.get_worker_info()
        if info is None or not self.shard:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n


class TorchCount(TD.IterableDataset):
    def __init__(self, n, shard=True):
        self.n, self.shard = n, shard

    def __iter__(self):
        info = TD.get_worker_info()
        if info is None or not self.shard:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n


@given(loader_cases)
def test_loader_sequential_batches_and_len_equal_torch(case):
    n, bs, drop_last = case
    x = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
    ours = D.DataLoader(D.TensorDataset(mt.tensor(x), mt.arange(n)), batch_size=bs, drop_last=drop_last)
    theirs = TD.DataLoader(TD.TensorDataset(torch.tensor(x), torch.arange(n)), batch_size=bs, drop_last=drop_last)
    assert len(ours) == len(theirs)
    out_o, out_t = list(ours), list(theirs)
    assert len(out_o) == len(out_t) == len(theirs)
    for o, t in zip(out_o, out_t):
        assert_same(o, t)


def test_loader_dict_samples_batch_size_none_batch_sampler_and_sampler_equal_torch():
    data = [{"id": i, "name": f"n{i}", "x": np.full(2, i, np.float32)} for i in range(5)]
    for kwargs in [dict(batch_size=2), dict(batch_size=None), dict(batch_sampler=[[3, 1], [0]]),
                   dict(sampler=[4, 0, 2], batch_size=2), dict(batch_size=3, drop_last=True)]:
        ours, theirs = D.DataLoader(data, **kwargs), TD.DataLoader(data, **kwargs)
        assert len(ours) == len(theirs), kwargs
        assert_same(list(ours), list(theirs))


def _error_kwargs():
    it = Count  # noqa: N806
    return [
        dict(shuffle=True, sampler=[0]), dict(batch_sampler=[[0]], batch_size=2),
        dict(batch_sampler=[[0]], shuffle=True),
        dict(batch_sampler=[[0]], sampler=[0]), dict(batch_sampler=[[0]], drop_last=True),
        dict(batch_size=None, drop_last=True), dict(num_workers=-1), dict(timeout=-1), dict(prefetch_factor=2),
        dict(persistent_workers=True), dict(num_workers=1, prefetch_factor=-1), dict(batch_size=0),
        dict(multiprocessing_context="fork"), dict(num_workers=1, multiprocessing_context="nope"),
        dict(dataset=it(3), shuffle=True), dict(dataset=it(3), sampler=[0]), dict(dataset=it(3), batch_sampler=[[0]]),
    ]


@pytest.mark.parametrize("kwargs", _error_kwargs(), ids=lambda k: "-".join(k))
def test_loader_argument_errors_equal_torch(kwargs):
    kwargs = dict(kwargs)
    dataset = kwargs.pop("dataset", range(4))
    torch_dataset = TorchCount(dataset.n) if isinstance(dataset, Count) else dataset
    ours = _error_of(lambda: D.DataLoader(dataset, **kwargs))
    theirs = _error_of(lambda: TD.DataLoader(torch_dataset, **kwargs))
    assert ours[0] is theirs[0] is ValueError
    assert ours[1].replace("Count", "") == theirs[1].replace("TorchCount", "").replace("Count", "")


def test_loader_attributes_are_frozen_and_len_of_unsized_iterable_is_type_error():
    loader = D.DataLoader(range(4))
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is initialized"):
        loader.batch_size = 3
    class Unsized(D.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    with pytest.raises(TypeError, match="has no len"):
        len(D.DataLoader(Unsized()))


@pytest.mark.parametrize("bs, drop_last", [(1, False), (3, False), (3, True), (None, False)])
def test_loader_iterable_dataset_equals_torch(bs, drop_last):
    ours = D.DataLoader(Count(7), batch_size=bs, drop_last=drop_last)
    theirs = TD.DataLoader(TorchCount(7), batch_size=bs, drop_last=drop_last)
    assert len(ours) == len(theirs)
    assert_same(list(ours), list(theirs))


def test_loader_warns_when_an_iterable_yields_more_than_its_len():
    class Liar(Count):
        def __len__(self):
            return 2

    loader = D.DataLoader(Liar(3), batch_size=None)
    assert len(loader) == 2
    with pytest.warns(UserWarning, match="was reported to be 2"):
        list(loader)


def test_shuffle_reproducible_under_manual_seed_and_generator():
    def epochs(loader, k=2):
        return [[i for b in loader for i in b.tolist()] for _ in range(k)]

    mt.manual_seed(0)
    a = epochs(D.DataLoader(range(16), batch_size=4, shuffle=True))
    mt.manual_seed(0)
    b = epochs(D.DataLoader(range(16), batch_size=4, shuffle=True))
    assert a == b and a[0] != a[1] and all(sorted(e) == list(range(16)) for e in a)
    g1 = epochs(D.DataLoader(range(16), batch_size=4, shuffle=True, generator=np.random.default_rng(1)))
    g2 = epochs(D.DataLoader(range(16), batch_size=4, shuffle=True, generator=np.random.default_rng(1)))
    assert g1 == g2 and g1[0] != g1[1]


def test_pin_memory_is_accepted_as_a_no_op():
    assert as_lists(D.DataLoader(range(3), batch_size=2, pin_memory=True)) == [[0, 1], [2]]


def test_loader_moves_nothing_between_devices(device):
    ds = D.TensorDataset(mt.arange(6).reshape(3, 2).to(device=device), mt.arange(3).to(device=device))
    x, y = next(iter(D.DataLoader(ds, batch_size=2)))
    assert x.device == device and y.device == device and x.shape == (2, 2)
    np.testing.assert_array_equal(x.cpu().numpy(), [[0, 1], [2, 3]])


# ------------------------------------------------------------------ DataLoader, worker processes
class Probe(D.Dataset):
    """Sample i is (i, worker id, worker seed, a draw from np.random, a draw from mt, the init tag)."""

    tag = -1

    def __len__(self):
        return 6

    def __getitem__(self, i):
        info = D.get_worker_info()
        return i, info.id, info.seed, float(np.random.rand()), mt.rand(1).item(), self.tag


def _tag(worker_id):
    D.get_worker_info().dataset.tag = 100 + worker_id


def test_workers_preserve_order_equal_single_process_and_torch():
    x = np.arange(20.0).reshape(10, 2)
    ours = D.DataLoader(D.TensorDataset(mt.tensor(x)), batch_size=3, num_workers=2)
    theirs = TD.DataLoader(TD.TensorDataset(torch.tensor(x)), batch_size=3)
    assert_same(list(ours), list(theirs))
    assert as_lists(D.DataLoader(range(9), batch_size=2, num_workers=2, prefetch_factor=1)) == \
        as_lists(D.DataLoader(range(9), batch_size=2))


def test_workers_seeded_distinctly_reproducibly_and_init_fn_called():
    def run():
        mt.manual_seed(0)
        return list(D.DataLoader(Probe(), batch_size=None, num_workers=2, worker_init_fn=_tag))

    first, second = run(), run()
    assert first == second  # the same seed, the same worker seeds and draws
    assert [s[0] for s in first] == list(range(6))
    assert [s[1] for s in first] == [0, 1, 0, 1, 0, 1]  # task k goes to worker k mod 2
    assert [s[5] for s in first] == [100, 101] * 3  # worker_init_fn(worker_id) ran in each worker
    seeds = {s[1]: s[2] for s in first}
    assert seeds[1] == seeds[0] + 1  # base_seed + worker_id, as PyTorch
    assert first[0][3] != first[1][3] and first[0][4] != first[1][4]  # np.random and mt differ per worker
    mt.manual_seed(1)
    assert list(D.DataLoader(Probe(), batch_size=None, num_workers=2))[0][2] != first[0][2]


def test_numpy_worker_seeding_equals_torch():
    from torch.utils.data._utils.worker import _generate_state as torch_generate_state

    for base_seed, worker_id in [(0, 0), (12345, 1), (2**62 + 7, 3)]:
        assert _generate_state(base_seed, worker_id) == torch_generate_state(base_seed, worker_id)


class Failing(D.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 3:
            raise ValueError(f"bad sample {i}")
        if i == 5:
            raise KeyError("missing")
        return i


def test_worker_exception_is_reraised_naming_the_worker():
    it = iter(D.DataLoader(Failing(), num_workers=2))
    assert [next(it).item() for _ in range(3)] == [0, 1, 2]
    with pytest.raises(ValueError, match=r"Caught ValueError in DataLoader worker process 1\.(.|\n)*bad sample 3"):
        next(it)
    assert next(it).item() == 4  # the loader goes on, as PyTorch's
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 1"):
        next(it)


def _broken_init(worker_id):
    raise RuntimeError(f"init failed in {worker_id}")


def _unpicklable_batch(batch):
    return lambda: batch


def test_worker_init_fn_and_pickling_errors_are_reraised():
    with pytest.raises(RuntimeError, match="Caught RuntimeError in DataLoader worker process 0(.|\n)*init failed in 0"):
        list(D.DataLoader(range(4), num_workers=2, worker_init_fn=_broken_init))
    with pytest.raises(Exception, match="in DataLoader worker process 0"):
        list(D.DataLoader(range(4), num_workers=2, collate_fn=_unpicklable_batch))  # a batch that cannot pickle


def test_iterable_dataset_with_workers_does_not_duplicate_and_equals_torch():
    for bs in (None, 2, 3):
        ours = as_lists(D.DataLoader(Count(9), batch_size=bs, num_workers=2))
        theirs = as_lists(TD.DataLoader(TorchCount(9), batch_size=bs, num_workers=2))
        assert ours == theirs, bs
        flat = [i for b in ours for i in (b if isinstance(b, list) else [b])]
        assert sorted(flat) == list(range(9))
    # not sharded: each worker yields the whole stream, as PyTorch documents
    assert sorted(as_lists(D.DataLoader(Count(3, shard=False), batch_size=None, num_workers=2))) == [0, 0, 1, 1, 2, 2]


def test_persistent_workers_survive_epochs_and_a_broken_off_epoch():
    loader = D.DataLoader(range(8), batch_size=2, num_workers=2, persistent_workers=True)
    assert as_lists(loader) == [[0, 1], [2, 3], [4, 5], [6, 7]]
    pids = [w.pid for w in loader._iterator._pool.workers]
    it = iter(loader)
    assert next(it).tolist() == [0, 1]  # break off mid-epoch: the next epoch must start clean
    assert as_lists(loader) == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert [w.pid for w in loader._iterator._pool.workers] == pids
    assert all(w.is_alive() for w in loader._iterator._pool.workers)
    iterable = D.DataLoader(Count(5), batch_size=2, num_workers=2, persistent_workers=True)
    assert as_lists(iterable) == as_lists(iterable) == [[0, 2], [1, 3], [4]]


def test_workers_shut_down_at_epoch_end_and_when_the_iterator_is_deleted():
    it = iter(D.DataLoader(range(4), num_workers=2))
    workers = list(it._pool.workers)
    list(it)
    assert not any(w.is_alive() for w in workers)
    it = iter(D.DataLoader(range(100), num_workers=2))
    next(it)
    workers = list(it._pool.workers)
    del it
    assert not any(w.is_alive() for w in workers)


class Slow(D.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(0.5)
        return i


class Dies(D.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        os._exit(1)


def test_timeout_and_dead_worker_raise_runtime_error():
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.1 seconds"):
        next(iter(D.DataLoader(Slow(), num_workers=1, timeout=0.1)))
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+(, \d+)?\) exited unexpectedly"):
        list(D.DataLoader(Dies(), num_workers=2))


def test_get_worker_info_is_none_in_the_main_process_and_read_only():
    assert D.get_worker_info() is None
    info = D.WorkerInfo(id=0, num_workers=1, seed=3, dataset=None)
    with pytest.raises(RuntimeError, match="Cannot assign attributes to WorkerInfo objects"):
        info.id = 2

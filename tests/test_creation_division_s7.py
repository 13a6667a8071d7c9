"""Silently wrong results found by the session-7 break-it run: integer division by out-of-range numbers, the
legacy ``Tensor(...)`` constructors, random fills (integer dtypes, negative std, non-contiguous targets),
``arange``/``linspace`` rounding and dtypes, and the dtype of ``full``/``tensor`` and friends.

Each is compared with PyTorch through ``helpers`` and pinned by a hand-worked value at the edge.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_ln as mt
from helpers import assert_close, compare_with_torch

torch = pytest.importorskip("torch")

U8 = np.array([3, 250], dtype=np.uint8)
I8 = np.array([3, -100], dtype=np.int8)


# ================================================================ 1. integer true division by any number

# (name, f(lib, x)): a uint8/int8 tensor with a number or 0-d tensor that the int dtype cannot hold
TRUE_DIV = {
    "u8/256": (U8, lambda lib, x: x / 256),
    "u8/300": (U8, lambda lib, x: x / 300),
    "i8/200": (I8, lambda lib, x: x / 200),
    "u8/tensor(-7)": (U8, lambda lib, x: x / lib.tensor(-7)),
    "u8/tensor(256)": (U8, lambda lib, x: x / lib.tensor(256)),
    "u8/np.int64(256)": (U8, lambda lib, x: x / np.int64(256)),
    "300/u8": (U8, lambda lib, x: 300 / x),
    "-7/u8": (U8, lambda lib, x: -7 / x),
    "i16/70000": (np.array([3, 250], np.int16), lambda lib, x: x / 70000),
    "i32/(2**31+5)": (np.array([3, -250], np.int32), lambda lib, x: x / (2**31 + 5)),
    "i32/2**40": (np.array([3, -250], np.int32), lambda lib, x: x / 2**40),
    "i8/tensor(200, int16)": (I8, lambda lib, x: x / lib.tensor(200, dtype=lib.int16)),
    "true_divide": (U8, lambda lib, x: lib.true_divide(x, 256)),
    "Tensor.true_divide": (U8, lambda lib, x: x.true_divide(300)),
    "div(rounding_mode=None)": (U8, lambda lib, x: lib.div(x, 256, rounding_mode=None)),
    "divide": (U8, lambda lib, x: lib.divide(x, 256)),
    "Tensor.div": (U8, lambda lib, x: x.div(lib.tensor(-7))),
    "bool/256": (np.array([True, False]), lambda lib, x: x / 256),
    "u8/True": (U8, lambda lib, x: x / True),
}


@pytest.mark.parametrize("name", sorted(TRUE_DIV))
def test_integer_true_division_divides_the_real_values(name):
    x, f = TRUE_DIV[name]
    compare_with_torch(lambda a: f(mt, a), lambda a: f(torch, a), [x])


def test_integer_true_division_hand_worked():
    # 3/256 and 250/256 are exact binary fractions (0.01171875, 0.9765625); the old code cast 256 to uint8 (0)
    # first and gave [inf, inf]
    assert (mt.tensor(U8) / 256).tolist() == [0.01171875, 0.9765625]
    # -100/200 = -0.5 exactly (200 as int8 is -56: the old result was 1.7857...)
    assert (mt.tensor(I8) / 200).tolist()[1] == -0.5
    # 250 / -7 in float32: -35.714287 (the old code read -7 as uint8 249)
    assert (mt.tensor(U8) / mt.tensor(-7)).numpy()[1] == np.float32(250) / np.float32(-7)
    out = mt.tensor(U8) / 256
    assert out.dtype == mt.float32


def test_integer_true_division_by_an_int_beyond_uint64_raises_overflow_error_as_torch():
    for big in (2**64, -(2**63) - 1, 2**70):
        with pytest.raises(OverflowError):
            torch.tensor([3]) / big
        with pytest.raises(OverflowError, match="int too big"):
            mt.tensor([3]) / big
    # 2**63 still fits PyTorch's unsigned reading: 3 / 2**63 = 3·2**-63
    assert (mt.tensor([3]) / 2**63).item() == float(np.float32(3 * 2.0**-63))


# the rounding divisions keep the integer dtype, so the number wraps into it first, as PyTorch (checked above
# for true division that it must not)
ROUNDING = {
    "u8//300": (U8, lambda lib, x: x // 300),
    "u8%300": (U8, lambda lib, x: x % 300),
    "u8%-7": (U8, lambda lib, x: x % -7),
    "floor_divide": (U8, lambda lib, x: lib.floor_divide(x, 300)),
    "remainder": (U8, lambda lib, x: lib.remainder(x, -7)),
    "remainder(-300)": (U8, lambda lib, x: x.remainder(-300)),
    "fmod(u8, 300)": (U8, lambda lib, x: lib.fmod(x, 300)),
    "fmod(i8, 200)": (I8, lambda lib, x: lib.fmod(x, 200)),
    "fmod(u8, tensor(300))": (U8, lambda lib, x: x.fmod(lib.tensor(300))),
    "div floor": (U8, lambda lib, x: lib.div(x, 300, rounding_mode="floor")),
    "div trunc": (I8, lambda lib, x: lib.div(x, 200, rounding_mode="trunc")),
    "div floor -7": (I8, lambda lib, x: lib.div(x, -7, rounding_mode="floor")),
    "div trunc tensor(-200)": (I8, lambda lib, x: x.div(lib.tensor(-200), rounding_mode="trunc")),
    "u8//tensor(-7)": (U8, lambda lib, x: x // lib.tensor(-7)),
    "-7//u8": (U8, lambda lib, x: -7 // x),
    "300//u8": (U8, lambda lib, x: 300 // x),
    "300%u8": (U8, lambda lib, x: 300 % x),
    "u8//256.0": (U8, lambda lib, x: x // 256.0),
    "u8%2.5": (U8, lambda lib, x: x % 2.5),
}


@pytest.mark.parametrize("name", sorted(ROUNDING))
def test_rounding_divisions_by_out_of_range_numbers_match_torch(name):
    x, f = ROUNDING[name]
    compare_with_torch(lambda a: f(mt, a), lambda a: f(torch, a), [x])


def test_rounding_division_by_a_number_that_wraps_to_zero_raises_as_torch():
    # 256 wraps to uint8 0 and -256 to int8 0: PyTorch's RuntimeError ZeroDivisionError
    for x, n in ((U8, 256), (I8, -256)):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            torch.tensor(x) // n
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            mt.tensor(x) // n
    # hand-worked: 250 // (300 mod 256 = 44) = 5, 250 % 44 = 30
    assert (mt.tensor(U8) // 300).tolist() == [0, 5] and (mt.tensor(U8) % 300).tolist() == [3, 30]


# ================================================================ 2. PyTorch's legacy constructors

LEGACY = {
    "Tensor([1, 2])": lambda lib: lib.Tensor([1, 2]),
    "Tensor([True])": lambda lib: lib.Tensor([True]),
    "Tensor([[1, 2], [3, 4]])": lambda lib: lib.Tensor([[1, 2], [3, 4]]),
    "Tensor((2, 3))": lambda lib: lib.Tensor((2, 3)),
    "Tensor([np.float64(1.5)])": lambda lib: lib.Tensor([np.float64(1.5)]),
    "Tensor([300, 1e40])": lambda lib: lib.Tensor([300, 1e40]),
    "Tensor()": lambda lib: lib.Tensor(),
    "Tensor([])": lambda lib: lib.Tensor([]),
    "Tensor(0)": lambda lib: lib.Tensor(0),
    "Tensor([1, 2], device='cpu')": lambda lib: lib.Tensor([1, 2], device="cpu"),
    "Tensor(tensor([1, 2]))": lambda lib: lib.Tensor(lib.tensor([1, 2])),
    "FloatTensor([1, 2])": lambda lib: lib.FloatTensor([1, 2]),
    "DoubleTensor([1, 2])": lambda lib: lib.DoubleTensor([1, 2]),
    "LongTensor([1.7, -2.7])": lambda lib: lib.LongTensor([1.7, -2.7]),
    "LongTensor(np.array([1.5]))": lambda lib: lib.LongTensor(np.array([1.5])),
    "IntTensor([[1, 2], [3, 4]])": lambda lib: lib.IntTensor([[1, 2], [3, 4]]),
    "BoolTensor([2, 0])": lambda lib: lib.BoolTensor([2, 0]),
    "ByteTensor([255, 0, -1])": lambda lib: lib.ByteTensor([255, 0, -1]),
    "CharTensor([127, -128])": lambda lib: lib.CharTensor([127, -128]),
    "HalfTensor([1, 2])": lambda lib: lib.HalfTensor([1, 2]),
    "DoubleTensor()": lambda lib: lib.DoubleTensor(),
}


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_legacy_constructors_from_data_match_torch(name):
    ours, theirs = LEGACY[name](mt), LEGACY[name](torch)
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "") and tuple(ours.shape) == tuple(theirs.shape)
    assert_close(ours, theirs, ours.dtype, name)


@pytest.mark.parametrize("make", [lambda lib: lib.Tensor(3), lambda lib: lib.Tensor(2, 3), lambda lib: lib.Tensor(2, 0),
                                  lambda lib: lib.Tensor(lib.Size([2, 3])), lambda lib: lib.Tensor(np.int64(3)),
                                  lambda lib: lib.FloatTensor(2, 3), lambda lib: lib.IntTensor(2),
                                  lambda lib: lib.LongTensor(lib.Size([2]))])
def test_legacy_constructors_from_sizes_give_the_shape_and_dtype_of_torch(make):
    ours, theirs = make(mt), make(torch)  # PyTorch's memory is uninitialised: only shape and dtype compare
    assert tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    assert not ours.numpy().any()  # ours: zeros (the docstring says so)


def test_legacy_tensor_hand_worked_and_still_a_tensor():
    # Tensor(3) is a length-3 float32 tensor, not the 0-d int64 tensor holding 3 it used to be
    t = mt.Tensor(3)
    assert t.shape == (3,) and t.dtype == mt.float32 and isinstance(t, mt.Tensor)
    assert mt.Tensor([1, 2]).tolist() == [1.0, 2.0] and mt.Tensor([1, 2]).dtype == mt.float32
    assert isinstance(mt.LongTensor([1]), mt.Tensor) and isinstance(mt.tensor([1]), mt.LongTensor)
    assert not isinstance(mt.tensor([1.0]), mt.LongTensor)
    # a subclass (Parameter) and minitorch_ln's own keywords keep the array constructor
    p = mt.nn.Parameter(mt.Tensor(2, 3))
    assert p.dtype == mt.float32 and p.shape == (2, 3)
    a = np.arange(3.0)  # float64
    w = mt.Tensor(a, requires_grad=True)
    assert w.dtype == mt.float64 and np.shares_memory(w.array, a)
    assert mt.Tensor([1, 2], dtype=mt.int64).dtype == mt.int64


def test_legacy_constructor_refusals_match_torch():
    cases = [(lambda lib: lib.Tensor(2.5), TypeError), (lambda lib: lib.Tensor(True), TypeError),
             (lambda lib: lib.Tensor(-1), RuntimeError), (lambda lib: lib.Tensor(2, 3.0), TypeError),
             (lambda lib: lib.Tensor("ab"), TypeError), (lambda lib: lib.Tensor([[1, 2], [3]]), ValueError),
             (lambda lib: lib.FloatTensor(lib.tensor([1, 2])), TypeError),
             (lambda lib: lib.ByteTensor([300]), RuntimeError), (lambda lib: lib.LongTensor([float("nan")]), RuntimeError),
             (lambda lib: lib.LongTensor([2**63]), ValueError)]
    for make, cls in cases:
        with pytest.raises(cls):
            make(torch)
        with pytest.raises(cls):
            make(mt)


def test_tensor_with_an_integer_dtype_refuses_python_values_out_of_range_as_torch():
    values = [-1, -128, -129, -255, -256, 127, 128, 255, 256, 300, 2**15, 2**31, 300.5, -1.5, -200.0, 1e10,
              float("inf"), float("nan"), True, 1.5]
    for dt in ("uint8", "int8", "int16", "int32", "int64"):
        for v in values:
            try:
                want = torch.tensor([v], dtype=getattr(torch, dt)).tolist()
            except RuntimeError:
                with pytest.raises(RuntimeError, match="without overflow"):
                    mt.tensor([v], dtype=getattr(mt, dt))
                continue
            assert mt.tensor([v], dtype=getattr(mt, dt)).tolist() == want, (dt, v)
    # hand-worked: 300 used to wrap to 300 - 256 = 44; -1 is uint8 255 in PyTorch (ints down to -255 wrap)
    with pytest.raises(RuntimeError, match="uint8"):
        mt.tensor([300], dtype=mt.uint8)
    assert mt.tensor([-1], dtype=mt.uint8).tolist() == [255]


# ================================================================ 3. random draws need a float dtype; std >= 0

RANDOM_INT = [
    lambda lib: lib.randn(2, dtype=lib.int64), lambda lib: lib.rand(2, dtype=lib.int64),
    lambda lib: lib.rand(2, dtype=lib.bool), lambda lib: lib.randn(2, dtype=lib.uint8),
    lambda lib: lib.randn_like(lib.tensor([1, 2])), lambda lib: lib.rand_like(lib.tensor([1, 2])),
    lambda lib: lib.tensor([1, 2]).normal_(), lambda lib: lib.tensor([1, 2]).uniform_(),
    lambda lib: lib.tensor([True]).uniform_(), lambda lib: lib.normal(0.0, 1.0, (2,), dtype=lib.int64),
]


@pytest.mark.parametrize("i", range(len(RANDOM_INT)))
def test_random_draws_into_integer_dtypes_raise_not_implemented_as_torch(i):
    with pytest.raises(NotImplementedError) as theirs:
        RANDOM_INT[i](torch)
    with pytest.raises(NotImplementedError) as ours:
        RANDOM_INT[i](mt)
    assert str(theirs.value) in str(ours.value)  # the same kernel and dtype names


@pytest.mark.parametrize("make", [lambda lib: lib.tensor([1.0, 2.0]).normal_(0, -1),
                                  lambda lib: lib.tensor([1, 2]).normal_(0, -1),
                                  lambda lib: lib.nn.init.normal_(lib.zeros(2), 0, -1),
                                  lambda lib: lib.normal(0.0, -1.0, (2,))])
def test_normal_with_a_negative_std_raises_as_torch(make):
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
        make(torch)
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
        make(mt)  # it used to return the draws negated


def test_normal_with_std_zero_is_the_mean():
    mt.manual_seed(0)
    assert mt.zeros(3).normal_(2.5, 0).tolist() == [2.5, 2.5, 2.5]  # mean + 0·z


# ================================================================ 4. in-place draws into a strided view: memory order

STRIDED_FILLS = {
    "t().normal_()": lambda lib: lib.empty(3, 4).t().normal_(),
    "t().normal_() 20x20 (16-block path size)": lambda lib: lib.empty(20, 20).t().normal_(),
    "t().uniform_()": lambda lib: lib.empty(3, 4).t().uniform_(),
    "t().bernoulli_()": lambda lib: lib.empty(3, 4).t().bernoulli_(),
    "t().bernoulli_(p tensor)": lambda lib: lib.empty(3, 4).t().bernoulli_(lib.rand(4, 3)),
    "t().exponential_()": lambda lib: lib.empty(3, 4).t().exponential_(),
    "t().random_()": lambda lib: lib.empty(3, 4).t().random_(),
    "t().random_(10)": lambda lib: lib.empty(3, 4).t().random_(10),
    "int64 t().random_()": lambda lib: lib.empty(3, 4, dtype=lib.int64).t().random_(),
    "t().cauchy_()": lambda lib: lib.empty(3, 4).t().cauchy_(),
    "t().log_normal_()": lambda lib: lib.empty(3, 4).t().log_normal_(),
    "t().geometric_(0.3)": lambda lib: lib.empty(3, 4).t().geometric_(0.3),
    "init.normal_(t())": lambda lib: lib.nn.init.normal_(lib.empty(8, 9).t()),
    "init.uniform_(t())": lambda lib: lib.nn.init.uniform_(lib.empty(3, 4).t()),
    "init.trunc_normal_(t())": lambda lib: lib.nn.init.trunc_normal_(lib.empty(3, 4).t()),
    "init.trunc_normal_(t()) rejection": lambda lib: lib.nn.init.trunc_normal_(lib.empty(3, 4).t(), a=1.5, b=3.0),
    "init.xavier_uniform_(t())": lambda lib: lib.nn.init.xavier_uniform_(lib.empty(3, 4).t()),
    "init.kaiming_normal_(t())": lambda lib: lib.nn.init.kaiming_normal_(lib.empty(3, 4).t()),
    "permute(2, 0, 1).normal_()": lambda lib: lib.empty(2, 3, 4).permute(2, 0, 1).normal_(),
    "permute(1, 2, 0).uniform_()": lambda lib: lib.empty(2, 3, 4).permute(1, 2, 0).uniform_(),
    "[:, ::2].normal_() (not permuted)": lambda lib: lib.empty(4, 6)[:, ::2].normal_(),
    "[:, ::2].t().uniform_()": lambda lib: lib.empty(4, 6)[:, ::2].t().uniform_(),
    "transpose with a size-1 axis": lambda lib: lib.empty(4, 1, 3).transpose(0, 2).uniform_(),
    "tracked: (t() * 1).normal_()": lambda lib: (lib.zeros(3, 4, requires_grad=True).t() * 1).normal_(),
}


def _at_seed_0(make):
    """``(make(mt), make(torch))``, each right after ``manual_seed(0)``: the same generator stream."""
    torch.manual_seed(0)
    theirs = make(torch)
    mt.manual_seed(0)
    return make(mt), theirs


@pytest.mark.parametrize("name", sorted(STRIDED_FILLS))
def test_inplace_draws_into_a_strided_view_match_torch_at_a_seed(name):
    ours, theirs = _at_seed_0(STRIDED_FILLS[name])
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    assert_close(ours, theirs.detach(), ours.dtype, name, rtol=0.0, atol=0.0)  # the same stream: bit for bit


def test_a_transposed_fill_is_the_transpose_of_the_contiguous_fill():
    # hand-worked: PyTorch writes memory in order, so filling x.t() gives x's own draws, seen transposed
    mt.manual_seed(3)
    plain = mt.empty(3, 4).normal_()
    mt.manual_seed(3)
    base = mt.empty(3, 4)
    base.t().normal_()
    assert np.array_equal(base.numpy(), plain.numpy())


# ================================================================ 5. arange / linspace / logspace: PyTorch's arithmetic

ARANGE = [(0, 1, 0.1), (-1, 1, 0.3), (10.0, 0, -0.7), (1, 2.5, 0.1), (0, 100, 0.37), (-5, 5, 0.013), (0.1, 50, 0.7),
          (3, 1e4, 1.1), (16777216, 16777220, 1), (0, 1, 1 / 3), (-2.5, 3, 1), (0, 3.5, 1), (0.5, 3, 1), (0, 5, 1.5)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "int16"])
@pytest.mark.parametrize("args", ARANGE, ids=str)
def test_arange_matches_torch_bit_for_bit(args, dtype):
    if dtype.startswith("int") and int(args[2]) == 0:
        pytest.skip("a step that truncates to 0: see test_arange_integer_dtype_with_a_zero_step_raises")
    if dtype == "float16" and max(abs(args[0]), abs(args[1])) > 6e4:
        pytest.skip("past float16's range")
    compare_with_torch(lambda: mt.arange(*args, dtype=getattr(mt, dtype)),
                       lambda: torch.arange(*args, dtype=getattr(torch, dtype)), [], rtol=0.0, atol=0.0)


def test_arange_hand_worked_values_and_dtypes():
    # element 9 is float32(0 + 0.1·9 in double) = float32(0.9) = 0.89999998; the float32 sum 0.1f·9 is 0.90000004
    assert mt.arange(0, 1, 0.1)[9].item() == float(np.float32(0.9))
    # -1 + 0.3·2 = -0.4 in double, then float32(-0.4); the float32 sum gave -0.39999998
    assert mt.arange(-1, 1, 0.3)[2].item() == float(np.float32(-0.4))
    for make in (lambda lib: lib.arange(lib.tensor(3)), lambda lib: lib.arange(lib.tensor(1), 5),
                 lambda lib: lib.arange(lib.tensor(1.5)), lambda lib: lib.arange(1, lib.tensor(4.0)),
                 lambda lib: lib.arange(np.int32(3)), lambda lib: lib.arange(True)):
        compare_with_torch(lambda: make(mt), lambda: make(torch), [], rtol=0.0, atol=0.0)
    # an int64 dtype truncates the bounds first: arange(-2.5, 3) runs -2 .. 2 (5 values), not 6
    assert mt.arange(-2.5, 3, dtype=mt.int64).tolist() == [-2, -1, 0, 1, 2]


def test_arange_refusals():
    for args, kw, cls in [((0, 3, 0.5), {"dtype": "int64"}, ValueError), ((0, 3, 0), {}, RuntimeError),
                          ((0, 3, -1), {}, RuntimeError), ((0, float("inf")), {}, RuntimeError),
                          ((0, 3), {"dtype": "bool"}, NotImplementedError)]:
        with pytest.raises(cls):
            torch.arange(*args, **{k: getattr(torch, v) for k, v in kw.items()})
        with pytest.raises(cls):
            mt.arange(*args, **{k: getattr(mt, v) for k, v in kw.items()})
    with pytest.raises(TypeError):
        mt.arange(mt.tensor([1, 2]))


def test_arange_integer_dtype_with_a_zero_step_raises():
    # deviation: PyTorch fills int32 with zeros here ([0, 0, 0, 0, 0, 0]); a clear error instead
    with pytest.raises(ValueError, match="step must be nonzero"):
        mt.arange(0, 3, 0.5, dtype=mt.int32)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
@pytest.mark.parametrize("args", [(-1, 1, 7), (0.1, 0.9, 9), (1, 1e8, 7), (0, 1, 31), (0.1, 7.3, 100), (-3, 5.5, 1000),
                                  (0, 1, 10), (2.5, -1.25, 9), (0, 1, 1)], ids=str)
def test_linspace_and_logspace_match_torch_bit_for_bit(args, dtype):
    if dtype == "float16" and abs(args[1]) > 6e4:
        pytest.skip("past float16's range")
    compare_with_torch(lambda: mt.linspace(*args, dtype=getattr(mt, dtype)),
                       lambda: torch.linspace(*args, dtype=getattr(torch, dtype)), [], rtol=0.0, atol=0.0)
    if abs(args[1]) < 20 and dtype != "float16":
        compare_with_torch(lambda: mt.logspace(*args, base=2.0, dtype=getattr(mt, dtype)),
                           lambda: torch.logspace(*args, base=2.0, dtype=getattr(torch, dtype)), [], rtol=0.0, atol=0.0)


def test_linspace_hand_worked_middle_value():
    # linspace(-1, 1, 7)[3] counts down from 1: 1 - step·3 with step = float32(2/6) = 0.33333334, fused: the exact
    # product 1.0000000298 leaves -2.98e-8 (an unfused float32 product rounds to 1.0 and gives 0)
    step = np.float32(2) / np.float32(6)
    assert mt.linspace(-1, 1, 7)[3].item() == float(np.float32(1.0 - float(step) * 3))
    assert mt.linspace(-1, 1, 7)[3].item() != 0.0


# ================================================================ 6. dtypes and checked values of full / tensor / randint

FULL = {
    "full([2], tensor(3))": lambda lib: lib.full([2], lib.tensor(3)),
    "full([2], tensor(True))": lambda lib: lib.full([2], lib.tensor(True)),
    "full([2], tensor(3, uint8))": lambda lib: lib.full([2], lib.tensor(3, dtype=lib.uint8)),
    "full([2], tensor(3.0, float64))": lambda lib: lib.full([2], lib.tensor(3.0, dtype=lib.float64)),
    "full([2], np.int32(3))": lambda lib: lib.full([2], np.int32(3)),
    "full(-1, uint8)": lambda lib: lib.full((2,), -1, dtype=lib.uint8),
    "full(2.5, int64)": lambda lib: lib.full((2,), 2.5, dtype=lib.int64),
    "full(1e10, float16)": lambda lib: lib.full((1,), 1e10, dtype=lib.float16),
    "full(inf)": lambda lib: lib.full((1,), float("inf")),
    "full(1e39, float64)": lambda lib: lib.full((1,), 1e39, dtype=lib.float64),
    "full(2**63, float32)": lambda lib: lib.full((1,), 2**63, dtype=lib.float32),
    "full(3.7, bool)": lambda lib: lib.full((2,), 3.7, dtype=lib.bool),
    "fill_(-1) uint8": lambda lib: lib.zeros(2, dtype=lib.uint8).fill_(-1),
    "fill_(tensor(300)) uint8 wraps": lambda lib: lib.zeros(2, dtype=lib.uint8).fill_(lib.tensor(300)),
    "fill_(2.7) int32": lambda lib: lib.zeros(2, dtype=lib.int32).fill_(2.7),
    "tensor([np.float64(1.5), 2])": lambda lib: lib.tensor([np.float64(1.5), 2]),
    "tensor([np.float32(1.5), 2.0])": lambda lib: lib.tensor([np.float32(1.5), 2.0]),
    "tensor([np.float16(1.5), 2.0])": lambda lib: lib.tensor([np.float16(1.5), 2.0]),
    "tensor([np.int32(1)])": lambda lib: lib.tensor([np.int32(1)]),
    "tensor([np.int16(1), np.int8(2)])": lambda lib: lib.tensor([np.int16(1), np.int8(2)]),
    "tensor([[np.float64(1.5)], [2.0]])": lambda lib: lib.tensor([[np.float64(1.5)], [2.0]]),
    "tensor([np.uint8(3), -1])": lambda lib: lib.tensor([np.uint8(3), -1]),
    "tensor([np.int64(1), 2.5])": lambda lib: lib.tensor([np.int64(1), 2.5]),
    "tensor([np.float64(1), 1+2j])": lambda lib: lib.tensor([np.float64(1), 1 + 2j]),
    "tensor([tensor(1.5, float64), 2.0])": lambda lib: lib.tensor([lib.tensor(1.5, dtype=lib.float64), 2.0]),
    "tensor([tensor(1, int32), tensor(2, int32)])": lambda lib: lib.tensor([lib.tensor(1, dtype=lib.int32)] * 2),
    "tensor([1, 2.5, True])": lambda lib: lib.tensor([1, 2.5, True]),
}


@pytest.mark.parametrize("name", sorted(FULL))
def test_full_and_tensor_dtypes_and_values_match_torch(name):
    compare_with_torch(lambda: FULL[name](mt), lambda: FULL[name](torch), [])


FULL_REFUSED = {
    "full(300, uint8)": lambda lib: lib.full((2,), 300, dtype=lib.uint8),
    "full(-256, uint8)": lambda lib: lib.full((2,), -256, dtype=lib.uint8),
    "full(128, int8)": lambda lib: lib.full((2,), 128, dtype=lib.int8),
    "full(nan, int64)": lambda lib: lib.full((2,), float("nan"), dtype=lib.int64),
    "full(inf, int32)": lambda lib: lib.full((2,), float("inf"), dtype=lib.int32),
    "full(1e10, int32)": lambda lib: lib.full((2,), 1e10, dtype=lib.int32),
    "full(255.9, uint8)": lambda lib: lib.full((1,), 255.9, dtype=lib.uint8),
    "full(-0.5, uint8)": lambda lib: lib.full((1,), -0.5, dtype=lib.uint8),
    "full(1e39)": lambda lib: lib.full((1,), 1e39),
    "full(2**63)": lambda lib: lib.full((1,), 2**63),
    "full(tensor(300), uint8)": lambda lib: lib.full((2,), lib.tensor(300), dtype=lib.uint8),
    "full_like(uint8, 300)": lambda lib: lib.full_like(lib.zeros(2, dtype=lib.uint8), 300),
    "new_full(300, uint8)": lambda lib: lib.zeros(2).new_full((2,), 300, dtype=lib.uint8),
    "fill_(300) uint8": lambda lib: lib.zeros(2, dtype=lib.uint8).fill_(300),
    "fill_(nan) int64": lambda lib: lib.zeros(2, dtype=lib.int64).fill_(float("nan")),
    "fill_(1e39) float32": lambda lib: lib.zeros(2).fill_(1e39),
    # not "fill_(1e10) float16": PyTorch's fill_ raises there for a tensor of 2+ elements but stores inf for one
    # element, as its full and setitem do; minitorch_ln stores inf (the correctly rounded cast) in every form
    # (ops/fill_values.py checks float16 and bfloat16 against float32's range)
    "tensor([300], uint8)": lambda lib: lib.tensor([300], dtype=lib.uint8),
    "tensor(300, uint8)": lambda lib: lib.tensor(300, dtype=lib.uint8),
    "tensor([nan], int64)": lambda lib: lib.tensor([float("nan")], dtype=lib.int64),
}


@pytest.mark.parametrize("name", sorted(FULL_REFUSED))
def test_values_a_dtype_cannot_hold_are_runtime_errors_as_torch(name):
    with pytest.raises(RuntimeError, match="without overflow"):
        FULL_REFUSED[name](torch)
    with pytest.raises(RuntimeError):
        FULL_REFUSED[name](mt)  # they used to wrap (300 -> 44), give INT64_MIN for NaN, or raise OverflowError


def test_full_hand_worked():
    # the fill's own kind gives the dtype: a 0-d int64 tensor 3 -> int64 [3, 3] (was float32 [3.0, 3.0])
    out = mt.full([2], mt.tensor(3))
    assert out.dtype == mt.int64 and out.tolist() == [3, 3]
    # -1 is uint8 255 (2**8 - 1), as PyTorch; 300 is refused (it wrapped to 300 - 256 = 44)
    assert mt.full((2,), -1, dtype=mt.uint8).tolist() == [255, 255]
    with pytest.raises(TypeError):
        mt.full([2], mt.tensor([3]))


@pytest.mark.parametrize("make, cls", [(lambda lib: lib.randint(0.5, 2.5, (3,)), TypeError),
                                       (lambda lib: lib.randint(3.0, (3,)), TypeError),
                                       (lambda lib: lib.randint(0, 3.0, (3,)), TypeError),
                                       (lambda lib: lib.randint(0, 2**63, (3,)), ValueError)])
def test_randint_refuses_float_and_oversized_bounds_as_torch(make, cls):
    with pytest.raises(cls):
        make(torch)
    with pytest.raises(cls):
        make(mt)  # randint(0.5, 2.5) used to truncate to randint(0, 2)


def test_randint_at_the_int64_edges_matches_torch():
    for args in ((0, 2**63 - 1, (3,)), (-(2**63), 0, (3,))):
        torch.manual_seed(0)
        theirs = torch.randint(*args)
        mt.manual_seed(0)
        compare_with_torch(lambda: mt.randint(*args), lambda: theirs, [])


# ================================================================ 7. *_like keep the input's stride order (preserve_format)

LIKE = {
    "zeros_like(t())": lambda lib: lib.zeros_like(lib.empty(3, 4).t()),
    "ones_like([:, ::2])": lambda lib: lib.ones_like(lib.empty(3, 4)[:, ::2]),
    "empty_like([:, ::2].t())": lambda lib: lib.empty_like(lib.empty(3, 4)[:, ::2].t()).zero_(),
    "full_like(t(), 7)": lambda lib: lib.full_like(lib.empty(3, 4).t(), 7),
    "zeros_like(t(), int64)": lambda lib: lib.zeros_like(lib.empty(3, 4).t(), dtype=lib.int64),
    "zeros_like(size-1 axis transposed)": lambda lib: lib.zeros_like(lib.empty(4, 1, 3).transpose(0, 2)),
    "zeros_like(expanded)": lambda lib: lib.zeros_like(lib.empty(3, 1).expand(3, 4)),
    "randn_like(t())": lambda lib: lib.randn_like(lib.empty(3, 4).t()),
    "randn_like(t()) 20x20": lambda lib: lib.randn_like(lib.empty(20, 20).t()),
    "randn_like(t(), float64)": lambda lib: lib.randn_like(lib.empty(3, 4).t(), dtype=lib.float64),
    "randn_like([:, ::2])": lambda lib: lib.randn_like(lib.empty(4, 6)[:, ::2]),
    "rand_like(permute(2, 0, 1))": lambda lib: lib.rand_like(lib.empty(2, 3, 4).permute(2, 0, 1)),
    "randint_like(t(), 10)": lambda lib: lib.randint_like(lib.empty(3, 4).t(), 10),
    "randint_like(t(), 3, 10)": lambda lib: lib.randint_like(lib.empty(3, 4).t(), 3, 10),
}


@pytest.mark.parametrize("name", sorted(LIKE))
def test_like_factories_keep_the_stride_order_and_draw_in_memory_order(name):
    ours, theirs = _at_seed_0(LIKE[name])
    assert tuple(ours.stride()) == tuple(theirs.stride()), (ours.stride(), theirs.stride())
    compare_with_torch(lambda: ours, lambda: theirs, [], rtol=0.0, atol=0.0)


def test_randn_like_of_a_transpose_is_the_transposed_draw():
    # hand-worked: empty_like(x.t()) has x's memory layout, and normal_ fills memory in order
    mt.manual_seed(5)
    plain = mt.randn(3, 4)
    mt.manual_seed(5)
    like = mt.randn_like(mt.empty(3, 4).t())
    assert np.array_equal(like.numpy(), plain.numpy().T) and like.stride() == (1, 4)


def test_none_and_strings_in_data_are_refused_and_range_is_data():
    # tensor([1, None], dtype=float32) and Tensor([1, None]) stored NaN; PyTorch raises TypeError (RuntimeError
    # without a dtype): DtypeError is both. Tensor(range(3)) is the data [0, 1, 2], as PyTorch
    for make in (lambda m: m.tensor([1, None], dtype=m.float32), lambda m: m.Tensor([1, None]),
                 lambda m: m.FloatTensor([[None, 1.0]]), lambda m: m.LongTensor([None])):
        for lib in (mt, torch):
            with pytest.raises(TypeError):
                make(lib)
    with pytest.raises(RuntimeError):
        mt.tensor([1, None])
    assert mt.Tensor(range(3)).tolist() == torch.Tensor(range(3)).tolist() == [0.0, 1.0, 2.0]
    assert mt.Tensor(range(3)).dtype == mt.float32
    assert mt.tensor([2**70], dtype=mt.float64).item() == 2.0**70  # a big int is still a number

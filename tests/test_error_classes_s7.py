"""Bad input that PyTorch reports as RuntimeError (or its subclass NotImplementedError) is catchable as RuntimeError
here too: PyTorch code writes ``except RuntimeError``. minitorch_ln's errors are also the Python class a reader
expects (``DtypeError`` is a TypeError, ``ShapeError``/``OptionError`` a ValueError: minitorch_ln/errors.py), so
code written for either catches them. Each case runs under both libraries."""

from __future__ import annotations

import pytest

import minitorch_ln as mt

torch = pytest.importorskip("torch")

CASES = {
    "std of an int tensor": lambda m: m.arange(3).std(),
    "softmax of an int tensor": lambda m: m.arange(3).softmax(0),
    "bitwise_and of floats": lambda m: m.ones(2) & m.ones(2),
    "bitwise_not of a float": lambda m: m.bitwise_not(m.ones(2)),
    "embedding with float ids": lambda m: m.nn.functional.embedding(m.tensor([1.0]), m.ones(4, 3)),
    "split of size 0": lambda m: m.ones(4).split(0),
    "chunk into 0": lambda m: m.ones(4).chunk(0),
    "remainder of bools": lambda m: m.remainder(m.tensor([True]), m.tensor([True])),
    "zeros of a negative size": lambda m: m.zeros(-1),
    "where with a float condition": lambda m: m.where(m.ones(2), m.ones(2), m.zeros(2)),
    "masked_fill with a float mask": lambda m: m.ones(2).masked_fill(m.ones(2), 0.0),
    "topk with k past the size": lambda m: m.ones(2).topk(3),
    "layer_norm of another trailing shape": lambda m: m.nn.functional.layer_norm(m.ones(2, 3), (4,)),
    "gelu of ints": lambda m: m.nn.functional.gelu(m.ones(2, dtype=m.int64)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_pytorch_runtime_errors_are_runtime_errors_here(name):
    fn = CASES[name]
    with pytest.raises(RuntimeError):
        fn(torch)
    with pytest.raises(RuntimeError) as info:
        fn(mt)
    assert str(info.value)  # a message, naming what was expected and what came (checked by eye in the op's tests)


def test_an_index_of_a_float_is_an_index_error_as_pytorch():
    for lib in (mt, torch):
        with pytest.raises(IndexError):
            lib.ones(3)[1.0]
    with pytest.raises(TypeError):  # and Python's TypeError (minitorch_ln.errors.IndexTypeError)
        mt.ones(3)[1.0]

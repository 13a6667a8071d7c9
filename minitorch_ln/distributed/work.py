"""``ReduceOp`` and the work handle that ``async_op=True`` collectives return."""

from __future__ import annotations

import enum

from ._mpi import load_mpi

__all__ = ["ReduceOp", "Work"]


class ReduceOp:
    """``torch.distributed.ReduceOp``: ``SUM``, ``AVG``, ``PRODUCT``, ``MIN``, ``MAX``, ``BAND``, ``BOR``, ``BXOR``."""

    class RedOpType(enum.IntEnum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8
        UNUSED = 9

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM


class Work:
    """The handle an ``async_op=True`` collective returns: ``wait()``, ``is_completed()``, ``get_future()``.

    ``requests`` are MPI requests (or None when the op already ran, as NCCL's stream-ordered ones);
    ``finish`` copies the received arrays into the output tensors once they are complete.
    """

    def __init__(self, requests, finish=None, outputs=()):
        self._requests = [r for r in requests if r is not None]
        self._finish = finish
        self._outputs = list(outputs)
        self._done = False

    def _complete(self) -> None:
        if not self._done:
            self._done = True
            if self._finish is not None:
                self._finish()

    def wait(self, timeout=None) -> bool:
        if not self._done:
            if self._requests:
                load_mpi().Request.Waitall(self._requests)
            self._complete()
        return True

    def is_completed(self) -> bool:
        if not self._done and (not self._requests or load_mpi().Request.Testall(self._requests)):
            self._complete()
        return self._done

    def is_success(self) -> bool:
        return self.is_completed()

    def result(self) -> list:
        self.wait()
        return self._outputs

    def get_future(self) -> "_Future":
        return _Future(self)


class _Future:
    """``Work.get_future()``: ``wait()`` and ``value()`` give the output tensors; ``done()`` polls."""

    def __init__(self, work: Work):
        self._work = work

    def wait(self):
        return self._work.result()

    def value(self):
        return self._work.result()

    def done(self) -> bool:
        return self._work.is_completed()

"""PyTorch's CPU random engine: the 32-bit Mersenne Twister, seeded and stepped as ``torch.Generator`` does.

Matsumoto & Nishimura, "Mersenne Twister: a 623-dimensionally equidistributed uniform pseudo-random
number generator", ACM TOMACS 8(1), 1998, with their 2002 initialization (``init_genrand``); PyTorch
keeps this engine in ``aten/src/ATen/core/MT19937RNGEngine.h`` and wraps it in
``aten/src/ATen/CPUGeneratorImpl.cpp``. Same seed, same words, in the same order:

* ``manual_seed(s)`` fills the 624-word state from the low 32 bits of ``s`` by
  ``x[j] = 1812433253 * (x[j-1] ^ (x[j-1] >> 30)) + j`` and drops the cached normal sample;
* each 32-bit draw takes the next state word and tempers it; when the 624 words are used up the
  whole state is regenerated (the "twist") — here with a few NumPy slices instead of a loop;
* a 64-bit draw is two 32-bit draws, the first one the high half (``make64BitsFrom32Bits``).

:class:`CPUGenerator` also holds what ``CPUGeneratorImpl`` holds beside the engine: the second
value of the last scalar Box–Muller pair (``normal_distribution<double>``), used by the next scalar
normal draw. ``get_state``/``set_state`` read and write PyTorch's 5056-byte
``CPUGeneratorImplState`` layout, so a state moves between minitorch_ln and torch both ways.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CPUGenerator", "DEFAULT_SEED", "STATE_BYTES"]

DEFAULT_SEED = 67280421310721  # c10::default_rng_seed_val: torch.Generator().initial_seed()
N, M = 624, 397
MATRIX_A = np.uint32(0x9908B0DF)
UPPER, LOWER = np.uint32(0x80000000), np.uint32(0x7FFFFFFF)
STATE_BYTES = 5056  # sizeof(CPUGeneratorImplState) on a 64-bit build

# CPUGeneratorImplState (CPUGeneratorImpl.cpp): the legacy THGeneratorState, then the float cache.
_STATE_DTYPE = np.dtype({
    "names": ["seed", "left", "seeded", "next", "state", "normal_x", "normal_y", "normal_rho",
              "normal_is_valid", "next_float_normal", "float_normal_is_valid"],
    "formats": ["<u8", "<i4", "<i4", "<u8", ("<u8", N), "<f8", "<f8", "<f8", "<i4", "<f4", "u1"],
    "offsets": [0, 8, 12, 16, 24, 5016, 5024, 5032, 5040, 5048, 5052],
    "itemsize": STATE_BYTES,
})


def _seeded_state(seed: int) -> np.ndarray:
    """``init_genrand``: the 624 state words for the low 32 bits of ``seed``.  ``(624,)`` uint32."""
    x = [seed & 0xFFFFFFFF]
    for j in range(1, N):
        x.append((1812433253 * (x[-1] ^ (x[-1] >> 30)) + j) & 0xFFFFFFFF)
    return np.array(x, dtype=np.uint32)


def _twist(mt: np.ndarray) -> None:
    """Regenerate the 624 words in place: ``mt[i] = mt[i+397] ^ twist(mt[i], mt[i+1])``.

    ``twist(mt[i], mt[i+1])`` only reads words not yet rewritten when word ``i`` is, so it is
    computed for all ``i < 623`` at once. The word ``mt[i+397]`` (mod 624) is already new for
    ``i >= 227``, so the xor goes in slices whose sources are all old or all written:
    [0, 227), [227, 454), [454, 623), and the last word, which reads the new ``mt[0]``.
    """
    y = (mt[:-1] & UPPER) | (mt[1:] & LOWER)  # (623,)
    t = (y >> np.uint32(1)) ^ ((mt[1:] & np.uint32(1)) * MATRIX_A)  # (623,)
    mt[0:227] = mt[397:624] ^ t[0:227]
    mt[227:454] = mt[0:227] ^ t[227:454]
    mt[454:623] = mt[227:396] ^ t[454:623]
    last = (int(mt[623]) & 0x80000000) | (int(mt[0]) & 0x7FFFFFFF)
    mt[623] = int(mt[396]) ^ (last >> 1) ^ (0x9908B0DF if last & 1 else 0)


def _temper(y: np.ndarray) -> np.ndarray:
    y = y ^ (y >> np.uint32(11))
    y = y ^ ((y << np.uint32(7)) & np.uint32(0x9D2C5680))
    y = y ^ ((y << np.uint32(15)) & np.uint32(0xEFC60000))
    return y ^ (y >> np.uint32(18))


class CPUGenerator:
    """PyTorch's CPU generator state (engine + normal cache); draws 32- and 64-bit words in blocks.

    ``left``/``next`` follow ``mt19937_data_pod``: ``next`` words of the current state are used, and
    ``left == 625 - next`` except right after seeding (``left == 1``: twist before the first draw).
    """

    def __init__(self, seed: int = DEFAULT_SEED):
        self.manual_seed(seed)

    def manual_seed(self, seed: int) -> "CPUGenerator":
        """Restart from ``seed`` (an int taken modulo 2**64; only its low 32 bits reach the state)."""
        self.seed = int(seed) % 2**64
        self.mt = _seeded_state(self.seed)  # (624,) uint32
        self._tempered = None  # the words of ``mt``, tempered: made once per twist (see random32)
        self.left, self.next = 1, 0
        self.next_double_normal = None  # the cached sin-half of a scalar Box-Muller pair
        self.next_float_normal = None  # kept for the state layout; no CPU kernel fills it
        return self

    def initial_seed(self) -> int:
        return self.seed

    def random32(self, n: int) -> np.ndarray:
        """The next ``n`` 32-bit words (``CPUGeneratorImpl::random``). ``(n,)`` uint32."""
        # Each state word is tempered once, with the whole block after a twist: tempering is 8 NumPy
        # operations, which on the few words of a small draw (``multinomial`` of one row: 54) cost more
        # than on all 624 at once. Same words, same order.
        if n <= self.left - 1:  # the common case: the words are in the current block
            tempered = self._tempered
            if tempered is None:
                tempered = self._tempered = _temper(self.mt)
            start = self.next
            self.next += n
            self.left -= n
            return tempered[start:start + n].copy()
        out = np.empty(n, dtype=np.uint32)
        done = 0
        while done < n:
            if self.left == 1:
                _twist(self.mt)
                self._tempered = None
                self.left, self.next = N + 1, 0
            take = min(n - done, self.left - 1)
            if self._tempered is None:
                self._tempered = _temper(self.mt)
            out[done:done + take] = self._tempered[self.next:self.next + take]
            self.next += take
            self.left -= take
            done += take
        return out

    def random64(self, n: int) -> np.ndarray:
        """The next ``n`` 64-bit words (``random64``: two draws, the first is the high half). ``(n,)`` uint64."""
        w = self.random32(2 * n).reshape(n, 2).astype(np.uint64)  # (n, 2)
        return (w[:, 0] << np.uint64(32)) | w[:, 1]

    # ---------------------------------------------------------------------------------------------
    # State: PyTorch's CPUGeneratorImplState bytes
    # ---------------------------------------------------------------------------------------------

    def get_state(self) -> np.ndarray:
        """The state as PyTorch lays it out (``torch.Generator().get_state()``). ``(5056,)`` uint8."""
        rec = np.zeros((), dtype=_STATE_DTYPE)
        rec["seed"], rec["left"], rec["seeded"], rec["next"] = self.seed, self.left, 1, self.next
        rec["state"] = self.mt
        if self.next_double_normal is not None:
            rec["normal_y"], rec["normal_is_valid"] = self.next_double_normal, 1
        if self.next_float_normal is not None:
            rec["next_float_normal"], rec["float_normal_is_valid"] = self.next_float_normal, 1
        return np.frombuffer(rec.tobytes(), dtype=np.uint8).copy()

    def set_state(self, state) -> "CPUGenerator":
        """Restore a state from :meth:`get_state` (or from torch's ``get_state()``, as a uint8 array).

        Raises:
            RuntimeError: not 5056 bytes, or an engine state PyTorch would reject (PyTorch's checks).
        """
        raw = np.ascontiguousarray(state, dtype=np.uint8).reshape(-1)
        if raw.size != STATE_BYTES:
            raise RuntimeError(f"Expected either a THGeneratorState of size 5048 or a CPUGeneratorImplState of "
                               f"size {STATE_BYTES} but found the input RNG state size to be {raw.size}")
        rec = np.frombuffer(raw.tobytes(), dtype=_STATE_DTYPE)[0]
        left, nxt = int(rec["left"]), int(rec["next"])
        if not (rec["seeded"] and 0 < left <= N and nxt <= N):
            raise RuntimeError("Invalid mt19937 state")
        self.seed, self.left, self.next = int(rec["seed"]), left, nxt
        self.mt = rec["state"].astype(np.uint32)
        self._tempered = None
        self.next_double_normal = float(rec["normal_y"]) if rec["normal_is_valid"] else None
        self.next_float_normal = float(rec["next_float_normal"]) if rec["float_normal_is_valid"] else None
        return self

    def __repr__(self) -> str:
        return f"<mt19937 CPUGenerator initial_seed={self.seed}>"

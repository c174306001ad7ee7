"""The monkey's optional compiled kernel: kernel.c, built with the system C compiler at first use.

numpy spends most of the monkey's time making keys (each step a pass over memory) and, in
anywhere mode, sieving windows (a pass per sieve, and Python per batch); the kernel makes the
keys in one pass and searches for records in another (prefix: a scan; anywhere: the block
sieve, then each window that passes checked to the end), with exactly the numpy path's keys and
records, and leaves the numpy generator in exactly the state numpy would have: checkpoints do
not change and either path resumes the other's. It builds on 32-bit ARM too (PCG64's 128-bit
arithmetic in two words there). Where it cannot be built the monkey types with numpy, after one
WARNING saying why, what it costs and the fix (the same words as `bot.py check`)::

    kernel = load(state_dir / "monkey-cache")        # a Kernel, or None (and the log says why)
    simulation = Simulation(matcher, key_count=27, seed=42, kernel=kernel)

The library is kept beside the start-up cache as `kernel-<hash>.so` (built by `jobs.native`,
the hash covering the source, the flags, the compiler and the platform), its interface
checked at load (`ABI`). `TWITTERBOT_MONKEY_KERNEL=numpy`, in the environment or the env file,
turns it off.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from .. import native

__all__ = ["ABI", "ENV", "SPEC", "Kernel", "load", "state"]

log = logging.getLogger(__name__)

ENV = "TWITTERBOT_MONKEY_KERNEL"
SOURCE = Path(__file__).with_name("kernel.c")
_MASK = (1 << 64) - 1
_ROOM = 64  # records returned per call (more are fetched by calling again)


class Kernel:
    """The compiled functions, called through ctypes on numpy arrays."""

    def __init__(self, library: ctypes.CDLL, path: Path) -> None:
        self.path = path
        self._draw = library.monkey_draw
        self._draw.restype = ctypes.c_size_t
        self._draw.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
        self._find = library.monkey_prefix_find
        self._find.restype = ctypes.c_size_t
        self._find.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p]
        self._find.argtypes += [ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
        self._anywhere = library.monkey_anywhere_find
        self._anywhere.restype = ctypes.c_size_t
        self._anywhere.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t]
        self._anywhere.argtypes += [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint64, ctypes.c_size_t]
        self._anywhere.argtypes += [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p]
        self._anywhere.argtypes += [ctypes.c_void_p, ctypes.c_size_t]
        self._sieve = library.monkey_sieve
        self._sieve.restype = ctypes.c_size_t
        self._sieve.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
        self._index_of: Tuple[int, ...] = ()  # which arrays (their ids) and numbers the index was made from
        self._index: Tuple[Any, ...] = ()
        self._arguments: Tuple[int, ...] = ()
        self._ok = np.empty(0, dtype=np.uint64)
        self._check = library.monkey_check_division
        self._check.restype = ctypes.c_size_t
        self._check.argtypes = [ctypes.c_uint32]
        self._checked: Dict[int, bool] = {}
        self._found = np.empty((2, _ROOM), dtype=np.int64)
        self._found_at = (self._found[0].ctypes.data, self._found[1].ctypes.data, _ROOM)
        self._scratch_at: Tuple[int, ...] = ()  # the sieve's room, then `_found_at`

    def supports(self, key_count: int) -> bool:
        """Whether the compiled key mapping is exact for `key_count` keys, checked for every
        16-bit value once per process (it is, by construction; this guards the compiler)."""
        if key_count not in self._checked:
            self._checked[key_count] = 2 <= key_count <= 255 and self._check(key_count) == 0
            if not self._checked[key_count]:
                log.info("monkey: typing with numpy, the compiled kernel maps %d keys inexactly", key_count)
        return self._checked[key_count]

    def draw(
        self, bits: np.random.PCG64, key_count: int, words: int, redraw: np.ndarray, out: Optional[np.ndarray] = None
    ) -> np.ndarray:
        """`KeyStream._next_draw` for `words` 64-bit outputs: 8 * words keys, and `bits` moved on
        exactly as numpy's `random_raw` and `Generator.integers` would have. `redraw` is scratch
        room for 4 * words uint32; `out`, if given, room for the keys (filled and returned)."""
        keys = np.empty(8 * words, dtype=np.uint8) if out is None else out
        assert keys.dtype == np.uint8 and keys.flags.c_contiguous and len(keys) == 8 * words
        g = self.words(bits.state)
        self.draw_at(g, key_count, keys.ctypes.data, words, redraw.ctypes.data)
        bits.state = self.state_of(g)
        return keys

    def draw_at(self, g: Any, key_count: int, out: int, words: int, redraw: int) -> None:
        """`draw` on the generator's six words `g` (from `words`, moved on in place), into memory
        at address `out` (8 * words bytes), `redraw` the address of room for 4 * words uint32:
        one call, for a stream that draws again and again from buffers it keeps."""
        self._draw(g, key_count, out, words, redraw)

    @staticmethod
    def words(state: Dict[str, Any]) -> Any:
        """numpy's PCG64 state as the six words the kernel moves on (`draw_at`)."""
        inner = state["state"]
        g = (ctypes.c_uint64 * 6)()
        g[0], g[1] = inner["state"] >> 64, inner["state"] & _MASK
        g[2], g[3] = inner["inc"] >> 64, inner["inc"] & _MASK
        g[4], g[5] = int(state["has_uint32"]), int(state["uinteger"])
        return g

    @staticmethod
    def state_of(g: Sequence[int]) -> Dict[str, Any]:
        """The six words (`words`, or a copy of them) as numpy's PCG64 state."""
        return {
            "bit_generator": "PCG64",
            "state": {"state": (g[0] << 64) | g[1], "inc": (g[2] << 64) | g[3]},
            "has_uint32": int(g[4]),
            "uinteger": int(g[5]),
        }

    def prefix_find(self, typed: np.ndarray, fresh: int, record: int, target: np.ndarray) -> List[Tuple[int, int]]:
        """`PrefixMatcher.find`, in C."""
        typed = np.ascontiguousarray(typed, dtype=np.uint8)
        found: List[Tuple[int, int]] = []
        while True:
            count = self._find(
                typed.ctypes.data, len(typed), fresh, record, target.ctypes.data, len(target), *self._found_at
            )
            if count:
                found += self._records(count)
            if count < _ROOM:
                return found
            record = found[-1][1]

    def anywhere_find(
        self,
        typed: np.ndarray,
        fresh: int,
        record: int,
        *,
        gram_ok: np.ndarray,
        codes: np.ndarray,
        corpus: np.ndarray,
        base: int,
        depth: int,
    ) -> List[Tuple[int, int]]:
        """`AnywhereMatcher.find` in C, every sieve and the final check, over the matcher's
        arrays: `gram_ok` says which 4-key n-grams (5 bits a key) the corpus has, `codes` are its
        sorted codes of `depth` letters in base `base`, `corpus` its keys. Only the records cross
        back into Python."""
        typed = np.ascontiguousarray(typed, dtype=np.uint8)
        if len(self._ok) < len(typed) // 256 + 3:  # kept between batches: no allocation per batch
            self._ok = np.empty(len(typed) // 256 + 3, dtype=np.uint64)
            self._scratch_at = (self._ok.ctypes.data, *self._found_at)
        index = self._index_for(gram_ok, codes, corpus, base, depth)
        found: List[Tuple[int, int]] = []
        while True:
            count = self._anywhere(typed.ctypes.data, len(typed), fresh, record, *index, *self._scratch_at)
            if count:
                found += self._records(count)
            if count < _ROOM:
                return found
            record = found[-1][1]

    def _records(self, count: int) -> List[Tuple[int, int]]:
        """The first `count` records the last search left in `_found`, as (end, length)."""
        ends, lengths = self._found
        return list(zip(ends[:count].tolist(), lengths[:count].tolist()))

    def block_sieve(self, typed: np.ndarray, gram_ok: np.ndarray, *, vector: bool = True) -> Tuple[np.ndarray, bool]:
        """Whether each aligned 4-key block of `typed` is one of the n-grams `gram_ok` marks (the
        first sieve of `anywhere_find`), and whether the AVX2 copy made it: for the tests, which
        compare both copies with numpy."""
        typed = np.ascontiguousarray(typed, dtype=np.uint8)
        blocks = len(typed) // 4
        ok = np.empty(blocks // 64 + 3, dtype=np.uint64)
        bits = self._packed(gram_ok)
        vectorised = self._sieve(typed.ctypes.data, blocks, bits.ctypes.data, ok.ctypes.data, vector)
        known = np.unpackbits(ok.view(np.uint8), bitorder="little")[:blocks].astype(bool)
        return known, bool(vectorised)

    @staticmethod
    def _packed(gram_ok: np.ndarray) -> np.ndarray:
        """The 4-gram table packed to a bit a code (128 KiB), as the C sieve reads it."""
        assert gram_ok.dtype == np.bool_ and len(gram_ok) == 1 << 20
        return np.packbits(gram_ok, bitorder="little")

    def _index_for(
        self, gram_ok: np.ndarray, codes: np.ndarray, corpus: np.ndarray, base: int, depth: int
    ) -> Tuple[int, ...]:
        """The index as monkey_anywhere_find takes it, made once per set of arrays (a caller hands
        the same ones every batch): the table packed, the codes and the corpus as they are."""
        identity = (id(gram_ok), id(codes), id(corpus), base, depth)  # ids held: `_index` keeps the arrays alive
        if self._index_of != identity:
            assert codes.dtype == np.uint64 and codes.flags.c_contiguous and corpus.flags.c_contiguous
            bits = self._packed(gram_ok)
            self._index_of = identity
            self._index = (gram_ok, bits, codes, corpus)  # kept alive while their ids and addresses are in use
            self._arguments = (
                bits.ctypes.data,
                codes.ctypes.data,
                len(codes),
                base,
                depth,
                corpus.ctypes.data,
                len(corpus),
            )
        return self._arguments


# The interface this file hands over (kernel.c's monkey_abi answers the same, or is not used).
ABI = native.Abi(
    "monkey_abi",
    1,
    (ctypes.sizeof(ctypes.c_uint64 * 6), ctypes.sizeof(ctypes.c_size_t), ctypes.sizeof(ctypes.c_void_p)),
)
SPEC = native.Spec(
    job="monkey",
    source=SOURCE,
    variable=ENV,
    instead="typing with numpy",
    # benchmarks/kernels.py, on the 2-core development machine (x86-64); a Pi differs in
    # seconds, less in the ratio.
    slower="the monkey takes 4x the CPU without it (3 billion keystrokes: 9.7 s instead of 2.4 s, measured)",
    abi=ABI,
    unsupported=None if sys.byteorder == "little" else "the faster kernel is written for little-endian machines",
)


def load(
    cache_dir: Optional[Path], *, environ: Mapping[str, str] = os.environ, switch: Optional[str] = None
) -> Optional[Kernel]:
    """The kernel, built into `cache_dir` if it is not there yet (without one, into a temporary
    folder removed once loaded), or None after one WARNING saying why the monkey types with
    numpy, what it costs and the fix. `switch` is TWITTERBOT_MONKEY_KERNEL from the config
    (without it, the environment's). Never raises: the numpy path gives the same records."""
    return native.load(Kernel, SPEC, cache_dir, log=log, environ=environ, switch=switch)


def state(
    cache_dir: Optional[Path], *, environ: Mapping[str, str] = os.environ, switch: Optional[str] = None
) -> native.KernelState:
    """What `bot.py check` says of the kernel: built (now, if need be), loadable, in use, or why not."""
    return native.inspect(Kernel, SPEC, cache_dir, environ=environ, switch=switch)

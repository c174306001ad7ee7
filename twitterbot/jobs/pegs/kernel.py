"""The peg counter's optional compiled kernel: kernel.c, built with the system C compiler at first use.

numpy spends the count's time orienting every child (8 table lookups each) and sorting; the
kernel orients a parent once and each child by one exclusive-or per symmetry, adds children up
in a hash table, and hands back exactly the numpy path's level: the same sorted positions, counts
and residues, so level files and checkpoints do not change and either path resumes the other's.
Where it cannot be built the count runs on numpy, after one INFO line saying why::

    kernel = load(state_dir / "pegs-cache")       # a Kernel, or None (and the log says why)
    for level in count_levels(board, kernel=kernel): ...

The library is kept in that folder as `kernel-<hash>.so` (built by `jobs.native`, the hash
covering the source, the flags, the compiler and the platform). `TWITTERBOT_PEGS_KERNEL=numpy`
turns it off.
"""

from __future__ import annotations

import ctypes
import logging
import os
from pathlib import Path
from typing import Callable, Dict, Mapping, Optional, Tuple

import numpy as np

from .. import native
from .board import Board

__all__ = ["ENV", "Kernel", "load"]

log = logging.getLogger(__name__)

ENV = "TWITTERBOT_PEGS_KERNEL"
SOURCE = Path(__file__).with_name("kernel.c")
CHUNK_BITS = 8  # 8 syms x 5 chunks x 256 entries: 80 KiB for the English board, cache-resident

Arrays = Tuple[np.ndarray, np.ndarray, np.ndarray]  # positions (uint64), counts (uint64), residues (uint32)


class _BoardData(ctypes.Structure):
    """kernel.c's board_t."""

    _fields_ = [
        ("symmetries", ctypes.c_uint32),
        ("chunks", ctypes.c_uint32),
        ("jumps", ctypes.c_uint32),
        ("bits", ctypes.c_uint32),
        ("tables", ctypes.c_void_p),
        ("needs", ctypes.c_void_p),
        ("flips", ctypes.c_void_p),
        ("images", ctypes.c_void_p),
    ]


class Prepared:
    """A board in kernel.c's terms: each symmetry's image of every byte of a position, and each
    jump's masks and images. The arrays live as long as this object."""

    def __init__(self, board: Board, chunk_bits: int = CHUNK_BITS) -> None:
        self.bits = board.size
        chunks = (board.size + chunk_bits - 1) // chunk_bits
        symmetries = board.symmetries
        values = np.arange(1 << chunk_bits, dtype=np.uint64)
        self._tables = np.zeros((len(symmetries), chunks, 1 << chunk_bits), dtype=np.uint64)
        for s, permutation in enumerate(symmetries):
            for chunk in range(chunks):
                for bit in range(chunk_bits):
                    hole = chunk * chunk_bits + bit
                    if hole < board.size:
                        has = (values >> np.uint64(bit)) & np.uint64(1)
                        self._tables[s, chunk] |= has << np.uint64(permutation[hole])
        self._needs = np.array([jump.needs for jump in board.jumps], dtype=np.uint64)
        self._flips = np.array([jump.flips for jump in board.jumps], dtype=np.uint64)
        self._images = np.array(
            [[board._moved(jump.flips, permutation) for permutation in symmetries] for jump in board.jumps],
            dtype=np.uint64,
        ).reshape(len(board.jumps), len(symmetries))
        self.data = _BoardData(
            len(symmetries), chunks, len(board.jumps), chunk_bits,
            self._tables.ctypes.data, self._needs.ctypes.data, self._flips.ctypes.data, self._images.ctypes.data,
        )  # fmt: skip


class Kernel:
    """The compiled functions, called through ctypes on numpy arrays."""

    def __init__(self, library: ctypes.CDLL, path: Path) -> None:
        self.path = path
        self._new = library.pegs_table_new
        self._new.restype = ctypes.c_void_p
        self._new.argtypes = [ctypes.c_size_t]
        self._free = library.pegs_table_free
        self._free.restype = None
        self._free.argtypes = [ctypes.c_void_p]
        self._size = library.pegs_table_size
        self._size.restype = ctypes.c_size_t
        self._size.argtypes = [ctypes.c_void_p]
        self._expand = library.pegs_expand
        self._expand.restype = ctypes.c_int
        self._expand.argtypes = [ctypes.c_void_p, ctypes.POINTER(_BoardData)] + [ctypes.c_void_p] * 3
        self._expand.argtypes += [ctypes.c_size_t, ctypes.c_void_p]
        self._take = library.pegs_table_take
        self._take.restype = ctypes.c_int
        self._take.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        self._canonical = library.pegs_canonical
        self._canonical.restype = None
        self._canonical.argtypes = [ctypes.POINTER(_BoardData), ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
        self._sort = library.pegs_sort
        self._sort.restype = ctypes.c_int
        self._sort.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint]
        self._common = library.pegs_common
        self._common.restype = ctypes.c_size_t
        self._common.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
        self._prepared: Dict[Board, Prepared] = {}

    def prepare(self, board: Board) -> Prepared:
        if board not in self._prepared:
            self._prepared = {board: Prepared(board)}  # one board at a time: a count is long
        return self._prepared[board]

    def next_level(
        self,
        board: Board,
        level: Arrays,
        block: int,
        expected: int,
        after_block: Callable[[int, int], None],
    ) -> Tuple[Arrays, Tuple[int, int]]:
        """count._next_level in C: the next level, sorted, and the sequences ending on this one
        (modulo 2^64 and modulo the prime). `expected` sizes the table (it grows if need be)."""
        prepared = self.prepare(board)
        positions, counts, checks = (np.ascontiguousarray(array) for array in level)
        assert positions.dtype == np.uint64 and counts.dtype == np.uint64 and checks.dtype == np.uint32
        stuck = np.zeros(2, dtype=np.uint64)
        table = self._new(max(expected, 1))
        if not table:
            raise MemoryError(f"the peg counter's kernel could not allocate a table for {expected:,} positions")
        try:
            for first in range(0, len(positions), block):
                after_block(first, len(positions))
                end = min(first + block, len(positions))
                failed = self._expand(
                    table, ctypes.byref(prepared.data),
                    positions.ctypes.data + 8 * first, counts.ctypes.data + 8 * first,
                    checks.ctypes.data + 4 * first, end - first, stuck.ctypes.data,
                )  # fmt: skip
                if failed:
                    raise MemoryError(f"the peg counter's kernel ran out of memory growing its table past "
                                      f"{self._size(table):,} positions")  # fmt: skip
            size = self._size(table)
            keys = np.empty(size, dtype=np.uint64)
            sums = np.empty(size, dtype=np.uint64)
            residues = np.empty(size, dtype=np.uint32)
            if self._take(table, prepared.bits, keys.ctypes.data, sums.ctypes.data, residues.ctypes.data):
                raise MemoryError(f"the peg counter's kernel could not sort {size:,} positions")
        finally:
            self._free(table)
        return (keys, sums, residues), (int(stuck[0]), int(stuck[1]))

    def canonical(self, board: Board, positions: np.ndarray) -> np.ndarray:
        """The smallest orientation of each position, sorted."""
        prepared = self.prepare(board)
        positions = np.ascontiguousarray(positions, dtype=np.uint64)
        out = np.empty_like(positions)
        self._canonical(ctypes.byref(prepared.data), positions.ctypes.data, len(positions), out.ctypes.data)
        if self._sort(out.ctypes.data, len(out), prepared.bits):
            out.sort()  # the kernel had no memory for its sort: numpy's
        return out

    def common(self, first: np.ndarray, second: np.ndarray) -> int:
        """How many values two arrays of distinct uint64, each sorted, have in common."""
        first = np.ascontiguousarray(first, dtype=np.uint64)
        second = np.ascontiguousarray(second, dtype=np.uint64)
        return int(self._common(first.ctypes.data, len(first), second.ctypes.data, len(second)))


def load(cache_dir: Optional[Path], *, environ: Mapping[str, str] = os.environ) -> Optional[Kernel]:
    """The kernel, built into `cache_dir` if it is not there yet (without one, into a temporary
    folder removed once loaded), or None after one INFO line saying why the count runs on
    numpy. Never raises: the numpy path gives the same levels."""
    return native.load(
        Kernel,
        SOURCE,
        cache_dir,
        variable=ENV,
        log=log,
        instead="pegs: counting with numpy",
        environ=environ,
        unsupported=None,
    )

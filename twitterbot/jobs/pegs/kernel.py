"""The peg job's optional compiled kernel: kernel.c, built with the system C compiler at first use.

For the count: numpy spends its time orienting every child (8 table lookups each) and sorting;
the kernel orients a parent once and each child by one exclusive-or per symmetry, adds children
up in a hash table, and hands back exactly the numpy path's level: the same sorted positions,
counts and residues, so level files and checkpoints do not change and either path resumes the
other's. For the solver: its depth-first searches (`Hunt`), some fifty times faster than in
Python, on boards of up to 128 holes. Where it cannot be built the count runs on numpy and the
searches in Python, after one WARNING saying why, what it costs and the fix (the same words as
`bot.py check`)::

    kernel = load(state_dir / "pegs-cache")       # a Kernel, or None (and the log says why)
    for level in count_levels(board, kernel=kernel): ...
    for event in solve(board, kernel=kernel): ...

The library is kept in that folder as `kernel-<hash>.so` (built by `jobs.native`, the hash
covering the source, the flags, the compiler and the platform), its interface checked at load
(`ABI`). `TWITTERBOT_PEGS_KERNEL=numpy`, in the environment or the env file, turns it off.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from .. import native
from .board import Board, Jump

__all__ = [
    "ABI",
    "ENV",
    "SPEC",
    "DeadPositions",
    "Hunt",
    "Kernel",
    "Outgoing",
    "Table",
    "contiguous",
    "load",
    "state",
    "worker_kernel",
]

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
            [[board.moved(jump.flips, permutation) for permutation in symmetries] for jump in board.jumps],
            dtype=np.uint64,
        ).reshape(len(board.jumps), len(symmetries))
        self.data = _BoardData(
            len(symmetries),
            chunks,
            len(board.jumps),
            chunk_bits,
            self._tables.ctypes.data,
            self._needs.ctypes.data,
            self._flips.ctypes.data,
            self._images.ctypes.data,
        )


class _Pair(ctypes.Structure):
    """kernel.c's pair_t: a position of up to 128 holes as two 64-bit words."""

    _fields_ = [("lo", ctypes.c_uint64), ("hi", ctypes.c_uint64)]


class _HuntBoard(ctypes.Structure):
    """kernel.c's hunt_board_t."""

    _fields_ = [
        ("jumps", ctypes.c_uint32),
        ("symmetries", ctypes.c_uint32),
        ("pagodas", ctypes.c_uint32),
        ("last_depth", ctypes.c_uint32),
        ("start_pegs", ctypes.c_uint32),
        ("accept", ctypes.c_uint32),
        ("needs", ctypes.c_void_p),
        ("flips", ctypes.c_void_p),
        ("images", ctypes.c_void_p),
        ("change", ctypes.c_void_p),
        ("floor", ctypes.c_void_p),
        ("order", ctypes.c_void_p),
        ("edge", ctypes.c_void_p),
        ("edge_size", ctypes.c_size_t),
        ("goal", _Pair),
        ("ends", _Pair),
    ]


MOST_HOLES = 128  # kernel.c's positions: two 64-bit words
MOST_PAGODAS = 8
MOST_SYMMETRIES = 12


def _pairs(values: Sequence[int]) -> np.ndarray:
    """Positions of up to 128 holes as kernel.c's pairs of words (low word first)."""
    mask = (1 << 64) - 1
    return np.array([(value & mask, value >> 64) for value in values], dtype=np.uint64).reshape(-1, 2)


class DeadPositions:
    """A table of dead positions in the kernel's memory, shared by the searches of one solve.
    `close()` frees it; so does losing the last reference."""

    def __init__(self, kernel: Kernel, size: int) -> None:
        self._free = kernel._dead_free
        self.handle = kernel._dead_new(size)
        if not self.handle:
            raise MemoryError(f"the peg solver's kernel could not allocate {size >> 20} MiB for dead positions")

    def close(self) -> None:
        if self.handle:
            self._free(self.handle)
            self.handle = None

    def __del__(self) -> None:
        self.close()


class Hunt:
    """One depth-first search of solve.py run by the kernel, a slice at a time: `run(budget)`
    says "running", "solved" (then `path` holds the jumps) or "exhausted"."""

    def __init__(
        self,
        kernel: Kernel,
        board: Board,
        order: Sequence[Jump],
        dead: DeadPositions,
        *,
        last_depth: int,
        pagodas: Sequence[Sequence[float]] = (),
        edge: Optional[np.ndarray] = None,
    ) -> None:
        if board.size > MOST_HOLES or not 0 < last_depth <= MOST_HOLES:
            raise ValueError(f"the kernel searches boards of at most {MOST_HOLES} holes")
        if len(board.symmetries) > MOST_SYMMETRIES or len(pagodas) > MOST_PAGODAS:
            raise ValueError("more symmetries or pagoda functions than the kernel holds")
        self._kernel, self._board, self._dead = kernel, board, dead
        number = {jump: index for index, jump in enumerate(board.jumps)}
        symmetries = board.symmetries
        goal = board.goal or 0  # the exact final position, or none: one peg in any of `ends`
        ends = board.full if board.ends is None else board.ends
        start_weights = [sum(w for hole, w in enumerate(weights) if board.start >> hole & 1) for weights in pagodas]
        self._arrays = {
            "needs": _pairs([jump.needs for jump in board.jumps]),
            "flips": _pairs([jump.flips for jump in board.jumps]),
            "images": _pairs([board.moved(jump.flips, p) for jump in board.jumps for p in symmetries]),
            "change": np.array(
                [[w[j.end] - w[j.start] - w[j.over] for j in board.jumps] for w in pagodas] or [[0.0]], dtype=np.float64
            ),
            "floor": np.array(
                [sum(w for hole, w in enumerate(weights) if goal >> hole & 1) - 1e-9 for weights in pagodas] or [0.0],
                dtype=np.float64,
            ),
            "order": np.array([number[jump] for jump in order], dtype=np.uint32),
            "edge": np.ascontiguousarray(edge if edge is not None else np.zeros(1), dtype=np.uint64),
            "root": _pairs([board.moved(board.start, p) for p in symmetries]),
            "weights": np.array(start_weights or [0.0], dtype=np.float64),
        }
        a = self._arrays
        accept = 2 if edge is not None else 0 if board.goal is not None else 1
        self._data = _HuntBoard(
            len(board.jumps),
            len(symmetries),
            len(pagodas),
            last_depth,
            board.pegs(board.start),
            accept,
            a["needs"].ctypes.data,
            a["flips"].ctypes.data,
            a["images"].ctypes.data,
            a["change"].ctypes.data,
            a["floor"].ctypes.data,
            a["order"].ctypes.data,
            a["edge"].ctypes.data,
            len(edge) if edge is not None else 0,
            _Pair(goal & (1 << 64) - 1, goal >> 64),
            _Pair(ends & (1 << 64) - 1, ends >> 64),
        )
        self._state = ctypes.create_string_buffer(kernel._hunt_size())
        kernel._hunt_start(self._state, ctypes.byref(self._data), a["root"].ctypes.data, a["weights"].ctypes.data)

    def run(self, budget: int) -> str:
        """Search on for about `budget` more positions."""
        status = self._kernel._hunt(self._state, ctypes.byref(self._data), self._dead.handle, budget)
        return ("running", "solved", "exhausted")[status]

    @property
    def positions(self) -> int:
        return int(self._kernel._hunt_positions(self._state))

    @property
    def fewest(self) -> int:
        """The fewest pegs any position it has entered holds."""
        return int(self._kernel._hunt_fewest(self._state))

    @property
    def path(self) -> Tuple[Jump, ...]:
        """The solution's jumps, once `run` said "solved"."""
        out = np.zeros(MOST_HOLES, dtype=np.uint32)
        length = self._kernel._hunt_path(self._state, out.ctypes.data)
        return tuple(self._board.jumps[index] for index in out[:length])


def contiguous(level: Arrays) -> Arrays:
    """The level's columns as C arrays of the kernel's types (copied only if they are not)."""
    positions, counts, checks = (np.ascontiguousarray(column) for column in level)
    assert positions.dtype == np.uint64 and counts.dtype == np.uint64 and checks.dtype == np.uint32
    return positions, counts, checks


class Outgoing:
    """Children on their way to the other shares' tables: room for `room` children (position,
    counts) for each of `shares` shares, `filled[s]` of them written so far."""

    def __init__(self, shares: int, room: int) -> None:
        self.shares, self.room = shares, room
        size = max(shares * room, 1)
        self.columns = (np.empty(size, np.uint64), np.empty(size, np.uint64), np.empty(size, np.uint32))
        self.filled = np.zeros(shares, dtype=np.uintp)

    def of(self, share: int) -> Arrays:
        """The children written for `share` (views: gone at the next `clear`)."""
        low = share * self.room
        return tuple(column[low : low + int(self.filled[share])] for column in self.columns)  # type: ignore[return-value]

    def clear(self) -> None:
        self.filled[:] = 0


class Table:
    """A hash table in the kernel's memory, adding up the counts of equal positions: one level's
    children, or one share's. Freed by `take`, `close` or leaving a `with` block."""

    def __init__(self, kernel: Kernel, expected: int) -> None:
        self._kernel = kernel
        self.handle = kernel._new(max(expected, 1))
        if not self.handle:
            raise MemoryError(f"the peg counter's kernel could not allocate a table for {expected:,} positions")

    @property
    def size(self) -> int:
        return int(self._kernel._size(self.handle)) if self.handle else 0

    def add(self, children: Arrays) -> None:
        """Add positions with their counts (another share's children for this table's share)."""
        keys, counts, checks = contiguous(children)
        if self._kernel._add(self.handle, keys.ctypes.data, counts.ctypes.data, checks.ctypes.data, len(keys)):
            raise MemoryError(
                f"the peg counter's kernel ran out of memory growing its table past {self.size:,} positions"
            )

    def take(self, bits: int) -> Arrays:
        """The table's positions, sorted, with their counts and residues; the table is freed."""
        size = self.size
        keys = np.empty(size, dtype=np.uint64)
        sums = np.empty(size, dtype=np.uint64)
        residues = np.empty(size, dtype=np.uint32)
        failed = self._kernel._take(self.handle, bits, keys.ctypes.data, sums.ctypes.data, residues.ctypes.data)
        self.close()
        if failed:
            raise MemoryError(f"the peg counter's kernel could not sort {size:,} positions")
        return keys, sums, residues

    def close(self) -> None:
        if self.handle:
            self._kernel._free(self.handle)
            self.handle = None

    def __enter__(self) -> Table:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Kernel:
    """The compiled functions, called through ctypes on numpy arrays."""

    # What one depth-first search (`hunt`) holds: solve.py asks before it hands a board over.
    most_symmetries, most_pagodas = MOST_SYMMETRIES, MOST_PAGODAS

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
        self._expand.restype = ctypes.c_size_t
        self._expand.argtypes = [ctypes.c_void_p, ctypes.POINTER(_BoardData)] + [ctypes.c_void_p] * 3
        self._expand.argtypes += [ctypes.c_size_t, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32]
        self._expand.argtypes += [ctypes.c_void_p] * 3 + [ctypes.c_size_t, ctypes.c_void_p]
        self._add = library.pegs_table_add
        self._add.restype = ctypes.c_int
        self._add.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_size_t]
        self._take = library.pegs_table_take
        self._take.restype = ctypes.c_int
        self._take.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        self._canonical = library.pegs_canonical
        self._canonical.restype = None
        self._canonical.argtypes = [ctypes.POINTER(_BoardData), ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
        self._sort = library.pegs_sort
        self._sort.restype = ctypes.c_int
        self._sort.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint]
        self._cut = library.pegs_cut
        self._cut.restype = ctypes.c_int
        self._cut.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_size_t, ctypes.c_uint32] + [ctypes.c_void_p] * 4
        self._common = library.pegs_common
        self._common.restype = ctypes.c_size_t
        self._common.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
        self._prepared: Dict[Board, Prepared] = {}
        self._dead_new = library.pegs_dead_new
        self._dead_new.restype = ctypes.c_void_p
        self._dead_new.argtypes = [ctypes.c_size_t]
        self._dead_free = library.pegs_dead_free
        self._dead_free.restype = None
        self._dead_free.argtypes = [ctypes.c_void_p]
        self._hunt_size = library.pegs_hunt_size
        self._hunt_size.restype = ctypes.c_size_t
        self._hunt_size.argtypes = []
        self._hunt_start = library.pegs_hunt_start
        self._hunt_start.restype = None
        self._hunt_start.argtypes = [ctypes.c_void_p, ctypes.POINTER(_HuntBoard), ctypes.c_void_p, ctypes.c_void_p]
        self._hunt = library.pegs_hunt
        self._hunt.restype = ctypes.c_int
        self._hunt.argtypes = [ctypes.c_void_p, ctypes.POINTER(_HuntBoard), ctypes.c_void_p, ctypes.c_uint64]
        self._hunt_positions = library.pegs_hunt_positions
        self._hunt_positions.restype = ctypes.c_uint64
        self._hunt_positions.argtypes = [ctypes.c_void_p]
        self._hunt_fewest = library.pegs_hunt_fewest
        self._hunt_fewest.restype = ctypes.c_uint32
        self._hunt_fewest.argtypes = [ctypes.c_void_p]
        self._hunt_path = library.pegs_hunt_path
        self._hunt_path.restype = ctypes.c_uint32
        self._hunt_path.argtypes = [ctypes.c_void_p, ctypes.c_void_p]

    def dead_positions(self, size: int) -> DeadPositions:
        """A table of dead positions for the searches of one solve, in about `size` bytes."""
        return DeadPositions(self, size)

    def hunt(self, board: Board, order: Sequence[Jump], dead: DeadPositions, **options: Any) -> Hunt:
        """A depth-first search of `board` in jump `order` (see Hunt)."""
        return Hunt(self, board, order, dead, **options)

    def prepare(self, board: Board) -> Prepared:
        if board not in self._prepared:
            self._prepared = {board: Prepared(board)}  # one board at a time: a count is long
        return self._prepared[board]

    def table(self, expected: int) -> Table:
        """An empty table for about `expected` positions (it grows if need be)."""
        return Table(self, expected)

    def expand(
        self,
        table: Optional[Table],
        board: Board,
        level: Arrays,
        first: int,
        stuck: np.ndarray,
        outgoing: Optional[Outgoing] = None,
        own: int = 0,
    ) -> int:
        """Expand the parents of `level` from `first` on: children of share `own` (of
        `outgoing.shares`, by shares.owners) into `table`, the others appended to `outgoing`;
        without `outgoing`, every child into `table`. Stops once `outgoing` might not hold the next
        parent's children; returns how many parents it expanded. The sequences ending in a parent
        with no jump are added to `stuck` (modulo 2^64 and modulo the prime)."""
        prepared = self.prepare(board)
        positions, counts, checks = level
        assert positions.flags.c_contiguous and counts.flags.c_contiguous and checks.flags.c_contiguous
        out = outgoing or Outgoing(1, 0)
        assert (out.shares == 1 and own == 0) or out.room >= len(board.jumps), "room for one parent's children"
        done = self._expand(
            table.handle if table is not None else None,
            ctypes.byref(prepared.data),
            positions.ctypes.data + 8 * first,
            counts.ctypes.data + 8 * first,
            checks.ctypes.data + 4 * first,
            len(positions) - first,
            stuck.ctypes.data,
            out.shares,
            own,
            *(column.ctypes.data for column in out.columns),
            out.room,
            out.filled.ctypes.data,
        )
        if done == ctypes.c_size_t(-1).value:
            size = table.size if table is not None else 0
            raise MemoryError(f"the peg counter's kernel ran out of memory growing its table past {size:,} positions")
        return int(done)

    def next_level(
        self,
        board: Board,
        level: Arrays,
        block: int,
        expected: int,
        after_block: Callable[[int, int], None],
    ) -> Tuple[Arrays, Tuple[int, int]]:
        """count.next_level in C: the next level, sorted, and the sequences ending on this one
        (modulo 2^64 and modulo the prime). `expected` sizes the table (it grows if need be)."""
        level = contiguous(level)
        stuck = np.zeros(2, dtype=np.uint64)
        with self.table(expected) as table:
            for first in range(0, len(level[0]), block):
                after_block(first, len(level[0]))
                end = min(first + block, len(level[0]))
                self.expand(table, board, tuple(column[:end] for column in level), first, stuck)  # type: ignore[arg-type]
            return table.take(board.size), (int(stuck[0]), int(stuck[1]))

    def canonical(self, board: Board, positions: np.ndarray) -> np.ndarray:
        """The smallest orientation of each position, sorted."""
        prepared = self.prepare(board)
        positions = np.ascontiguousarray(positions, dtype=np.uint64)
        out = np.empty_like(positions)
        self._canonical(ctypes.byref(prepared.data), positions.ctypes.data, len(positions), out.ctypes.data)
        if self._sort(out.ctypes.data, len(out), prepared.bits):
            out.sort()  # the kernel had no memory for its sort: numpy's
        return out

    def sort(self, board: Board, values: np.ndarray) -> None:
        """Sort positions of `board` in place (a C uint64 array)."""
        assert values.dtype == np.uint64 and values.flags.c_contiguous and values.flags.writeable
        if self._sort(values.ctypes.data, len(values), self.prepare(board).bits):
            values.sort()  # the kernel had no memory for its sort: numpy's

    def cut(self, part: Arrays, shares: int) -> List[Arrays]:
        """`part` cut into `shares` by shares.owners, each in the order it had: one copy of the
        arrays, the pieces views of it."""
        keys, counts, checks = (np.ascontiguousarray(column) for column in part)
        out = (np.empty_like(keys), np.empty_like(counts), np.empty_like(checks))
        starts = np.empty(shares + 1, dtype=np.uintp)
        pointers = [column.ctypes.data for column in (keys, counts, checks)] + [column.ctypes.data for column in out]
        if self._cut(*pointers[:3], len(keys), shares, *pointers[3:], starts.ctypes.data):
            raise MemoryError(f"the peg counter's kernel could not cut {len(keys):,} positions into {shares} shares")
        return [tuple(column[starts[j] : starts[j + 1]] for column in out) for j in range(shares)]  # type: ignore[misc]

    def common(self, first: np.ndarray, second: np.ndarray) -> int:
        """How many values two arrays of distinct uint64, each sorted, have in common."""
        first = np.ascontiguousarray(first, dtype=np.uint64)
        second = np.ascontiguousarray(second, dtype=np.uint64)
        return int(self._common(first.ctypes.data, len(first), second.ctypes.data, len(second)))


# The interface this file lays out (kernel.c's pegs_abi answers the same, or is not used).
ABI = native.Abi(
    "pegs_abi",
    2,
    (
        ctypes.sizeof(_BoardData),
        ctypes.sizeof(_Pair),
        ctypes.sizeof(_HuntBoard),
        ctypes.sizeof(ctypes.c_size_t),
        MOST_SYMMETRIES,
        MOST_PAGODAS,
        MOST_HOLES,
    ),
)
SPEC = native.Spec(
    job="pegs",
    source=SOURCE,
    variable=ENV,
    instead="counting with numpy and searching in Python",
    # benchmarks/kernels.py, on the 2-core development machine (x86-64); a Pi differs in
    # seconds, less in the ratio.
    slower="pegs count english takes 3.5x the CPU without it (40 s instead of 11 s, measured)",
    abi=ABI,
)


def load(
    cache_dir: Optional[Path], *, environ: Mapping[str, str] = os.environ, switch: Optional[str] = None
) -> Optional[Kernel]:
    """The kernel, built into `cache_dir` if it is not there yet (without one, into a temporary
    folder removed once loaded), or None after one WARNING saying why the count runs on numpy and
    the searches in Python, what it costs and the fix. `switch` is TWITTERBOT_PEGS_KERNEL from
    the config (without it, the environment's). Never raises: those paths give the same answers."""
    return native.load(Kernel, SPEC, cache_dir, log=log, environ=environ, switch=switch)


@functools.lru_cache(maxsize=1)
def worker_kernel() -> Optional[Kernel]:
    """The kernel in a cluster's worker process, built once per process into a temporary folder
    (None: numpy and Python, the same answers)."""
    return load(None)


def state(
    cache_dir: Optional[Path], *, environ: Mapping[str, str] = os.environ, switch: Optional[str] = None
) -> native.KernelState:
    """What `bot.py check` says of the kernel: built (now, if need be), loadable, in use, or why not."""
    return native.inspect(Kernel, SPEC, cache_dir, environ=environ, switch=switch)

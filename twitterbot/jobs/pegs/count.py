"""Count a peg solitaire board exactly, level by level: how many distinct positions (up to the
board's symmetries) are reachable after n jumps, and how many jump sequences win.

Breadth-first over numpy arrays of uint64 bitboards. Each level holds its positions (the smallest
of their orientations) and, for each, the number of jump sequences from the start that reach it in
any orientation. That number simply adds up along jumps; at the end, the winning position is
its own mirror image, so its number is the number of solutions. For the English board this
reproduces OEIS A112737 (23,475,688 positions) and 40,861,647,040,079,968 solutions.

Children are generated, oriented and merged in blocks of parents, so memory stays around
`block` x (jumps per position) x 40 bytes, whatever the level's size. Counts are kept modulo 2^64
and modulo a prime, and put together exactly by the Chinese remainder theorem, so counts beyond
2^64 (the English board's 577,116,156,815,309,849,672 complete games) come out exact too.
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, List, Optional, Tuple

import numpy as np

from .board import Board, check_countable
from .orient import Orienter

if TYPE_CHECKING:  # pragma: no cover
    from .kernel import Kernel

__all__ = [
    "BLOCK",
    "PRIME",
    "Counting",
    "Level",
    "count_levels",
    "empty_level",
    "exact_count",
    "finishable_counts",
    "load_checkpoint",
    "merge_pieces",
    "next_level",
]

PRIME = 4_294_967_291  # the largest prime below 2^32: sums of a block's counts stay below 2^64
BLOCK = 50_000  # parents expanded at once
ORIGIN_BITS = 20  # a block's parent index, packed below a child's position for sorting


@dataclass(frozen=True)
class Level:
    """One level of the count: `jumps` made, distinct `positions` (up to symmetry), the jump
    sequences that reach them (`sequences`, exact while below 2^64), and the winning count once
    the last level is reached."""

    jumps: int
    positions: int
    sequences: int
    seconds: float
    solutions: Optional[int] = None  # set on the level where the game ends
    games: int = 0  # complete games ending here: sequences reaching a position with no jump left


@dataclass(frozen=True)
class Counting:
    """Progress inside a level: `done` of the `total` positions after `jumps - 1` jumps have been
    expanded, in `seconds`. Given to `count_levels`'s `progress` after each block."""

    jumps: int
    done: int
    total: int
    seconds: float

    @property
    def seconds_left(self) -> Optional[float]:
        """When this level should be done, at the pace so far (None before there is a pace)."""
        if not self.done or self.seconds <= 0:
            return None
        return self.seconds * (self.total - self.done) / self.done


def empty_level() -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A level (or a share of one) with no position."""
    empty = np.zeros(0, dtype=np.uint64)
    return empty, empty, np.zeros(0, dtype=np.uint32)


def merge_pieces(pieces: List[Tuple[np.ndarray, np.ndarray, np.ndarray]]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sort the pieces' positions together and add up the counts of equal positions, emptying
    `pieces` as it goes. The stable sort is timsort, which merges already sorted pieces in linear
    time; one column at a time, each column's pieces let go as soon as they are joined, so that
    the peak is the pieces plus about two columns, not twice everything."""
    columns = [list(column) for column in zip(*pieces)]
    pieces.clear()
    keys = np.concatenate(columns[0])
    columns[0].clear()
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    keys = keys[starts]
    counts = np.concatenate(columns[1])
    columns[1].clear()
    counts = np.add.reduceat(counts[order], starts)  # uint64 wraps: modulo 2^64
    checks = np.concatenate(columns[2])
    columns[2].clear()
    checks = np.add.reduceat(checks[order], starts, dtype=np.uint64)
    return keys, counts, (checks % np.uint64(PRIME)).astype(np.uint32)


def _children(
    board: Board,
    orient: Orienter,
    parents: np.ndarray,
    counts: np.ndarray,
    checks: np.ndarray,
    stuck: List[int],
) -> Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """A block of parents' children, oriented, sorted and added up; the sequences ending in a
    parent with no jump go to `stuck`. Only the parents' indices travel with the children, so
    their counts are gathered once, already in sorted order."""
    children, origins = [], []
    moves = np.zeros(len(parents), dtype=bool)
    for jump in board.jumps:
        can = np.flatnonzero((parents & np.uint64(jump.flips)) == np.uint64(jump.needs))
        if len(can):
            moves[can] = True
            children.append(parents[can] ^ np.uint64(jump.flips))
            origins.append(can)
    if not moves.all():
        stuck[0] = (stuck[0] + int(counts[~moves].sum(dtype=np.uint64))) % (1 << 64)
        stuck[1] = (stuck[1] + int(checks[~moves].sum(dtype=np.uint64))) % PRIME
    if not children:
        return None
    keys = orient.canonical(np.concatenate(children))
    origin = np.concatenate(origins)
    if board.size + ORIGIN_BITS <= 64 and len(parents) <= 1 << ORIGIN_BITS:
        # Pack each child with its parent's index and sort plain numbers: numpy's vectorised
        # sort is about five times faster than an argsort of the same array.
        packed = np.sort((keys << np.uint64(ORIGIN_BITS)) | origin.astype(np.uint64))
        keys = packed >> np.uint64(ORIGIN_BITS)
        origin = (packed & np.uint64((1 << ORIGIN_BITS) - 1)).astype(np.intp)
    else:
        order = np.argsort(keys)
        keys, origin = keys[order], origin[order]
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    summed = np.add.reduceat(counts[origin], starts)  # uint64 wraps: modulo 2^64
    summed_checks = np.add.reduceat(checks[origin], starts, dtype=np.uint64) % np.uint64(PRIME)
    return keys[starts], summed, summed_checks.astype(np.uint32)  # below PRIME < 2^32


def next_level(
    board: Board,
    orient: Orienter,
    level: Tuple[np.ndarray, np.ndarray, np.ndarray],
    block: int,
    after_block: Callable[[int, int], None] = lambda done, total: None,
):
    """The next level, and the games ending on this one. Blocks' results are merged like a
    binary counter (a piece is merged into the one before once it is at least half its size), so
    each child is merged O(log blocks) times, never once per block."""
    positions, counts, checks = level
    pieces: List[Tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    stuck = [0, 0]  # sequences ending in a position with no jump: modulo 2^64 and modulo PRIME
    for first in range(0, len(positions), block):
        after_block(first, len(positions))
        piece = _children(
            board,
            orient,
            positions[first : first + block],
            counts[first : first + block],
            checks[first : first + block],
            stuck,
        )
        if piece is None:
            continue
        pieces.append(piece)
        while len(pieces) > 1 and 2 * len(pieces[-1][0]) >= len(pieces[-2][0]):
            pair = [pieces.pop(-2), pieces.pop()]
            pieces.append(merge_pieces(pair))
    games = exact_count(*stuck)
    if not pieces:
        return empty_level(), games
    if len(pieces) == 1:
        return pieces[0], games
    return merge_pieces(pieces), games


def count_levels(
    board: Board,
    *,
    checkpoint: Optional[Path] = None,
    block: int = BLOCK,
    clock: Callable[[], float] = time.perf_counter,
    progress: Optional[Callable[[Counting], None]] = None,
    keep: Optional[Path] = None,
    kernel: Optional[Kernel] = None,
) -> Iterator[Level]:
    """Yield each level as it is counted, from the start (0 jumps) to the last reachable one.
    With `checkpoint`, each level is saved there (atomically) and a later call resumes after the
    last saved level instead of starting again. `progress` hears how far the level being counted
    is, before each block of positions (a big level takes minutes). With `keep` (a folder), each
    level's positions are saved there as `level-N.npy` for `finishable_counts`. With `kernel`
    (kernel.load), each level is made by the compiled kernel: the same levels, faster.

    A level is yielded once the next one is made, since the games that end on it are known
    only then."""
    check_countable(board, "pegs count")
    orient = Orienter(board)
    start = orient.canonical(np.array([board.start], dtype=np.uint64))
    level = (start, np.ones(1, dtype=np.uint64), np.ones(1, dtype=np.uint32))
    history: List[Level] = []
    resumed = load_checkpoint(checkpoint, board) if checkpoint else None
    if resumed:
        history, level = resumed
        yield from history[:-1]  # the levels counted before the stop, as they were
    else:
        history.append(_level(board, 0, level, 0.0))
        _keep(keep, 0, level[0])
    began = clock()
    # The next level's size over this one's, as last seen: sizes the kernel's table.
    growth = history[-1].positions / history[-2].positions if len(history) > 1 else 4.0
    while True:
        after_block = _progress_of(progress, len(history), clock) if progress else lambda done, total: None
        if kernel is None:
            level, games = next_level(board, orient, level, block, after_block)
        else:
            size = len(level[0])
            level, stuck = kernel.next_level(board, level, block, int(size * growth * 1.1) + 16, after_block)
            games = exact_count(*stuck)
            growth = max(len(level[0]) / max(size, 1), 0.1)
        history[-1] = dataclasses.replace(history[-1], games=games)
        yield history[-1]
        if not len(level[0]):
            return
        history.append(_level(board, len(history), level, clock() - began))
        _keep(keep, len(history) - 1, level[0])
        if checkpoint:
            _save(checkpoint, board, history, level)


def _keep(folder: Optional[Path], jumps: int, positions: np.ndarray) -> None:
    if folder is not None:
        np.save(folder / f"level-{jumps}.npy", positions)


def finishable_counts(
    board: Board, folder: Path, levels: int, *, kernel: Optional[Kernel] = None
) -> Optional[List[int]]:
    """Per level, the positions (up to symmetry) from which the goal can still be reached: OEIS
    A112738 for the English board. None unless the goal is one peg and the start is its
    complement (a central game), or if a level's file is missing.

    Played backwards, a jump is a jump of the holes: the positions that can still reach the goal
    are the complements of the positions reachable from the goal's complement, which is the
    start. So level k's answer is its positions whose complement is on level (2P - n - k), P
    the start's pegs and n the holes: no search beyond the count itself. With `kernel`, the
    orienting and matching are compiled: the same answer."""
    if board.goal is None or board.full ^ board.goal != board.start:
        return None
    orient = Orienter(board)
    pegs = board.pegs(board.start)
    found = []
    try:
        for jumps in range(levels):
            mirror = 2 * pegs - board.size - jumps
            if not 0 <= mirror < levels:
                found.append(0)
                continue
            here = np.load(folder / f"level-{jumps}.npy")
            there = np.load(folder / f"level-{mirror}.npy") ^ np.uint64(board.full)
            if kernel is None:
                found.append(int(np.isin(here, orient.canonical(there), assume_unique=True).sum()))
            else:  # matched as two sorted lists (the level files are sorted, unless written by hand)
                here = here if np.all(here[1:] > here[:-1]) else np.unique(here)
                found.append(kernel.common(here, kernel.canonical(board, there)))
    except OSError:
        return None
    return found


def _progress_of(
    progress: Callable[[Counting], None], jumps: int, clock: Callable[[], float]
) -> Callable[[int, int], None]:
    began = clock()

    def after_block(done: int, total: int) -> None:
        progress(Counting(jumps, done, total, clock() - began))

    return after_block


def _level(board: Board, jumps: int, level, seconds: float) -> Level:
    positions, counts, checks = level
    sequences = exact_count(int(counts.sum(dtype=np.uint64)), int(checks.sum(dtype=np.uint64) % PRIME))
    solutions = None
    if board.pegs(board.start) - jumps == 1:  # one peg left: the game is over
        if board.target is None and board.ends is None:
            solutions = sequences
        else:
            won = (positions & np.uint64(board.goal if board.goal is not None else board.ends)) != 0
            solutions = exact_count(int(counts[won].sum(dtype=np.uint64)), int(checks[won].sum(dtype=np.uint64) % PRIME))
    return Level(jumps, len(positions), sequences, seconds, solutions)


def exact_count(modulo_2_64: int, modulo_prime: int) -> int:
    """The count from its residues modulo 2^64 and modulo PRIME (Chinese remainders): exact for
    any count below 2^64 x PRIME, about 7.9 x 10^28. Every count here is at most the number of
    complete games (each jump sequence extends to one), 5.8 x 10^20 on the English board."""
    lift = (modulo_prime - modulo_2_64) * pow(1 << 64, -1, PRIME) % PRIME
    return modulo_2_64 + (1 << 64) * lift


def _save(path: Path, board: Board, history: List[Level], level) -> None:
    """Write the newest level, and the sizes of all before it, atomically (temp file + rename)."""
    temporary = path.with_name(path.name + ".tmp")
    sequences = [level_.sequences for level_ in history]
    with open(temporary, "wb") as handle:
        np.savez(
            handle,
            start=np.uint64(board.start),
            sizes=np.array([level_.positions for level_ in history], dtype=np.int64),
            sequences=np.array([str(value) for value in sequences]),
            solutions=np.array([str(level_.solutions) for level_ in history]),
            games=np.array([str(level_.games) for level_ in history]),
            positions=level[0],
            counts=level[1],
            checks=level[2],
        )
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def load_checkpoint(
    path: Path, board: Board
) -> Optional[Tuple[List[Level], Tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """The levels counted so far and the newest level's arrays, or None if there is no checkpoint
    for this board (a missing, foreign or damaged file means starting afresh)."""
    try:
        with np.load(path) as saved:
            if int(saved["start"]) != board.start:
                return None
            history = [
                Level(
                    jumps, int(size), int(sequences), 0.0, None if solutions == "None" else int(solutions), int(games)
                )
                for jumps, (size, sequences, solutions, games) in enumerate(
                    zip(saved["sizes"], saved["sequences"], saved["solutions"], saved["games"])
                )
            ]
            return history, (saved["positions"], saved["counts"], saved["checks"])
    except (OSError, KeyError, ValueError, EOFError):
        return None

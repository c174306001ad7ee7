"""One level of the peg count from the one before: the step `count.count_levels` repeats, and
the pieces the parallel counts (`cores.py`, `spread.py`) are made of.

A level is three numpy arrays: its positions as uint64 bitboards (each the smallest of its
orientations, sorted), and for each, the number of jump sequences from the start that reach it
in any orientation, modulo 2^64 and modulo PRIME. That number simply adds up along jumps.
Children are generated, oriented and added up in blocks of parents, so memory stays around
`block` x (jumps per position) x 40 bytes, whatever the level's size; `exact_count` puts the two
residues together (Chinese remainders), so counts beyond 2^64 come out exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

import numpy as np

from .board import Board
from .orient import Orienter

__all__ = [
    "BLOCK",
    "Part",
    "PRIME",
    "Counting",
    "Level",
    "add_piece",
    "children",
    "empty_level",
    "exact_count",
    "merge_pieces",
    "merged",
    "next_level",
]

Part = Tuple[np.ndarray, np.ndarray, np.ndarray]  # positions (uint64), counts mod 2^64 (uint64), mod PRIME (uint32)

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


def empty_level() -> Part:
    """A level (or a share of one) with no position."""
    empty = np.zeros(0, dtype=np.uint64)
    return empty, empty, np.zeros(0, dtype=np.uint32)


def merge_pieces(pieces: List[Part]) -> Part:
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


def children(
    board: Board,
    orient: Orienter,
    parents: np.ndarray,
    counts: np.ndarray,
    checks: np.ndarray,
    stuck: List[int],
) -> Optional[Part]:
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
    level: Part,
    block: int,
    after_block: Callable[[int, int], None] = lambda done, total: None,
):
    """The next level, and the games ending on this one (blocks' results merged by `add_piece`)."""
    positions, counts, checks = level
    pieces: List[Part] = []
    stuck = [0, 0]  # sequences ending in a position with no jump: modulo 2^64 and modulo PRIME
    for first in range(0, len(positions), block):
        after_block(first, len(positions))
        piece = children(
            board,
            orient,
            positions[first : first + block],
            counts[first : first + block],
            checks[first : first + block],
            stuck,
        )
        if piece is not None:
            add_piece(pieces, piece)
    return merged(pieces), exact_count(*stuck)


def add_piece(pieces: List[Part], piece: Part) -> None:
    """Add a sorted piece to `pieces`, merged like a binary counter: a piece is merged into the one
    before once it is at least half its size, so each child is merged O(log pieces) times."""
    pieces.append(piece)
    while len(pieces) > 1 and 2 * len(pieces[-1][0]) >= len(pieces[-2][0]):
        pair = [pieces.pop(-2), pieces.pop()]
        pieces.append(merge_pieces(pair))


def merged(pieces: List[Part]) -> Part:
    """The pieces of `add_piece` as one sorted level (emptying `pieces`)."""
    if not pieces:
        return empty_level()
    if len(pieces) == 1:
        return pieces.pop()
    return merge_pieces(pieces)


def exact_count(modulo_2_64: int, modulo_prime: int) -> int:
    """The count from its residues modulo 2^64 and modulo PRIME (Chinese remainders): exact for
    any count below 2^64 x PRIME, about 7.9 x 10^28. Every count here is at most the number of
    complete games (each jump sequence extends to one), 5.8 x 10^20 on the English board."""
    lift = (modulo_prime - modulo_2_64) * pow(1 << 64, -1, PRIME) % PRIME
    return modulo_2_64 + (1 << 64) * lift

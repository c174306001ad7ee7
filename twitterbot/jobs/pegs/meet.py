"""Meet in the middle, for a goal that is an exact final position (a pattern of pegs).

Depth-first search looks for the pattern among every way of clearing the board, and most of
them clear the wrong holes: Debian's "finish with these 20 pegs" games defeat it. The goal is
known exactly, so search from both ends instead: breadth-first forward from the start (jumps)
and backward from the goal (un-jumps: a peg in c with holes in a and b becomes pegs in a and b),
a level of one side at a time, always the smaller side, until the levels' depths add up to the
jumps a solution has (every jump takes one peg, so that number is fixed). A solution passes
through both levels at that split, so the two sets meet exactly when there is a solution: an
empty meeting proves the game impossible, and a shared position is followed back to both ends.

Positions live in sorted numpy arrays of uint64 bitboards::

    search = MeetInTheMiddle(board)
    for outcome in search.run():  # None after each level, then the jumps, or () if impossible
        ...
"""

from __future__ import annotations

from typing import Iterator, List, Optional, Tuple

import numpy as np

from .board import MAX_COUNTED_HOLES, Board, Jump

__all__ = ["MeetInTheMiddle", "TooBig"]

# Positions held in all levels before the search gives up: 8 bytes each, so about 100 MB, with
# room for one level's children beside them.
MAX_POSITIONS = 12_000_000
BLOCK = 100_000  # parents expanded at once: their children take some 10 MB


class TooBig(Exception):
    """The levels outgrew `max_positions` before the halves met: this search decides nothing."""


class MeetInTheMiddle:
    """One search, run a level at a time by `run()`; `positions` counts every position made."""

    def __init__(self, board: Board, max_positions: Optional[int] = None) -> None:
        if board.goal is None or board.size > MAX_COUNTED_HOLES:
            raise ValueError("meeting in the middle needs an exact final position, on at most 64 holes")
        self.board = board
        self.max_positions = MAX_POSITIONS if max_positions is None else max_positions
        self.positions = 0
        self._flips = np.array([jump.flips for jump in board.jumps], dtype=np.uint64)
        self._needs = np.array([jump.needs for jump in board.jumps], dtype=np.uint64)
        self._ends = np.array([1 << jump.end for jump in board.jumps], dtype=np.uint64)
        self.forward: List[np.ndarray] = [np.array([board.start], dtype=np.uint64)]
        self.backward: List[np.ndarray] = [np.array([board.goal], dtype=np.uint64)]
        self.depth = board.pegs(board.start) - board.pegs(board.goal)

    def run(self) -> Iterator[Optional[Tuple[Jump, ...]]]:
        """Yield None after each level; then the winning jumps, or () when there are none.
        Raises TooBig when the levels outgrow `max_positions` first."""
        if self.depth < 0:
            yield ()
            return
        while len(self.forward) + len(self.backward) - 2 < self.depth:
            grow_forward = len(self.forward[-1]) <= len(self.backward[-1])
            side = self.forward if grow_forward else self.backward
            if sum(len(level) for level in self.forward + self.backward) + _foreseen(side) > self.max_positions:
                self.forward = self.forward[:1]  # what is kept is the goal's side, for `finish_from`
                raise TooBig(f"more than {self.max_positions:,} positions")
            following = self._level(side[-1], forward=grow_forward)
            side.append(following)
            self.positions += len(following)
            if not len(following):
                yield ()
                return
            yield None
        met = np.intersect1d(self.forward[-1], self.backward[-1], assume_unique=True)
        if not len(met):
            yield ()
            return
        yield self._path(int(met[0]))

    def _level(self, positions: np.ndarray, *, forward: bool) -> np.ndarray:
        """Every position one jump after (forward) or before (backward) `positions`, sorted, once
        each. Made a block of parents at a time, each block's children sorted and merged into the
        rest like a binary counter: a level's children with repeats are many times the level."""
        pieces: List[np.ndarray] = []
        for first in range(0, len(positions), BLOCK):
            parents = positions[first : first + BLOCK]
            children = []
            for flips, needs, end in zip(self._flips, self._needs, self._ends):
                # Forward, a jump needs pegs in a and b and a hole in c; backward, the reverse.
                can = (parents & flips) == (needs if forward else end)
                if can.any():
                    children.append(parents[can] ^ flips)
            if children:
                pieces.append(np.unique(np.concatenate(children)))
            while len(pieces) > 1 and 2 * len(pieces[-1]) >= len(pieces[-2]):
                pieces.append(_union(pieces.pop(), pieces.pop()))
        while len(pieces) > 1:
            pieces.append(_union(pieces.pop(), pieces.pop()))
        return pieces[0] if pieces else np.zeros(0, dtype=np.uint64)

    @property
    def edge_depth(self) -> int:
        """How many jumps from the start the goal's side reaches back to: a depth-first search
        that gets there either stands on that side (`finish_from` ends the game) or is at a dead end."""
        return self.depth - (len(self.backward) - 1)

    def finish_from(self, position: int) -> Optional[Tuple[Jump, ...]]:
        """The jumps from `position`, `edge_depth` jumps from the start, to the goal; None if the
        goal cannot be reached from it."""
        if not _holds(self.backward[-1], position):
            return None
        after: List[Jump] = []
        for level in reversed(self.backward[:-1]):
            jump = next(j for j in self.board.jumps if self._allows(position, j) and _holds(level, position ^ j.flips))
            after.append(jump)
            position ^= jump.flips
        return tuple(after)

    def _path(self, middle: int) -> Tuple[Jump, ...]:
        """The jumps from the start through `middle` to the goal, each half found again by
        stepping one level at a time towards its end."""
        before: List[Jump] = []
        position = middle
        for level in reversed(self.forward[:-1]):
            jump = next(j for j in self.board.jumps if self._undoes(position, j) and _holds(level, position ^ j.flips))
            before.append(jump)
            position ^= jump.flips
        return tuple(reversed(before)) + (self.finish_from(middle) or ())

    @staticmethod
    def _allows(position: int, jump: Jump) -> bool:
        return position & jump.flips == jump.needs

    @staticmethod
    def _undoes(position: int, jump: Jump) -> bool:
        return position & jump.flips == 1 << jump.end


def _foreseen(side: List[np.ndarray]) -> int:
    """How big the side's next level will be, from how its last level grew (the first grows by
    the jumps the start allows, a handful): stopping before a level too big, not after it, keeps
    the peak near the limit."""
    if len(side) < 2:
        return 8 * len(side[-1])
    return int(len(side[-1]) * len(side[-1]) / max(1, len(side[-2])))


def _union(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Two sorted sets as one, in about twice their size (np.union1d takes four times)."""
    joined = np.concatenate((first, second))
    del first, second  # the caller's references are gone: only `joined` holds them now
    joined.sort(kind="stable")  # radix sort for integers: linear time
    keep = np.empty(len(joined), dtype=bool)
    keep[:1] = True
    np.not_equal(joined[1:], joined[:-1], out=keep[1:])
    return joined[keep]


def _holds(level: np.ndarray, position: int) -> bool:
    """Whether the sorted `level` holds `position`."""
    at = int(np.searchsorted(level, np.uint64(position)))
    return at < len(level) and int(level[at]) == position

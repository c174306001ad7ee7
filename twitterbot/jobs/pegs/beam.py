"""A beam search for peg solitaire: where depth-first search stalls on a big board, go level by
level (one jump per level), keep only the `width` most promising positions of each level, and
follow the parents back from a winning one. It finds solutions fast but proves nothing: a beam
that dies out says only that this width was too narrow.

Positions live in numpy arrays of uint64 bitboards, so one level's children are made, deduplicated,
pruned and scored a whole array at a time::

    jumps = beam_search(board, width=20_000)   # a tuple of jumps, or None
"""

from __future__ import annotations

from typing import Iterator, List, Optional, Sequence, Tuple

import numpy as np

from .board import Board, Jump, pagoda_weights

__all__ = ["BeamSearch", "beam_search"]


class _Weigher:
    """Sum of per-hole weights over a position's pegs, by 8-bit lookup tables."""

    def __init__(self, weights: Sequence[float]) -> None:
        self._tables = []
        for chunk in range(0, len(weights), 8):
            part = list(weights[chunk : chunk + 8]) + [0.0] * (8 - len(weights[chunk : chunk + 8]))
            table = np.zeros(256)
            for byte in range(1, 256):
                low = (byte & -byte).bit_length() - 1
                table[byte] = table[byte & (byte - 1)] + part[low]
            self._tables.append(table)

    def __call__(self, positions: np.ndarray) -> np.ndarray:
        total = np.zeros(len(positions))
        for chunk, table in enumerate(self._tables):
            total += table[((positions >> np.uint64(8 * chunk)) & np.uint64(0xFF)).astype(np.intp)]
        return total


class BeamSearch:
    """One beam search of a given width, a level per step: `run()` yields None after each level,
    then the winning jumps (a tuple) or () if the beam died out."""

    def __init__(self, board: Board, width: int) -> None:
        self.board = board
        self.width = width
        self.positions = 0
        rows = [row for row, _ in board.cells]
        cols = [col for _, col in board.cells]
        middle = ((min(rows) + max(rows)) / 2, (min(cols) + max(cols)) / 2)
        # Pegs far from the middle are the hard ones to clear: a position with its pegs gathered
        # in the middle scores better. Neighbourless pegs need other pegs to come to them.
        self._spread = _Weigher([abs(row - middle[0]) + abs(col - middle[1]) for row, col in board.cells])
        weights = pagoda_weights(board)
        self._pagoda = _Weigher(weights) if weights else None
        self._goal_weight = weights[board.target] if weights and board.target is not None else 0.0
        self._neighbours = []
        near: List[int] = [0] * board.size
        for jump in board.jumps:
            near[jump.start] |= 1 << jump.over
        self._neighbours = near

    def _isolated(self, positions: np.ndarray) -> np.ndarray:
        count = np.zeros(len(positions), dtype=np.int64)
        for hole, near in enumerate(self._neighbours):
            has = (positions >> np.uint64(hole)) & np.uint64(1)
            alone = (positions & np.uint64(near)) == 0
            count += (has.astype(bool) & alone).astype(np.int64)
        return count

    def run(self) -> Iterator[Optional[Tuple[Jump, ...]]]:
        board = self.board
        jumps = board.jumps
        needs = np.array([jump.needs for jump in jumps], dtype=np.uint64)
        ends = np.array([1 << jump.end for jump in jumps], dtype=np.uint64)
        flips = np.array([jump.flips for jump in jumps], dtype=np.uint64)
        level = np.array([board.start], dtype=np.uint64)
        history: List[Tuple[np.ndarray, np.ndarray]] = []  # per level: parent index, jump index
        levels = [level]
        final = board.final_pegs
        for _ in range(board.pegs(board.start) - final):
            children, parents, used = [], [], []
            for j in range(len(jumps)):
                can = np.flatnonzero(((level & needs[j]) == needs[j]) & ((level & ends[j]) == 0))
                if len(can):
                    children.append(level[can] ^ flips[j])
                    parents.append(can)
                    used.append(np.full(len(can), j, dtype=np.int32))
            if not children:
                yield ()
                return
            child = np.concatenate(children)
            parent = np.concatenate(parents)
            jump_of = np.concatenate(used)
            child, first = np.unique(child, return_index=True)
            parent, jump_of = parent[first], jump_of[first]
            self.positions += len(child)
            if self._pagoda is not None:
                keep = self._pagoda(child) >= self._goal_weight - 1e-9
                child, parent, jump_of = child[keep], parent[keep], jump_of[keep]
                if not len(child):
                    yield ()
                    return
            if len(child) > self.width:
                score = self._isolated(child) * 4.0 + self._spread(child)
                best = np.argpartition(score, self.width)[: self.width]
                child, parent, jump_of = child[best], parent[best], jump_of[best]
            history.append((parent, jump_of))
            levels.append(child)
            level = child
            yield None
        won = [i for i, position in enumerate(level.tolist()) if board.is_won(int(position))]
        if not won:
            yield ()
            return
        path: List[Jump] = []
        index = won[0]
        for parent, jump_of in reversed(history):
            path.append(jumps[int(jump_of[index])])
            index = int(parent[index])
        yield tuple(reversed(path))


def beam_search(board: Board, width: int) -> Optional[Tuple[Jump, ...]]:
    """The winning jumps one beam search of `width` finds, or None."""
    for outcome in BeamSearch(board, width).run():
        if outcome is not None:
            return outcome or None
    return None

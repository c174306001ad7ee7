"""A beam search for peg solitaire: where depth-first search stalls on a big board, go level by
level (one jump per level), keep only the `width` most promising positions of each level, and
follow the parents back from a winning one. It finds solutions fast but proves nothing: a beam
that dies out says only that this width was too narrow.

Positions live in numpy arrays of 64-bit words, one row per position (two words for a board of
more than 64 holes), so one level's children are made, deduplicated, pruned and scored a whole
array at a time::

    jumps = beam_search(board, width=20_000)   # a tuple of jumps, or None

For a final pattern the beam aims at the goal's side of a search from both ends (meet.py) that
outgrew its memory: `BeamSearch(board, width, edge=search)` plays `search.edge_depth` jumps and
wins on any position that side holds, then `search.finish_from` plays the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from .board import Board, Jump, distances, pagoda_weights

if TYPE_CHECKING:
    from .meet import MeetInTheMiddle

__all__ = ["BeamSearch", "beam_search"]

MIX = np.uint64(0x9E3779B97F4A7C15)  # folds a two-word position into one word to find repeats


def _words(value: int, count: int) -> List[int]:
    """An integer bitboard as `count` 64-bit words, low word first."""
    return [(value >> (64 * word)) & ((1 << 64) - 1) for word in range(count)]


# A level: one array per 64-bit word of the positions (a board of 65 to 128 holes has two), so
# that every operation is on plain one-dimensional arrays.
Level = List[np.ndarray]


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

    def __call__(self, level: Level) -> np.ndarray:
        total = np.zeros(len(level[0]))
        for chunk, table in enumerate(self._tables):
            word, shift = divmod(8 * chunk, 64)
            total += table[((level[word] >> np.uint64(shift)) & np.uint64(0xFF)).astype(np.intp)]
        return total


class BeamSearch:
    """One beam search of a given width, a level per step: `run()` yields None after each level,
    then the winning jumps (a tuple) or () if the beam died out."""

    def __init__(self, board: Board, width: int, *, edge: Optional[MeetInTheMiddle] = None) -> None:
        self.board = board
        self.width = width
        self.edge = edge
        self.positions = 0
        self._count = (board.size + 63) // 64
        # Pegs far from where the game ends are the hard ones to clear: a position with its pegs
        # gathered there scores better. For one last peg anywhere, that is the middle of the board.
        if board.goal is not None and board.target is None:
            goal_holes = [hole for hole in range(board.size) if board.goal >> hole & 1]
            steps = [distances(board, hole) for hole in goal_holes]
            spread = [
                float(min((s[hole] for s in steps if s[hole] >= 0), default=board.size)) for hole in range(board.size)
            ]
        else:
            rows = [row for row, _ in board.cells]
            cols = [col for _, col in board.cells]
            middle = ((min(rows) + max(rows)) / 2, (min(cols) + max(cols)) / 2)
            spread = [abs(row - middle[0]) + abs(col - middle[1]) for row, col in board.cells]
        self._spread = _Weigher(spread)
        weights = pagoda_weights(board)
        self._pagoda = _Weigher(weights) if weights else None
        self._goal_weight = weights[board.target] if weights and board.target is not None else 0.0
        # Neighbourless pegs need other pegs to come to them.
        near: List[int] = [0] * board.size
        for jump in board.jumps:
            near[jump.start] |= 1 << jump.over
        self._neighbours = [_words(mask, self._count) for mask in near]

    def _isolated(self, level: Level) -> np.ndarray:
        count = np.zeros(len(level[0]), dtype=np.uint64)
        for hole, near in enumerate(self._neighbours):
            word, bit = divmod(hole, 64)
            touching = level[0] & np.uint64(near[0])
            for other in range(1, self._count):
                touching |= level[other] & np.uint64(near[other])
            count += (level[word] >> np.uint64(bit)) & np.uint64(1) & (touching == 0)
        return count

    def _unique(self, level: Level) -> np.ndarray:
        """The index of one position of each kind in `level` (two words are folded into one to
        compare: two positions folding alike lose one of them, which a beam can afford)."""
        key = level[0]
        for word in range(1, self._count):
            key = key ^ (level[word] * MIX)
        return np.unique(key, return_index=True)[1]

    def _won(self, level: Level) -> List[int]:
        """Indices of the last level's positions that win: on the edge's side, or the goal."""
        if self.edge is not None:
            return np.flatnonzero(np.isin(level[0], self.edge.backward[-1], assume_unique=True)).tolist()
        values = [sum(int(word) << (64 * i) for i, word in enumerate(words)) for words in zip(*level)]
        return [i for i, position in enumerate(values) if self.board.is_won(position)]

    def run(self) -> Iterator[Optional[Tuple[Jump, ...]]]:
        board = self.board
        jumps = board.jumps
        needs = [[np.uint64(word) for word in _words(jump.needs, self._count)] for jump in jumps]
        flips = [[np.uint64(word) for word in _words(jump.flips, self._count)] for jump in jumps]
        level = [np.array([word], dtype=np.uint64) for word in _words(board.start, self._count)]
        history: List[Tuple[np.ndarray, np.ndarray]] = []  # per level: parent index, jump index
        depth = self.edge.edge_depth if self.edge is not None else board.pegs(board.start) - board.final_pegs
        for _ in range(depth):
            children: List[List[np.ndarray]] = [[] for _ in level]
            parents, used = [], []
            for j in range(len(jumps)):
                allowed = (level[0] & flips[j][0]) == needs[j][0]
                for word in range(1, self._count):
                    allowed &= (level[word] & flips[j][word]) == needs[j][word]
                can = np.flatnonzero(allowed)
                if len(can):
                    for word, column in enumerate(level):
                        children[word].append(column[can] ^ flips[j][word])
                    parents.append(can)
                    used.append(np.full(len(can), j, dtype=np.int32))
            if not parents:
                yield ()
                return
            child = [np.concatenate(words) for words in children]
            keep = self._unique(child)
            parent, jump_of = np.concatenate(parents)[keep], np.concatenate(used)[keep]
            self.positions += len(keep)
            if self._pagoda is not None:
                keep = keep[self._pagoda([words[keep] for words in child]) >= self._goal_weight - 1e-9]
                parent, jump_of = np.concatenate(parents)[keep], np.concatenate(used)[keep]
                if not len(keep):
                    yield ()
                    return
            child = [words[keep] for words in child]
            if len(keep) > self.width:
                score = self._isolated(child) * 4.0 + self._spread(child)
                best = np.argpartition(score, self.width)[: self.width]
                child, parent, jump_of = [words[best] for words in child], parent[best], jump_of[best]
            history.append((parent, jump_of))
            level = child
            yield None
        won = self._won(level)
        if not won:
            yield ()
            return
        path: List[Jump] = []
        index = won[0]
        for parent, jump_of in reversed(history):
            path.append(jumps[int(jump_of[index])])
            index = int(parent[index])
        path.reverse()
        if self.edge is not None:
            position = board.start
            for jump in path:
                position ^= jump.flips
            path += self.edge.finish_from(position) or ()
        yield tuple(path)


def beam_search(board: Board, width: int, *, edge: Optional[MeetInTheMiddle] = None) -> Optional[Tuple[Jump, ...]]:
    """The winning jumps one beam search of `width` finds, or None."""
    for outcome in BeamSearch(board, width, edge=edge).run():
        if outcome is not None:
            return outcome or None
    return None

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

from .board import Board, Jump
from .bounds import distances, pagoda_weights

if TYPE_CHECKING:
    from .meet import MeetInTheMiddle

__all__ = ["BeamSearch", "beam_search"]

MIX = np.uint64(0x9E3779B97F4A7C15)  # folds a two-word position into one word to find repeats
EXPAND_BLOCK = 4096  # parents against every jump at once: 4096 x jumps booleans and words


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
        by_word = (
            [_words(jump.flips, self._count) for jump in board.jumps],
            [_words(jump.needs, self._count) for jump in board.jumps],
        )
        self._flips, self._needs = (
            np.array(words, dtype=np.uint64).reshape(-1, self._count).T.copy() for words in by_word
        )
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
        # Neighbourless pegs need other pegs to come to them. A peg in p makes a neighbour of
        # every hole that could jump over p: per 8 holes of a position, a table of those holes.
        beside: List[int] = [0] * board.size
        for jump in board.jumps:
            beside[jump.over] |= 1 << jump.start
        self._beside = np.zeros((self._count, (board.size + 7) // 8, 256), dtype=np.uint64)
        for chunk in range(self._beside.shape[1]):
            for byte in range(1, 256):
                low = (byte & -byte).bit_length() - 1
                hole = 8 * chunk + low
                words = _words(beside[hole] if hole < board.size else 0, self._count)
                for word, bits in enumerate(words):
                    self._beside[word, chunk, byte] = self._beside[word, chunk, byte & (byte - 1)] | np.uint64(bits)

    def _isolated(self, level: Level) -> np.ndarray:
        """How many pegs of each position have no peg beside them to jump over."""
        low_byte = np.uint64(0xFF)
        parts = [
            ((level[(8 * c) // 64] >> np.uint64((8 * c) % 64)) & low_byte).astype(np.intp)
            for c in range(self._beside.shape[1])
        ]
        count = np.zeros(len(level[0]), dtype=np.uint8)
        for word, tables in enumerate(self._beside):
            near = tables[0][parts[0]]
            for table, part in zip(tables[1:], parts[1:]):
                near |= table[part]
            count += _bit_counts(level[word] & ~near)
        return count

    def _unique(self, level: Level) -> np.ndarray:
        """The index of one position of each kind in `level` (two words are folded into one to
        compare: two positions folding alike lose one of them, which a beam can afford)."""
        key = level[0]
        for word in range(1, self._count):
            key = key ^ (level[word] * MIX)
        order = np.argsort(key)  # any one of equal positions will do: no need for a stable sort
        ordered = key[order]
        first = np.ones(len(key), dtype=bool)
        np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
        return order[first]

    def _won(self, level: Level) -> List[int]:
        """Indices of the last level's positions that win: on the edge's side, or the goal."""
        if self.edge is not None:
            return np.flatnonzero(np.isin(level[0], self.edge.backward[-1], assume_unique=True)).tolist()
        values = [sum(int(word) << (64 * i) for i, word in enumerate(words)) for words in zip(*level)]
        return [i for i, position in enumerate(values) if self.board.is_won(position)]

    def _children(self, level: Level) -> Tuple[Level, np.ndarray, np.ndarray]:
        """Every position one jump after `level`'s, with its parent's index and the jump's: all
        jumps at once, against a block of parents at a time (a parent by jump table of words)."""
        parents, used = [], []
        for first in range(0, len(level[0]), EXPAND_BLOCK):
            allowed = np.ones((len(level[0][first : first + EXPAND_BLOCK]), len(self._flips[0])), dtype=bool)
            for word, column in enumerate(level):
                allowed &= (column[first : first + EXPAND_BLOCK, None] & self._flips[word]) == self._needs[word]
            parent, jump = np.nonzero(allowed)
            parents.append(parent + first)
            used.append(jump)
        parent, jump_of = np.concatenate(parents), np.concatenate(used)
        return [column[parent] ^ self._flips[word][jump_of] for word, column in enumerate(level)], parent, jump_of

    def run(self) -> Iterator[Optional[Tuple[Jump, ...]]]:
        board = self.board
        jumps = board.jumps
        level = [np.array([word], dtype=np.uint64) for word in _words(board.start, self._count)]
        history: List[Tuple[np.ndarray, np.ndarray]] = []  # per level: parent index, jump index
        depth = self.edge.edge_depth if self.edge is not None else board.pegs(board.start) - board.final_pegs
        for _ in range(depth):
            child, parent, jump_of = self._children(level)
            if not len(parent):
                yield ()
                return
            keep = self._unique(child)
            child, parent, jump_of = [words[keep] for words in child], parent[keep], jump_of[keep]
            self.positions += len(keep)
            if self._pagoda is not None:
                heavy = self._pagoda(child) >= self._goal_weight - 1e-9  # a lighter one cannot reach the goal
                child, parent, jump_of = [words[heavy] for words in child], parent[heavy], jump_of[heavy]
                if not len(parent):
                    yield ()
                    return
            if len(parent) > self.width:
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


def _bit_counts(words: np.ndarray) -> np.ndarray:
    """The number of set bits of each uint64 in `words`, as uint8: numpy's own from 2.0, else a
    table of the 256 bytes' counts, summed over each word's 8 bytes (numpy 1.24 is Debian
    Bookworm's python3-numpy, what a 32-bit Pi installs)."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(words)
    per_byte = np.array([bin(byte).count("1") for byte in range(256)], dtype=np.uint8)
    return per_byte[np.ascontiguousarray(words, dtype=np.uint64).view(np.uint8).reshape(-1, 8)].sum(
        axis=1, dtype=np.uint8
    )

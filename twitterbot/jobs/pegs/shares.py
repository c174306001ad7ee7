"""Which share of a level a position belongs to, when a count is spread over the cores of one
machine (`cores.py`) or the workers of a cluster (`spread.py`).

A share is a pure function of the position, so each share of every level has one owner for the
whole count: the children of any parent are sent to their share's owner, which adds them up in
its own table. The mix is MurmurHash3's 64-bit finaliser, not the Fibonacci hash of the kernel's
tables: inside one share, the positions must still spread over every slot of that share's
table. kernel.c's share_of gives the same numbers.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, List, Optional, Tuple

import numpy as np

from .board import Board
from .levels import Part, add_piece, children, merge_pieces, merged
from .orient import Orienter

if TYPE_CHECKING:  # pragma: no cover
    from .kernel import Kernel

__all__ = ["ROOM", "Accumulator", "cut", "owners"]

_MIX = np.uint64(0xFF51AFD7ED558CCD)
# Children (20 bytes each) the kernel writes into one buffer, for all shares: 5 MiB.
ROOM = 1 << 18


def owners(positions: np.ndarray, shares: int) -> np.ndarray:
    """The share (0 to `shares` - 1) of each position."""
    mixed = positions ^ (positions >> np.uint64(33))
    mixed = mixed * _MIX  # modulo 2^64
    mixed ^= mixed >> np.uint64(33)
    return ((mixed >> np.uint64(32)) * np.uint64(shares)) >> np.uint64(32)


def cut(part: Part, shares: int) -> List[Part]:
    """`part` cut into `shares` by `owners`, each in the order it had (kernel.cut, in numpy)."""
    share = owners(part[0], shares).astype(np.uint16 if shares < 1 << 16 else np.uint64)
    order = np.argsort(share, kind="stable")  # a radix sort for 16-bit numbers
    starts = np.searchsorted(share[order], np.arange(shares + 1))
    columns = [column[order] for column in part]
    return [tuple(column[starts[j] : starts[j + 1]] for column in columns) for j in range(shares)]  # type: ignore[misc]


class Accumulator:
    """One owner's share of the next level while it is being made: the children of its share,
    their counts added up (the kernel's table, or sorted numpy pieces merged as they come)."""

    def __init__(self, board: Board, kernel: Optional[Kernel], expected: int) -> None:
        self.board = board
        self._kernel = kernel
        self._table = kernel.table(expected) if kernel is not None else None
        self._pieces: List[Part] = []

    def add(self, piece: Part) -> None:
        """Add children of this share (sent by another owner)."""
        if not len(piece[0]):
            return
        if self._table is not None:
            self._table.add(piece)
        else:
            add_piece(self._pieces, _sorted(piece))

    def expand(self, parents: Part, shares: int, own: int) -> Tuple[List[List[Part]], Tuple[int, int]]:
        """Expand `parents`: the children of share `own` are added here, the others returned, a
        list of pieces for each share (not added up: each share's owner does that); and the
        sequences ending in a parent with no jump (modulo 2^64 and modulo the prime).

        Each piece is written once, by the kernel, into memory of its own and never copied: in a
        Dask worker (whose allocator hands every large array back to the system once freed)
        each fresh page costs a fault, and copying pieces together tripled a slice's time."""
        found: List[List[Part]] = [[] for _ in range(shares)]
        if self._kernel is None or self._table is None:
            stuck = [0, 0]
            piece = children(self.board, _orienter(self.board), *parents, stuck)
            if piece is not None:
                for share, part in enumerate(cut(piece, shares)):
                    if share == own:
                        self.add(part)
                    else:
                        found[share].append(part)
            return found, (stuck[0], stuck[1])
        from .kernel import Outgoing, contiguous  # the kernel's types: only where it was loaded

        parents = contiguous(parents)
        stuck_ = np.zeros(2, dtype=np.uint64)
        first = 0
        while first < len(parents[0]):
            outgoing = Outgoing(shares, max(ROOM // shares, len(self.board.jumps)))  # pages never written cost nothing
            first += self._kernel.expand(self._table, self.board, parents, first, stuck_, outgoing, own=own)
            for share in range(shares):
                if share != own and outgoing.filled[share]:
                    found[share].append(outgoing.of(share))
        return found, (int(stuck_[0]), int(stuck_[1]))

    def take(self) -> Part:
        """The share, sorted (the accumulator is then empty, its memory let go)."""
        if self._table is not None:
            return self._table.take(self.board.size)
        return merged(self._pieces)

    def close(self) -> None:
        if self._table is not None:
            self._table.close()
        self._pieces.clear()


@functools.lru_cache(maxsize=1)
def _orienter(board: Board) -> Orienter:
    """One Orienter per board in each process (a worker expands many slices of one board)."""
    return Orienter(board)


def _sorted(piece: Part) -> Part:
    """A piece of children (not added up) as numpy's merges need it: sorted, no position twice."""
    keys, counts, checks = piece
    if len(keys) > 1 and np.all(keys[1:] > keys[:-1]):
        return piece
    return merge_pieces([piece])

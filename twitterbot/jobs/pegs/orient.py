"""Many positions at once in their canonical orientation (the smallest of their images under the
board's symmetries), on numpy arrays of uint64 bitboards: the same name for a position as the
count's level files use, so that positions found elsewhere can be looked up in them::

    orient = Orienter(builtin("english"))
    orient.canonical(np.array([position], dtype=np.uint64))
"""

from __future__ import annotations

import numpy as np

from .board import Board

__all__ = ["Orienter"]


class Orienter:
    """Lookup tables per symmetry, 11 bits of the position at a time: all of the English board's
    fit in the processor's cache (16-bit tables would need 12 MB)."""

    BITS = 11
    BLOCK = 1 << 20  # positions oriented at once: bounds the temporaries to some 50 MB

    def __init__(self, board: Board) -> None:
        bits = self.BITS
        self._chunks = (board.size + bits - 1) // bits
        self._tables = np.zeros((len(board.symmetries), self._chunks, 1 << bits), dtype=np.uint64)
        values = np.arange(1 << bits, dtype=np.uint64)
        for s, permutation in enumerate(board.symmetries):
            for chunk in range(self._chunks):
                for bit in range(bits):
                    hole = chunk * bits + bit
                    if hole < board.size:
                        has = (values >> np.uint64(bit)) & np.uint64(1)
                        self._tables[s, chunk] |= has << np.uint64(permutation[hole])

    def canonical(self, positions: np.ndarray) -> np.ndarray:
        """Each position's smallest image, in the same order."""
        if len(positions) > self.BLOCK:
            return np.concatenate(
                [
                    self.canonical(positions[first : first + self.BLOCK])
                    for first in range(0, len(positions), self.BLOCK)
                ]
            )
        mask = np.uint64((1 << self.BITS) - 1)
        parts = [((positions >> np.uint64(self.BITS * c)) & mask).astype(np.intp) for c in range(self._chunks)]
        best = None
        for tables in self._tables:
            image = tables[0][parts[0]]
            for c in range(1, self._chunks):
                image |= tables[c][parts[c]]
            best = image if best is None else np.minimum(best, image)
        return best

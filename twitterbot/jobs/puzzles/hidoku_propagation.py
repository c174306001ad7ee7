"""Hidoku's constraint propagation: the grid's bit tricks and the domains of every number.

`hidoku.py` holds the puzzle, its file format and the search; this module is what the search
asks at every node (is this still possible, which number to branch on). It takes the grid as
plain numbers, so it needs nothing from `hidoku.py`::

    propagator = Propagator(puzzle.rows, puzzle.cols, puzzle.cells)
    dom = list(propagator.root)
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple

__all__ = ["Grid", "Propagator", "popcount"]

popcount: Callable[[int], int] = getattr(int, "bit_count", None) or (lambda bits: bin(bits).count("1"))


class Grid:
    """Bit tricks for one grid shape: bit r*cols+c is cell (r, c)."""

    def __init__(self, rows: int, cols: int) -> None:
        self.rows, self.cols = rows, cols
        self.full = (1 << rows * cols) - 1
        first = sum(1 << (row * cols) for row in range(rows))
        self.not_first = self.full & ~first
        self.not_last = self.full & ~(first << (cols - 1))
        self.neighbours = [self.dilate(1 << cell) for cell in range(rows * cols)]

    def dilate(self, bits: int) -> int:
        """Every cell a king's move away from some cell of `bits` (not the cells themselves)."""
        sideways = ((bits << 1) & self.not_first) | ((bits >> 1) & self.not_last)
        row = bits | sideways
        return (sideways | (row << self.cols) | (row >> self.cols)) & self.full

    def two_neighbours(self, bits: int) -> int:
        """The cells with at least two king's-move neighbours in `bits`."""
        west = (bits << 1) & self.not_first  # cells whose west neighbour is in bits
        east = (bits >> 1) & self.not_last
        once = twice = 0
        for shifted in (
            west,
            east,
            (bits << self.cols),
            (west << self.cols),
            (east << self.cols),
            (bits >> self.cols),
            (west >> self.cols),
            (east >> self.cols),
        ):
            twice |= once & shifted
            once |= shifted
        return twice & self.full

    def region(self, seed: int, within: int) -> int:
        """The king-connected part of `within` that holds `seed`."""
        region = seed
        while True:
            grown = (region | self.dilate(region)) & within
            if grown == region:
                return region
            region = grown


class Propagator:
    """Domains, propagation and branching for one puzzle. A domain list has one bitset per number."""

    def __init__(self, rows: int, cols: int, cells: Sequence[Optional[int]]) -> None:
        """`cells` row by row: the given number, or None where empty."""
        self.grid = Grid(rows, cols)
        self.size = rows * cols
        full = self.grid.full
        givens = {value - 1: cell for cell, value in enumerate(cells) if value is not None}
        taken = sum(1 << cell for cell in givens.values())
        self.root: List[int] = [(1 << givens[k]) if k in givens else full & ~taken for k in range(self.size)]

    # -- propagation

    def propagate(self, dom: List[int], near: List[int]) -> bool:
        """Narrow `dom` in place to a fixpoint (`near[k]` is kept equal to the cells next to
        `dom[k]`); False if some number or cell is left without a place."""
        dilate, size, full = self.grid.dilate, self.size, self.grid.full
        while True:
            changed = False
            for k in range(1, size):  # k must touch k-1
                bits = dom[k] & near[k - 1]
                if bits != dom[k]:
                    if not bits:
                        return False
                    dom[k], near[k], changed = bits, dilate(bits), True
            for k in range(size - 2, -1, -1):  # and k+1
                bits = dom[k] & near[k + 1]
                if bits != dom[k]:
                    if not bits:
                        return False
                    dom[k], near[k], changed = bits, dilate(bits), True
            # All different: placed numbers own their cells, and two numbers sharing the same two
            # cells own those; a cell only one number can reach is its; a cell none can, a dead end.
            once = twice = placed = paired = 0
            pairs: Dict[int, int] = {}
            for bits in dom:
                twice |= once & bits
                once |= bits
                rest = bits & (bits - 1)
                if rest == 0:
                    if placed & bits:
                        return False
                    placed |= bits
                elif rest & (rest - 1) == 0:
                    seen = pairs.get(bits, 0) + 1
                    if seen > 2:
                        return False
                    pairs[bits] = seen
                    if seen == 2:
                        if paired & bits:
                            return False
                        paired |= bits
            if once != full:
                return False
            # Dead ends: an empty cell needs two neighbours to come from and go to, empty cells or
            # placed numbers still missing a neighbour in the sequence (one if it may hold 1 or N).
            free = full & ~placed
            open_ends = 0
            for k in range(size):
                bits = dom[k]
                if bits & (bits - 1) == 0 and (
                    (k > 0 and dom[k - 1] & (dom[k - 1] - 1)) or (k < size - 1 and dom[k + 1] & (dom[k + 1] - 1))
                ):
                    open_ends |= bits
            if free & ~self.grid.two_neighbours(free | open_ends) & ~dom[0] & ~dom[size - 1]:
                return False
            forced = once & ~twice & ~placed
            for k in range(size):
                bits = dom[k]
                if bits & (bits - 1) == 0:
                    continue
                narrowed = bits & ~placed
                if paired and pairs.get(bits, 0) != 2:
                    narrowed &= ~paired
                only = narrowed & forced
                if only:
                    if only & (only - 1):
                        return False  # one number, two cells nobody else can fill
                    narrowed = only
                if narrowed != bits:
                    if not narrowed:
                        return False
                    dom[k], near[k], changed = narrowed, dilate(narrowed), True
            if changed:
                continue
            narrowed_regions = self._regions(dom)
            if narrowed_regions is None:
                return False
            if not narrowed_regions:
                return True
            near[:] = [dilate(bits) for bits in dom]

    def _regions(self, dom: List[int]) -> Optional[bool]:
        """Each king-connected region of empty cells must be filled exactly by the runs of
        missing numbers (between placed ones) that can lie in it; a run lies in one region.
        None if that fails, else whether some number's cells were narrowed to its run's region."""
        placed = 0
        runs: List[Tuple[int, int]] = []  # (first missing number, how many)
        start: Optional[int] = None
        for k, bits in enumerate(dom):
            if bits & (bits - 1) == 0:
                placed |= bits
                if start is not None:
                    runs.append((start, k - start))
                    start = None
            elif start is None:
                start = k
        if start is not None:
            runs.append((start, self.size - start))
        free = self.grid.full & ~placed
        if not runs:
            return False
        regions: List[int] = []
        left = free
        while left:
            region = self.grid.region(left & -left, free)
            regions.append(region)
            left &= ~region
        if len(regions) == 1:
            return False
        changed = False
        can = [0] * len(regions)
        must = [0] * len(regions)
        for first, length in runs:
            homes = [index for index, region in enumerate(regions) if dom[first] & region]
            if not homes:
                return None
            for index in homes:
                can[index] += length
            if len(homes) == 1:
                must[homes[0]] += length
                region = regions[homes[0]]
                for k in range(first, first + length):
                    if dom[k] & ~region:
                        dom[k] &= region
                        changed = True
                        if not dom[k]:
                            return None
        if all(must[i] <= popcount(region) <= can[i] for i, region in enumerate(regions)):
            return changed
        return None

    # -- branching

    def choices(self, dom: List[int]) -> List[Tuple[int, int]]:
        """(number index, cell bit) alternatives for the unplaced number with the fewest cells."""
        best, best_count = -1, 1 << 30
        for k, bits in enumerate(dom):
            if bits & (bits - 1):
                count = popcount(bits)
                if count < best_count:
                    best, best_count = k, count
        if best < 0:
            return []
        if best_count >= 2:
            # A cell only two numbers can reach is a two-way choice too, and makes smaller trees.
            once = twice = thrice = 0
            for bits in dom:
                if bits & (bits - 1):
                    thrice |= twice & bits
                    twice |= once & bits
                    once |= bits
            pair = twice & ~thrice
            if pair:
                cell = pair & -pair
                return [(k, cell) for k, bits in enumerate(dom) if bits & cell]
        bits = dom[best]
        alternatives = []
        while bits:
            low = bits & -bits
            alternatives.append((best, low))
            bits ^= low
        return alternatives

    def solution(self, dom: List[int]) -> Tuple[int, ...]:
        """The number in each cell, row by row, once every number is placed."""
        values = [0] * self.size
        for k, bits in enumerate(dom):
            values[bits.bit_length() - 1] = k + 1
        return tuple(values)

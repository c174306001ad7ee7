"""The seed's Hidoku search, re-implemented for timing: a numpy board copied per successor, one
big list of (number, y, x) placements filtered after every placement by the Chebyshev-distance
test against numbers within max(height, width) - 2, a connection count per field, the validity
check (every number still placeable; a filled field has enough free or connected neighbours; an
empty field with one or no free neighbour left is filled if exactly one number fits it, from the
pairs of its neighbours two apart), and successors for the number with the fewest placements.
Depth first over a list used as a stack, counting every solution."""

from __future__ import annotations

import itertools
import time
from copy import copy
from functools import reduce
from typing import List, Optional

import numpy

EMPTY = -1


class _Board:
    def __init__(self, grid: Optional[numpy.ndarray] = None) -> None:
        self.grid = grid
        self.where: dict = {}
        self.numbers: range = range(0)
        self.left: List[int] = []
        self.places: list = []
        self.links: Optional[numpy.ndarray] = None

    def __copy__(self) -> _Board:
        other = _Board()
        other.grid = copy(self.grid)
        other.where = copy(self.where)
        other.numbers = self.numbers
        other.left = copy(self.left)
        other.places = copy(self.places)
        other.links = copy(self.links)
        return other

    def setup(self) -> None:
        height, width = self.grid.shape
        self.numbers = range(1, height * width + 1)
        present = set(int(v) for v in self.grid.flatten())
        self.left = [n for n in self.numbers if n not in present]
        self.where = {
            int(self.grid[y, x]): (y, x) for y in range(height) for x in range(width) if self.grid[y, x] != EMPTY
        }
        self.places = [(n, y, x) for n in self.left for y in range(height) for x in range(width) if self.fits(n, y, x)]
        self.links = numpy.ones([height, width], int) * 2
        for y in range(height):
            for x in range(width):
                self.links[y, x] = self.link_count(y, x)

    def neighbours(self, y: int, x: int) -> list:
        height, width = self.grid.shape
        return [
            (iy, ix)
            for iy in range(max(y - 1, 0), min(y + 2, height))
            for ix in range(max(x - 1, 0), min(x + 2, width))
            if (iy, ix) != (y, x)
        ]

    def around(self, y: int, x: int) -> list:
        return [self.grid[iy, ix] for iy, ix in self.neighbours(y, x)]

    def link_count(self, y: int, x: int) -> int:
        number = self.grid[y, x]
        count = 2 - [abs(number - n) for n in self.around(y, x)].count(1)
        if number in (self.numbers[0], self.numbers[-1]):
            count -= 1
        return count

    def place(self, number: int, y: int, x: int) -> None:
        if number not in self.left or self.grid[y, x] != EMPTY:
            raise RuntimeError("illegal placement")
        self.left.remove(number)
        self.grid[y, x] = number
        self.where[number] = (y, x)
        self.links[y, x] = self.link_count(y, x)
        for iy, ix in self.neighbours(y, x):
            self.links[iy, ix] = self.link_count(iy, ix)
        self.places = [p for p in self.places if self.fits(*p)]

    def fits(self, number: int, y: int, x: int) -> bool:
        if self.grid[y, x] != EMPTY or number not in self.left:
            return False
        reach = max(self.grid.shape) - 2
        for other in range(number - reach, number + reach + 1):
            if other == number or other not in self.where:
                continue
            oy, ox = self.where[other]
            if max(abs(y - oy), abs(x - ox)) > abs(number - other):
                return False
        return True

    def open_neighbours(self, y: int, x: int) -> list:
        out = []
        for n in self.around(y, x):
            if n == EMPTY:
                out.append(n)
            else:
                ny, nx = self.where[n]
                if self.links[ny, nx] > 0:
                    out.append(n)
        return out

    def empty_field_ok(self, y: int, x: int) -> bool:
        usable = self.open_neighbours(y, x)
        free = usable.count(EMPTY)
        if free >= 2:
            return True
        if free == 1:
            options = set(reduce(lambda acc, n: acc if n == EMPTY else acc + [n - 1, n + 1], usable, []))
            options = [n for n in options if n in self.left]
            if len(options) > 1:
                return True
            if len(options) == 1:
                self.place(options[0], y, x)
                return self.valid()
        else:
            if len(usable) < 2:
                return False
            pairs = [(abs(a - b), (a + b) // 2) for a, b in itertools.combinations(usable, 2)]
            middles = [p for p in pairs if p[0] == 2 and p[1] in self.left]
            if len(middles) > 1:
                return True
            if len(middles) == 1:
                self.place(middles[0][1], y, x)
                return self.valid()
        return False

    def filled_field_ok(self, y: int, x: int) -> bool:
        number = self.grid[y, x]
        around = self.around(y, x)
        need = 1 if number in (self.numbers[0], self.numbers[-1]) else 2
        return around.count(EMPTY) + [abs(n - number) for n in around].count(1) >= need

    def valid(self) -> bool:
        counts = {}
        for n, _, _ in self.places:
            counts[n] = counts.get(n, 0) + 1
        if any(n not in counts for n in self.left):
            return False
        height, width = self.grid.shape
        for y in range(height):
            for x in range(width):
                if self.grid[y, x] == EMPTY:
                    if not self.empty_field_ok(y, x):
                        return False
                elif not self.filled_field_ok(y, x):
                    return False
        return True

    def successors(self) -> list:
        per_number = {n: [p for p in self.places if p[0] == n] for n in self.left}
        number = min(per_number, key=lambda n: len(per_number[n]))
        out = []
        for placement in per_number[number]:
            child = copy(self)
            child.place(*placement)
            if child.valid():
                out.append(child)
        return out


def solve_seed(text: str, limit: Optional[float] = None) -> int:
    rows = [
        [EMPTY if "_" in cell else int(cell) for cell in line.split(",")]
        for line in text.splitlines()
        if line.strip() and not line.startswith("#")
    ]
    board = _Board(numpy.array(rows))
    board.setup()
    board.valid()
    deadline = time.perf_counter() + limit if limit else None
    stack = [board]
    solutions = 0
    while stack:
        if deadline and time.perf_counter() > deadline:
            raise TimeoutError
        current = stack.pop()
        for child in current.successors():
            if not child.left:
                solutions += 1
            else:
                stack.append(child)
    return solutions

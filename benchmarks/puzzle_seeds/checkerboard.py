"""The seed's draught-board solver, re-implemented faithfully as the benchmark's baseline.

As the seed describes it: stones and board are grids of -1 (black), 1 (white) and 0 (no square);
a stone fits where the square-by-square sum of board and stone is never 0 (colour clash) nor
+-9/+-11 (a square already covered, which the board marks as -10/10). Each state keeps, for every
stone not yet placed, the list of (orientation, row, column) where it still fits, and for every
empty square the stones that could still cover it; a state is cut when a stone has nowhere left
or a square nothing can cover. The search is depth first, always placing the stone with the
fewest places left. Identical stones are separate stones to it, so it finds each tiling once per
order of identical stones (the seed's 12 stones: 208 = 104 tilings x 2).
"""

from __future__ import annotations

import math
import time
from typing import List, Optional, Tuple

__all__ = ["solve_seed"]

Grid = List[List[int]]


def _read(text: str) -> List[Grid]:
    stones: List[Grid] = []
    rows: Grid = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if set(line) == {"="}:
            if rows:
                stones.append(rows)
            rows = []
            continue
        rows.append([{"B": -1, "W": 1, "_": 0}[part.strip()] for part in line.split(",")])
    if rows:
        stones.append(rows)
    return stones


def _turn(grid: Grid) -> Grid:
    return [list(row) for row in zip(*grid[::-1])]


def _versions(stone: Grid) -> List[Grid]:
    found: List[Grid] = []
    for start in (stone, [row[::-1] for row in stone]):
        grid = start
        for _ in range(4):
            if grid not in found:
                found.append(grid)
            grid = _turn(grid)
    return found


def _fits(board: Grid, grid: Grid, top: int, left: int) -> bool:
    for r, row in enumerate(grid):
        for c, value in enumerate(row):
            total = board[top + r][left + c] + value
            if total in (0, 9, -9, 11, -11):
                return False
    return True


def solve_seed(text: str, board_size: Optional[Tuple[int, int]] = None, deadline: Optional[float] = None) -> int:
    """How many solutions the seed's search finds (each identical-stone order counted), or raise
    TimeoutError once `time.perf_counter()` passes `deadline`."""
    stones = _read(text)
    area = sum(1 for stone in stones for row in stone for value in row if value)
    if board_size is None:
        side = math.isqrt(area)
        board_size = (side, side)
    rows, cols = board_size
    board = [[-1 if (r + c) % 2 == 0 else 1 for c in range(cols)] for r in range(rows)]
    versions = [_versions(stone) for stone in stones]

    def places(board: Grid, stone: int) -> List[Tuple[int, int, int]]:
        found = []
        for index, grid in enumerate(versions[stone]):
            for top in range(rows - len(grid) + 1):
                for left in range(cols - len(grid[0]) + 1):
                    if _fits(board, grid, top, left):
                        found.append((index, top, left))
        return found

    solutions = 0

    def search(board: Grid, left_to_place: List[int], possible: dict) -> None:
        nonlocal solutions
        if deadline is not None and time.perf_counter() > deadline:
            raise TimeoutError
        if not left_to_place:
            solutions += 1
            return
        stone = min(left_to_place, key=lambda s: len(possible[s]))
        others = [s for s in left_to_place if s != stone]
        for index, top, left in possible[stone]:
            grid = versions[stone][index]
            after = [row[:] for row in board]
            for r, row in enumerate(grid):
                for c, value in enumerate(row):
                    if value:
                        after[top + r][left + c] *= 10
            # Update the cached places of the stones left, then the validity check.
            still = {}
            for other in others:
                still[other] = [
                    place for place in possible[other] if _fits(after, versions[other][place[0]], place[1], place[2])
                ]
                if not still[other]:
                    break
            else:
                coverable = [[set() for _ in range(cols)] for _ in range(rows)]
                for other in others:
                    for version, r0, c0 in still[other]:
                        for r, row in enumerate(versions[other][version]):
                            for c, value in enumerate(row):
                                if value:
                                    coverable[r0 + r][c0 + c].add(other)
                if all(coverable[r][c] or abs(after[r][c]) == 10 for r in range(rows) for c in range(cols)):
                    search(after, others, still)

    search(board, list(range(len(stones))), {stone: places(board, stone) for stone in range(len(stones))})
    return solutions

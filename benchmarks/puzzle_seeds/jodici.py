"""The seed's Jodici search: depth first over a list used as a stack, filling the first empty
cell (sector by sector, inner to outer) with 9 down to 1, a deep copy per successor, and the
three validity rules (sector sums, ring sums, at most two of each digit) checked on every copy."""

from __future__ import annotations

import copy
import time
from typing import List, Optional


def _field(text: str) -> List[List[int]]:
    rows = [line.split(",") for line in text.splitlines() if line.strip() and not line.startswith("#")]
    # sector-major, as the seed stores it: field[sector][ring], 0 for empty
    return [
        [0 if rows[ring][sector].strip() == "_" else int(rows[ring][sector]) for ring in range(3)]
        for sector in range(6)
    ]


def _valid(field: List[List[int]]) -> bool:
    for sector in field:
        if sum(sector) > 15 or (0 not in sector and sum(sector) != 15):
            return False
    for ring in range(3):
        circle = [field[sector][ring] for sector in range(6)]
        if sum(circle) > 30 or (0 not in circle and sum(circle) != 30):
            return False
    return all(sum(sector.count(digit) for sector in field) <= 2 for digit in range(1, 10))


def _filled(field: List[List[int]]) -> bool:
    return not any(0 in sector for sector in field)


def solve_seed(text: str, limit: Optional[float] = None) -> int:
    deadline = time.perf_counter() + limit if limit else None
    stack = [_field(text)]
    solutions = 0
    while stack:
        if deadline and time.perf_counter() > deadline:
            raise TimeoutError
        current = stack.pop(0)
        spot = next(((s, r) for s in range(6) for r in range(3) if current[s][r] == 0), None)
        if spot is None:
            continue
        for digit in range(9, 0, -1):
            successor = copy.deepcopy(current)
            successor[spot[0]][spot[1]] = digit
            if not _valid(successor):
                continue
            if not _filled(successor):
                stack.insert(0, successor)
            elif _valid(successor):
                solutions += 1
    return solutions

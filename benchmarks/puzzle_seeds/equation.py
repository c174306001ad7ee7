"""The seed's equation-crossword search: a fixed order of cells to fill (row 1's, then column 3's,
row 2's, column 1's, row 3's), the equations checked as soon as their last cell is filled, a
stack of partial assignments (dicts keyed 11..33) and the numbers tried from high to low over
Python's range(LOW, HIGH), which, as in the seed, leaves out HIGH itself."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from twitterbot.jobs.puzzles.equation import evaluate, parse  # noqa: E402  (the file format only)

ORDER = [
    (12, []),
    (13, ["row1"]),
    (23, []),
    (33, ["col3"]),
    (21, []),
    (22, ["row2"]),
    (31, ["col1"]),
    (32, ["col2", "row3"]),
]


def solve_seed(text: str, limit: Optional[float] = None) -> int:
    puzzle = parse(text)
    key = [11, 12, 13, 21, 22, 23, 31, 32, 33]
    rules = {}
    for r in range(3):
        cells = key[3 * r : 3 * r + 3]
        rules[f"row{r + 1}"] = (cells, puzzle.row_ops[r], puzzle.row_results[r])
        cols = key[r::3]
        rules[f"col{r + 1}"] = (cols, puzzle.col_ops[r], puzzle.col_results[r])

    def holds(state: dict, name: str) -> bool:
        cells, ops, result = rules[name]
        return evaluate([state[cell] for cell in cells], ops) == result

    start = {key[i]: value for i, value in enumerate(puzzle.cells) if value is not None}
    deadline = time.perf_counter() + limit if limit else None
    stack = [start]
    solutions = 0
    while stack:
        if deadline and time.perf_counter() > deadline:
            raise TimeoutError
        state = stack.pop()
        for number in range(puzzle.low, puzzle.high)[::-1]:
            successor = dict(state)
            for cell, checks in ORDER:
                if cell in successor:
                    continue
                successor[cell] = number
                if all(holds(successor, name) for name in checks):
                    if len(successor) == 9:
                        solutions += 1
                    else:
                        stack.append(successor)
                break
    return solutions

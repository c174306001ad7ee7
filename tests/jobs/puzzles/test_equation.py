"""The equation crossword: the seed's puzzle, counts against a brute force (Python's own
arithmetic as the validator), malformed files."""

from __future__ import annotations

import random
from itertools import product
from pathlib import Path
from typing import List, Optional

import pytest

from twitterbot.jobs.puzzles import equation
from twitterbot.jobs.puzzles.events import Finished, Found, PuzzleFileError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "puzzles"


def python_says(ops):
    """The equation `a op b op c` as Python reads it (multiplying first, as people do)."""
    return eval(f"lambda a, b, c: a {ops[0]} b {ops[1]} c")


def checker(row_ops, col_ops, row_results, col_results):
    """A test of nine numbers against the six equations."""
    rows = [python_says(ops) for ops in row_ops]
    cols = [python_says(ops) for ops in col_ops]

    def holds(values: List[int]) -> bool:
        return all(rows[r](*values[3 * r : 3 * r + 3]) == row_results[r] for r in range(3)) and all(
            cols[c](values[c], values[c + 3], values[c + 6]) == col_results[c] for c in range(3)
        )

    return holds


def file_for(cells: List[Optional[int]], row_ops, col_ops, row_results, col_results, low: int, high: int) -> str:
    def cell(value: Optional[int]) -> str:
        return "_" if value is None else str(value)

    lines = [f"range {low}..{high}"]
    for r in range(3):
        a, b, c = (cell(v) for v in cells[3 * r : 3 * r + 3])
        lines.append(f"{a} {row_ops[r][0]} {b} {row_ops[r][1]} {c} = {row_results[r]}")
        if r < 2:
            lines.append(" ".join(col_ops[col][r] for col in range(3)))
    lines.append("= = =")
    lines.append(" ".join(str(v) for v in col_results))
    return "\n".join(lines) + "\n"


def test_the_seed_s_puzzle_has_one_solution_the_seed_s() -> None:
    puzzle = equation.parse(equation.EXAMPLE)
    events = list(equation.solve(puzzle, all_solutions=True))
    found = [e for e in events if isinstance(e, Found)]
    assert len(found) == 1 and events[-1].complete and events[-1].solutions == 1
    assert equation.solution_json(puzzle, found[0].solution) == [[26, 19, 16], [25, 8, 16], [15, 0, 11]]
    assert equation.render(puzzle, found[0].solution) == (FIXTURES / "equation-sample-solution.txt").read_text()
    assert (puzzle.low, puzzle.high) == (-9, 99)


def test_counts_agree_with_brute_force() -> None:
    rng = random.Random(3)
    low, high = -2, 3
    for _ in range(12):
        values = [rng.randint(low, high) for _ in range(9)]
        row_ops = [(rng.choice("+-*"), rng.choice("+-*")) for _ in range(3)]
        col_ops = [(rng.choice("+-*"), rng.choice("+-*")) for _ in range(3)]
        row_results = [
            eval(f"({values[3 * r]}) {row_ops[r][0]} ({values[3 * r + 1]}) {row_ops[r][1]} ({values[3 * r + 2]})")
            for r in range(3)
        ]
        col_results = [
            eval(f"({values[c]}) {col_ops[c][0]} ({values[c + 3]}) {col_ops[c][1]} ({values[c + 6]})") for c in range(3)
        ]
        blanks = rng.sample(range(9), rng.randrange(4, 7))
        cells: List[Optional[int]] = [None if i in blanks else v for i, v in enumerate(values)]
        text = file_for(cells, row_ops, col_ops, row_results, col_results, low, high)
        holds = checker(row_ops, col_ops, row_results, col_results)
        expected = []
        for guess in product(range(low, high + 1), repeat=len(blanks)):
            filled = list(cells)
            for i, v in zip(blanks, guess):
                filled[i] = v
            if holds(filled):
                expected.append(tuple(filled))
        ours = [e.solution for e in equation.solve(equation.parse(text), all_solutions=True) if isinstance(e, Found)]
        assert sorted(ours) == sorted(expected), text
        assert tuple(values) in ours


def test_a_puzzle_with_no_solution() -> None:
    text = equation.EXAMPLE.replace("range -9..99", "range 0..9")
    events = list(equation.solve(equation.parse(text), all_solutions=True))
    assert events[-1] == Finished(0, True, events[-1].nodes, events[-1].seconds)


def test_operators_follow_the_usual_precedence() -> None:
    assert equation.evaluate([2, 3, 4], ["+", "*"]) == 14
    assert equation.evaluate([2, 3, 4], ["*", "-"]) == 2
    assert equation.evaluate([2, 3, 4], ["-", "-"]) == -5
    assert equation.evaluate([2, 3, 4], ["-", "*"]) == -10


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("range -9..99\n", ""), "has no range line"),
        (lambda t: t.replace("range -9..99", "range 9..-9"), "line 3: the range 9..-9 is empty"),
        (lambda t: t.replace("26 - _ * _ = -278", "26 - _ * _ -278"), "line 4: a row reads"),
        (lambda t: t.replace("_  * _ + _ = 216", "_  / _ + _ = 216"), "line 6: '/' is not an operator"),
        (lambda t: t.replace("36   27  245", "36   27  abc"), "line 10: a column's result should be a whole number"),
        (lambda t: t.replace("-    +   -\n", ""), "expected 3 cell rows"),
    ],
)
def test_malformed_files_name_the_line(edit, message: str) -> None:
    with pytest.raises(PuzzleFileError) as caught:
        equation.parse(edit(equation.EXAMPLE), "eq.txt")
    assert "eq.txt" in str(caught.value) and message in str(caught.value)

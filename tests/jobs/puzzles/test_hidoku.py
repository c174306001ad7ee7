"""Hidoku: the seed's sample, counts against a brute force, an independent validator, the
generator, malformed files, and a stopped search that resumes."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twitterbot.jobs.puzzles import hidoku
from twitterbot.jobs.puzzles.events import Finished, Found, Progress, PuzzleFileError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "puzzles"


def read_grid(text: str) -> List[List[Optional[int]]]:
    """An independent reading of a puzzle file: numbers, or None for a run of _."""
    rows = []
    for line in text.splitlines():
        if line.strip():
            rows.append([None if "_" in cell else int(cell) for cell in line.split(",")])
    return rows


def is_valid(grid: List[List[Optional[int]]], solution: Sequence[Sequence[int]]) -> bool:
    """Every number 1..N once, each next to its successor (a king's move), the givens kept."""
    where: Dict[int, Tuple[int, int]] = {}
    for r, row in enumerate(solution):
        for c, value in enumerate(row):
            if grid[r][c] is not None and grid[r][c] != value:
                return False
            where[value] = (r, c)
    size = len(grid) * len(grid[0])
    if sorted(where) != list(range(1, size + 1)) or len(solution) != len(grid):
        return False
    return all(max(abs(where[n][0] - where[n + 1][0]), abs(where[n][1] - where[n + 1][1])) == 1 for n in range(1, size))


def brute_force(grid: List[List[Optional[int]]]) -> List[Tuple[int, ...]]:
    """Every solution, by walking every king's path from every start (givens only as a filter)."""
    rows, cols = len(grid), len(grid[0])
    size = rows * cols
    found = []

    def walk(path: List[Tuple[int, int]]) -> None:
        r, c = path[-1]
        wanted = grid[r][c]
        if wanted is not None and wanted != len(path):
            return
        if len(path) == size:
            values = [[0] * cols for _ in range(rows)]
            for number, (pr, pc) in enumerate(path, 1):
                values[pr][pc] = number
            found.append(tuple(v for row in values for v in row))
            return
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                nxt = (r + dr, c + dc)
                if (dr or dc) and 0 <= nxt[0] < rows and 0 <= nxt[1] < cols and nxt not in path:
                    path.append(nxt)
                    walk(path)
                    path.pop()

    for r in range(rows):
        for c in range(cols):
            walk([(r, c)])
    return found


def solutions_of(puzzle: hidoku.Hidoku) -> List[Tuple[int, ...]]:
    return [event.solution for event in hidoku.solve(puzzle, all_solutions=True) if isinstance(event, Found)]


def test_the_seed_s_sample_has_exactly_one_solution_the_seed_s() -> None:
    text = (FIXTURES / "hidoku-sample.txt").read_text()
    puzzle = hidoku.parse(text, "sample.txt")
    events = list(hidoku.solve(puzzle, all_solutions=True))
    found = [event for event in events if isinstance(event, Found)]
    assert len(found) == 1 and events[-1] == Finished(1, True, events[-1].nodes, events[-1].seconds)
    assert hidoku.render(puzzle, found[0].solution) == (FIXTURES / "hidoku-sample-solution.txt").read_text()
    assert is_valid(read_grid(text), hidoku.solution_json(puzzle, found[0].solution))


@pytest.mark.parametrize(("rows", "cols"), [(2, 3), (3, 3), (2, 5), (3, 4)])
def test_counts_agree_with_brute_force_on_small_grids(rows: int, cols: int) -> None:
    rng = random.Random(rows * 100 + cols)
    for _ in range(6):
        path = hidoku.random_path(rows, cols, rng)
        solution = [0] * (rows * cols)
        for number, cell in enumerate(path, 1):
            solution[cell] = number
        keep = rng.sample(range(rows * cols), rng.randrange(0, rows * cols // 2))
        cells = tuple(solution[i] if i in keep else None for i in range(rows * cols))
        grid = [list(cells[r * cols : (r + 1) * cols]) for r in range(rows)]
        puzzle = hidoku.Hidoku(rows, cols, cells)
        ours = solutions_of(puzzle)
        assert sorted(ours) == sorted(brute_force(grid)), hidoku.render_puzzle(puzzle)
        assert all(is_valid(grid, hidoku.solution_json(puzzle, s)) for s in ours)


def test_a_puzzle_with_no_solution_is_searched_to_the_end() -> None:
    puzzle = hidoku.parse("1,_,_\n_,_,_\n_,_,2\n")  # 1 and 2 are not neighbours
    events = list(hidoku.solve(puzzle, all_solutions=True))
    assert events == [Finished(0, True, events[-1].nodes, events[-1].seconds)]


def test_generated_puzzles_have_exactly_one_solution() -> None:
    rng = random.Random(7)
    for rows, cols in [(3, 4), (4, 4), (5, 5), (6, 6)]:
        puzzle, solution = hidoku.generate(rows, cols, rng)
        grid = [list(puzzle.cells[r * cols : (r + 1) * cols]) for r in range(rows)]
        assert is_valid(grid, hidoku.solution_json(puzzle, solution))
        assert solutions_of(puzzle) == [solution]
        if rows * cols <= 12:
            assert brute_force(grid) == [solution]
        # Taking away any further clue (but 1 and N) leaves more than one solution: nothing spare.
        clues = [i for i, v in enumerate(puzzle.cells) if v not in (None, 1, rows * cols)]
        for i in clues[:3]:
            fewer = list(puzzle.cells)
            fewer[i] = None
            assert hidoku.count_solutions(hidoku.Hidoku(rows, cols, tuple(fewer)), limit=2) == 2


def test_a_stopped_search_resumes_where_it_stopped() -> None:
    puzzle = hidoku.parse("1,_,_,_\n_,_,_,_\n_,_,_,_\n")  # many solutions
    whole = solutions_of(puzzle)
    assert len(whole) > 100
    ticks = iter(range(10**9))
    events = hidoku.solve(puzzle, all_solutions=True, clock=lambda: float(next(ticks)), progress_every=0)
    before: List[Tuple[int, ...]] = []
    state = None
    for event in events:
        if isinstance(event, Found):
            before.append(event.solution)
        elif isinstance(event, Progress) and len(before) > 20:
            state = event.state
            assert 0 < event.done < 1 and event.solutions == len(before)
            break
    events.close()
    assert state is not None
    after = list(hidoku.solve(puzzle, all_solutions=True, resume=state))
    rest = [event.solution for event in after if isinstance(event, Found)]
    assert sorted(before + rest) == sorted(whole)
    assert after[-1].solutions == len(whole) and after[-1].complete


def test_stopping_at_the_first_solution() -> None:
    puzzle = hidoku.parse("1,_,_\n_,_,_\n")
    events = list(hidoku.solve(puzzle, all_solutions=False))
    assert [type(event) for event in events] == [Found, Finished]
    assert events[-1].solutions == 1 and not events[-1].complete


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1,_,3\n_,x,_\n", "line 2, cell 2: 'x' is neither a number nor a run of _"),
        ("1,_,3\n_,_\n", "line 2 has 2 cells but line 1 has 3"),
        ("1,_\n_,7\n", "line 2: 7 is outside 1..4"),
        ("1,2\n2,_\n", "line 2: 2 is given twice (also on line 1)"),
        ("\n\n", "holds no grid"),
    ],
)
def test_malformed_files_name_the_line(text: str, message: str) -> None:
    with pytest.raises(PuzzleFileError) as caught:
        hidoku.parse(text, "mine.txt")
    assert "mine.txt" in str(caught.value) and message in str(caught.value)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), st.data())
def test_the_file_format_reads_back_what_it_writes(rows: int, cols: int, data: st.DataObject) -> None:
    numbers = data.draw(st.permutations(range(1, rows * cols + 1)))
    shown = data.draw(st.lists(st.booleans(), min_size=rows * cols, max_size=rows * cols))
    puzzle = hidoku.Hidoku(rows, cols, tuple(n if keep else None for n, keep in zip(numbers, shown)), "x")
    assert hidoku.parse(hidoku.render_puzzle(puzzle), "x") == puzzle


def test_the_challenge_post_fits_and_shows_every_clue() -> None:
    puzzle, _ = hidoku.generate(7, 7, random.Random(1))
    text = hidoku.challenge_text(puzzle, "Hidoku 2026-11-23")
    assert text.startswith("Hidoku 2026-11-23: place 1-49")
    cells = text.split(". ", 1)[1].replace(" / ", " ").split(" ")
    assert cells == [".." if v is None else f"{v:02d}" for v in puzzle.cells]

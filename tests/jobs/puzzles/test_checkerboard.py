"""The draught-board tiling kind: the seed's stones, small boards against a brute force, every
tiling re-checked by a validator that shares no code with the solver, and bad files."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from pathlib import Path

import pytest

from twitterbot.jobs.puzzles import checkerboard
from twitterbot.jobs.puzzles.events import Finished, Found, Progress, PuzzleFileError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "puzzles"


def stones_of(text):
    """The stones as written: lists of (row, col, colour), parsed here independently."""
    stones, rows = [], []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("="):
            if rows:
                stones.append([(r, c, ch) for r, row in enumerate(rows) for c, ch in enumerate(row) if ch != "_"])
            rows = []
        else:
            rows.append(line.split(","))
    if rows:
        stones.append([(r, c, ch) for r, row in enumerate(rows) for c, ch in enumerate(row) if ch != "_"])
    return stones


def shapes(stone):
    """Every turn and flip of a stone, moved to the origin, as frozensets."""
    found = set()
    for flip in (False, True):
        for turns in range(4):
            cells = []
            for r, c, ch in stone:
                if flip:
                    c = -c
                for _ in range(turns):
                    r, c = c, -r
                cells.append((r, c, ch))
            r0 = min(r for r, _, _ in cells)
            c0 = min(c for _, c, _ in cells)
            found.add(frozenset((r - r0, c - c0, ch) for r, c, ch in cells))
    return found


def board_colour(r, c):
    return "B" if (r + c) % 2 == 0 else "W"


def validate(text, rows, cols, placements):
    """A tiling is valid when each stone is used once, as a turn or flip of itself, on squares of
    its colours, and the stones cover the board exactly."""
    stones = stones_of(text)
    assert sorted(p.stone for p in placements) == list(range(1, len(stones) + 1))
    covered = []
    for placement in placements:
        cells = [tuple(cell) for cell in placement.cells]
        coloured = [(r, c, board_colour(r, c)) for r, c in cells]
        r0 = min(r for r, _, _ in coloured)
        c0 = min(c for _, c, _ in coloured)
        moved = frozenset((r - r0, c - c0, ch) for r, c, ch in coloured)
        assert moved in shapes(stones[placement.stone - 1])
        covered += cells
    assert sorted(covered) == [(r, c) for r in range(rows) for c in range(cols)]


def brute_force(text, rows, cols):
    """Distinct tilings (identical stones swapped = same) and orbits under colour-keeping
    symmetries, by plain recursion over the first empty square."""
    stones = stones_of(text)
    kind = {}
    for index, stone in enumerate(stones):
        kind[index] = min(sorted(shape) for shape in shapes(stone))
    tilings = set()

    def go(filled, used, pieces):
        empty = next(((r, c) for r in range(rows) for c in range(cols) if (r, c) not in filled), None)
        if empty is None:
            tilings.add(frozenset(pieces))
            return
        for index, stone in enumerate(stones):
            if index in used:
                continue
            for shape in shapes(stone):
                for ar, ac, _ in shape:
                    dr, dc = empty[0] - ar, empty[1] - ac
                    cells = [(r + dr, c + dc, ch) for r, c, ch in shape]
                    if all(
                        0 <= r < rows and 0 <= c < cols and (r, c) not in filled and board_colour(r, c) == ch
                        for r, c, ch in cells
                    ):
                        squares = frozenset((r, c) for r, c, _ in cells)
                        go(filled | squares, used | {index}, pieces + [(squares, str(kind[index]))])

    go(frozenset(), frozenset(), [])
    maps = [lambda r, c: (r, c), lambda r, c: (rows - 1 - r, cols - 1 - c)]
    maps += [lambda r, c: (rows - 1 - r, c), lambda r, c: (r, cols - 1 - c)]
    if rows == cols:
        maps += [lambda r, c: (c, r), lambda r, c: (rows - 1 - c, rows - 1 - r)]
        maps += [lambda r, c: (c, rows - 1 - r), lambda r, c: (rows - 1 - c, r)]
    keep = [
        m for m in maps if all(board_colour(*m(r, c)) == board_colour(r, c) for r in range(rows) for c in range(cols))
    ]
    orbits = set()
    for tiling in tilings:
        images = [frozenset((frozenset(m(*cell) for cell in squares), k) for squares, k in tiling) for m in keep]
        orbits.add(min(images, key=lambda image: sorted((sorted(s), k) for s, k in image)))
    return len(tilings), len(orbits)


def random_stones(rng, rows, cols):
    """Cut a board into random pieces of 1-5 squares and write them as a stones file."""
    owner = {}
    order = [(r, c) for r in range(rows) for c in range(cols)]
    rng.shuffle(order)
    piece = 0
    for start in order:
        if start in owner:
            continue
        owner[start] = piece
        size = rng.randint(2, 5)
        frontier = [start]
        count = 1
        while count < size and frontier:
            r, c = rng.choice(frontier)
            options = [(r + dr, c + dc) for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0))]
            options = [cell for cell in options if cell in dict.fromkeys(order) and cell not in owner]
            if not options:
                frontier.remove((r, c))
                continue
            cell = rng.choice(options)
            owner[cell] = piece
            frontier.append(cell)
            count += 1
        piece += 1
    blocks = []
    for number in range(piece):
        cells = [cell for cell, owned in owner.items() if owned == number]
        r0, c0 = min(r for r, _ in cells), min(c for _, c in cells)
        r1, c1 = max(r for r, _ in cells), max(c for _, c in cells)
        lines = [
            ",".join(board_colour(r, c) if (r, c) in cells else "_" for c in range(c0, c1 + 1))
            for r in range(r0, r1 + 1)
        ]
        blocks.append("\n".join(lines))
    return "\n====\n".join(blocks) + "\n"


def run(puzzle, **kwargs):
    events = list(checkerboard.solve(puzzle, all_solutions=True, **kwargs))
    found = [event.solution for event in events if isinstance(event, Found)]
    assert isinstance(events[-1], Finished)
    return found, events[-1]


def test_the_seed_stones_give_104_tilings_26_up_to_symmetry_each_valid():
    text = (FIXTURES / "checkerboard_seed.txt").read_text()
    puzzle = checkerboard.parse(text, "seed")
    assert (puzzle.rows, puzzle.cols) == (8, 8)
    found, finished = run(puzzle)
    assert finished.solutions == len(found) == 104 and finished.complete
    assert checkerboard.summary_json(puzzle, finished) == {"up_to_symmetry": 26, "symmetries": 4}
    assert len({frozenset(tiling) for tiling in found}) == 104
    for tiling in found:
        validate(text, 8, 8, tiling)
    drawing = checkerboard.render(puzzle, found[0])
    assert drawing.splitlines()[1].startswith("|") and "B" in drawing and "W" in drawing
    assert checkerboard.solution_json(puzzle, found[0])[0].keys() == {"stone", "cells"}


@pytest.mark.parametrize("seed", range(12))
def test_small_boards_agree_with_a_brute_force(seed):
    rng = random.Random(seed)
    rows, cols = rng.choice([(3, 3), (3, 4), (4, 4), (2, 5), (4, 3)])
    text = random_stones(rng, rows, cols)
    puzzle = checkerboard.parse(text, "random", board=f"{rows}x{cols}")
    found, finished = run(puzzle)
    total, orbits = brute_force(text, rows, cols)
    assert (len(found), finished.extra["up_to_symmetry"]) == (total, orbits)
    for tiling in found:
        validate(text, rows, cols, tiling)


@pytest.mark.parametrize("rows, cols, tilings", [(2, 4, 5), (2, 5, 8)])
def test_identical_stones_swapped_are_one_tiling(rows, cols, tilings):
    text = "\n====\n".join(["B,W"] * (rows * cols // 2)) + "\n"
    puzzle = checkerboard.parse(text, "dominoes", board=f"{rows}x{cols}")
    found, finished = run(puzzle)
    assert len(found) == tilings == brute_force(text, rows, cols)[0]
    assert finished.extra["up_to_symmetry"] == brute_force(text, rows, cols)[1]
    for tiling in found:
        validate(text, rows, cols, tiling)


def test_a_search_resumed_from_a_checkpoint_finds_the_rest():
    text = random_stones(random.Random(0), 5, 6)  # 1,080 tilings, about 12,000 nodes
    puzzle = checkerboard.parse(text, "random", board="5x6")
    everything, finished = run(puzzle)
    ticks = itertools.count()
    events = list(checkerboard.solve(puzzle, all_solutions=True, clock=lambda: next(ticks) * 0.01, report_every=0.001))
    states = [(index, event.state) for index, event in enumerate(events) if isinstance(event, Progress)]
    assert states, "the fake clock makes it report"
    index, state = states[len(states) // 2]
    before = [event.solution for event in events[:index] if isinstance(event, Found)]
    after, resumed = run(puzzle, resume=state)
    assert len(before) < len(everything)
    assert Counter(map(frozenset, before + after)) == Counter(map(frozenset, everything))
    assert resumed.solutions == finished.solutions
    assert resumed.extra["up_to_symmetry"] == finished.extra["up_to_symmetry"]


@pytest.mark.parametrize(
    "text, options, line",
    [
        ("B,W\nW,X\n", {}, "line 2"),
        ("B,W\n====\nB,W,B\nW\n", {}, "line 4"),
        ("B,B\n", {}, "line 1"),
        ("B\n====\nW\n", {"board": "3x3"}, "2 squares"),
        ("B,W,B\n", {}, "not a square"),
        ("B,W\n", {"board": "two"}, "ROWSxCOLS"),
    ],
)
def test_malformed_files_name_the_line(text, options, line):
    with pytest.raises(PuzzleFileError, match=line):
        checkerboard.parse(text, "stones.txt", **options)

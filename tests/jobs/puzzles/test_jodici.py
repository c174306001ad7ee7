"""Jodici: the seed's sample, counts against a brute force, an independent validator, malformed files."""

from __future__ import annotations

import random
from itertools import product
from pathlib import Path
from typing import List, Optional, Sequence

import pytest

from twitterbot.jobs.puzzles import jodici
from twitterbot.jobs.puzzles.events import Finished, Found, PuzzleFileError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "puzzles"
SEED_SOLUTION = [
    [int(v) for v in line.split(",")] for line in (FIXTURES / "jodici-sample-solution.txt").read_text().split()
]


def is_valid(rings: Sequence[Sequence[int]], puzzle: Sequence[Sequence[Optional[int]]]) -> bool:
    """Rings of 30, sectors of 15, no digit more than twice, the givens kept."""
    digits = [d for ring in rings for d in ring]
    return (
        len(rings) == 3
        and all(len(ring) == 6 and sum(ring) == 30 for ring in rings)
        and all(sum(rings[r][s] for r in range(3)) == 15 for s in range(6))
        and all(1 <= d <= 9 and digits.count(d) <= 2 for d in digits)
        and all(puzzle[r][s] in (None, rings[r][s]) for r in range(3) for s in range(6))
    )


def brute_force(puzzle: List[List[Optional[int]]]) -> List[tuple]:
    blanks = [(r, s) for r in range(3) for s in range(6) if puzzle[r][s] is None]
    found = []
    for digits in product(range(1, 10), repeat=len(blanks)):
        rings = [list(ring) for ring in puzzle]
        for (r, s), d in zip(blanks, digits):
            rings[r][s] = d
        if is_valid(rings, puzzle):
            found.append(tuple(tuple(ring) for ring in rings))
    return sorted(found)


def text_of(puzzle: List[List[Optional[int]]]) -> str:
    return "".join(",".join("_" if d is None else str(d) for d in ring) + "\n" for ring in puzzle)


def test_the_seed_s_sample_has_one_solution_the_seed_s() -> None:
    puzzle = jodici.parse((FIXTURES / "jodici-sample.csv").read_text(), "1.csv")
    events = list(jodici.solve(puzzle, all_solutions=True))
    found = [event for event in events if isinstance(event, Found)]
    assert len(found) == 1 and isinstance(events[-1], Finished) and events[-1].complete
    assert jodici.solution_json(puzzle, found[0].solution) == SEED_SOLUTION
    assert is_valid(SEED_SOLUTION, puzzle.rings)
    assert jodici.render(puzzle, found[0].solution) == (FIXTURES / "jodici-sample-solution.txt").read_text()


def variants() -> List[List[List[int]]]:
    """Other full Jodicis: the seed's with its sectors turned or mirrored and its rings reordered."""
    out = []
    for turn in range(6):
        for mirror in (False, True):
            for order in ((0, 1, 2), (2, 0, 1)):
                rings = [SEED_SOLUTION[r][turn:] + SEED_SOLUTION[r][:turn] for r in order]
                out.append([ring[::-1] for ring in rings] if mirror else rings)
    return out


def test_counts_agree_with_brute_force() -> None:
    rng = random.Random(5)
    for full in rng.sample(variants(), 8):
        cells = [(r, s) for r in range(3) for s in range(6)]
        blank = set(rng.sample(cells, rng.randrange(3, 6)))
        puzzle = [[None if (r, s) in blank else full[r][s] for s in range(6)] for r in range(3)]
        parsed = jodici.parse(text_of(puzzle))
        ours = sorted(e.solution for e in jodici.solve(parsed, all_solutions=True) if isinstance(e, Found))
        assert ours == brute_force(puzzle), text_of(puzzle)


def test_a_puzzle_with_several_solutions_lists_them_all() -> None:
    puzzle = [[3, 7, None, None, None, None], [None, None, 1, 5, None, None], [6, None, None, None, None, None]]
    found = [
        e.solution for e in jodici.solve(jodici.parse(text_of(puzzle)), all_solutions=True) if isinstance(e, Found)
    ]
    assert len(found) > 1 and len(set(found)) == len(found)
    assert all(is_valid(rings, puzzle) for rings in found)
    first = list(jodici.solve(jodici.parse(text_of(puzzle)), all_solutions=False))
    assert [type(e) for e in first] == [Found, Finished] and not first[-1].complete


def test_a_puzzle_with_no_solution() -> None:
    events = list(jodici.solve(jodici.parse("9,_,_,_,_,_\n_,_,_,_,_,_\n9,_,_,_,_,_\n"), all_solutions=True))
    assert events == [Finished(0, True, events[-1].nodes, events[-1].seconds)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("3,7,_,_,_\n_,_,1,5,9,_\n6,_,_,_,_,_\n", "line 1 has 5 cells"),
        ("3,7,_,_,_,_\n_,_,1,0,9,_\n6,_,_,_,_,_\n", "line 2, cell 4: '0' is not a digit 1-9"),
        ("3,7,_,_,_,_\n_,_,1,5,9,_\n", "has 2 ring lines"),
        ("3,7,_,_,_,_\n_,_,1,5,9,_\n6,_,_,_,_,_\n1,1,1,1,1,1\n", "line 4: a Jodici has 3 rings"),
        ("3,3,_,_,_,_\n_,_,1,5,9,_\n3,_,_,_,_,_\n", "line 3: 3 is given 3 times"),
    ],
)
def test_malformed_files_name_the_line(text: str, message: str) -> None:
    with pytest.raises(PuzzleFileError) as caught:
        jodici.parse(text, "j.csv")
    assert "j.csv" in str(caught.value) and message in str(caught.value)


def test_a_search_resumed_from_a_checkpoint_finds_the_rest() -> None:
    """Stopped half-way (a Progress state, as the job saves it), the search goes on where it was:
    the solutions before and after the checkpoint are every solution, none twice."""
    import itertools

    from twitterbot.jobs.puzzles.events import Found, Progress

    puzzle = jodici.parse("3,4,_,_,_,_\n_,5,_,_,_,_\n_,_,_,7,_,_\n", "test")  # 6 solutions, 31,892 nodes
    everything = [event.solution for event in jodici.solve(puzzle, all_solutions=True) if isinstance(event, Found)]
    ticks = itertools.count()
    events = list(jodici.solve(puzzle, all_solutions=True, clock=lambda: next(ticks) * 0.01, progress_every=0.001))
    states = [(index, event.state) for index, event in enumerate(events) if isinstance(event, Progress)]
    assert states and all(state for _, state in states)
    found_by = [sum(isinstance(event, Found) for event in events[:index]) for index, _ in states]
    index, state = next(item for item, count in zip(states, found_by) if 0 < count < len(everything))
    before = [event.solution for event in events[:index] if isinstance(event, Found)]
    resumed = list(jodici.solve(puzzle, all_solutions=True, resume=state))
    after = [event.solution for event in resumed if isinstance(event, Found)]
    assert 0 < len(before) < len(everything)
    assert sorted(before + after) == sorted(everything)
    assert resumed[-1].solutions == len(everything)

"""The flower disk kind: the seed's finding (no solution as bought, exactly one with the last disk
flipped), a brute force over every rotation set, an independent validator, and bad files."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from twitterbot.jobs.puzzles import flowerdisk
from twitterbot.jobs.puzzles.events import Finished, Found, PuzzleFileError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "puzzles"


def covers(disks, rotations):
    """Turning disk d by r shows at place i the line's place (i + r): every place needs a 1."""
    places = len(disks[0])
    return all(any(disk[(i + r) % places] == 1 for disk, r in zip(disks, rotations)) for i in range(places))


def brute_force(disks):
    places = len(disks[0])
    return [(0, *rest) for rest in itertools.product(range(places), repeat=len(disks) - 1) if covers(disks, (0, *rest))]


def run(puzzle):
    events = list(flowerdisk.solve(puzzle, all_solutions=True))
    assert isinstance(events[-1], Finished)
    return [event.solution.rotations for event in events if isinstance(event, Found)], events[-1]


def test_the_seed_disks_have_no_solution_and_flipping_the_last_gives_exactly_one():
    puzzle = flowerdisk.parse((FIXTURES / "flowerdisk_seed.txt").read_text(), "seed")
    found, finished = run(puzzle)
    assert found == [] and finished.solutions == 0 and finished.complete
    flipped = {entry["disk"]: entry for entry in flowerdisk.summary_json(puzzle, finished)["flipped"]}
    assert flipped[4]["solutions"] == 1 and flipped[4]["solution"] == [0, 0, 5, 11]
    disks = [list(disk) for disk in puzzle.disks]
    for disk, entry in flipped.items():  # every flip it reports is real, and so are its counts
        changed = [line[::-1] if index == disk - 1 else line for index, line in enumerate(disks)]
        assert len(brute_force(changed)) == entry["solutions"]
        assert covers(changed, entry["solution"])
    for disk in set(range(1, 5)) - set(flipped):
        changed = [line[::-1] if index == disk - 1 else line for index, line in enumerate(disks)]
        assert brute_force(changed) == []


def test_the_seed_modified_disks_have_one_solution_the_seeds():
    text = (FIXTURES / "flowerdisk_seed_flipped.txt").read_text()
    puzzle = flowerdisk.parse(text, "seed")
    found, finished = run(puzzle)
    assert found == [(0, 0, 5, 11)] and finished.solutions == 1
    assert flowerdisk.summary_json(puzzle, finished) == {}
    shown = flowerdisk.render(puzzle, flowerdisk.Solution((0, 0, 5, 11)))
    assert "[0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0]" in shown  # the third disk as the seed prints it


@pytest.mark.parametrize("seed", range(25))
def test_random_disks_agree_with_a_brute_force(seed):
    rng = random.Random(seed)
    places = rng.choice([4, 6, 8, 12])
    disks = [[int(rng.random() < 0.35) for _ in range(places)] for _ in range(rng.randint(1, 4))]
    text = "\n".join(
        rng.choice([str(disk).replace(" ", ""), " ".join(map(str, disk)), "".join(map(str, disk))]) for disk in disks
    )
    found, finished = run(flowerdisk.parse(text, "random"))
    expected = brute_force(disks)
    assert sorted(found) == expected and finished.solutions == len(expected)
    for rotations in found:
        assert covers(disks, rotations)


@pytest.mark.parametrize(
    "text, line",
    [
        ("[0,1,0]\n[0,1,2]\n", "line 2"),
        ("# disks\n\n[0,1,0,1]\n[0,1,0]\n", "line 4"),
        ("0 1 x 1\n", "line 1"),
        ("# nothing here\n", "no disks"),
        ("1\n", "line 1"),
    ],
)
def test_malformed_files_name_the_line(text, line):
    with pytest.raises(PuzzleFileError, match=line):
        flowerdisk.parse(text, "disks.txt")

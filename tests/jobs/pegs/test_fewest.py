"""Fewest moves (a move is a run of jumps by one peg): the search by moves over the positions
that can still reach the goal, checked against a brute force and a referee that share no code
with it (they read the printed pictures; see test_kinds.py), and the English board's 18 moves."""

from __future__ import annotations

import io
import os
from functools import cache
from pathlib import Path
from typing import List, Optional, Tuple

import pytest
from conftest import BotHome
from test_kinds import FIXTURES, Cell, jumps_of, picture, referee, triangle_text

from twitterbot.jobs.pegs.board import builtin, parse_board
from twitterbot.jobs.pegs.boards import BOARDS
from twitterbot.jobs.pegs.bounds import position_class_proof
from twitterbot.jobs.pegs.fewest import Counted, FewestMoves, Searched, TooBig, fewest_moves, search_fewest
from twitterbot.jobs.pegs.job import run_fewest
from twitterbot.jobs.pegs.solve import solution_text

# A 4x4 square without two opposite corners (the brute force is quick on its 14 holes).
CUT_SQUARE = " XXX\nXOXX\nXXXX\nXXX "


def fewest_by_brute_force(text: str, kind: str, goal_cells: List[Cell]) -> Optional[int]:
    """The fewest moves from the picture's start to exactly `goal_cells` holding pegs, by trying
    every jump from every (position, hole the last jump landed in): None if there is no way."""
    holes = picture(text)
    cells = sorted(holes)
    start = sum(1 << i for i, cell in enumerate(cells) if holes[cell] == "X")
    goal = sum(1 << cells.index(cell) for cell in goal_cells)
    jumps = jumps_of(cells, kind)

    @cache
    def rest(position: int, last: int) -> float:
        if position == goal:
            return 0
        best = float("inf")
        for a, b, c in jumps:
            if position >> a & 1 and position >> b & 1 and not position >> c & 1:
                best = min(best, rest(position ^ (1 << a | 1 << b | 1 << c), c) + (a != last))
        return best

    found = rest(start, -1)
    return None if found == float("inf") else int(found)


def moves_in(printed: str) -> Tuple[int, List[Cell]]:
    """How many moves a printed solution makes (a jump from where the last one landed continues
    its move), read from the pictures alone; and where the pegs are at the end."""
    blocks = printed.split("End Solution")[0].split("\n\n")
    pictures = [picture(blocks[0].split("\n", 1)[1])] + [picture(block) for block in blocks[2:] if block.strip()]
    moves, landed = 0, None
    for before, after in zip(pictures, pictures[1:]):
        (end,) = [cell for cell in before if before[cell] == "O" and after[cell] == "X"]
        emptied = [cell for cell in before if before[cell] == "X" and after[cell] == "O"]
        # Of the two holes emptied, the peg came from the one farther from where it landed.
        start = max(emptied, key=lambda cell: abs(cell[0] - end[0]) + abs(cell[1] - end[1]))
        moves += start != landed
        landed = end
    return moves, sorted(cell for cell, char in pictures[-1].items() if char == "X")


@pytest.mark.parametrize(
    ("kind", "text", "finish", "goal", "expected"),
    [
        # The start is the goal's complement (a central game): found with the count's mirror levels.
        ("triangular", triangle_text(5), "a1", [(0, 4)], 10),
        ("diagonal", CUT_SQUARE, "b2", [(1, 1)], 9),
        # Any other start: the positions that can finish are found level by level from the last.
        ("triangular", triangle_text(5, (2, 1)), "c5", [(4, 4)], 11),
        ("diagonal", " XX \nXOXX\nXXXX\n XX ", "c3", [(2, 2)], 8),
        ("orthogonal", BOARDS["fireplace"][0], "centre", [(3, 3)], 8),
        # A final pattern of two pegs (a drawing after the board).
        ("triangular", triangle_text(5), "pattern", [(4, 0), (4, 8)], 8),
        ("diagonal", CUT_SQUARE, "pattern", [(0, 3), (3, 0)], 8),
        # Impossible, though the position classes allow it: the search proves it.
        ("triangular", triangle_text(5, (2, 1)), "a1", [(0, 4)], None),
    ],
)
def test_fewest_moves_to_a_goal_agree_with_brute_force(
    kind: str, text: str, finish: str, goal: List[Cell], expected: Optional[int]
) -> None:
    assert fewest_by_brute_force(text, kind, goal) == expected  # the table itself is right
    if finish == "pattern":  # the same drawing with pegs on the goal's holes only
        lines = text.split("\n")
        drawing = "\n".join(
            "".join(("X" if (y, x) in goal else "O") if char in "XO" else char for x, char in enumerate(line))
            for y, line in enumerate(lines)
        )
        board = parse_board(f"kind: {kind}\nfinish: pattern\n{text}\n\n{drawing}", name="small")
    else:
        board = parse_board(f"kind: {kind}\n{text}", name="small", finish=finish)
    result = fewest_moves(board)
    assert result is not None and result.proved
    if expected is None:
        assert result.jumps is None and position_class_proof(board) is None
        return
    assert result.jumps is not None and result.moves == expected
    printed = solution_text(board, result.jumps)
    referee(printed, kind)
    assert moves_in(printed) == (expected, goal)


def test_the_search_reports_the_count_then_each_move() -> None:
    events = list(search_fewest(builtin("fireplace")))
    counted = [event for event in events if isinstance(event, Counted)]
    searched = [event for event in events if isinstance(event, Searched)]
    assert [event.jumps for event in counted] == list(range(counted[0].levels))
    assert [event.moves for event in searched] == list(range(1, 9))
    assert all(event.seen <= event.finishable for event in searched)
    assert isinstance(events[-1], FewestMoves) and events[-1].moves == 8
    assert events.index(counted[-1]) < events.index(searched[0])


class Recorder:
    """A reporter that keeps what it is told."""

    def __init__(self) -> None:
        self.updates: List[Tuple[str, bool]] = []
        self.ticks = 0
        self.result = ""
        self.pictures: List[object] = []

    def opening_picture(self, picture: object) -> None:
        self.pictures.append(picture)

    def update(self, message: str, *, milestone: bool = False) -> None:
        self.updates.append((message, milestone))

    def tick(self) -> None:
        self.ticks += 1

    def done(self, message: str = "", *, picture: object = None, **fields: object) -> None:
        self.result = message
        self.pictures.append(picture)


def test_the_job_reports_the_count_and_each_move_then_the_answer() -> None:
    reporter = Recorder()
    out = io.StringIO()
    assert run_fewest(builtin("fireplace"), reporter, out=out)  # type: ignore[arg-type]
    counted = [message for message, milestone in reporter.updates if "counted level" in message]
    moves = [message for message, milestone in reporter.updates if milestone]
    assert counted and "positions that can still reach the goal" in counted[0]
    assert moves[0].startswith("2 positions within 1 move of the start, of the 12 that can reach the goal")
    assert " within 8 moves " in moves[-1]
    assert reporter.ticks > 0
    assert reporter.result.startswith("solved in 8 moves (proved the fewest)")
    assert "Moves (8, proved the fewest): " in out.getvalue()
    assert len(reporter.pictures) == 2 and all(callable(picture) for picture in reporter.pictures)  # start, solution


def test_a_board_too_big_is_refused_with_the_reason() -> None:
    *_, event = search_fewest(builtin("german"), max_level=1_000)
    assert isinstance(event, TooBig) and "too big for --fewest-moves" in event.reason
    assert fewest_moves(builtin("german"), max_level=1_000) is None
    # Levels of 115,029 then 438,445 positions: the next, 1,556,366, is foreseen and never made.
    events = list(search_fewest(builtin("german"), max_level=500_000))
    assert isinstance(events[-1], TooBig) and "after 438,445 positions 10 jumps" in events[-1].reason
    assert "would make about 1,67" in events[-1].reason
    assert max(event.positions for event in events if isinstance(event, Counted)) == 115_029
    *_, anywhere = search_fewest(builtin("german", finish="any"), max_states=1_000)
    assert isinstance(anywhere, TooBig) and "--finish" in anywhere.reason


def test_fewest_moves_to_a_goal_from_the_command_line(home: BotHome) -> None:
    solved = home.run("pegs", "solve", "fireplace", "--fewest-moves", "--no-post")
    assert solved.returncode == 0, solved.stderr
    assert "Moves (8, proved the fewest): " in solved.stdout
    printed = solved.stdout.split("Moves (")[0]
    referee(printed, "orthogonal")
    assert moves_in(printed) == (8, [(3, 3)])
    assert not list(home.path.rglob("pegs-fewest-*"))  # the count's levels are gone


def test_the_stored_english_solution_takes_18_moves() -> None:
    """The English board's published minimum: 18 moves. The file is this search's answer (see its
    first lines); here it is replayed by the referee alone."""
    text = (FIXTURES / "english-fewest-moves.txt").read_text(encoding="utf-8")
    printed = text[text.index("Starting Board") :].split("Moves (")[0]
    referee(printed, "orthogonal")
    assert moves_in(printed) == (18, [(3, 3)])
    assert "Moves (18, proved the fewest): " in text


def test_the_english_board_takes_18_moves_and_no_fewer(tmp_path: Path) -> None:
    """About 15 s of CPU with the compiled count (the English board counted first), 45 s on
    numpy: without a C compiler it runs only with TWITTERBOT_SLOW=1."""
    from twitterbot.jobs.pegs.kernel import load

    kernel = load(tmp_path / "pegs-cache")
    if kernel is None and not os.environ.get("TWITTERBOT_SLOW"):
        pytest.skip("NO C COMPILER (cc): the English board's 18 moves need 45 s on numpy; TWITTERBOT_SLOW=1 runs it")
    result = fewest_moves(builtin("english"), folder=tmp_path / "levels", kernel=kernel)
    assert result is not None and result.proved and result.moves == 18
    board = builtin("english")
    printed = solution_text(board, result.jumps)
    referee(printed, "orthogonal")
    assert moves_in(printed) == (18, [(3, 3)])

"""The peg job's pictures (jobs/pegs/picture.py): every board shape, the start and a solution,
with alt text that reads the position and every jump; `pegs solve --dry-run` shows them."""

from __future__ import annotations

import io
import re

import pytest
from conftest import BotHome
from PIL import Image

from twitterbot.jobs.pegs.board import builtin
from twitterbot.jobs.pegs.picture import describe_position, solution_picture, start_picture
from twitterbot.jobs.pegs.solve import Solved, solve


def solved(name: str):
    board = builtin(name)
    return board, next(event for event in solve(board) if isinstance(event, Solved)).jumps


@pytest.mark.parametrize("name", ["english", "french-diagonal", "triangle"])
def test_every_board_shape_is_drawn_with_its_solution(name: str) -> None:
    board, jumps = solved(name)
    start = start_picture(board)
    solution = solution_picture(board, jumps)
    for picture in (start, solution):
        with Image.open(io.BytesIO(picture.png)) as image:
            assert image.format == "PNG" and 600 <= image.width <= 1200 and image.height <= 2000
    assert describe_position(board, board.start) in start.alt and board.goal_text in start.alt
    # Every jump is read out, numbered, in order; and the finish is named.
    numbered = re.findall(r"(\d+)\. ([a-z]\d+-[a-z]\d+)", solution.alt)
    assert [move for _, move in numbered] == [board.describe(jump) for jump in jumps]
    assert (
        f"drawn as {len(jumps) + 1} small boards" in solution.alt and "The last shows the finish: 1 peg" in solution.alt
    )


def test_the_dry_run_of_a_solve_writes_the_start_and_the_solution(tmp_path) -> None:
    home = BotHome(tmp_path / "bot", None)
    home.path.mkdir()
    home.write_env(BOT_STATE_DIR=str(home.path / "state"))
    run = home.run("pegs", "solve", "triangle", "--dry-run")
    assert run.returncode == 0, run.stderr
    paths = re.findall(r"picture \d for X: (\S+\.png)", run.stderr)
    assert [path.rsplit("/", 1)[-1] for path in paths] == [
        "1-pegs-triangle-start.x.png",
        "2-pegs-triangle-solution.x.png",
    ]
    quiet = home.run("pegs", "solve", "triangle", "--dry-run", "--no-pictures")
    assert quiet.returncode == 0 and "picture" not in quiet.stderr

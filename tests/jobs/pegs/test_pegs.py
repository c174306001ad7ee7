"""Peg solitaire: boards, board files, the solver (checked by an independent move validator), the
impossibility proofs, the level counts against brute force and OEIS A112737, and the job's posts."""

from __future__ import annotations

import io
from datetime import datetime, timezone
from pathlib import Path
from typing import Dict, List, Set, Tuple

import numpy as np
import pytest
from conftest import REGISTRY, BotHome, by_network
from reporters import make_reporter

from twitterbot.jobs.pegs.board import BoardFileError, builtin, load_board, parse_board, searched, with_empty_hole
from twitterbot.jobs.pegs.boards import BOARDS
from twitterbot.jobs.pegs.bounds import position_class_proof
from twitterbot.jobs.pegs.count import count_levels, load_checkpoint
from twitterbot.jobs.pegs.job import CountSetup, run_count, run_solve
from twitterbot.jobs.pegs.levels import Counting
from twitterbot.jobs.pegs.solve import Impossible, Searching, Solved, solution_text, solve
from twitterbot.networks.dryrun import DryRunPoster
from twitterbot.progress.reports import NullReporter
from twitterbot.progress.statusline import StatusLine, status_line_for
from twitterbot.state.store import HistoryStore

SOLVABLE = ["english", "cross", "plus", "fireplace", "pyramid", "arrow", "german"]
IMPOSSIBLE = ["french", "diamond", "english-diamond"]


def grid_of(text: str) -> Dict[Tuple[int, int], str]:
    """An independent reading of a board picture: (row, column) -> 'X' or 'O'."""
    return {
        (row, col): char for row, line in enumerate(text.split("\n")) for col, char in enumerate(line) if char in "XO"
    }


def play(grid: Dict[Tuple[int, int], str], move: str) -> None:
    """Apply a move written 'c2-c4' to the grid, checking every rule of the game on the way."""
    start, end = move.split("-")
    (c1, r1), (c2, r2) = ((ord(s[0]) - ord("a"), int(s[1:]) - 1) for s in (start, end))
    assert (abs(r1 - r2), abs(c1 - c2)) in ((0, 2), (2, 0)), f"{move} is not a jump of two"
    over = ((r1 + r2) // 2, (c1 + c2) // 2)
    assert grid.get((r1, c1)) == "X", f"{move}: no peg to move"
    assert grid.get(over) == "X", f"{move}: no peg to jump over"
    assert grid.get((r2, c2)) == "O", f"{move}: the landing hole is not empty"
    grid[(r1, c1)], grid[over], grid[(r2, c2)] = "O", "O", "X"


@pytest.mark.parametrize("name", SOLVABLE)
def test_every_solution_replays_legally_to_one_peg_in_the_centre(name: str) -> None:
    board = builtin(name)
    *_, event = solve(board)
    assert isinstance(event, Solved)
    text = solution_text(board, event.jumps)
    grid = grid_of(BOARDS[name][0])
    for move in text.split("Jumps (", 1)[1].split(": ", 1)[1].split():
        play(grid, move)
    pegs = [cell for cell, char in grid.items() if char == "X"]
    rows = [row for row, _ in grid]
    cols = [col for _, col in grid]
    assert pegs == [((min(rows) + max(rows)) // 2, (min(cols) + max(cols)) // 2)]


@pytest.mark.parametrize("name", IMPOSSIBLE)
def test_impossible_boards_are_proved_impossible_at_once(name: str) -> None:
    events = list(solve(builtin(name)))
    assert len(events) == 1 and isinstance(events[0], Impossible)
    assert events[0].positions == 0 and "diagonal" in events[0].reason


def test_the_proof_never_rejects_a_solvable_board() -> None:
    for name in SOLVABLE:
        assert position_class_proof(builtin(name)) is None


def test_a_board_with_no_solution_that_the_proof_misses_is_searched_to_the_end() -> None:
    # Two pegs side by side in a row of four: one jump leaves one peg, but not in the middle hole.
    board = parse_board("XXOO\n", name="row", finish="any")
    *_, event = solve(board)
    assert isinstance(event, Solved)
    stuck = parse_board("XOXO\n", name="stuck")
    events = list(solve(stuck))
    assert isinstance(events[-1], Impossible) and "tried every sequence" in events[-1].reason


def test_the_patterns_are_the_seed_s_setup_functions() -> None:
    # board[x, y] in the seed: x is the column. Cross: the six pegs of a small cross around d4.
    cross = builtin("cross")
    assert sorted(cross.name_of(i) for i in range(cross.size) if cross.start >> i & 1) == [
        "c3",
        "d2",
        "d3",
        "d4",
        "d5",
        "e3",
    ]
    assert [builtin(name).pegs(builtin(name).start) for name in SOLVABLE] == [32, 6, 9, 11, 16, 17, 44]
    assert builtin("fireplace").start >> builtin("fireplace").target & 1 == 0  # the centre starts empty


def test_the_result_file_has_the_seed_s_layout() -> None:
    board = builtin("cross")
    *_, event = solve(board)
    text = solution_text(board, event.jumps)
    assert text.startswith("Starting Board\n  OOO  \n  OXO  \n")
    assert "\n\nStart Solution\n\n" in text and "\nEnd Solution\n\n" in text
    assert text.count("\n\n") == len(event.jumps) + 3
    assert text.splitlines()[-1].startswith(f"Jumps ({len(event.jumps)}): ")


def test_solving_reports_progress_events() -> None:
    ticks = iter(range(10**6))
    events = list(solve(builtin("german"), report_every=5, clock=lambda: next(ticks)))
    searching = [event for event in events if isinstance(event, Searching)]
    assert searching and all(b.positions >= a.positions for a, b in zip(searching, searching[1:]))
    assert [event.fewest_pegs for event in searching if event.new_best] == list(range(43, 1, -1))


# -- board files -----------------------------------------------------------------------------------


def test_a_board_file_in_the_seed_notation(tmp_path: Path) -> None:
    path = tmp_path / "tiny.txt"
    path.write_text(" XX \nXOXX\n XO.\n")
    board = load_board(path)
    assert (board.name, board.size, board.pegs(board.start), board.target) == ("tiny", 8, 6, None)
    assert board.render(board.start) == " XX \nXOXX\n XO \n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "is empty"),
        ("XXO\nXO\n", "line 2 is 2 characters wide but line 1 is 3"),
        ("XXO\nX-O\n", "line 2 column 2 has '-'"),
        ("OOO\nOOO\n", "has no pegs"),
        ("XXX\n", "no empty hole"),
        ("X" * 129 + "O\n", "at most 128"),
    ],
)
def test_malformed_board_files_are_named_with_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "board.txt"
    path.write_text(text)
    with pytest.raises(BoardFileError, match=message) as caught:
        load_board(path)
    assert str(path) in str(caught.value)


def test_finishing_in_the_centre_needs_a_centre(tmp_path: Path) -> None:
    path = tmp_path / "board.txt"
    path.write_text("XXOO\n")
    with pytest.raises(BoardFileError, match="no hole in the middle"):
        load_board(path, finish="centre")


# -- counting --------------------------------------------------------------------------------------


def brute_force(board) -> Tuple[List[int], int]:
    """Every jump sequence, naively: distinct positions per level up to symmetry, and the winners."""
    from twitterbot.jobs.pegs.solve import Symmetries

    canonical = Symmetries(board).canonical
    levels: List[Set[int]] = []
    wins = 0

    def walk(position: int, depth: int) -> None:
        nonlocal wins
        while len(levels) <= depth:
            levels.append(set())
        levels[depth].add(canonical(position))
        if board.is_won(position):
            wins += 1
        for jump in board.moves(position):
            walk(position ^ jump.flips, depth + 1)

    walk(board.start, 0)
    return [len(level) for level in levels], wins


@pytest.mark.parametrize("name", ["cross", "plus", "fireplace"])
def test_counts_agree_with_brute_force(name: str) -> None:
    board = builtin(name)
    levels = list(count_levels(board, block=7))  # tiny blocks: exercise the merging
    sizes, wins = brute_force(board)
    assert [level.positions for level in levels] == sizes
    assert levels[-1].solutions == wins and wins > 0


def test_the_english_board_reproduces_the_start_of_a112737() -> None:
    sizes = []
    for level in count_levels(builtin("english")):
        sizes.append(level.positions)
        if level.jumps == 9:
            break
    assert sizes == [1, 1, 2, 8, 39, 171, 719, 2757, 9751, 31312]


def every_position(board) -> int:
    """Every position reachable from the start, each counted, by a plain walk of sets."""
    return sum(walk(board, lambda position: position))


def walk(board, name) -> List[int]:
    """The sizes of the levels, by a plain walk of sets of positions, each as `name` gives it."""
    level, sizes = {name(board.start)}, []
    while level:
        sizes.append(len(level))
        level = {name(position ^ jump.flips) for position in level for jump in board.moves(position)}
    return sizes


def images_of_kept(board, folder: Path, levels: int) -> int:
    """The count's kept positions, each with its distinct images under the board's symmetries:
    what the count's figures stand for, position by position."""
    return sum(
        len({board.moved(int(position), symmetry) for symmetry in board.symmetries})
        for jumps in range(levels)
        for position in np.load(folder / f"level-{jumps}.npy")
    )


def test_the_triangle_from_its_corner_reaches_3016_positions_counted_up_to_its_mirror(tmp_path: Path) -> None:
    """Jaap Scherphuis's peg solitaire tables give 3,016 positions (29,760 solutions) for the
    triangle from a corner. The count gives them up to the one symmetry that keeps the corner,
    its mirror: 1,544, each standing for itself and its mirror image."""
    board = builtin("triangle")  # a1, the top corner, empty
    assert len(board.symmetries) == 2 and len(searched(board).symmetries) == 6
    levels = list(count_levels(board, keep=tmp_path))
    assert sum(level.positions for level in levels) == 1544 and levels[-1].solutions == 29760
    assert images_of_kept(board, tmp_path, len(levels)) == every_position(board) == 3016


@pytest.mark.parametrize("hole", [builtin("triangle").name_of(hole) for hole in range(15)])
def test_a_count_from_any_hole_is_up_to_the_start_s_own_symmetries(tmp_path: Path, hole: str) -> None:
    """From a2 (no symmetry keeps it) the count merged positions with images the start cannot
    tell apart and printed 1,556, where 2,377 are reachable: now every hole's figures are up to the
    symmetries that keep it, level by level as a naive walk finds them, and stand for every
    reachable position."""
    board = with_empty_hole(builtin("triangle"), hole)
    levels = list(count_levels(board, keep=tmp_path, block=5))
    from twitterbot.jobs.pegs.solve import Symmetries

    assert [level.positions for level in levels] == walk(board, Symmetries(board).canonical)
    assert images_of_kept(board, tmp_path, len(levels)) == every_position(board)
    if not board.symmetries[1:]:  # none but the identity keeps the start: every position counted
        assert sum(level.positions for level in levels) == every_position(board)
    if hole == "a2":
        assert sum(level.positions for level in levels) == 2377


def test_a_checkpoint_oriented_by_symmetries_that_do_not_keep_the_start_is_not_resumed(tmp_path: Path) -> None:
    """A checkpoint written before the count kept to the start's symmetries holds positions merged
    by all the board's: resumed, it would give wrong figures, so the count starts afresh; one whose
    start every symmetry keeps (the English board's) is still resumed."""
    for name, resumed in (("pyramid", False), ("english", True)):
        checkpoint = tmp_path / f"{name}.npz"
        partial = count_levels(builtin(name), checkpoint=checkpoint)
        for _ in range(4):
            next(partial)
        partial.close()
        with np.load(checkpoint) as saved:
            older = {key: saved[key] for key in saved.files if key != "symmetries"}
        with open(checkpoint, "wb") as handle:
            np.savez(handle, **older)
        assert (load_checkpoint(checkpoint, builtin(name)) is not None) is resumed, name


def test_the_count_says_which_positions_its_figures_count(home: BotHome) -> None:
    counted = home.run("pegs", "count", "triangle", "--empty", "a2", "--no-post")
    assert counted.returncode == 0, counted.stderr
    assert counted.stdout.startswith(
        "triangle: positions are counted one by one (none of the board's 6 symmetries keeps the start)\n"
    )
    assert "triangle: 2,377 positions (every one counted) reached in 13 jumps; 14,880 solutions" in counted.stdout
    corner = home.run("pegs", "count", "triangle", "--no-post").stdout
    assert "positions are counted up to the 2 of the board's 6 symmetries that keep the start" in corner
    assert "1,544 positions (up to the start's 2 symmetries) reached in 13 jumps; 29,760 solutions" in corner


def test_a_stopped_count_resumes_after_its_last_level(tmp_path: Path) -> None:
    board = builtin("pyramid")
    whole = list(count_levels(board))
    checkpoint = tmp_path / "count.npz"
    partial = count_levels(board, checkpoint=checkpoint)
    for _ in range(6):
        next(partial)
    partial.close()  # stopped after level 5
    history, _ = load_checkpoint(checkpoint, board)
    assert len(history) == 6
    resumed = list(count_levels(board, checkpoint=checkpoint))
    assert [(level.jumps, level.positions, level.sequences, level.solutions) for level in resumed] == [
        (level.jumps, level.positions, level.sequences, level.solutions) for level in whole
    ]
    assert load_checkpoint(checkpoint, builtin("cross")) is None  # another board's file is ignored


# -- the job ---------------------------------------------------------------------------------------


def test_the_job_posts_its_progress_and_result(tmp_path: Path, poster, emulator) -> None:
    with HistoryStore(tmp_path / "history.sqlite3") as store:
        reporter = make_reporter(
            "pegs",
            posters=by_network(poster),
            store=store,
            every=3600,
            milestone_every=3600,
            first_after=0,
            max_posts_per_day=10,
            registry=REGISTRY,
        )
        out = io.StringIO()
        run_count(builtin("plus"), reporter, CountSetup(checkpoint=tmp_path / "plus.npz"), out=out)
    assert emulator.texts[0].startswith("pegs: after 0 jumps: 1 distinct position (1 so far)")  # no "1 positions"
    assert (
        "31 positions (up to the start's 8 symmetries) reached in 8 jumps; 16 solutions; 304 complete games"
        in emulator.texts[-1]
    )
    assert emulator.posts[-1].reply_to == emulator.posts[0].id
    assert not (tmp_path / "plus.npz").exists()  # finished: the checkpoint is gone
    assert "    8          2  32  32\n" in out.getvalue()


def test_solve_writes_the_result_file_and_posts_the_jumps(tmp_path: Path) -> None:
    printed = io.StringIO()
    with HistoryStore(":memory:") as store:
        reporter = make_reporter(
            "pegs",
            posters=by_network(DryRunPoster(printed)),
            store=store,
            every=3600,
            milestone_every=3600,
            first_after=0,
            max_posts_per_day=10,
            registry=REGISTRY,
        )
        assert run_solve(builtin("plus"), reporter, output=tmp_path / "result.txt", out=io.StringIO())
    assert (tmp_path / "result.txt").read_text().startswith("Starting Board\n")
    assert "solved in 8 jumps" in printed.getvalue()


def test_a_quick_solve_posts_only_its_result(tmp_path: Path, poster, emulator) -> None:
    started = datetime.now(timezone.utc)
    with HistoryStore(tmp_path / "history.sqlite3") as store:
        reporter = make_reporter(
            "pegs solve german",
            posters=by_network(poster),
            store=store,
            every=3600,
            milestone_every=3600,
            first_after=300,
            max_posts_per_day=10,
            clock=lambda: started,  # the search is over long before PROGRESS_FIRST_AFTER
            registry=REGISTRY,
        )
        with reporter:
            assert run_solve(builtin("german"), reporter, out=io.StringIO())
    assert len(emulator.texts) == 1 and emulator.texts[0].startswith("pegs solve german finished in 0s: solved in 43")


def test_pegs_from_the_command_line(home: BotHome) -> None:
    solved = home.run_process("pegs", "solve", "cross", "--no-post")
    assert solved.returncode == 0 and "Start Solution" in solved.stdout
    impossible = home.run_process("pegs", "solve", "french", "--no-post")
    assert impossible.returncode == 0 and "impossible" in impossible.stdout
    listed = home.run_process("pegs", "boards")
    assert all(name in listed.stdout for name in BOARDS)
    (home.path / "bad.txt").write_text("XXO\nX\n")
    bad = home.run_process("pegs", "solve", "--file", str(home.path / "bad.txt"))
    assert bad.returncode == 65 and "line 2 is 1 characters wide" in bad.stderr
    posted = home.run_process("pegs", "count", "plus")
    assert posted.returncode == 0, posted.stderr
    assert home.emulator.texts[-1].startswith("pegs count plus finished in")


# -- what the job says -----------------------------------------------------------------------------


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_counting_shows_a_live_status_line_on_a_terminal_only(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    screen = Terminal()
    run_count(
        builtin("pyramid"),
        NullReporter(),
        CountSetup(checkpoint=None),
        out=screen,
        status=StatusLine(screen, min_interval=0),
    )
    drawn = screen.getvalue().split("\r\x1b[K")
    assert "counting level 3 of at most 15: 0% of 45 positions expanded; 8 positions so far" in drawn, drawn
    assert "    2         45  134  0\n" in screen.getvalue()  # the level lines still come, each on its own line
    plain = io.StringIO()
    run_count(builtin("pyramid"), NullReporter(), CountSetup(checkpoint=None), out=plain, status=status_line_for(plain))
    assert "\r" not in plain.getvalue() and "counting level" not in plain.getvalue()


def test_counting_progress_inside_a_level_gives_the_time_left() -> None:
    seen: List[Counting] = []
    ticks = iter(range(10**6))
    list(count_levels(builtin("plus"), block=2, progress=seen.append, clock=lambda: float(next(ticks))))
    middle = [event for event in seen if 0 < event.done < event.total]
    assert middle and all(event.seconds_left is not None and event.seconds_left > 0 for event in middle)
    assert all(event.seconds_left is None for event in seen if event.done == 0)


def test_solving_shows_a_status_line_and_says_1_position_not_1_positions(tmp_path: Path) -> None:
    screen = Terminal()
    messages = []

    class Recorder(NullReporter):
        def update(self, message: str, *, milestone: bool = False, **fields: object):
            messages.append(message)
            return super().update(message)

    run_solve(builtin("german"), Recorder(), out=io.StringIO(), status=StatusLine(screen, min_interval=0))
    assert messages[0] == "searched 1 position (" + messages[0].split("(", 1)[1]
    assert "best so far 43 pegs left" in messages[0]
    assert "searched 1 position (" in screen.getvalue() and screen.getvalue().endswith("\r\x1b[K")


def test_output_on_an_impossible_board_holds_the_proof(tmp_path: Path) -> None:
    result = tmp_path / "french.txt"
    assert not run_solve(builtin("french"), NullReporter(), output=result, out=io.StringIO())
    written = result.read_text()
    assert written.startswith("Starting Board\n") and "No Solution" in written and "diagonal" in written


def test_a_board_name_and_a_board_file_together_are_refused(home: BotHome) -> None:
    (home.path / "mine.txt").write_text("XXO\n")
    both = home.run("pegs", "solve", "english", "--file", str(home.path / "mine.txt"), "--no-post")
    assert both.returncode == 64
    assert "'english'" in both.stderr and "mine.txt" in both.stderr and "give one of them" in both.stderr
    assert both.stdout == ""

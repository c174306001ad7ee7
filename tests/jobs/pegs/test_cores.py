"""The count on every core (`pegs count --workers N`, cores.py) gives the one-thread count's levels,
figures, level files and checkpoints, with the kernel and with numpy, however the buffers fill."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import numpy as np
import pytest
from conftest import BotHome

from twitterbot.jobs.pegs import cores
from twitterbot.jobs.pegs.board import builtin, load_board, parse_board, with_empty_hole
from twitterbot.jobs.pegs.count import count_levels, finishable_counts, load_checkpoint
from twitterbot.jobs.pegs.kernel import Kernel
from twitterbot.jobs.pegs.shares import owners

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "pegs"
SMALL_CENTRAL = "kind: diagonal\nfinish: centre\n XXX \nXXXXX\nXXOXX\nXXXXX\n XXX \n"


def _figures(levels) -> list:
    return [(level.jumps, level.positions, level.sequences, level.solutions, level.games) for level in levels]


@pytest.mark.parametrize("compiled", [True, False], ids=["kernel", "numpy"])
@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("name", ["plus", "triangle6", "debian-45", "debian-325"])
def test_every_core_counts_what_one_counts(pegs_kernel: Kernel, compiled: bool, workers: int, name: str) -> None:
    board = builtin(name) if not name.startswith("debian") else load_board(FIXTURES / f"{name}.txt")
    kernel: Optional[Kernel] = pegs_kernel if compiled else None
    alone = list(count_levels(board, clock=lambda: 0.0))
    together = list(count_levels(board, clock=lambda: 0.0, kernel=kernel, workers=workers, block=500))
    assert _figures(together) == _figures(alone)
    assert len(alone) > 5 and sum(level.games for level in alone) > 0


@pytest.mark.parametrize("compiled", [True, False], ids=["kernel", "numpy"])
def test_a_start_no_symmetry_keeps_counts_every_position_on_every_path(pegs_kernel: Kernel, compiled: bool) -> None:
    """The triangle from a2: 2,377 positions, each counted, whatever makes the levels."""
    board = with_empty_hole(builtin("triangle"), "a2")
    kernel: Optional[Kernel] = pegs_kernel if compiled else None
    for workers in (1, 3):
        levels = list(count_levels(board, clock=lambda: 0.0, kernel=kernel, workers=workers))
        assert sum(level.positions for level in levels) == 2377 and levels[-1].solutions == 14880


def test_buffers_that_fill_after_one_parent_change_nothing(pegs_kernel: Kernel, monkeypatch) -> None:
    """Rounds of one or two parents each: every hand-over between the threads is exercised."""
    monkeypatch.setattr(cores, "BUFFER", 1)  # the room is then one parent's worth of children
    board = builtin("pyramid")
    assert _figures(count_levels(board, kernel=pegs_kernel, workers=4, clock=lambda: 0.0)) == _figures(
        count_levels(board, clock=lambda: 0.0)
    )


def test_each_thread_keeps_its_own_share_sorted(pegs_kernel: Kernel) -> None:
    board = builtin("pyramid")
    level = [cores.share_level(level, 3, pegs_kernel) for level in [_start(board)]][0]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(3) as pool:
        for _ in range(6):
            level, _stuck = cores.next_shares(board, level, pool, kernel=pegs_kernel, expected=16, block=50)
            for share, (positions, counts, checks) in enumerate(level):
                assert np.all(owners(positions, 3) == share)
                assert np.all(positions[1:] > positions[:-1])
                assert len(counts) == len(checks) == len(positions)


def _start(board):
    from twitterbot.jobs.pegs.orient import Orienter

    start = Orienter(board).canonical(np.array([board.start], dtype=np.uint64))
    return start, np.ones(1, np.uint64), np.ones(1, np.uint32)


@pytest.mark.parametrize("compiled", [True, False], ids=["kernel", "numpy"])
def test_level_files_of_every_core_give_the_same_finishable_counts(
    pegs_kernel: Kernel, compiled: bool, tmp_path: Path
) -> None:
    board = parse_board(SMALL_CENTRAL, name="small")
    kernel = pegs_kernel if compiled else None
    (tmp_path / "one").mkdir()
    (tmp_path / "three").mkdir()
    levels = list(count_levels(board, keep=tmp_path / "one"))
    list(count_levels(board, keep=tmp_path / "three", kernel=kernel, workers=3))
    alone = finishable_counts(board, tmp_path / "one", len(levels))
    assert alone is not None and sum(alone) > len(levels)
    assert finishable_counts(board, tmp_path / "three", len(levels), kernel=kernel) == alone
    for path in (tmp_path / "one").iterdir():  # the same positions, in share order
        assert np.array_equal(np.sort(np.load(tmp_path / "three" / path.name)), np.load(path))


@pytest.mark.parametrize(("first", "then"), [(3, 1), (1, 2), (2, 3)])
def test_a_checkpoint_resumes_on_any_number_of_cores(
    pegs_kernel: Kernel, first: int, then: int, tmp_path: Path
) -> None:
    board = builtin("pyramid")
    whole = _figures(count_levels(board, clock=lambda: 0.0))
    checkpoint = tmp_path / "count.npz"
    partial = count_levels(board, checkpoint=checkpoint, kernel=pegs_kernel, workers=first)
    for _ in range(7):
        next(partial)
    partial.close()
    history, level = load_checkpoint(checkpoint, board)
    assert len(history) == 7 and len(level[0]) == history[-1].positions == len(np.unique(level[0]))
    resumed = count_levels(board, checkpoint=checkpoint, clock=lambda: 0.0, kernel=pegs_kernel, workers=then)
    assert _figures(resumed) == whole


def test_the_command_counts_on_every_core_and_prints_the_same(home: BotHome, tmp_path: Path) -> None:
    board = tmp_path / "small.txt"
    board.write_text(SMALL_CENTRAL, encoding="utf-8")
    one = home.run("pegs", "count", "--file", str(board), "--no-post", "--workers", "1")
    three = home.run("pegs", "count", "--file", str(board), "--no-post", "--workers", "3")
    default = home.run("pegs", "count", "--file", str(board), "--no-post")
    assert one.returncode == three.returncode == default.returncode == 0, one.stderr + three.stderr

    def figures(stdout: str) -> List[str]:
        return [line.split(" (")[0] for line in stdout.splitlines()]

    assert figures(three.stdout) == figures(one.stdout) == figures(default.stdout)
    assert "positions from which the goal can still be reached" in one.stdout


@pytest.mark.parametrize(
    ("words", "says"),
    [
        (["pegs", "solve", "--workers", "2"], "--workers is for pegs count"),
        (["pegs", "boards", "--workers", "2"], "--workers is for pegs count"),
        (["pegs", "count", "--workers", "2", "--cluster", "tcp://127.0.0.1:1"], "give one of them"),
        (["pegs", "count", "--workers", "0"], "--workers"),
    ],
)
def test_workers_where_they_mean_nothing_are_refused(home: BotHome, words: List[str], says: str) -> None:
    result = home.run(*words, "--no-post")
    assert result.returncode == 64, result.stderr
    assert says in result.stderr


@pytest.mark.parametrize("compiled", [True, False], ids=["kernel", "numpy"])
@pytest.mark.parametrize("shares", [1, 2, 3])
def test_owners_expanding_in_rounds_make_the_levels_of_one(pegs_kernel: Kernel, compiled: bool, shares: int) -> None:
    """What each Dask worker does (spread.py), in one process: every owner expands slices of its
    share, keeps its own children and hands the others over; sorted, the shares are the level."""
    from twitterbot.jobs.pegs.levels import exact_count
    from twitterbot.jobs.pegs.shares import Accumulator, cut

    board = load_board(FIXTURES / "debian-45.txt")
    kernel = pegs_kernel if compiled else None
    alone = list(count_levels(board, clock=lambda: 0.0))
    level = [tuple(column.copy() for column in piece) for piece in cut(_start(board), shares)]
    for expected in alone:
        assert sum(len(share[0]) for share in level) == expected.positions
        owners_ = [Accumulator(board, kernel, 64) for _ in range(shares)]  # small: the tables grow
        stuck = [0, 0]
        for low in range(0, max(len(share[0]) for share in level), 37):
            for share, owner in enumerate(owners_):
                pieces, ended = owner.expand(tuple(column[low : low + 37] for column in level[share]), shares, share)
                assert pieces[share] == []
                for other, sent in enumerate(pieces):
                    for piece in sent:
                        owners_[other].add(piece)
                stuck = [stuck[0] + ended[0], stuck[1] + ended[1]]
        assert exact_count(stuck[0] % (1 << 64), stuck[1] % 4_294_967_291) == expected.games
        level = [owner.take() for owner in owners_]
        for share, (positions, _counts, _checks) in enumerate(level):
            assert np.all(owners(positions, shares) == share) and np.all(positions[1:] > positions[:-1])
    assert sum(len(share[0]) for share in level) == 0

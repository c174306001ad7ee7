"""The peg counter's compiled kernel counts exactly what numpy counts: the same positions, counts
and residues level by level on every jump kind, the same complete games and A112738 figures,
checkpoints either path resumes, and a fallback to numpy that says why."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np
import pytest
from conftest import BotHome

from twitterbot.jobs.pegs import kernel as kernel_module
from twitterbot.jobs.pegs.board import Board, builtin, load_board, parse_board
from twitterbot.jobs.pegs.count import count_levels, finishable_counts, load_checkpoint
from twitterbot.jobs.pegs.kernel import ENV, Kernel, load
from twitterbot.jobs.pegs.levels import exact_count, next_level
from twitterbot.jobs.pegs.orient import Orienter

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "pegs"
COMPILER = shutil.which("cc") is not None
# A central game small enough to count in a moment, and winnable: 5x5 without its corners, full
# but the centre, with diagonal jumps too (195,266 positions, 375,155,382,624 solutions).
SMALL_CENTRAL = "kind: diagonal\nfinish: centre\n XXX \nXXXXX\nXXOXX\nXXXXX\n XXX \n"


def boards() -> Dict[str, Board]:
    """Every jump kind and goal: orthogonal (a centre finish, a pattern), diagonal (two of
    Debian's, one finishing on a hole), triangular (12 symmetries)."""
    return {
        "plus": builtin("plus"),
        "pyramid": builtin("pyramid"),
        "triangle": builtin("triangle"),
        "triangle6": builtin("triangle6"),
        "diagonal triangle (debian 16)": load_board(FIXTURES / "debian-16.txt"),
        "diagonal diamond (debian 45)": load_board(FIXTURES / "debian-45.txt"),
        "diagonal, finish d1 (debian 325)": load_board(FIXTURES / "debian-325.txt"),
        "diagonal central": parse_board(SMALL_CENTRAL, name="small"),
    }


@pytest.fixture
def kernel(pegs_kernel: Kernel) -> Kernel:
    return pegs_kernel


def _walk(board: Board, kernel: Kernel, block: int, grow_from: int) -> List[Tuple[np.ndarray, ...]]:
    """Both paths from each numpy level to the next: they must agree on every array and on the
    sequences that end there. The kernel takes `block` parents a call, and its table starts
    sized for `grow_from` positions, to make it grow."""
    orient = Orienter(board)
    level = (orient.canonical(np.array([board.start], dtype=np.uint64)), np.ones(1, np.uint64), np.ones(1, np.uint32))
    levels = []
    while len(level[0]):
        expected, games = next_level(board, orient, level, 50_000)
        compiled, stuck = kernel.next_level(board, level, block, grow_from, lambda done, total: None)
        for ours, theirs in zip(compiled, expected):
            assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs)
        assert exact_count(*stuck) == games
        levels.append(expected)
        level = expected
    return levels


@pytest.mark.parametrize("name", list(boards()))
def test_both_paths_make_the_same_levels(kernel: Kernel, name: str) -> None:
    board = boards()[name]
    assert len(_walk(board, kernel, block=50_000, grow_from=1 << 12)) > 4


def test_a_table_that_starts_too_small_grows_to_the_same_levels(kernel: Kernel) -> None:
    levels = _walk(builtin("pyramid"), kernel, block=3, grow_from=1)  # small blocks, many growths
    assert max(len(level[0]) for level in levels) == 9673  # up to the start's 2 symmetries


@pytest.mark.parametrize("name", ["plus", "triangle6", "diagonal diamond (debian 45)"])
def test_count_levels_gives_the_same_levels_and_files(kernel: Kernel, name: str, tmp_path: Path) -> None:
    board = boards()[name]
    (tmp_path / "numpy").mkdir()
    (tmp_path / "c").mkdir()
    plain = list(count_levels(board, keep=tmp_path / "numpy", clock=lambda: 0.0))
    compiled = list(count_levels(board, keep=tmp_path / "c", clock=lambda: 0.0, kernel=kernel))
    assert compiled == plain
    for path in (tmp_path / "numpy").iterdir():
        assert (tmp_path / "c" / path.name).read_bytes() == path.read_bytes()


def test_the_english_board_gives_the_same_first_levels(kernel: Kernel) -> None:
    sizes = []
    for level in count_levels(builtin("english"), kernel=kernel):
        sizes.append(level.positions)
        if level.jumps == 10:
            break
    assert sizes == [1, 1, 2, 8, 39, 171, 719, 2757, 9751, 31312, 89927]  # OEIS A112737


def test_finishable_counts_are_the_same(kernel: Kernel, tmp_path: Path) -> None:
    board = parse_board(SMALL_CENTRAL, name="small")
    levels = list(count_levels(board, keep=tmp_path))
    plain = finishable_counts(board, tmp_path, len(levels))
    assert plain is not None and sum(plain) > len(levels)
    assert finishable_counts(board, tmp_path, len(levels), kernel=kernel) == plain


@pytest.mark.parametrize("first_with_kernel", [True, False])
def test_either_path_resumes_the_others_checkpoint(kernel: Kernel, first_with_kernel: bool, tmp_path: Path) -> None:
    board = builtin("pyramid")
    whole = list(count_levels(board, clock=lambda: 0.0))
    checkpoint = tmp_path / "count.npz"
    partial = count_levels(board, checkpoint=checkpoint, kernel=kernel if first_with_kernel else None)
    for _ in range(7):
        next(partial)
    partial.close()
    assert len(load_checkpoint(checkpoint, board)[0]) == 7
    resumed = count_levels(
        board, checkpoint=checkpoint, clock=lambda: 0.0, kernel=None if first_with_kernel else kernel
    )
    assert [(level.positions, level.sequences, level.solutions, level.games) for level in resumed] == [
        (level.positions, level.sequences, level.solutions, level.games) for level in whole
    ]


def test_progress_is_heard_after_each_block(kernel: Kernel) -> None:
    seen = []
    list(count_levels(builtin("plus"), block=2, progress=seen.append, kernel=kernel))
    assert [(event.jumps, event.done, event.total) for event in seen[:4]] == [
        (1, 0, 1),
        (2, 0, 1),
        (3, 0, 3),
        (3, 2, 3),
    ]


def _empty_path(tmp_path: Path) -> Dict[str, str]:
    folder = tmp_path / "bin"
    folder.mkdir()
    return {"PATH": str(folder)}


def test_without_a_compiler_the_count_runs_on_numpy(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger=kernel_module.__name__):
        assert load(tmp_path / "cache", environ=_empty_path(tmp_path)) is None
    lines = [record for record in caplog.records if record.name == kernel_module.__name__]
    assert len(lines) == 1 and lines[0].levelno == logging.WARNING  # once, and loud: it costs
    assert "sudo apt install gcc" in lines[0].getMessage()
    assert "pegs: counting with numpy and searching in Python, no C compiler (cc) on PATH" in lines[0].getMessage()
    assert not (tmp_path / "cache").exists()


def test_the_environment_can_turn_the_kernel_off(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger=kernel_module.__name__):
        assert load(tmp_path, environ={ENV: "numpy", "PATH": os.environ.get("PATH", "")}) is None
        assert load(tmp_path, environ={ENV: "fast", "PATH": os.environ.get("PATH", "")}) is None
    assert f"as {ENV}=numpy asks" in caplog.text
    assert f"{ENV}='fast' is not one of auto, c, numpy" in caplog.text
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not COMPILER, reason="no C compiler (cc) on PATH")
def test_the_command_builds_the_kernel_in_the_state_folder(home: BotHome) -> None:
    counted = home.run("pegs", "count", "plus", "--no-post", env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    assert counted.returncode == 0, counted.stderr
    assert "plus: 31 positions (up to the start's 8 symmetries) reached in 8 jumps; 16 solutions" in counted.stdout
    built = [path.name for path in (home.path / "state" / "pegs-cache").iterdir()]
    assert len(built) == 1 and built[0].startswith("kernel-") and built[0].endswith(".so")
    assert list((home.path / "elsewhere").iterdir()) == []  # nothing under the cwd


def test_a_resumed_count_sizes_its_table_from_the_saved_levels(kernel: Kernel, tmp_path: Path) -> None:
    """The table is sized by the last growth seen, also after a resume: not by the first
    levels' guess (x4), which on a big level would reserve several times the memory needed."""
    board = builtin("pyramid")
    checkpoint = tmp_path / "count.npz"
    partial = count_levels(board, checkpoint=checkpoint, kernel=kernel)
    for _ in range(8):
        next(partial)
    partial.close()
    history, level = load_checkpoint(checkpoint, board)
    asked = []

    class Spy:
        def next_level(self, board, level, block, expected, after_block):  # type: ignore[no-untyped-def]
            asked.append((len(level[0]), expected))
            return kernel.next_level(board, level, block, expected, after_block)

    list(count_levels(board, checkpoint=checkpoint, kernel=Spy()))  # type: ignore[arg-type]
    size, expected = asked[0]
    assert size == history[-1].positions == 8150
    assert expected <= 1.1 * size * history[-1].positions / history[-2].positions + 16


def test_both_paths_cut_a_level_alike(kernel: Kernel) -> None:
    """The shares of every core and every worker: the kernel's cut gives numpy's arrays, each
    piece in its share (shares.owners) and in the order it had."""
    from twitterbot.jobs.pegs.shares import cut, owners

    board = builtin("english")
    orient = Orienter(board)
    level = (orient.canonical(np.array([board.start], dtype=np.uint64)), np.ones(1, np.uint64), np.ones(1, np.uint32))
    for _ in range(9):
        level, _games = next_level(board, orient, level, 50_000)
    numpy_pieces, kernel_pieces = cut(level, 5), kernel.cut(level, 5)
    for j, (ours, theirs) in enumerate(zip(kernel_pieces, numpy_pieces)):
        assert all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(ours, theirs))
        assert np.all(owners(ours[0], 5) == j) and np.all(np.diff(ours[0].astype(np.int64)) > 0)
    assert sum(len(piece[0]) for piece in kernel_pieces) == len(level[0])
    assert min(len(piece[0]) for piece in kernel_pieces) > len(level[0]) / 5 * 0.9  # spread evenly

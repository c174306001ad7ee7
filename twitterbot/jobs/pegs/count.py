"""Count a peg solitaire board exactly, level by level: how many distinct positions are reachable
after n jumps, up to the board's `symmetries` (as a board is built, those that keep its start as
well as its shape and goal: a position and its images under them count once, and from a start no
symmetry keeps every position counts), and how many jump sequences win.

Breadth-first: each level is made from the one before (`levels.next_level`, or the compiled
kernel), on one core or on every core (`cores.py`). A position's number of jump sequences adds up
along jumps; at the end, the winning position is its own mirror image, so its number is the
number of solutions. For the English board this reproduces OEIS A112737 (23,475,688 positions)
and 40,861,647,040,079,968 solutions; counts beyond 2^64 (its 577,116,156,815,309,849,672
complete games) come out exact too (`levels.exact_count`).

A level is held as a list of shares (one per core; one on one core), each sorted. Checkpoints
and level files hold the shares one after the other, written straight from them: never a
second copy of a level in memory.
"""

from __future__ import annotations

import dataclasses
import os
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, Dict, Iterator, List, Optional, Tuple

import numpy as np

from .board import Board, check_countable, searched
from .cores import next_shares, share_level
from .levels import BLOCK, PRIME, Counting, Level, Part, exact_count, next_level
from .orient import Orienter

if TYPE_CHECKING:  # pragma: no cover
    from .kernel import Kernel

__all__ = ["count_levels", "finishable_counts", "load_checkpoint"]


def count_levels(
    board: Board,
    *,
    checkpoint: Optional[Path] = None,
    block: int = BLOCK,
    clock: Callable[[], float] = time.perf_counter,
    progress: Optional[Callable[[Counting], None]] = None,
    keep: Optional[Path] = None,
    kernel: Optional[Kernel] = None,
    workers: int = 1,
) -> Iterator[Level]:
    """Yield each level as it is counted, from the start (0 jumps) to the last reachable one.
    With `checkpoint`, each level is saved there (atomically) and a later call resumes after the
    last saved level instead of starting again. `progress` hears how far the level being counted
    is, before each block of positions (a big level takes minutes). With `keep` (a folder), each
    level's positions are saved there as `level-N.npy` for `finishable_counts`. With `kernel`
    (kernel.load), each level is made by the compiled kernel: the same levels, faster. With
    `workers` above 1, on that many threads, each owning a share of every level (cores.py): the
    same levels again.

    A level is yielded once the next one is made, since the games that end on it are known
    only then."""
    check_countable(board, "pegs count")
    orient = Orienter(board)
    start = orient.canonical(np.array([board.start], dtype=np.uint64))
    whole: Part = (start, np.ones(1, dtype=np.uint64), np.ones(1, dtype=np.uint32))
    history: List[Level] = []
    resumed = load_checkpoint(checkpoint, board) if checkpoint else None
    if resumed:
        history, whole = resumed
        yield from history[:-1]  # the levels counted before the stop, as they were
    else:
        history.append(_level(board, 0, [whole], 0.0))
        _keep(keep, 0, [whole])
    level = share_level(whole, workers, kernel)
    del whole
    began = clock()
    # The next level's size over this one's, as last seen: sizes the kernel's tables.
    growth = history[-1].positions / history[-2].positions if len(history) > 1 else 4.0
    with ThreadPoolExecutor(workers, thread_name_prefix="pegs-count") as pool:
        while True:
            after_block = _progress_of(progress, len(history), clock) if progress else lambda done, total: None
            size = _size(level)
            expected = int(size * growth * 1.1) + 16
            if workers > 1:
                level, stuck = next_shares(
                    board, level, pool, kernel=kernel, expected=expected, block=block, after_block=after_block
                )
            elif kernel is None:
                made, games = next_level(board, orient, level[0], block, after_block)
                level, stuck = [made], (games % (1 << 64), games % PRIME)
            else:
                made, stuck = kernel.next_level(board, level[0], block, expected, after_block)
                level = [made]
            growth = max(_size(level) / max(size, 1), 0.1)
            history[-1] = dataclasses.replace(history[-1], games=exact_count(*stuck))
            yield history[-1]
            if not _size(level):
                return
            history.append(_level(board, len(history), level, clock() - began))
            _keep(keep, len(history) - 1, level)
            if checkpoint:
                _save(checkpoint, board, history, level)


def _size(level: List[Part]) -> int:
    return sum(len(share[0]) for share in level)


def _keep(folder: Optional[Path], jumps: int, level: List[Part]) -> None:
    if folder is not None:
        with open(folder / f"level-{jumps}.npy", "wb") as handle:
            _write_npy(handle, [share[0] for share in level])


def _write_npy(handle: BinaryIO, pieces: List[np.ndarray]) -> None:
    """One .npy array made of `pieces` (one dtype), one after the other, without joining them."""
    header = {
        "descr": np.lib.format.dtype_to_descr(pieces[0].dtype),
        "fortran_order": False,
        "shape": (sum(len(piece) for piece in pieces),),
    }
    np.lib.format.write_array_header_2_0(handle, header)
    for piece in pieces:
        # As bytes: zipfile before Python 3.12 counts a write by len(), which for a view of
        # uint64 is the number of values, and its member then fails its CRC check when read.
        handle.write(np.ascontiguousarray(piece).data.cast("B"))


def finishable_counts(
    board: Board, folder: Path, levels: int, *, kernel: Optional[Kernel] = None
) -> Optional[List[int]]:
    """Per level, the positions (up to symmetry) from which the goal can still be reached: OEIS
    A112738 for the English board. None unless the goal is one peg and the start is its
    complement (a central game), or if a level's file is missing.

    Played backwards, a jump is a jump of the holes: the positions that can still reach the goal
    are the complements of the positions reachable from the goal's complement, which is the
    start. So level k's answer is its positions whose complement is on level (2P - n - k), P
    the start's pegs and n the holes: no search beyond the count itself. With `kernel`, the
    orienting and matching are compiled: the same answer."""
    if board.goal is None or board.full ^ board.goal != board.start:
        return None
    orient = Orienter(board)
    pegs = board.pegs(board.start)
    found = []
    try:
        for jumps in range(levels):
            mirror = 2 * pegs - board.size - jumps
            if not 0 <= mirror < levels:
                found.append(0)
                continue
            here = np.load(folder / f"level-{jumps}.npy")
            there = np.load(folder / f"level-{mirror}.npy") ^ np.uint64(board.full)
            if kernel is None:
                found.append(int(np.isin(here, orient.canonical(there), assume_unique=True).sum()))
            else:  # matched as two sorted lists (a level file holds its shares one after the other)
                if not np.all(here[1:] > here[:-1]):
                    kernel.sort(board, here)
                found.append(kernel.common(here, kernel.canonical(board, there)))
    except OSError:
        return None
    return found


def _progress_of(
    progress: Callable[[Counting], None], jumps: int, clock: Callable[[], float]
) -> Callable[[int, int], None]:
    began = clock()

    def after_block(done: int, total: int) -> None:
        progress(Counting(jumps, done, total, clock() - began))

    return after_block


def _level(board: Board, jumps: int, level: List[Part], seconds: float) -> Level:
    """A level's figures, added up over its shares."""
    counts64 = countsp = won64 = wonp = 0
    over = board.pegs(board.start) - jumps == 1  # one peg left: the game is over
    for positions, counts, checks in level:
        counts64 += int(counts.sum(dtype=np.uint64))
        countsp += int(checks.sum(dtype=np.uint64) % PRIME)
        if over and not (board.target is None and board.ends is None):
            won = (positions & np.uint64(board.goal if board.goal is not None else board.ends)) != 0
            won64 += int(counts[won].sum(dtype=np.uint64))
            wonp += int(checks[won].sum(dtype=np.uint64) % PRIME)
    sequences = exact_count(counts64 % (1 << 64), countsp % PRIME)
    solutions = None
    if over:
        solutions = (
            sequences if board.target is None and board.ends is None else exact_count(won64 % (1 << 64), wonp % PRIME)
        )
    return Level(jumps, _size(level), sequences, seconds, solutions)


def _save(path: Path, board: Board, history: List[Level], level: List[Part]) -> None:
    """Write the newest level, and the sizes of all before it, atomically (temp file + rename): an
    .npz as np.savez writes it, each column written share by share."""
    temporary = path.with_name(path.name + ".tmp")
    columns: Dict[str, List[np.ndarray]] = {
        "start": [np.array(board.start, dtype=np.uint64)],
        "symmetries": [np.array(len(board.symmetries), dtype=np.int64)],
        "sizes": [np.array([level_.positions for level_ in history], dtype=np.int64)],
        "sequences": [np.array([str(level_.sequences) for level_ in history])],
        "solutions": [np.array([str(level_.solutions) for level_ in history])],
        "games": [np.array([str(level_.games) for level_ in history])],
        "positions": [share[0] for share in level],
        "counts": [share[1] for share in level],
        "checks": [share[2] for share in level],
    }
    with open(temporary, "wb") as handle:
        with zipfile.ZipFile(handle, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
            for name, pieces in columns.items():
                with archive.open(name + ".npy", "w", force_zip64=True) as member:
                    if pieces[0].ndim == 0:
                        np.lib.format.write_array(member, pieces[0])
                    else:
                        _write_npy(member, pieces)  # type: ignore[arg-type]
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def load_checkpoint(path: Path, board: Board) -> Optional[Tuple[List[Level], Part]]:
    """The levels counted so far and the newest level's arrays, or None if there is no checkpoint
    for this board (a missing, foreign or damaged file means starting afresh, and so does one whose
    positions were oriented by other symmetries)."""
    try:
        with np.load(path) as saved:
            if int(saved["start"]) != board.start or _symmetries_of(saved, board) != len(board.symmetries):
                return None
            history = [
                Level(
                    jumps, int(size), int(sequences), 0.0, None if solutions == "None" else int(solutions), int(games)
                )
                for jumps, (size, sequences, solutions, games) in enumerate(
                    zip(saved["sizes"], saved["sequences"], saved["solutions"], saved["games"])
                )
            ]
            return history, (saved["positions"], saved["counts"], saved["checks"])
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile):
        return None


def _symmetries_of(saved: Any, board: Board) -> int:
    """How many symmetries a checkpoint's positions were oriented by: as it says, or for one
    written before it said so, every one of the board's goal, whatever it did to the start."""
    if "symmetries" in saved.files:
        return int(saved["symmetries"])
    return len(searched(board).symmetries)

"""The level-by-level count on a Dask cluster: each worker holds a share of a level, chosen by a
hash of the position, so a board too big for one machine's memory is counted by several.

One level becomes the next in two short steps. Each worker expands slices of the positions it
holds (at most `SLICE` parents a task) and cuts the children by their owner's hash; then each
owner merges the children sent to it, adding up the counts of equal positions. Nothing but the
figures of each level (sizes and residues) comes back to the command's machine, and the levels
are exactly those of `count.count_levels`::

    for level in count_on_cluster(board, cluster):
        print(level.jumps, level.positions, level.sequences)
"""

from __future__ import annotations

import dataclasses
import functools
import json
import operator
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import numpy as np

from ...files import write_atomically
from .board import Board, check_countable
from .count import BLOCK, PRIME, Counting, Level, _exact, _merge, _next_level
from .orient import Orienter

__all__ = ["SLICE", "count_on_cluster", "owners"]

SLICE = 200_000  # parents expanded by one task: about a second on a Pi, a fifth of that on a PC
# Positions kept on the workers (8 bytes each) to count the finishable positions at the end;
# beyond this the count goes on without them (french: far beyond).
KEEP_AT_MOST = 60_000_000
_MIX = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: neighbouring positions land far apart

Part = Tuple[np.ndarray, np.ndarray, np.ndarray]  # positions, counts mod 2^64, counts mod PRIME
_ORIENTERS: Dict[Tuple[int, int, str], Orienter] = {}  # one per board in each worker process


def owners(positions: np.ndarray, parts: int) -> np.ndarray:
    """Which of `parts` workers owns each position: a pure function of the position."""
    return ((positions * _MIX) >> np.uint64(40)) % np.uint64(parts)


@functools.lru_cache(maxsize=1)
def _worker_kernel() -> Any:
    """The compiled kernel in a worker process, built once (None: numpy, the same levels)."""
    from .kernel import load

    return load(None)


def _orienter(board: Board) -> Orienter:
    key = (board.start, board.size, board.name)
    if key not in _ORIENTERS:
        _ORIENTERS.clear()
        _ORIENTERS[key] = Orienter(board)
    return _ORIENTERS[key]


def _expand(board: Board, part: Part, low: int, high: int, parts: int) -> Tuple[List[Part], int]:
    """Task: the children of parents [low, high) of a part, cut by owner, and the games ending there."""
    sliced = (part[0][low:high], part[1][low:high], part[2][low:high])
    kernel = _worker_kernel()
    if kernel is None:
        children, games = _next_level(board, _orienter(board), sliced, BLOCK)
    else:
        children, stuck = kernel.next_level(board, sliced, BLOCK, 4 * (high - low) + 16, lambda done, total: None)
        games = _exact(*stuck)
    owner = owners(children[0], parts)
    cut = [tuple(column[owner == np.uint64(j)] for column in children) for j in range(parts)]
    return cut, games  # type: ignore[return-value]


def _own(*pieces: Part) -> Part:
    """Task: an owner's share of the next level, from the children sent to it."""
    kept = [piece for piece in pieces if len(piece[0])]
    if not kept:
        empty = np.zeros(0, dtype=np.uint64)
        return empty, empty, np.zeros(0, dtype=np.uint32)
    return kept[0] if len(kept) == 1 else _merge(kept)


def _figures(board: Board, part: Part, jumps: int) -> Tuple[int, int, int, int, int]:
    """Task: a part's size, its counts' sums (mod 2^64 and PRIME), and those of the won positions."""
    positions, counts, checks = part
    won64 = wonp = 0
    if board.pegs(board.start) - jumps == 1 and len(positions):
        if board.target is None and board.ends is None:
            won = np.ones(len(positions), dtype=bool)
        else:
            won = (positions & np.uint64(board.goal if board.goal is not None else board.ends)) != 0
        won64, wonp = int(counts[won].sum(dtype=np.uint64)), int(checks[won].sum(dtype=np.uint64) % PRIME)
    return (
        len(positions),
        int(counts.sum(dtype=np.uint64)),
        int(checks.sum(dtype=np.uint64) % PRIME),
        won64,
        wonp,
    )


def _complements(board: Board, positions: np.ndarray, parts: int) -> List[np.ndarray]:
    """Task: the complements of a level's positions, oriented and cut by owner."""
    there = _orienter(board).canonical(positions ^ np.uint64(board.full))
    owner = owners(there, parts)
    return [there[owner == np.uint64(j)] for j in range(parts)]


def _common(here: np.ndarray, *there: np.ndarray) -> int:
    """Task: how many of an owner's positions are among the complements sent to it."""
    wanted = np.concatenate(there) if there else np.zeros(0, dtype=np.uint64)
    return int(np.isin(here, wanted).sum())


def _positions(part: Part) -> np.ndarray:
    return part[0]


def count_on_cluster(
    board: Board,
    cluster: Any,
    *,
    checkpoint: Optional[Path] = None,
    clock: Callable[[], float] = time.perf_counter,
    progress: Optional[Callable[[Counting], None]] = None,
    finishable: Optional[List[int]] = None,
) -> Iterator[Level]:
    """As `count.count_levels`, on the cluster's workers. With `checkpoint` (a folder), each level
    is saved there, one file per share, and a later call resumes after the last saved level. With
    `finishable` (a list), it is filled at the end with the positions from which the goal can still
    be reached, per level (a central game counted from its start only, as `finishable_counts`)."""
    check_countable(board, "pegs count")
    parts = max(1, cluster.workers)
    history: List[Level] = []
    resumed = _load(checkpoint, board) if checkpoint else None
    if resumed:
        history, shares = resumed
        level = [cluster.client.scatter(share) for share in shares]
        figures = [(len(share[0]), 0, 0, 0, 0) for share in shares]
        yield from history[:-1]
        kept: Optional[List[List[Any]]] = None  # the levels before are gone: no finishable count
    else:
        start = Orienter(board).canonical(np.array([board.start], dtype=np.uint64))
        first = (start, np.ones(1, dtype=np.uint64), np.ones(1, dtype=np.uint32))
        owner = owners(start, parts)
        shares = [tuple(column[owner == np.uint64(j)] for column in first) for j in range(parts)]
        level = [cluster.client.scatter(share) for share in shares]  # share j holds what owner j owns
        figures = [_figures(board, share, 0) for share in shares]
        history.append(_level(board, 0, figures, 0.0))
        kept = [] if finishable is not None and _central(board) else None
    began = clock()
    board_future = cluster.client.scatter(board, broadcast=True, hash=True)
    while True:
        if kept is not None:
            kept.append([cluster.submit(_positions, share) for share in level])
        slices = [
            (share, low, min(size, low + SLICE))
            for share, size in zip(level, (f[0] for f in figures))
            for low in range(0, size, SLICE)
        ]
        # In waves of a few slices per worker, each wave's children merged into the owners' shares
        # before the next wave starts: a worker holds its share and a wave's children, never all
        # of a level's children at once (they are several times the next level).
        owned: List[Any] = [cluster.client.scatter(_own(), hash=True)] * parts
        games, wave = 0, 2 * parts
        for first in range(0, len(slices), wave):
            expanded = [
                cluster.submit(_expand, board_future, share, low, high, parts)
                for share, low, high in slices[first : first + wave]
            ]
            owned = [
                cluster.submit(_own, owned[j], *[cluster.submit(_child_share, result, j) for result in expanded])
                for j in range(parts)
            ]
            games += sum(cluster.results([cluster.submit(operator.getitem, result, 1) for result in expanded]))
            cluster.wait(owned)
            del expanded
            if progress:
                done = min(len(slices), first + wave)
                progress(Counting(len(history), done, len(slices), clock() - began))
        level = owned
        jumps = len(history)
        figures = cluster.results([cluster.submit(_figures, board_future, share, jumps) for share in level])
        history[-1] = dataclasses.replace(history[-1], games=games)
        yield history[-1]
        if sum(f[0] for f in figures) == 0:
            break
        history.append(_level(board, jumps, figures, clock() - began))
        if kept is not None and sum(level_.positions for level_ in history) > KEEP_AT_MOST:
            kept = None
        if checkpoint:
            _save(checkpoint, board, history, level, cluster)
    if finishable is not None and kept is not None:
        finishable.extend(_finishable(board, cluster, kept, parts))


def _child_share(result: Tuple[List[Part], int], owner: int) -> Part:
    return result[0][owner]


def _central(board: Board) -> bool:
    return board.goal is not None and board.full ^ board.goal == board.start


def _finishable(board: Board, cluster: Any, kept: List[List[Any]], parts: int) -> List[int]:
    pegs = board.pegs(board.start)
    levels = len(kept)
    found = []
    for jumps in range(levels):
        mirror = 2 * pegs - board.size - jumps
        if not 0 <= mirror < levels:
            found.append(0)
            continue
        cut = [cluster.submit(_complements, board, share, parts) for share in kept[mirror]]
        counts = [
            cluster.submit(_common, here, *[cluster.submit(operator.getitem, c, j) for c in cut])
            for j, here in enumerate(kept[jumps])
        ]
        found.append(sum(cluster.results(counts)))
    return found


def _level(board: Board, jumps: int, figures: List[Tuple[int, int, int, int, int]], seconds: float) -> Level:
    size = sum(f[0] for f in figures)
    sequences = _exact(sum(f[1] for f in figures) % (1 << 64), sum(f[2] for f in figures) % PRIME)
    solutions = None
    if board.pegs(board.start) - jumps == 1:
        solutions = _exact(sum(f[3] for f in figures) % (1 << 64), sum(f[4] for f in figures) % PRIME)
    return Level(jumps, size, sequences, seconds, solutions)


def _save(folder: Path, board: Board, history: List[Level], level: List[Any], cluster: Any) -> None:
    """The newest level, one file per share (fetched one at a time: this machine never holds the
    whole level), then the figures of every level, which name the shares: written last, so a
    stop half-way leaves the previous level's checkpoint whole."""
    folder.mkdir(parents=True, exist_ok=True)
    jumps = len(history) - 1
    names = []
    for index, share in enumerate(level):
        name = f"level-{jumps}-share-{index}.npz"
        positions, counts, checks = cluster.result(share)
        with open(folder / name, "wb") as handle:
            np.savez(handle, positions=positions, counts=counts, checks=checks)
        names.append(name)
    figures = {
        "start": board.start,
        "shares": names,
        "levels": [[lv.jumps, lv.positions, str(lv.sequences), str(lv.solutions), str(lv.games)] for lv in history],
    }
    write_atomically(folder / "levels.json", json.dumps(figures) + "\n", 0o644)
    for old in folder.glob("level-*-share-*.npz"):
        if old.name not in names:
            old.unlink()


def _load(folder: Path, board: Board) -> Optional[Tuple[List[Level], List[Part]]]:
    try:
        figures = json.loads((folder / "levels.json").read_text(encoding="utf-8"))
        if figures["start"] != board.start:
            return None
        history = [
            Level(jumps, size, int(sequences), 0.0, None if solutions == "None" else int(solutions), int(games))
            for jumps, size, sequences, solutions, games in figures["levels"]
        ]
        shares = []
        for name in figures["shares"]:
            with np.load(folder / name) as saved:
                shares.append((saved["positions"], saved["counts"], saved["checks"]))
        return history, shares
    except (OSError, KeyError, ValueError, TypeError):
        return None

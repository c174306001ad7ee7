"""The level-by-level count on a Dask cluster: the level is cut into shares by a hash of the
position, a few shares per worker, so a board too big for one machine's memory is counted by
several.

One level becomes the next in waves of a few slices of parents each. A task expands a slice (the
compiled kernel where the worker can build it, numpy otherwise) and cuts the children by the
share of the next level they belong to; then each share of the next level is merged with the
children sent to it, adding up the counts of equal positions. So a worker holds its shares of
the next level, what is left of its parents (a share of parents is let go once expanded) and two
waves' children, and a merge needs room for one share more, not for everything a worker holds.
Nothing but the figures of each level (sizes and residues) comes back to the command's machine,
and the levels are exactly those of `count.count_levels`::

    for level in count_on_cluster(board, cluster, checkpoint=state / "pegs-count-french.cluster"):
        print(level.jumps, level.positions, level.sequences)

A worker lost mid-count takes its shares with it: the count starts again from its last
checkpoint (or from the start, without one) on the workers that are left, and the caller never
sees a level twice.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import operator
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import numpy as np

from ...files import write_atomically
from ...wording import plural
from ..cluster import ClusterLost, WorkerLost
from .board import Board, check_countable
from .kernel import worker_kernel
from .levels import BLOCK, PRIME, Counting, Level, empty_level, exact_count, merge_pieces, next_level
from .orient import Orienter
from .shares import cut, owners

__all__ = ["SHARES_PER_WORKER", "SLICE", "count_on_cluster"]

log = logging.getLogger(__name__)

# Parents expanded by one task, at least: a twentieth of a second on a PC, under a second on a Pi.
# Its children (and the kernel's table making them) are what a worker holds beside its shares.
SLICE = 50_000
# Slices of a level per worker, at most: a huge level gets longer slices rather than more tasks.
SLICES_PER_WORKER = 32
# Shares of a level each worker holds, at least; more once a share would pass SHARE positions
# (40 MB): a merge needs room for one share more, and each wave sends every share a piece of
# each slice, so more shares mean a lower peak and more tasks.
SHARES_PER_WORKER = 2
SHARE = 2_000_000
# Slices expanded at once, per worker (and the wave before's merges still running).
WAVE = 1
# Positions kept on the workers (8 bytes each) to count the finishable positions at the end;
# beyond this the count goes on without them (french: far beyond).
KEEP_AT_MOST = 60_000_000
# Workers lost in a row (no level finished in between) before the count gives up: a level that
# keeps killing its workers (out of memory) will not finish by being tried again.
MOST_LOSSES = 3

Part = Tuple[np.ndarray, np.ndarray, np.ndarray]  # positions, counts mod 2^64, counts mod PRIME
Figures = Tuple[int, int, int, int, int]  # size, counts' sums mod 2^64 and PRIME, and the won's
_ORIENTERS: Dict[Tuple[int, int, str], Orienter] = {}  # one per board in each worker process


def _orienter(board: Board) -> Orienter:
    key = (board.start, board.size, board.name)
    if key not in _ORIENTERS:
        _ORIENTERS.clear()
        _ORIENTERS[key] = Orienter(board)
    return _ORIENTERS[key]


def _expand(board: Board, part: Part, low: int, high: int, shares: int) -> Tuple[List[Part], int]:
    """Task: the children of parents [low, high) of a share, cut by the next level's share, and
    the games ending there."""
    sliced = (part[0][low:high], part[1][low:high], part[2][low:high])
    kernel = worker_kernel()
    if kernel is None:
        children, games = next_level(board, _orienter(board), sliced, BLOCK)
        return cut(children, shares), games
    children, stuck = kernel.next_level(board, sliced, BLOCK, 4 * (high - low) + 16, lambda done, total: None)
    return kernel.cut(children, shares), exact_count(*stuck)


def _own(*pieces: Part) -> Part:
    """Task: a share of the next level, from what it held so far and the children sent to it
    (each sorted, no position twice)."""
    kept = [piece for piece in pieces if len(piece[0])]
    if not kept:
        return empty_level()
    if len(kept) == 1:  # a piece is a view, which would keep all of its slice's children: copied
        return tuple(column if column.base is None else column.copy() for column in kept[0])  # type: ignore[return-value]
    kernel = worker_kernel()
    return kernel.merge(kept) if kernel is not None else merge_pieces(kept)


def _figures(board: Board, part: Part, jumps: int) -> Figures:
    """Task: a share's size, its counts' sums (mod 2^64 and PRIME), and those of the won positions."""
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


def _complements(board: Board, positions: np.ndarray, shares: int) -> List[np.ndarray]:
    """Task: the complements of a level's positions, oriented and cut by share."""
    there = _orienter(board).canonical(positions ^ np.uint64(board.full))
    share = owners(there, shares)
    return [there[share == np.uint64(j)] for j in range(shares)]


def _common(here: np.ndarray, *there: np.ndarray) -> int:
    """Task: how many of a share's positions are among the complements sent to it."""
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
    be reached, per level (a central game counted from its start only, as `finishable_counts`).

    A worker lost mid-count (its shares gone with it) makes the count start again from the
    checkpoint, or from the start without one; after MOST_LOSSES in a row it stops with
    ClusterLost (exit 75), the checkpoint kept."""
    check_countable(board, "pegs count")
    given, losses = 0, 0  # levels given to the caller; workers lost since the last new level
    while True:
        try:
            for level in _count(board, cluster, checkpoint, clock, progress, finishable if not given else None):
                if level.jumps >= given:  # after a restart, the levels before were given already
                    given, losses = level.jumps + 1, 0
                    yield level
            return
        except WorkerLost as lost:
            losses += 1
            if losses >= MOST_LOSSES or not _workers_back(cluster):
                raise ClusterLost(
                    f"{lost}, {plural(losses, 'time')} while counting level {given}: out of memory? "
                    "Look at the workers' logs (journalctl -u twitterbot-dask-worker), add workers or memory, and "
                    "run the same command to continue from its checkpoint"
                ) from None
            log.warning(
                "%s: counting again from %s on %s", lost, "the last checkpoint" if checkpoint else "the start",
                plural(cluster.workers, "worker"),
            )  # fmt: skip
            if finishable is not None:
                finishable.clear()  # counted from the levels kept on the workers: gone


def _workers_back(cluster: Any, seconds: float = 30.0) -> bool:
    """Whether the cluster has a worker again within `seconds` (a nanny restarts a killed one)."""
    deadline = time.monotonic() + seconds
    while not cluster.workers:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True


def _count(
    board: Board,
    cluster: Any,
    checkpoint: Optional[Path],
    clock: Callable[[], float],
    progress: Optional[Callable[[Counting], None]],
    finishable: Optional[List[int]],
) -> Iterator[Level]:
    cluster.watch()  # a worker lost from now on: WorkerLost
    parts = max(1, cluster.workers)
    client = cluster.client
    resumed = _load(checkpoint, board) if checkpoint else None
    if resumed:
        history, names = resumed
        level = [client.scatter(_load_share(checkpoint, name)) for name in names]  # one at a time
        figures: List[Figures] = cluster.results([cluster.submit(_figures, board, share, 0) for share in level])
        yield from history[:-1]
        kept: Optional[List[List[Any]]] = None  # the levels before are gone: no finishable count
    else:
        start = Orienter(board).canonical(np.array([board.start], dtype=np.uint64))
        first = (start, np.ones(1, dtype=np.uint64), np.ones(1, dtype=np.uint32))
        level = [client.scatter(first)]
        figures = [_figures(board, first, 0)]
        history = [_level(board, 0, figures, 0.0)]
        kept = [] if finishable is not None and _central(board) else None
    began = clock()
    board_future = client.scatter(board, broadcast=True, hash=True)
    while True:
        if kept is not None:
            kept.append([cluster.submit(_positions, share) for share in level])
        level, games = _next(board_future, level, [f[0] for f in figures], parts, cluster, progress, len(history), clock)
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
        finishable.extend(_finishable(board, cluster, kept))


def _next(
    board_future: Any,
    level: List[Any],
    sizes: List[int],
    parts: int,
    cluster: Any,
    progress: Optional[Callable[[Counting], None]],
    jumps: int,
    clock: Callable[[], float],
) -> Tuple[List[Any], int]:
    """The next level's shares (futures) from this level's, and the games ending on this one."""
    began = clock()
    expected = 3 * sum(sizes) // 2  # the next level, about (the French board grows by at most this, once big)
    shares = parts * max(SHARES_PER_WORKER, -(-expected // (parts * SHARE)))
    step = max(SLICE, -(-sum(sizes) // (SLICES_PER_WORKER * parts)))
    slices = [(index, low, min(size, low + step)) for index, size in enumerate(sizes) for low in range(0, size, step)]
    last_slice = {index: number for number, (index, _, _) in enumerate(slices)}
    # In waves of a slice per worker, each wave's children merged into the next level's shares
    # while the next wave is expanded, never later: a worker never holds all of a level's
    # children at once (they are several times the next level). Share j stays on worker j mod
    # parts; a slice's children travel to each worker once, all of that worker's shares together.
    owned: List[Any] = [None] * shares
    homes = sorted(cluster.watching or cluster.members())[:parts]
    merging: List[Any] = []  # the wave before's merges
    games, wave = 0, WAVE * parts
    for first in range(0, len(slices), wave):
        expanded = [
            cluster.submit(_expand, board_future, level[index], low, high, shares)
            for index, low, high in slices[first : first + wave]
        ]
        sent = [[cluster.submit(_for_worker, result, w, len(homes)) for result in expanded] for w in range(len(homes))]
        owned = [
            cluster.submit(
                _own_share,
                j // len(homes),
                owned[j],
                *sent[j % len(homes)],
                near=homes[j % len(homes)],  # the shares spread evenly, each staying where it is
            )
            for j in range(shares)
        ]
        games += sum(cluster.results([cluster.submit(operator.getitem, result, 1) for result in expanded]))
        cluster.wait(merging)
        merging = owned
        del expanded, sent
        done = first + wave
        for index, number in last_slice.items():
            if number < done:
                level[index] = None  # expanded: its memory goes back to the worker
        cluster.check_workers()  # a lost worker's shares are gone: start again, not wait
        if progress:
            progress(Counting(jumps, min(len(slices), done), len(slices), clock() - began))
    cluster.wait(owned)
    return owned, games


def _for_worker(result: Tuple[List[Part], int], worker: int, workers: int) -> List[Part]:
    """Task: the pieces of an expanded slice for the shares that stay on `worker` (j mod workers)."""
    return result[0][worker::workers]


def _own_share(index: int, held: Optional[Part], *sent: List[Part]) -> Part:
    """Task: a share of the next level: what it `held` so far (None at first) and its piece of
    each slice sent (the `index`-th of each worker's pieces)."""
    return _own(*([held] if held is not None else []), *[pieces[index] for pieces in sent])


def _central(board: Board) -> bool:
    return board.goal is not None and board.full ^ board.goal == board.start


def _finishable(board: Board, cluster: Any, kept: List[List[Any]]) -> List[int]:
    """Per level, its positions whose complement is on the mirror level (`finishable_counts`):
    each share j of a level matched with the complements that fall in its share j."""
    pegs = board.pegs(board.start)
    levels = len(kept)
    found = []
    for jumps in range(levels):
        mirror = 2 * pegs - board.size - jumps
        if not 0 <= mirror < levels:
            found.append(0)
            continue
        cut = [cluster.submit(_complements, board, share, len(kept[jumps])) for share in kept[mirror]]
        counts = [
            cluster.submit(_common, here, *[cluster.submit(operator.getitem, c, j) for c in cut])
            for j, here in enumerate(kept[jumps])
        ]
        found.append(sum(cluster.results(counts)))
    return found


def _level(board: Board, jumps: int, figures: List[Tuple[int, int, int, int, int]], seconds: float) -> Level:
    size = sum(f[0] for f in figures)
    sequences = exact_count(sum(f[1] for f in figures) % (1 << 64), sum(f[2] for f in figures) % PRIME)
    solutions = None
    if board.pegs(board.start) - jumps == 1:
        solutions = exact_count(sum(f[3] for f in figures) % (1 << 64), sum(f[4] for f in figures) % PRIME)
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


def _load(folder: Path, board: Board) -> Optional[Tuple[List[Level], List[str]]]:
    """The levels saved in `folder` and the names of the newest level's share files, or None
    (no checkpoint, another board's, or a damaged one: the count starts afresh)."""
    try:
        figures = json.loads((folder / "levels.json").read_text(encoding="utf-8"))
        if figures["start"] != board.start:
            return None
        history = [
            Level(jumps, size, int(sequences), 0.0, None if solutions == "None" else int(solutions), int(games))
            for jumps, size, sequences, solutions, games in figures["levels"]
        ]
        names = [str(name) for name in figures["shares"]]
        if not all((folder / name).is_file() for name in names):
            return None
        return history, names
    except (OSError, KeyError, ValueError, TypeError):
        return None


def _load_share(folder: Path, name: str) -> Part:
    with np.load(folder / name) as saved:
        return saved["positions"], saved["counts"], saved["checks"]

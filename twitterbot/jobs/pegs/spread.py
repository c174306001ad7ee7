"""The level-by-level count on a Dask cluster: each worker owns a share of every level, so a board
too big for one machine's memory is counted by several, and sooner with more of them.

A level is cut into one share per worker by a hash of the position (`shares.owners`), and worker
s holds share s of every level for the whole count, in its own memory (a `Holding`, named by the
count). A level becomes the next in rounds. In a round each worker expands a slice of its own
parents and cuts the children by their owner (`shares.expand_cut`); each owner fetches its pieces
once, in bulk, and adds them to its table (the compiled kernel where the worker could build it,
numpy otherwise). Once every slice is expanded, each owner sorts its table into its share of the
next level and lets its parents go. The scheduler sees a few tasks per worker per round, never
one per piece of a share; only the figures of each level (sizes and residues) come back to the
command's machine, and the levels are exactly those of `count.count_levels`::

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
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

import numpy as np

from ...files import write_atomically
from ...wording import plural
from ..cluster import POLL, ClusterLost, WorkerLost, steady_allocator
from .board import Board, check_countable, searched
from .kernel import worker_kernel
from .levels import PRIME, Counting, Level, Part, empty_level, exact_count
from .orient import Orienter
from .shares import Accumulator, cut, owners

__all__ = ["ROUNDS", "SLICE", "count_on_cluster"]

log = logging.getLogger(__name__)

# A level is made in this many rounds at least. A round's children are about 8 times its parents
# (7-10 per position of the next level, measured on the English board), and a worker holds two
# rounds' beside its table until they are added up: a forty-eighth of a level each keeps them to
# a tenth of what it holds.
ROUNDS = 48
# Parents a worker expands in a round, at least: a tenth of a second on a PC, about half a second
# on a Pi, so that a round's few tasks (a few milliseconds each) cost little beside it.
SLICE = 250_000
# Positions kept on the workers (8 bytes each) to count the finishable positions at the end;
# beyond this the count goes on without them (french: far beyond).
KEEP_AT_MOST = 60_000_000
# Workers lost in a row (no level finished in between) before the count gives up: a level that
# keeps killing its workers (out of memory) will not finish by being tried again.
MOST_LOSSES = 3

Figures = Tuple[int, int, int, int, int, int, int]  # size, sums mod 2^64 and PRIME, the won's, the stuck's


@dataclass
class Holding:
    """What a worker holds of one count: its share of the level being expanded (`parents`), its
    share of the next one being added up (`next`), the sequences ending in its parents with no
    jump (`stuck`), and its share's positions of earlier levels, for the finishable count."""

    board: Board
    shares: int
    parents: Part = field(default_factory=empty_level)
    next: Optional[Accumulator] = None
    stuck: Tuple[int, int] = (0, 0)
    kept: Dict[int, np.ndarray] = field(default_factory=dict)


_HELD: Dict[Tuple[str, int], Holding] = {}  # in each worker process: (the count's name, share)


class ShareGone(LookupError):
    """A task asked a worker for a share it does not hold (a worker restarted mid-count)."""


def _held(name: str, share: int) -> Holding:
    try:
        return _HELD[(name, share)]
    except KeyError:
        raise ShareGone(f"share {share} of count {name} is not on this worker (restarted?)") from None


def _open(name: str, share: int, shares: int, board: Board, jumps: int, expected: int) -> int:
    """Task: an empty table for the worker's share of level `jumps`, for about `expected` positions."""
    steady_allocator()
    holding = _HELD.setdefault((name, share), Holding(board, shares))
    if holding.next is not None:
        holding.next.close()
    holding.next = Accumulator(board, worker_kernel(), expected)
    return jumps


def _round(name: str, share: int, jumps: int, low: int, high: int, before: Any, *sent: List[Part]) -> List[List[Part]]:
    """Task: one round of level `jumps` on the worker of `share`: the pieces the other workers
    `sent` it in the round before added to its table, then its parents [low, high) expanded, the
    children of its own share added too, the others returned for their owners. `before` is this
    worker's round before (or its `_open`), so that one table is never changed by two tasks at once."""
    holding = _held(name, share)
    _absorb(holding, sent)
    if low >= len(holding.parents[0]):
        return [[] for _ in range(holding.shares)]
    parents: Part = tuple(column[low:high] for column in holding.parents)  # type: ignore[assignment]
    pieces, stuck = holding.next.expand(parents, holding.shares, share)  # type: ignore[union-attr]
    holding.stuck = ((holding.stuck[0] + stuck[0]) % (1 << 64), (holding.stuck[1] + stuck[1]) % PRIME)
    return pieces


def _absorb(holding: Holding, sent: Tuple[List[Part], ...]) -> None:
    assert holding.next is not None, "_open comes first"
    for pieces in sent:
        for piece in pieces:
            holding.next.add(piece)


def _finish(name: str, share: int, jumps: int, keep: bool, before: Any) -> Figures:
    """Task: the worker's share of level `jumps`, sorted from its table, in place of its parents;
    its figures, and the sequences that ended in its parents. A task of its own after the last
    round, so that the children that round added up are let go of before the table is sorted."""
    holding = _held(name, share)
    holding.parents = empty_level()  # let go of the parents before the table is sorted: a lower peak
    holding.parents, holding.next = holding.next.take(), None  # type: ignore[union-attr]
    if keep:
        holding.kept[jumps] = holding.parents[0]
    stuck, holding.stuck = holding.stuck, (0, 0)  # the next level's rounds start after this
    return _figures(holding.board, holding.parents, jumps) + stuck


def _parents(name: str, share: int, jumps: int) -> Part:
    """Task: the worker's share of level `jumps`, for the checkpoint."""
    return _held(name, share).parents


def _kept(name: str, share: int, jumps: int) -> np.ndarray:
    """Task: the worker's share of level `jumps`' positions (kept for the finishable count)."""
    return _held(name, share).kept[jumps]


def _forget_kept(name: str) -> None:
    """Run on every worker: let go of the positions kept of count `name`."""
    for key, holding in _HELD.items():
        if key[0] == name:
            holding.kept.clear()


def _drop(name: str) -> None:
    """Run on every worker: let go of everything it holds of count `name`."""
    for key in [key for key in _HELD if key[0] == name]:
        holding = _HELD.pop(key)
        if holding.next is not None:
            holding.next.close()


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
                "%s: counting again from %s on %s",
                lost,
                "the last checkpoint" if checkpoint else "the start",
                plural(cluster.workers, "worker"),
            )
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
    homes = sorted(cluster.watch())  # a worker lost from now on: WorkerLost
    name = f"pegs-{uuid.uuid4().hex[:12]}"
    owners_ = _Owners(cluster, name, homes, cluster.scatter(board))
    try:
        resumed = _load(checkpoint, board) if checkpoint else None
        keep = finishable is not None and _central(board) and not resumed
        if resumed:
            history, names = resumed
            parts = (_load_share(checkpoint, name_) for name_ in names)  # type: ignore[arg-type]
            figures = owners_.seed(len(history) - 1, parts, history[-1].positions, keep)
            yield from history[:-1]
        else:
            start = Orienter(board).canonical(np.array([board.start], dtype=np.uint64))
            figures = owners_.seed(0, [(start, np.ones(1, dtype=np.uint64), np.ones(1, dtype=np.uint32))], 1, keep)
            history = [_level(board, 0, figures, 0.0)]
        began = clock()
        growth = history[-1].positions / history[-2].positions if len(history) > 1 else 4.0
        while True:
            jumps = len(history)
            size = sum(f[0] for f in figures)
            figures = owners_.next_level(
                jumps, [f[0] for f in figures], int(size * growth * 1.1) + 16, keep, progress, clock
            )
            growth = max(sum(f[0] for f in figures) / max(size, 1), 0.1)
            games = exact_count(sum(f[5] for f in figures) % (1 << 64), sum(f[6] for f in figures) % PRIME)
            history[-1] = dataclasses.replace(history[-1], games=games)
            yield history[-1]
            if sum(f[0] for f in figures) == 0:
                break
            history.append(_level(board, jumps, figures, clock() - began))
            if keep and sum(level_.positions for level_ in history) > KEEP_AT_MOST:
                keep = False
                owners_.forget_kept()
            if checkpoint:
                _save(checkpoint, board, history, owners_)
        if finishable is not None and keep:
            finishable.extend(_finishable(board, owners_, len(history)))
    finally:
        owners_.drop()


@dataclass
class _Owners:
    """The count's workers, as the client sees them: `homes[s]` holds share s of every level."""

    cluster: Any
    name: str
    homes: List[str]
    board: Any  # the board, scattered to every worker once

    @property
    def shares(self) -> int:
        return len(self.homes)

    def on(self, share: int, function: Callable[..., Any], *args: Any) -> Any:
        """A future for `function(self.name, share, *args)` on share's worker, and only there."""
        return self.cluster.submit_on(self.homes[share], function, self.name, share, *args)

    def seed(self, jumps: int, parts: Iterable[Part], size: int, keep: bool) -> List[Figures]:
        """Level `jumps` (`size` positions) given whole: the start, or a checkpoint's shares, loaded
        one at a time; each part cut by owner here and added to its owners' tables. Returns the
        level's figures."""
        expected = size // self.shares + 16
        before = [self.on(share, _open, self.shares, self.board, jumps, expected) for share in range(self.shares)]
        for part in parts:
            pieces = cut(part, self.shares)
            sent = [self.cluster.send(self.homes[share], [pieces[share]]) for share in range(self.shares)]
            before = [self.on(share, _round, jumps, 0, 0, before[share], sent[share]) for share in range(self.shares)]
            self.cluster.wait(before)  # one part on the way at a time
        return self.cluster.results(
            [self.on(share, _finish, jumps, keep, before[share]) for share in range(self.shares)]
        )

    def next_level(
        self,
        jumps: int,
        sizes: List[int],
        expected: int,
        keep: bool,
        progress: Optional[Callable[[Counting], None]],
        clock: Callable[[], float],
    ) -> List[Figures]:
        """Level `jumps` from level `jumps` - 1 (each share `sizes[s]` positions), in rounds; its
        figures. Round r adds up the children the other workers made in round r - 1, and a last
        round those of the round before it, then each worker sorts its share. The client submits a
        round once the one before is done, so that at most two rounds' children are on their way.

        Adding children up two rounds later instead, so that a worker expands its next slice while
        its last one's children are on their way, was tried on the French board (2 workers, 2
        cores): a worker then held two more rounds of children (its peak 5-10% higher, past the
        0.55 of one process aimed at), and the time stayed within the machine's noise."""
        began = clock()
        cluster, shares = self.cluster, self.shares
        before = [self.on(share, _open, shares, self.board, jumps, expected // shares + 16) for share in range(shares)]
        step = max(SLICE, -(-max(sizes) // ROUNDS))
        rounds = -(-max(sizes) // step)
        done: List[Any] = []
        checked = time.monotonic()
        for round_ in range(rounds + 1):
            sent = [
                [
                    cluster.submit_on(self.homes[other], operator.getitem, before[other], owner)
                    for other in range(shares)
                    if other != owner
                ]
                if round_
                else []
                for owner in range(shares)
            ]
            low = round_ * step if round_ < rounds else max(sizes)  # the last round expands nothing
            before = [
                self.on(owner, _round, jumps, low, low + step, before[owner], *sent[owner]) for owner in range(shares)
            ]
            cluster.wait(done)
            done = before
            if time.monotonic() - checked >= POLL:  # a lost worker's shares are gone: start again, not wait
                cluster.check_workers()
                checked = time.monotonic()
            if progress and round_:
                progress(Counting(jumps, round_, rounds, clock() - began))
        return cluster.results([self.on(owner, _finish, jumps, keep, before[owner]) for owner in range(shares)])

    def level(self, jumps: int) -> Iterator[Part]:
        """Level `jumps`, a share at a time (this machine never holds the whole level)."""
        for share in range(self.shares):
            yield self.cluster.result(self.on(share, _parents, jumps))

    def kept(self, jumps: int) -> List[Any]:
        """Futures of level `jumps`' positions, a share each."""
        return [self.on(share, _kept, jumps) for share in range(self.shares)]

    def forget_kept(self) -> None:
        """Every worker lets go of the levels' positions it kept for the finishable count."""
        self.cluster.client.run(_forget_kept, self.name)

    def drop(self) -> None:
        """Every worker lets go of what it holds of this count (a lost one held nothing)."""
        try:
            self.cluster.client.run(_drop, self.name)
        except Exception as exc:  # the scheduler or a worker gone: what they held is gone too
            log.debug("could not drop the count's shares: %s", exc)


def _figures(board: Board, part: Part, jumps: int) -> Tuple[int, int, int, int, int]:
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
    there = Orienter(board).canonical(positions ^ np.uint64(board.full))
    share = owners(there, shares)
    return [there[share == np.uint64(j)] for j in range(shares)]


def _common(here: np.ndarray, *there: np.ndarray) -> int:
    """Task: how many of a share's positions are among the complements sent to it."""
    wanted = np.concatenate(there) if there else np.zeros(0, dtype=np.uint64)
    return int(np.isin(here, wanted).sum())


def _central(board: Board) -> bool:
    return board.goal is not None and board.full ^ board.goal == board.start


def _finishable(board: Board, owners_: _Owners, levels: int) -> List[int]:
    """Per level, its positions whose complement is on the mirror level (`finishable_counts`):
    each share j of a level matched with the complements that fall in its share j."""
    cluster = owners_.cluster
    kept = [owners_.kept(jumps) for jumps in range(levels)]
    pegs = board.pegs(board.start)
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


def _level(board: Board, jumps: int, figures: List[Figures], seconds: float) -> Level:
    size = sum(f[0] for f in figures)
    sequences = exact_count(sum(f[1] for f in figures) % (1 << 64), sum(f[2] for f in figures) % PRIME)
    solutions = None
    if board.pegs(board.start) - jumps == 1:
        solutions = exact_count(sum(f[3] for f in figures) % (1 << 64), sum(f[4] for f in figures) % PRIME)
    return Level(jumps, size, sequences, seconds, solutions)


def _save(folder: Path, board: Board, history: List[Level], owners_: _Owners) -> None:
    """The newest level, one file per share (fetched one at a time: this machine never holds the
    whole level), then the figures of every level, which name the shares: written last, so a
    stop half-way leaves the previous level's checkpoint whole."""
    folder.mkdir(parents=True, exist_ok=True)
    jumps = len(history) - 1
    names = []
    for index, (positions, counts, checks) in enumerate(owners_.level(jumps)):
        name = f"level-{jumps}-share-{index}.npz"
        with open(folder / name, "wb") as handle:
            np.savez(handle, positions=positions, counts=counts, checks=checks)
        names.append(name)
    figures = {
        "start": board.start,
        "symmetries": len(board.symmetries),
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
        # One written before it said how many symmetries oriented its positions: all the goal's.
        oriented = figures.get("symmetries", len(searched(board).symmetries))
        if figures["start"] != board.start or oriented != len(board.symmetries):
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

"""Fewest moves: a move is a sequence of jumps by one peg, so a peg that jumps again straight
after its own jump makes no new move. Two searches, both exact, so the answer is proved minimal:

- for a goal position (one peg on a given hole, or a final pattern), a breadth-first search by
  moves over the positions from which the goal can still be reached only. Those are found with
  the count (`count_levels`): played backwards a jump is a jump of the holes, so a position can
  reach the goal exactly when the goal's complement can reach the position's complement. On the
  English board that is 1,679,072 positions of the 23,475,688 reachable, and the search proves
  its 18 moves minimal in about a minute;
- for one peg anywhere, a 0-1 breadth-first search over (position, the hole the last jump landed
  in), for boards small enough to hold those states in memory.

The searches know nothing of posting: they yield progress events and end with the result::

    *_, result = search_fewest(builtin("english"))
    result.moves, result.proved       # 18, True
"""

from __future__ import annotations

import tempfile
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Deque, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from .board import Board, Jump, check_countable, searched
from .bounds import position_class_proof
from .count import count_levels
from .kernel import Kernel
from .levels import Counting
from .orient import Orienter

__all__ = [
    "Counted",
    "FewestMoves",
    "Searched",
    "TooBig",
    "fewest_moves",
    "group_moves",
    "search_fewest",
]

# States (position, last landing hole) the 0-1 search holds before it gives up: some 400 bytes
# each in its dictionaries, so about 200 MB at most.
MAX_STATES = 500_000
# Positions in one level of the count the search by moves lets it make, predicted from the growth
# of the levels before: the count's peak memory follows its biggest level (about 430 MB for the
# English board's 3,626,632, predicted 4,222,955); the German board's 12th level would be 5.5 M.
MAX_LEVEL = 4_500_000
# Positions expanded at once in the search by moves: bounds its arrays to some tens of MB.
BLOCK = 50_000
# A chain state packs its position and its peg's hole into one number: the hole takes 6 bits.
_HOLE_SHIFT = 58


@dataclass(frozen=True)
class FewestMoves:
    """The winning jumps with the fewest moves (None if there is no solution), how many moves,
    whether that is proved minimal, and the positions (or states) examined."""

    jumps: Optional[Tuple[Jump, ...]]
    moves: int
    proved: bool
    states: int


@dataclass(frozen=True)
class Counted:
    """Progress while finding the positions the goal can be reached from: the count's level
    `jumps` (of at most `levels`) is done."""

    jumps: int
    levels: int
    positions: int
    seconds: float


@dataclass(frozen=True)
class Searched:
    """Progress of the search by moves: every position `moves` moves from the start is known."""

    moves: int
    positions: int  # new at this many moves
    seen: int  # in all so far
    finishable: int  # positions the goal can be reached from: all the search may visit
    seconds: float


@dataclass(frozen=True)
class TooBig:
    """The board is beyond the search; `reason` says why and what to do instead."""

    reason: str


Event = Union[Counted, Searched, FewestMoves, TooBig]


def group_moves(jumps: Sequence[Jump]) -> List[List[Jump]]:
    """The jumps as moves: a jump by the peg that made the jump before continues that move."""
    moves: List[List[Jump]] = []
    for jump in jumps:
        if moves and moves[-1][-1].end == jump.start:
            moves[-1].append(jump)
        else:
            moves.append([jump])
    return moves


def fewest_moves(
    board: Board,
    *,
    max_states: int = MAX_STATES,
    max_level: int = MAX_LEVEL,
    folder: Optional[Path] = None,
    kernel: Optional[Kernel] = None,
) -> Optional[FewestMoves]:
    """The solution with the fewest moves, proved minimal; None when the board is beyond the
    search (see `search_fewest`)."""
    *_, result = search_fewest(board, max_states=max_states, max_level=max_level, folder=folder, kernel=kernel)
    return result if isinstance(result, FewestMoves) else None


def search_fewest(
    board: Board,
    *,
    max_states: int = MAX_STATES,
    max_level: int = MAX_LEVEL,
    folder: Optional[Path] = None,
    clock: Callable[[], float] = time.process_time,
    progress: Optional[Callable[[Counting], None]] = None,
    kernel: Optional[Kernel] = None,
) -> Iterator[Event]:
    """Yield progress, then a `FewestMoves` (proved minimal) or `TooBig`. A goal position is
    searched by moves over the positions it can be reached from, found by counting the board
    (levels kept in `folder`, a temporary folder if None; about 8 bytes a position, 190 MB for the
    English board) and giving up past `max_level` positions in a level; one peg anywhere by
    the 0-1 search, giving up past `max_states` states. `progress` hears the count's progress
    within a level (`count.Counting`); with a `kernel` (kernel.load) the count is made in C."""
    check_countable(board, "pegs solve --fewest-moves")
    # Positions merged by every symmetry of the goal, the count's too: a move from a position and
    # one from its image are as near the goal.
    board = searched(board)
    if position_class_proof(board):
        yield FewestMoves(None, 0, True, 0)
        return
    if board.goal is None:
        result = _zero_one(board, max_states)
        if result is None:
            yield TooBig(
                f"board {board.name} is too big for --fewest-moves with one peg anywhere ({board.size} holes: the "
                f"search would hold more than {max_states:,} states): give the hole the last peg must end in "
                "with --finish (such as --finish centre), which searches only the positions that can still reach it"
            )
            return
        yield result
        return
    if board.size > _HOLE_SHIFT:
        yield TooBig(f"board {board.name} has {board.size} holes; --fewest-moves handles at most {_HOLE_SHIFT}")
        return
    if folder is None:
        with tempfile.TemporaryDirectory(prefix="pegs-fewest-") as temporary:
            yield from _by_moves(board, Path(temporary), max_level, clock, progress, kernel)
    else:
        yield from _by_moves(board, folder, max_level, clock, progress, kernel)


# -- the search by moves over the positions that can still reach the goal --------------------------


class _Stop(Exception):
    """A level of the count is too big: raised from its progress hook to end it at once."""


def _by_moves(
    board: Board,
    folder: Path,
    max_level: int,
    clock: Callable[[], float],
    progress: Optional[Callable[[Counting], None]],
    kernel: Optional[Kernel] = None,
) -> Iterator[Event]:
    began = clock()
    orient = Orienter(board)
    assert board.goal is not None
    levels = board.pegs(board.start) - board.pegs(board.goal) + 1
    folder.mkdir(parents=True, exist_ok=True)
    try:
        yield from _count(board, folder, levels, max_level, progress, clock, began, kernel)
    except _Stop as stop:
        jumps, positions, coming = stop.args
        yield TooBig(
            f"board {board.name} is too big for --fewest-moves: after {positions:,} positions {jumps - 1} jumps "
            f"from the start, its count would make about {coming:,} the jump after, more than {max_level:,} (the "
            "English board's central game makes at most 3,626,632: fewer symmetries of the goal, or a bigger board, "
            "make more); solve it without --fewest-moves"
        )
        return
    if board.full ^ board.goal == board.start:
        finishable = _finishable_by_complement(board, orient, folder, levels)
    else:
        finishable = _finishable_by_children(board, orient, folder, levels)
    yield from _search(board, orient, finishable, clock, began)


def _finishable_by_complement(board: Board, orient: Orienter, folder: Path, levels: int) -> np.ndarray:
    """A central game (the start is the goal's complement): a position can reach the goal iff
    the goal's complement, the start, can reach the position's complement. So level k's
    finishable positions are those whose complement is on level `levels - 1 - k`: no search."""
    full = np.uint64(board.full)
    found = []
    for jumps in range(levels):
        here = _load(folder, jumps)
        there = np.sort(orient.canonical(_load(folder, levels - 1 - jumps) ^ full))
        if len(there):
            at = np.minimum(np.searchsorted(there, here), len(there) - 1)
            found.append(here[there[at] == here])
        del here, there
    return np.sort(np.concatenate(found))


def _finishable_by_children(board: Board, orient: Orienter, folder: Path, levels: int) -> np.ndarray:
    """Any other goal: from the last level back to the first, a position can reach the goal iff
    one of its children can: one pass over the count's levels, a block of positions at a time."""
    last = _load(folder, levels - 1)
    later = last[last == np.uint64(board.goal)]  # the goal is its own image: it is canonical
    found = [later]
    for jumps in range(levels - 2, -1, -1):
        here = _load(folder, jumps)
        can_finish = np.zeros(len(here), dtype=bool)
        for first in range(0, len(here) if len(later) else 0, BLOCK):
            block = here[first : first + BLOCK]
            children, parents = [], []
            for jump in board.jumps:
                can = np.flatnonzero((block & np.uint64(jump.flips)) == np.uint64(jump.needs))
                children.append(block[can] ^ np.uint64(jump.flips))
                parents.append(can)
            images = orient.canonical(np.concatenate(children))
            at = np.minimum(np.searchsorted(later, images), len(later) - 1)
            can_finish[first + np.concatenate(parents)[later[at] == images]] = True
        later = here[can_finish]
        found.append(later)
    return np.sort(np.concatenate(found))


def _count(board, where, levels, max_level, progress, clock, began, kernel=None) -> Iterator[Counted]:
    """The count's levels, kept in `where`, up to the one with as few pegs as the goal. It stops
    (`_Stop`) before making a level of more than `max_level` positions, as far as the growth from
    the level before predicts it: the count's peak memory follows the biggest level it makes."""
    sizes: Dict[int, int] = {}  # jumps of the level being made -> positions of the one expanded

    def watch(counting: Counting) -> None:
        if counting.jumps not in sizes:  # a new level: `total` is the level being expanded
            sizes[counting.jumps] = counting.total
            before = sizes.get(counting.jumps - 1)
            coming = counting.total * counting.total // before if before else counting.total
            if max(counting.total, coming) > max_level:
                raise _Stop(counting.jumps, counting.total, coming)
        if progress:
            progress(counting)

    for level in count_levels(board, keep=where, progress=watch, kernel=kernel):
        yield Counted(level.jumps, levels, level.positions, clock() - began)
        if level.jumps >= levels - 1:
            break


def _load(folder: Path, jumps: int) -> np.ndarray:
    try:
        return np.load(folder / f"level-{jumps}.npy")
    except FileNotFoundError:  # the count ended before: no position has that few pegs
        return np.zeros(0, dtype=np.uint64)


def _search(
    board: Board, orient: Orienter, finishable: np.ndarray, clock: Callable[[], float], began: float
) -> Iterator[Event]:
    """Breadth-first by moves over `finishable` (sorted canonical positions): each level is
    every position one move (a chain of jumps by one peg) from the level before, not seen yet."""

    def where(positions: np.ndarray) -> np.ndarray:
        """Index of each position in `finishable`, -1 if it is not there."""
        at = np.minimum(np.searchsorted(finishable, positions), len(finishable) - 1)
        return np.where(finishable[at] == positions, at, -1)

    assert board.goal is not None
    if not len(finishable):  # not even the start can reach the goal
        yield FewestMoves(None, 0, True, 0)
        return
    start = int(where(orient.canonical(np.array([board.start], dtype=np.uint64)))[0])
    goal = int(where(np.array([board.goal], dtype=np.uint64))[0])  # the goal is its own image
    if start < 0 or goal < 0:
        yield FewestMoves(None, 0, True, len(finishable))
        return
    seen = np.zeros(len(finishable), dtype=bool)
    parent = np.full(len(finishable), -1, dtype=np.int64)
    seen[start] = True
    frontier = np.array([start], dtype=np.int64)
    moves, total = 0, 1
    by_start: Dict[int, List[Jump]] = {}
    for jump in board.jumps:
        by_start.setdefault(jump.start, []).append(jump)
    while not seen[goal]:
        if not len(frontier):  # cannot happen from a position that can reach the goal
            yield FewestMoves(None, 0, True, total)
            return
        moves += 1
        reached, origins = [], []
        for first in range(0, len(frontier), BLOCK):
            block = frontier[first : first + BLOCK]
            for index, origin in _one_move(board, by_start, orient, where, seen, finishable[block], block):
                reached.append(index)
                origins.append(origin)
        if reached:
            indices, first_at = np.unique(np.concatenate(reached), return_index=True)
            seen[indices] = True
            parent[indices] = np.concatenate(origins)[first_at]
            frontier = indices
        else:
            frontier = np.zeros(0, dtype=np.int64)
        total += len(frontier)
        yield Searched(moves, len(frontier), total, len(finishable), clock() - began)
    path = [goal]
    while parent[path[-1]] >= 0:
        path.append(int(parent[path[-1]]))
    targets = [int(finishable[index]) for index in reversed(path)][1:]
    yield FewestMoves(_replay_moves(board, targets), moves, True, total)


def _one_move(
    board: Board,
    by_start: Dict[int, List[Jump]],
    orient: Orienter,
    where: Callable[[np.ndarray], np.ndarray],
    seen: np.ndarray,
    positions: np.ndarray,
    origins: np.ndarray,
) -> Iterator[Tuple[np.ndarray, np.ndarray]]:
    """Every new finishable position one chain of jumps away: yields (its index, its parent's
    index) in batches. A chain goes on only through positions that can still reach the goal and
    were not seen before this move (a seen one's continuations are one move from it, so no newer)."""
    holes = np.zeros(0, dtype=np.intp)
    first_jump = True
    while len(positions):
        children, ends, parents = [], [], []
        if first_jump:
            groups = [(slice(None), board.jumps)]
        else:
            order = np.argsort(holes, kind="stable")
            positions, holes, origins = positions[order], holes[order], origins[order]
            bounds = np.searchsorted(holes, np.arange(board.size + 1))
            groups = [(slice(bounds[hole], bounds[hole + 1]), by_start.get(hole, [])) for hole in range(board.size)]
        for part, jumps in groups:
            here, came = positions[part], origins[part]
            for jump in jumps:
                can = np.flatnonzero((here & np.uint64(jump.flips)) == np.uint64(jump.needs))
                if len(can):
                    children.append(here[can] ^ np.uint64(jump.flips))
                    ends.append(np.full(len(can), jump.end, dtype=np.uint64))
                    parents.append(came[can])
        first_jump = False
        if not children:
            return
        positions, holes, origins = np.concatenate(children), np.concatenate(ends), np.concatenate(parents)
        index = where(orient.canonical(positions))
        keep = index >= 0
        keep[keep] = ~seen[index[keep]]
        positions, holes, origins, index = positions[keep], holes[keep], origins[keep], index[keep]
        yield index, origins
        # The same peg in the same position goes on the same way whichever chain led there.
        _, unique = np.unique(positions | (holes << np.uint64(_HOLE_SHIFT)), return_index=True)
        positions, holes, origins = positions[unique], holes[unique].astype(np.intp), origins[unique]


def _replay_moves(board: Board, targets: Sequence[int]) -> Tuple[Jump, ...]:
    """The jumps of a line of moves given as the canonical position after each move: from the real
    start, each move is the chain of jumps whose result has the next canonical name, so the line
    is played in the start's own orientation (the last position is the goal, its own image)."""
    from .solve import Symmetries

    canonical = Symmetries(board).canonical
    position = board.start
    jumps: List[Jump] = []
    for target in targets:
        chain = _chain_to(board, canonical, position, target)
        for jump in chain:
            position ^= jump.flips
        jumps += chain
    return tuple(jumps)


def _chain_to(board: Board, canonical: Callable[[int], int], position: int, target: int) -> List[Jump]:
    stack: List[Tuple[int, Optional[int], List[Jump]]] = [(position, None, [])]
    while stack:
        here, peg, chain = stack.pop()
        for jump in board.moves(here):
            if peg is not None and jump.start != peg:
                continue
            child = here ^ jump.flips
            if canonical(child) == target:
                return chain + [jump]
            stack.append((child, jump.end, chain + [jump]))
    raise AssertionError("the search recorded a move that no chain of jumps makes")  # pragma: no cover


# -- the 0-1 search over (position, last landing hole), for one peg anywhere on small boards ---------


def _zero_one(board: Board, max_states: int) -> Optional[FewestMoves]:
    """The solution with the fewest moves, proved minimal; None past `max_states` states."""
    State = Tuple[int, int]
    start: State = (board.start, -1)
    cost: Dict[State, int] = {start: 0}
    parent: Dict[State, Tuple[State, Jump]] = {}
    queue: Deque[State] = deque([start])
    done = set()
    while queue:
        state = queue.popleft()
        if state in done:
            continue
        done.add(state)
        position, last = state
        if board.is_won(position):
            path: List[Jump] = []
            while state in parent:
                state, jump = parent[state]
                path.append(jump)
            path.reverse()
            return FewestMoves(tuple(path), cost[(position, last)], True, len(cost))
        here = cost[state]
        for jump in board.moves(position):
            child = (position ^ jump.flips, jump.end)
            step = 0 if jump.start == last else 1
            if child not in cost or here + step < cost[child]:
                cost[child] = here + step
                parent[child] = (state, jump)
                if step:
                    queue.append(child)
                else:
                    queue.appendleft(child)
        if len(cost) > max_states:
            return None
    return FewestMoves(None, 0, True, len(cost))

"""Find one solution of a peg solitaire board: depth-first search over bitboards, remembering
dead positions up to the board's symmetries, so no position is explored twice in any orientation.

The search knows nothing of posting: it yields `Searching` events now and then and ends with a
`Solved` or `Impossible` event::

    for event in solve(builtin("english")):
        if isinstance(event, Solved):
            print(solution_text(board, event.jumps))
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple, Union

from .board import MAX_COUNTED_HOLES, Board, Jump, searched
from .bounds import pagoda_towards, pagoda_weights, position_class_proof

if TYPE_CHECKING:  # numpy: imported only for a final pattern, or with the kernel
    from .kernel import DeadPositions, Kernel
    from .meet import MeetInTheMiddle

__all__ = ["Impossible", "Searching", "Solved", "Symmetries", "replay", "solution_text", "solve"]


@dataclass(frozen=True)
class Searching:
    """Progress: positions examined so far, how fast, and the fewest pegs left on any path yet."""

    positions: int
    seconds: float
    fewest_pegs: int
    new_best: bool

    @property
    def per_second(self) -> float:
        return self.positions / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True)
class Solved:
    jumps: Tuple[Jump, ...]
    positions: int
    seconds: float


@dataclass(frozen=True)
class Impossible:
    reason: str
    positions: int
    seconds: float


Event = Union[Searching, Solved, Impossible]


class Symmetries:
    """Maps a position to one representative of its orientations (the smallest), with byte-wise
    lookup tables: one table lookup per 8 holes per symmetry instead of one step per hole."""

    def __init__(self, board: Board) -> None:
        self._chunks = (board.size + 7) // 8
        self._tables: List[List[List[int]]] = []
        for permutation in board.symmetries:
            tables = []
            for chunk in range(self._chunks):
                holes = range(chunk * 8, min(chunk * 8 + 8, board.size))
                images = [1 << permutation[hole] for hole in holes] + [0] * (8 - len(holes))
                table = [0] * 256
                for byte in range(1, 256):
                    lowest = (byte & -byte).bit_length() - 1
                    table[byte] = table[byte & (byte - 1)] | images[lowest]
                tables.append(table)
            self._tables.append(tables)

    def images(self, position: int) -> List[int]:
        """The position in every orientation of the board (the identity included)."""
        parts = [(position >> (8 * chunk)) & 0xFF for chunk in range(self._chunks)]
        found = []
        for tables in self._tables:
            image = 0
            for table, part in zip(tables, parts):
                image |= table[part]
            found.append(image)
        return found

    def canonical(self, position: int) -> int:
        """The smallest of the position's orientations: one name for all of them."""
        return min(self.images(position))


def solve(
    board: Board,
    *,
    report_every: float = 1.0,
    clock: Callable[[], float] = time.perf_counter,
    kernel: Optional[Kernel] = None,
) -> Iterator[Event]:
    """Search for a winning sequence of jumps; yields `Searching` about every `report_every`
    seconds (and on each new fewest-pegs record), then `Solved` or `Impossible`.

    How fast a depth-first search finds a solution depends wildly on the order it tries jumps
    in (the English board: 958 positions in board order, 113,000 outside-in; the German board the
    other way round). So several orders search side by side, a slice at a time, sharing what each
    proves dead; the first to finish wins. With the compiled `kernel` (kernel.load) the
    depth-first searches run in C, some fifty times faster; the answers are as sure either way.
    """
    started = clock()
    board = searched(board)  # a position and its image under any symmetry of the goal: one
    proof = position_class_proof(board)
    if proof:
        yield Impossible(proof, 0, clock() - started)
        return
    weights = pagoda_weights(board)
    depth_first = _depth_first(board, kernel, weights)
    # A final pattern (on a board numpy's words hold): the search from both ends first, alone.
    # It decides most such games in a few seconds, and where it does not, what it found aims
    # the others.
    meets = board.goal is not None and board.target is None and board.size <= MAX_COUNTED_HOLES
    searches = [_meet(board)] if meets else depth_first()
    orders = len(_orders(board))  # the depth-first searches, that count as one kind
    fewest = board.pegs(board.start)
    positions = 0
    beam_started = meets  # the search from both ends brings its own
    next_report = started + report_every
    # Each turn goes to the kind of search that has had the least processor time so far, the
    # depth-first searches in all their orders counting as one kind: a beam search gets as much
    # time as all of them, and a short turn of one costs the others no whole slice.
    used: Dict[Iterator, float] = {}
    share: Dict[Iterator, float] = {}
    while searches:
        if not beam_started and positions >= BEAM_AFTER:
            beam_started = True  # depth-first search is taking long: let a beam search join in
            searches.append(_beams(board))
            share[searches[-1]] = orders
        search = min(searches, key=lambda one: used.get(one, 0.0) / share.get(one, 1.0))
        turn = time.process_time()
        outcome = next(search)
        used[search] = used.get(search, 0.0) + time.process_time() - turn
        positions += SLICE if outcome is None else outcome[1]
        if outcome is None or isinstance(outcome[0], int) or outcome[0] == "progress":
            pegs = outcome[0] if outcome and isinstance(outcome[0], int) else fewest
            now = clock()
            if pegs < fewest:
                fewest = pegs
                yield Searching(positions, now - started, fewest, True)
            elif now >= next_report:
                next_report = now + report_every
                yield Searching(positions, now - started, fewest, False)
        elif outcome[0] == "solved":
            yield Solved(outcome[2], positions, clock() - started)
            return
        elif outcome[0] == "gave up":  # the beam found nothing; the depth-first searches go on
            searches.remove(search)
        elif outcome[0] == "edge":  # too big to meet: the other searches aim at the goal's side
            edge = outcome[2]
            searches = [_beams(board, edge), *depth_first(edge)]
            share[searches[0]] = orders
        elif outcome[0] == "proved":
            yield Impossible(outcome[2], positions, clock() - started)
            return
        else:
            searches = []  # a depth-first order has tried everything: so have the others
    yield Impossible(
        f"impossible: the search tried every sequence of jumps ({positions:,} position{'' if positions == 1 else 's'}, each once up to "
        "symmetry) and none ends in the goal"
        + (" (pruned by a pagoda function: no jump raises its total)" if weights else ""),
        positions,
        clock() - started,
    )


def _meet(board: Board) -> Iterator:
    """The search from both ends (meet.py), a level per turn: ("progress", positions) after each,
    then ("solved", positions, jumps), ("proved", positions, reason) when the two sides do not
    meet, or ("edge", positions, edge) when it outgrows its memory: the goal's side, for the
    depth-first searches to aim at."""
    from .meet import MeetInTheMiddle, TooBig  # numpy: only for a final pattern

    search = MeetInTheMiddle(board)
    counted = 0
    try:
        for outcome in search.run():
            made, counted = search.positions - counted, search.positions
            if outcome is None:
                yield ("progress", made)
            elif outcome:
                yield ("solved", made, outcome)
                return
            else:
                forward, backward = len(search.forward) - 1, len(search.backward) - 1
                yield (
                    "proved",
                    made,
                    f"impossible: searched from both ends, no position {forward} jump{'' if forward == 1 else 's'} "
                    f"from the start is {backward} jump{'' if backward == 1 else 's'} from the final pattern "
                    f"({search.positions:,} positions in all)",
                )
                return
    except TooBig:
        yield ("edge", search.positions - counted, search)


def _beams(board: Board, edge: Optional[MeetInTheMiddle] = None) -> Iterator:
    """Beam searches of growing width, each run whole in one turn (a level is much more work
    than a depth-first slice): ("progress", positions) after each width that found nothing,
    ("solved", positions, jumps) on success, or ("gave up", positions, None) after the widest.
    With an `edge`, they aim at the goal's side of a search from both ends."""
    from .beam import BeamSearch  # numpy: only when a search runs this long

    for width in BEAM_WIDTHS:
        beam = BeamSearch(board, width, edge=edge)
        for outcome in beam.run():
            if outcome:
                yield ("solved", beam.positions, outcome)
                return
        yield ("progress", beam.positions)
    yield ("gave up", 0, None)


# Positions one search examines before the next takes a turn (in C, about a tenth of a second).
SLICE = 2000
KERNEL_SLICE = 200_000
# Positions the depth-first searches examine before a beam search joins them.
BEAM_AFTER = 10_000
BEAM_WIDTHS = (2_000, 4_500, 10_000, 22_000, 50_000, 110_000, 200_000)  # each about twice the last's work
# Dead positions remembered (8 orientations each) before the memo starts afresh: about 150 MB.
MAX_DEAD = 2_000_000


def _depth_first(
    board: Board, kernel: Optional[Kernel], weights: Optional[List[float]]
) -> Callable[..., List[Iterator]]:
    """Makes the depth-first searches, one per jump order, all sharing one memory of dead
    positions: in C with a kernel, else in Python. Called again with an `edge` when the search
    from both ends outgrows its memory, to make searches that stop on the goal's side of it."""
    if (
        kernel is not None
        and board.pegs(board.start) > board.final_pegs
        and len(board.symmetries) <= kernel.most_symmetries
    ):
        # A small board has few positions: its table need not be the full size (nor zeroed).
        dead_positions = kernel.dead_positions(min(DEAD_BYTES, 64 << min(board.size, 40)))
        pagodas = _pagodas(board, kernel.most_pagodas)

        def compiled(edge: Optional[MeetInTheMiddle] = None) -> List[Iterator]:
            return [_hunt(kernel, board, jumps, dead_positions, pagodas, edge) for jumps in _orders(board)]

        return compiled
    images = Symmetries(board).images
    dead: Set[int] = set()

    def interpreted(edge: Optional[MeetInTheMiddle] = None) -> List[Iterator]:
        return [_search(board, jumps, images, dead, weights, edge) for jumps in _orders(board)]

    return interpreted


def _pagodas(board: Board, most: int) -> List[List[float]]:
    """Pagoda functions that bound the goal: towards the target hole, or towards each peg of a
    final pattern (a position outweighed by the pattern under any of them cannot reach it)."""
    if board.goal is None:
        return []
    holes = [hole for hole in range(board.size) if board.goal >> hole & 1]
    return [weights for hole in holes[:most] if (weights := pagoda_towards(board, hole))]


DEAD_BYTES = 64 << 20  # the compiled searches' memory of dead positions: 4 million of them


def _hunt(
    kernel: Kernel,
    board: Board,
    jumps: Sequence[Jump],
    dead: DeadPositions,
    pagodas: List[List[float]],
    edge: Optional[MeetInTheMiddle],
) -> Iterator:
    """`_search` run by the compiled kernel, `KERNEL_SLICE` positions a turn: the same events,
    ("progress", positions) in place of None."""
    last_depth = board.pegs(board.start) - board.final_pegs if edge is None else edge.edge_depth
    hunt = kernel.hunt(
        board, jumps, dead, last_depth=last_depth, pagodas=pagodas, edge=None if edge is None else edge.backward[-1]
    )
    fewest, counted = board.pegs(board.start), 0
    while True:
        status = hunt.run(KERNEL_SLICE)
        made, counted = hunt.positions - counted, hunt.positions
        if status == "solved":
            path = hunt.path
            if edge is not None:
                path += edge.finish_from(replay(board, path)[-1]) or ()
            yield ("solved", made, path)
            return
        if status == "exhausted":
            yield ("exhausted", made, None)
            return
        if hunt.fewest < fewest:
            fewest = hunt.fewest
            yield (fewest, made)
        else:
            yield ("progress", made)


def _search(
    board: Board,
    jumps: Sequence[Jump],
    images: Callable[[int], List[int]],
    dead: Set[int],
    weights: Optional[List[float]] = None,
    edge: Optional[MeetInTheMiddle] = None,
) -> Iterator:
    """One depth-first search in one jump order. Yields None after each `SLICE` positions,
    (fewest pegs, positions since the last yield) on a new record, then ("solved", n, jumps) or
    ("exhausted", n, None). With an `edge` (a search from both ends that outgrew its memory), the
    search stops at its `edge_depth`: a position on the goal's side there is won, any other is a
    dead end.

    `dead` holds every orientation of each position proved hopeless: checking a child is then
    one set lookup, and the symmetry work is done once per dead position, not once per child.
    With pagoda `weights`, a child whose pegs weigh less than the goal is never entered."""
    if weights is not None and board.target is not None:
        floor = weights[board.target] - 1e-9
        change = [weights[jump.end] - weights[jump.start] - weights[jump.over] for jump in jumps]
    else:
        floor, change = float("-inf"), [0.0] * len(jumps)
    weight = sum(weights[hole] for hole in range(board.size) if board.start >> hole & 1) if weights else 0.0
    fewest = board.pegs(board.start)
    # Every jump takes one peg: a position with as few pegs as the goal is the goal or a dead end
    # (a final pattern of 20 pegs is not searched for among positions of 19, 18, ... pegs).
    last_depth = fewest - board.final_pegs if edge is None else edge.edge_depth
    positions = 0
    path: List[Jump] = []
    # An explicit stack instead of recursion: (position, index of the next jump to try).
    stack: List[Tuple[int, int, float]] = [(board.start, 0, weight)]
    while stack:
        position, next_jump, weight = stack[-1]
        for index in range(next_jump, len(jumps)):
            jump = jumps[index]
            if position & jump.needs != jump.needs or position >> jump.end & 1:
                continue
            child = position ^ jump.flips
            if child in dead or weight + change[index] < floor:
                continue
            positions += 1
            stack[-1] = (position, index + 1, weight)
            path.append(jump)
            if board.is_won(child):
                yield ("solved", positions, tuple(path))
                return
            if len(path) >= last_depth:
                ending = edge.finish_from(child) if edge is not None else None
                if ending is not None:
                    yield ("solved", positions, tuple(path) + ending)
                    return
                path.pop()
                continue
            stack.append((child, 0, weight + change[index]))
            pegs = board.pegs(child)
            if pegs < fewest:
                fewest = pegs
                yield (pegs, positions)
                positions = 0
            elif positions >= SLICE:
                yield None
                positions = 0
            break
        else:
            stack.pop()
            if len(dead) > MAX_DEAD:
                dead.clear()  # bound the memory: forgetting only costs time, never correctness
            dead.update(images(position))
            if path:
                path.pop()
    yield ("exhausted", positions, None)


def _orders(board: Board) -> List[List[Jump]]:
    """Board order, then outside-in (jumps from the holes farthest from the middle first)."""
    rows = [row for row, _ in board.cells]
    cols = [col for _, col in board.cells]
    middle = ((min(rows) + max(rows)) / 2, (min(cols) + max(cols)) / 2)

    def distance(hole: int) -> float:
        row, col = board.cells[hole]
        return abs(row - middle[0]) + abs(col - middle[1])

    return [list(board.jumps), sorted(board.jumps, key=lambda jump: -distance(jump.start))]


def replay(board: Board, jumps: Sequence[Jump]) -> List[int]:
    """The positions after each jump, checking each is legal (ValueError if not)."""
    position = board.start
    positions = []
    for number, jump in enumerate(jumps, 1):
        if jump not in board.jumps or position & jump.needs != jump.needs or position >> jump.end & 1:
            raise ValueError(f"jump {number} ({board.describe(jump)}) is not legal here")
        position ^= jump.flips
        positions.append(position)
    return positions


def solution_text(board: Board, jumps: Sequence[Jump]) -> str:
    """The solution as the seed's result.txt laid it out, plus a one-line list of the jumps."""
    parts = ["Starting Board\n", board.render(board.start), "\n", "Start Solution\n\n"]
    for position in replay(board, jumps):
        parts += [board.render(position), "\n"]
    parts.append("End Solution\n\n")
    parts.append(f"Jumps ({len(jumps)}): {' '.join(board.describe(jump) for jump in jumps)}\n")
    return "".join(parts)

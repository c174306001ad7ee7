"""Panguru: coloured pebbles on coloured plates with one hole; a move takes one pebble along a
line of the board into the hole. Bring every pebble onto a plate of its colour in the fewest moves.

The file holds the plates as one string of colours (one character per position), the pebbles as
another (``-`` the hole), then the move table: one line per position, in order, listing the
positions whose pebble can move into that position when it is the hole (``[1, 2, 3]`` as in the
seed, or ``1 2 3``; an optional ``N:`` in front must be the position). The table must go both
ways. Without a table, a 15-position board uses the seed's (Panguru's triangle with its extra
centre-line move). ``#`` starts a comment; ``plates:``/``pebbles:`` labels are allowed.

The answer is the fewest moves, how many optimal move sequences there are, one of them (the
positions moved, in order: each move names the pebble's position, which becomes the hole), and
the seed's "hint": the next moves of an optimal solution from the file's position.

The search is iterative-deepening A* with an admissible bound, memoised on (position, moves
left) so that counting every optimal sequence costs no more than finding one: with free moves
anywhere, sorting pebbles with a hole takes exactly one move per misplaced pebble plus one per
cycle of misplaced colours the hole is not in (the best grouping of equal colours makes each
connected group of colours one cycle), and a board with fewer lines can only need more.

    puzzle = parse(EXAMPLE)
    for event in solve(puzzle, all_solutions=False):
        ...
"""

from __future__ import annotations

import re
import sys
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from .events import Event, Finished, Found, Progress, PuzzleFileError

__all__ = [
    "ABOUT",
    "ALL_BY_DEFAULT",
    "EXAMPLE",
    "NAME",
    "SEED_MOVES",
    "Panguru",
    "parse",
    "render",
    "solution_json",
    "solve",
    "summary_json",
]

NAME = "panguru"
ABOUT = "Panguru: fewest moves to bring every pebble onto its colour, how many ways, and the next move (hint)"
ALL_BY_DEFAULT = False

# Panguru's triangle of 15 positions: SEED_MOVES[i] are the positions whose pebble can move to i.
SEED_MOVES: Tuple[Tuple[int, ...], ...] = (
    (1, 2, 3, 4, 5, 6, 9, 10, 12, 14),
    (0, 2, 3, 4, 6, 8, 10, 13),
    (0, 1, 4, 5, 7, 9, 11, 14),
    (0, 1, 4, 5, 6, 7, 10, 12),
    (0, 1, 2, 3, 5, 7, 8, 11, 12, 13),
    (0, 2, 3, 4, 8, 9, 12, 14),
    (0, 1, 3, 7, 8, 9, 10, 11),
    (2, 3, 4, 6, 8, 9, 11, 12),
    (1, 4, 5, 6, 7, 9, 12, 13),
    (0, 2, 5, 6, 7, 8, 13, 14),
    (0, 1, 3, 6, 11, 12, 13, 14),
    (2, 4, 6, 7, 10, 12, 13, 14),
    (0, 3, 4, 5, 7, 8, 10, 11, 13, 14),
    (1, 4, 8, 9, 10, 11, 12, 14),
    (0, 2, 5, 9, 10, 11, 12, 13),
)

EXAMPLE = (
    "# The seed's Panguru board: plates, pebbles (- is the hole), then where each position's\n"
    "# pebble can come from when it is the hole (the seed's move table).\n"
    "plates:  WCBRBOGYGPCORPY\n"
    "pebbles: -PCBRYOGYGBCORP\n" + "".join(f"{list(moves)}\n" for moves in SEED_MOVES)
)

HOLE = "-"
Figures = Tuple[int, int, int]


@dataclass(frozen=True)
class Panguru:
    """A board: plate colours, pebble colours (HOLE for the hole), and the move table."""

    plates: str
    pebbles: str
    moves: Tuple[Tuple[int, ...], ...]
    source: str = "example"


def parse(text: str, source: str = "example", **options: Any) -> Panguru:
    """Read plates, pebbles and the move table; raises `PuzzleFileError` naming the line."""
    if options:
        raise PuzzleFileError(f"panguru takes no options (got {', '.join(sorted(options))}): remove them")
    lines = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if line:
            lines.append((number, line))
    if len(lines) < 2:
        raise PuzzleFileError(
            f"{source} needs the plates on one line and the pebbles on the next ('-' for the hole), e.g. "
            "WCBRBOGYGPCORPY then -PCBRYOGYGBCORP"
        )
    (plates_line, plates), (pebbles_line, pebbles) = lines[0], lines[1]
    plates = re.sub(r"^plates\s*:?\s*", "", plates, flags=re.IGNORECASE)
    pebbles = re.sub(r"^pebbles\s*:?\s*", "", pebbles, flags=re.IGNORECASE)
    if not re.fullmatch(r"[^\s,\[\]-]{2,}", plates):
        raise PuzzleFileError(
            f"{source} line {plates_line}: the plates {plates!r} are not a string of colours: write one "
            "character per position, no spaces, e.g. WCBRBOGYGPCORPY"
        )
    if not re.fullmatch(r"[^\s,\[\]]+", pebbles) or pebbles.count(HOLE) != 1:
        raise PuzzleFileError(
            f"{source} line {pebbles_line}: the pebbles {pebbles!r} need exactly one '-' (the hole) among "
            "one colour character per position, e.g. -PCBRYOGYGBCORP"
        )
    if len(pebbles) != len(plates):
        raise PuzzleFileError(
            f"{source} line {pebbles_line} has {len(pebbles)} positions but the plates (line {plates_line}) have "
            f"{len(plates)}: give one pebble (or the hole) per plate"
        )
    short = Counter(pebbles.replace(HOLE, "")) - Counter(plates)
    if short:
        colour = sorted(short)[0]
        raise PuzzleFileError(
            f"{source} line {pebbles_line} has more {colour!r} pebbles than there are {colour!r} plates: every "
            "pebble needs a plate of its colour"
        )
    size = len(plates)
    table = lines[2:]
    if not table:
        if size != len(SEED_MOVES):
            raise PuzzleFileError(
                f"{source} has no move table: after the pebbles, give one line per position ({size}) listing "
                "the positions whose pebble can move into it"
            )
        return Panguru(plates, pebbles, SEED_MOVES, source)
    if len(table) != size:
        raise PuzzleFileError(
            f"{source} line {table[-1][0] if len(table) > size else table[0][0]}: the move table has {len(table)} "
            f"lines but the board has {size} positions: give one line per position, in order"
        )
    return Panguru(plates, pebbles, _parse_moves(table, size, source), source)


def _parse_moves(table: List[Tuple[int, str]], size: int, source: str) -> Tuple[Tuple[int, ...], ...]:
    """The move table, one (line number, text) per position in order: the positions whose pebble
    can move into each; `PuzzleFileError` naming the line if a list is malformed or one-way."""
    moves: List[Tuple[int, ...]] = []
    for position, (number, line) in enumerate(table):
        match = re.fullmatch(r"(?:(\d+)\s*:)?\s*\[?([\d,\s]*)\]?", line)
        if not match:
            raise PuzzleFileError(
                f"{source} line {number} is not a list of positions: {line!r}; write e.g. [1, 2, 3] or 1 2 3"
            )
        if match.group(1) is not None and int(match.group(1)) != position:
            raise PuzzleFileError(
                f"{source} line {number} is labelled {match.group(1)} but is the line of position {position}: "
                "give the move table in position order"
            )
        targets = tuple(int(part) for part in re.split(r"[\s,]+", match.group(2).strip()) if part)
        for target in targets:
            if target == position or not 0 <= target < size or targets.count(target) > 1:
                raise PuzzleFileError(
                    f"{source} line {number} (position {position}) lists {target}: list each other position "
                    f"(0 to {size - 1}) at most once"
                )
        moves.append(targets)
    for position, (number, _) in enumerate(table):
        for target in moves[position]:
            if position not in moves[target]:
                raise PuzzleFileError(
                    f"{source} line {number}: position {position} lists {target} but position {target} does not "
                    f"list {position}: a pebble that can move one way can move back, so list both"
                )
    return tuple(moves)


class _Board:
    """The puzzle in numbers: colours are small integers (the hole is 0, the plate colour it
    ends on is `spare`), a position is a bytes string of them.

    A move changes two places, so the figures the bound needs (misplaced pebbles, and how many of
    them involve the hole's colour) are carried along and updated from tables, and only the
    grouping of colours into cycles is worked out afresh, when the rest does not already decide."""

    def __init__(self, puzzle: Panguru) -> None:
        colours = sorted(set(puzzle.plates))
        number = {colour: index + 1 for index, colour in enumerate(colours)}
        self.moves = puzzle.moves
        self.plates = bytes(number[colour] for colour in puzzle.plates)
        # The plate colour left over once every pebble has its plate: the hole ends on one of those.
        (spare,) = (Counter(puzzle.plates) - Counter(puzzle.pebbles.replace(HOLE, ""))).keys()
        self.spare = number[spare]
        self.start = bytes(0 if char == HOLE else number[char] for char in puzzle.pebbles)
        self.codes = len(colours) + 1  # pebble codes: 0 the hole, then the colours
        # Per place and pebble code: 1 if misplaced there; and 1 if misplaced and of the hole's colour.
        self.misplaced = [[int(self._wrong(plate, code)) for code in range(self.codes)] for plate in self.plates]
        self.touches_spare = [
            [int(code != 0 and self._wrong(plate, code) and self.spare in (plate, code)) for code in range(self.codes)]
            for plate in self.plates
        ]
        self.hole_on_spare = [plate == self.spare for plate in self.plates]
        # 1 where a misplaced pebble has no line to any plate of its colour: it must move twice.
        self.far = [
            [
                int(
                    code != 0
                    and self._wrong(plate, code)
                    and all(self.plates[other] != code for other in self.moves[place])
                )
                for code in range(self.codes)
            ]
            for place, plate in enumerate(self.plates)
        ]
        self._groups: Dict[bytes, int] = {}

    def _wrong(self, plate: int, code: int) -> bool:
        return code != plate and not (code == 0 and plate == self.spare)

    def figures(self, position: bytes) -> Figures:
        """(misplaced places, misplaced pebbles involving the hole's colour, misplaced pebbles
        with no line to their colour) of a position."""
        return (
            sum(self.misplaced[place][code] for place, code in enumerate(position)),
            sum(self.touches_spare[place][code] for place, code in enumerate(position)),
            sum(self.far[place][code] for place, code in enumerate(position)),
        )

    def cycle_bound(self, hole: int, figures: Figures) -> int:
        """The free-move bound with every misplaced colour taken as one cycle (a lower bound of it)."""
        misplaced, spare, _ = figures
        if not misplaced:
            return 0
        if not self.hole_on_spare[hole]:
            return misplaced - 1  # the hole's own cycle costs one move less than its length
        return misplaced + (0 if spare else 1)  # the hole can join a cycle through its colour

    def line_bound(self, hole: int, figures: Figures) -> int:
        """One move per misplaced pebble, two for those with no line to a plate of their colour."""
        return figures[0] - (0 if self.hole_on_spare[hole] else 1) + figures[2]

    def bound(self, position: bytes, hole: int, figures: Figures) -> int:
        """Moves needed at least: the larger of the free-move count (see the module docstring)
        and the line bound."""
        if figures[0] == 0:
            return 0
        groups = self._groups.get(position)
        if groups is None:
            groups = self._count_groups(position)
            if len(self._groups) < 1_000_000:
                self._groups[position] = groups
        return max(self.cycle_bound(hole, figures) + groups - 1, self.line_bound(hole, figures))

    def _count_groups(self, position: bytes) -> int:
        """How many connected groups the misplaced (plate colour, pebble colour) pairs form."""
        links = [0] * self.codes
        for plate, code in zip(self.plates, position):
            if code == 0:
                if plate == self.spare:
                    continue
                code = self.spare
            elif code == plate:
                continue
            links[plate] |= 1 << code
            links[code] |= 1 << plate
        unseen = 0
        for colour, link in enumerate(links):
            if link:
                unseen |= 1 << colour
        groups = 0
        while unseen:
            group = unseen & -unseen
            grown = 0
            while grown != group:
                grown = group
                rest = group
                while rest:
                    bit = rest & -rest
                    rest ^= bit
                    group |= links[bit.bit_length() - 1]
            unseen &= ~group
            groups += 1
        return groups


def _move(position: bytes, hole: int, pebble: int) -> bytes:
    """The position after the pebble at `pebble` moves into the hole."""
    cells = bytearray(position)
    cells[hole] = cells[pebble]
    cells[pebble] = 0
    return bytes(cells)


class _Counter:
    """How many move sequences of exactly n moves reach the goal from a position, memoised, with
    branches cut where the bound says n moves cannot be enough."""

    def __init__(self, board: _Board) -> None:
        self.board = board
        self.memo: Dict[Tuple[bytes, int], int] = {}
        self.nodes = 0
        # A bound can exceed the quick one by at most one per colour group beyond the first.
        self.spread = board.codes

    def _children(self, position: bytes, hole: int, figures: Figures) -> Iterator[Tuple[int, bytes, Figures]]:
        misplaced, touches, far = self.board.misplaced, self.board.touches_spare, self.board.far
        wrong, spare, distant = figures
        for pebble in self.board.moves[hole]:
            code = position[pebble]
            after = (
                wrong - misplaced[hole][0] - misplaced[pebble][code] + misplaced[hole][code] + misplaced[pebble][0],
                spare - touches[hole][0] - touches[pebble][code] + touches[hole][code] + touches[pebble][0],
                distant - far[pebble][code] + far[hole][code],
            )
            yield pebble, _move(position, hole, pebble), after

    def fits(self, child: bytes, pebble: int, after: Figures, moves: int) -> bool:
        """Whether the bound allows reaching the goal from `child` in `moves` moves."""
        cycles = self.board.cycle_bound(pebble, after)
        if cycles > moves or self.board.line_bound(pebble, after) > moves:
            return False
        if cycles + self.spread <= moves:
            return True
        return self.board.bound(child, pebble, after) <= moves

    def count(self, position: bytes, hole: int, figures: Tuple[int, int], left: int) -> int:
        key = (position, left)
        known = self.memo.get(key)
        if known is not None:
            return known
        self.nodes += 1
        total = 0
        for pebble, child, after in self._children(position, hole, figures):
            if self.fits(child, pebble, after, left - 1):
                total += self.count(child, pebble, after, left - 1) if left > 1 else 1
        self.memo[key] = total
        return total

    def sequences(self, position: bytes, hole: int, figures: Tuple[int, int], left: int) -> Iterator[List[int]]:
        """Every optimal sequence, in move-table order, from what `count` remembered."""
        if left == 0:
            yield []
            return
        for pebble, child, after in self._children(position, hole, figures):
            if left == 1:
                if after[0] == 0:
                    yield [pebble]
            elif self.memo.get((child, left - 1)):
                for rest in self.sequences(child, pebble, after, left - 1):
                    yield [pebble, *rest]


def solve(
    puzzle: Panguru,
    *,
    all_solutions: bool,
    resume: Optional[Dict[str, Any]] = None,
    clock: Callable[[], float] = time.perf_counter,
    report_every: float = 1.0,
    max_moves: int = 200,
) -> Iterator[Event]:
    """Deepen the move budget from the bound until some sequence fits; yield `Progress` per
    budget tried (its state resumes at that budget), `Found` for one optimal sequence (every one
    if `all_solutions`), then `Finished` whose `solutions` is how many optimal sequences there are
    and whose extra holds `moves` and `hint` (each optimal first move with its sequence count).
    A position that cannot be solved ends with 0 solutions: `complete` is true when that is
    proved (the hole cannot reach a misplaced pebble), false when `max_moves` ran out."""
    started = clock()
    board = _Board(puzzle)
    counter = _Counter(board)
    hole = board.start.index(0)
    figures = board.figures(board.start)
    budget = board.bound(board.start, hole, figures)
    if resume and isinstance(resume.get("budget"), int):
        budget = max(budget, resume["budget"])
    if not _reachable(board, hole):
        yield Finished(0, True, 0, clock() - started, {"moves": None, "hint": []})
        return
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, max_moves + 100))
    try:
        while True:
            yield Progress(counter.nodes, clock() - started, 0, None, {"budget": budget})
            total = counter.count(board.start, hole, figures, budget) if budget else 1
            if total or budget >= max_moves:
                break
            budget += 1
    finally:
        sys.setrecursionlimit(limit)
    if not total:
        yield Finished(0, False, counter.nodes, clock() - started, {"moves": None, "hint": []})
        return
    for sequence in counter.sequences(board.start, hole, figures, budget):
        yield Found(tuple(sequence), counter.nodes, clock() - started)
        if not all_solutions:
            break
    hint = []
    for pebble, child, after in counter._children(board.start, hole, figures):
        ways = counter.memo.get((child, budget - 1), 0) if budget > 1 else int(after[0] == 0)
        if ways:
            hint.append({"move": pebble, "sequences": ways})
    yield Finished(total, True, counter.nodes, clock() - started, {"moves": budget, "hint": hint})


def _reachable(board: _Board, hole: int) -> bool:
    """Whether the hole can travel to every misplaced pebble (else no sequence can fix it)."""
    seen = {hole}
    todo = [hole]
    while todo:
        here = todo.pop()
        for there in board.moves[here]:
            if there not in seen:
                seen.add(there)
                todo.append(there)
    return all(
        position in seen
        for position, (plate, pebble) in enumerate(zip(board.plates, board.start))
        if pebble and pebble != plate
    )


def _positions(puzzle: Panguru, sequence: Sequence[int]) -> List[str]:
    """The pebbles string after each move, the start first."""
    pebbles = list(puzzle.pebbles)
    found = ["".join(pebbles)]
    for pebble in sequence:
        hole = pebbles.index(HOLE)
        pebbles[hole], pebbles[pebble] = pebbles[pebble], HOLE
        found.append("".join(pebbles))
    return found


def render(puzzle: Panguru, solution: Sequence[int]) -> str:
    """The moves as the seed writes them (the hole, then each position moved: 0-3-5), and the
    pebbles after each move under the plates."""
    hole = puzzle.pebbles.index(HOLE)
    lines = [
        f"{len(solution)} move{'' if len(solution) == 1 else 's'}: " + "-".join(str(p) for p in (hole, *solution)),
        f"plates   {puzzle.plates}",
    ]
    for step, pebbles in enumerate(_positions(puzzle, solution)):
        lines.append(f"{'start' if step == 0 else f'move {step}':<8} {pebbles}")
    return "\n".join(lines)


def solution_json(puzzle: Panguru, solution: Sequence[int]) -> object:
    """The positions moved, in order (each move's pebble position, which becomes the hole)."""
    return list(solution)


def summary_json(puzzle: Panguru, finished: Finished) -> Dict[str, Any]:
    """`moves`: the fewest moves (null when unsolved); `hint`: each optimal first move with how
    many optimal sequences start with it."""
    return {"moves": finished.extra.get("moves"), "hint": finished.extra.get("hint", [])}

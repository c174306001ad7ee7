"""The draught-board (checkerboard) puzzle: tile a board of black and white squares with stones
cut from it, each stone turned or flipped as needed, colours matching the board's.

The stones file holds one stone after another, a row per line, ``B`` black, ``W`` white and
``_`` not part of the stone, separated by commas (or nothing), stones separated by a line of
``=``; ``#`` starts a comment. The board is ``ROWSxCOLS`` from the ``board`` option, by default
the square whose area is the stones' total; its top-left square is black.

Every distinct tiling is counted once: two identical stones (the same shape and colours in some
orientation) swapped give the same tiling. The search is exact cover over bitsets (Knuth's
Algorithm X with a bitset in place of the dancing links): each node keeps the placements still
possible, counts per square how many cover it with bit-sliced counters (a few big-integer
operations per placement, not a loop per square), and branches on the square with the fewest
(or on a one-off stone with fewer still). Tilings are also counted up to the board's
colour-preserving symmetries, by Burnside's lemma, so nothing has to be remembered.

    puzzle = parse(EXAMPLE)            # the seed's 12 stones on 8x8
    for event in solve(puzzle, all_solutions=True):
        ...
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple

from .events import Event, Finished, Found, Progress, PuzzleFileError

__all__ = [
    "ABOUT",
    "ALL_BY_DEFAULT",
    "EXAMPLE",
    "NAME",
    "Board",
    "Placement",
    "Stone",
    "parse",
    "render",
    "solution_json",
    "solve",
    "summary_json",
]

NAME = "checkerboard"
ABOUT = "tile a draught board with its stones: every distinct tiling, and how many up to symmetry"
ALL_BY_DEFAULT = True

# The seed's 12 stones of an 8x8 draught board (the first and last are identical).
EXAMPLE = """\
# The seed's draught-board puzzle: 12 stones of an 8x8 board, black top-left.
B,_,_
W,B,W
_,_,B
============
W,B,W,B
_,W,_,_
============
_,W,B,_
W,B,W,B
_,W,B,_
============
B,W,_,_
_,B,W,B
============
B,W,B,W
W,_,_,_
============
W,B,W,B
B,_,_,_
============
B,W
_,B
_,W
============
W,B,W
B,W,_
W,_,_
============
B,W,B,W
_,B,_,_
============
W,B,_,_
_,W,B,W
============
B,W,B,W
_,B,W,_
============
B,_,_
W,B,W
_,_,B
============
"""

BLACK, WHITE = "B", "W"
Cells = FrozenSet[Tuple[int, int, str]]


@dataclass(frozen=True)
class Stone:
    """One stone as written: its squares (row, column, colour) and the file line it starts on."""

    number: int  # 1-based, in file order
    line: int
    cells: Cells


@dataclass(frozen=True)
class Board:
    """The stones and the board they tile."""

    stones: Tuple[Stone, ...]
    rows: int
    cols: int
    source: str = "example"


@dataclass(frozen=True)
class Placement:
    """One stone on the board: which stone (1-based, file order) and the squares it covers."""

    stone: int
    cells: Tuple[Tuple[int, int], ...]


def _board_size(value: Any, area: int, source: str) -> Tuple[int, int]:
    if value is None:
        side = int(round(area**0.5))
        if side * side != area:
            raise PuzzleFileError(
                f"{source}: the stones cover {area} squares, which is not a square board: give the board "
                "size as ROWSxCOLS (e.g. board=8x8)"
            )
        return side, side
    if isinstance(value, int):
        rows = cols = value
    else:
        match = re.fullmatch(r"\s*(\d+)\s*(?:[xX*]\s*(\d+))?\s*", str(value))
        if not match:
            raise PuzzleFileError(f"board size {value!r} is not ROWSxCOLS: write e.g. 8x8, or 8 for a square")
        rows = int(match.group(1))
        cols = int(match.group(2) or rows)
    if rows < 1 or cols < 1:
        raise PuzzleFileError(f"board size {value!r} has no squares: write e.g. 8x8")
    if rows * cols != area:
        raise PuzzleFileError(
            f"{source}: the stones cover {area} squares but a {rows}x{cols} board has {rows * cols}: "
            "every square must be covered exactly once, so fix the board size or the stones"
        )
    return rows, cols


def parse(text: str, source: str = "example", board: Any = None, **options: Any) -> Board:
    """Read the stones file; raises `PuzzleFileError` naming the line that is not a stone row."""
    if options:
        raise PuzzleFileError(f"checkerboard takes only the board option (got {', '.join(sorted(options))})")
    stones: List[Stone] = []
    rows: List[Tuple[int, List[str]]] = []

    def close() -> None:
        if not rows:
            return
        width = len(rows[0][1])
        for number, row in rows:
            if len(row) != width:
                raise PuzzleFileError(
                    f"{source} line {number} has {len(row)} squares but line {rows[0][0]} has {width}: "
                    "write every row of a stone at the same width, _ for a square not in it"
                )
        cells = frozenset((r, c, char) for r, (_, row) in enumerate(rows) for c, char in enumerate(row) if char != "_")
        if not cells:
            raise PuzzleFileError(f"{source} line {rows[0][0]}: the stone has no squares: give it B or W squares")
        for r, c, colour in cells:
            for dr, dc in ((0, 1), (1, 0)):
                if (r + dr, c + dc, colour) in cells:
                    raise PuzzleFileError(
                        f"{source} line {rows[0][0] + r + dr}: the stone has two {colour} squares side by side, which "
                        "no draught board has: colours must alternate"
                    )
        stones.append(Stone(len(stones) + 1, rows[0][0], cells))
        rows.clear()

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if re.fullmatch(r"=+", line):
            close()
            continue
        row = [part for part in re.split(r"[\s,]+", line) if part]
        if len(row) == 1 and len(row[0]) > 1:
            row = list(row[0])
        if any(part not in ("B", "W", "_") for part in row):
            raise PuzzleFileError(
                f"{source} line {number} is not a stone row: {raw.strip()!r}; use B (black), W (white) and _ "
                "(not part of the stone), and a line of = between stones"
            )
        rows.append((number, row))
    close()
    if not stones:
        raise PuzzleFileError(
            f"{source} has no stones: write each stone's rows of B, W and _, a line of = between them"
        )
    area = sum(len(stone.cells) for stone in stones)
    size = _board_size(board, area, source)
    return Board(tuple(stones), size[0], size[1], source)


def _orientations(cells: Cells) -> FrozenSet[Cells]:
    """The stone turned and flipped every way (at most 8), each moved to the top-left corner."""
    found = set()
    current = [(r, c, colour) for r, c, colour in cells]
    for _ in range(2):
        for _ in range(4):
            current = [(c, -r, colour) for r, c, colour in current]  # a quarter turn
            top = min(r for r, _, _ in current)
            left = min(c for _, c, _ in current)
            found.add(frozenset((r - top, c - left, colour) for r, c, colour in current))
        current = [(r, -c, colour) for r, c, colour in current]  # flip over
    return frozenset(found)


def _bits(mask: int) -> Iterator[int]:
    """The positions of the set bits, lowest first."""
    while mask:
        bit = mask & -mask
        yield bit.bit_length() - 1
        mask ^= bit


def _popcount(value: int) -> int:
    return bin(value).count("1")


if hasattr(int, "bit_count"):  # Python 3.10+: a C popcount
    _popcount = int.bit_count  # type: ignore[assignment]  # noqa: F811


def _colour(row: int, col: int) -> str:
    return BLACK if (row + col) % 2 == 0 else WHITE


def _symmetries(rows: int, cols: int) -> List[List[int]]:
    """The board's symmetries that keep every square's colour, each as a square -> square map."""
    maps = [
        lambda r, c: (r, c),
        lambda r, c: (rows - 1 - r, cols - 1 - c),
        lambda r, c: (rows - 1 - r, c),
        lambda r, c: (r, cols - 1 - c),
    ]
    if rows == cols:
        maps += [
            lambda r, c: (c, r),
            lambda r, c: (cols - 1 - c, rows - 1 - r),
            lambda r, c: (c, rows - 1 - r),
            lambda r, c: (cols - 1 - c, r),
        ]
    found = []
    for image in maps:
        cells = [image(r, c) for r in range(rows) for c in range(cols)]
        if all(_colour(*cells[r * cols + c]) == _colour(r, c) for r in range(rows) for c in range(cols)):
            found.append([r * cols + c for r, c in cells])
    return found


class _Search:
    """The exact-cover search over one board, resumable from a branch path.

    Placements are numbered, and every set of placements is one big integer with a bit per
    placement: `covers[square]` the placements covering a square, `clashes[p]` those that
    overlap placement p. Placing p is then one AND-NOT on the set of placements still possible,
    and a square's candidates are counted with one AND and a popcount."""

    def __init__(self, puzzle: Board) -> None:
        self.rows, self.cols = puzzle.rows, puzzle.cols
        squares = self.rows * self.cols
        # Identical stones are one type with a count, so swapping them never makes a new tiling.
        kinds: Dict[FrozenSet[Cells], List[int]] = {}
        for stone in puzzle.stones:
            kinds.setdefault(_orientations(stone.cells), []).append(stone.number)
        self.type_stones: List[List[int]] = list(kinds.values())
        self.counts = [len(numbers) for numbers in self.type_stones]
        self.placements: List[Tuple[int, int]] = []  # (mask of squares, type)
        for kind, orientations in enumerate(kinds):
            masks = set()
            for shape in orientations:
                height = max(r for r, _, _ in shape) + 1
                width = max(c for _, c, _ in shape) + 1
                for top in range(self.rows - height + 1):
                    for left in range(self.cols - width + 1):
                        if all(_colour(top + r, left + c) == colour for r, c, colour in shape):
                            masks.add(sum(1 << ((top + r) * self.cols + left + c) for r, c, _ in shape))
            self.placements += [(mask, kind) for mask in sorted(masks)]
        self.covers = [0] * squares
        self.of_type = [0] * len(self.counts)
        for index, (mask, kind) in enumerate(self.placements):
            self.of_type[kind] |= 1 << index
            for square in _bits(mask):
                self.covers[square] |= 1 << index
        self.clashes = []
        for mask, _ in self.placements:
            clash = 0
            for square in _bits(mask):
                clash |= self.covers[square]
            self.clashes.append(clash)
        self.full = (1 << squares) - 1
        self.symmetries = _symmetries(self.rows, self.cols)
        self.nodes = 0
        self.stack: List[List[int]] = []
        self.replay: List[int] = []

    def _options(self, filled: int, alive: int, remaining: List[int]) -> int:
        """The placements to branch on at a node (0 when the node is dead): those covering the
        square with the fewest candidates, or those of a one-off stone with fewer still."""
        fewest, square = 1 << 30, -1
        empty = self.full & ~filled
        while empty:
            bit = empty & -empty
            empty ^= bit
            count = _popcount(alive & self.covers[bit.bit_length() - 1])
            if count < fewest:
                fewest, square = count, bit.bit_length() - 1
                if count <= 1:
                    break
        if fewest == 0:
            return 0  # a square nothing can cover any more
        branch = self.covers[square]
        for kind, count in enumerate(remaining):
            if count:
                places = _popcount(alive & self.of_type[kind])
                if places < count:
                    return 0  # a stone with too few places left
                if count == 1 and places < fewest:
                    fewest, branch = places, self.of_type[kind]
        return alive & branch

    def run(self, remaining: List[int]) -> Iterator[Optional[List[Tuple[int, int]]]]:
        """Yield each tiling (a list of (mask, type)), and None every 1024 nodes so the caller
        can report progress. `self.stack` holds a frame per depth: [filled, alive, options not
        yet tried, how many options, index of the option being tried, that placement]."""
        stack = self.stack
        chosen: List[int] = []
        pending: Optional[Tuple[int, int]] = (0, (1 << len(self.placements)) - 1)
        while True:
            if pending is not None:
                filled, alive = pending
                pending = None
                self.nodes += 1
                if not self.nodes & 1023:
                    yield None
                if filled == self.full:
                    yield [self.placements[index] for index in chosen]
                else:
                    options = self._options(filled, alive, remaining)
                    if options:
                        width = _popcount(options)
                        skip = self.replay.pop(0) if self.replay else 0
                        for _ in range(min(skip, width)):
                            options &= options - 1
                        stack.append([filled, alive, options, width, skip - 1, -1])
            if not stack:
                return
            frame = stack[-1]
            if frame[5] >= 0:  # back from a child: take its stone off again
                remaining[self.placements[frame[5]][1]] += 1
                chosen.pop()
                frame[5] = -1
            options = frame[2]
            if not options:
                stack.pop()
                continue
            bit = options & -options
            frame[2] = options ^ bit
            frame[4] += 1
            index = bit.bit_length() - 1
            frame[5] = index
            mask, kind = self.placements[index]
            remaining[kind] -= 1
            chosen.append(index)
            alive = frame[1] & ~self.clashes[index]
            if not remaining[kind]:
                alive &= ~self.of_type[kind]
            pending = (frame[0] | mask, alive)

    @property
    def path(self) -> List[int]:
        """The option taken at each depth: where a restarted search picks up."""
        return [frame[4] for frame in self.stack]

    def done(self) -> float:
        """The share of the search tree behind the current branch, counting each branch at a
        node as an equal share (Knuth's estimate, exact at the end)."""
        share, weight = 0.0, 1.0
        for frame in self.stack:
            share += weight * frame[4] / frame[3]
            weight /= frame[3]
        return share

    def stabiliser(self, tiling: Sequence[Tuple[int, int]]) -> int:
        """How many colour-preserving symmetries map the tiling onto itself."""
        squares = self.rows * self.cols
        pieces = frozenset(tiling)
        count = 0
        for image in self.symmetries:
            mapped = set()
            for mask, kind in tiling:
                moved = 0
                for square in range(squares):
                    if mask >> square & 1:
                        moved |= 1 << image[square]
                mapped.add((moved, kind))
            count += mapped == pieces
        return count

    def placements_of(self, tiling: Sequence[Tuple[int, int]]) -> Tuple[Placement, ...]:
        """Name each piece of a tiling by a stone of its type, identical stones in file order."""
        next_stone = [0] * len(self.type_stones)
        found = []
        for mask, kind in sorted(tiling, key=lambda piece: (piece[0] & -piece[0]).bit_length()):
            stone = self.type_stones[kind][next_stone[kind]]
            next_stone[kind] += 1
            cells = tuple(divmod(square, self.cols) for square in range(self.rows * self.cols) if mask >> square & 1)
            found.append(Placement(stone, cells))
        return tuple(sorted(found, key=lambda placement: placement.stone))


def solve(
    puzzle: Board,
    *,
    all_solutions: bool,
    resume: Optional[Dict[str, Any]] = None,
    clock: Callable[[], float] = time.perf_counter,
    report_every: float = 1.0,
) -> Iterator[Event]:
    """Yield `Found` per distinct tiling (only the first unless `all_solutions`), `Progress` about
    every `report_every` seconds (its `state` resumes the search), then `Finished` with
    `extra["up_to_symmetry"]` (when the search was complete) and `extra["symmetries"]`."""
    started = clock()
    search = _Search(puzzle)
    solutions = 0
    stabilisers = 0
    nodes_before = 0
    if resume:
        search.replay = list(resume.get("path", []))
        solutions = int(resume.get("solutions", 0))
        stabilisers = int(resume.get("stabilisers", 0))
        nodes_before = int(resume.get("nodes", 0))
    next_report = started + report_every
    complete = True
    remaining = list(search.counts)
    for tiling in search.run(remaining):
        if tiling is None:
            now = clock()
            if now >= next_report:
                next_report = now + report_every
                nodes = nodes_before + search.nodes
                state = {"path": search.path, "solutions": solutions, "stabilisers": stabilisers, "nodes": nodes}
                yield Progress(nodes, now - started, solutions, search.done(), state)
            continue
        solutions += 1
        stabilisers += search.stabiliser(tiling)
        yield Found(search.placements_of(tiling), nodes_before + search.nodes, clock() - started)
        if not all_solutions:
            complete = False
            break
    extra: Dict[str, Any] = {"symmetries": len(search.symmetries)}
    if complete:
        extra["up_to_symmetry"] = stabilisers // len(search.symmetries)
    yield Finished(solutions, complete, nodes_before + search.nodes, clock() - started, extra)


def render(puzzle: Board, solution: Sequence[Placement]) -> str:
    """The board as the seed prints it: each square its stone's number and colour, in a frame."""
    owner = {}
    for placement in solution:
        for cell in placement.cells:
            owner[cell] = placement.stone
    width = max(len(str(len(puzzle.stones))), 2)
    lines = []
    for r in range(puzzle.rows):
        lines.append(
            "| " + " ".join(f"{owner.get((r, c), 0):>{width}}{_colour(r, c)}" for c in range(puzzle.cols)) + " |"
        )
    rule = "=" * len(lines[0])
    return "\n".join([rule, *lines, rule])


def solution_json(puzzle: Board, solution: Sequence[Placement]) -> object:
    """The placements: each stone (1-based, file order) and the [row, column] squares it covers."""
    return [{"stone": placement.stone, "cells": [list(cell) for cell in placement.cells]} for placement in solution]


def summary_json(puzzle: Board, finished: Finished) -> Dict[str, Any]:
    """`up_to_symmetry`: tilings distinct up to the board's colour-preserving symmetries (null
    when the search stopped early), and `symmetries`: how many such symmetries the board has."""
    return {"up_to_symmetry": finished.extra.get("up_to_symmetry"), "symmetries": finished.extra.get("symmetries")}

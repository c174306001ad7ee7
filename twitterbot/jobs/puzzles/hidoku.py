"""Hidoku: fill a rectangle with 1..N so that each number touches the next (a king's move).

The file format is the seed's: one line per row, cells separated by commas, a run of ``_`` for an
empty cell, numbers optionally space-padded; any rectangle. The solver keeps, for every number, the
set of cells it may still take as an integer bitset, and propagates to a fixpoint before each
branch:

* **reachability**: number k+1 lies next to some cell of k and k-1 next to some cell of k (a grid
  dilation of the bitset, done with shifts), in both directions, which also prunes by the distance
  between given numbers, around obstacles;
* **all different**: a placed number's cell is taken from every other number; a cell only one
  number can still reach gets that number (forced cells); a cell no number can reach is a dead end;
* **regions**: the empty cells fall into king-connected regions; the run of missing numbers
  between two placed ones fills cells of one region only, so each region must be exactly filled
  by the runs that can go there.

It then branches on the number with the fewest cells left. Usage::

    puzzle = parse(open("10x10.txt").read(), "10x10.txt")
    for event in solve(puzzle, all_solutions=True):
        ...
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from .events import Event, Finished, Found, Progress, PuzzleFileError
from .hidoku_propagation import Grid, Propagator, popcount

__all__ = [
    "ABOUT",
    "ALL_BY_DEFAULT",
    "EXAMPLE",
    "NAME",
    "Hidoku",
    "count_solutions",
    "generate",
    "parse",
    "render",
    "render_puzzle",
    "solution_json",
    "solve",
    "summary_json",
]

NAME = "hidoku"
ABOUT = "Hidoku: numbers 1..N in king-move order (comma-separated grid, _ for empty)"
ALL_BY_DEFAULT = True
# The seed's sample board (its one solution is in tests/fixtures/puzzles/hidoku-sample-solution.txt).
EXAMPLE = """\
__,__,93,__,__,__,___,__,__,57
__,__,__,22,__,53, 54,40,__,__
__,__,18,23,52,__,100,__,__,__
__,__,__,__,__,99, 33,__,__,__
__,__,__,__,__,25,___,__,__,__
__,__,__,__,__,__,___,__,__,29
14,__, 7,__,__,__,___,__,__,__
__,__,__,65,__,__, 46,72,77,__
__, 9,__,__,__,__,___,__,80,76
 1,__,__,11,__,68, 82,__,__,__
"""

Solution = Tuple[int, ...]  # the number in each cell, row by row


@dataclass(frozen=True)
class Hidoku:
    """A puzzle: `cells` row by row, None where empty; `name` says where it came from."""

    rows: int
    cols: int
    cells: Tuple[Optional[int], ...]
    name: str = "example"

    @property
    def size(self) -> int:
        return self.rows * self.cols


# -- the file format -------------------------------------------------------------------------------


def parse(text: str, source: str = "example", **options: Any) -> Hidoku:
    """Read the seed's format; blank lines and lines starting with # are skipped. Raises
    PuzzleFileError naming `source` and the line."""
    rows: List[List[Optional[int]]] = []
    lines: List[int] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        row: List[Optional[int]] = []
        for column, token in enumerate(line.split(","), 1):
            token = token.strip()
            if token and set(token) == {"_"}:
                row.append(None)
                continue
            try:
                row.append(int(token))
            except ValueError:
                raise PuzzleFileError(
                    f"{source} line {number}, cell {column}: {token!r} is neither a number nor a run of _ "
                    "(write cells like 12 or __, separated by commas)"
                ) from None
        if rows and len(row) != len(rows[0]):
            raise PuzzleFileError(
                f"{source} line {number} has {len(row)} cells but line {lines[0]} has {len(rows[0])}: "
                "every row needs the same number of cells"
            )
        rows.append(row)
        lines.append(number)
    if not rows:
        raise PuzzleFileError(f"{source} holds no grid: write one row per line, e.g. 1,__,3")
    size = len(rows) * len(rows[0])
    seen: Dict[int, int] = {}
    for row, line_number in zip(rows, lines):
        for value in row:
            if value is None:
                continue
            if not 1 <= value <= size:
                raise PuzzleFileError(
                    f"{source} line {line_number}: {value} is outside 1..{size} "
                    f"(a {len(rows)}x{len(rows[0])} grid holds the numbers 1 to {size})"
                )
            if value in seen:
                raise PuzzleFileError(
                    f"{source} line {line_number}: {value} is given twice (also on line {seen[value]})"
                )
            seen[value] = line_number
    return Hidoku(len(rows), len(rows[0]), tuple(value for row in rows for value in row), source)


def render_puzzle(puzzle: Hidoku) -> str:
    """The puzzle in its own file format, blanks as runs of _ as wide as the largest number."""
    width = len(str(puzzle.size))
    return "".join(
        ",".join(
            "_" * width if value is None else str(value).rjust(width)
            for value in puzzle.cells[row * puzzle.cols : (row + 1) * puzzle.cols]
        )
        + "\n"
        for row in range(puzzle.rows)
    )


def render(puzzle: Hidoku, solution: Solution) -> str:
    """The solved grid as the seed prints it: a frame of = and | around right-aligned numbers."""
    width = len(str(puzzle.size))
    rule = "=" * (3 + (width + 1) * puzzle.cols) + "\n"
    lines = [rule]
    for row in range(puzzle.rows):
        values = solution[row * puzzle.cols : (row + 1) * puzzle.cols]
        lines.append("| " + " ".join(str(value).rjust(width) for value in values) + " |\n")
    lines.append(rule)
    return "".join(lines)


def solution_json(puzzle: Hidoku, solution: Solution) -> List[List[int]]:
    return [list(solution[row * puzzle.cols : (row + 1) * puzzle.cols]) for row in range(puzzle.rows)]


def summary_json(puzzle: Hidoku, finished: Finished) -> Dict[str, Any]:
    return {}


# -- the search --------------------------------------------------------------------------------------


@dataclass
class _Frame:
    dom: List[int]
    near: List[int]
    alternatives: List[Tuple[int, int]]
    next: int = 0


def solve(
    puzzle: Hidoku,
    *,
    all_solutions: bool = True,
    resume: Optional[Dict[str, Any]] = None,
    clock: Callable[[], float] = time.monotonic,
    progress_every: float = 1.0,
    limit: Optional[int] = None,
) -> Iterator[Event]:
    """Search depth first, yielding Progress about every `progress_every` seconds, Found per
    solution and one Finished. `resume` is a Progress.state from an earlier run of the same puzzle:
    the search goes on where that one stopped. `limit` stops after that many solutions."""
    solver = Propagator(puzzle.rows, puzzle.cols, puzzle.cells)
    started = clock()
    resume = resume or {}
    path: List[int] = list(resume.get("path", []))
    nodes = int(resume.get("nodes", 0))
    found = int(resume.get("solutions", 0))
    earlier = float(resume.get("seconds", 0.0))
    wanted = limit if limit is not None else (None if all_solutions else 1)
    next_report = started + progress_every

    def elapsed() -> float:
        return earlier + clock() - started

    def state(stack: List[_Frame]) -> Dict[str, Any]:
        # Each frame's `next` is the alternative being searched below it (or the next to try).
        return {
            "path": [max(frame.next - 1, 0) for frame in stack],
            "nodes": nodes,
            "solutions": found,
            "seconds": elapsed(),
        }

    dom = list(solver.root)
    near = [solver.grid.dilate(bits) for bits in dom]
    stack: List[_Frame] = []
    if not solver.propagate(dom, near):
        yield Finished(0 if not resume else found, True, max(nodes, 1), elapsed())
        return
    nodes = nodes or 1
    if all(bits & (bits - 1) == 0 for bits in dom):
        if not resume:
            found += 1
            yield Found(solver.solution(dom), nodes, elapsed())
        yield Finished(found, True, nodes, elapsed())
        return
    stack.append(_Frame(dom, near, solver.choices(dom)))
    _walk_down(solver, stack, path)

    while stack:
        frame = stack[-1]
        if frame.next >= len(frame.alternatives):
            stack.pop()
            continue
        child_dom, child_near = list(frame.dom), list(frame.near)
        number, cell = frame.alternatives[frame.next]
        frame.next += 1
        child_dom[number], child_near[number] = cell, solver.grid.neighbours[cell.bit_length() - 1]
        nodes += 1
        if nodes & 63 == 0 and clock() >= next_report:
            next_report = clock() + progress_every
            yield Progress(nodes, elapsed(), found, _share_done(stack), state(stack))
        if not solver.propagate(child_dom, child_near):
            continue
        alternatives = solver.choices(child_dom)
        if not alternatives:
            found += 1
            yield Found(solver.solution(child_dom), nodes, elapsed())
            if wanted is not None and found >= wanted:
                complete = all(f.next >= len(f.alternatives) for f in stack)
                yield Finished(found, complete, nodes, elapsed())
                return
            continue
        stack.append(_Frame(child_dom, child_near, alternatives))
    yield Finished(found, True, nodes, elapsed())


def _share_done(stack: List[_Frame]) -> float:
    """About how much of the search tree lies behind the frames' current alternatives (0..1)."""
    done, weight = 0.0, 1.0
    for frame in stack:
        total = max(len(frame.alternatives), 1)
        done += weight * max(frame.next - 1, 0) / total
        weight /= total
    return min(done, 1.0)


def _walk_down(solver: Propagator, stack: List[_Frame], path: List[int]) -> None:
    """Resuming: walk back down the recorded `path` from the root frame on `stack`, pushing a
    frame per step; the alternatives before each step are done."""
    for depth, index in enumerate(path):
        frame = stack[-1]
        frame.next = index
        if depth == len(path) - 1:
            break
        child = _descend(solver, frame)
        frame.next = index + 1
        if child is None:
            break
        stack.append(child)


def _descend(solver: Propagator, frame: _Frame) -> Optional[_Frame]:
    """The child frame for the alternative `frame.next` (used when resuming), or None if it fails."""
    dom, near = list(frame.dom), list(frame.near)
    number, cell = frame.alternatives[frame.next]
    dom[number], near[number] = cell, solver.grid.neighbours[cell.bit_length() - 1]
    if not solver.propagate(dom, near):
        return None
    alternatives = solver.choices(dom)
    return _Frame(dom, near, alternatives) if alternatives else None


def count_solutions(puzzle: Hidoku, limit: Optional[int] = None) -> int:
    """How many solutions `puzzle` has (stopping at `limit`)."""
    for event in solve(puzzle, all_solutions=True, limit=limit, progress_every=float("inf")):
        if isinstance(event, Finished):
            return event.solutions
    raise AssertionError("solve() always ends with Finished")  # pragma: no cover


# -- the generator ---------------------------------------------------------------------------------


def random_path(rows: int, cols: int, rng: random.Random) -> List[int]:
    """A random king's tour through every cell (cells numbered row by row): Warnsdorff's rule
    (go where fewest onward moves remain, ties broken at random), restarted when it gets stuck."""
    grid = Grid(rows, cols)
    size = rows * cols
    for _ in range(10_000):
        cell = rng.randrange(size)
        path, free = [cell], grid.full & ~(1 << cell)
        while free:
            options = grid.neighbours[cell] & free
            if not options:
                break
            best: List[Tuple[int, float, int]] = []
            bits = options
            while bits:
                low = bits & -bits
                bits ^= low
                nxt = low.bit_length() - 1
                best.append((popcount(grid.neighbours[nxt] & free & ~low), rng.random(), nxt))
            cell = min(best)[2]
            path.append(cell)
            free &= ~(1 << cell)
        if not free:
            return path
    raise RuntimeError(f"no king's tour found on {rows}x{cols}")  # pragma: no cover: tours always exist


def generate(rows: int, cols: int, rng: random.Random) -> Tuple[Hidoku, Solution]:
    """A puzzle with exactly one solution: a random king's tour, then the clues removed one by one
    in random order as long as the solution stays unique (1 and N stay, as is the custom)."""
    if rows < 1 or cols < 1 or rows * cols < 2:
        raise ValueError(f"a Hidoku needs at least two cells, not {rows}x{cols}")
    path = random_path(rows, cols, rng)
    solution = [0] * (rows * cols)
    for number, cell in enumerate(path, 1):
        solution[cell] = number
    cells: List[Optional[int]] = list(solution)
    order = [cell for cell in range(rows * cols) if solution[cell] not in (1, rows * cols)]
    rng.shuffle(order)
    for cell in order:
        cells[cell] = None
        if count_solutions(Hidoku(rows, cols, tuple(cells), "generated"), limit=2) != 1:
            cells[cell] = solution[cell]
    return Hidoku(rows, cols, tuple(cells), f"generated {rows}x{cols}"), tuple(solution)


def challenge_text(puzzle: Hidoku, title: str) -> str:
    """The puzzle as one post: rows separated by " / " (posts are flattened to one line), blanks as
    dots, numbers zero-padded so the columns line up in a fixed-width font."""
    width = len(str(puzzle.size))
    rows: Sequence[str] = [
        " ".join(
            "." * width if value is None else str(value).zfill(width)
            for value in puzzle.cells[row * puzzle.cols : (row + 1) * puzzle.cols]
        )
        for row in range(puzzle.rows)
    ]
    return f"{title}: place 1-{puzzle.size} so each number touches the next (diagonals too). " + " / ".join(rows)

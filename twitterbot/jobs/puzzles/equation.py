"""The equation crossword: a 3x3 grid of whole numbers in which each row and each column is an
equation ``a op b op c = result`` (operators + - *, multiplication first as usual).

The file draws the puzzle as it looks on paper: cell rows with their operators and results,
between them a line of the operators joining each column's cells, then a line of ``=`` and the
columns' results. ``_`` is a cell to fill; ``range LOW..HIGH`` bounds the numbers to fill in;
``#`` starts a comment. Tokens are separated by spaces. The seed's puzzle::

    range -9..99
    26 - _ * _ = -278
    +    +   *
    _  * _ + _ = 216
    -    +   -
    _  * _ + _ = 11
    =    =   =
    36   27  245

The solver never guesses a number an equation already decides: once one cell of an equation is
unknown, the equation is affine in it (each cell appears once), so that cell has at most one
value (or any, if its coefficient is zero). It branches only on the cell of the equation with the
fewest unknowns, and checks every equation as soon as it is full.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from .events import Event, Finished, Found, Progress, PuzzleFileError

__all__ = [
    "ABOUT",
    "ALL_BY_DEFAULT",
    "EXAMPLE",
    "NAME",
    "Equation",
    "evaluate",
    "parse",
    "render",
    "solution_json",
    "solve",
]

NAME = "equation"
ABOUT = "equation crossword: 3x3 numbers, every row and column an equation (+ - *, usual precedence)"
ALL_BY_DEFAULT = True
EXAMPLE = """\
# The seed's equation crossword: fill each _ with a whole number from the range so that every
# row and every column is right (multiplication before addition and subtraction).
range -9..99
26 - _ * _ = -278
+    +   *
_  * _ + _ = 216
-    +   -
_  * _ + _ = 11
=    =   =
36   27  245
"""
SIZE = 3
OPERATORS = {"+": "+", "-": "-", "−": "-", "*": "*", "x": "*", "×": "*", "·": "*"}
_RANGE = re.compile(r"^range\s+(-?\d+)\s*\.\.\s*(-?\d+)$")

Solution = Tuple[int, ...]  # the nine numbers, row by row


@dataclass(frozen=True)
class Equation:
    """`cells` row by row (None to fill); `row_ops[r]` the two operators of row r, `col_ops[c]`
    those of column c (top to bottom); the results; the range the filled numbers come from."""

    cells: Tuple[Optional[int], ...]
    row_ops: Tuple[Tuple[str, str], ...]
    col_ops: Tuple[Tuple[str, str], ...]
    row_results: Tuple[int, ...]
    col_results: Tuple[int, ...]
    low: int
    high: int
    name: str = "example"

    def equations(self) -> List[Tuple[Tuple[int, int, int], Tuple[str, str], int]]:
        """The six equations as (cell indices, operators, result): rows, then columns."""
        rows = [((3 * r, 3 * r + 1, 3 * r + 2), self.row_ops[r], self.row_results[r]) for r in range(SIZE)]
        cols = [((c, c + 3, c + 6), self.col_ops[c], self.col_results[c]) for c in range(SIZE)]
        return rows + cols


def _apply(op: str, left: int, right: int) -> int:
    return left + right if op == "+" else left - right if op == "-" else left * right


def evaluate(values: Sequence[int], ops: Sequence[str]) -> int:
    """``a op b op c`` with multiplication before addition and subtraction."""
    a, b, c = values
    first, second = ops
    if second == "*" and first != "*":
        return _apply(first, a, b * c)
    return _apply(second, _apply(first, a, b), c)


# -- the file format -------------------------------------------------------------------------------


def parse(text: str, source: str = "example", **options: Any) -> Equation:
    """Read the drawing described in the module docstring; errors name `source` and the line."""
    lines = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if line:
            lines.append((number, line))
    bounds: Optional[Tuple[int, int]] = None
    grid = []
    for number, line in lines:
        if line.startswith("range"):
            match = _RANGE.match(line)
            if not match:
                raise PuzzleFileError(
                    f"{source} line {number}: write the range as 'range LOW..HIGH', e.g. range -9..99"
                )
            low, high = int(match.group(1)), int(match.group(2))
            if low > high:
                raise PuzzleFileError(
                    f"{source} line {number}: the range {low}..{high} is empty: put the lower end first"
                )
            bounds = (low, high)
        else:
            grid.append((number, line.split()))
    if bounds is None:
        raise PuzzleFileError(f"{source} has no range line: add one, e.g. 'range -9..99', for the numbers to fill in")
    # The line of = above the columns' results is optional.
    grid = [(number, tokens) for number, tokens in grid if set(tokens) != {"="}]
    if len(grid) != 6:
        last = grid[-1][0] if grid else (lines[-1][0] if lines else 1)
        raise PuzzleFileError(
            f"{source} line {last}: expected 3 cell rows with 2 operator lines between them, an optional line "
            f"of =, and the columns' results ({len(grid)} grid lines found; see `puzzle equation --example`)"
        )
    cells: List[Optional[int]] = []
    row_ops, row_results = [], []
    for number, tokens in (grid[0], grid[2], grid[4]):
        if len(tokens) != 7 or tokens[5] != "=":
            raise PuzzleFileError(
                f"{source} line {number}: a row reads 'a op b op c = result' with spaces between, e.g. 26 - _ * _ = -278"
            )
        cells.extend(_cell(tokens[i], source, number) for i in (0, 2, 4))
        row_ops.append((_operator(tokens[1], source, number), _operator(tokens[3], source, number)))
        row_results.append(_number(tokens[6], source, number, "the row's result"))
    between = []
    for number, tokens in (grid[1], grid[3]):
        if len(tokens) != SIZE:
            raise PuzzleFileError(f"{source} line {number}: expected the 3 operators joining the columns, e.g. + + *")
        between.append([_operator(token, source, number) for token in tokens])
    number, tokens = grid[5]
    if len(tokens) != SIZE:
        raise PuzzleFileError(f"{source} line {number}: expected the 3 columns' results, e.g. 36 27 245")
    col_results = [_number(token, source, number, "a column's result") for token in tokens]
    col_ops = tuple((between[0][c], between[1][c]) for c in range(SIZE))
    return Equation(
        tuple(cells), tuple(row_ops), col_ops, tuple(row_results), tuple(col_results), bounds[0], bounds[1], source
    )


def _cell(token: str, source: str, line: int) -> Optional[int]:
    if set(token) == {"_"}:
        return None
    return _number(token, source, line, "a cell")


def _number(token: str, source: str, line: int, what: str) -> int:
    try:
        return int(token)
    except ValueError:
        raise PuzzleFileError(f"{source} line {line}: {what} should be a whole number (or _), not {token!r}") from None


def _operator(token: str, source: str, line: int) -> str:
    if token not in OPERATORS:
        raise PuzzleFileError(f"{source} line {line}: {token!r} is not an operator: use +, - or *")
    return OPERATORS[token]


def render(puzzle: Equation, solution: Solution) -> str:
    """The solved grid as the seed prints it."""
    rule = "-" * 16 + "\n"
    rows = [rule]
    for r in range(SIZE):
        rows.append("|" + "|".join(f"{value:4d}" for value in solution[3 * r : 3 * r + 3]) + "|\n")
        rows.append(rule)
    return "".join(rows)


def solution_json(puzzle: Equation, solution: Solution) -> List[List[int]]:
    return [list(solution[3 * r : 3 * r + 3]) for r in range(SIZE)]


def summary_json(puzzle: Equation, finished: Finished) -> Dict[str, Any]:
    return {}


# -- the solver ------------------------------------------------------------------------------------


class _Cells:
    """The nine cells as the search fills them (None: not yet), and what the equations through a
    cell still allow."""

    def __init__(self, puzzle: Equation) -> None:
        self.equations = puzzle.equations()
        self.of_cell = [
            [index for index, (cells, _, _) in enumerate(self.equations) if cell in cells] for cell in range(9)
        ]
        self.values: List[Optional[int]] = list(puzzle.cells)
        self.low, self.high = puzzle.low, puzzle.high
        self.everything = range(puzzle.low, puzzle.high + 1)

    def holds(self, index: int) -> bool:
        """Equation `index`, all its cells filled, holds."""
        cells, ops, result = self.equations[index]
        return evaluate([self.values[cell] for cell in cells], ops) == result  # type: ignore[misc]

    def candidates(self, index: int, cell: int) -> Sequence[int]:
        """The values of `cell`, the one unknown of equation `index`, that make it hold."""
        cells, ops, result = self.equations[index]
        values = self.values
        values[cell] = 0
        constant = evaluate([values[c] for c in cells], ops)  # type: ignore[misc]
        values[cell] = 1
        slope = evaluate([values[c] for c in cells], ops) - constant  # type: ignore[misc]
        values[cell] = None
        if slope == 0:
            return self.everything if constant == result else ()
        value, left = divmod(result - constant, slope)
        return (value,) if left == 0 and self.low <= value <= self.high else ()

    def consistent(self, cell: int) -> bool:
        """The equations through `cell` still hold (if full) or can (if one cell is left)."""
        for index in self.of_cell[cell]:
            unknown = [x for x in self.equations[index][0] if self.values[x] is None]
            if not unknown:
                if not self.holds(index):
                    return False
            elif len(unknown) == 1 and not self.candidates(index, unknown[0]):
                return False
        return True


def _share_done(trail: Sequence[Tuple[int, int]]) -> float:
    """About how much of the search lies behind the branches taken, each (index, of how many)."""
    done, weight = 0.0, 1.0
    for index, total in trail:
        done += weight * index / total
        weight /= total
    return done


def solve(
    puzzle: Equation,
    *,
    all_solutions: bool = True,
    resume: Optional[Dict[str, Any]] = None,
    clock: Callable[[], float] = time.monotonic,
    progress_every: float = 1.0,
) -> Iterator[Event]:
    """Every solution (or the first) as Found, then Finished; Progress about every
    `progress_every` seconds on a wide range. Searches are short, so it does not resume."""
    started = clock()
    grid = _Cells(puzzle)
    equations, of_cell, values, everything = grid.equations, grid.of_cell, grid.values, grid.everything
    holds, candidates, consistent = grid.holds, grid.candidates, grid.consistent
    nodes = found = 0
    stop = False
    next_report = started + progress_every
    trail: List[Tuple[int, int]] = []  # (index, of how many) of each branch taken, for the estimate

    def search() -> Iterator[Event]:
        nonlocal nodes, found, stop, next_report
        nodes += 1
        if nodes & 1023 == 0 and clock() >= next_report:
            next_report = clock() + progress_every
            yield Progress(nodes, clock() - started, found, _share_done(trail))
        open_equations = []
        for index, (cells, _, _) in enumerate(equations):
            unknown = [cell for cell in cells if values[cell] is None]
            if unknown:
                open_equations.append((len(unknown), index, unknown))
        if not open_equations:
            found += 1
            yield Found(tuple(values), nodes, clock() - started)  # type: ignore[arg-type]
            stop = not all_solutions
            return
        open_equations.sort()
        count, index, unknown = open_equations[0]
        if count == 1:
            cell = unknown[0]
            options: Sequence[int] = candidates(index, cell)
        else:
            # Branch where it cuts most: the unknown whose other equation is nearest to full.
            cell = min(unknown, key=lambda c: sum(1 for e in of_cell[c] for x in equations[e][0] if values[x] is None))
            options = everything
        total = len(options)
        for position, value in enumerate(options):
            values[cell] = value
            if consistent(cell):
                trail.append((position, total))
                yield from search()
                trail.pop()
            values[cell] = None
            if stop:
                return

    for index in range(len(equations)):
        cells = equations[index][0]
        if all(values[cell] is not None for cell in cells) and not holds(index):
            yield Finished(0, True, 0, clock() - started)
            return
    yield from search()
    yield Finished(found, not stop, nodes, clock() - started)

"""Peg solitaire boards: their holes, jumps and symmetries, the built-in ones, and board files.

A position is an int bitboard: bit i set means hole i (in reading order) holds a peg. Board
files use the seed blog's notation, one row per line: ``X`` a peg, ``O`` an empty hole, a space
(or ``.``) no hole::

    board = builtin("english")
    board.render(board.start)      # the seed's picture: X pegs, O holes
    proof = position_class_proof(board)   # None, or why the game cannot be won
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from ...errors import BotError, ExitStatus

__all__ = ["BOARDS", "Board", "BoardFileError", "Jump", "builtin", "load_board", "parse_board", "position_class_proof"]

PEG, HOLE = "X", "O"
OFF_BOARD = (" ", ".")
MAX_HOLES = 64  # positions are counted in numpy uint64 arrays


class BoardFileError(BotError):
    """A board file that cannot be read as a board; the message names the line."""

    exit_status = ExitStatus.DATA_ERROR


@dataclass(frozen=True)
class Jump:
    """A peg at `start` jumps over `over` into the empty hole `end` (hole indices)."""

    start: int
    over: int
    end: int

    @property
    def needs(self) -> int:
        return (1 << self.start) | (1 << self.over)

    @property
    def flips(self) -> int:
        return self.needs | (1 << self.end)


@dataclass(frozen=True)
class Board:
    """A board shape, its starting position and where the last peg must end (None: anywhere)."""

    name: str
    cells: Tuple[Tuple[int, int], ...]  # (row, column) of each hole, in reading order
    start: int
    target: Optional[int] = None
    jumps: Tuple[Jump, ...] = field(init=False, repr=False)
    symmetries: Tuple[Tuple[int, ...], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        index = {cell: i for i, cell in enumerate(self.cells)}
        jumps = []
        for i, (row, col) in enumerate(self.cells):
            for d_row, d_col in ((0, 1), (0, -1), (1, 0), (-1, 0)):
                over = index.get((row + d_row, col + d_col))
                end = index.get((row + 2 * d_row, col + 2 * d_col))
                if over is not None and end is not None:
                    jumps.append(Jump(i, over, end))
        object.__setattr__(self, "jumps", tuple(jumps))
        object.__setattr__(self, "symmetries", tuple(self._symmetries(index)))

    def _symmetries(self, index: Dict[Tuple[int, int], int]) -> List[Tuple[int, ...]]:
        """Hole permutations of the square's 8 symmetries that map the board (and its target) onto itself."""
        rows = [row for row, _ in self.cells]
        cols = [col for _, col in self.cells]
        top, left, bottom, right = min(rows), min(cols), max(rows), max(cols)
        transforms = [
            lambda r, c: (r, c),
            lambda r, c: (r, left + right - c),
            lambda r, c: (top + bottom - r, c),
            lambda r, c: (top + bottom - r, left + right - c),
            lambda r, c: (top + c - left, left + r - top),
            lambda r, c: (top + right - c, left + r - top),
            lambda r, c: (top + c - left, left + bottom - r),
            lambda r, c: (top + right - c, left + bottom - r),
        ]
        found = []
        for transform in transforms:
            image = [index.get(transform(row, col)) for row, col in self.cells]
            if None in image or len(set(image)) != len(image):
                continue
            permutation = tuple(image)  # type: ignore[arg-type]
            if self.target is not None and permutation[self.target] != self.target:
                continue
            if permutation not in found:
                found.append(permutation)
        return found

    @property
    def size(self) -> int:
        return len(self.cells)

    @property
    def full(self) -> int:
        return (1 << self.size) - 1

    def pegs(self, position: int) -> int:
        return bin(position).count("1")

    def is_won(self, position: int) -> bool:
        if position & (position - 1):
            return False  # more than one peg
        return position != 0 and (self.target is None or position == 1 << self.target)

    def moves(self, position: int) -> List[Jump]:
        """The jumps possible in `position`, in board order."""
        return [jump for jump in self.jumps if position & jump.needs == jump.needs and not position >> jump.end & 1]

    def name_of(self, hole: int) -> str:
        """A hole as chess-like coordinates: column letter, row number from the top (d4 is the English centre)."""
        row, col = self.cells[hole]
        return f"{chr(ord('a') + col)}{row + 1}"

    def describe(self, jump: Jump) -> str:
        return f"{self.name_of(jump.start)}-{self.name_of(jump.end)}"

    def render(self, position: int) -> str:
        """The position as the seed printed it: one line per row, X peg, O hole, space off the board."""
        rows = [row for row, _ in self.cells]
        cols = [col for _, col in self.cells]
        grid = [[" "] * (max(cols) + 1) for _ in range(max(rows) + 1)]
        for i, (row, col) in enumerate(self.cells):
            grid[row][col] = PEG if position >> i & 1 else HOLE
        return "".join("".join(line) + "\n" for line in grid)


def parse_board(text: str, *, name: str, source: str = "the board", finish: str = "any") -> Board:
    """A board from the seed's notation. `finish` is "any" (one peg anywhere) or "centre"."""
    lines = text.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    lines = [line.rstrip("\r") for line in lines]
    if not lines:
        raise BoardFileError(f"{source} is empty: draw the board with X for pegs, O for holes and spaces around them")
    width = len(lines[0])
    cells: List[Tuple[int, int]] = []
    start = 0
    for row, line in enumerate(lines):
        if len(line) != width:
            raise BoardFileError(
                f"{source} line {row + 1} is {len(line)} characters wide but line 1 is {width}: every row must be "
                "as wide as the board; fill the places without a hole with spaces or '.' (check that your editor "
                "keeps trailing spaces)"
            )
        for col, char in enumerate(line):
            if char in OFF_BOARD:
                continue
            if char not in (PEG, HOLE):
                raise BoardFileError(
                    f"{source} line {row + 1} column {col + 1} has {char!r}: use X for a peg, O for an empty hole, "
                    "and a space or '.' where there is no hole"
                )
            if char == PEG:
                start |= 1 << len(cells)
            cells.append((row, col))
    if len(cells) > MAX_HOLES:
        raise BoardFileError(f"{source} has {len(cells)} holes; at most {MAX_HOLES} are supported")
    if not start:
        raise BoardFileError(f"{source} has no pegs (X): there is nothing to play")
    if start == (1 << len(cells)) - 1:
        raise BoardFileError(f"{source} has no empty hole (O): no peg can move")
    target = None
    if finish == "centre":
        rows = [r for r, _ in cells]
        cols = [c for _, c in cells]
        middle = (min(rows) + max(rows), min(cols) + max(cols))
        centre = (middle[0] // 2, middle[1] // 2)
        if middle[0] % 2 or middle[1] % 2 or centre not in cells:
            raise BoardFileError(f"{source} has no hole in the middle to finish in: use --finish any")
        target = cells.index(centre)
    return Board(name, tuple(cells), start, target)


def load_board(path: Path, *, finish: str = "any") -> Board:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise BoardFileError(f"{path} is not UTF-8 text: save it as plain text") from None
    except OSError as exc:
        raise BoardFileError(f"cannot read the board file {path}: {exc.strerror}") from None
    return parse_board(text, name=path.stem, source=str(path), finish=finish)


def _cross_board(arm: int, middle: int, hole: Tuple[int, int]) -> str:
    """A plus-shaped board (English, German) with every hole filled but `hole`."""
    size = 2 * arm + middle
    rows = []
    for row in range(size):
        line = ""
        for col in range(size):
            in_arm = arm <= row < arm + middle or arm <= col < arm + middle
            line += (HOLE if (row, col) == hole else PEG) if in_arm else " "
        rows.append(line)
    return "\n".join(rows)


def _french() -> str:
    widths = (3, 5, 7, 7, 7, 5, 3)
    return "\n".join(
        "".join(HOLE if (row, col) == (3, 3) else PEG if abs(col - 3) <= width // 2 else " " for col in range(7))
        for row, width in enumerate(widths)
    )


def _diamond() -> str:
    return "\n".join(
        "".join(HOLE if (row, col) == (4, 4) else PEG if abs(row - 4) + abs(col - 4) <= 4 else " " for col in range(9))
        for row in range(9)
    )


def _english_pattern(pegs: Sequence[Tuple[int, int]]) -> str:
    """One of the seed's patterns on the English board; `pegs` are the seed's (x, y) = (column, row)."""
    english = _cross_board(2, 3, (3, 3))
    return "\n".join(
        "".join((PEG if (col, row) in pegs else HOLE) if char != " " else " " for col, char in enumerate(line))
        for row, line in enumerate(english.split("\n"))
    )


def _pegs_except(holes: Sequence[Tuple[int, int]]) -> List[Tuple[int, int]]:
    """The seed's setups start full and set holes ('O'); these are the (x, y) left with pegs."""
    english = _cross_board(2, 3, (-1, -1)).split("\n")
    everything = [(col, row) for row, line in enumerate(english) for col, char in enumerate(line) if char != " "]
    return [cell for cell in everything if cell not in holes]


# The six patterns exactly as the seed's setup functions define them (board[x, y], x the column).
_SEED_PATTERNS: Dict[str, List[Tuple[int, int]]] = {
    "cross": _pegs_except(
        [(2, 0), (3, 0), (4, 0), (2, 1), (4, 1), (0, 2), (1, 2), (5, 2), (6, 2), (0, 3), (1, 3), (2, 3), (4, 3)]
        + [(5, 3), (6, 3), (0, 4), (1, 4), (2, 4), (4, 4), (5, 4), (6, 4), (2, 5), (3, 5), (4, 5), (2, 6), (3, 6)]
        + [(4, 6)]
    ),
    "plus": _pegs_except(
        [(2, 0), (3, 0), (4, 0), (2, 1), (4, 1), (0, 2), (1, 2), (2, 2), (4, 2), (5, 2), (6, 2), (0, 3), (6, 3)]
        + [(0, 4), (1, 4), (2, 4), (4, 4), (5, 4), (6, 4), (2, 5), (4, 5), (2, 6), (3, 6), (4, 6)]
    ),
    "fireplace": _pegs_except(
        [(0, 2), (1, 2), (5, 2), (6, 2), (0, 3), (1, 3), (3, 3), (5, 3), (6, 3), (0, 4), (1, 4), (2, 4), (3, 4)]
        + [(4, 4), (5, 4), (6, 4), (2, 5), (3, 5), (4, 5), (2, 6), (3, 6), (4, 6)]
    ),
    "pyramid": _pegs_except(
        [(2, 0), (3, 0), (4, 0), (2, 1), (4, 1), (0, 2), (1, 2), (5, 2), (6, 2), (0, 3), (6, 3), (2, 5), (3, 5)]
        + [(4, 5), (2, 6), (3, 6), (4, 6)]
    ),
    "arrow": _pegs_except(
        [(2, 0), (4, 0), (0, 2), (6, 2), (0, 3), (1, 3), (2, 3), (4, 3), (5, 3), (6, 3), (0, 4), (1, 4), (2, 4)]
        + [(4, 4), (5, 4), (6, 4)]
    ),
    "english-diamond": _pegs_except([(2, 0), (4, 0), (0, 2), (6, 2), (0, 4), (6, 4), (2, 6), (4, 6)]),
}

# name -> (board text, where the last peg must end, what it is)
BOARDS: Dict[str, Tuple[str, str, str]] = {
    "english": (_cross_board(2, 3, (3, 3)), "centre", "33 holes, all full but the centre; finish in the centre"),
    **{
        name: (
            _english_pattern(pegs),
            "centre",
            f"the seed's {name.replace('english-', '')} pattern on the English board",
        )
        for name, pegs in _SEED_PATTERNS.items()
    },
    "german": (_cross_board(3, 3, (4, 4)), "centre", "45 holes (9x9 without 3x3 corners), central game"),
    "french": (_french(), "centre", "37 holes, central game (impossible)"),
    "diamond": (_diamond(), "centre", "41 holes, central game (impossible)"),
}


def builtin(name: str) -> Board:
    try:
        text, finish, _ = BOARDS[name]
    except KeyError:
        raise BoardFileError(
            f"there is no built-in board {name!r}: use one of {', '.join(BOARDS)}, or a board file"
        ) from None
    return parse_board(text, name=name, source=f"board {name}", finish=finish)


def position_class_proof(board: Board) -> Optional[str]:
    """Why the game cannot be won, by the classic position-class argument, or None if it may be.

    Colour the holes three ways along each diagonal direction ((row + col) mod 3 and
    (row - col) mod 3). A jump moves along a row or column over three consecutive holes, one of
    each colour: it changes every colour's peg count by one, flipping all three parities at once.
    So the parities, up to flipping all three, never change; a finish with other parities is out
    of reach.
    """
    start = _classes(board, board.start)
    finishes = [board.target] if board.target is not None else range(board.size)
    if any(_classes(board, 1 << hole) == start for hole in finishes):
        return None
    where = f"in {board.name_of(board.target)}" if board.target is not None else "anywhere"
    return (
        f"impossible: count the pegs on each of the three diagonal colour classes ((row+col) mod 3, and "
        f"(row-col) mod 3). Every jump changes each count by one, so their odd/even pattern can only flip "
        f"as a whole. The start's patterns are {_show(start)}; a single peg {where} has "
        f"{_show(_classes(board, 1 << finishes[0]))}, which no sequence of jumps can reach"
    )


def _classes(board: Board, position: int) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
    sums, diffs = [0, 0, 0], [0, 0, 0]
    for i, (row, col) in enumerate(board.cells):
        if position >> i & 1:
            sums[(row + col) % 3] ^= 1
            diffs[(row - col) % 3] ^= 1
    # Up to flipping all three: normalise so that the first parity is even.
    return tuple(p ^ sums[0] for p in sums), tuple(p ^ diffs[0] for p in diffs)


def _show(classes: Tuple[Tuple[int, ...], Tuple[int, ...]]) -> str:
    def word(parities: Tuple[int, ...]) -> str:
        return "/".join("odd" if p else "even" for p in parities)

    return f"{word(classes[0])} and {word(classes[1])}"

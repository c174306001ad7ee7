"""The built-in boards, drawn in the board files' notation: ``X`` a peg, ``O`` an empty hole,
a space no hole. Data only: `board.builtin(name)` parses them like any board file.
"""

from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

__all__ = ["BOARDS", "HOLE", "PEG"]

PEG, HOLE = "X", "O"


def _triangle(rows: int) -> str:
    """A triangle of `rows` rows, full but its top hole, drawn as board files draw it."""
    return "\n".join(
        " " * (rows - 1 - row) + " ".join(HOLE if row == 0 else PEG for _ in range(row + 1)) for row in range(rows)
    )


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

# name -> (board text, kind, finish, what it is)
BOARDS: Dict[str, Tuple[str, str, str, str]] = {
    "english": (_cross_board(2, 3, (3, 3)), "orthogonal", "centre", "33 holes, all full but the centre"),
    **{
        name: (
            _english_pattern(pegs),
            "orthogonal",
            "centre",
            f"the seed's {name.replace('english-', '')} pattern on the English board",
        )
        for name, pegs in _SEED_PATTERNS.items()
    },
    "german": (_cross_board(3, 3, (4, 4)), "orthogonal", "centre", "45 holes (9x9 without 3x3 corners)"),
    "french": (_french(), "orthogonal", "centre", "37 holes, central game (impossible)"),
    "diamond": (_diamond(), "orthogonal", "centre", "41 holes, central game (impossible)"),
    "french-diagonal": (_french(), "diagonal", "centre", "37 holes, jumps along diagonals too"),
    "triangle": (_triangle(5), "triangular", "any", "15 holes in 5 rows, top hole empty"),
    "triangle6": (_triangle(6), "triangular", "any", "21 holes in 6 rows, top hole empty"),
}

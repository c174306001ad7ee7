"""Peg solitaire as pictures: the start position, and a solution as a strip of small boards.

Every board shape is drawn from its holes' (row, column) cells: square boards (orthogonal and
diagonal jumps) on a square grid with chess-like names along the edges, triangular boards with
each row shifted by half a hole so that the holes sit on a triangle lattice::

    start_picture(board)                     # Picture: the board before the first jump
    solution_picture(board, jumps)           # the start, then the board after each jump, numbered

Pegs are dark blue discs, empty holes rings; in the solution each small board shows the jump
that made it: the jumping peg's path as an orange arrow and the taken peg's hole crossed out.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ...pictures.draw import ACCENT, BLUE, INK, MUTED, PAPER, RED, Picture, font, text_width, to_picture
from ...wording import plural
from .board import Board, Jump

__all__ = ["describe_position", "draw_board", "extent", "places_of", "solution_picture", "start_picture"]

_ROW_HEIGHT = math.sqrt(3) / 2  # rows of a triangle lattice are this far apart, holes 1 apart
_SMALLEST = 24  # pixels from hole to hole in a solution's small boards, at the least


def places_of(board: Board) -> List[Tuple[float, float]]:
    """Each hole's (x, y) in hole spacings, the top-left hole's edge at (0, 0)."""
    if board.kind == "triangular":
        raw = [(col - row / 2, row * _ROW_HEIGHT) for row, col in board.cells]
    else:
        raw = [(float(col), float(row)) for row, col in board.cells]
    left = min(x for x, _ in raw)
    top = min(y for _, y in raw)
    return [(x - left, y - top) for x, y in raw]


def extent(places: Sequence[Tuple[float, float]]) -> Tuple[float, float]:
    return max(x for x, _ in places) + 1, max(y for _, y in places) + 1


def draw_board(
    draw: Any,
    board: Board,
    position: int,
    origin: Tuple[float, float],
    spacing: float,
    jump: Optional[Jump] = None,
    labels: bool = False,
) -> None:
    places = places_of(board)
    ox, oy = origin
    centre: Dict[int, Tuple[float, float]] = {
        hole: (ox + (x + 0.5) * spacing, oy + (y + 0.5) * spacing) for hole, (x, y) in enumerate(places)
    }
    radius = spacing * 0.36
    ring = max(2, int(spacing / 14))
    for hole, (cx, cy) in centre.items():
        box = (cx - radius, cy - radius, cx + radius, cy + radius)
        if position >> hole & 1:
            landed = jump is not None and hole == jump.end
            draw.ellipse(box, fill=ACCENT if landed else BLUE)
        else:
            draw.ellipse(box, outline=MUTED, width=ring)
    if jump is not None:
        sx, sy = centre[jump.start]
        ex, ey = centre[jump.end]
        _arrow(draw, (sx, sy), (ex, ey), spacing)
        cx, cy = centre[jump.over]
        cross = radius * 0.75
        width = max(3, int(spacing / 9))
        draw.line((cx - cross, cy - cross, cx + cross, cy + cross), fill=RED, width=width)
        draw.line((cx - cross, cy + cross, cx + cross, cy - cross), fill=RED, width=width)
    if labels and board.kind == "triangular":
        # No rows and columns to write along the edges: each hole carries its own name.
        small = font(max(14, int(spacing * 0.26)))
        for hole, (cx, cy) in centre.items():
            name = board.name_of(hole)
            colour = "white" if position >> hole & 1 else MUTED
            draw.text((cx - text_width(draw, name, small) / 2, cy - spacing * 0.16), name, font=small, fill=colour)
    if labels and board.kind != "triangular":
        small = font(max(14, int(spacing * 0.38)))
        columns = sorted({col for _, col in board.cells})
        rows = sorted({row for row, _ in board.cells})
        left_col, top_row = columns[0], rows[0]
        for col in columns:
            x = ox + (col - left_col + 0.5) * spacing
            letter = chr(ord("a") + col)
            draw.text((x - text_width(draw, letter, small) / 2, oy - spacing * 0.55), letter, font=small, fill=MUTED)
        for row in rows:
            y = oy + (row - top_row + 0.5) * spacing
            draw.text((ox - spacing * 0.5, y - spacing * 0.22), str(row + 1), font=small, fill=MUTED)


def _arrow(draw: Any, start: Tuple[float, float], end: Tuple[float, float], spacing: float) -> None:
    (sx, sy), (ex, ey) = start, end
    length = math.hypot(ex - sx, ey - sy)
    ux, uy = (ex - sx) / length, (ey - sy) / length
    tip = (ex - ux * spacing * 0.18, ey - uy * spacing * 0.18)
    width = max(3, int(spacing / 7))
    draw.line((sx, sy, tip[0] - ux * spacing * 0.2, tip[1] - uy * spacing * 0.2), fill=ACCENT, width=width)
    head = spacing * 0.32
    left = (tip[0] - ux * head - uy * head * 0.6, tip[1] - uy * head + ux * head * 0.6)
    right = (tip[0] - ux * head + uy * head * 0.6, tip[1] - uy * head - ux * head * 0.6)
    draw.polygon([tip, left, right], fill=ACCENT)


def describe_position(board: Board, position: int) -> str:
    """A position in words: how many pegs, and which holes are empty (or full, whichever is shorter)."""
    empty = [board.name_of(hole) for hole in range(board.size) if not position >> hole & 1]
    full = [board.name_of(hole) for hole in range(board.size) if position >> hole & 1]
    pegs = plural(len(full), "peg")
    if not empty:
        return f"{pegs}, every hole full"
    if len(empty) <= len(full):
        return f"{pegs}; empty: {', '.join(empty)}"
    return f"{pegs}, in {', '.join(full)}"


def _shape(board: Board) -> str:
    if board.kind == "triangular":
        return f"a triangle of {board.size} holes"
    jumps = "jumps along rows, columns and diagonals" if board.kind == "diagonal" else "jumps along rows and columns"
    return f"{board.size} holes ({jumps})"


def start_picture(board: Board) -> Picture:
    """The board as the job starts it, large, with the holes' names along the edges."""
    from PIL import Image, ImageDraw

    places = places_of(board)
    columns, rows = extent(places)
    spacing = min(110.0, 900 / max(columns, rows))
    margin = 80
    title_height = 90
    width = int(columns * spacing + 2 * margin)
    height = int(rows * spacing + 2 * margin + title_height)
    image = Image.new("RGB", (max(width, 700), height), PAPER)
    draw = ImageDraw.Draw(image)
    title = f"Peg solitaire: {board.name}, the start"
    draw.text((40, 30), title, font=font(40), fill=INK)
    left = (image.width - columns * spacing) / 2
    draw_board(draw, board, board.start, (left, title_height + margin), spacing, labels=True)
    names = "each hole with its name in it" if board.kind == "triangular" else "columns a, b, c... and rows 1, 2, 3..."
    alt = (
        f"A peg solitaire board, {board.name}: {_shape(board)} drawn as circles, pegs as dark blue discs and empty "
        f"holes as rings, {names}. {describe_position(board, board.start)}. The goal: {board.goal_text}."
    )
    return to_picture(image, alt, f"pegs-{board.name}-start.png")


def solution_picture(board: Board, jumps: Sequence[Jump], *, title: str = "") -> Picture:
    """The start and the board after each jump, small boards read left to right and top to
    bottom, each numbered with its jump; the last one is the finished board."""
    from PIL import Image, ImageDraw

    places = places_of(board)
    columns, rows = extent(places)
    panels = len(jumps) + 1
    # Six small boards a row at most, fewer for a wide board: a hole stays 24 pixels or more (about
    # 8 points on a phone), so a long solution grows taller rather than smaller.
    widest = max(1, int(1200 // (columns * _SMALLEST + 24)))
    across = max(1, min(6, widest, math.ceil(math.sqrt(panels * 1.2))))
    down = math.ceil(panels / across)
    panel_width = 1200 / across
    spacing = min(48.0, (panel_width - 24) / columns)
    label_height = 40
    panel_height = rows * spacing + label_height + 24
    heading = 100
    image = Image.new("RGB", (1200, int(heading + down * panel_height + 30)), PAPER)
    draw = ImageDraw.Draw(image)
    draw.text(
        (30, 24),
        title or f"Peg solitaire: {board.name}, solved in {plural(len(jumps), 'jump')}",
        font=font(40),
        fill=INK,
    )
    label = font(26)
    position = board.start
    for index in range(panels):
        jump = jumps[index - 1] if index else None
        if jump is not None:
            position = position & ~jump.needs | (1 << jump.end)
        left = (index % across) * panel_width
        top = heading + (index // across) * panel_height
        caption = "start" if jump is None else f"{index}. {board.describe(jump)}"
        draw.text((left + 12, top), caption, font=label, fill=INK if jump else MUTED)
        board_left = left + (panel_width - columns * spacing) / 2
        draw_board(draw, board, position, (board_left, top + label_height), spacing, jump)
    moves = ", ".join(f"{number}. {board.describe(jump)}" for number, jump in enumerate(jumps, start=1))
    alt = (
        f"A peg solitaire solution on the {board.name} board ({_shape(board)}), drawn as {panels} small boards "
        f"read left to right, top to bottom. The first shows the start: {describe_position(board, board.start)}. "
        "Each next board shows the pegs after one jump, numbered, with the jumping peg's path as an orange arrow "
        f"and the taken peg's hole crossed out in red. The last shows the finish: {describe_position(board, position)}. "
        f"The jumps: {moves}."
    )
    return to_picture(image, alt, f"pegs-{board.name}-solution.png")

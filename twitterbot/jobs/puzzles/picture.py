"""Each puzzle kind's solution as a picture, for its result post.

    solved_picture("hidoku", "board.txt", result.first, result.first_text)

The Hidoku path is drawn as a grid of numbers with a line from 1 to the last; the checkerboard
tiling as its squares coloured by stone; the other kinds (the equation square, the Jodici rings,
the flower disks, Panguru's moves) as their solved text, large, on a card, which keeps the
columns a post's font would lose. The alt text reads the solution out.
"""

from __future__ import annotations

from typing import Any, List, Sequence

from ...pictures.draw import BLUE, INK, MUTED, PALETTE, PAPER, Picture, font, text_card, text_width, to_picture

__all__ = ["solved_picture"]


def solved_picture(kind: str, source: str, solution: Any, text: str) -> Picture:
    """The first solution of a `kind` puzzle read from `source`, as a picture."""
    title = f"{kind.capitalize()} {source}: solved"
    name = f"puzzle-{kind}-solution.png"
    if kind == "hidoku" and _is_grid(solution):
        return _hidoku(solution, title, name)
    if kind == "checkerboard" and isinstance(solution, list) and all(isinstance(p, dict) for p in solution):
        return _tiling(solution, title, name)
    lines = text.rstrip("\n").split("\n")
    # Read aloud, a grid's rules (lines of - and |) are noise: say the rows' contents only.
    spoken = [" ".join(line.replace("|", " ").split()) for line in lines if line.strip(" -+=|")]
    alt = f"{title}, written out as text on a card, line by line: " + " / ".join(spoken)
    return text_card(title, lines, alt=alt, name=name)


def _is_grid(solution: Any) -> bool:
    return isinstance(solution, list) and bool(solution) and all(isinstance(row, list) for row in solution)


def _hidoku(grid: Sequence[Sequence[int]], title: str, name: str) -> Picture:
    from PIL import Image, ImageDraw

    rows, columns = len(grid), max(len(row) for row in grid)
    cell = min(120, 1000 // max(rows, columns))
    left, top = 60, 130
    image = Image.new("RGB", (max(800, columns * cell + 2 * left), rows * cell + top + 60), PAPER)
    draw = ImageDraw.Draw(image)
    draw.text((40, 30), title, font=font(40), fill=INK)
    left = (image.width - columns * cell) // 2
    where = {}
    for r, row in enumerate(grid):
        for c, value in enumerate(row):
            draw.rectangle(
                (left + c * cell, top + r * cell, left + (c + 1) * cell, top + (r + 1) * cell), outline=MUTED, width=2
            )
            if value:
                where[value] = (left + (c + 0.5) * cell, top + (r + 0.5) * cell)
    path = [where[number] for number in sorted(where)]
    if len(path) > 1:
        draw.line(path, fill=(170, 200, 230), width=max(4, cell // 10), joint="curve")
    digits = font(int(cell * 0.42))
    for number, (x, y) in where.items():
        label = str(number)
        colour = BLUE if number in (min(where), max(where)) else INK
        draw.text((x - text_width(draw, label, digits) / 2, y - cell * 0.27), label, font=digits, fill=colour)
    rows_text = "; ".join(" ".join(str(value) for value in row) for row in grid)
    alt = (
        f"{title}: a {rows} by {columns} grid of numbers, a pale blue line running through them from 1 to "
        f"{max(where) if where else 0}, each number touching the next. Row by row: {rows_text}."
    )
    return to_picture(image, alt, name)


def _tiling(placements: List[dict], title: str, name: str) -> Picture:
    from PIL import Image, ImageDraw

    cells = [tuple(cell) for placement in placements for cell in placement["cells"]]
    rows = max(row for row, _ in cells) + 1
    columns = max(column for _, column in cells) + 1
    cell = min(110, 1000 // max(rows, columns))
    top = 130
    image = Image.new("RGB", (max(800, columns * cell + 120), rows * cell + top + 60), PAPER)
    draw = ImageDraw.Draw(image)
    draw.text((40, 30), title, font=font(40), fill=INK)
    left = (image.width - columns * cell) // 2
    digits = font(int(cell * 0.36))
    owner = {}
    for placement in placements:
        colour = PALETTE[(placement["stone"] - 1) % len(PALETTE)]
        for row, column in placement["cells"]:
            owner[(row, column)] = placement["stone"]
            box = (left + column * cell, top + row * cell, left + (column + 1) * cell, top + (row + 1) * cell)
            draw.rectangle(box, fill=colour)
            dark = (row + column) % 2 == 1  # the checkerboard's own colouring, as a shade on each piece
            if dark:
                draw.rectangle(box, fill=tuple(int(channel * 0.72) for channel in colour))
    # Thick lines where two stones meet, thin ones inside a stone.
    for (row, column), stone in owner.items():
        x, y = left + column * cell, top + row * cell
        if owner.get((row, column + 1)) != stone:
            draw.line((x + cell, y, x + cell, y + cell), fill=INK, width=5)
        if owner.get((row + 1, column)) != stone:
            draw.line((x, y + cell, x + cell, y + cell), fill=INK, width=5)
        if owner.get((row, column - 1)) != stone:
            draw.line((x, y, x, y + cell), fill=INK, width=5)
        if owner.get((row - 1, column)) != stone:
            draw.line((x, y, x + cell, y), fill=INK, width=5)
    for placement in placements:
        row, column = min(tuple(cell) for cell in placement["cells"])
        label = str(placement["stone"])
        draw.text((left + column * cell + 10, top + row * cell + 6), label, font=digits, fill="white")
    stones = "; ".join(
        f"stone {p['stone']}: " + ", ".join(f"{chr(ord('a') + c)}{r + 1}" for r, c in p["cells"]) for p in placements
    )
    alt = (
        f"{title}: a {rows} by {columns} checkerboard cut into {len(placements)} pieces, each in its own colour "
        f"with its number in a corner, the dark squares shaded darker. The pieces' squares: {stones}."
    )
    return to_picture(image, alt, name)

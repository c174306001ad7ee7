"""What the jobs' pictures share: the `Picture` they make, fonts, colours and a text card.

A job draws with Pillow on a canvas sized for a phone (about 1,200 pixels wide: a phone shows a
post's picture 350-430 points wide at 2-3 pixels a point, so the smallest text here, 24 pixels, is
still 8-12 points) and returns a `Picture`: PNG bytes with alt text that says what a sighted
reader sees. Posting prepares it like any picture (pictures/prepare.py)::

    picture = text_card("Hidoku 6x6, solved", grid_text, alt="...")
    picture.save(Path("solution.png"))
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

from .prepare import Attachment

__all__ = ["INK", "PAPER", "ACCENT", "MUTED", "Picture", "font", "to_picture", "text_card", "text_width"]

PAPER = (252, 250, 245)
INK = (33, 37, 41)
MUTED = (120, 124, 130)
ACCENT = (230, 119, 0)  # orange: what just moved; readable for the common colour blindnesses against blue
BLUE = (31, 119, 180)
RED = (200, 40, 40)
PALETTE = (
    (31, 119, 180),
    (230, 119, 0),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
    (255, 187, 120),
    (152, 223, 138),
    (174, 199, 232),
    (255, 152, 150),
)


@dataclass(frozen=True)
class Picture:
    """A drawn picture: PNG bytes, its alt text (what a sighted reader sees, in words) and a
    file name for the dry run's folder; with `video` (an MP4: a job's animation), the post carries
    the video and `png` is its still, kept for the status page."""

    png: bytes
    alt: str
    name: str
    video: Optional[bytes] = None

    def save(self, path: Path) -> Path:
        path.write_bytes(self.png)
        return path

    @property
    def attachment(self) -> Attachment:
        if self.video is not None:
            return Attachment(self.video, self.alt, self.name, kind="video")
        return Attachment(self.png, self.alt, self.name)


def font(size: int, mono: bool = False) -> Any:
    """A TrueType font of `size` pixels: DejaVu when the system has it (Raspberry Pi OS does),
    else the one built into Pillow, which has no monospaced face (a grid is drawn cell by cell).
    A Pillow built without FreeType (pip built it where libfreetype-dev was missing) draws with
    its small bitmap font instead: a board stays readable, and the job goes on."""
    from PIL import ImageFont

    name = "DejaVuSansMono.ttf" if mono else "DejaVuSans.ttf"
    try:
        for folder in ("/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/TTF", "/usr/share/fonts/dejavu"):
            try:
                return ImageFont.truetype(str(Path(folder) / name), size)
            except OSError:
                continue
        return ImageFont.load_default(size=size)
    except ImportError:  # "The _imagingft C module is not installed"
        return ImageFont.load_default()
    except TypeError:  # Pillow before 10.1 (Debian's python3-pil up to Bookworm) has only the bitmap font
        return ImageFont.load_default()


def text_width(draw: Any, text: str, typeface: Any) -> int:
    left, _, right, _ = draw.textbbox((0, 0), text, font=typeface)
    return right - left


def to_picture(image: Any, alt: str, name: str) -> Picture:
    """The PNG of `image`, with nothing but its pixels."""
    buffer = io.BytesIO()
    image.save(buffer, "PNG", optimize=True)
    return Picture(buffer.getvalue(), alt, name)


def text_card(title: str, lines: Sequence[str], *, alt: str, name: str, footer: str = "") -> Picture:
    """Lines of text (a solved grid, a table) drawn large on a card with a title: for a result
    that is text by nature, a picture keeps its columns where a post's font would not."""
    from PIL import Image, ImageDraw

    body = font(40, mono=True)
    heading = font(44)
    small = font(28)
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    cell = max(text_width(probe, "M", body), 1)
    columns = max((len(line) for line in lines), default=1)
    line_height = 54
    width = max(900, columns * cell + 120, text_width(probe, title, heading) + 120)
    height = 150 + len(lines) * line_height + (70 if footer else 40)
    image = Image.new("RGB", (width, height), PAPER)
    draw = ImageDraw.Draw(image)
    draw.text((60, 40), title, font=heading, fill=INK)
    draw.line((60, 112, width - 60, 112), fill=MUTED, width=2)
    left = (width - columns * cell) // 2
    for row, line in enumerate(lines):
        for column, char in enumerate(line):
            if char != " ":
                draw.text((left + column * cell, 140 + row * line_height), char, font=body, fill=INK)
    if footer:
        draw.text((60, height - 60), footer, font=small, fill=MUTED)
    return to_picture(image, alt, name)

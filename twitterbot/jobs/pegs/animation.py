"""A peg solitaire solution as a short video (`pegs solve --animate`): the board the job draws,
one jump a step, each peg's path as an orange arrow and the taken peg crossed out, the start held
a second and the finish two, about ten seconds in all; encoded by Debian's ffmpeg to an H.264 MP4
that every network takes (docs/video.md), with no metadata::

    picture = solution_animation(board, jumps)   # a Picture: its still the solution's, its video the MP4
    picture.attachment                          # the video, with alt text that says what it shows

The frames are drawn with Pillow and encoded by ..animation.encode_mp4 (ffmpeg within its limits,
nothing written but the MP4). Without ffmpeg the job posts its still picture, and says so.
"""

from __future__ import annotations

import io
import logging
import subprocess
from typing import Any, List, Optional, Sequence

from ...pictures.draw import INK, MUTED, PAPER, Picture, font
from ...wording import plural
from ..animation import FFMPEG_MISSING, encode_mp4, ffmpeg_program
from .board import Board, Jump
from .picture import describe_position, draw_board, extent, places_of, solution_picture

__all__ = ["ANIMATION_SECONDS", "solution_animation"]

log = logging.getLogger(__name__)

ANIMATION_SECONDS = 10.0  # about: the jumps share 7 s, the start holds 1 s and the finish 2 s
_JUMPS_SECONDS = 7.0
_SIDE = 720  # the frame's width and height: a phone shows it whole


def solution_animation(board: Board, jumps: Sequence[Jump], *, title: str = "") -> Picture:
    """`jumps` solving `board`, as a Picture whose video is the MP4 (its PNG the still solution,
    kept for the status page); the still alone, said in the log, where ffmpeg is missing or fails."""
    still = solution_picture(board, jumps, title=title)
    program = ffmpeg_program()
    if program is None:
        log.warning("pegs: %s", FFMPEG_MISSING)
        return still
    frames, per_second = _frames(board, jumps, title)
    try:
        video = encode_mp4(program, frames, per_second, job="pegs")
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        log.warning("pegs: the animation could not be made (%s): posting the still picture instead", exc)
        return still
    start, end = describe_position(board, board.start), describe_position(board, _after(board, jumps))
    alt = (
        f"An animation, about {ANIMATION_SECONDS:g} seconds: {plural(len(jumps), 'jump')} solve the {board.name} "
        f"peg solitaire board, one at a time, each jumping peg's path an orange arrow and the peg it takes crossed "
        f"out in red. It starts from {start} and ends with {end}. The jumps: "
        + ", ".join(f"{number}. {board.describe(jump)}" for number, jump in enumerate(jumps, start=1))
        + "."
    )
    return Picture(still.png, alt, f"pegs-{board.name}-solution.mp4", video=video)


def _after(board: Board, jumps: Sequence[Jump]) -> int:
    position = board.start
    for jump in jumps:
        position = position & ~jump.needs | (1 << jump.end)
    return position


def _frames(board: Board, jumps: Sequence[Jump], title: str) -> tuple:
    """The frames as PNGs, in order, and how many a second: the start, each jump, the finish
    (its hold as repeated frames)."""
    per_second = max(1, min(8, round(len(jumps) / _JUMPS_SECONDS))) if jumps else 1
    frames: List[bytes] = []
    position = board.start
    frames += [_frame(board, position, None, title or board.name, "start")] * per_second
    for number, jump in enumerate(jumps, start=1):
        position = position & ~jump.needs | (1 << jump.end)
        frames.append(_frame(board, position, jump, title or board.name, f"{number}. {board.describe(jump)}"))
    frames += [_frame(board, position, None, title or board.name, "finished")] * (2 * per_second)
    return frames, per_second


def _frame(board: Board, position: int, jump: Optional[Jump], title: str, caption: str) -> bytes:
    """One frame: the title, the board large, the caption below (what the jump was)."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (_SIDE, _SIDE), PAPER)
    draw: Any = ImageDraw.Draw(image)
    draw.text((30, 24), title, font=font(40), fill=INK)
    columns, rows = extent(places_of(board))
    spacing = min((_SIDE - 60) / columns, (_SIDE - 200) / rows)
    left = (_SIDE - columns * spacing) / 2
    draw_board(draw, board, position, (left, 100), spacing, jump)
    draw.text((30, _SIDE - 70), caption, font=font(36), fill=INK if jump else MUTED)
    out = io.BytesIO()
    image.save(out, "PNG", compress_level=1)  # piped to ffmpeg at once: small, quick, never on disk
    return out.getvalue()

"""The monkey's record chart: record length against keystrokes (log scale), with the expected curve.

    chart = record_chart(records, expected_keystrokes, title="Hamlet, from its first letter")
    chart.save(Path("monkey.png")); chart.alt

Each record is a dot at (keystrokes typed, letters matched); a dashed line shows how many
keystrokes a record of each length is expected to take (the product of the matcher's
`expected_factor`s), so a reader sees at once whether this monkey is lucky or slow.
`progress_animation` (`monkey --animate`) shows the records appearing one by one, as a short video.
"""

from __future__ import annotations

import logging
import math
import subprocess
from typing import Any, Callable, List, Sequence, Tuple

from ...pictures.draw import ACCENT, BLUE, INK, MUTED, PAPER, Picture, font, text_width, to_picture
from ...wording import plural
from ..animation import FFMPEG_MISSING, encode_mp4, ffmpeg_program

__all__ = ["expected_keystrokes", "monkey_chart", "progress_animation", "record_chart"]

log = logging.getLogger(__name__)

_RECORDS_SECONDS = 7.0  # the records' share of the animation: with the holds, about ten seconds


def expected_keystrokes(factor: Callable[[int], float], longest: int) -> List[float]:
    """Expected keystrokes to reach a record of each length 0..longest: a record one letter
    longer takes `factor(length)` times as long."""
    expected = [1.0]
    for length in range(longest):
        expected.append(expected[-1] * max(1.0, factor(length)))
    return expected


def _power(exponent: int) -> str:
    superscript = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
    return f"10{str(exponent).translate(superscript)}"


def record_chart(records: Sequence[Any], expected: Sequence[float], *, title: str, axes: Sequence[Any] = ()) -> Picture:
    """`records`: objects with `keystrokes`, `length` and `text` (RecordLine), oldest first;
    `expected[L]`: the keystrokes a record of L letters is expected to take. `axes` (default
    `records`): the records whose extent sets the axes, so an animation's frames share them."""
    from PIL import Image, ImageDraw

    width, height = 1200, 900
    left, right, top, bottom = 130, 60, 150, 120
    image = Image.new("RGB", (width, height), PAPER)
    draw = ImageDraw.Draw(image)
    draw.text((40, 30), title, font=font(40), fill=INK)
    small, label = font(26), font(28)
    extent = list(axes) or records
    longest = max([record.length for record in extent] + [1]) + 1
    most = max([record.keystrokes for record in extent] + [10])
    decades = max(1, math.ceil(math.log10(max(most, expected[min(longest, len(expected) - 1)]) * 1.5)))
    plot_w, plot_h = width - left - right, height - top - bottom

    def x_of(keystrokes: float) -> float:
        return left + plot_w * min(1.0, math.log10(max(keystrokes, 1)) / decades)

    def y_of(length: float) -> float:
        return top + plot_h * (1 - length / longest)

    # Axes and grid: a line per power of ten (labelled every few), a line per letter or few.
    step = max(1, math.ceil(decades / 8))
    for exponent in range(0, decades + 1):
        x = x_of(10**exponent)
        draw.line((x, top, x, top + plot_h), fill=(225, 225, 225), width=1)
        if exponent % step == 0:
            text = _power(exponent)
            draw.text((x - text_width(draw, text, small) / 2, top + plot_h + 12), text, font=small, fill=MUTED)
    length_step = max(1, math.ceil(longest / 10))
    for length in range(0, longest + 1, length_step):
        y = y_of(length)
        draw.line((left, y, left + plot_w, y), fill=(225, 225, 225), width=1)
        draw.text((left - 20 - text_width(draw, str(length), small), y - 15), str(length), font=small, fill=MUTED)
    draw.line((left, top, left, top + plot_h, left + plot_w, top + plot_h), fill=INK, width=3)
    across = "keystrokes typed (log scale)"
    draw.text((left + (plot_w - text_width(draw, across, label)) / 2, height - 60), across, font=label, fill=INK)
    draw.text((20, top - 50), "record length (letters)", font=label, fill=INK)

    # The expected curve, dashed.
    points = [(x_of(keys), y_of(length)) for length, keys in enumerate(expected[: longest + 1]) if keys <= 10**decades]
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        segments = 12
        for piece in range(0, segments, 2):
            a, b = piece / segments, (piece + 1) / segments
            draw.line(
                (x0 + (x1 - x0) * a, y0 + (y1 - y0) * a, x0 + (x1 - x0) * b, y0 + (y1 - y0) * b), fill=MUTED, width=4
            )

    # The records: a step line and dots.
    previous = None
    for record in records:
        x, y = x_of(record.keystrokes), y_of(record.length)
        if previous:
            draw.line((previous[0], previous[1], x, previous[1], x, y), fill=BLUE, width=3)
        previous = (x, y)
    for index, record in enumerate(records):
        x, y = x_of(record.keystrokes), y_of(record.length)
        latest = index == len(records) - 1
        radius = 11 if latest else 8
        draw.ellipse((x - radius, y - radius, x + radius, y + radius), fill=ACCENT if latest else BLUE)
    if records:
        best = records[-1]
        quote = f"best: {best.text!r}"
        x, y = x_of(best.keystrokes), y_of(best.length)
        spot = min(x + 16, width - right - text_width(draw, quote, label))
        draw.text((spot, max(top - 40, y - 50)), quote, font=label, fill=ACCENT)

    # The legend.
    legend_y = top - 90 + 20
    draw.ellipse((width - 470, legend_y + 6, width - 454, legend_y + 22), fill=BLUE)
    draw.text((width - 440, legend_y), "records", font=small, fill=INK)
    draw.line((width - 320, legend_y + 14, width - 280, legend_y + 14), fill=MUTED, width=4)
    draw.text((width - 270, legend_y), "expected", font=small, fill=INK)
    return to_picture(image, _alt(records, expected, title, decades), "monkey-records.png")


def _alt(records: Sequence[Any], expected: Sequence[float], title: str, decades: int) -> str:
    if not records:
        return f"{title}: an empty chart of record length against keystrokes; no record yet."
    first, best = records[0], records[-1]
    ratio = best.keystrokes / expected[best.length] if best.length < len(expected) else 1.0
    if ratio < 0.5:
        luck = f"the latest record came about {1 / ratio:.0f} times sooner than expected, above the dashed line"
    elif ratio > 2:
        luck = f"the latest record came about {ratio:.0f} times later than expected, below the dashed line"
    else:
        luck = "the records follow the dashed line closely"
    return (
        f"{title}: a chart of record length in letters (up) against keystrokes typed (across, log scale, 1 to "
        f"{_power(decades)}). {plural(len(records), 'record')} as blue dots on a rising staircase, from "
        f"{plural(first.length, 'letter')} after {plural(first.keystrokes, 'keystroke')} to {plural(best.length, 'letter')} "
        f"({best.text!r}) after {best.keystrokes:,}, the latest in orange. A dashed grey line shows the keystrokes "
        f"each length is expected to take; {luck}."
    )


def _expected_and_title(setup: Any, records: Sequence[Any]) -> Tuple[List[float], str]:
    keys = setup.keyboard.count
    longest = min(setup.matcher.longest, max([record.length for record in records] + [0]) + 3)
    expected = expected_keystrokes(lambda length: setup.matcher.expected_factor(length, keys), longest)
    where = f"{setup.title}, from its first letter" if setup.mode == "prefix" else f"anywhere in {setup.title}"
    return expected, f"A monkey typing at {where}"


def monkey_chart(setup: Any, records: Sequence[Any]) -> Picture:
    """The chart of a monkey run (`job.Setup` and its records so far): the expected curve comes
    from the matcher's own `expected_factor`, so prefix and anywhere modes each get theirs."""
    expected, title = _expected_and_title(setup, records)
    return record_chart(records, expected, title=title)


def progress_animation(setup: Any, records: Sequence[Any]) -> Picture:
    """The run's progress as a short video (`monkey --animate`): the record chart, its axes those
    of the last record, filling in one record a step; the empty chart held a second, the finished
    one two, about ten seconds in all (an H.264 MP4, ..animation.encode_mp4). A Picture whose PNG is
    the finished chart; that still alone, said in the log, where ffmpeg is missing or fails."""
    still = monkey_chart(setup, records)
    program = ffmpeg_program()
    if program is None:
        log.warning("monkey: %s", FFMPEG_MISSING)
        return still
    frames, per_second = progress_frames(setup, records)
    try:
        video = encode_mp4(program, frames, per_second, job="monkey")
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        log.warning("monkey: the animation could not be made (%s): posting the still picture instead", exc)
        return still
    seconds = len(frames) / per_second
    if records:
        shows = (
            f"{plural(len(records), 'record')} appear one at a time on the chart, as blue dots on a rising "
            f"staircase, from {plural(records[0].length, 'letter')} after {plural(records[0].keystrokes, 'keystroke')} "
            f"to {plural(records[-1].length, 'letter')} ({records[-1].text!r}) after {records[-1].keystrokes:,} "
            "keystrokes"
        )
    else:
        shows = "the chart stays empty: no record yet"
    alt = f"An animation, about {seconds:.0f} seconds: {shows}. At the end: {still.alt}"
    return Picture(still.png, alt, "monkey-records.mp4", video=video)


def progress_frames(setup: Any, records: Sequence[Any]) -> Tuple[List[bytes], int]:
    """The animation's frames (PNGs, in order) and how many a second: the empty chart for a
    second, each record but the last in turn for an equal share of about seven seconds, the last (the
    finished chart) two seconds."""
    expected, title = _expected_and_title(setup, records)
    per_second = max(4, min(8, math.ceil(len(records) / _RECORDS_SECONDS)))
    hold = max(1, round(_RECORDS_SECONDS * per_second / max(1, len(records) - 1)))  # the last: the finish's hold
    frames = [record_chart([], expected, title=title, axes=records).png] * per_second
    for count in range(1, len(records) + 1):
        frame = record_chart(records[:count], expected, title=title, axes=records).png
        frames += [frame] * (hold if count < len(records) else 2 * per_second)
    return frames, per_second

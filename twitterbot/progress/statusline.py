"""A live one-line status at the bottom of a terminal, redrawn in place (as tqdm does).

Only for people watching: `status_line_for` returns a do-nothing `NullStatusLine` unless the
stream is a terminal, so cron mail and the journal never see carriage returns. The line has two
parts: the job's own (how far, how fast, when it ends) and the reporter's (the next post), each
updated by its owner, drawn job first::

    status = status_line_for(sys.stderr)
    status.show("1.2 billion keystrokes at 580 million/s", part="job")
    status.show("hamlet: 3 posts; next in 5h12m: ...")   # part="posts", the reporter's
    status.clear()   # before writing other output to the same terminal
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from typing import Callable, TextIO, Union

__all__ = ["NullStatusLine", "StatusLine", "status_line_for"]

_CLEAR = "\r\x1b[K"
_PARTS = ("job", "posts")  # the order they are drawn in


class StatusLine:
    """Shows the latest text given to `show`, redrawn at most every `min_interval` seconds."""

    def __init__(
        self, stream: TextIO, *, min_interval: float = 0.5, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._stream = stream
        self._min_interval = min_interval
        self._clock = clock
        self._parts = dict.fromkeys(_PARTS, "")
        self._drawn = False
        self._drawn_at = float("-inf")

    @property
    def _text(self) -> str:
        return " | ".join(text for text in self._parts.values() if text)

    def show(self, text: str, *, part: str = "posts") -> None:
        """Set one part of the line (the job's or the reporter's) and redraw if it is time."""
        self._parts[part] = text
        if not self._drawn or self._clock() - self._drawn_at >= self._min_interval:
            self._draw()

    def clear(self) -> None:
        """Take the line away (the next `show` or `redraw` puts it back)."""
        if self._drawn:
            self._stream.write(_CLEAR)
            self._stream.flush()
            self._drawn = False

    def redraw(self) -> None:
        if self._text and not self._drawn:
            self._draw()

    def _draw(self) -> None:
        width = shutil.get_terminal_size().columns - 1
        text = " ".join(self._text.split())
        if len(text) > width:
            text = text[: max(0, width - 1)] + "…"
        self._stream.write(_CLEAR + text)
        self._stream.flush()
        self._drawn = True
        self._drawn_at = self._clock()

    def clear_before_logging(self) -> None:
        """Make every log line (written to the same terminal) take the status line away first."""
        status = self

        class _ClearFirst(logging.Filter):
            def filter(self, record: logging.LogRecord) -> bool:
                status.clear()
                return True

        for handler in logging.getLogger().handlers:
            handler.addFilter(_ClearFirst())


class NullStatusLine:
    """No terminal: show nothing."""

    def show(self, text: str, *, part: str = "posts") -> None:
        pass

    def clear(self) -> None:
        pass

    def redraw(self) -> None:
        pass

    def clear_before_logging(self) -> None:
        pass


def status_line_for(stream: TextIO) -> Union[StatusLine, NullStatusLine]:
    """A status line on `stream` if a person is watching it, else one that shows nothing."""
    try:
        interactive = stream.isatty()
    except (AttributeError, ValueError):
        interactive = False
    if interactive and os.environ.get("TERM", "dumb") != "dumb":
        return StatusLine(stream)
    return NullStatusLine()

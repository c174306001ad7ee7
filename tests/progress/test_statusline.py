"""The terminal's live status line: drawn in place, throttled, cleared before other output, absent without a terminal."""

from __future__ import annotations

import io

from twitterbot.progress.statusline import NullStatusLine, StatusLine, status_line_for


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Ticks:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_line_is_redrawn_in_place_at_most_every_half_second() -> None:
    screen, ticks = Terminal(), Ticks()
    status = StatusLine(screen, clock=ticks)
    status.show("job: next in 6h")
    status.show("job: next in 5h59m")  # too soon: kept, not drawn
    assert screen.getvalue() == "\r\x1b[Kjob: next in 6h"
    ticks.now = 0.5
    status.show("job: next in 5h58m")
    assert screen.getvalue().endswith("\r\x1b[Kjob: next in 5h58m")


def test_clearing_before_other_output_and_redrawing_after() -> None:
    screen = Terminal()
    status = StatusLine(screen, clock=Ticks())
    status.show("job: waiting")
    status.clear()
    screen.write("a line of the command's output\n")
    status.redraw()
    assert screen.getvalue() == "\r\x1b[Kjob: waiting\r\x1b[Ka line of the command's output\n\r\x1b[Kjob: waiting"


def test_no_terminal_no_status_line(monkeypatch) -> None:
    monkeypatch.setenv("TERM", "xterm")
    assert isinstance(status_line_for(io.StringIO()), NullStatusLine)
    assert isinstance(status_line_for(Terminal()), StatusLine)
    monkeypatch.setenv("TERM", "dumb")
    assert isinstance(status_line_for(Terminal()), NullStatusLine)

"""A progress post's text: `clean` keeps a job's message to one line of plain text."""

from __future__ import annotations

import pytest

from twitterbot.progress.text import clean


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("\x1b[32mgreen\x1b[0m\tand\x07 clean\r\n", "green and clean"),
        ("\x1b]0;a window title\x07done", "done"),  # an OSC sequence goes whole, its text too
        ("\x1b]8;;https://example.org\x1b\\link\x1b]8;;\x1b\\ here", "link here"),  # a terminal hyperlink
        ("\x9b1mbold\x9b0m", "bold"),  # C1's one-character CSI
        ("\x1b[?25lhidden cursor\x1b[?25h", "hidden cursor"),
        ("line one\nline two", "line one line two"),
    ],
)
def test_clean_drops_escape_sequences_whole_and_writes_control_characters_as_spaces(
    message: str, expected: str
) -> None:
    assert clean(message) == expected

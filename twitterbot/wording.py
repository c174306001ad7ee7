"""How the bot words counts and durations in its messages, the same everywhere; and text from
outside (a web page's title, a command's output, a server's error) made safe to print or log:
`printable` drops what a terminal would obey (escape sequences, NUL, bidi overrides), `one_line`
writes line breaks and control characters as escapes so one log record stays one line::

    printable("Hi\x1b[2J there\u202e")   # 'Hi there'
    one_line("job\nERROR forged")          # 'job\\nERROR forged'
"""

from __future__ import annotations

import re
import unicodedata
from datetime import timedelta
from typing import Callable

__all__ = ["format_duration", "one_line", "plural", "preview", "printable", "without_escapes"]

# Terminal escape sequences, whole: CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \\), and the
# other two-character ones; C1's single-character CSI (U+009B) too.
_ESCAPE_SEQUENCE = re.compile(r"(\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)?|\x1b[@-Z\\-_]")
# Characters that reorder or break text without showing: bidi embeddings, overrides and isolates,
# the line and paragraph separators.
_INVISIBLE = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029"


def _control(char: str) -> bool:
    return unicodedata.category(char) == "Cc" or char in _INVISIBLE


def printable(text: str) -> str:
    """`text` without terminal escape sequences and control characters (C0, C1, NUL, DEL, bidi
    controls); tabs and line breaks become spaces."""
    text = without_escapes(text)
    return "".join(" " if char in _BREAKS else char for char in text if char in _BREAKS or not _control(char))


_BREAKS = "\t\n\r\u2028\u2029"


def without_escapes(text: str) -> str:
    """`text` without the terminal escape sequences in it (colours, cursor moves, window titles),
    each removed whole; anything else, control characters too, is left for the caller to treat."""
    return _ESCAPE_SEQUENCE.sub("", text)


def one_line(text: str) -> str:
    """`text` with every control character written as an escape (a newline as \\n, ESC as \\x1b), so
    it cannot start a line of its own or steer a terminal."""
    if not any(_control(char) for char in text):
        return text
    return "".join(_escape(char) if _control(char) else char for char in text)


def _escape(char: str) -> str:
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
    if char in named:
        return named[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def plural(count: int, noun: str, *, figure: Callable[[int], str] = "{:,}".format) -> str:
    """ "1 position", "2,048 positions": a count and its noun. `figure` writes the count another
    way, e.g. as a person reads a huge one at a glance ("3.1 billion keystrokes")."""
    return f"{figure(count)} {noun}{'' if count == 1 else 's'}"


def format_duration(span: timedelta) -> str:
    """A duration as a setting is written, so a message can be pasted back: 1h30m, 45s, 0s."""
    seconds = int(span.total_seconds())
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return "".join(f"{value}{unit}" for value, unit in ((hours, "h"), (minutes, "m"), (seconds, "s")) if value) or "0s"


def preview(text: str, limit: int = 60) -> str:
    """A text quoted on one line and shortened, for log messages."""
    flat = text.replace("\n", " / ")
    return '"' + (flat if len(flat) <= limit else flat[: limit - 1] + "…") + '"'

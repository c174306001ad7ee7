"""A progress post's text: a template filled with the job's news and made to fit every network
it goes to, shortened a word at a time (a link is never cut), and the small wording helpers the
reporter and the jobs share::

    fit("{name}: {message} ({elapsed})", {"name": "hamlet", "elapsed": "3h"}, message, config[POST_TO])
"""

from __future__ import annotations

import re
import string
from typing import Callable, Iterable, Mapping, Optional, Sequence

from ..networks import Network
from ..wording import without_escapes

__all__ = ["check_template", "clean", "fit", "format_elapsed", "tidy"]

_ELLIPSIS = "…"


def check_template(template: str, known: Iterable[str]) -> None:
    """Raise ValueError naming the first field `template` uses that is not in `known`."""
    names = set(known)
    for _, field, _, _ in string.Formatter().parse(template):
        if field is None:
            continue
        base = re.split(r"[.\[]", field, maxsplit=1)[0]
        if base == "" or base.isdigit():
            raise ValueError(f"template {template!r} has an unnamed field {{{field}}}: name it, e.g. {{message}}")
        if base not in names:
            raise ValueError(
                f"template {template!r} uses {{{base}}}, which this job does not have: use {', '.join(sorted(names))}"
            )


def fit(template: str, fields: Mapping[str, object], message: str, networks: Sequence[Network]) -> Optional[str]:
    """Fill `template` and make it fit every one of `networks` (X's weighted 280, Bluesky's 300
    graphemes...): shorten the message a word at a time (URLs are words, so never cut), then, if
    the rest alone is too long, the whole text. None if nothing sensible fits."""

    def _fits(text: str) -> bool:
        return bool(text) and all(network.measure(text).fits for network in networks)

    full = tidy(template.format_map({**fields, "message": message}))
    if _fits(full):
        return full
    words = message.split(" ")
    shortened = _longest_fitting(
        len(words), lambda n: tidy(template.format_map({**fields, "message": _cut(words, n)})), _fits
    )
    if shortened is not None:
        return shortened
    if "://" not in message and "www." not in message:
        # Scripts written without spaces (Chinese, Japanese) have no words to cut at.
        shortened = _longest_fitting(
            len(message), lambda n: tidy(template.format_map({**fields, "message": message[:n] + _ELLIPSIS})), _fits
        )
        if shortened is not None:
            return shortened
    all_words = full.split(" ")
    return _longest_fitting(len(all_words), lambda n: _cut(all_words, n), _fits)


def format_elapsed(seconds: float) -> str:
    """A short duration: 45s, 12m, 3h12m, 2d3h."""
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d{hours}h" if hours else f"{days}d"
    if hours:
        return f"{hours}h{minutes:02d}m" if minutes else f"{hours}h"
    if minutes:
        return f"{minutes}m"
    return f"{secs}s"


def _longest_fitting(count: int, text_for: Callable[[int], str], _fits: Callable[[str], bool]) -> Optional[str]:
    """The text for the largest n in 1..count-1 that fits (binary search: longer never fits better)."""
    low, high, best = 1, count - 1, None
    while low <= high:
        middle = (low + high) // 2
        text = text_for(middle)
        if _fits(text):
            best, low = text, middle + 1
        else:
            high = middle - 1
    return best


def _cut(words: list, count: int) -> str:
    kept = " ".join(words[:count]).rstrip(" ,;:-")
    # An ellipsis glued to a URL would become part of the link.
    return kept + (" " if "://" in words[count - 1] or "www." in words[count - 1] else "") + _ELLIPSIS


_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def clean(message: str) -> str:
    """A job's message as one line of plain text: no colour codes, no control characters."""
    return " ".join(_CONTROL.sub(" ", without_escapes(message)).split())


def tidy(text: str) -> str:
    """Drop what an empty field leaves behind: "finished in 3h: " -> "finished in 3h", "()" -> ""."""
    text = re.sub(r"\s*\(\s*\)", "", text)
    return re.sub(r"[\s:;,\-–—]+$", "", text).strip()

"""Blue Bots Done Quick's codes, written into a grammar's texts and replaced before the grammar runs:
the time of the run in the bot's own zone (TWEET_TIMEZONE; BBDQ used UTC), the post's number, and
an item of a rule picked by number::

    grammar = with_codes(read_grammar(path), Moment(now_in_the_bots_zone, count=lambda: 12))

``{hour}`` (00-23), ``{month}`` (01-12), ``{monthName}`` (January), ``{weekday}`` (0 for Sunday
to 6), ``{weekdayName}`` (Sunday), ``{date FORMAT}`` with PHP's date letters (`php_date`),
``{n}`` (the post's number: the bot's posts so far, and one), ``{n mod N}`` or ``{n % N}``, then
``{item #rule# N}``: the rule's text at N counted from 0, round again past the last (the rule's
own texts, before the grammar runs; the codes above may make N, and it may sit inside a tag such as
``{img URL {item #alts# {n}}}``). A grammar whose texts hold no ``{`` is handed back as it is.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Callable, Dict, List, Tuple

from ..errors import TweetFileError
from .grammar import Grammar

__all__ = ["CODES", "Moment", "codes_in", "php_date", "uses_codes", "with_codes"]

CODES = ("{hour}", "{month}", "{monthName}", "{weekday}", "{weekdayName}", "{date ...}", "{n}", "{item ...}")

_SIMPLE = re.compile(r"\{(hour|month|monthName|weekday|weekdayName)\}")
_DATE = re.compile(r"\{date ([^}]+)\}")
_NUMBER = re.compile(r"\{n(?: (?:mod|%) (\d+))?\}")
_ITEM = re.compile(r"\{item #([^ }]+)# ([^{}]*)\}")  # its number is checked (`item` in `with_codes`)
_ANY = re.compile(r"\{(?:hour|month|monthName|weekday|weekdayName|date |n[ }]|item )")
_NAMED = re.compile(r"\{(hour|monthName|month|weekdayName|weekday|date|n|item)[ }]")


@dataclass(frozen=True)
class Moment:
    """What the codes are read at: the run's time, aware, in the bot's zone, and how to count the
    post's number (asked of the history only by a grammar that writes ``{n}``)."""

    at: datetime
    count: Callable[[], int] = lambda: 1


def uses_codes(grammar: Grammar) -> bool:
    """Whether any text of the grammar holds one of the codes."""
    return any(_ANY.search(text) for texts in grammar.rules.values() for text in texts if "{" in text)


def codes_in(grammar: Grammar) -> List[str]:
    """The codes the grammar's texts use, each once, in the order of `CODES` (for `check`)."""
    found = {f"{{{match}}}" for texts in grammar.rules.values() for text in texts for match in _NAMED.findall(text)}
    return [code for code in CODES if code.replace(" ...", "") in found]


def with_codes(grammar: Grammar, moment: Moment) -> Grammar:
    """The grammar with its codes replaced at `moment`. Raises `TweetFileError` (65) for an
    ``{item}`` naming a rule that is not there."""
    if not uses_codes(grammar):
        return grammar
    simple = {
        "hour": php_date("H", moment.at),
        "month": php_date("m", moment.at),
        "monthName": php_date("F", moment.at),
        "weekday": php_date("w", moment.at),
        "weekdayName": php_date("l", moment.at),
    }

    counted: List[int] = []

    def number() -> int:
        if not counted:
            counted.append(moment.count())
        return counted[0]

    def timed(text: str) -> str:
        if "{" not in text:
            return text
        text = _SIMPLE.sub(lambda found: simple[found.group(1)], text)
        text = _DATE.sub(lambda found: php_date(found.group(1), moment.at), text)
        return _NUMBER.sub(lambda found: str(_number(number(), found.group(1))), text)

    rules = {name: tuple(timed(text) for text in texts) for name, texts in grammar.rules.items()}

    def item(found: re.Match[str], rule: str) -> str:
        name, written = found.group(1), found.group(2).strip()
        if not written.isdigit():
            raise TweetFileError(
                f"{grammar.path or 'the grammar'} line {grammar.lines.get(rule, 1)}: rule {rule!r} has "
                f"{found.group(0)}, whose number {written!r} is not a whole number from 0: write one, "
                f"as {{item #{name}# 0}} (the first), or {{item #{name}# {{n}}}}"
            )
        number = int(written)
        texts = rules.get(name)
        if not texts:
            raise TweetFileError(
                f"{grammar.path or 'the grammar'} line {grammar.lines.get(rule, 1)}: rule {rule!r} has "
                f"{found.group(0)}, but there is no rule {name!r} with texts: add it, or fix the name"
            )
        return texts[number % len(texts)]

    picked: Dict[str, Tuple[str, ...]] = {
        name: tuple(_ITEM.sub(lambda found, name=name: item(found, name), text) for text in texts)  # type: ignore[misc]
        for name, texts in rules.items()
    }
    return replace(grammar, rules=picked)


def _number(number: int, modulus: str) -> int:
    """``{n}``, or ``{n mod N}`` (N of 0: the number itself)."""
    return number % int(modulus) if modulus and int(modulus) else number


# -- PHP's date letters ---------------------------------------------------------------------------


# English, as PHP's date() writes them (the calendar module's follow the locale).
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def _suffix(day: int) -> str:
    if day in (11, 12, 13):
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def _offset(at: datetime, colon: bool) -> str:
    offset = at.utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset is not None else 0
    sign = "-" if minutes < 0 else "+"
    hours, minutes = divmod(abs(minutes), 60)
    return f"{sign}{hours:02d}{':' if colon else ''}{minutes:02d}"


def _zone_name(at: datetime) -> str:
    zone = at.tzinfo
    return str(getattr(zone, "key", None) or at.tzname() or "UTC")


_LETTERS: Dict[str, Callable[[datetime], str]] = {
    "d": lambda at: f"{at.day:02d}",
    "D": lambda at: _DAYS[at.weekday()][:3],
    "j": lambda at: str(at.day),
    "l": lambda at: _DAYS[at.weekday()],
    "N": lambda at: str(at.isoweekday()),
    "S": lambda at: _suffix(at.day),
    "w": lambda at: str(at.isoweekday() % 7),
    "z": lambda at: str(at.timetuple().tm_yday - 1),
    "W": lambda at: f"{at.isocalendar()[1]:02d}",
    "F": lambda at: _MONTHS[at.month - 1],
    "m": lambda at: f"{at.month:02d}",
    "M": lambda at: _MONTHS[at.month - 1][:3],
    "n": lambda at: str(at.month),
    "t": lambda at: str(calendar.monthrange(at.year, at.month)[1]),
    "L": lambda at: "1" if calendar.isleap(at.year) else "0",
    "o": lambda at: str(at.isocalendar()[0]),
    "Y": lambda at: str(at.year),
    "y": lambda at: f"{at.year % 100:02d}",
    "a": lambda at: "am" if at.hour < 12 else "pm",
    "A": lambda at: "AM" if at.hour < 12 else "PM",
    "g": lambda at: str(at.hour % 12 or 12),
    "G": lambda at: str(at.hour),
    "h": lambda at: f"{at.hour % 12 or 12:02d}",
    "H": lambda at: f"{at.hour:02d}",
    "i": lambda at: f"{at.minute:02d}",
    "s": lambda at: f"{at.second:02d}",
    "e": _zone_name,
    "T": lambda at: at.tzname() or "UTC",
    "P": lambda at: _offset(at, colon=True),
    "O": lambda at: _offset(at, colon=False),
    "U": lambda at: str(int(at.timestamp())),
}


def php_date(form: str, at: datetime) -> str:
    """`at` written as PHP's ``date(form)`` writes it, in English, for the letters bots use (see
    `_LETTERS`); a backslash keeps the next character as it is, and any other character is itself.
    A naive `at` is taken as UTC."""
    if at.tzinfo is None:
        at = at.replace(tzinfo=timezone.utc)
    out = []
    escaped = False
    for char in form:
        if escaped:
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            letter = _LETTERS.get(char)
            out.append(letter(at) if letter else char)
    return "".join(out)

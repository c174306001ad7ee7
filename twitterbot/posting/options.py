"""A tweets file line's options, written at its start between braces: a content warning, a
language, the networks it is for. They are taken off the text and never count toward its length::

    {cw: Film spoilers; lang: en; only: mastodon,bluesky} The butler did it.
    {skip: x} A line for every network but X.
    {on: 12-25; hours: 7-10} Christmas morning (the time options: posting/when.py).
    \\{braces} starts a line with a literal brace.

    options, text = split_options(line, config.registry.names())
    options.warning, options.language, options.is_for(network.name)

`cw` is the warning (Mastodon's spoiler_text; where a network has no warnings the post's first
line is ``CW: <warning>``), `lang` the line's BCP 47 language tag (it overrides POST_LANGUAGE),
`only` or `skip` names networks as POST_TO does; `on`, `from`, `until`, `days`, `hours` and `at` say
when it may go (`when.LineTime`, as `options.time`). A line that does not start with ``{`` has no
options, so every tweets file written before them means what it meant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, Iterable, Optional, Tuple

from . import LONG_LINES
from .when import TIME_KEYS, LineTime, read_time

if TYPE_CHECKING:
    from ..networks import Network
    from ..settings.loading import Config

__all__ = [
    "KEYS",
    "LineOptions",
    "LineRules",
    "NO_OPTIONS",
    "PLAIN_RULES",
    "OptionError",
    "language_tag",
    "line_rules",
    "measured_text",
    "sent_text",
    "split_options",
]

KEYS = ("cw", "lang", "only", "skip", *TIME_KEYS)

# A well-formed BCP 47 tag as posts use them (RFC 5646 without extensions or private use):
# language (2-3 letters, up to three extended subtags), script (4 letters), region (2 letters or
# 3 digits), variants (5-8 characters, or a digit and 3 more).
# Text, compiled (and cached by `re`) only when a tag is read: every run imports this module.
_TAG = (
    r"(?P<language>[a-z]{2,3})(?:-[a-z]{3}){0,3}(?:-(?P<script>[a-z]{4}))?(?:-(?P<region>[a-z]{2}|[0-9]{3}))?"
    r"(?:-(?:[a-z0-9]{5,8}|[0-9][a-z0-9]{3}))*"
)


class OptionError(ValueError):
    """A line's options cannot be read; the message says what is wrong and how to write it."""


@dataclass(frozen=True)
class LineOptions:
    """What a line's braces said: its content `warning`, its `language` tag, and the networks it
    is `only` for or must `skip` (empty: every network), and when it may go (`time`: None, any time)."""

    warning: Optional[str] = None
    language: Optional[str] = None
    only: Tuple[str, ...] = ()
    skip: Tuple[str, ...] = ()
    time: Optional[LineTime] = None

    def is_for(self, network: str) -> bool:
        """Whether the line goes to `network` (one of POST_TO's)."""
        if self.only:
            return network in self.only
        return network not in self.skip

    def __bool__(self) -> bool:
        return self != NO_OPTIONS


NO_OPTIONS = LineOptions()


def language_tag(text: str) -> Optional[str]:
    """`text` as a BCP 47 language tag in its usual case (``pt-BR``, ``zh-Hant``), or None if it
    is not a well-formed one."""
    match = re.fullmatch(_TAG, text.strip(), re.IGNORECASE | re.ASCII)
    if match is None:
        return None
    parts = match.group(0).split("-")
    tag = [parts[0].lower()]
    for part in parts[1:]:
        if len(part) == 4 and part.isalpha():
            tag.append(part.title())
        elif len(part) == 2 and part.isalpha():
            tag.append(part.upper())
        else:
            tag.append(part.lower())
    return "-".join(tag)


def split_options(line: str, networks: Iterable[str]) -> Tuple[LineOptions, str]:
    """A line's options and the text after them (stripped). A line that does not start with
    ``{`` has none; ``\\{`` starts one with a literal brace. `networks` are the names `only` and
    `skip` may use (every network the bot knows). Raises `OptionError`."""
    if line.startswith("\\{"):
        return NO_OPTIONS, line[1:]
    if not line.startswith("{"):
        return NO_OPTIONS, line
    end = line.find("}")
    if end < 0:
        raise OptionError(
            "starts with { but has no closing }: close the options, as in {cw: a warning} text, "
            "or write \\{ for a literal brace"
        )
    options = _read(line[1:end], tuple(networks))
    return options, line[end + 1 :].strip()


def _read(inside: str, known: Tuple[str, ...]) -> LineOptions:
    """The options between the braces: ``key: value`` pairs separated by ``;``."""
    found: Dict[str, str] = {}
    for item in inside.split(";"):
        if not item.strip():
            continue
        key, colon, value = item.partition(":")
        key, value = key.strip().lower(), value.strip()
        if not colon:
            raise OptionError(f"has an option without a colon ({item.strip()!r}): write key: value, as in {{lang: en}}")
        if key not in KEYS:
            raise OptionError(f"has an unknown option {key!r}: the options are {', '.join(KEYS)}")
        if key in found:
            raise OptionError(f"gives the option {key!r} twice: keep one")
        if not value:
            raise OptionError(f"gives the option {key!r} no value: write {key}: followed by one")
        found[key] = value
    if "only" in found and "skip" in found:
        raise OptionError("has both only and skip: use one of them")
    language = None
    if "lang" in found:
        language = language_tag(found["lang"])
        if language is None:
            raise OptionError(
                f"has a language {found['lang']!r} that is not a BCP 47 tag: write one like en, de or pt-BR"
            )
    try:
        time = read_time(found)
    except ValueError as exc:
        raise OptionError(str(exc)) from None
    return LineOptions(
        warning=found.get("cw"),
        language=language,
        only=_networks(found.get("only", ""), known, "only"),
        skip=_networks(found.get("skip", ""), known, "skip"),
        time=time,
    )


def _networks(value: str, known: Tuple[str, ...], key: str) -> Tuple[str, ...]:
    names = tuple(dict.fromkeys(name.strip().lower() for name in value.split(",") if name.strip()))
    unknown = [name for name in names if name not in known]
    if unknown:
        raise OptionError(f"names {', '.join(unknown)} in {key}, which is no network: use {', '.join(known)}")
    return names


def sent_text(text: str, options: LineOptions, network: Network) -> str:
    """What goes to `network` as the post's text: on a network without content warnings, the
    warning as the first line."""
    if options.warning and not network.content_warnings:
        return f"CW: {options.warning}\n{text}"
    return text


def measured_text(text: str, options: LineOptions, network: Network) -> str:
    """The text `network` counts for the line: what it is sent, and where the warning is a field
    of its own (Mastodon's spoiler_text), the warning too, since the server counts both."""
    if options.warning and network.content_warnings:
        return options.warning + text
    return sent_text(text, options, network)


@dataclass(frozen=True)
class LineRules:
    """What reading the tweets file needs beyond the networks: every network name `only` and
    `skip` may use, and whether a line too long for a network goes there as a thread
    (LONG_LINES=thread) instead of being left out."""

    names: Tuple[str, ...] = ()
    threads: bool = False


PLAIN_RULES = LineRules()  # `only` and `skip` name POST_TO's networks; a line too long is left out


def line_rules(config: Config) -> LineRules:
    """The tweets file's rules as the settings say: the registry's networks, LONG_LINES."""
    return LineRules(config.registry.names(), config[LONG_LINES] == "thread")

"""The tags of Cheap Bots Done Quick, Cheap Bots Toot Sweet and Blue Bots Done Quick in a grammar's
expansion: taken out of the post's text and turned into its pictures, warning, language,
visibility, sensitive flag and labels, so that a grammar made for those services moves in unchanged::

    tagged = read_tags('A card {svg <svg width="20" height="10">...</svg> A red card}{lang en}{hide}')
    tagged.text                  # 'A card'
    tagged.pictures              # (SvgPicture(markup='<svg width=...</svg>', alt='A red card'),)
    tagged.language, tagged.sensitive    # ('en', True)

A tag is found as CBDQ finds it: each ``}`` not written ``\\}`` closes a tag that the nearest ``{``
before it (not written ``\\{``) opens, on the same line, with something between them; ``\\{`` and
``\\}`` are then literal braces, in the text and in a tag alike (the CSS of an SVG). A tag is a
known word (`TAG_WORDS`) and then a space or its ``}``. Any other ``{...}`` is a data error
(`TagError`): CBDQ refused such a post too, while BBDQ left it in the text; a typo such as
``{imgg ...}`` is better named by ``check`` than posted. This module is pure: drawing and fetching
the pictures is `posting/tagpictures.py`'s.

The line options of a tweets file (``{cw: ...; lang: ...}``, posting/options.py) share the braces
at an expansion's start; they are told apart by their colon: options are ``key: value`` pairs, a
tag's word is followed by a space or ``}`` (``{lang: en}`` is an option, ``{lang en}`` a tag).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional, Tuple, Union

from ..networks.mentions import VISIBILITY_ORDER, most_private

__all__ = [
    "LABELS",
    "TAG_WORDS",
    "Picture",
    "SvgPicture",
    "TagError",
    "Tagged",
    "UrlPicture",
    "find_tags",
    "is_options",
    "may_have_tags",
    "read_tags",
    "readable",
]

# The words a tag may start with, each a service's: svg and img (all three), alt (CBTS, BBDQ),
# cut, hide, show and the visibilities (CBTS), lang and label (BBDQ).
TAG_WORDS = ("svg", "img", "alt", "cut", "hide", "show", *VISIBILITY_ORDER, "lang", "label")
# Bluesky's self-labels for a post's pictures, as BBDQ's help lists them.
LABELS = ("sexual", "nudity", "porn", "graphic-media")
# Options at an expansion's start: a word and then its colon (posting/options.py).
_OPTION = re.compile(r"\{\s*[A-Za-z]+\s*:")
# A tag's start: an unescaped brace, a tag's word, then a space or the closing brace.
_OPENING = re.compile(r"(?<!\\)\{(?:" + "|".join(TAG_WORDS) + r")(?:[ }\n]|$)")


class TagError(ValueError):
    """A tag that cannot be read; the message names it and says how to write it."""


@dataclass(frozen=True)
class SvgPicture:
    """A picture to draw from SVG markup (everything before ``<svg`` left out), with its alt text."""

    markup: str
    alt: str = ""


@dataclass(frozen=True)
class UrlPicture:
    """A picture to fetch from a URL, with its alt text."""

    url: str
    alt: str = ""


Picture = Union[SvgPicture, UrlPicture]


@dataclass(frozen=True)
class Tagged:
    """What an expansion's tags say: its text without them, its pictures in the order written,
    the content warning (the first ``{cut}``), its language (the first ``{lang}``), the most
    private visibility asked, whether its pictures are sensitive (``{hide}`` wins over ``{show}``),
    its Bluesky labels (only with pictures, as BBDQ), and the tag words used (for `check`)."""

    text: str
    pictures: Tuple[Picture, ...] = ()
    warning: Optional[str] = None
    language: Optional[str] = None
    visibility: Optional[str] = None
    sensitive: bool = False
    labels: Tuple[str, ...] = ()
    words: Tuple[str, ...] = field(default=(), compare=False)

    def __bool__(self) -> bool:
        return bool(self.words)


def may_have_tags(text: str) -> bool:
    """Whether `text` may hold a tag at all: the cheap test every expansion takes first."""
    return "{" in text and "}" in text


def is_options(text: str) -> bool:
    """Whether `text` starts with a tweets file's line options (``{cw: ...}``) rather than a tag."""
    return _OPTION.match(text) is not None


def read_tags(text: str) -> Tagged:
    """`text`'s tags read (see the module's docstring). Raises `TagError` for an unknown tag or one
    that cannot be read."""
    rest, tags = find_tags(text)
    _unclosed(text)
    if not tags:
        return Tagged(rest)
    return _meaning(rest, tags)


def readable(text: str) -> str:
    """A grammar's post as a person reads it in the history and on the status page, where the
    expansion is kept as made: its tags taken out, each picture shown as ``[picture: alt text]``
    (or ``[picture]``), its warning first (``CW: ... ·``). `text` as it is when it holds no tag or
    one that cannot be read."""
    if not may_have_tags(text):
        return text
    try:
        tagged = read_tags(text)
    except TagError:
        return text
    if not tagged:
        return text
    pictures = [f"[picture: {picture.alt}]" if picture.alt else "[picture]" for picture in tagged.pictures]
    shown = " ".join(part for part in (tagged.text, *pictures) if part)
    return f"CW: {tagged.warning} · {shown}" if tagged.warning else shown


def _unclosed(text: str) -> None:
    """A tag's word after a ``{`` that no ``}`` on its line closes: its markup would be posted as
    text (CBDQ did), so it is named instead."""
    starts = {start for start, _end in _spans(text)}
    for found in _OPENING.finditer(text):
        if found.start() not in starts:
            line = text[found.start() :].splitlines()[0]
            stray = _unescaped_before(line, "{", len(line))
            if stray > 0 and _unescaped_before(line, "}", len(line)) > stray:
                raise TagError(
                    f"has {_short(line, 40)} with a brace inside it not written \\{{ (at "
                    f"{_short(line[max(0, stray - 10) :], 30)!r}), so the tag ends early: write every brace "
                    "inside a tag as \\{ and \\} (\\\\\\\\{ in the JSON file); Tracery keeps only the last "
                    "escape between two #tags#, so put a #tag# between two escaped braces or write the style as "
                    "attributes (docs/moving-in.md, Tags in a post)"
                )
            raise TagError(
                f"has {_short(line, 40)} without its }} on the same line: a tag cannot hold a line break (write "
                "its markup on one line), and a literal brace is written \\{"
            )


def find_tags(text: str) -> Tuple[str, List[str]]:
    """`text` without its tags (braces unescaped, the spaces a tag leaves between words closed
    up), and the tags' insides in the order written, their braces unescaped."""
    spans = _spans(text)
    if not spans:
        return _unescape(text).strip(), []
    kept = ""
    tags: List[str] = []
    at = 0
    for start, end in spans:
        kept = _joined(kept, text[at:start])
        tags.append(_unescape(text[start + 1 : end - 1]))
        at = end
    return _unescape(_joined(kept, text[at:])).strip(), tags


def _joined(kept: str, more: str) -> str:
    """`more` after `kept`, where a tag was between them: one space between words, not two."""
    if kept.endswith((" ", "\t")) and more.startswith((" ", "\t")):
        more = more.lstrip(" \t")
    return kept + more


def _spans(text: str) -> List[Tuple[int, int]]:
    """Where each tag is, (start, end) in order: read from the end, each unescaped ``}`` with the
    nearest unescaped ``{`` before it, with at least one character and no line break between."""
    spans: List[Tuple[int, int]] = []
    end = len(text)
    while True:
        close = _unescaped_before(text, "}", end)
        if close < 0:
            break
        start = _unescaped_before(text, "{", close - 1)
        if start >= 0 and text.rfind("\n", start, close) < 0:
            spans.append((start, close + 1))
            end = start
        else:
            end = close
    spans.reverse()
    return spans


def _unescaped_before(text: str, char: str, end: int) -> int:
    """The last `char` before `end` not written after a backslash, or -1."""
    found = text.rfind(char, 0, max(end, 0))
    while found > 0 and text[found - 1] == "\\":
        found = text.rfind(char, 0, found)
    return found


def _unescape(text: str) -> str:
    return text.replace("\\{", "{").replace("\\}", "}") if "\\" in text else text


def _meaning(text: str, tags: List[str]) -> Tagged:
    """What the tags say together (see `Tagged`)."""
    pictures: List[Picture] = []
    own_alt: List[bool] = []  # whether each picture came with alt text of its own (BBDQ's)
    alts: List[str] = []
    warning = language = visibility = None
    hide = False
    labels: List[str] = []
    words: List[str] = []
    for inside in tags:
        word, _, content = inside.partition(" ")
        content = content.strip()
        if word not in TAG_WORDS:
            raise TagError(_unknown(inside))
        if word not in words:
            words.append(word)
        if word == "svg":
            pictures.append(_svg(content))
        elif word == "img":
            pictures.append(_img(content))
        elif word in ("alt", "cut", "lang", "label") and not content:
            raise TagError(f"has {{{word}}} with nothing after it: write {_example(word)}")
        elif word == "alt":
            alts.append(content)
        elif word == "cut":
            warning = warning or content
        elif word == "lang":
            language = language or _language(content)
        elif word == "label":
            if content not in LABELS:
                raise TagError(f"has {{label {content}}}: Bluesky's labels for pictures are {', '.join(LABELS)}")
            if content not in labels:
                labels.append(content)
        elif word == "hide":
            hide = True
        elif word in VISIBILITY_ORDER:
            visibility = most_private(visibility, word)
        if word in ("svg", "img"):
            own_alt.append(bool(pictures[-1].alt))
    return Tagged(
        text,
        _with_alts(pictures, own_alt, alts),
        warning=warning,
        language=language,
        visibility=visibility,
        sensitive=hide,
        labels=tuple(labels) if pictures else (),
        words=tuple(words),
    )


def _with_alts(pictures: List[Picture], own_alt: List[bool], alts: List[str]) -> Tuple[Picture, ...]:
    """The ``{alt}`` tags given, in order, to the pictures without alt text of their own (to all
    of them when each has its own: BBDQ's ``{alt}`` replaces a picture's), the last one repeating
    for the pictures left (CBTS)."""
    if not alts or not pictures:
        return tuple(pictures)
    takers = [index for index, has in enumerate(own_alt) if not has] or list(range(len(pictures)))
    given = list(pictures)
    for order, index in enumerate(takers):
        alt = alts[min(order, len(alts) - 1)]
        picture = given[index]
        given[index] = (
            SvgPicture(picture.markup, alt) if isinstance(picture, SvgPicture) else UrlPicture(picture.url, alt)
        )
    return tuple(given)


def _svg(content: str) -> SvgPicture:
    """``{svg <svg ...>...</svg> alt text}``: anything before ``<svg`` (an XML declaration, a
    doctype) is left out, as CBDQ does; what follows ``</svg>`` is the alt text (BBDQ's)."""
    start = content.find("<svg")
    end = content.rfind("</svg>")
    if start < 0 or end < start:
        raise TagError(
            f"has an {{svg ...}} without a whole <svg ...>...</svg> in it ({_short(content)}): write "
            '{svg <svg width="400" height="300" ...>...</svg>}'
        )
    end += len("</svg>")
    return SvgPicture(content[start:end], content[end:].strip())


def _img(content: str) -> UrlPicture:
    """``{img URL}`` or ``{img URL alt text}``: the URL runs to the first space."""
    url, _, alt = content.partition(" ")
    if not re.match(r"https?://[^\s/]+", url, re.IGNORECASE):
        raise TagError(
            f"has {{img {_short(content)}}}, which does not start with a web address: write "
            "{img https://example.org/picture.png} (alt text may follow the address)"
        )
    if "{" in url or "}" in url:  # no web address holds a bare brace: a stray one closed the tag late
        raise TagError(
            f"has {{img {_short(content)}}}, whose address holds a brace: a tag ends at its one }}, so remove the "
            "extra one (a literal brace after a tag is written \\})"
        )
    return UrlPicture(url, alt.strip())


def _language(content: str) -> str:
    from .options import language_tag

    language = language_tag(content)
    if language is None:
        raise TagError(f"has {{lang {content}}}, which is not a BCP 47 language tag: write one like en, de or pt-BR")
    return language


def _unknown(inside: str) -> str:
    word = inside.split(" ", 1)[0]
    if _OPTION.match("{" + inside):
        return (
            f"has {{{_short(inside)}}}, a line option, which is read only at the very start of a post (before "
            "any tag): move it there, or write it as a tag (lang: en as {lang en}, cw: ... as {cut ...})"
        )
    if word == "vid":
        return (
            f"has {{{_short(inside)}}}: this bot posts pictures, not videos; link to the video in the "
            "text, or post a still with {img URL}"
        )
    return (
        f"has {{{_short(inside)}}}, which is no tag: the tags are {', '.join(TAG_WORDS)}, each followed by "
        r"a space or its }; for literal braces write \{ and \} in the post (\\\\{ and \\\\} in the JSON file)"
    )


def _example(word: str) -> str:
    return {
        "alt": "{alt what the picture shows}",
        "cut": "{cut the content warning}",
        "lang": "{lang en}",
        "label": "{label nudity}",
    }[word]


def _short(text: str, most: int = 60) -> str:
    return text if len(text) <= most else text[: most - 3] + "..."

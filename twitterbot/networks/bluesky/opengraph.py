"""What a web page says about itself, for a link card: its Open Graph data, read from its head.

The standard library's HTML parser, fed the page piece by piece as it arrives; it says when the
head has ended, so the rest of the page need not be read. Entities are decoded, whitespace
collapsed, and a relative picture resolved against the page's own URL::

    parse_page('<meta property="og:title" content="Pegs &amp; holes">', "https://example.com/a/")
    # PageData(title='Pegs & holes', description='', image=None)
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Dict, List, Optional, Tuple
from urllib.parse import urljoin, urlsplit

from ...wording import printable

__all__ = ["OpenGraphParser", "PageData", "clean", "parse_page"]

log = logging.getLogger(__name__)

_MAX_TITLE = 300  # characters: a card shows a line or two; longer titles are cut with an ellipsis
_MAX_DESCRIPTION = 1000


@dataclass(frozen=True)
class PageData:
    """What a page says about itself: its title and description ("" when it says none) and the
    absolute URL of its picture (None when it names none, or names one that is not http(s))."""

    title: str
    description: str
    image: Optional[str]


# What a page may say, in the order each is preferred: Open Graph first, then Twitter's names, then
# the page's own <title> and meta description.
_TITLE_KEYS = ("og:title", "twitter:title")
_DESCRIPTION_KEYS = ("og:description", "twitter:description", "description")
_IMAGE_KEYS = ("og:image", "og:image:url", "og:image:secure_url", "twitter:image", "twitter:image:src")
_WANTED = frozenset(_TITLE_KEYS + _DESCRIPTION_KEYS + _IMAGE_KEYS)


class OpenGraphParser(HTMLParser):
    """Collects the head's meta data and first <title>, fed piece by piece; `done` once the head
    has ended (its end tag, or the body's start), so the rest of the page need not be read."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)  # entities decoded in text and attribute values
        self.meta: Dict[str, str] = {}
        self.title: List[str] = []
        self._in_title = False
        self._title_seen = False
        self.done = False

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        if self.done:
            return
        if tag == "meta":
            values = {name: value or "" for name, value in attrs}
            key = (values.get("property") or values.get("name") or "").strip().lower()
            content = values.get("content", "").strip()
            if key in _WANTED and content and key not in self.meta:
                self.meta[key] = content
        elif tag == "title" and not self._title_seen:
            self._in_title = True
        elif tag == "body":
            self.done = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self._in_title:
            self._in_title = False
            self._title_seen = True
        elif tag == "head":
            self.done = True

    def handle_data(self, data: str) -> None:
        if self._in_title and not self.done:
            self.title.append(data)

    def feed_safely(self, text: str) -> None:
        """Feed `text`; markup the parser cannot follow ends the reading, keeping what was found."""
        try:
            self.feed(text)
        except (AssertionError, AttributeError, ValueError, IndexError) as exc:
            # Some Pythons' html.parser fail on odd marked sections ("<![if ...") instead of skipping them.
            log.debug("link card: the page's markup stopped the parser (%s: %s)", type(exc).__name__, exc)
            self.done = True

    def page(self, base_url: str) -> PageData:
        meta = self.meta
        title = _first(meta, _TITLE_KEYS) or "".join(self.title)
        image = _first(meta, _IMAGE_KEYS)
        absolute = urljoin(base_url, image) if image else None
        if absolute and urlsplit(absolute).scheme not in ("http", "https"):
            absolute = None
        return PageData(
            title=clean(title, _MAX_TITLE),
            description=clean(_first(meta, _DESCRIPTION_KEYS), _MAX_DESCRIPTION),
            image=absolute,
        )


def _first(meta: Dict[str, str], keys: Tuple[str, ...]) -> str:
    return next((meta[key] for key in keys if key in meta), "")


def clean(text: str, limit: int) -> str:
    """One line of plain text, at most `limit` characters (cut at a word, with an ellipsis), with
    no control characters: a title goes into a post and onto the owner's terminal (a dry run)."""
    text = " ".join(printable(text).split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip() + "…"


def parse_page(html: str, base_url: str) -> PageData:
    """The title, description and picture a page's HTML gives (its head only). Relative picture
    URLs are resolved against `base_url`, the page's own URL after redirects."""
    parser = OpenGraphParser()
    parser.feed_safely(html)
    if not parser.done:
        with contextlib.suppress(AssertionError, AttributeError, ValueError, IndexError):
            parser.close()
    return parser.page(base_url)

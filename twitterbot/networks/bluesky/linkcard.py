"""Link cards: what a linked page says about itself (its Open Graph data), fetched within fixed bounds.

X's and Mastodon's servers fetch a linked page and show a card; Bluesky's do not: its app builds the
card before posting. `fetch_card` does what the app does, once, at post time: it fetches the page
(http and https only, a few redirects, one time limit for everything, a byte limit for the page and
one for its picture), reads ``og:title``, ``og:description`` and ``og:image`` (or the page's
``<title>`` and meta description), fetches the picture and makes a thumbnail of it. Whatever the page
does, it returns: a `Card`, or the reason there is none (a page that is slow, missing, huge, not
HTML or says nothing usable), and never raises. Both requests are the one bounded request
(`request.py`). It knows nothing of any network's client library::

    found = fetch_card("https://example.com/blog/pegs")
    if found.card:
        found.card.title, found.card.description, found.card.thumb   # thumb: a Thumbnail or None
    else:
        log.info("no link card: %s", found.reason)
"""

from __future__ import annotations

import codecs
import io
import logging
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Optional, Tuple
from urllib.parse import urlsplit

from ... import __version__
from ...wording import printable
from ..addresses import Screen, refusal
from ..request import Answer, Bounds, Failure, RequestError, request
from .opengraph import OpenGraphParser, PageData, clean

__all__ = [
    "USER_AGENT",
    "Card",
    "CardResult",
    "Limits",
    "Thumbnail",
    "describe",
    "fetch_card",
    "summary",
]

log = logging.getLogger(__name__)

USER_AGENT = f"twitterbot/{__version__} (a Raspberry Pi posting bot, fetching a link card)"
_HTML_TYPES = ("text/html", "application/xhtml+xml")
THUMB_SIDE = 2000  # pixels: a card shows its picture small; Bluesky's app sends no larger


@dataclass(frozen=True)
class Limits:
    """The bounds of one card's fetch. `seconds` is the whole time of its requests (FETCH_TIMEOUT):
    looking up, connecting, redirects, reading the page and its picture; making the thumbnail
    after is bounded by the pictures' pixel budget."""

    seconds: float = 10.0
    max_redirects: int = 3
    max_html_bytes: int = 1_000_000
    max_image_bytes: int = 5_000_000
    thumb_bytes: int = 1_000_000  # app.bsky.embed.external's thumb: maxSize
    # Whether a page, a redirect or a picture may be on this machine or a private network
    # (LINK_CARDS_LOCAL); by default only the public internet is fetched.
    local: bool = False


@dataclass(frozen=True)
class Thumbnail:
    """A card's picture, ready to upload: encoded `data` of `mime_type`, no metadata."""

    data: bytes
    mime_type: str
    width: int
    height: int
    source: str  # the picture's URL


@dataclass(frozen=True)
class Card:
    """A link card: the linked page's `uri`, its title, description and thumbnail (None when the
    page names no picture or its picture could not be used)."""

    uri: str
    title: str
    description: str
    thumb: Optional[Thumbnail] = None


@dataclass(frozen=True)
class CardResult:
    """What fetching a card gave: the `card`, or None and the `reason` there is none. With a card,
    `reason` says why it has no thumbnail, if it has none ("" otherwise). `seconds` is the time it
    took."""

    url: str
    card: Optional[Card]
    reason: str
    seconds: float


class _NoCard(Exception):
    """Why a fetch gave up: a page's own doing, never a bug."""


# -- the fetch ----------------------------------------------------------------------------------


class _Fetch:
    """One card's fetch: the page, then its picture, each through the one bounded request, all
    within `limits.seconds` from `started`."""

    def __init__(self, url: str, limits: Limits, clock: Callable[[], float], screen: Screen) -> None:
        self.url = url
        self.limits = limits
        self.screen = None if limits.local else screen
        self.clock = clock
        self.started = clock()

    def result(self, card: Optional[Card], reason: str) -> CardResult:
        return CardResult(self.url, card, reason, self.clock() - self.started)

    def card(self) -> CardResult:
        if urlsplit(self.url).scheme not in ("http", "https"):
            return self.result(None, f"{self.url} is not an http or https link")
        try:
            page = self._page()
        except _NoCard as exc:
            return self.result(None, str(exc))
        if not page.title:
            return self.result(None, f"{self.url} has no title (no og:title, no <title>)")
        card = Card(uri=self.url, title=page.title, description=page.description)
        if not page.image:
            return self.result(card, "the page names no picture (og:image)")
        try:
            thumb = self._thumbnail(page.image)
        except _NoCard as exc:
            return self.result(card, str(exc))
        return self.result(Card(card.uri, card.title, card.description, thumb), "")

    def _get(self, url: str, accept: str, max_bytes: int, *, cut: bool, what: str) -> Answer:
        """A 200 answer to GET `url`, within what is left of the time; _NoCard saying why not
        (`what` names the page or the picture in the reason)."""
        left = self.limits.seconds - (self.clock() - self.started)
        bounds = Bounds(left, max_bytes, redirects=self.limits.max_redirects, screen=self.screen, cut=cut)
        headers = {"User-Agent": USER_AGENT, "Accept": accept}
        try:
            if left <= 0:
                raise RequestError("no time left", Failure.TIMEOUT, sent=False)
            answer = request("GET", url, bounds, headers=headers, clock=self.clock)
        except RequestError as exc:
            raise _NoCard(_failed(what, url, exc, self.limits)) from None
        if answer.status_code != 200:
            raise _NoCard(f"{what} answered {answer.status_code} {answer.reason}".rstrip())
        return answer

    def _page(self) -> PageData:
        answer = self._get(
            self.url,
            "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1",
            self.limits.max_html_bytes,
            cut=True,
            what=self.url,
        )
        mime, charset = _content_type(answer)
        if mime and mime not in _HTML_TYPES:
            raise _NoCard(f"{answer.url} is not a web page ({mime})")
        if not answer.content:
            raise _NoCard(f"{answer.url} is empty")
        if not mime and not _looks_like_html(answer.content):
            raise _NoCard(f"{answer.url} is not a web page (it sends no content type, and no HTML)")
        decoder = codecs.getincrementaldecoder(_charset(charset, answer.content))(errors="replace")
        parser = OpenGraphParser()
        parser.feed_safely(decoder.decode(answer.content, final=True))
        page = parser.page(answer.url)
        if not answer.whole and not parser.done and not page.title:
            declared = _length(answer)
            limit = self.limits.max_html_bytes
            size = f"{declared:,} bytes" if declared else f"over {limit:,} bytes"
            raise _NoCard(f"{answer.url} is too big ({size}) and its first {limit:,} bytes hold no title")
        return page  # from a huge page, what its first megabyte says

    def _thumbnail(self, image_url: str) -> Thumbnail:
        what = f"its picture {image_url}"
        answer = self._get(image_url, "image/*", self.limits.max_image_bytes, cut=False, what=what)
        mime, _ = _content_type(answer)
        if mime and not (mime.startswith("image/") or mime == "application/octet-stream"):
            raise _NoCard(f"its picture {answer.url} is not an image ({mime})")
        return _fit(answer.content, answer.url, self.limits.thumb_bytes)


def _failed(what: str, url: str, exc: RequestError, limits: Limits) -> str:
    """Why there is no page or picture, from a request that gave no answer."""
    if exc.failure is Failure.REFUSED:
        redirected = f"{what} redirects to " if exc.redirected else ""
        return (
            f"{redirected}{exc}: link cards fetch only pages on the public internet"
            " (LINK_CARDS_LOCAL=yes allows your own network)"
        )
    if exc.failure is Failure.TIMEOUT:
        if what == url:
            return f"{url} took over {limits.seconds:g} s"
        return f"{what} took too long (over {limits.seconds:g} s in all)"
    if exc.failure is Failure.TOO_LARGE:
        return f"{what} is too big ({exc})"
    if exc.failure is Failure.REDIRECT:
        return f"{what} {exc}"
    return f"{what} could not be read ({exc})"


def _content_type(answer: Answer) -> Tuple[str, Optional[str]]:
    """The answer's type, in lower case without parameters ("" when it names none), and its charset."""
    mime, _, parameters = (answer.headers.get("Content-Type") or "").partition(";")
    match = re.search(r"charset\s*=\s*[\"']?([\w.:-]+)", parameters, re.IGNORECASE)
    return mime.strip().lower(), match.group(1) if match else None


def _fit(data: bytes, url: str, max_bytes: int) -> Thumbnail:
    """The picture made a thumbnail by the pictures' own preparation (upright, all metadata
    dropped, within `max_bytes` and `THUMB_SIDE` pixels a side, decoded within the pictures'
    memory budget: its size is read from its header first); _NoCard if it cannot be."""
    try:
        import PIL  # noqa: F401
    except ImportError:
        raise _NoCard("Pillow is not installed (pip install -r requirements.txt): no thumbnail") from None
    from ...pictures.limits import ImageLimits
    from ...pictures.prepare import PictureError, prepare

    limits = ImageLimits("bluesky", max_bytes, THUMB_SIDE * THUMB_SIDE, THUMB_SIDE, 1000, title="a link card")
    try:
        prepared = prepare(io.BytesIO(data), "thumbnail", limits, name=f"its picture {url}")
    except PictureError as exc:
        raise _NoCard(f"{exc}: no thumbnail") from None
    return Thumbnail(prepared.data, prepared.mime_type, prepared.width, prepared.height, url)


def _length(answer: Answer) -> Optional[int]:
    try:
        return int(answer.headers.get("Content-Length") or "")
    except ValueError:
        return None


def _looks_like_html(start: bytes) -> bool:
    lowered = start[:1024].lower()
    return b"<html" in lowered or b"<!doctype html" in lowered or b"<head" in lowered or b"<meta" in lowered


_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?\s*([\w.:-]+)", re.IGNORECASE)


def _charset(declared: Optional[str], start: bytes) -> str:
    """The page's encoding: its BOM, the Content-Type's, a <meta charset> near the top, else UTF-8."""
    if start.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    candidates = [declared]
    match = _META_CHARSET.search(start[:1024])
    if match:
        candidates.append(match.group(1).decode("ascii", "replace"))
    for name in candidates:
        if not name:
            continue
        try:
            return codecs.lookup(name).name
        except LookupError:
            continue
    return "utf-8"


def fetch_card(
    url: str,
    *,
    limits: Optional[Limits] = None,
    clock: Callable[[], float] = time.monotonic,
    screen: Screen = refusal,
) -> CardResult:
    """The card of the page at `url`, or the reason there is none, in at most `limits.seconds`
    (and the moment a thumbnail takes): past the limit, the card without its thumbnail if the
    page was read, else none. Logs what it found or why there is none. Every host (the page's,
    each redirect's, the picture's) is resolved once and must pass `screen` (`addresses.refusal`:
    the public internet only) unless `limits.local`."""
    result = _Fetch(url, limits or Limits(), clock, screen).card()
    if result.card is None:
        log.info("link card: none for %s: %s (%.1f s)", url, result.reason, result.seconds)
    elif result.reason:
        log.info("link card: %r without a thumbnail: %s (%.1f s)", result.card.title, result.reason, result.seconds)
    else:
        log.debug("link card: %r with a thumbnail (%.1f s)", result.card.title, result.seconds)
    return result


def summary(result: CardResult) -> str:
    """One line about a card (for `check --online`)."""
    card = result.card
    if card is None:
        return printable(f"no card: {result.reason}")
    thumb = card.thumb
    picture = (
        f"thumbnail {thumb.width}x{thumb.height}, {len(thumb.data):,} bytes"
        if thumb
        else f"no thumbnail: {result.reason}"
    )
    description = f", {clean(card.description, 60)!r}" if card.description else ""
    return printable(f"card {card.title!r}{description} ({picture}; {result.seconds:.1f} s)")


def describe(result: CardResult, folder: Optional[Path] = None, name: str = "card") -> List[str]:
    """Lines that show a card to a person (a dry run, `check --online`); the thumbnail is written to
    `folder` (as ``name.jpg``) when one is given, so it can be opened."""
    return [printable(line) for line in _lines(result, folder, name)]


def _lines(result: CardResult, folder: Optional[Path], name: str) -> List[str]:
    card = result.card
    if card is None:
        return [f"no link card for {result.url}: {result.reason}"]
    lines = [
        f"link card for {card.uri}:",
        f"    title: {card.title}",
        f"    description: {card.description or '(none)'}",
    ]
    thumb = card.thumb
    if thumb is None:
        lines.append(f"    thumbnail: none ({result.reason})")
    else:
        size = f"{thumb.width}x{thumb.height}, {len(thumb.data):,} bytes, {thumb.mime_type}, no metadata"
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{name}{'.png' if thumb.mime_type == 'image/png' else '.jpg'}"
            path.write_bytes(thumb.data)
            lines.append(f"    thumbnail: {path} ({size}; from {thumb.source})")
        else:
            lines.append(f"    thumbnail: {size} (from {thumb.source})")
    return lines

"""Link cards: what a linked page says about itself (its Open Graph data), fetched within fixed bounds.

X's and Mastodon's servers fetch a linked page and show a card; Bluesky's do not: its app builds the
card before posting. `fetch_card` does what the app does, once, at post time: it fetches the page
(http and https only, a few redirects, one time limit for everything, a byte limit for the page and
one for its picture), reads ``og:title``, ``og:description`` and ``og:image`` (or the page's
``<title>`` and meta description), fetches the picture and makes a thumbnail of it. Whatever the page
does, it returns: a `Card`, or the reason there is none (a page that is slow, missing, huge, not
HTML or says nothing usable), and never raises. It knows nothing of any network's client library::

    found = fetch_card("https://example.com/blog/pegs")
    if found.card:
        found.card.title, found.card.description, found.card.thumb   # thumb: a Thumbnail or None
    else:
        log.info("no link card: %s", found.reason)
"""

from __future__ import annotations

import codecs
import contextlib
import http.client
import io
import logging
import re
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Optional
from urllib.parse import quote, urljoin, urlsplit

from ... import __version__
from ...wording import printable
from ..addresses import AddressRefused, Screen, connect, refusal
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
_REDIRECTS = (301, 302, 303, 307, 308)
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_CHUNK = 64 * 1024
THUMB_SIDE = 2000  # pixels: a card shows its picture small; Bluesky's app sends no larger
# After the time limit the post stops waiting; this much more lets a fetch that ends right at the
# limit report its own reason.
_GRACE = 0.25


@dataclass(frozen=True)
class Limits:
    """The bounds of one card's fetch. `seconds` is the whole time: connecting, redirects, reading
    the page and its picture, and making the thumbnail."""

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


# -- the fetcher --------------------------------------------------------------------------------


@dataclass
class _Response:
    url: str  # after redirects
    content_type: str  # lower case, without parameters ("" when the server sent none)
    charset: Optional[str]
    connection: http.client.HTTPConnection
    response: http.client.HTTPResponse


class _CardFetch:
    """One card's fetch, run in its own thread so the caller can stop waiting at the time limit
    whatever blocks (a DNS look-up has no timeout of its own); `abandon` closes its connection."""

    def __init__(self, url: str, limits: Limits, clock: Callable[[], float], screen: Screen) -> None:
        self.url = url
        self.limits = limits
        self.screen = screen
        self.clock = clock
        self.started = clock()
        self.deadline = self.started + limits.seconds
        self.result: Optional[CardResult] = None
        self.card_so_far: Optional[Card] = None  # the card before its thumbnail
        self._lock = threading.Lock()
        self._connection: Optional[http.client.HTTPConnection] = None
        self._abandoned = False

    # The one broad catch of this module: the post must go out whatever a page does, and an
    # exception in this thread would be lost, so anything unforeseen becomes "no card" and is logged.
    def run(self) -> None:
        try:
            result = self._card()
        except Exception as exc:  # noqa: BLE001
            log.warning(
                "link card: unexpected %s while fetching %s (%s): please report it", type(exc).__name__, self.url, exc
            )
            result = self._result(None, f"unexpected {type(exc).__name__}")
        self.result = result

    def abandon(self) -> None:
        """Stop: close the connection in use, so the thread ends soon."""
        with self._lock:
            self._abandoned = True
            connection = self._connection
        if connection is not None and connection.sock is not None:
            with contextlib.suppress(OSError):
                connection.sock.shutdown(socket.SHUT_RDWR)

    def _result(self, card: Optional[Card], reason: str) -> CardResult:
        return CardResult(self.url, card, reason, self.clock() - self.started)

    def _card(self) -> CardResult:
        try:
            page = self._page()
        except _NoCard as exc:
            return self._result(None, str(exc))
        except socket.timeout:
            return self._result(None, f"{self.url} took over {self.limits.seconds:g} s")
        except (OSError, http.client.HTTPException, UnicodeError, ValueError) as exc:
            return self._result(None, f"{self.url} could not be read ({_describe(exc)})")
        if not page.title:
            return self._result(None, f"{self.url} has no title (no og:title, no <title>)")
        card = Card(uri=self.url, title=page.title, description=page.description)
        self.card_so_far = card
        if not page.image:
            return self._result(card, "the page names no picture (og:image)")
        try:
            thumb = self._thumbnail(page.image)
        except _NoCard as exc:
            return self._result(card, str(exc))
        except socket.timeout:
            return self._result(card, f"its picture {page.image} took too long (over {self.limits.seconds:g} s in all)")
        except (OSError, http.client.HTTPException, UnicodeError, ValueError) as exc:
            return self._result(card, f"its picture {page.image} could not be read ({_describe(exc)})")
        return self._result(Card(card.uri, card.title, card.description, thumb), "")

    def _page(self) -> PageData:
        fetched = self._get(self.url, accept="text/html,application/xhtml+xml;q=0.9,*/*;q=0.1")
        limit = self.limits.max_html_bytes
        try:
            if fetched.content_type and fetched.content_type not in _HTML_TYPES:
                raise _NoCard(f"{fetched.url} is not a web page ({fetched.content_type})")
            parser = OpenGraphParser()
            start = b""  # the first bytes, kept until the encoding is known
            decoder = None
            total = 0
            while not parser.done and total < limit:
                chunk = self._read(fetched, min(_CHUNK, limit - total))
                if not chunk:
                    break
                total += len(chunk)
                if decoder is None:
                    start += chunk
                    if len(start) < 1024:
                        continue
                    decoder = _decoder(fetched, start)
                    chunk, start = start, b""
                parser.feed_safely(decoder.decode(chunk))
            if decoder is None:  # the whole page is shorter than 1 KB
                if not start:
                    raise _NoCard(f"{fetched.url} is empty")
                parser.feed_safely(_decoder(fetched, start).decode(start, final=True))
            page = parser.page(fetched.url)
            if total >= limit and not parser.done and not page.title:
                declared = _length(fetched.response)
                size = f"{declared:,} bytes" if declared else f"over {limit:,} bytes"
                raise _NoCard(f"{fetched.url} is too big ({size}) and its first {limit:,} bytes hold no title")
            return page  # from a huge page, what its first megabyte says
        finally:
            fetched.connection.close()

    def _thumbnail(self, image_url: str) -> Thumbnail:
        fetched = self._get(image_url, accept="image/*")
        try:
            if fetched.content_type and not (
                fetched.content_type.startswith("image/") or fetched.content_type == "application/octet-stream"
            ):
                raise _NoCard(f"its picture {fetched.url} is not an image ({fetched.content_type})")
            limit = self.limits.max_image_bytes
            declared = _length(fetched.response)
            if declared is not None and declared > limit:
                raise _NoCard(f"its picture {fetched.url} is too big ({declared:,} bytes, over {limit:,})")
            data = bytearray()
            while True:
                chunk = self._read(fetched, _CHUNK)
                if not chunk:
                    break
                data += chunk
                if len(data) > limit:
                    raise _NoCard(f"its picture {fetched.url} is too big (over {limit:,} bytes)")
        finally:
            fetched.connection.close()
        self._check_time("its picture was read")
        return _fit(bytes(data), fetched.url, self.limits.thumb_bytes)

    def _get(self, url: str, *, accept: str) -> _Response:
        """A 200 response to GET `url`, following at most `max_redirects` redirects."""
        for _ in range(self.limits.max_redirects + 1):
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https"):
                raise _NoCard(f"{url} is not an http or https link")
            if not parts.hostname:
                raise _NoCard(f"{url} names no server")
            port = parts.port  # ValueError for a port that is not a number
            self._check_time("no answer yet")
            connection = self._connection_to(parts.scheme, parts.hostname, port)
            with self._lock:
                if self._abandoned:
                    raise _NoCard("stopped at the time limit")
                self._connection = connection
            target = quote(parts.path or "/", safe="/%:@!$&'()*+,;=~") + (
                "?" + quote(parts.query, safe="/%:@!$&'()*+,;=~?") if parts.query else ""
            )
            try:
                connection.request(
                    "GET", target, headers={"User-Agent": USER_AGENT, "Accept": accept, "Accept-Encoding": "identity"}
                )
                connection.sock.settimeout(self._check_time("no answer yet"))
                response = connection.getresponse()
            except BaseException:
                connection.close()
                raise
            if response.status in _REDIRECTS:
                location = (response.getheader("Location") or "").strip()
                connection.close()
                if not location:
                    raise _NoCard(f"{url} redirects ({response.status}) without saying where")
                url = urljoin(url, location)
                continue
            if response.status != 200:
                connection.close()
                raise _NoCard(f"{url} answered {response.status} {response.reason}".rstrip())
            content_type = response.getheader("Content-Type") or ""
            mime, _, parameters = content_type.partition(";")
            match = re.search(r"charset\s*=\s*[\"']?([\w.:-]+)", parameters, re.IGNORECASE)
            return _Response(url, mime.strip().lower(), match.group(1) if match else None, connection, response)
        raise _NoCard(f"{self.url} redirects more than {self.limits.max_redirects} times")

    def _connection_to(self, scheme: str, host: str, port: Optional[int]) -> http.client.HTTPConnection:
        """A connection to `host`, made to the addresses its name gave when they were checked: a
        page, a redirect or a picture on this machine or the home network is refused unless
        `Limits.local` allows it (docs/bluesky-link-cards.md)."""
        try:
            return connect(
                scheme,
                host,
                port,
                screen=None if self.limits.local else self.screen,
                timeout=self._check_time("no answer yet"),
            )
        except AddressRefused as exc:
            raise _NoCard(
                f"{exc}: link cards fetch only pages on the public internet (LINK_CARDS_LOCAL=yes allows your own network)"
            ) from None

    def _read(self, fetched: _Response, size: int) -> bytes:
        sock = fetched.connection.sock
        if sock is not None:
            sock.settimeout(self._check_time("still reading"))
        return fetched.response.read1(size)

    def _check_time(self, doing: str) -> float:
        """The time left, or _NoCard when it is up."""
        left = self.deadline - self.clock()
        if left <= 0:
            raise _NoCard(f"{self.url} took over {self.limits.seconds:g} s ({doing})")
        return left


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


def _length(response: http.client.HTTPResponse) -> Optional[int]:
    try:
        return int(response.getheader("Content-Length") or "")
    except ValueError:
        return None


def _decoder(fetched: _Response, start: bytes) -> codecs.IncrementalDecoder:
    """A decoder for the page, once its first bytes are known; _NoCard if they are not HTML."""
    if not fetched.content_type and not _looks_like_html(start):
        raise _NoCard(f"{fetched.url} is not a web page (it sends no content type, and no HTML)")
    return codecs.getincrementaldecoder(_charset(fetched.charset, start))(errors="replace")


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


def _describe(exc: BaseException) -> str:
    if isinstance(exc, socket.timeout):
        return "timed out"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return "its certificate was not trusted"
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text != type(exc).__name__ else text


def fetch_card(
    url: str,
    *,
    limits: Optional[Limits] = None,
    clock: Callable[[], float] = time.monotonic,
    screen: Screen = refusal,
) -> CardResult:
    """The card of the page at `url`, or the reason there is none, in at most `limits.seconds`
    (and a moment): past the limit the caller stops waiting and gets the card without its
    thumbnail if the page was read, else none. Logs what it found or why there is none. Every
    host (the page's, each redirect's, the picture's) is resolved once and must pass `screen`
    (`addresses.refusal`: the public internet only) unless `limits.local`."""
    limits = limits or Limits()
    fetch = _CardFetch(url, limits, clock, screen)
    worker = threading.Thread(target=fetch.run, name="link-card", daemon=True)
    worker.start()
    worker.join(limits.seconds + _GRACE)
    result = fetch.result
    if result is None:
        fetch.abandon()
        result = fetch.result  # it may have finished just now
    if result is None:
        elapsed = clock() - fetch.started
        reason = f"{url} took over {limits.seconds:g} s"
        if fetch.card_so_far is not None:
            result = CardResult(url, fetch.card_so_far, f"{reason} (its picture was not ready)", elapsed)
        else:
            result = CardResult(url, None, reason, elapsed)
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

"""The account's mentions on Bluesky, read from its notifications (``app.bsky.notification.
listNotifications``, which the account's PDS passes on to its AppView). Imported by the poster
(`poster.py`) when replies read them; the reading itself is here, over a function that fetches one
page, so it is tested without a server as well as against the real network::

    page = read(fetch, did, cursor, not_before=now - timedelta(days=1), limit=10)
    page.mentions   # oldest first; page.cursor: where the next read starts

Two reasons count as speaking to the bot, as on Blue Bots Done Quick: ``mention`` (a post that
links the bot's handle) and ``reply`` (a reply to one of its posts). A ``quote`` does not: it shows
the bot's post to the quoter's own followers, and answering it would walk into their thread
uninvited (a quote that also names the bot's handle is a mention, and is answered as one).

The notifications come newest first, a page at a time, sorted by the earlier of the time the
author's app wrote into the post and the time the AppView saw it. So a post can arrive below ones
already read: one held up on its way (the network passes posts on in seconds, sometimes minutes)
or from an app whose clock is behind. The cursor this module makes is its own, and allows for
that: the account's DID, a floor (ten minutes, `WINDOW`, before the newest mention handled) and the
mentions handled since the floor. A read takes every mention at or above the floor that it has not
handled, so a late one is still answered, and none twice. A read with nothing new is one request,
unless more than a page of notifications came within the window.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Tuple

from ..mentions import Author, Mention, MentionPage
from .records import BOT_LABEL, PostRef

__all__ = ["MAX_HANDLED", "MAX_PAGES", "PAGE_SIZE", "REASONS", "WINDOW", "Position", "read"]

log = logging.getLogger(__package__)  # its lines log as the poster's do

REASONS = ("mention", "reply")
PAGE_SIZE = 100  # the most listNotifications gives in one answer
# A bound on one read: 2,000 new mentions since the last run. Past it the oldest are not reached
# (a warning says so): a read must end, and the bot answers at most MAX_REPLIES_PER_RUN anyway.
MAX_PAGES = 20
# How late a mention may sort below the newest one handled and still be read.
WINDOW = timedelta(minutes=10)
# The most mentions a cursor names (about 70 bytes each): past it the floor rises above the oldest.
MAX_HANDLED = 200

# A page of notifications: (its notifications, the server's cursor to the next page or None).
Fetch = Callable[[Optional[str]], Tuple[List[Any], Optional[str]]]


@dataclass(frozen=True)
class Position:
    """Where the last read stopped: the account it was for, the `floor` below which nothing is
    read again, and the mentions at or above it that were handled (their URIs: answered, or passed
    over as the account's own or unreadable). Written as one line of text, the cursor the history
    keeps."""

    did: str
    floor: datetime
    handled: FrozenSet[str]

    def encode(self) -> str:
        return " ".join([self.did, self.floor.isoformat(), *sorted(self.handled)])

    @classmethod
    def decode(cls, text: str) -> Optional[Position]:
        """The position a cursor names, or None when it is not one of these."""
        parts = text.split()
        floor = _time(parts[1]) if len(parts) >= 2 else None
        if floor is None or not parts[0].startswith("did:") or not all(_AT_URI.fullmatch(uri) for uri in parts[2:]):
            return None
        return cls(parts[0], floor, frozenset(parts[2:]))


def read(fetch: Fetch, did: str, cursor: Optional[str], *, not_before: datetime, limit: int) -> MentionPage:
    """The mentions of the account `did` not read before, oldest first, at most `limit`; the first
    read (no cursor, or one of another account's) goes back to `not_before` and no further. Pages
    are fetched newest first until one reaches below the cursor's floor (or `not_before`)."""
    position = Position.decode(cursor) if cursor else None
    if cursor and position is None:
        log.warning(
            "the saved Bluesky mentions cursor %r cannot be read: reading the mentions since %s", cursor, not_before
        )
    if position is None or position.did != did:  # none yet, or another account's (BLUESKY_HANDLE changed)
        position = Position(did, not_before.astimezone(timezone.utc), frozenset())
    new: Dict[str, Tuple[Tuple[datetime, str], Any]] = {}
    seen: Dict[str, datetime] = {}  # every notification read at or above the floor: its sort time
    page_cursor: Optional[str] = None
    reads = 0
    reached = False
    while not reached:
        notifications, page_cursor = fetch(page_cursor)
        reads += 1
        for notification in notifications:
            at = _time(_field(notification, "indexed_at"))
            uri = _field(notification, "uri")
            if at is None or not isinstance(uri, str) or not _AT_URI.fullmatch(uri):
                log.warning("skipping a Bluesky notification without a time or a post: %.200r", notification)
            elif at < position.floor:
                reached = True  # the rest are older still
            else:
                seen[uri] = at
                if uri not in position.handled and _field(notification, "reason") in REASONS:
                    new.setdefault(uri, ((at, uri), notification))  # a post is one mention, however notified
        if not page_cursor or not notifications:
            reached = True
        elif not reached and reads >= MAX_PAGES:
            log.warning(
                "more than %d new Bluesky notifications since the last read: the oldest of them are not read",
                MAX_PAGES * PAGE_SIZE,
            )
            break
    mentions: List[Mention] = []
    passed: List[str] = []
    for (at, uri), notification in sorted(new.values(), key=lambda item: item[0]):
        if len(mentions) >= limit:
            break
        passed.append(uri)
        mention = _mention(notification, at, did)
        if mention is None:
            log.warning("skipping a Bluesky notification that is not a post: %.200r", notification)
        elif mention.author.id != did:  # never the account's own posts
            mentions.append(mention)
    if not passed:
        return MentionPage((), None, reads=reads)
    lowest = min(seen.values()) if not reached else position.floor  # a read cut short saw no lower
    return MentionPage(tuple(mentions), _next(position, passed, seen, lowest).encode(), reads=reads)


def _next(position: Position, passed: List[str], seen: Dict[str, datetime], lowest: datetime) -> Position:
    """The position after handling `passed`: the floor `WINDOW` below the newest mention handled
    (never lower than it was, nor than the lowest the read reached), and the handled mentions at
    or above it (a handled one not seen again is gone, or below the floor)."""
    handled = {uri: seen[uri] for uri in (*position.handled, *passed) if uri in seen}
    floor = max(position.floor, max(handled.values()) - WINDOW, lowest)
    kept = sorted((at for at in handled.values() if at >= floor), reverse=True)
    if len(kept) > MAX_HANDLED:
        floor = kept[MAX_HANDLED - 1]  # the newest MAX_HANDLED (and any at the same time) are kept
    return Position(position.did, floor, frozenset(uri for uri, at in handled.items() if at >= floor))


def _mention(notification: Any, indexed: datetime, own: str) -> Optional[Mention]:
    """One notification as a Mention, or None when it does not hold a post the bot can answer;
    `own` is the account's DID (a reply to one of its posts answers the bot)."""
    record = _field(notification, "record")
    author = _field(notification, "author")
    text = _field(record, "text")
    cid = _field(notification, "cid")
    did = _field(author, "did")
    handle = _field(author, "handle")
    if not (isinstance(text, str) and isinstance(cid, str) and isinstance(did, str) and isinstance(handle, str)):
        return None
    uri = _field(notification, "uri")
    reply = _field(record, "reply")
    root = _strong_ref(_field(reply, "root")) if reply is not None else (uri, cid)
    parent = _strong_ref(_field(reply, "parent")) if reply is not None else None
    if root is None or (reply is not None and parent is None):
        return None
    bio = _field(author, "description")
    return Mention(
        network="bluesky",
        id=uri,
        author=Author(id=did, handle=f"@{handle}", bot=_says_bot(author, did), bio=bio if isinstance(bio, str) else ""),
        text=text,
        created_at=_time(_field(record, "created_at")) or indexed,
        reply_to=PostRef(uri, cid, *root).encode(),
        answers_bot=parent is not None and _did_of(parent[0]) == own,
    )


def _says_bot(author: Any, did: str) -> bool:
    """Whether the account labels itself a bot: the ``bot`` self-label of its profile (a label
    with that value from the account itself; a labeler's ``bot`` is someone else's opinion)."""
    return any(
        _field(label, "val") == BOT_LABEL and _field(label, "src") == did for label in _listed(_field(author, "labels"))
    )


def _field(value: Any, name: str) -> Any:
    """A field of a notification or of a part of it, as the SDK gives it (an object with snake_case
    attributes) or as the bot reads the answer itself (`reader.py`: JSON objects, camelCase keys)."""
    if isinstance(value, dict):
        return value.get(_JSON_NAMES.get(name, name))
    return getattr(value, name, None)


_JSON_NAMES = {"indexed_at": "indexedAt", "created_at": "createdAt"}


def _listed(value: Any) -> Tuple[Any, ...]:
    """A list field's items; nothing when the answer holds something else there."""
    return tuple(value) if isinstance(value, (list, tuple)) else ()


def _strong_ref(ref: Any) -> Optional[Tuple[str, str]]:
    uri, cid = _field(ref, "uri"), _field(ref, "cid")
    if isinstance(uri, str) and uri.startswith("at://") and isinstance(cid, str) and cid:
        return uri, cid
    return None


def _did_of(uri: str) -> Optional[str]:
    """The DID an at:// URI names its repository by."""
    if not uri.startswith("at://"):
        return None
    return uri[len("at://") :].split("/", 1)[0] or None


_AT_URI = re.compile(r"at://\S+")  # what a cursor can name (its parts are split on spaces)
_ISO = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)?")


def _time(text: Any) -> Optional[datetime]:
    """An atproto datetime ("2026-11-28T11:22:25.961Z") as an aware datetime, or None."""
    if not isinstance(text, str):
        return None
    found = _ISO.fullmatch(text.strip())
    if found is None:
        return None
    whole, fraction, zone = found.groups()
    micros = (fraction or "0")[:6].ljust(6, "0")
    offset = "+00:00" if zone in (None, "Z") else zone
    try:
        return datetime.fromisoformat(f"{whole}.{micros}{offset}").astimezone(timezone.utc)
    except ValueError:
        return None

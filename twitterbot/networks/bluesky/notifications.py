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

The notifications come newest first, a page at a time; the cursor this module makes is its own:
the account's DID and the sort time and URI of the newest mention handled. A read with nothing new
is one request: its first page already reaches the mention the cursor names, or older.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..mentions import Author, Mention, MentionPage
from .records import BOT_LABEL, PostRef

__all__ = ["MAX_PAGES", "PAGE_SIZE", "REASONS", "Position", "read"]

log = logging.getLogger(__package__)  # its lines log as the poster's do

REASONS = ("mention", "reply")
PAGE_SIZE = 100  # the most listNotifications gives in one answer
# A bound on one read: 2,000 new mentions since the last run. Past it the oldest are not reached
# (a warning says so): a read must end, and the bot answers at most MAX_REPLIES_PER_RUN anyway.
MAX_PAGES = 20

# A page of notifications: (its notifications, the server's cursor to the next page or None).
Fetch = Callable[[Optional[str]], Tuple[List[Any], Optional[str]]]


@dataclass(frozen=True)
class Position:
    """Where the last read stopped: the account it was for, and the sort time (the notification's
    ``indexedAt``) and URI of the newest mention it handled. Written as one line of text, the
    cursor the history keeps."""

    did: str
    at: datetime
    uri: str

    def encode(self) -> str:
        return f"{self.did} {self.at.isoformat()} {self.uri}"

    @classmethod
    def decode(cls, text: str) -> Optional[Position]:
        """The position a cursor names, or None when it is not one of these."""
        parts = text.split()
        at = _time(parts[1]) if len(parts) == 3 else None
        if at is None or not parts[0].startswith("did:") or not parts[2].startswith("at://"):
            return None
        return cls(parts[0], at, parts[2])

    @property
    def key(self) -> Tuple[datetime, str]:
        return (self.at, self.uri)


def read(fetch: Fetch, did: str, cursor: Optional[str], *, not_before: datetime, limit: int) -> MentionPage:
    """The mentions of the account `did` newer than `cursor`, oldest first, at most `limit`; the
    first read (no cursor, or one of another account's) goes back to `not_before` and no further.
    Pages are fetched newest first until one reaches the cursor's mention (or `not_before`)."""
    position = Position.decode(cursor) if cursor else None
    if cursor and position is None:
        log.warning(
            "the saved Bluesky mentions cursor %r cannot be read: reading the mentions since %s", cursor, not_before
        )
    if position is not None and position.did != did:
        position = None  # another account's: BLUESKY_HANDLE changed since
    floor = position.at if position else not_before.astimezone(timezone.utc)
    new: Dict[str, Tuple[Tuple[datetime, str], Any]] = {}
    page_cursor: Optional[str] = None
    reads = 0
    while True:
        notifications, page_cursor = fetch(page_cursor)
        reads += 1
        reached = False
        for notification in notifications:
            at = _time(getattr(notification, "indexed_at", None))
            uri = getattr(notification, "uri", None)
            if at is None or not isinstance(uri, str):
                log.warning("skipping a Bluesky notification without a time or a post: %.200r", notification)
                continue
            if at < floor:
                reached = True  # the rest are older still
                continue
            key = (at, uri)
            if position is not None and key <= position.key:
                continue
            if getattr(notification, "reason", None) in REASONS:
                new.setdefault(uri, (key, notification))  # a post is one mention, whatever it was notified as
        if reached or not page_cursor or not notifications:
            break
        if reads >= MAX_PAGES:
            log.warning(
                "more than %d new Bluesky notifications since the last read: the oldest of them are not read",
                MAX_PAGES * PAGE_SIZE,
            )
            break
    mentions: List[Mention] = []
    last: Optional[Tuple[datetime, str]] = None
    for key, notification in sorted(new.values(), key=lambda item: item[0]):
        if len(mentions) >= limit:
            break
        last = key
        mention = _mention(notification, key[0], did)
        if mention is None:
            log.warning("skipping a Bluesky notification that is not a post: %.200r", notification)
        elif mention.author.id != did:  # never the account's own posts
            mentions.append(mention)
    return MentionPage(tuple(mentions), Position(did, *last).encode() if last else None, reads=reads)


def _mention(notification: Any, indexed: datetime, own: str) -> Optional[Mention]:
    """One notification as a Mention, or None when it does not hold a post the bot can answer;
    `own` is the account's DID (a reply to one of its posts answers the bot)."""
    record = getattr(notification, "record", None)
    author = getattr(notification, "author", None)
    text = getattr(record, "text", None)
    cid = getattr(notification, "cid", None)
    did = getattr(author, "did", None)
    handle = getattr(author, "handle", None)
    if not (isinstance(text, str) and isinstance(cid, str) and isinstance(did, str) and isinstance(handle, str)):
        return None
    uri = notification.uri
    reply = getattr(record, "reply", None)
    root = _strong_ref(getattr(reply, "root", None)) if reply is not None else (uri, cid)
    parent = _strong_ref(getattr(reply, "parent", None)) if reply is not None else None
    if root is None or (reply is not None and parent is None):
        return None
    bio = getattr(author, "description", None)
    return Mention(
        network="bluesky",
        id=uri,
        author=Author(id=did, handle=f"@{handle}", bot=_says_bot(author, did), bio=bio if isinstance(bio, str) else ""),
        text=text,
        created_at=_time(getattr(record, "created_at", None)) or indexed,
        reply_to=PostRef(uri, cid, *root).encode(),
        answers_bot=parent is not None and _did_of(parent[0]) == own,
    )


def _says_bot(author: Any, did: str) -> bool:
    """Whether the account labels itself a bot: the ``bot`` self-label of its profile (a label
    with that value from the account itself; a labeler's ``bot`` is someone else's opinion)."""
    return any(
        getattr(label, "val", None) == BOT_LABEL and getattr(label, "src", None) == did
        for label in getattr(author, "labels", None) or ()
    )


def _strong_ref(ref: Any) -> Optional[Tuple[str, str]]:
    uri, cid = getattr(ref, "uri", None), getattr(ref, "cid", None)
    if isinstance(uri, str) and uri.startswith("at://") and isinstance(cid, str) and cid:
        return uri, cid
    return None


def _did_of(uri: str) -> Optional[str]:
    """The DID an at:// URI names its repository by."""
    if not uri.startswith("at://"):
        return None
    return uri[len("at://") :].split("/", 1)[0] or None


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

"""What a network says when the bot is spoken to: its mentions, read as value objects every network
shares, so that answering them (`twitterbot.replies`) never decides by a network's name.

A network that listens gives its poster a `mentions` method (the `Listener` protocol): it reads the
mentions newer than a cursor of its own making, oldest first, leaves out the account's own posts,
and says what to ask next time::

    page = poster.mentions(cursor, not_before=now - timedelta(days=1), limit=10)
    for mention in page.mentions:            # oldest first
        mention.author.handle, mention.text  # '@ada@example.social', '@pibot hello'
    page.cursor                              # kept in the history; the next run passes it back

The cursor is opaque: only the network that made it reads it (X keeps its account id and newest
mention id there, so a run with nothing new costs one read).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Optional, Protocol, Tuple, Type, TypeVar

__all__ = [
    "AccountCursor",
    "Author",
    "Listener",
    "Mention",
    "MentionPage",
    "VISIBILITY_ORDER",
    "most_private",
    "named_first",
]

# Mastodon's visibilities, from the most public to the most private.
VISIBILITY_ORDER = ("public", "unlisted", "private", "direct")


def named_first(text: str, handle: str) -> str:
    """`text` starting with `handle` (``@ada``) and a space, unless it names them already: how a
    reply reaches its author on Mastodon, and how CBDQ began every reply on X (which refuses a
    second post of the same text, so two people asking the same get two different replies)."""
    import re

    if not handle or re.search(rf"(?<![\w@]){re.escape(handle)}(?![\w@])", text, re.IGNORECASE):
        return text
    return f"{handle} {text}"


def most_private(*visibilities: Optional[str]) -> Optional[str]:
    """The most private of `visibilities` (None where none is given): a post is never more public
    than any of them asks."""
    given = [each for each in visibilities if each in VISIBILITY_ORDER]
    return max(given, key=VISIBILITY_ORDER.index) if given else None


@dataclass(frozen=True)
class Author:
    """Who wrote a mention: their account's stable `id` (X's user id, Mastodon's account id,
    Bluesky's DID), their `handle` as people write it to reach them (``@ada``,
    ``@ada@example.social``, ``@ada.bsky.social``), whether the account says it is a bot
    (Mastodon's bot flag, Bluesky's ``bot`` self-label; False where the network cannot say), and
    their profile's text (`bio`, plain text: a ``#nobot`` there asks bots to leave them be)."""

    id: str
    handle: str
    bot: bool = False
    bio: str = ""


@dataclass(frozen=True)
class Mention:
    """One post that speaks to the bot: the `network` it is on (its name, as POST_TO writes it),
    its `id` (unique on that network: what the history knows it by), its `author`, its `text` as
    plain text (HTML taken out, entities decoded, leading @mentions kept: reply rules are matched
    against it whole), when it was made, its `visibility` (Mastodon's; None elsewhere) and
    `reply_to`: what the network's poster takes as `reply_to` to answer it, threaded under it;
    `answers_bot`: it is itself a reply to one of the account's own posts (how two bots answering
    each other are told from a person who mentions the bot anew)."""

    network: str
    id: str
    author: Author
    text: str
    created_at: datetime
    reply_to: str
    visibility: Optional[str] = None
    answers_bot: bool = False


@dataclass(frozen=True)
class MentionPage:
    """What one read of a network's mentions gave: its new `mentions`, oldest first; the `cursor`
    to pass next time (None: keep the one passed); and `reads`, the requests it made (X bills
    each)."""

    mentions: Tuple[Mention, ...]
    cursor: Optional[str]
    reads: int = 1


class Listener(Protocol):
    """A poster that can read the account's mentions."""

    def mentions(self, cursor: Optional[str], *, not_before: datetime, limit: int) -> MentionPage:
        """The mentions newer than `cursor` (None: the first read, which goes back to `not_before`
        and no further), at most `limit` (the oldest first: the rest are left for the next read,
        and the page's cursor stops before them), never the account's own posts. A failure to ask
        is a PostError (its kind and exit status as a post's); an answer that cannot be read is
        one too, never a traceback."""
        ...


_Cursor = TypeVar("_Cursor", bound="AccountCursor")


class AccountCursor:
    """The cursor of a network that reads by ids (X, Mastodon): the account's id (`me`, so a run
    with nothing new asks nothing else) and the newest item already read (`since`, digits; None
    before the first), kept as JSON. A network whose account ids are digits too says so
    (`digit_ids`)."""

    __slots__ = ("me", "since")
    digit_ids = False

    def __init__(self, me: str, since: Optional[str]) -> None:
        self.me = me
        self.since = since

    @classmethod
    def parse(cls: Type[_Cursor], text: Optional[str]) -> Optional[_Cursor]:
        """The cursor `text` holds; None for none, or for one this network did not write (the read
        then goes back to `not_before`, as a first read does: no mention is answered twice, since
        the history knows each by its id)."""
        try:
            data = json.loads(text) if text else None
        except ValueError:
            return None
        me = data.get("me") if isinstance(data, dict) else None
        if not (_digits(me) if cls.digit_ids else isinstance(me, str) and me):
            return None
        since = data.get("since")  # type: ignore[union-attr]
        return cls(me, since if _digits(since) else None)  # type: ignore[arg-type]

    def dumps(self) -> str:
        return json.dumps({"me": self.me, "since": self.since}, sort_keys=True)


def _digits(value: object) -> bool:
    """An id as X and Mastodon write them: a string of digits."""
    return isinstance(value, str) and value.isascii() and value.isdigit()

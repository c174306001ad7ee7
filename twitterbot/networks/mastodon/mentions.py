"""Mastodon's mentions, read: the account's notifications of type ``mention`` turned into
`Mention`s, a status's HTML turned into plain text, and the cursor a run keeps. No network and no
client library here: the reader asks (`reader.py`, plain GETs), this reads whatever came back.

Mastodon pages notifications by id: ``min_id`` gives the page just newer than an id (so the
oldest new ones first), ``max_id`` the page older than one. A run asks for the mentions just newer
than its cursor, at most its cap (one read when there is nothing new), and the cursor moves to the
newest it read; the first run pages back from the newest to `not_before`. The cursor is JSON,
with the account's id so that a run needs no ``verify_credentials``::

    {"me": "109876543210987654", "since": "3017"}   # "since": a notification's id, null at first

A status's text is its HTML as the server wrote it: tags removed, entities decoded, a ``<br>`` a
line break and a new paragraph a blank line, so that ``text_of('<p>Hi &amp; bye<br>x</p>')`` is
``'Hi & bye\\nx'``.
"""

from __future__ import annotations

from datetime import datetime, timezone
from html.parser import HTMLParser
from typing import Any, List, Mapping, Optional, Tuple

from ..answers import unreadable
from ..mentions import AccountCursor, Author, Mention

__all__ = ["MAX_PAGES", "PAGE_SIZE", "Cursor", "read_page", "text_of"]

PAGE_SIZE = 80  # Mastodon's largest page of notifications
MAX_PAGES = 5  # how far a first read pages back (400 mentions): never the account's whole past
MAX_HTML = 200_000  # characters of a status's or a bio's HTML read; Mastodon's own limits are far below

_WHAT = "GET /api/v1/notifications"


class Cursor(AccountCursor):
    """What a run keeps between reads of Mastodon's mentions: the account's id and the newest
    notification already read."""

    __slots__ = ()


def read_page(answer: Any, me: str, network: str) -> Tuple[List[Tuple[str, Mention]], List[str]]:
    """One page of notifications (a list of JSON objects, as the server sent it): the mentions by other accounts,
    each with its notification's id (in the page's order), and the ids of every notification on it
    (those left out too, so they need not be read again). An answer that is not the shape Mastodon
    documents is a PostError."""
    if not isinstance(answer, list):
        raise unreadable("Mastodon", f"{_WHAT} gave notifications that are not a list")
    mentions, ids = [], []
    for notification in answer:
        if not isinstance(notification, dict) or not _is_id(_id(notification.get("id"))):
            raise unreadable("Mastodon", f"{_WHAT} gave a notification without its id")
        ids.append(_id(notification["id"]))
        status, account = notification.get("status"), notification.get("account")
        if notification.get("type") != "mention" or status is None:  # another kind, or a deleted status
            continue
        if not isinstance(status, dict) or not isinstance(account, dict) or not _id(account.get("id")):
            raise unreadable("Mastodon", f"{_WHAT} gave a mention without its status or account")
        if _id(account["id"]) != me:  # never the account's own posts
            mentions.append((ids[-1], _mention(notification, status, account, me, network)))
    return mentions, ids


def _mention(
    notification: Mapping[str, Any], status: Mapping[str, Any], account: Mapping[str, Any], me: str, network: str
) -> Mention:
    status_id, content, acct = _id(status.get("id")), status.get("content"), account.get("acct")
    if not status_id or not isinstance(content, str) or not isinstance(acct, str) or not acct:
        raise unreadable("Mastodon", f"{_WHAT} gave a mention whose status or author cannot be read")
    visibility = status.get("visibility")
    note = account.get("note")
    author = Author(
        id=_id(account["id"]),
        handle="@" + acct,  # "ada" on this server, "ada@elsewhere.example" from another: both reach them from here
        bot=account.get("bot") is True,
        bio=text_of(note) if isinstance(note, str) else "",
    )
    return Mention(
        network=network,
        id=status_id,
        author=author,
        text=text_of(content),
        created_at=_when(status.get("created_at"), notification.get("created_at")),
        reply_to=status_id,
        visibility=visibility if isinstance(visibility, str) else None,
        answers_bot=_id(status.get("in_reply_to_account_id")) == me,
    )


def text_of(html: str) -> str:
    """A status's (or a bio's) HTML as plain text: tags removed, entities decoded, ``<br>`` a line
    break, paragraphs apart by a blank line; read up to MAX_HTML characters."""
    reader = _TextReader()
    reader.feed(html[:MAX_HTML])
    reader.close()
    return "".join(reader.parts).strip()


class _TextReader(HTMLParser):
    """Collects a status's text as Mastodon's formatter wrote it (``<p>``, ``<br />``, links whose
    hidden parts still hold the whole address)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: List[str] = []
        self._paragraphs = 0

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        if tag == "br":
            self.parts.append("\n")
        elif tag == "p":
            if self._paragraphs:
                self.parts.append("\n\n")
            self._paragraphs += 1

    def handle_startendtag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def _when(*values: Any) -> datetime:
    """The first readable time of `values` (a string is ISO 8601, as Mastodon writes it)."""
    for value in values:
        if isinstance(value, str):
            try:
                value = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                continue
        if isinstance(value, datetime):
            return value.astimezone(timezone.utc) if value.tzinfo else value.replace(tzinfo=timezone.utc)
    raise unreadable("Mastodon", f"{_WHAT} gave a mention without a readable time")


def _id(value: Any) -> str:
    """An id as Mastodon writes it (a string; another server may write an int), else ''."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return ""
    return str(value)


def _is_id(value: Any) -> bool:
    """A notification's id: digits (Mastodon's ids are numbers written as strings)."""
    return isinstance(value, str) and value.isascii() and value.isdigit()

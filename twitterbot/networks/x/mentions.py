"""X's mentions, read: the query of ``GET /2/users/:id/mentions``, its pages turned into `Mention`s,
and the cursor a run keeps. No network and no client library here: the reader (reader.py) asks,
this reads.

X gives mentions newest first, in pages of at most 100, each page one billed read; ``since_id``
asks only for posts newer than an id. So a read pages back to the cursor (or, the first time, to
`not_before`), then answers the oldest first. When more are new than a run answers, the cursor
stops at the last one answered, and the next run's ``since_id`` starts there: none is skipped and
none read as new twice. The cursor is JSON, the account's id with it, so a run with nothing new
costs one read (no ``GET /2/users/me``)::

    {"me": "12345", "since": "1456012973835788299"}   # "since": null until a mention is seen
"""

from __future__ import annotations

import html
from datetime import datetime, timezone
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ..answers import unreadable
from ..mentions import AccountCursor, Author, Mention

__all__ = ["MAX_PAGES", "PAGE_SIZE", "Cursor", "mentions_query", "read_page"]

# X's largest page (one billed read), and how many pages a read goes back at most: X serves only
# the 800 most recent mentions, so more pages could not reach further.
PAGE_SIZE = 100
MAX_PAGES = 8

_WHAT = "GET /2/users/:id/mentions"


class Cursor(AccountCursor):
    """What a run keeps between reads of X's mentions: the account's id and the newest
    mention already read."""

    __slots__ = ()
    digit_ids = True


def mentions_query(cursor: Cursor, not_before: datetime, token: Optional[str]) -> Dict[str, Any]:
    """The parameters of one page's read (X's names): newer than the cursor's mention, or (the
    first read) made since `not_before`; with the fields a `Mention` needs."""
    query: Dict[str, Any] = {
        "max_results": PAGE_SIZE,
        "expansions": "author_id",
        "tweet.fields": "author_id,conversation_id,created_at,in_reply_to_user_id,note_tweet,referenced_tweets",
        "user.fields": "description,username",
    }
    if cursor.since:
        query["since_id"] = cursor.since
    else:
        query["start_time"] = not_before.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    if token:
        query["pagination_token"] = token
    return query


def read_page(answer: Mapping[str, Any], me: str) -> Tuple[List[Mention], Optional[str], Optional[str]]:
    """One page of X's answer: its mentions by other accounts (newest first, as X gives them),
    the newest id on the page (the account's own posts counted: they need not be read again) and
    the next page's token. An answer that is not the shape X documents is a PostError."""
    data = answer.get("data", [])
    meta = answer.get("meta", {})
    if not isinstance(data, list) or not isinstance(meta, dict):
        raise unreadable("X", f"{_WHAT} gave posts that are not a list")
    token = meta.get("next_token")
    if token is not None and not isinstance(token, str):
        raise unreadable("X", f"{_WHAT} gave a next_token that is not a string")
    users = _users(answer.get("includes"))
    mentions, newest = [], None
    for post in data:
        if not isinstance(post, dict) or not _is_id(post.get("id")) or not _is_id(post.get("author_id")):
            raise unreadable("X", f"{_WHAT} gave a post without its id or author's id")
        if newest is None or int(post["id"]) > int(newest):
            newest = post["id"]
        if post["author_id"] != me:  # never the account's own posts
            mentions.append(_mention(post, users.get(post["author_id"]), me))
    return mentions, newest, token or None


def _mention(post: Mapping[str, Any], user: Optional[Mapping[str, Any]], me: str) -> Mention:
    note = post.get("note_tweet")  # a post longer than 280: `text` holds its start, this the whole
    text = note.get("text") if isinstance(note, dict) and isinstance(note.get("text"), str) else post.get("text")
    if not isinstance(text, str):
        raise unreadable("X", f"{_WHAT} gave a post without its text")
    username = user.get("username") if user else None
    bio = user.get("description") if user else None
    author = Author(
        id=post["author_id"],
        handle=f"@{username}" if isinstance(username, str) and username else "",
        bot=False,  # X keeps its "Automated" label where the API cannot read it
        bio=bio if isinstance(bio, str) else "",
    )
    return Mention(
        network="x",
        id=post["id"],
        author=author,
        text=html.unescape(text),  # X escapes &, < and > in a post's text
        created_at=_when(post.get("created_at")),
        reply_to=post["id"],
        answers_bot=_answers(post, me),
    )


def _answers(post: Mapping[str, Any], me: str) -> bool:
    """Whether the post replies to one of the account's own posts."""
    referenced = post.get("referenced_tweets")
    replies = isinstance(referenced, list) and any(
        isinstance(each, dict) and each.get("type") == "replied_to" for each in referenced
    )
    return replies and post.get("in_reply_to_user_id") == me


def _users(includes: Any) -> Dict[str, Mapping[str, Any]]:
    """The authors X included, by id (those that cannot be read are left out)."""
    users = includes.get("users") if isinstance(includes, dict) else None
    return {
        user["id"]: user
        for user in (users if isinstance(users, list) else ())
        if isinstance(user, dict) and _is_id(user.get("id"))
    }


def _when(value: Any) -> datetime:
    """A post's `created_at` (RFC 3339, UTC), or a PostError."""
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else None
    except ValueError:
        when = None
    if when is None:
        raise unreadable("X", f"{_WHAT} gave a post without a readable created_at")
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _is_id(value: object) -> bool:
    """An X id as the API writes it: a string of digits."""
    return isinstance(value, str) and value.isascii() and value.isdigit()

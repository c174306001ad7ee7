"""Reading X without tweepy: the account, its recent posts and its mentions, each one signed GET
of the API v2 (OAuth 1.0a by oauthlib, tweepy's own signer: `api.sign`) through the one bounded
request (`request.py`: within API_TIMEOUT in all, whatever the server does), read by the bot
itself, whatever the answer's shape. A round of replies with nothing new needs only this: tweepy,
its `Client` and the pictures' code are imported when a post is made (`poster.py`)::

    reader = XReader(credentials, timeout=20)
    page = reader.mentions(cursor, not_before=a_day_ago, limit=10)   # one request when nothing is new
"""

from __future__ import annotations

import logging
import time
from datetime import datetime
from typing import TYPE_CHECKING, List, Mapping, Optional
from urllib.parse import urlencode

from .. import LookUp, PostOptions
from ..answers import MAX_ANSWER_BYTES, json_object, unreadable
from ..request import Answer, Bounds, RequestError, request
from .api import DEFAULT_BASE_URL, Credentials, limits_left, sign, status_url
from .errors import network_error, refusal

if TYPE_CHECKING:  # a post (XPoster is a reader) never reads mentions: imported by `mentions`
    from ..mentions import Mention, MentionPage

__all__ = ["XReader"]

_MENTIONS = "GET /2/users/:id/mentions"

log = logging.getLogger(__package__)  # X's lines log under the network's name


class XReader:
    """Reads X as the account (`mentions.Listener`): each read one signed, bounded request to
    X_API_BASE_URL, `timeout` seconds in all, its answer within the shared bound."""

    name = "x"

    def __init__(self, credentials: Credentials, *, timeout: float, base_url: str = DEFAULT_BASE_URL) -> None:
        # X's servers, or the one X_API_BASE_URL names, wherever it is; no redirect is followed.
        self._bounds = Bounds(timeout, MAX_ANSWER_BYTES, screen=None)
        self._base_url = base_url.rstrip("/")
        self._credentials = credentials  # each read signs its own request
        # An access token starts with the account's numeric id ("12345-abc..."): public, and
        # enough for a link to the account's posts without asking X.
        user_id = credentials.access_token.split("-", 1)[0]
        self._user_id = user_id if user_id.isdigit() else None
        self._username: Optional[str] = None

    @property
    def account_url(self) -> Optional[str]:
        """Where a person sees this account's posts (to check an uncertain one), if known."""
        if self._username:
            return f"https://x.com/{self._username}"
        if self._user_id:
            return f"https://x.com/intent/user?user_id={self._user_id}"
        return None

    def account(self) -> str:
        """The account the keys post as, checked online (`check --online`): "@username"."""
        return f"@{self.verify()}"

    def verify(self) -> str:
        """Check the keys with ``GET /2/users/me``; returns the account's @username."""
        self._username = str(self._get_me()["username"])
        return self._username

    def mentions(self, cursor: Optional[str], *, not_before: datetime, limit: int) -> MentionPage:
        """The account's new mentions, oldest first, at most `limit` (`mentions.Listener`): X's
        ``GET /2/users/:id/mentions``, newest first, paged back to the cursor's mention (the first
        read: to `not_before`), each page a billed read. The cursor (mentions.py) keeps the
        account's id, so a run with nothing new makes one request; the first read asks X for the id
        (``GET /2/users/me``), one more. When more are new than `limit`, the cursor stops at the
        last one given, so the next read gets the rest. Raises PostError, as a post does, when X
        cannot be asked or its answer cannot be read."""
        from ..mentions import MentionPage
        from .mentions import MAX_PAGES, Cursor, mentions_query, read_page

        kept = Cursor.parse(cursor)
        reads = 0
        if kept is None:
            kept, reads = Cursor(self._me(), None), 1
        found: List[Mention] = []
        newest, token = kept.since, None
        for _ in range(MAX_PAGES):
            answer = self._read(f"/2/users/{kept.me}/mentions", mentions_query(kept, not_before, token), _MENTIONS)
            page, page_newest, token = read_page(answer, kept.me)
            reads += 1
            found += page
            if page_newest is not None and (newest is None or int(page_newest) > int(newest)):
                newest = page_newest
            if token is None:
                break
        if kept.since is None:  # the first read: X's start_time, checked here too
            found = [mention for mention in found if mention.created_at >= not_before]
        found.sort(key=lambda mention: int(mention.id))
        given = found[: max(limit, 0)]
        if len(found) > len(given):  # the rest are newer than the last one given: read them next time
            newest = given[-1].id if given else kept.since
        made = Cursor(kept.me, newest).dumps()
        return MentionPage(tuple(given), made if made != cursor else None, reads)

    def look_up(
        self, text: str, sent_at: datetime, key: Optional[str], options: Optional[PostOptions] = None
    ) -> LookUp:
        """Whether an uncertain post is there: one read of the account's posts made since it was
        sent (``GET /2/users/:id/tweets``, at most 100, newest first, with their links and the
        post each answers; X bills the read), compared by words, links and the post it answers
        (timeline.py). X has no key to send it again by: nothing is ever sent. Raises PostError
        when X cannot be asked."""
        from .timeline import among_posts, timeline_query

        user_id = self._user_id or self._me()
        answer = self._read(f"/2/users/{user_id}/tweets", timeline_query(sent_at))
        if options is None:  # recorded before the history kept what it was sent with
            return among_posts(answer, text, status_url, any_reply=True)
        return among_posts(answer, text, status_url, options.reply_to)

    def _me(self) -> str:
        """The account's numeric id, asked of X (``GET /2/users/me``) when the token does not show it."""
        self._user_id = str(self._get_me()["id"])
        return self._user_id

    def _get_me(self) -> dict:
        """``GET /2/users/me``: the account the keys post as (its numeric ``id`` and ``username``),
        or the PostError X's answer means."""
        me = self._read("/2/users/me", {}).get("data")
        if not isinstance(me, dict) or not _is_id(me.get("id")) or not isinstance(me.get("username"), str):
            raise unreadable("X", "GET /2/users/me gave no account id and username")
        return me

    def _read(self, path: str, query: Mapping[str, object], what: Optional[str] = None) -> dict:
        """One signed GET of X's API v2: the answer's JSON object, or the PostError that says why
        not (a refusal as a post's, `errors.refusal`; one whose body is JSON but not an object
        cannot be read: X always answers an error with an object)."""
        what = what or f"GET {path}"
        target = path + ("?" + urlencode([(k, v) for k, v in query.items() if v is not None]) if query else "")
        headers = {"Authorization": sign(self._credentials, "GET", DEFAULT_BASE_URL + target)}
        started = time.monotonic()
        try:
            response = request("GET", self._base_url + target, self._bounds, headers=headers)
        except RequestError as exc:
            raise network_error(exc) from None
        # The path only: never the headers sent (they hold the keys' signature).
        log.debug(
            "GET %s: %d %s in %.2f s; %s",
            path,
            response.status_code,
            response.reason,
            time.monotonic() - started,
            limits_left({name.lower(): value for name, value in response.headers.items()}),
        )
        if not 200 <= response.status_code < 300:
            if _json_not_object(response):
                raise unreadable("X", f"{what} refused ({response.status_code}) with JSON that is not an object")
            raise refusal(response)
        return json_object(response, "X", what)


def _json_not_object(response: Answer) -> bool:
    """Whether an answer's body is JSON, but not an object (null, a list, a number)."""
    try:
        body = response.json()
    except (ValueError, RecursionError):
        return False
    return not isinstance(body, dict)


def _is_id(value: object) -> bool:
    """An X id as the API writes it: a string of digits."""
    return isinstance(value, str) and value.isascii() and value.isdigit()

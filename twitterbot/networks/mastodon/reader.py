"""Reading Mastodon without Mastodon.py: the account's mention notifications, each page one GET
with the application's bearer token through the one bounded request (`request.py`: within
API_TIMEOUT in all, whatever the server does), read by the bot itself. A round of replies with nothing new needs only this: Mastodon.py (0.17 s and 41 MiB
to import on its own) is imported when a post is made (`poster.py`)::

    reader = MastodonReader(instance="https://example.social", access_token=token, timeout=20)
    page = reader.mentions(cursor, not_before=a_day_ago, limit=10)   # one request when nothing is new

An answer means what it means to the poster: the same status gives the same PostError
(`errors.refusal`), a failed connection the same advice (`errors.network_error`).
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any, List, Mapping, Optional, Tuple
from urllib.parse import urlencode

from ... import __version__
from ...errors import ErrorKind, PostError
from ...settings.secrets import scrub_also
from ..answers import MAX_ANSWER_BYTES, unreadable
from ..mentions import Mention, MentionPage
from ..request import Answer, Bounds, RequestError, request
from .errors import network_error, refusal

__all__ = ["MastodonReader", "base_url"]

_NOTIFICATIONS = "/api/v1/notifications"
_ME = "/api/v1/accounts/verify_credentials"


class MastodonReader:
    """Reads one Mastodon account's mentions (`mentions.Listener`) with its access token: each
    request one bounded request, `timeout` seconds in all, its answer within the shared bound."""

    name = "mastodon"

    def __init__(self, *, instance: str, access_token: str, timeout: float) -> None:
        scrub_also([access_token])  # whoever logs a request's headers, the token never shows
        self.instance = base_url(instance)
        # The server is the one the owner named, wherever it is; no redirect is followed.
        self._bounds = Bounds(timeout, MAX_ANSWER_BYTES, screen=None)
        self._headers = {
            "Authorization": f"Bearer {access_token}",
            "User-Agent": f"twitterbot/{__version__}",
            "Accept": "application/json",
        }

    def __repr__(self) -> str:  # the headers hold the token: never show them
        return f"MastodonReader(instance={self.instance!r})"

    def mentions(self, cursor: Optional[str], *, not_before: datetime, limit: int) -> MentionPage:
        """The account's new mentions, oldest first, at most `limit` (`mentions.Listener`): its
        notifications of type ``mention``. With a cursor, one read: the page just newer than it
        (``min_id``), so a run with nothing new makes one request and the rest wait for the next
        run. The first read asks the account's id (``verify_credentials``) and pages back from the
        newest to `not_before` (``max_id``: older than the oldest read). Raises PostError when the
        server cannot be asked or its answer cannot be read (the token needs read:notifications)."""
        from .mentions import MAX_PAGES, PAGE_SIZE, Cursor, read_page

        if limit <= 0:
            return MentionPage((), None, 0)
        kept = Cursor.parse(cursor)
        reads = 0
        if kept is None:
            kept, reads = Cursor(self._own_id(), None), 1
        found: List[Tuple[str, Mention]] = []  # (the notification's id, its mention)
        seen: List[str] = []  # every notification read, those left out too
        if kept.since:  # the page just after the cursor: the oldest new ones
            page = self._notifications({"min_id": kept.since, "limit": min(limit, PAGE_SIZE)})
            found, seen = read_page(page, kept.me, self.name)
            reads += 1
        else:  # the first read: back from the newest to not_before
            older_than: Optional[str] = None
            for _ in range(MAX_PAGES):
                query = {"max_id": older_than, "limit": PAGE_SIZE}
                mentions, ids = read_page(self._notifications(query), kept.me, self.name)
                reads += 1
                found += [(at, mention) for at, mention in mentions if mention.created_at >= not_before]
                seen += ids
                if len(ids) < PAGE_SIZE or any(mention.created_at < not_before for _, mention in mentions):
                    break
                older_than = min(ids, key=int)
        found.sort(key=lambda pair: int(pair[0]))
        given = found[:limit]
        newest = max(seen, key=int) if seen else kept.since
        if len(found) > len(given):  # stop at the last one given: the next read starts after it
            newest = given[-1][0]
        made = Cursor(kept.me, newest).dumps()
        return MentionPage(tuple(mention for _, mention in given), made if made != cursor else None, reads)

    def _notifications(self, query: Mapping[str, object]) -> Any:
        """One page of the account's mention notifications (``GET /api/v1/notifications``)."""
        try:
            return self._get(_NOTIFICATIONS, {"types[]": "mention", **query})
        except PostError as error:
            if error.kind is not ErrorKind.FORBIDDEN:
                raise
            # A 403 on the list is most often a token made for posting alone.
            raise PostError(
                f"Mastodon refused to show the account's mentions (403): the token needs the "
                f"read:notifications scope: on {self.instance}, Preferences > Development, give the "
                "application read:notifications and read:accounts (or make a new one with them and "
                "write:statuses) and put its new token in MASTODON_ACCESS_TOKEN; if it has them, log in "
                "to see whether the account is suspended or disabled",
                kind=error.kind,
                exit_status=error.exit_status,
                summary=error.summary,
            ) from None

    def _own_id(self) -> str:
        """The account's id (``GET /api/v1/accounts/verify_credentials``), or the PostError that
        says why not."""
        me = self._get(_ME, {})
        account_id = me.get("id") if isinstance(me, dict) else None
        if isinstance(account_id, bool) or not isinstance(account_id, (str, int)) or not str(account_id):
            raise unreadable("Mastodon", "verify_credentials gave no account id")
        return str(account_id)

    def _get(self, path: str, query: Mapping[str, object]) -> Any:
        """One GET of the server's API: the answer's JSON, or the PostError it means."""
        params = urlencode([(name, value) for name, value in query.items() if value is not None])
        try:
            response = request("GET", f"{self.instance}{path}?{params}", self._bounds, headers=self._headers)
        except RequestError as exc:
            raise network_error(exc, self.instance, reading=True) from None
        if not response.ok:
            raise refusal(
                response.status_code, str(response.reason or ""), _said(response), self.instance, None, _reset(response)
            )
        try:
            return json.loads(response.content) if response.content else {}
        except (ValueError, RecursionError):
            raise unreadable("Mastodon", f"GET {path} answered {response.status_code} with no JSON") from None


def _said(response: Answer) -> str:
    """Mastodon's own words for a refusal (``{"error": ...}``, or a JSON string), else the
    reason phrase; a 404 without words is an endpoint the server does not have."""
    try:
        body = json.loads(response.content)
    except (ValueError, RecursionError):
        body = None
    if isinstance(body, dict) and body.get("error"):
        return str(body["error"])
    if isinstance(body, str) and body:
        return body
    if response.status_code == 404:
        return "Endpoint not found."
    return str(response.reason or "")


def _reset(response: Answer) -> Optional[float]:
    """When a rate limit ends, on our clock (seconds since the epoch): Mastodon's
    ``X-RateLimit-Reset`` (an ISO time, or seconds), moved by how far the server's ``Date`` is
    from ours; None when the answer does not say or says it unreadably."""
    said = response.headers.get("X-RateLimit-Reset", "")
    try:
        if said.isdigit():
            reset = float(said)
        else:
            when = datetime.fromisoformat(said.replace("Z", "+00:00"))
            reset = (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).timestamp()
        date = response.headers.get("Date")
        if date:
            reset += time.time() - parsedate_to_datetime(date).timestamp()
    except (ValueError, TypeError, OverflowError, IndexError):
        return None
    return reset


def base_url(instance: str) -> str:
    """``example.social`` or ``https://example.social/`` -> ``https://example.social``."""
    instance = instance.strip().rstrip("/")
    return instance if "://" in instance else "https://" + instance

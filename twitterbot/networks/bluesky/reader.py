"""Reading Bluesky's notifications without the atproto SDK: one plain GET of
``app.bsky.notification.listNotifications`` carrying the saved session's access token, through the
one bounded request (`request.py`: within API_TIMEOUT in all, whatever the server does), its
answer read as JSON within the bound all networks share (`http.py`). A round of replies with nothing new
and a saved session whose token has a while left needs only this; the SDK (0.6 s and 60 MiB to
import on a desktop) is imported when a post is made, or when there is no such session::

    reader = BlueskyReader(handle, service, state / "bluesky-session.json", timeout=20, poster=make)
    page = reader.mentions(cursor, not_before=a_day_ago, limit=10)   # one request when nothing is new

With no saved session, one whose access token has `session.FRESH_FOR` or less left, or one the
server refuses (401, ExpiredToken, InvalidToken), the read goes through the poster as before: it
refreshes the session, or logs in with the app password, exactly as often as it did, so Bluesky's
limit on logins (30 in 5 minutes) is met as it was.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Tuple
from urllib.parse import urlencode

from ...errors import ErrorKind, PostError
from ..answers import MAX_ANSWER_BYTES, json_object, unreadable
from ..request import Bounds, RequestError, request
from .errors import read_failure, refusal
from .session import Saved, fresh_session, load_session

if TYPE_CHECKING:
    from ..mentions import MentionPage
    from .poster import BlueskyPoster

__all__ = ["BlueskyReader"]

log = logging.getLogger(__package__)  # its lines log as the poster's do

_LIST = "app.bsky.notification.listNotifications"


class _Refused(Exception):
    """The server refused the saved session (a PostError of kind UNAUTHORIZED): the poster logs in."""

    def __init__(self, error: PostError) -> None:
        super().__init__(str(error))
        self.error = error


class BlueskyReader:
    """Reads the account's mentions (`mentions.Listener`) with the saved session, as JSON; hands the
    read to the poster `poster()` makes when the session cannot be used as it is."""

    name = "bluesky"

    def __init__(
        self, handle: str, service: str, session_file: Path, *, timeout: float, poster: Callable[[], BlueskyPoster]
    ) -> None:
        self.handle = handle.strip().lstrip("@").lower()  # as the poster keeps it: the saved session names it so
        self._service = service.rstrip("/")
        self._session_file = Path(session_file)
        self._timeout = timeout
        self._poster = poster
        # The PDS the saved session names, wherever it is; no redirect is followed.
        self._bounds = Bounds(timeout, MAX_ANSWER_BYTES, screen=None)

    def mentions(self, cursor: Optional[str], *, not_before: datetime, limit: int) -> MentionPage:
        """The account's mentions and replies to its posts newer than `cursor`, oldest first, at most
        `limit`, read as the poster reads them (`notifications.read`: same cursor, same mentions):
        one request when nothing is new. Raises PostError as the poster's read does."""
        from .notifications import read

        saved = load_session(self._session_file, self.handle, self._service)
        session = fresh_session(saved) if saved else None
        if session is None:  # the SDK refreshes the session, or logs in: as before
            return self._poster().mentions(cursor, not_before=not_before, limit=limit)
        try:
            return read(
                lambda page: self._fetch(session, page), session.did, cursor, not_before=not_before, limit=limit
            )
        except _Refused as refused:
            log.info(
                "the saved Bluesky session was refused (%s): logging in with the app password", refused.error.summary
            )
        poster = self._poster()
        poster.log_in_again()
        return poster.mentions(cursor, not_before=not_before, limit=limit)

    def _fetch(self, session: Saved, page: Optional[str]) -> Tuple[List[Any], Optional[str]]:
        """One page of notifications (newest first) and the server's cursor to the next, or the
        PostError that says why not; `_Refused` when the session is refused."""
        from .notifications import PAGE_SIZE, REASONS

        query: List[Tuple[str, object]] = [*(("reasons", reason) for reason in REASONS), ("limit", PAGE_SIZE)]
        if page:
            query.append(("cursor", page))
        try:
            response = request(
                "GET",
                f"{session.pds}/xrpc/{_LIST}?{urlencode(query)}",
                self._bounds,
                headers={"Authorization": f"Bearer {session.access_jwt}", "Accept": "application/json"},
            )
        except RequestError as exc:
            raise read_failure(exc, self._service) from None
        if not 200 <= response.status_code < 300:
            error = self._refusal(response)
            if error.kind == ErrorKind.UNAUTHORIZED:
                raise _Refused(error)
            raise error
        answer = json_object(response, self._service, f"GET {_LIST}")
        notifications, next_page = answer.get("notifications"), answer.get("cursor")
        if not isinstance(notifications, list) or not (next_page is None or isinstance(next_page, str)):
            raise unreadable(self._service, f"GET {_LIST} answered without a list of notifications")
        return notifications, next_page

    def _refusal(self, response: Any) -> PostError:
        """A refusal as the poster's read words it (`errors.refusal`): the XRPC error name and
        message from its body when it is a JSON object, and the time its rate limit ends."""
        try:
            body = response.json()
        except (ValueError, RecursionError):
            body = None
        body = body if isinstance(body, dict) else {}
        error, message = body.get("error"), body.get("message")
        reset = response.headers.get("ratelimit-reset", "")
        reset_at = None
        if reset.isdigit():
            try:
                reset_at = datetime.fromtimestamp(int(reset), tz=timezone.utc)
            except (OverflowError, OSError, ValueError):
                reset_at = None
        return refusal(
            response.status_code,
            error if isinstance(error, str) else "",
            message if isinstance(message, str) else "",
            self.handle,
            self._service,
            reset_at=reset_at,
        )

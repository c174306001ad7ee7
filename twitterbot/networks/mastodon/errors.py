"""Mastodon's error replies, turned into `PostError`s that say what to do. Imported by the poster
(`poster.py`), which meets them through Mastodon.py (`classify`), and by the reader
(`reader.py`), which meets the answers themselves (`refusal`, by status code): the same answer is
the same PostError either way."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Optional, Tuple

from ...errors import ErrorKind, ExitStatus, PostError
from .. import rejected, retry, server_error

__all__ = ["classify", "network_error", "rate_limited", "refusal"]


@dataclass(frozen=True)
class _Refusal:
    """A row of `_REFUSALS`: which answers it stands for, and the PostError they become."""

    status: int
    # Filled in with `said` (the status and Mastodon's message), `instance` and `reply_to`.
    message: str
    kind: ErrorKind
    exit_status: ExitStatus
    words: Tuple[str, ...] = ()  # one of them in the lower-cased message; none: any message
    replying: bool = False  # only when the post replies to a status

    def matches(self, status: int, lowered: str, reply_to: Optional[str]) -> bool:
        return (
            status == self.status
            and (not self.words or any(word in lowered for word in self.words))
            and (bool(reply_to) or not self.replying)
        )


# Mastodon's refusals we know, first match wins: a 429 and a 5xx are handled apart (they may be
# tried again), and any other answer is `rejected`.
_REFUSALS = (
    _Refusal(
        401,
        "Mastodon rejected MASTODON_ACCESS_TOKEN ({said}): on {instance}, open Preferences > "
        "Development > your application and copy 'Your access token' into MASTODON_ACCESS_TOKEN "
        "(a regenerated token replaces the old one); check MASTODON_INSTANCE is the server the "
        "account is on",
        ErrorKind.UNAUTHORIZED,
        ExitStatus.PERMISSION_DENIED,
    ),
    _Refusal(
        403,
        "Mastodon refused the account ({said}): the token may not post: on {instance}, Preferences > "
        "Development, give the application the write:statuses scope (or make a new one with it) and "
        "put its new token in MASTODON_ACCESS_TOKEN",
        ErrorKind.FORBIDDEN,
        ExitStatus.PERMISSION_DENIED,
        words=("scope",),
    ),
    _Refusal(
        403,
        "Mastodon refused the account ({said}): log in on {instance} to see why: a suspended or "
        "disabled account, an unconfirmed e-mail address, or an account still waiting for approval",
        ErrorKind.FORBIDDEN,
        ExitStatus.PERMISSION_DENIED,
        words=("disabled", "suspended", "approval", "confirmed", "e-mail"),
    ),
    _Refusal(
        403,
        "Mastodon refused the account ({said}): log in on {instance} and check the account",
        ErrorKind.FORBIDDEN,
        ExitStatus.PERMISSION_DENIED,
    ),
    _Refusal(
        422,
        "Mastodon says the text is too long ({said}): shorten that line of the tweets file",
        ErrorKind.TOO_LONG,
        ExitStatus.DATA_ERROR,
        words=("character limit", "too long"),
    ),
    _Refusal(
        422,
        "Mastodon refused the post ({said}): fix that line of the tweets file",
        ErrorKind.REJECTED,
        ExitStatus.DATA_ERROR,
    ),
    _Refusal(
        404,
        "Mastodon cannot find the status this replies to, {reply_to} ({said}): it was deleted, "
        "or this account cannot see it",
        ErrorKind.REJECTED,
        ExitStatus.DATA_ERROR,
        replying=True,
    ),
    _Refusal(
        404,
        "{instance} has no Mastodon API ({said}): MASTODON_INSTANCE must be the address of "
        "the Mastodon server the account is on, e.g. https://mastodon.social",
        ErrorKind.NOT_FOUND,
        ExitStatus.CONFIG_ERROR,
    ),
)


def classify(
    exc: Exception, instance: str, client: Any, reply_to: Optional[str] = None, *, reading: bool = False
) -> PostError:
    """Turn Mastodon.py's exception into a PostError that says what to do (`client` is the poster's
    Mastodon.py client, which knows when a rate limit ends). A RecursionError is the one failure
    Mastodon.py lets through from an answer: JSON nested deeper than Python's decoder goes.
    `reading` is a request that posts nothing, so a lost answer is not worded as a possible post."""
    from mastodon import MastodonAPIError, MastodonNetworkError, MastodonRatelimitError

    if isinstance(exc, RecursionError):
        return _unreadable(f"{instance} sent an answer nested too deep to read", "mangling it")

    if isinstance(exc, MastodonRatelimitError) and "hit rate limit" in str(exc).lower():
        return rate_limited(client)
    if isinstance(exc, MastodonRatelimitError):
        # Mastodon.py could not read the rate-limit headers of an answer, whatever its status:
        # a 200 (the status was made) looks the same as a 429 here.
        return _unreadable(f"{instance} answered with rate-limit headers that could not be read", "rewriting them")
    if isinstance(exc, MastodonNetworkError):
        return network_error(exc.__context__, instance, reading=reading)
    args = exc.args if isinstance(exc, MastodonAPIError) else ()
    if len(args) < 4 or not isinstance(args[1], int):
        # Mastodon.py could not read an answer it got (a 2xx that is not JSON): the server may
        # well have made the status.
        return _unreadable(f"{instance} sent an answer that could not be read", "mangling it")
    status, reason = args[1], str(args[2] or "")
    return refusal(status, reason, str(args[3] or reason), instance, reply_to, getattr(client, "ratelimit_reset", None))


def refusal(
    status: int, reason: str, message: str, instance: str, reply_to: Optional[str] = None, reset: object = None
) -> PostError:
    """What an answer of HTTP `status` (its `reason` phrase and Mastodon's ``error`` `message`, or
    the reason when it gave none) from `instance` means; `reset` is when a rate limit ends (seconds
    since the epoch, on our clock), if the answer said."""
    said = f"{status}: {message}" if message else str(status)
    for known in _REFUSALS:
        if known.matches(status, message.lower(), reply_to):
            text = known.message.format(said=said, instance=instance, reply_to=reply_to)
            return PostError(text, kind=known.kind, exit_status=known.exit_status)
    if status == 429:
        return _rate_limited(reset)
    if status >= 500:
        return server_error(instance, f"{status} {reason}")
    return rejected("Mastodon", said, status)


def _unreadable(what: str, proxy_does: str) -> PostError:
    """An answer came that Mastodon.py could not read: the post may well have been made."""
    return PostError(
        f"{what}: a proxy in between may be {proxy_does}; run with -v and report it if it persists",
        kind=ErrorKind.NETWORK,
        exit_status=ExitStatus.TEMPORARY_FAILURE,
        summary=what,
    )


def rate_limited(client: Any) -> PostError:
    """A 429: when it ends, if Mastodon.py could read it."""
    # Mastodon.py read X-RateLimit-Reset (an ISO time) and moved it onto our clock.
    return _rate_limited(getattr(client, "ratelimit_reset", None))


def _rate_limited(reset: object) -> PostError:
    """A 429 whose limit ends at `reset` (seconds since the epoch, on our clock), if known."""
    retry_at = None
    if isinstance(reset, (int, float)) and not isinstance(reset, bool) and reset > time.time():
        retry_at = datetime.fromtimestamp(int(reset) + 1, tz=timezone.utc)
    return retry.rate_limited("Mastodon", "429", retry_at)


def network_error(cause: Optional[BaseException], instance: str, *, reading: bool = False) -> PostError:
    """No answer: either no connection was made (the request never left), or it was sent and the
    answer never came (the status may exist; a read, `reading`, posted nothing either way)."""
    from ..http import network_error as http_network_error  # http imports requests and urllib3

    return http_network_error(
        cause,
        where=instance,
        unreachable="check the network connection and DNS, and MASTODON_INSTANCE; the next run will try again",
        slow=(
            "the server may be slow; this was a read, so nothing was posted: the next run asks again"
            if reading
            else "the server may be slow; the post may have been made, look at the account"
        ),
    )

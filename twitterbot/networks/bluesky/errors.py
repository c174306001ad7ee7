"""Bluesky's error replies, turned into `PostError`s that say what to do. Imported by the poster
(`poster.py`) and the session (`session.py`), which meet them through the atproto SDK."""

from __future__ import annotations

from datetime import datetime
from typing import Optional

from ...errors import ErrorKind, ExitStatus, PostError
from .. import rejected, retry, server_error
from .text import MAX_BYTES, MAX_GRAPHEMES

__all__ = ["classify", "network_error", "read_failure", "reason", "refusal"]


def reason(exc: Exception) -> str:
    """What the server said in a refusal (its error and message), or the exception's type."""
    content = getattr(getattr(exc, "response", None), "content", None)
    error = getattr(content, "error", None)
    message = getattr(content, "message", None)
    return ": ".join(str(part) for part in (error, message) if part) or type(exc).__name__


def classify(exc: Exception, handle: str, service: str) -> PostError:
    """Turn an SDK exception into a PostError with the kinds `networks.x` uses where they mean the same."""
    from atproto_client import exceptions

    response = getattr(exc, "response", None)
    if isinstance(exc, exceptions.NetworkError) and response is None:
        return network_error(exc.__cause__ or exc, service)
    if isinstance(exc, exceptions.ModelError):
        # The SDK could not read an answer into the shape the lexicon gives it: the request was
        # carried out, whatever it did (a post may have been made).
        from ..answers import unreadable

        return unreadable(service, f"not the shape the lexicon gives it: {_first_line(exc)}")
    if response is None:
        return PostError(
            f"the atproto SDK failed: {exc}: run with -v and report it if it persists",
            kind=ErrorKind.UNEXPECTED,
            exit_status=ExitStatus.UNEXPECTED,
        )
    content = response.content
    error = str(getattr(content, "error", "") or "")
    message = str(getattr(content, "message", "") or "")
    if isinstance(exc, exceptions.RateLimitExceededError):
        return refusal(429, error, message, handle, service, reset_at=getattr(exc, "reset_at", None))
    return refusal(response.status_code, error, message, handle, service)


def refusal(
    status: int, error: str, message: str, handle: str, service: str, *, reset_at: Optional[datetime] = None
) -> PostError:
    """What a refusal means (its status, and the XRPC error name and message the body gave), for an
    answer the SDK read (`classify`) as for one the bot read itself (`reader.py`): one wording."""
    said = f"{status} {error}: {message}".strip().rstrip(":") if error or message else str(status)
    lowered = f"{error} {message}".lower()

    if status == 429:
        return retry.rate_limited("Bluesky", said, reset_at)
    if error in ("AccountTakedown", "AccountSuspended") or "takendown" in lowered or "suspended" in lowered:
        return PostError(
            f"Bluesky says the account @{handle} is suspended or taken down ({said}): nothing was "
            "posted; see the email Bluesky sent, or its moderation appeal form",
            kind=ErrorKind.FORBIDDEN,
            exit_status=ExitStatus.PERMISSION_DENIED,
        )
    if error == "AccountDeactivated":
        return PostError(
            f"the Bluesky account @{handle} is deactivated ({said}): reactivate it by logging in on bsky.app",
            kind=ErrorKind.FORBIDDEN,
            exit_status=ExitStatus.PERMISSION_DENIED,
        )
    if status in (401, 403) or error in (
        "AuthenticationRequired",
        "InvalidToken",
        "ExpiredToken",
        "AuthFactorTokenRequired",
    ):
        return PostError(
            f"Bluesky refused the login for {handle} on {service} ({said}): check BLUESKY_HANDLE "
            "and BLUESKY_APP_PASSWORD (make an app password in Bluesky: Settings > Privacy and security > "
            "App passwords; a revoked one stops working), and BLUESKY_SERVICE if your account is on another server",
            kind=ErrorKind.UNAUTHORIZED,
            exit_status=ExitStatus.PERMISSION_DENIED,
            summary=f"Bluesky refused the login ({said})",
        )
    if "$.record.text" in message and ("too long" in lowered or "too big" in lowered or "grapheme" in lowered):
        return PostError(
            f"Bluesky says the text is too long ({said}): it allows {MAX_GRAPHEMES} graphemes and "
            f"{MAX_BYTES:,} bytes; shorten that line of the tweets file",
            kind=ErrorKind.TOO_LONG,
            exit_status=ExitStatus.DATA_ERROR,
        )
    if "already exist" in lowered or error == "RecordAlreadyExists":
        return PostError(
            f"Bluesky already has a record under this post's key ({said})",
            kind=ErrorKind.EXISTS,
            exit_status=ExitStatus.TEMPORARY_FAILURE,
        )
    if status >= 500:
        return server_error("Bluesky", said)
    return rejected("Bluesky", said, status)


def _first_line(exc: Exception) -> str:
    """The first line of an exception's message (pydantic's run to many), cut short."""
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]


def network_error(exc: Exception, service: str) -> PostError:
    """No answer came: either no connection was made (nothing was sent), or it was sent and the
    answer was lost (the server may have acted on it)."""
    from ..http import httpx_error  # http imports requests and urllib3

    return httpx_error(
        exc,
        where=service,
        unreachable="check the network connection, DNS and BLUESKY_SERVICE; the next run will try again",
        slow="the server may be slow, or the network flaky; the next run tries again",
    )


def read_failure(exc: Exception, service: str) -> PostError:
    """`network_error` for a read the bot makes itself through requests (`reader.py`)."""
    from ..http import network_error as failed

    return failed(
        exc,
        where=service,
        unreachable="check the network connection, DNS and BLUESKY_SERVICE; the next run will try again",
        slow="the server may be slow, or the network flaky; the next run tries again",
    )

"""X's error replies, turned into `PostError`s that say what to do. Imported by the poster
(`poster.py`) with tweepy, when a request fails."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING

from ...errors import DuplicatePost, ErrorKind, ExitStatus, PostError
from .. import rejected, server_error
from ..retry import rate_limited

if TYPE_CHECKING:
    import requests
    import tweepy

__all__ = ["classify", "network_error", "refusal"]


def network_error(exc: requests.RequestException) -> PostError:
    """A failure with no answer from X (see `http.network_error`)."""
    from ..http import network_error as http_network_error  # http imports requests and urllib3

    return http_network_error(
        exc,
        where="X",
        unreachable="check the network connection and DNS; the next run will try again",
        slow="X may be slow (API_TIMEOUT sets the limit)",
    )


def classify(exc: tweepy.TweepyException) -> PostError:
    """Turn tweepy's exception for an X reply into a PostError that says what to do."""
    response = getattr(exc, "response", None)
    if response is None:
        return PostError(f"tweepy failed: {exc}", kind=ErrorKind.UNEXPECTED, exit_status=ExitStatus.UNEXPECTED)
    return refusal(response)


def refusal(response: requests.Response) -> PostError:
    """Turn X's reply to a request it did not carry out (any status but 2xx) into a PostError that
    says what to do, whatever its body holds."""
    status = response.status_code
    body = _json_body(response)
    detail = str(body.get("detail") or "")
    problem_type = str(body.get("type") or "")
    errors = body.get("errors")
    messages = " ".join(
        [detail, str(body.get("title") or "")]
        + [str(e.get("message", "")) for e in (errors if isinstance(errors, list) else []) if isinstance(e, dict)]
    ).lower()

    if status == 403 and "duplicate" in messages:
        return DuplicatePost("X already has a post with exactly this text (403 duplicate content)")
    if "too long" in messages and status in (400, 403):
        return PostError(
            f"X says the text is too long ({status}): shorten that line of the tweets file",
            kind=ErrorKind.TOO_LONG,
            exit_status=ExitStatus.DATA_ERROR,
        )
    if status == 401:
        return PostError(
            "X rejected the keys (401 Unauthorized): check TWITTER_API_KEY, TWITTER_API_SECRET, "
            "TWITTER_ACCESS_TOKEN and TWITTER_ACCESS_TOKEN_SECRET against the developer portal "
            "(regenerated keys replace the old ones), and that this machine's clock is right (timedatectl)",
            kind=ErrorKind.UNAUTHORIZED,
            exit_status=ExitStatus.PERMISSION_DENIED,
        )
    if status == 403 and "not been mentioned" in messages:
        return PostError(
            "X refused the reply (403): since February 2026 an app on X's self-serve plans may reply only "
            "to a post whose author mentioned or quoted the account; this post did not, so it gets no reply",
            kind=ErrorKind.BAD_REPLY_TO,
            exit_status=ExitStatus.DATA_ERROR,
        )
    if status == 403 and problem_type.endswith("oauth1-permissions"):
        return PostError(
            "X says the app may only read (403): in the developer portal set the app's permissions to "
            "'Read and write', then regenerate the Access Token and Secret and put the new ones in the env file",
            kind=ErrorKind.READ_ONLY,
            exit_status=ExitStatus.PERMISSION_DENIED,
        )
    if status == 403 and (body.get("reason") == "client-not-enrolled" or problem_type.endswith("client-forbidden")):
        return PostError(
            "X says the app is not attached to a Project (403 client-not-enrolled): in the developer "
            "portal, add the app to a Project, then try again",
            kind=ErrorKind.NOT_IN_PROJECT,
            exit_status=ExitStatus.PERMISSION_DENIED,
        )
    if status == 402:
        return PostError(
            "X says the account has no API credits left (402 credits depleted): buy credits in the "
            "developer console, or wait for the next billing period",
            kind=ErrorKind.CREDITS,
            exit_status=ExitStatus.PERMISSION_DENIED,
        )
    if status == 429:
        return _rate_limited(response, body)
    if status >= 500:
        return server_error("X", f"{status} {response.reason}")
    if status == 403:
        return PostError(
            f"X refused the post (403 Forbidden: {detail or 'no reason given'}): check the account and app "
            "in the developer portal",
            kind=ErrorKind.FORBIDDEN,
            exit_status=ExitStatus.PERMISSION_DENIED,
        )
    return rejected("X", f"{status}: {detail or response.reason}", status)


def _rate_limited(response: requests.Response, body: dict) -> PostError:
    headers = response.headers
    if headers.get("x-user-limit-24hour-remaining") == "0":
        window, reset = "the 24-hour per-user limit", headers.get("x-user-limit-24hour-reset")
    elif headers.get("x-app-limit-24hour-remaining") == "0":
        window, reset = "the 24-hour per-app limit", headers.get("x-app-limit-24hour-reset")
    elif body.get("title") == "UsageCapExceeded":
        window, reset = "the account's usage cap", None
    else:
        window, reset = "the 15-minute rate limit", headers.get("x-rate-limit-reset")
    retry_at = None
    if reset and reset.isdigit():
        retry_at = datetime.fromtimestamp(int(reset), tz=timezone.utc)
    return rate_limited("X", f"429, {window}", retry_at)


def _json_body(response: requests.Response) -> dict:
    try:
        body = response.json()
    except (ValueError, RecursionError):  # not JSON, or nested past what the decoder takes
        return {}
    return body if isinstance(body, dict) else {}

"""X (Twitter): posting through the X API v2, X's error replies, and how X makes a retry safe.

`XPoster` posts through the X API v2 (``POST /2/tweets``) with tweepy's `Client` and OAuth 1.0a
user keys. tweepy sends requests with no timeout and offers no base URL, so an adapter mounted
on the client's session adds both. Every reply X can give becomes either a `PostResult` or a
`PostError` whose message tells the user what to do::

    poster = XPoster(config.credentials, timeout=20, retries=2)
    result = poster.post("Hello from my Pi")
    result.url   # 'https://x.com/i/status/1456012973835788293'
"""

from __future__ import annotations

import logging
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Callable, List, Mapping, Optional, Sequence
from urllib.parse import urlsplit

import requests
import tweepy
from requests.adapters import HTTPAdapter

from ..config import Credentials
from ..errors import DuplicatePost, ExitStatus, PostError
from . import PostResult, rejected, server_error
from .http import network_error

if TYPE_CHECKING:
    from ..pictures.prepare import Attachment

__all__ = ["DEFAULT_BASE_URL", "XPoster", "status_url"]

DEFAULT_BASE_URL = "https://api.twitter.com"
# tweepy hard-codes api.twitter.com; api.x.com serves the same API. Both go through our adapter.
_X_ORIGINS = ("https://api.twitter.com", "https://api.x.com")

log = logging.getLogger(__name__)


def status_url(tweet_id: Optional[str]) -> Optional[str]:
    """The public link of a post (x.com resolves it whatever the account's handle); None for
    no id, or a dry run's made-up one."""
    return f"https://x.com/i/status/{tweet_id}" if tweet_id and tweet_id.isdigit() else None


class XPoster:
    """Posts to X. Retries, `retries` times with backoff, only what `retry_safety` allows; never
    waits out a rate limit (that is the next scheduled run's job)."""

    name = "x"
    # X has no idempotency key: a repeated POST /2/tweets is a second post, unless X's duplicate-
    # content check happens to refuse it, and that check is a policy, not a guarantee.
    retry_safety = (
        "none: X has no idempotency key, so a request that may have reached X is never sent again "
        "(its outcome is uncertain); only failures that certainly made no post are retried: no "
        "connection (refused, DNS, connect timeout) or a server error X answered with"
    )

    def __init__(
        self,
        credentials: Credentials,
        *,
        timeout: float,
        retries: int,
        base_url: str = DEFAULT_BASE_URL,
        sleep: Callable[[float], None] = time.sleep,
        backoff: float = 2.0,
    ) -> None:
        self._client = tweepy.Client(
            consumer_key=credentials.api_key,
            consumer_secret=credentials.api_secret,
            access_token=credentials.access_token,
            access_token_secret=credentials.access_token_secret,
            wait_on_rate_limit=False,  # True retries 429s forever: never in a cron bot
        )
        adapter = _XAdapter(timeout=timeout, base_url=base_url)
        for origin in _X_ORIGINS:
            self._client.session.mount(origin, adapter)
        self._retries = retries
        self._sleep = sleep
        self._backoff = backoff
        self._credentials = credentials  # the media upload signs its own requests (networks/media.py)
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

    def may_retry(self, error: PostError) -> bool:
        """Whether sending the request again cannot make a second post (see `retry_safety`)."""
        return error.kind in _NEVER_POSTED_RETRYABLE

    def post(self, text: str, reply_to: Optional[str] = None, images: Sequence[Attachment] = ()) -> PostResult:
        """Create one post, with `images` uploaded first. Returns a confirmed `PostResult`, or an
        uncertain one when the request may have reached X but no answer came (never sent again).
        Raises `DuplicatePost` if X already has this text, `PostError` when X certainly did not post it."""
        media_ids = self._upload(images) if images else None
        for attempt in range(self._retries + 1):
            try:
                response = self._client.create_tweet(
                    text=text, in_reply_to_tweet_id=reply_to, media_ids=media_ids, user_auth=True
                )
            except tweepy.TweepyException as exc:
                error = _classify(exc)
            except requests.RequestException as exc:
                error = _network_error(exc)
            else:
                tweet_id = response.data.get("id") if isinstance(response.data, dict) else None
                if tweet_id is None:
                    return self._uncertain(text, "X answered without the post's id")
                return PostResult(text=text, tweet_id=str(tweet_id), url=status_url(str(tweet_id)))

            if error.kind in _MAYBE_POSTED:
                return self._uncertain(text, error.summary)
            if not self.may_retry(error) or attempt == self._retries:
                raise error
            delay = self._backoff * 2**attempt
            log.warning("%s; trying again in %.0f s (retry %d of %d)", error.summary, delay, attempt + 1, self._retries)
            self._sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _upload(self, images: Sequence[Attachment]) -> List[str]:
        """The pictures fitted to X's limits and uploaded with their alt text (networks/media.py)."""
        from ..pictures.limits import limits_for  # here: a post without pictures never loads them
        from .media import Retry, fit_pictures, upload_to_x

        return upload_to_x(
            self._client.session,
            self._credentials,
            fit_pictures(images, limits_for("x")),
            retry=Retry(self._retries, self._sleep, self._backoff),
            classify=lambda response: _classify(tweepy.HTTPException(response)),
            network_error=_network_error,
        )

    def _uncertain(self, text: str, why: str) -> PostResult:
        log.debug("not sending it again: %s", self.retry_safety)
        return PostResult(text=text, tweet_id=None, uncertain=why, check_url=self.account_url)

    def account(self) -> str:
        """The account the keys post as, checked online (`check --online`): "@username"."""
        return f"@{self.verify()}"

    def verify(self) -> str:
        """Check the keys with ``GET /2/users/me``; returns the account's @username."""
        try:
            response = self._client.get_me(user_auth=True)
        except tweepy.TweepyException as exc:
            raise _classify(exc) from None
        except requests.RequestException as exc:
            raise _network_error(exc) from None
        self._username = str(response.data["username"])
        return self._username


# What each failure says about the post (the error mapping below names the kinds). Retried:
# failures that certainly made no post. Uncertain: the request was sent and no answer came back.
_NEVER_POSTED_RETRYABLE = {"unreachable", "server_error"}
_MAYBE_POSTED = {"timeout", "network"}


class _XAdapter(HTTPAdapter):
    """Gives every request a timeout and, when `base_url` is set, sends it there instead of X.

    OAuth signing happens before `send`, over the original https URL, exactly as X verifies it.
    """

    def __init__(self, *, timeout: float, base_url: str) -> None:
        super().__init__(max_retries=0)  # never let urllib3 re-send a POST on its own
        self._timeout = timeout
        self._base_url = base_url.rstrip("/")

    def send(self, request, **kwargs):  # type: ignore[no-untyped-def]
        kwargs["timeout"] = kwargs.get("timeout") or self._timeout
        if self._base_url != DEFAULT_BASE_URL:
            for origin in _X_ORIGINS:
                if request.url.startswith(origin + "/"):
                    request.url = self._base_url + request.url[len(origin) :]
                    break
        started = time.monotonic()
        response = super().send(request, **kwargs)
        # The path only: never the headers we sent (they hold the keys' signature).
        log.debug(
            "%s %s: %d %s in %.2f s; %s",
            request.method,
            urlsplit(request.url).path,
            response.status_code,
            response.reason,
            time.monotonic() - started,
            _limits_left(response.headers),
        )
        return response


# X's rate-limit headers (prefix) and the window each counts.
_LIMITS = (
    ("x-rate-limit", "the 15-minute window"),
    ("x-user-limit-24hour", "24 hours for this user"),
    ("x-app-limit-24hour", "24 hours for this app"),
)


def _limits_left(headers: Mapping[str, str]) -> str:
    """What X's rate-limit headers say is left, for -v."""
    parts = [
        f"{headers[prefix + '-remaining']} of {headers.get(prefix + '-limit', '?')} left in {window}"
        for prefix, window in _LIMITS
        if prefix + "-remaining" in headers
    ]
    return "rate limits: " + ", ".join(parts) if parts else "no rate-limit headers"


def _network_error(exc: requests.RequestException) -> PostError:
    """A failure with no answer from X (see `http.network_error`)."""
    return network_error(
        exc,
        where="X",
        unreachable="check the network connection and DNS; the next run will try again",
        slow="X may be slow (X_API_TIMEOUT sets the limit)",
    )


def _classify(exc: tweepy.TweepyException) -> PostError:
    """Turn tweepy's exception for an X reply into a PostError that says what to do."""
    response = getattr(exc, "response", None)
    if response is None:
        return PostError(f"tweepy failed: {exc}", kind="unexpected", exit_status=ExitStatus.UNEXPECTED)
    status = response.status_code
    body = _json_body(response)
    detail = str(body.get("detail") or "")
    problem_type = str(body.get("type") or "")
    messages = " ".join(
        [detail, str(body.get("title") or "")]
        + [str(e.get("message", "")) for e in body.get("errors", []) if isinstance(e, dict)]
    ).lower()

    if status == 403 and "duplicate" in messages:
        return DuplicatePost("X already has a post with exactly this text (403 duplicate content)")
    if "too long" in messages and status in (400, 403):
        return PostError(
            f"X says the text is too long ({status}): shorten that line of the tweets file",
            kind="too_long",
            exit_status=ExitStatus.DATA_ERROR,
        )
    if status == 401:
        return PostError(
            "X rejected the keys (401 Unauthorized): check TWITTER_API_KEY, TWITTER_API_SECRET, "
            "TWITTER_ACCESS_TOKEN and TWITTER_ACCESS_TOKEN_SECRET against the developer portal "
            "(regenerated keys replace the old ones), and that this machine's clock is right (timedatectl)",
            kind="unauthorized",
            exit_status=ExitStatus.PERMISSION_DENIED,
        )
    if status == 403 and problem_type.endswith("oauth1-permissions"):
        return PostError(
            "X says the app may only read (403): in the developer portal set the app's permissions to "
            "'Read and write', then regenerate the Access Token and Secret and put the new ones in the env file",
            kind="read_only",
            exit_status=ExitStatus.PERMISSION_DENIED,
        )
    if status == 403 and (body.get("reason") == "client-not-enrolled" or problem_type.endswith("client-forbidden")):
        return PostError(
            "X says the app is not attached to a Project (403 client-not-enrolled): in the developer "
            "portal, add the app to a Project, then try again",
            kind="not_in_project",
            exit_status=ExitStatus.PERMISSION_DENIED,
        )
    if status == 402:
        return PostError(
            "X says the account has no API credits left (402 credits depleted): buy credits in the "
            "developer console, or wait for the next billing period",
            kind="credits",
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
            kind="forbidden",
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
    when = "later"
    if reset and reset.isdigit():
        retry_at = datetime.fromtimestamp(int(reset), tz=timezone.utc)
        when = "after " + retry_at.astimezone().strftime("%Y-%m-%d %H:%M %Z")
    return PostError(
        f"X says too many requests (429, {window}): nothing was posted; posting works again {when}",
        kind="rate_limited",
        exit_status=ExitStatus.TEMPORARY_FAILURE,
        retry_at=retry_at,
    )


def _json_body(response: requests.Response) -> dict:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}

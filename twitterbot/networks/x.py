"""X (Twitter): its settings, its length rule and prices, posting through the X API v2, X's error
replies, and how X makes a retry safe.

X counts a text with twitter-text (URLs 23, emoji and CJK 2, NFC first), whose import costs more
than the rest of a run: given a cache (the history store), a line measured once is not measured
again, and a file whose lines are all known does not import twitter-text at all. `XPoster` posts
(``POST /2/tweets``) with tweepy's `Client` and OAuth 1.0a user keys; tweepy and requests are
imported only when a poster is made. tweepy sends requests with no timeout and offers no base
URL, so an adapter mounted on the client's session adds both::

    measure("Hello https://example.com").length       # 29: a link counts 23
    poster = XPoster(credentials, timeout=20, retries=2)
    result = poster.post("Hello from my Pi")
    result.url   # 'https://x.com/i/status/1456012973835788293'
"""

from __future__ import annotations

import logging
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Callable, Collection, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ..errors import DuplicatePost, ErrorKind, ExitStatus, PostError
from ..settings.table import Setting
from . import Fit, LengthCache, Network, PostResult, rejected, server_error, twittertext

if TYPE_CHECKING:
    import requests
    import tweepy

    from ..pictures.limits import ImageLimits
    from ..pictures.prepare import Attachment
    from ..settings import Config

__all__ = [
    "DEFAULT_BASE_URL",
    "MAX_WEIGHTED_LENGTH",
    "NETWORK",
    "PRICES",
    "Credentials",
    "Prices",
    "XPoster",
    "measure",
    "status_url",
    "url_cost",
]

DEFAULT_BASE_URL = "https://api.twitter.com"
# tweepy hard-codes api.twitter.com; api.x.com serves the same API. Both go through our adapter.
_X_ORIGINS = ("https://api.twitter.com", "https://api.x.com")
MAX_WEIGHTED_LENGTH = twittertext.MAX_WEIGHTED_LENGTH
UNIT = "weighted characters"
_KEY_SOURCE = "the X developer portal"
_CREDENTIAL_NAMES = ("TWITTER_API_KEY", "TWITTER_API_SECRET", "TWITTER_ACCESS_TOKEN", "TWITTER_ACCESS_TOKEN_SECRET")

log = logging.getLogger(__name__)


class Prices:
    """What X charges per post, in US dollars. (A plain class, as `Credentials`: the registry
    imports this module on every run, and a dataclass costs a run about 1 ms to make.)"""

    def __init__(self, post: float, post_with_url: float) -> None:
        self.post = post
        self.post_with_url = post_with_url  # any URL, bare domains included: "bot.py" is a link (.py is Paraguay)


# X's pay-per-use prices as of 2026 (new developer accounts since February 2026). X changes them
# now and then: the developer console shows the current ones. The one place the bot knows them.
PRICES = Prices(post=0.015, post_with_url=0.20)


class Credentials:
    """OAuth 1.0a user keys. Kept out of repr() so they never reach a log or a traceback."""

    __slots__ = ("api_key", "api_secret", "access_token", "access_token_secret")

    def __init__(self, api_key: str, api_secret: str, access_token: str, access_token_secret: str) -> None:
        self.api_key = api_key
        self.api_secret = api_secret
        self.access_token = access_token
        self.access_token_secret = access_token_secret

    def __repr__(self) -> str:
        return "Credentials(...)"


def status_url(tweet_id: Optional[str]) -> Optional[str]:
    """The public link of a post (x.com resolves it whatever the account's handle); None for
    no id, or a dry run's made-up one."""
    return f"https://x.com/i/status/{tweet_id}" if tweet_id and tweet_id.isdigit() else None


def url_cost(line: object, prices: Prices = PRICES) -> Optional[str]:
    """Why a text costs more to post, naming its URLs and both prices; None for one without a URL.
    `line` is anything with the `urls` X found in it (a `Fit`, a tweets file's line)."""
    urls: Tuple[str, ...] = getattr(line, "urls", ())
    if not urls:
        return None
    return (
        f"contains a URL ({', '.join(urls)}): X charges about ${prices.post_with_url:.2f} to post it instead of "
        f"${prices.post:.3f} (X counts bare names like example.com or bot.py as links)"
    )


def measure(text: str) -> Fit:
    """Measure `text` the way X does (twitter-text v3: URLs 23, emoji 2, CJK 2, NFC first)."""
    length, urls, problem = twittertext.weigh(text)
    return _fit(length, urls, problem)


def _fit(length: int, urls: Tuple[str, ...], problem: Optional[str] = None) -> Fit:
    return Fit("x", length, MAX_WEIGHTED_LENGTH, UNIT, problem, urls, url_cost(Fit("x", 0, 0, urls=urls)), problem)


class X(Network):
    """X: four OAuth 1.0a keys, twitter-text's weighted 280, a price per post."""

    name = "x"
    label = "X"
    settings = {
        "TWITTER_API_KEY": Setting(
            "", "secret", "API Key (consumer key) from the X developer portal", True, _KEY_SOURCE
        ),
        "TWITTER_API_SECRET": Setting("", "secret", "API Key Secret (consumer secret)", True, _KEY_SOURCE),
        "TWITTER_ACCESS_TOKEN": Setting(
            "", "secret", "Access Token (with Read and write permission)", True, _KEY_SOURCE
        ),
        "TWITTER_ACCESS_TOKEN_SECRET": Setting("", "secret", "Access Token Secret", True, _KEY_SOURCE),
        "X_API_BASE_URL": Setting(DEFAULT_BASE_URL, "url", "where requests go (tests, proxies)"),
    }
    required = _CREDENTIAL_NAMES
    guide = "Getting X keys"
    site = "x.com"
    former_names = ("twitter",)

    def measure(self, text: str) -> Fit:
        return measure(text)

    def image_limits(self) -> ImageLimits:
        """5 MB a picture (JPEG, PNG, GIF, WebP), alt text up to 1,000 characters; X shows at most
        4,096 pixels a side, so the bot sends no more. An animated GIF may be 15 MB, but only
        through the chunked upload: through the one-request upload the bot uses, 5 MB too."""
        from ..pictures.limits import ImageLimits

        return ImageLimits("x", 5_000_000, 4096 * 4096, 4096, 1000, animated_gif_bytes=5_000_000, title=self.label)

    def describe(self, fit: Fit) -> str:
        return f"{fit.length} of {fit.limit} as X counts"

    def post_url(self, post_id: Optional[str]) -> Optional[str]:
        return status_url(post_id)

    def account_url(self, config: Config) -> Optional[str]:
        # An access token starts with the account's numeric id: public, and enough for a link.
        user_id = str(config["TWITTER_ACCESS_TOKEN"] or "").split("-", 1)[0]
        return f"https://x.com/intent/user?user_id={user_id}" if user_id.isdigit() else "https://x.com/home"

    def lines_measured(self) -> object:
        return twittertext.borrowed()  # 6 MiB a run needs no more once it has measured its new lines

    def known_lines(self, texts: Collection[str], cache: Optional[LengthCache]) -> Optional[Callable[[str], Fit]]:
        version = twittertext.measured_by() if cache is not None else ""
        if cache is None or not texts or not twittertext.all_known(cache, version, texts):
            return None
        return lambda text: _cached_fit(cache, version, text)

    def measure_lines(self, texts: Iterable[str], cache: Optional[LengthCache]) -> Dict[str, Fit]:
        version = twittertext.measured_by() if cache is not None else ""
        known = twittertext.cached_lengths(cache, version)
        fits: Dict[str, Fit] = {}
        measured_anew = False
        for text in texts:
            cached = known.get(text)
            if cached is not None and cached[0] <= MAX_WEIGHTED_LENGTH:  # measured before, and X accepted it
                fits[text] = _fit(cached[0], cached[1])
            else:
                fits[text] = measure(text)
                measured_anew = True
        if cache is not None and measured_anew:
            accepted = {text: (fit.length, fit.urls) for text, fit in fits.items() if fit.fits}
            twittertext.remember_lengths(cache, version, accepted)
        return fits

    def poster(self, config: Config) -> XPoster:
        credentials = Credentials(*(str(config[name]) for name in _CREDENTIAL_NAMES))
        return XPoster(
            credentials,
            timeout=config["API_TIMEOUT"],
            retries=config["API_RETRIES"],
            base_url=str(config["X_API_BASE_URL"]),
        )


def _cached_fit(cache: LengthCache, version: str, text: str) -> Fit:
    """The fit of a text the cache knows (`twittertext.all_known`), from its cached length. Measured again
    if its row has gone since (another run kept another file's lengths), as any new line is."""
    cached = twittertext.cached_lengths(cache, version, (text,)).get(text)
    if cached is None or cached[0] > MAX_WEIGHTED_LENGTH:
        return measure(text)
    return _fit(cached[0], cached[1])



# -- posting -------------------------------------------------------------------------------------


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
        import tweepy

        self._client = tweepy.Client(
            consumer_key=credentials.api_key,
            consumer_secret=credentials.api_secret,
            access_token=credentials.access_token,
            access_token_secret=credentials.access_token_secret,
            wait_on_rate_limit=False,  # True retries 429s forever: never in a cron bot
        )
        adapter = _adapter(timeout=timeout, base_url=base_url)
        for origin in _X_ORIGINS:
            self._client.session.mount(origin, adapter)
        from .retry import Backoff

        self._policy = Backoff(retries, backoff, sleep)
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
        import requests
        import tweepy

        media_ids = self._upload(images) if images else None
        error: Optional[PostError] = None
        for attempt in self._policy.attempts():
            if attempt:
                assert error is not None
                self._policy.wait(attempt, error)
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
                return PostResult(text=text, post_id=str(tweet_id), url=status_url(str(tweet_id)))
            if error.kind in _MAYBE_POSTED:
                return self._uncertain(text, error.summary)
            if not self.may_retry(error):
                break
        assert error is not None
        raise error

    def _upload(self, images: Sequence[Attachment]) -> List[str]:
        """The pictures fitted to X's limits and uploaded with their alt text (networks/media.py)."""
        import tweepy

        from .media import fit_pictures, upload_to_x

        return upload_to_x(
            self._client.session,
            self._credentials,
            fit_pictures(images, NETWORK.image_limits()),
            policy=self._policy,
            classify=lambda response: _classify(tweepy.HTTPException(response)),
            network_error=_network_error,
        )

    def _uncertain(self, text: str, why: str) -> PostResult:
        log.debug("not sending it again: %s", self.retry_safety)
        return PostResult(text=text, post_id=None, uncertain=why, check_url=self.account_url)

    def account(self) -> str:
        """The account the keys post as, checked online (`check --online`): "@username"."""
        return f"@{self.verify()}"

    def verify(self) -> str:
        """Check the keys with ``GET /2/users/me``; returns the account's @username."""
        import requests
        import tweepy

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
_NEVER_POSTED_RETRYABLE = {ErrorKind.UNREACHABLE, ErrorKind.SERVER_ERROR}
_MAYBE_POSTED = {ErrorKind.TIMEOUT, ErrorKind.NETWORK}


def _adapter(*, timeout: float, base_url: str) -> object:
    """An adapter that gives every request a timeout and, when `base_url` is set, sends it there
    instead of X. OAuth signing happens before `send`, over the original https URL, exactly as X
    verifies it. Made here: requests is imported only to post."""
    from urllib.parse import urlsplit

    from requests.adapters import HTTPAdapter

    class _XAdapter(HTTPAdapter):
        def send(self, request, **kwargs):  # type: ignore[no-untyped-def]
            kwargs["timeout"] = kwargs.get("timeout") or timeout
            if base_url.rstrip("/") != DEFAULT_BASE_URL:
                for origin in _X_ORIGINS:
                    if request.url.startswith(origin + "/"):
                        request.url = base_url.rstrip("/") + request.url[len(origin) :]
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

    return _XAdapter(max_retries=0)  # never let urllib3 re-send a POST on its own


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
    from .http import network_error

    return network_error(
        exc,
        where="X",
        unreachable="check the network connection and DNS; the next run will try again",
        slow="X may be slow (API_TIMEOUT sets the limit)",
    )


def _classify(exc: tweepy.TweepyException) -> PostError:
    """Turn tweepy's exception for an X reply into a PostError that says what to do."""
    response = getattr(exc, "response", None)
    if response is None:
        return PostError(f"tweepy failed: {exc}", kind=ErrorKind.UNEXPECTED, exit_status=ExitStatus.UNEXPECTED)
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
    from .retry import rate_limited

    return rate_limited("X", f"429, {window}", retry_at)


def _json_body(response: requests.Response) -> dict:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


NETWORK = X()

"""How the bot reaches X: the API's address and the origins tweepy signs for, the OAuth 1.0a keys
that sign every request (`sign` for a read the bot makes itself, `signer` for one through
requests), the session tweepy posts through (its adapter gives each request a timeout and sends it
to X_API_BASE_URL), and a post's public link::

    session = posting_session(timeout=20, base_url=DEFAULT_BASE_URL)
    headers = {"Authorization": sign(credentials, "GET", DEFAULT_BASE_URL + "/2/users/me")}
    status_url("1456012973835788293")   # 'https://x.com/i/status/1456012973835788293'
"""

from __future__ import annotations

import logging
import time
from typing import Mapping, Optional

__all__ = [
    "DEFAULT_BASE_URL",
    "X_ORIGINS",
    "Credentials",
    "adapter",
    "limits_left",
    "posting_session",
    "sign",
    "signer",
    "status_url",
]

DEFAULT_BASE_URL = "https://api.twitter.com"
# tweepy hard-codes api.twitter.com; api.x.com serves the same API. Both go through our adapter.
X_ORIGINS = ("https://api.twitter.com", "https://api.x.com")

log = logging.getLogger(__package__)  # X's lines log under the network's name


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


def adapter(*, timeout: float, base_url: str) -> object:
    """An adapter that gives every request a timeout, reads every answer within the bound all
    networks share (`http.BoundedAdapter`) and, when `base_url` is set, sends the request there
    instead of X. OAuth signing happens before `send`, over the original https URL, exactly as X
    verifies it. Made here: requests is imported only to post."""
    from urllib.parse import urlsplit

    from ..http import BoundedAdapter

    class _XAdapter(BoundedAdapter):
        def send(self, request, **kwargs):  # type: ignore[no-untyped-def]
            if base_url.rstrip("/") != DEFAULT_BASE_URL:
                for origin in X_ORIGINS:
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
                limits_left(response.headers),
            )
            return response

    return _XAdapter(timeout=timeout)  # never lets urllib3 re-send a POST on its own


def posting_session(*, timeout: float, base_url: str) -> object:
    """The requests session tweepy posts and uploads through: `adapter` on each of X_ORIGINS."""
    from ..http import bounded_session

    session = bounded_session()
    mounted = adapter(timeout=timeout, base_url=base_url)
    for origin in X_ORIGINS:
        session.mount(origin, mounted)
    return session


def sign(credentials: Credentials, method: str, url: str) -> str:
    """The OAuth 1.0a Authorization header (HMAC-SHA1) of a request without a body to `url`, as
    X checks it (over the https URL of X_ORIGINS, whatever X_API_BASE_URL says): oauthlib's, as
    `signer` signs, without requests."""
    from oauthlib.oauth1 import Client

    client = Client(
        credentials.api_key,
        client_secret=credentials.api_secret,
        resource_owner_key=credentials.access_token,
        resource_owner_secret=credentials.access_token_secret,
    )
    _, signed, _ = client.sign(url, method)
    return str(signed["Authorization"])


def signer(credentials: Credentials) -> object:
    """The OAuth 1.0a signer (HMAC-SHA1, in the Authorization header) of a request the bot makes
    itself, over the original https URL, as X checks it: oauthlib's, which tweepy signs with too
    (through requests-oauthlib, whose import costs a round of replies a tenth of its CPU). The
    requests it signs carry their parameters in the URL, or a multipart or JSON body, which OAuth
    1.0a leaves out of the signature; a form body would be signed as one."""
    from oauthlib.oauth1 import Client
    from requests.auth import AuthBase

    client = Client(
        credentials.api_key,
        client_secret=credentials.api_secret,
        resource_owner_key=credentials.access_token,
        resource_owner_secret=credentials.access_token_secret,
    )

    class _Signed(AuthBase):
        def __call__(self, request):  # type: ignore[no-untyped-def]
            form = str(request.headers.get("Content-Type", "")).startswith("application/x-www-form-urlencoded")
            body = request.body if form else None
            if isinstance(body, bytes):
                body = body.decode("utf-8")
            headers = {"Content-Type": "application/x-www-form-urlencoded"} if form else {}
            _, signed, _ = client.sign(request.url, request.method, body=body, headers=headers)
            request.headers["Authorization"] = signed["Authorization"]
            return request

    return _Signed()


# X's rate-limit headers (prefix) and the window each counts.
_LIMITS = (
    ("x-rate-limit", "the 15-minute window"),
    ("x-user-limit-24hour", "24 hours for this user"),
    ("x-app-limit-24hour", "24 hours for this app"),
)


def limits_left(headers: Mapping[str, str]) -> str:
    """What X's rate-limit headers say is left, for -v."""
    parts = [
        f"{headers[prefix + '-remaining']} of {headers.get(prefix + '-limit', '?')} left in {window}"
        for prefix, window in _LIMITS
        if prefix + "-remaining" in headers
    ]
    return "rate limits: " + ", ".join(parts) if parts else "no rate-limit headers"

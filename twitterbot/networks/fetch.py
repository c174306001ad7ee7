"""A picture fetched by URL for a post (a grammar's ``{img URL}``, an ``<image>`` inside its SVG),
through the one bounded request (`request.py`) held to the link cards' rules: http or https only,
public addresses only unless the owner allows their own network (LINK_CARDS_LOCAL=yes), every
redirect checked the same way and connected to the address that was checked, at most `max_bytes`,
at most `timeout` seconds in all, whatever the server does::

    data = fetch_picture("https://example.com/cat.png", allow_local=False, max_bytes=5_000_000, timeout=10)

A failure is a `FetchError` that says why and what to do; `temporary` tells a server that may
answer later (a timeout, a 503) from a URL that will never give a picture (a private address, a
404, a web page).
"""

from __future__ import annotations

import time
from typing import Callable
from urllib.parse import urlsplit

from .. import __version__
from .addresses import Screen, refusal
from .request import Answer, Bounds, Failure, RequestError, request

__all__ = ["MAX_REDIRECTS", "USER_AGENT", "FetchError", "fetch_picture"]

USER_AGENT = f"twitterbot/{__version__} (a Raspberry Pi posting bot, fetching a picture for a post)"
MAX_REDIRECTS = 3


class FetchError(ValueError):
    """A picture that could not be fetched, and why. `temporary`: the server may give it later
    (try again); otherwise the URL itself is wrong for a picture (a data error, exit 65)."""

    def __init__(self, message: str, *, temporary: bool = False) -> None:
        super().__init__(message)
        self.temporary = temporary
        self.exit_status = 75 if temporary else 65


def fetch_picture(
    url: str,
    *,
    allow_local: bool,
    max_bytes: int,
    timeout: float,
    screen: Screen = refusal,
    clock: Callable[[], float] = time.monotonic,
) -> bytes:
    """The bytes at `url` (an image/* answer, or one that names no type), within `max_bytes` and
    `timeout` seconds in all: the look-up, connecting, every redirect, the headers and the body.
    Every host, the URL's and each redirect's, must pass `screen` (the public internet) unless
    `allow_local`. FetchError otherwise."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FetchError(f"{url} is not an http or https URL: a picture is fetched from the web only")
    try:
        _ = parts.port  # ValueError for a port that is not a number
    except ValueError:
        raise FetchError(f"{url} has a port that is not a number: check the URL") from None
    bounds = Bounds(timeout, max_bytes, redirects=MAX_REDIRECTS, screen=None if allow_local else screen)
    try:
        answer = request("GET", url, bounds, headers={"User-Agent": USER_AGENT, "Accept": "image/*"}, clock=clock)
    except RequestError as exc:
        raise _failed(url, exc, timeout) from None
    return _picture(url, answer)


def _failed(url: str, exc: RequestError, timeout: float) -> FetchError:
    """What a request that gave no answer means for a picture."""
    if exc.failure is Failure.REFUSED:
        redirected = f"the picture at {url} redirects to " if exc.redirected else ""
        return FetchError(
            f"{redirected}{exc}: pictures are fetched only from the public internet (LINK_CARDS_LOCAL=yes allows your own network)"
        )
    if exc.failure is Failure.TIMEOUT:
        return FetchError(f"the picture at {url} took over {timeout:g} s: try again later", temporary=True)
    if exc.failure is Failure.TOO_LARGE:
        return FetchError(f"the picture at {url} is {exc}: link a smaller one")
    if exc.failure is Failure.REDIRECT:
        return FetchError(f"the picture at {url} {exc}: link the picture itself")
    if exc.failure is Failure.UNREACHABLE:
        return FetchError(f"the picture at {url} could not be fetched ({exc}): check the URL", temporary=True)
    return FetchError(f"the picture at {url} could not be read ({exc})", temporary=True)


def _picture(url: str, answer: Answer) -> bytes:
    """The answer's body, if it is a picture."""
    status = answer.status_code
    if status != 200:
        later = status >= 500 or status == 429
        raise FetchError(
            f"the picture at {url} could not be fetched: the server answered {status} {answer.reason}".rstrip()
            + (": try again later" if later else ": check the URL"),
            temporary=later,
        )
    kind = (answer.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
    if kind and not (kind.startswith("image/") or kind == "application/octet-stream"):
        raise FetchError(f"{url} is not a picture (the server says {kind}): link the picture itself")
    if not answer.content:
        raise FetchError(f"the picture at {url} is empty: check the URL")
    return answer.content

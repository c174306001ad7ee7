"""One request to a monitor, through the one bounded request (`networks/request.py`), that
never raises: whatever the server (or whoever answers in its place) does, `Call.send` returns None
when the monitor took the request (a 2xx answer) and otherwise the reason it did not, in one line
that never holds the URL.

- Time: `seconds` for everything, the name's look-up and redirects included, even from a server
  that drips its answer a byte at a time.
- Size: the status line and headers within http.client's own bounds (a line of 64 KB, 100
  headers); the body is never read.
- TLS: an https URL's certificate is checked (against the system's trusted certificates, or the
  file OpenSSL's SSL_CERT_FILE names) for the URL's host name, on the very connection that was
  made to the checked addresses; one that is not trusted is a warning saying why.
- Redirects: at most `MAX_REDIRECTS`, to http or https only, never from https to http. A monitor
  may be on this machine or the home network if its URL says so, but a monitor on the public
  internet may not send the request there: a redirect from a public address is held to the link
  cards' address rules (`networks/addresses.py`). The URL's login goes to its own origin (and its
  https) and no other.
- Credentials: the URL's user-info is sent as an ``Authorization: Basic`` header (`endpoint.py`),
  never in the request line::

    problem = Call(parse(url), body=b"posted line 3", headers={}, seconds=10).send()
"""

from __future__ import annotations

import time
from typing import Callable, Mapping, Optional

from .. import __version__
from ..networks.addresses import Screen, refusal
from ..networks.request import Bounds, Failure, RequestError, request
from ..wording import printable
from .endpoint import Endpoint

__all__ = ["MAX_REDIRECTS", "USER_AGENT", "Call"]

USER_AGENT = f"twitterbot/{__version__} (a Raspberry Pi posting bot, telling its monitor)"
MAX_REDIRECTS = 3
_MAX_REASON = 200  # characters of what a server said, in a warning
_MAX_SAID = 400  # characters of why a request failed (the advice included)


class Call:
    """One request to `endpoint`: a POST of `body` if there is one, else a GET. `screen` says which
    addresses are public (`addresses.refusal`; a test's own rule); `clock` measures the time limit."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        body: bytes = b"",
        headers: Optional[Mapping[str, str]] = None,
        seconds: float = 10.0,
        screen: Screen = refusal,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._endpoint = endpoint
        self._body = body
        self._headers = dict(headers or {})
        self._clock = clock
        # The monitor's own host may be anywhere (its owner wrote it); a redirect from a public one
        # is held to `screen`; the body of the answer is never read.
        self._bounds = Bounds(seconds, 0, redirects=MAX_REDIRECTS, screen=screen, own_host_free=True, downgrade=False)

    def send(self) -> Optional[str]:
        """None if the monitor took the request (2xx), else why not, in words. Never raises, and
        is over within the time limit however slowly the server answers."""
        endpoint = self._endpoint
        headers = {"User-Agent": USER_AGENT, **self._headers}
        if endpoint.authorization:  # the URL's own, and only on its origin (the one request sees to it)
            headers["Authorization"] = endpoint.authorization
        method = "POST" if self._body else "GET"
        try:
            answer = request(
                method, endpoint.address, self._bounds, headers=headers, body=self._body, clock=self._clock
            )
        except RequestError as exc:
            return _failed(exc)
        if 200 <= answer.status_code < 300:
            return None
        return f"it answered {answer.status_code} {_clean(answer.reason)}".rstrip()


def _failed(exc: RequestError) -> str:
    """A call that gave no answer, in words (the one request's never hold the URL)."""
    said = _clean(exc, _MAX_SAID)
    if exc.failure is Failure.REFUSED and exc.redirected:
        return f"it redirects from the public internet to {said}: not followed"
    if exc.failure is Failure.REDIRECT:
        said = f"it {said}"
        if "from https to http" in said:
            said += " (if the monitor has moved to http, write its new URL in the setting)"
    return said


def _clean(text: object, most: int = _MAX_REASON) -> str:
    """What a server said, fit for a one-line warning: printable, one line, short."""
    return " ".join(printable(str(text)).split())[:most]

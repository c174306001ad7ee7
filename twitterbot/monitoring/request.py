"""One request to a monitor, within fixed bounds, that never raises: whatever the server (or
whoever answers in its place) does, `Call.send` returns None when the monitor took the request
(a 2xx answer) and otherwise the reason it did not, in one line that never holds the URL.

- Time: `seconds` for everything, redirects included, even from a server that drips its answer
  a byte at a time (its connection is shut at the limit; `Call.abandon` does it sooner).
- Size: the status line and headers within http.client's own bounds (a line of 64 KB, 100
  headers); the body is never read.
- TLS: an https URL's certificate is checked (against the system's trusted certificates, or the
  file OpenSSL's SSL_CERT_FILE names) for the URL's host name, on the very connection that was
  made to the checked addresses; one that is not trusted is a warning saying why.
- Redirects: at most `MAX_REDIRECTS`, to http or https only, never from https to http. A monitor may be on this machine or
  the home network if its URL says so, but a monitor on the public internet may not send the
  request there: a redirect from a public address is held to the link cards' address rules
  (`networks/addresses.py`). The URL's login goes to its own origin (and its https) and no other.
- Credentials: the URL's user-info is sent as an ``Authorization: Basic`` header (`endpoint.py`),
  never in the request line::

    problem = Call(parse(url), body=b"posted line 3", headers={}, seconds=10).send()
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import socket
import ssl
import threading
import time
from typing import Callable, Mapping, Optional, Tuple
from urllib.parse import urljoin

from .. import __version__
from ..networks.addresses import AddressRefused, Screen, connect, refusal
from ..wording import printable
from .endpoint import Endpoint, parse

__all__ = ["MAX_REDIRECTS", "USER_AGENT", "Call"]

USER_AGENT = f"twitterbot/{__version__} (a Raspberry Pi posting bot, telling its monitor)"
MAX_REDIRECTS = 3
_REDIRECTS = (301, 302, 303, 307, 308)
_MAX_REASON = 200  # characters of what a server said, in a warning


class _Refused(Exception):
    """Why a call gave up: the server's or the network's doing, never a bug."""


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
        self._seconds = seconds
        self._screen = screen
        self._clock = clock
        self._deadline = clock() + seconds  # from when `send` begins
        self._lock = threading.Lock()
        self._connection: Optional[http.client.HTTPConnection] = None
        self._abandoned = False

    def send(self) -> Optional[str]:
        """None if the monitor took the request (2xx), else why not, in words. Never raises, and
        is over within the time limit (and a moment) however slowly the server answers; only a
        name look-up that hangs lasts longer (the caller does not wait for it)."""
        late = f"no answer within {self._seconds:g} s"
        self._deadline = self._clock() + self._seconds
        # A socket's timeout bounds each read, not the answer: a server that sends a byte now and
        # then would keep the call going for ever. At the limit its connection is shut.
        watchdog = threading.Timer(self._seconds, self.abandon)
        watchdog.daemon = True
        watchdog.start()
        try:
            return self._send()
        except _Refused as exc:
            return str(exc)
        except socket.timeout:
            return late
        except ssl.SSLCertVerificationError as exc:
            return _untrusted(exc)
        except (OSError, http.client.HTTPException, UnicodeError, ValueError) as exc:
            return late if self._abandoned else _said(exc)
        finally:
            watchdog.cancel()
            self._close()

    def abandon(self) -> None:
        """Stop: the caller gave up waiting; the connection in use is shut, so the call ends soon."""
        with self._lock:
            self._abandoned = True
            connection = self._connection
        if connection is not None and connection.sock is not None:
            with contextlib.suppress(OSError):
                connection.sock.shutdown(socket.SHUT_RDWR)

    def _send(self) -> Optional[str]:
        endpoint, method, body = self._endpoint, "POST" if self._body else "GET", self._body
        first = endpoint.origin
        public: Optional[bool] = None  # whether the URL's own server is on the public internet
        for hop in range(MAX_REDIRECTS + 1):
            connection, on_public = self._connect(endpoint, hop_screen=self._screen if public else None)
            public = on_public if public is None else public
            headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity", **self._headers}
            if endpoint.authorization:  # the URL's own, and only on its origin (`_redirected`)
                headers["Authorization"] = endpoint.authorization
            connection.request(method, endpoint.target, body=body or None, headers=headers)
            connection.sock.settimeout(self._left())
            response = connection.getresponse()  # the status line and headers, bounded by http.client
            if self._abandoned:  # shut at the time limit: what was read before is no answer
                raise _Refused(f"no answer within {self._seconds:g} s")
            status = response.status
            location = (response.getheader("Location") or "").strip()
            self._close()
            if 200 <= status < 300:
                return None
            if status not in _REDIRECTS:
                return f"it answered {status} {_clean(response.reason)}".rstrip()
            if hop == MAX_REDIRECTS:
                return f"it redirects more than {MAX_REDIRECTS} times"
            if not location:
                return f"it answered {status} (a redirect) without saying where"
            endpoint = self._redirected(endpoint, location, first)
            if status == 303:  # see other: a GET of that page, as browsers and curl do
                method, body = "GET", b""
        return None  # not reached: the loop returns

    def _redirected(self, endpoint: Endpoint, location: str, first: Tuple[str, str, int]) -> Endpoint:
        """Where a redirect leads; _Refused for a scheme other than http or https. Its own
        user-info is dropped (a server does not hand out credentials), and ours go with it only
        while it stays on our URL's origin."""
        try:
            target = parse(urljoin(endpoint.address, location))
        except ValueError as exc:
            raise _Refused(f"it redirects to a URL that is not followed: {exc}") from None
        if endpoint.scheme == "https" and target.scheme == "http":
            raise _Refused(
                "it redirects from https to http, where the request would travel unencrypted: not followed"
                " (if the monitor has moved to http, write its new URL in the setting)"
            )
        login = self._endpoint.authorization if _keeps_login(first, target.origin) else None
        return Endpoint(target.scheme, target.host, target.port, target.target, login)

    def _connect(self, endpoint: Endpoint, *, hop_screen: Optional[Screen]) -> Tuple[http.client.HTTPConnection, bool]:
        """A connection to `endpoint`'s server, made to the addresses that were checked (no second
        look-up), and whether they are all public. `hop_screen` None: any address (the user's URL,
        or a redirect from a monitor on this machine or the home network)."""
        try:
            connection = connect(endpoint.scheme, endpoint.host, endpoint.port, screen=hop_screen, timeout=self._left())
        except AddressRefused as exc:
            raise _Refused(f"it redirects from the public internet to {exc}: not followed") from None
        public = all(
            self._screen(ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])) is None
            for _, sockaddr in connection.addresses
        )
        with self._lock:
            if self._abandoned:
                raise _Refused(f"no answer within {self._seconds:g} s")
            self._connection = connection
        return connection, public

    def _left(self) -> float:
        left = self._deadline - self._clock()
        if left <= 0:
            raise _Refused(f"no answer within {self._seconds:g} s")
        return left

    def _close(self) -> None:
        with self._lock:
            connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()


def _keeps_login(first: Tuple[str, str, int], then: Tuple[str, str, int]) -> bool:
    """Whether a redirect from the URL's origin `first` to `then` may carry its login: to the same
    origin, or from http to https on the same host at their usual ports (a server moving its
    clients to https); to anywhere else the login is not sent."""
    return then == first or (first[1] == then[1] and first[0::2] == ("http", 80) and then[0::2] == ("https", 443))


def _clean(text: object) -> str:
    """What a server said, fit for a one-line warning: printable, one line, short."""
    return " ".join(printable(str(text)).split())[:_MAX_REASON]


# OpenSSL's codes for a certificate that is trusted but made out for another host or address.
_WRONG_NAME = (62, 64)  # X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH


def _untrusted(exc: ssl.SSLCertVerificationError) -> str:
    """A certificate that was refused, in words: why (OpenSSL's reason) and what to do."""
    why = _clean(getattr(exc, "verify_message", "") or exc.reason or "").rstrip(".")
    if getattr(exc, "verify_code", None) in _WRONG_NAME:
        return (
            f"its certificate is not valid for the URL's server ({why}): write the server in the URL by a name"
            " its certificate is made out for"
        )
    return (
        f"its certificate is not trusted ({why}): if the server's certificate authority is your own, add it to"
        " the system's trusted certificates (update-ca-certificates) or name its file in SSL_CERT_FILE"
    )


def _said(exc: BaseException) -> str:
    """A failed call in words: the exception's kind and message (never the URL: none is given to
    the layers below, which see only a host, a port and a path)."""
    if isinstance(exc, http.client.RemoteDisconnected):
        return "it closed the connection without answering"
    if isinstance(exc, http.client.HTTPException) and not isinstance(exc, http.client.IncompleteRead):
        return f"its answer is not HTTP: {_clean(exc) or type(exc).__name__}"
    reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return _clean(f"{type(exc).__name__}: {reason}")

"""The one bounded request: every read the bot makes from outside (a picture for a post, a link
card's page and picture, a monitor's ping or alert, each network's mention reader, X's timeline)
goes through `request`, which ends within its `Bounds` whatever the server does:

- Time: `Bounds.seconds` for everything, in all: the name's look-up, connecting, TLS, sending,
  the status line and headers, the body and every redirect. Each read from the socket waits at
  most what is left of it, so a server that sends its headers or a chunked body a byte a second
  is cut off at the deadline (a socket's own timeout bounds one read, not the answer).
- Size: at most `Bounds.max_bytes` of body (0: the body is not read); the status line and headers
  within http.client's own bounds (a line of 64 KB, 100 headers).
- Addresses: every host, the URL's and each redirect's, is looked up once and its addresses
  checked by `Bounds.screen` (`addresses.refusal`: the public internet only; None: any), then
  connected to as checked (`addresses.connect`: no second look-up).
- Redirects: at most `Bounds.redirects` (0: a 3xx is the answer); the Authorization header only
  to the URL's own origin (or its https on the usual port).

A failure is a `RequestError` whose `failure` says what happened (`Failure`) and `sent` whether
the request may have reached the server; its message never holds the URL (a monitor's may hold a
secret), so each caller names what it asked for::

    answer = request("GET", "https://example.com/cat.png", Bounds(seconds=10, max_bytes=5_000_000))
    answer.status_code, answer.headers.get("Content-Type"), answer.content
"""

from __future__ import annotations

import enum
import http.client
import io
import ipaddress
import json
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, List, Mapping, Optional, Tuple, Type
from urllib.parse import quote, urljoin, urlsplit

from .addresses import Address, AddressRefused, PinnedHTTPConnection, PinnedHTTPSConnection, Screen, refusal, resolve

__all__ = ["Answer", "Bounds", "Deadline", "Failure", "RequestError", "reading_within", "request"]

_REDIRECTS = (301, 302, 303, 307, 308)
_PIECE = 64 * 1024
_SAFE = "/%:@!$&'()*+,;=~"


@dataclass(frozen=True)
class Bounds:
    """What one request may take, stated by its caller: `seconds` in all, `max_bytes` of body,
    `redirects` followed, the address rule `screen` for every host (None: any address). With
    `own_host_free`, the URL's own host may be anywhere (its owner wrote it: a monitor on the home
    network) and only a redirect from a public one is held to `screen`. `downgrade`: whether a
    redirect from https to http is followed. `cut`: a longer body is cut at `max_bytes`."""

    seconds: float
    max_bytes: int
    redirects: int = 0
    screen: Optional[Screen] = refusal
    own_host_free: bool = False
    downgrade: bool = True
    # Keep the first `max_bytes` of a longer body and stop reading (a page's head is at its
    # start), instead of failing with TOO_LARGE.
    cut: bool = False


class Failure(enum.Enum):
    """What became of a request that gave no answer."""

    REFUSED = "refused"  # an address the rule refuses, or a URL that is not http(s): nothing sent
    UNREACHABLE = "unreachable"  # no connection (the name, refused, TLS): nothing sent
    TIMEOUT = "timeout"  # the time was up
    BROKEN = "broken"  # the connection broke, or the answer was not HTTP
    TOO_LARGE = "too large"  # a body over the bound: the connection was closed
    REDIRECT = "redirect"  # a redirect that is not followed (too many, nowhere, to another scheme)


class RequestError(Exception):
    """A request that gave no answer to read: `failure` says why, `sent` whether it may have
    reached the server (a post may then exist). The message never holds the URL."""

    def __init__(self, message: str, failure: Failure, *, sent: bool, redirected: bool = False, limit: int = 0) -> None:
        super().__init__(message)
        self.failure = failure
        self.sent = sent
        self.redirected = redirected  # it failed after following a redirect
        self.limit = limit  # TOO_LARGE: the bound, in bytes


@dataclass(frozen=True)
class Answer:
    """A server's answer, read whole within the bounds: as requests' `Response` names its parts,
    so the networks' error wording reads either."""

    url: str  # after redirects
    status_code: int
    reason: str
    headers: http.client.HTTPMessage
    content: bytes
    whole: bool = True  # False: the body was cut at the bound (`Bounds.cut`)

    @property
    def ok(self) -> bool:
        return 200 <= self.status_code < 400

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        """The body as JSON: ValueError when it is not (RecursionError when nested too deep)."""
        return json.loads(self.content)


class Deadline:
    """The time left of `seconds` from now, on `clock`: what every read of one request waits at
    most (the client libraries' adapters in `http.py` use it too)."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._at = clock() + seconds

    def left(self) -> float:
        """Seconds left; socket.timeout when none are."""
        left = self._at - self._clock()
        if left <= 0:
            raise socket.timeout("timed out")
        return left


def request(
    method: str,
    url: str,
    bounds: Bounds,
    *,
    headers: Optional[Mapping[str, str]] = None,
    body: bytes = b"",
    clock: Callable[[], float] = time.monotonic,
) -> Answer:
    """Send `method` to `url` and read the answer within `bounds` (see the module). RequestError
    when no answer came that can be read; any status is an answer (a 3xx too, past the redirects
    followed)."""
    deadline = Deadline(bounds.seconds, clock)
    given = dict(headers or {})
    first = _origin(_split(url))
    public: Optional[bool] = None  # whether the URL's own host is public (own_host_free)
    for hop in range(bounds.redirects + 1):
        parts = _split(url)
        screen = None if bounds.own_host_free and not public else bounds.screen
        hop_headers = {**given}
        if "Authorization" in given and not _keeps_login(first, _origin(parts)):
            del hop_headers["Authorization"]
        try:
            answer, addresses = _exchange(method, parts, url, hop_headers, body, bounds, deadline, screen)
        except RequestError as exc:
            exc.redirected = hop > 0
            raise
        if public is None:
            public = bounds.screen is None or all(_allowed(bounds.screen, address) for address in addresses)
        if bounds.redirects == 0 or answer.status_code not in _REDIRECTS:
            return answer
        url = _redirect(answer, url, hop == bounds.redirects, bounds)
        if answer.status_code == 303 and method != "HEAD":  # see other: a GET of that page
            method, body = "GET", b""
    raise AssertionError("not reached: the loop returns")


def _redirect(answer: Answer, url: str, last: bool, bounds: Bounds) -> str:
    """Where a redirect leads, or RequestError REDIRECT when it is not followed."""

    def refused(why: str) -> RequestError:
        return RequestError(why, Failure.REDIRECT, sent=True, redirected=True)

    if last:
        raise refused(f"redirects more than {bounds.redirects} times")
    location = (answer.headers.get("Location") or "").strip()
    if not location:
        raise refused(f"redirects ({answer.status_code}) without saying where")
    try:
        target = urljoin(url, location)
        parts = urlsplit(target)
        _ = parts.port  # ValueError for a port that is not a number
    except ValueError as exc:
        raise refused(f"redirects to a URL that is not followed ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise refused(f"redirects to a URL that is not followed (not http or https: {parts.scheme or 'none'})")
    if not bounds.downgrade and urlsplit(url).scheme == "https" and parts.scheme == "http":
        raise refused("redirects from https to http, where the request would travel unencrypted: not followed")
    return target


def _exchange(
    method: str,
    parts: Any,
    url: str,
    headers: Mapping[str, str],
    body: bytes,
    bounds: Bounds,
    deadline: Deadline,
    screen: Optional[Screen],
) -> Tuple[Answer, List[Address]]:
    """One request and its answer, on a connection of its own to the addresses checked."""
    https = parts.scheme == "https"
    try:
        port = parts.port
    except ValueError:
        raise RequestError("its port is not a number", Failure.REFUSED, sent=False) from None
    host = parts.hostname
    addresses = _addresses(host, port or (443 if https else 80), screen, deadline)
    sent = False
    try:
        left = deadline.left()
        connection: http.client.HTTPConnection
        if https:
            connection = PinnedHTTPSConnection(
                host, port, addresses, timeout=left, context=ssl.create_default_context(), left=deadline.left
            )
        else:
            connection = PinnedHTTPConnection(host, port, addresses, timeout=left, left=deadline.left)
        connection.response_class = reading_within(deadline)
    except socket.timeout:
        raise _timed_out(deadline, sent=False) from None
    try:
        connection.connect()
        connection.sock.settimeout(deadline.left())
        sent = True
        connection.request(method, _target(parts), body=body or None, headers=_with_defaults(headers))
        response = connection.getresponse()
        content, whole = _body(response, bounds) if method != "HEAD" else (b"", True)
        return Answer(url, response.status, str(response.reason or ""), response.msg, content, whole), addresses
    except RequestError:
        raise
    except socket.timeout:
        raise _timed_out(deadline, sent=sent) from None
    except ssl.SSLCertVerificationError as exc:
        raise RequestError(_untrusted(exc), Failure.UNREACHABLE, sent=False) from None
    except (OSError, http.client.HTTPException, ValueError) as exc:
        if not sent:
            raise RequestError(_said(exc), Failure.UNREACHABLE, sent=False) from None
        raise RequestError(_said(exc), Failure.BROKEN, sent=True) from None
    finally:
        connection.close()


def _addresses(host: str, port: int, screen: Optional[Screen], deadline: Deadline) -> List[Address]:
    """`host`'s addresses, checked by `screen`, looked up within the time left: a name's look-up
    has no timeout of its own, so it runs aside and is given up at the deadline."""
    found: List[Any] = []

    def look_up() -> None:
        try:
            found.append(resolve(host, port, screen=screen))
        except (AddressRefused, OSError, UnicodeError, ValueError) as exc:
            found.append(exc)

    try:
        ipaddress.ip_address(host.split("%", 1)[0])
        look_up()  # an address: nothing to look up, nothing to wait for
    except ValueError:
        looking = threading.Thread(target=look_up, name="twitterbot-resolve", daemon=True)
        looking.start()
        try:
            looking.join(deadline.left())
        except socket.timeout:
            raise _timed_out(deadline, sent=False) from None
        if not found:
            raise RequestError(
                f"the name {host} did not resolve within {deadline.seconds:g} s", Failure.TIMEOUT, sent=False
            ) from None
    result = found[0]
    if isinstance(result, AddressRefused):
        raise RequestError(str(result), Failure.REFUSED, sent=False)
    if isinstance(result, BaseException):
        why = getattr(result, "strerror", None) or _said(result)
        raise RequestError(f"the name {host} did not resolve ({why})", Failure.UNREACHABLE, sent=False)
    return result


class _WithinDeadline(io.RawIOBase):
    """A socket read so that each read waits at most what is left of the deadline. It holds
    http.client's own reader (`held`) until it is closed: that keeps the socket open after the
    connection lets go of it, as http.client's reader would."""

    def __init__(self, sock: socket.socket, deadline: Deadline, held: Any) -> None:
        super().__init__()
        self._sock = sock
        self._deadline = deadline
        self._held = held

    def close(self) -> None:
        super().close()
        self._held.close()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        self._sock.settimeout(self._deadline.left())
        return self._sock.recv_into(buffer)


def reading_within(deadline: Deadline) -> Type[http.client.HTTPResponse]:
    """http.client's response class, reading the status line, headers and body within `deadline`
    (a connection's `response_class`)."""

    class _Response(http.client.HTTPResponse):
        def __init__(self, sock: socket.socket, *args: Any, **kwargs: Any) -> None:
            super().__init__(sock, *args, **kwargs)
            self.fp = io.BufferedReader(_WithinDeadline(sock, deadline, self.fp), _PIECE)

    return _Response


def _body(response: http.client.HTTPResponse, bounds: Bounds) -> Tuple[bytes, bool]:
    """The answer's body and whether it is whole: refused (RequestError TOO_LARGE, its message
    the size: "over 5,000 bytes") before reading when its declared length passes the bound, and
    the moment what was read does; with `Bounds.cut`, its first `max_bytes` instead."""
    limit = bounds.max_bytes
    if limit <= 0:
        return b"", False
    declared = response.getheader("Content-Length") or ""
    if declared.strip().isdigit() and int(declared) > limit and not bounds.cut:
        raise RequestError(f"{int(declared):,} bytes, over {limit:,}", Failure.TOO_LARGE, sent=True, limit=limit)
    read = bytearray()
    while True:
        piece = response.read(min(_PIECE, limit + 1 - len(read)))
        if not piece:
            return bytes(read), True
        read += piece
        if len(read) > limit:
            if bounds.cut:
                return bytes(read[:limit]), False
            raise RequestError(f"over {limit:,} bytes", Failure.TOO_LARGE, sent=True, limit=limit)


def _split(url: str) -> Any:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise RequestError("it is not an http or https URL", Failure.REFUSED, sent=False)
    if not parts.hostname:
        raise RequestError("it names no server", Failure.REFUSED, sent=False)
    return parts


def _origin(parts: Any) -> Tuple[str, str, int]:
    try:
        port = parts.port
    except ValueError:
        port = None
    return parts.scheme, parts.hostname or "", port or (443 if parts.scheme == "https" else 80)


def _keeps_login(first: Tuple[str, str, int], then: Tuple[str, str, int]) -> bool:
    """Whether a redirect from the URL's origin `first` to `then` may carry its Authorization: to
    the same origin, or from http to https on the same host at their usual ports."""
    return then == first or (first[1] == then[1] and first[0::2] == ("http", 80) and then[0::2] == ("https", 443))


def _allowed(screen: Screen, address: Address) -> bool:
    return screen(ipaddress.ip_address(str(address[1][0]).split("%", 1)[0])) is None


def _target(parts: Any) -> str:
    """The request line's target: the path and query, escaped where a URL left them raw."""
    path = quote(parts.path or "/", safe=_SAFE)
    return path + ("?" + quote(parts.query, safe=_SAFE + "?") if parts.query else "")


def _with_defaults(headers: Mapping[str, str]) -> dict:
    from .. import __version__

    return {"User-Agent": f"twitterbot/{__version__}", "Accept-Encoding": "identity", **headers}


def _timed_out(deadline: Deadline, *, sent: bool) -> RequestError:
    doing = "no answer" if sent else "no connection"
    return RequestError(f"{doing} within {deadline.seconds:g} s", Failure.TIMEOUT, sent=sent)


# OpenSSL's codes for a certificate that is trusted but made out for another host or address.
_WRONG_NAME = (62, 64)  # X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH


def _untrusted(exc: ssl.SSLCertVerificationError) -> str:
    """A certificate that was refused, in words: why (OpenSSL's reason) and what to do."""
    why = " ".join(str(getattr(exc, "verify_message", "") or exc.reason or "").split())[:200].rstrip(".")
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
    """A failure in words: its kind and message (the layers below never see the URL)."""
    if isinstance(exc, http.client.RemoteDisconnected):
        return "it closed the connection without answering"
    if isinstance(exc, http.client.HTTPException) and not isinstance(exc, http.client.IncompleteRead):
        return f"its answer is not HTTP: {exc or type(exc).__name__}"
    if isinstance(exc, socket.gaierror):
        return "the name did not resolve"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return " ".join(f"{type(exc).__name__}: {reason}".split())[:200]

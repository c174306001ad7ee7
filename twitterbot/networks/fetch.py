"""A picture fetched by URL for a post (a grammar's ``{img URL}``, an ``<image>`` inside its SVG),
held to the link cards' rules: http or https only, public addresses only unless the owner allows
their own network (LINK_CARDS_LOCAL=yes), every redirect checked the same way and connected to the
address that was checked (`addresses.connect`), at most `max_bytes`, at most `timeout` seconds::

    data = fetch_picture("https://example.com/cat.png", allow_local=False, max_bytes=5_000_000, timeout=10)

A failure is a `FetchError` that says why and what to do; `temporary` tells a server that may
answer later (a timeout, a 503) from a URL that will never give a picture (a private address, a
404, a web page).
"""

from __future__ import annotations

import http.client
import socket
import ssl
import time
from typing import Callable, Tuple
from urllib.parse import quote, urljoin, urlsplit

from .. import __version__
from .addresses import AddressRefused, Screen, connect, refusal

__all__ = ["MAX_REDIRECTS", "USER_AGENT", "FetchError", "fetch_picture"]

USER_AGENT = f"twitterbot/{__version__} (a Raspberry Pi posting bot, fetching a picture for a post)"
MAX_REDIRECTS = 3
_REDIRECTS = (301, 302, 303, 307, 308)
_CHUNK = 64 * 1024
_SAFE = "/%:@!$&'()*+,;=~"


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
    `timeout` seconds in all (each read waits at most what is left; only a name look-up that
    hangs can last longer). Every host, the URL's and each redirect's, must pass `screen` (the
    public internet) unless `allow_local`. FetchError otherwise."""
    deadline = clock() + timeout
    where = url
    for _ in range(MAX_REDIRECTS + 1):
        connection, response, sock = _get(
            where, allow_local=allow_local, screen=screen, left=_left(url, timeout, deadline, clock)
        )
        try:
            if response.status in _REDIRECTS:
                location = (response.getheader("Location") or "").strip()
                if not location:
                    raise FetchError(f"the picture at {url} redirects ({response.status}) without saying where")
                where = urljoin(where, location)
                continue
            if response.status != 200:
                raise FetchError(
                    f"the picture at {url} could not be fetched: the server answered {response.status} "
                    f"{response.reason}".rstrip()
                    + (": try again later" if response.status >= 500 or response.status == 429 else ": check the URL"),
                    temporary=response.status >= 500 or response.status == 429,
                )
            return _body(url, response, sock, max_bytes, lambda: _left(url, timeout, deadline, clock))
        finally:
            connection.close()
    raise FetchError(f"the picture at {url} redirects more than {MAX_REDIRECTS} times: link the picture itself")


def _get(
    url: str, *, allow_local: bool, screen: Screen, left: float
) -> Tuple[http.client.HTTPConnection, http.client.HTTPResponse, socket.socket]:
    """A GET of `url` sent, its answer's status and headers read, and the socket it is read from
    (http.client lets go of it when the server will close the connection)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FetchError(f"{url} is not an http or https URL: a picture is fetched from the web only")
    try:
        port = parts.port
    except ValueError:
        raise FetchError(f"{url} has a port that is not a number: check the URL") from None
    try:
        connection = connect(parts.scheme, parts.hostname, port, screen=None if allow_local else screen, timeout=left)
    except AddressRefused as exc:
        raise FetchError(
            f"{exc}: pictures are fetched only from the public internet (LINK_CARDS_LOCAL=yes allows your own network)"
        ) from None
    except OSError as exc:
        raise FetchError(
            f"{parts.hostname} could not be found ({_describe(exc)}): check the URL", temporary=True
        ) from None
    target = quote(parts.path or "/", safe=_SAFE) + ("?" + quote(parts.query, safe=_SAFE + "?") if parts.query else "")
    try:
        connection.request(
            "GET", target, headers={"User-Agent": USER_AGENT, "Accept": "image/*", "Accept-Encoding": "identity"}
        )
        sock = connection.sock
        return connection, connection.getresponse(), sock
    except (OSError, http.client.HTTPException) as exc:
        connection.close()
        raise FetchError(f"the picture at {url} could not be fetched ({_describe(exc)})", temporary=True) from None


def _body(
    url: str,
    response: http.client.HTTPResponse,
    sock: socket.socket,
    max_bytes: int,
    left: Callable[[], float],
) -> bytes:
    """The answer's body, if it is a picture within `max_bytes`."""
    kind = (response.getheader("Content-Type") or "").split(";", 1)[0].strip().lower()
    if kind and not (kind.startswith("image/") or kind == "application/octet-stream"):
        raise FetchError(f"{url} is not a picture (the server says {kind}): link the picture itself")
    try:
        declared = int(response.getheader("Content-Length") or "-1")
    except ValueError:
        declared = -1
    if declared > max_bytes:
        raise FetchError(f"the picture at {url} is {declared:,} bytes, over {max_bytes:,}: link a smaller one")
    data = bytearray()
    try:
        # The response closes its connection once it has read the whole body (Python 3.13 does so
        # within the read that ends it): no socket is touched after that.
        while not response.isclosed():
            sock.settimeout(left())  # each read waits at most what is left of the time
            chunk = response.read1(_CHUNK)
            if not chunk:
                break
            data += chunk
            if len(data) > max_bytes:
                raise FetchError(f"the picture at {url} is over {max_bytes:,} bytes: link a smaller one")
    except (OSError, http.client.HTTPException) as exc:
        raise FetchError(f"the picture at {url} could not be read ({_describe(exc)})", temporary=True) from None
    if not data:
        raise FetchError(f"the picture at {url} is empty: check the URL")
    return bytes(data)


def _left(url: str, timeout: float, deadline: float, clock: Callable[[], float]) -> float:
    """The seconds left, or FetchError when the time is up."""
    left = deadline - clock()
    if left <= 0:
        raise FetchError(f"the picture at {url} took over {timeout:g} s: try again later", temporary=True)
    return left


def _describe(exc: BaseException) -> str:
    if isinstance(exc, socket.timeout):
        return "timed out"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return "its certificate is not trusted"
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text != type(exc).__name__ else text

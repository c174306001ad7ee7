"""Reading a network's answers through its client library, and what a failed HTTP request says
about a post.

The reads the bot makes itself go through the one bounded request (`request.py`). What a client
library sends (a post, an upload, a login) is bounded here: requests (under tweepy and Mastodon.py)
through `BoundedAdapter`, whose every read waits only what is left of the request's timeout (the
status line, the headers and the body in all, as `request.py` reads them), httpx (under the atproto
SDK) through `httpx_hooks`. Each reads the body in pieces and stops at `MAX_ANSWER_BYTES` with
`AnswerTooLarge`, so a hostile or broken server cannot make the bot hold a huge answer in memory (a
page of 100 posts is well under a megabyte)::

    session.mount("https://", BoundedAdapter(timeout=20))
    httpx.Client(event_hooks=httpx_hooks())

A failed request (requests and urllib3, or httpx) says one of three things about a post: no
connection was made, so the post certainly does not exist and a retry is safe; the request left
and no answer came (or none that could be read), so the post may exist. Each network words its
own advice."""

from __future__ import annotations

import http.client
import ssl
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from ..errors import ErrorKind, PostError
from .answers import BROKE, MAX_ANSWER_BYTES, no_answer, request_failure, size_in_words, unreadable
from .request import Deadline, RequestError, reading_within

if TYPE_CHECKING:
    import httpx

__all__ = [
    "AnswerTooLarge",
    "BoundedAdapter",
    "bounded_session",
    "httpx_error",
    "httpx_hooks",
    "httpx_transport",
    "network_error",
    "never_connected",
]


# Read in pieces this big: a compressed answer is counted as it is unpacked, so even one piece
# unpacked at its worst (about 1,000 to 1) stays far below the process's memory.
_PIECE = 16 * 1024


class AnswerTooLarge(requests.RequestException):
    """An answer longer than the bound: the bot stopped reading it and closed the connection. A
    RequestException, so whatever meets requests' failures (the X poster, Mastodon.py) meets it as
    it meets a broken connection; httpx's clients pass it through as it is."""

    def __init__(self, url: str, limit: int) -> None:
        super().__init__(f"the answer from {url} is over {limit:,} bytes")
        self.url = url
        self.limit = limit


class _Sending(threading.local):
    """The deadline of the request this thread is sending through a `BoundedAdapter`, if any."""

    deadline: Optional[Deadline] = None


_SENDING = _Sending()


def _within_deadline(connection: http.client.HTTPConnection) -> None:
    """Read `connection`'s next answer within the deadline of the request being sent, if any:
    each read of the status line, the headers and the body waits only what is left of it."""
    deadline = _SENDING.deadline
    if deadline is not None:
        connection.response_class = reading_within(deadline)
    else:  # a kept-alive connection: the class's own again
        connection.__dict__.pop("response_class", None)


class _Connection(HTTPConnection):
    def getresponse(self) -> Any:
        _within_deadline(self)
        return super().getresponse()


class _TLSConnection(HTTPSConnection):
    def getresponse(self) -> Any:
        _within_deadline(self)
        return super().getresponse()


class _Pool(HTTPConnectionPool):
    ConnectionCls = _Connection


class _TLSPool(HTTPSConnectionPool):
    ConnectionCls = _TLSConnection


class BoundedAdapter(HTTPAdapter):
    """requests' adapter, reading every answer within `max_bytes` and within the request's timeout
    in all (`timeout`, when set, unless the caller gave one): a server that sends its headers or
    its body a byte at a time is cut off then. Never lets urllib3 send a request again on its own:
    a retry is each poster's decision."""

    def __init__(self, *, timeout: Optional[float] = None, max_bytes: int = MAX_ANSWER_BYTES) -> None:
        super().__init__(max_retries=0)
        self.timeout = timeout
        self.max_bytes = max_bytes

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _Pool, "https": _TLSPool}

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        if self.timeout is not None:
            kwargs["timeout"] = kwargs.get("timeout") or self.timeout
        kwargs["stream"] = True  # read here, in pieces, whatever the caller asked
        _SENDING.deadline = _deadline(kwargs.get("timeout"))
        try:
            response = super().send(request, **kwargs)
            _read_within(response, self.max_bytes)
        finally:
            _SENDING.deadline = None
        return response


def _deadline(timeout: Any) -> Optional[Deadline]:
    """The deadline of a request given requests' `timeout` (seconds, or (connect, read)): the
    longer of the two, from now, for the whole answer."""
    if isinstance(timeout, tuple):
        timeout = max((each for each in timeout if each is not None), default=None)
    return Deadline(float(timeout)) if isinstance(timeout, (int, float)) and timeout > 0 else None


def bounded_session(timeout: Optional[float] = None) -> requests.Session:
    """A requests session whose answers are read within `MAX_ANSWER_BYTES` (for Mastodon.py)."""
    session = requests.Session()
    adapter = BoundedAdapter(timeout=timeout)
    for scheme in ("http://", "https://"):
        session.mount(scheme, adapter)
    return session


def _read_within(response: requests.Response, limit: int) -> None:
    """Read `response`'s body (unpacked) into it, or raise AnswerTooLarge past `limit` bytes."""
    # What requests' own `content` would hold had it read the body; it reads no further.
    response._content = _gather(response, response.iter_content, _where(response.url), limit)


def httpx_transport(timeout: float) -> Any:
    """An httpx transport (for the atproto SDK's client) whose every read waits only what is left
    of `timeout` from the request's start: the status line, the headers and the body (read by
    `httpx_hooks`) in all, so a server that sends them a byte at a time is cut off then."""
    import httpcore
    import httpx

    class _Stream(httpcore.NetworkStream):
        def __init__(self, inner: httpcore.NetworkStream) -> None:
            self._inner = inner

        def read(self, max_bytes: int, timeout: Optional[float] = None) -> bytes:
            deadline = _SENDING.deadline
            if deadline is not None:
                try:
                    left = deadline.left()
                except OSError:
                    raise httpcore.ReadTimeout("timed out") from None
                timeout = left if timeout is None else min(timeout, left)
            return self._inner.read(max_bytes, timeout)

        def write(self, buffer: bytes, timeout: Optional[float] = None) -> None:
            self._inner.write(buffer, timeout)

        def close(self) -> None:
            self._inner.close()

        def start_tls(self, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
            return _Stream(self._inner.start_tls(*args, **kwargs))

        def get_extra_info(self, info: str) -> Any:
            return self._inner.get_extra_info(info)

    class _Backend(httpcore.SyncBackend):
        def connect_tcp(self, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
            return _Stream(super().connect_tcp(*args, **kwargs))

    class _Transport(httpx.HTTPTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            # Left set for the body, which the hooks read once this returns; the next request's
            # own deadline replaces it.
            _SENDING.deadline = Deadline(timeout)
            return super().handle_request(request)

    transport = _Transport(retries=0)
    # httpcore takes a network backend, httpx does not pass one on: given to its pool here, before
    # any connection is made (httpx and httpcore are pinned in requirements.txt; a test holds it).
    transport._pool._network_backend = _Backend()
    return transport


def httpx_hooks(max_bytes: int = MAX_ANSWER_BYTES) -> Dict[str, List[Callable[[Any], None]]]:
    """httpx's event hooks that read every answer within `max_bytes` before the client does."""

    def read_within(response: httpx.Response) -> None:
        # What httpx's own `read()` would keep; the client then reads no further.
        response._content = _gather(response, response.iter_bytes, _where(str(response.request.url)), max_bytes)

    return {"response": [read_within]}


def _gather(response: Any, pieces: Callable[[int], Iterator[bytes]], url: str, limit: int) -> bytes:
    """An answer's whole body (requests' or httpx's `response`, read with `pieces`, unpacked),
    refused before reading when its declared length passes `limit`, and the moment what was read
    does: the connection is closed and AnswerTooLarge raised."""
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > limit:
        response.close()
        raise AnswerTooLarge(url, limit)
    read: List[bytes] = []
    total = 0
    for piece in pieces(_PIECE):
        total += len(piece)
        if total > limit:
            response.close()
            raise AnswerTooLarge(url, limit)
        read.append(piece)
    return b"".join(read)


def _where(url: str) -> str:
    """An answer's address without its query (which may carry a cursor, never a key)."""
    return url.split("?", 1)[0]


def network_error(cause: Optional[BaseException], *, where: str, unreachable: str, slow: str) -> PostError:
    """A failure with no answer from `where`: "unreachable" when the request never left (advice
    `unreachable`), "timeout" (advice `slow`) or "network" when it was sent and no answer came (or
    one too large to read)."""
    if isinstance(cause, AnswerTooLarge):
        return _too_large(cause, where)
    if isinstance(cause, RequestError):
        return request_failure(cause, where=where, unreachable=unreachable, slow=slow)
    if cause is not None and never_connected(cause):
        return no_answer(f"could not reach {where} ({_connect_failure(cause)})", unreachable, ErrorKind.UNREACHABLE)
    if isinstance(cause, requests.Timeout):
        what = f"{where} did not answer in time (timed out after the request was sent)"
        return no_answer(what, slow, ErrorKind.TIMEOUT)
    return no_answer(
        f"the connection to {where} broke after the request was sent ({_innermost(cause)})", BROKE, ErrorKind.NETWORK
    )


def httpx_error(cause: BaseException, *, where: str, unreachable: str, slow: str) -> PostError:
    """`network_error` for httpx (the atproto SDK's client), whose exceptions say the same plainly."""
    import httpx

    if isinstance(cause, AnswerTooLarge):
        return _too_large(cause, where)
    if isinstance(cause, httpx.DecodingError):
        return unreadable(where, f"{type(cause).__name__}: {cause}")
    if isinstance(cause, (httpx.ConnectError, httpx.ConnectTimeout)):
        return no_answer(
            f"could not reach {where} ({type(cause).__name__}: {cause})", unreachable, ErrorKind.UNREACHABLE
        )
    if isinstance(cause, httpx.TimeoutException):
        return no_answer(f"{where} did not answer in time (after the request was sent)", slow, ErrorKind.TIMEOUT)
    what = f"the connection to {where} broke after the request was sent ({type(cause).__name__})"
    return no_answer(what, BROKE, ErrorKind.NETWORK)


def _too_large(cause: AnswerTooLarge, where: str) -> PostError:
    """An answer past the bound: sent, and no answer the bot would read."""
    what = f"{where} answered with more than {size_in_words(cause.limit)}, more than the bot reads"
    return no_answer(
        f"{what} ({cause.url})",
        "a proxy in between may be mangling answers, or the server misbehaving; the next run tries again",
        ErrorKind.NETWORK,
    )


def never_connected(cause: BaseException) -> bool:
    """True only when the request certainly never reached the server: the connection was refused,
    the name did not resolve, connecting timed out, or the server's certificate was refused."""
    if isinstance(cause, requests.ConnectTimeout):
        return True
    reason = cause.args[0] if cause.args else None
    reason = getattr(reason, "reason", reason)  # urllib3's MaxRetryError carries the cause
    if isinstance(reason, urllib3.exceptions.ProxyError):
        reason = reason.original_error
    if isinstance(reason, urllib3.exceptions.SSLError):
        return isinstance(reason.args[0] if reason.args else None, ssl.SSLCertVerificationError)
    return isinstance(reason, (urllib3.exceptions.ConnectTimeoutError, urllib3.exceptions.NewConnectionError))


def _connect_failure(cause: BaseException) -> str:
    """Why no connection was made, in words."""
    if isinstance(cause, requests.ConnectTimeout):
        return "connection timed out"
    text = str(cause)
    if "NameResolutionError" in text or "Failed to resolve" in text or "Name or service not known" in text:
        return "the name did not resolve"
    if "refused" in text.lower():
        return "connection refused"
    if isinstance(cause, requests.exceptions.SSLError):
        return "its certificate was not trusted"
    return _innermost(cause)


def _innermost(exc: Optional[BaseException]) -> str:
    """The name of the underlying error (e.g. RemoteDisconnected), without the libraries' wrapping."""
    if exc is None:
        return "no reason given"
    for _ in range(10):  # the chain is short; the bound only guards against a cycle
        reason = getattr(exc, "reason", None)
        inner = reason if isinstance(reason, BaseException) else None
        inner = inner or next((arg for arg in exc.args if isinstance(arg, BaseException)), None)
        if inner is None:
            break
        exc = inner
    return type(exc).__name__

"""What a failed HTTP request (requests and urllib3 under tweepy and Mastodon.py, httpx under the
atproto SDK) says about a post: no connection was made, so the post certainly does not exist and a retry is safe; or the
request left and no answer came, so the post may exist. Each network words its own advice."""

from __future__ import annotations

import ssl
from typing import Optional

import requests
import urllib3

from ..errors import ErrorKind, ExitStatus, PostError

__all__ = ["httpx_error", "network_error", "never_connected"]


def network_error(cause: Optional[BaseException], *, where: str, unreachable: str, slow: str) -> PostError:
    """A failure with no answer from `where`: "unreachable" when the request never left (advice
    `unreachable`), "timeout" (advice `slow`) or "network" when it was sent and no answer came."""
    if cause is not None and never_connected(cause):
        return _no_answer(f"could not reach {where} ({_connect_failure(cause)})", unreachable, ErrorKind.UNREACHABLE)
    if isinstance(cause, requests.Timeout):
        what = f"{where} did not answer in time (read timed out after the request was sent)"
        return _no_answer(what, slow, ErrorKind.TIMEOUT)
    return _no_answer(
        f"the connection to {where} broke after the request was sent ({_innermost(cause)})", _BROKE, ErrorKind.NETWORK
    )


def httpx_error(cause: BaseException, *, where: str, unreachable: str, slow: str) -> PostError:
    """`network_error` for httpx (the atproto SDK's client), whose exceptions say the same plainly."""
    import httpx

    if isinstance(cause, (httpx.ConnectError, httpx.ConnectTimeout)):
        return _no_answer(
            f"could not reach {where} ({type(cause).__name__}: {cause})", unreachable, ErrorKind.UNREACHABLE
        )
    if isinstance(cause, httpx.TimeoutException):
        return _no_answer(f"{where} did not answer in time (after the request was sent)", slow, ErrorKind.TIMEOUT)
    what = f"the connection to {where} broke after the request was sent ({type(cause).__name__})"
    return _no_answer(what, _BROKE, ErrorKind.NETWORK)


_BROKE = "check the network connection, or a proxy in between"


def _no_answer(what: str, advice: str, kind: ErrorKind) -> PostError:
    """One temporary failure: the next run tries again, whatever the client library said."""
    return PostError(f"{what}: {advice}", kind=kind, exit_status=ExitStatus.TEMPORARY_FAILURE, summary=what)


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

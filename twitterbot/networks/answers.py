"""What an answer the bot reads says, and what a failed read says about a post: pure, with no
HTTP client imported, so a reader (a round of replies, a look-up) that meets no failure imports
none (`http.py` holds what the client libraries need)::

    json_object(answer, "X", "the mentions read")     # the answer's JSON object, or `unreadable`
    request_failure(error, where="X", unreachable="...", slow="...")   # a RequestError in words
"""

from __future__ import annotations

from typing import Any, Dict

from ..errors import ErrorKind, ExitStatus, PostError
from .request import Failure, RequestError

__all__ = ["BROKE", "MAX_ANSWER_BYTES", "json_object", "no_answer", "request_failure", "size_in_words", "unreadable"]

# The most of one answer the bot reads. The largest it asks for (a page of 100 posts with their
# links) is well under 1 MB; an instance's or a PDS's answers are smaller still.
MAX_ANSWER_BYTES = 8 * 1024 * 1024
BROKE = "check the network connection, or a proxy in between"


def json_object(response: Any, where: str, what: str) -> Dict[str, Any]:
    """The answer's JSON object (`what` names the request in the error), or `unreadable`: not
    JSON, nested deeper than the decoder goes, or JSON that is not an object."""
    try:
        answer = response.json()
    except (ValueError, RecursionError):
        raise unreadable(where, f"{what} answered {response.status_code} with no JSON") from None
    if not isinstance(answer, dict):
        raise unreadable(where, f"{what} answered with JSON that is not an object")
    return answer


def unreadable(where: str, what: str, advice: str = "the next run tries again") -> PostError:
    """An answer came that the bot cannot read (not JSON, not the shape the API documents): the
    request was sent, so a post may have been made; a look-up cannot tell."""
    said = f"{where}'s answer could not be read ({what})"
    return PostError(
        f"{said}: a proxy in between may be mangling it, or the server misbehaving; {advice}",
        kind=ErrorKind.NETWORK,
        exit_status=ExitStatus.TEMPORARY_FAILURE,
        summary=said,
    )


def request_failure(cause: RequestError, *, where: str, unreachable: str, slow: str) -> PostError:
    """`network_error` for the one bounded request (`request.py`), which says plainly what happened."""
    if not cause.sent:
        return no_answer(f"could not reach {where} ({cause})", unreachable, ErrorKind.UNREACHABLE)
    if cause.failure is Failure.TIMEOUT:
        return no_answer(
            f"{where} did not answer in time (timed out after the request was sent)", slow, ErrorKind.TIMEOUT
        )
    if cause.failure is Failure.TOO_LARGE:
        return no_answer(
            f"{where} answered with more than {size_in_words(cause.limit)}, more than the bot reads",
            "a proxy in between may be mangling answers, or the server misbehaving; the next run tries again",
            ErrorKind.NETWORK,
        )
    return no_answer(f"the connection to {where} broke after the request was sent ({cause})", BROKE, ErrorKind.NETWORK)


def size_in_words(limit: int) -> str:
    """A bound in words: "8 MB"."""
    return f"{limit // (1024 * 1024)} MB" if limit >= 1024 * 1024 else f"{limit:,} bytes"


def no_answer(what: str, advice: str, kind: ErrorKind) -> PostError:
    """One temporary failure: the next run tries again, whatever the client library said."""
    return PostError(f"{what}: {advice}", kind=kind, exit_status=ExitStatus.TEMPORARY_FAILURE, summary=what)

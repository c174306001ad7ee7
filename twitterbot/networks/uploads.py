"""What every network's picture upload shares: fitting pictures to a network, retrying an upload,
and the errors of a picture that could not be uploaded.

An upload is not a post: nothing appears on the account until the post that names the upload is
made, and an upload the post never names is dropped by the network. So an upload is retried on
any failure that may pass (no connection, no answer, a server error), and a picture that cannot
be uploaded is a certain failure of the post: nothing was posted, the next run may try again.
The post itself keeps its network's at-most-once rules. Each network's upload is in its own
package's `media.py`, called by its poster before it sends the post::

    prepared = fit_pictures(images, limits)          # PostError for a picture that cannot fit
    media = retried(policy, upload, what=f"upload {image.name}")
"""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, TypeVar, Union

from ..errors import ErrorKind, ExitStatus, PostError
from ..pictures.limits import ImageLimits
from ..pictures.prepare import Attachment, PictureError, PreparedImage, alone
from .retry import Backoff

__all__ = [
    "PROCESSING_SECONDS",
    "fit_pictures",
    "processing_failed",
    "refused",
    "retried",
    "upload_failed",
    "wait_processed",
]

# How long a network may take to process an uploaded video (X's STATUS, Mastodon's 206s) before the
# post is given up for this run: nothing was posted, the next run uploads it again.
PROCESSING_SECONDS = 300.0
_MOST_BETWEEN = 10.0  # seconds between two questions at most (X may say when to ask again)

T = TypeVar("T")


def retried(policy: Backoff, step: Callable[[], T], *, what: str) -> T:
    """`step()`, tried again (the network's `policy`: API_RETRIES, with backoff) after a failure
    that may pass; `what` names the step in the log ("upload photos/a.jpg")."""
    error: Optional[PostError] = None
    for attempt in policy.attempts():
        if attempt:
            assert error is not None
            policy.wait(attempt, error, how=f"to {what}")
        try:
            return step()
        except PostError as exc:
            if not _may_pass(exc):
                raise
            error = exc
    assert error is not None
    raise error


def fit_pictures(images: Sequence[Union[Attachment, PreparedImage]], limits: ImageLimits) -> List[PreparedImage]:
    """Each picture fitted to `limits` (one prepared already, before its attempt was recorded,
    is taken as it is); a picture that cannot be is a certain failure of the post (a data error:
    the user's file must change)."""
    try:
        return alone([image if isinstance(image, PreparedImage) else image.prepare(limits) for image in images], limits)
    except PictureError as exc:
        raise PostError(
            f"{exc} (nothing was posted)", kind=ErrorKind.PICTURE, exit_status=ExitStatus.DATA_ERROR
        ) from None


def upload_failed(where: str, number: int, image: PreparedImage, error: PostError) -> PostError:
    """A picture that could not be uploaded: nothing was posted. The same exit status as the
    failure (a refusal needs the user, a network or server problem the next run)."""
    temporary = error.exit_status == ExitStatus.TEMPORARY_FAILURE
    advice = "the next run tries again" if temporary else "fix the picture or the account, then run again"
    what = f"picture {number} ({image.name}) could not be uploaded to {where}: {error.summary}"
    return PostError(
        f"{what}; nothing was posted: {advice}", kind=ErrorKind.UPLOAD, exit_status=error.exit_status, summary=what
    )


def refused(where: str, number: int, image: PreparedImage, status: int, said: str) -> PostError:
    """The network refused a picture (too big, a type it does not take): the file must change."""
    what = f"{where} refused picture {number} ({image.name}, {image.describe()}): {status} {said}"
    return PostError(
        f"{what}; nothing was posted: use a smaller picture or another format",
        kind=ErrorKind.PICTURE,
        exit_status=ExitStatus.DATA_ERROR,
        summary=what,
    )


def wait_processed(
    policy: Backoff, ask: Callable[[], Optional[float]], where: str, number: int, image: PreparedImage
) -> None:
    """Ask `ask()` until the network has processed an uploaded video: it returns None once done,
    else the seconds to wait before asking again (X says; Mastodon does not: 1, 2, 4 ... 10 s), and
    raises a PostError when processing failed (`processing_failed`). Each question is retried like
    an upload; the video itself is never uploaded again. After PROCESSING_SECONDS: a temporary
    failure (exit 75), nothing posted."""
    waited, delay = 0.0, 1.0
    while True:
        after = retried(policy, ask, what=f"ask {where} about {image.name}")
        if after is None:
            return
        if waited >= PROCESSING_SECONDS:
            what = f"{where} was still processing video {number} ({image.name}) after {waited:.0f} s"
            raise PostError(
                f"{what}; nothing was posted: the next run tries again",
                kind=ErrorKind.UPLOAD,
                exit_status=ExitStatus.TEMPORARY_FAILURE,
                summary=what,
            )
        pause = min(max(after, delay, 0.5), _MOST_BETWEEN)
        policy.sleep(pause)
        waited += pause
        delay = min(delay * 2, _MOST_BETWEEN)


def processing_failed(where: str, number: int, image: PreparedImage, said: str) -> PostError:
    """The network could not process an uploaded video: the file must change (exit 65)."""
    what = f"{where} could not process video {number} ({image.name}, {image.describe()}): {said}"
    return PostError(
        f"{what}; nothing was posted: export the video again (H.264 MP4) or use another",
        kind=ErrorKind.PICTURE,
        exit_status=ExitStatus.DATA_ERROR,
        summary=what,
    )


def _may_pass(error: PostError) -> bool:
    """An upload failure worth trying again: no connection, no answer or a server error (an
    upload made twice is harmless: only the one the post names is shown)."""
    return error.kind in (ErrorKind.UNREACHABLE, ErrorKind.TIMEOUT, ErrorKind.NETWORK, ErrorKind.SERVER_ERROR)

"""A Bluesky video sent through a video service, as Bluesky's docs recommend for the accounts it
hosts, rather than straight to the account's PDS (`media.py`, which every PDS takes). The service
(Bluesky's own is video.bsky.app) processes the video before the post is made, so the post never
shows a missing video, and stores the result in the account's PDS itself::

    1. getServiceAuth (PDS) for the service's did:web, app.bsky.video.getUploadLimits, 60 s
       getUploadLimits (service): may this account upload a video of this size today?
    2. getServiceAuth (PDS) for the PDS's own DID, com.atproto.repo.uploadBlob, 30 minutes
       uploadVideo?did=&name= (service): the MP4's bytes; a job, with its blob once processed
    3. getJobStatus?jobId= (service), asked with pauses, until the job names its blob (a video the
       service already processed is named at once, "already_exists") or it failed

    blob = upload_through(client, service, video, number=1, timeout=20, policy=Backoff(2), call=call)

The service hands the PDS the token of step 2, and the PDS checks it (its DID, the method, the
account's signing key): a token for anything else is refused there. The video is uploaded once:
an upload retried after a lost answer is the same bytes, which the service knows already.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Tuple
from urllib.parse import urlsplit

from ...errors import ErrorKind, ExitStatus, PostError
from ...settings.secrets import scrub_also
from ..uploads import processing_failed, retried, wait_processed

if TYPE_CHECKING:
    from ...pictures.prepare import PreparedImage
    from ..retry import Backoff

__all__ = ["BLUESKY_VIDEO", "account_of", "service_did", "upload_through", "video_service_for"]

BLUESKY_VIDEO = "https://video.bsky.app"  # Bluesky's own video service, for the accounts it hosts
LIMITS_TOKEN_SECONDS = 60  # the life of the token that asks the limits
UPLOAD_TOKEN_SECONDS = 30 * 60  # and of the upload's, as Bluesky's docs advise: the service may queue it
_FAILED, _DONE = "JOB_STATE_FAILED", "JOB_STATE_COMPLETED"
WHERE = "Bluesky's video service"

# Runs one SDK step against a server (its base URL, for the message), its errors made PostErrors.
Call = Callable[..., Any]


def video_service_for(setting: str, pds: str) -> Optional[str]:
    """The video service a video goes through (BLUESKY_VIDEO_SERVICE): None, straight to the PDS,
    for "none", and for "auto" on a PDS Bluesky does not host (a self-hosted one); Bluesky's own
    for "auto" on one it does (bsky.social and its *.host.bsky.network PDSes); else the URL set."""
    if setting == "none":
        return None
    if setting != "auto":
        return setting
    host = (urlsplit(pds).hostname or "").lower()
    return BLUESKY_VIDEO if host == "bsky.social" or host.endswith(".bsky.network") else None


def service_did(url: str) -> str:
    """The did:web a service at `url` answers to (its host, a port written %3A, as did:web says)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    return f"did:web:{host}%3A{parts.port}" if parts.port else f"did:web:{host}"


def upload_through(
    client: Any, service: str, video: PreparedImage, *, number: int, timeout: float, policy: Backoff, call: Call
) -> Any:
    """`video` (number `number` of its post) uploaded through the video service at `service` and
    processed there: the blob the service stored in the account's PDS, for an
    ``app.bsky.embed.video``. `client` is the PDS's, logged in; `call(where, step, *args)` runs a
    step. Raises a PostError: the limits say no (75 when today's are used up), the processing failed
    (65), or it did not end in `uploads.PROCESSING_SECONDS` (75). Nothing is posted by any of it."""
    from atproto_client import Client
    from atproto_client.models.dot_dict import DotDict

    from .session import sdk_request

    did, pds = account_of(client)
    videos = Client(base_url=service, request=sdk_request(timeout))
    _within_limits(client, pds, videos, service, video, number=number, call=call)
    audience = call(pds, lambda: client.com.atproto.server.describe_server().did)
    token = _token(client, pds, audience, "com.atproto.repo.uploadBlob", UPLOAD_TOKEN_SECONDS, call)

    # The lexicon gives uploadVideo no parameters; the service reads the account and the name from
    # the query all the same (Bluesky's docs): a DotDict is what the SDK sends as a query as it is.
    query = DotDict({"did": did, "name": video.name})

    def send() -> Any:
        return videos.app.bsky.video.upload_video(video.data, params=query, headers=_bearer(token)).job_status

    job = retried(policy, lambda: _as_service(call, service, send), what=f"upload {video.name} to {WHERE}")
    found: Dict[str, Any] = {"blob": job.blob}
    if found["blob"] is None and job.state == _FAILED:
        raise processing_failed(WHERE, number, video, _said(job))

    def ask() -> Optional[float]:
        status = _as_service(call, service, lambda: videos.app.bsky.video.get_job_status({"job_id": job.job_id}))
        state = status.job_status
        if state.blob is not None:  # done, or processed before ("already_exists"): its blob either way
            found["blob"] = state.blob
            return None
        if state.state in (_FAILED, _DONE):
            raise processing_failed(WHERE, number, video, _said(state))
        return 1.0

    if found["blob"] is None:
        wait_processed(policy, ask, WHERE, number, video)
    return found["blob"]


def _within_limits(
    client: Any, pds: str, videos: Any, service: str, video: PreparedImage, *, number: int, call: Call
) -> None:
    """Ask the service whether the account may upload this video now; a PostError if not."""
    token = _token(client, pds, service_did(service), "app.bsky.video.getUploadLimits", LIMITS_TOKEN_SECONDS, call)
    limits = _as_service(call, service, lambda: videos.app.bsky.video.get_upload_limits(headers=_bearer(token)))
    size = len(video.data)
    videos_left, bytes_left = limits.remaining_daily_videos, limits.remaining_daily_bytes
    used_up = videos_left == 0 or (bytes_left is not None and bytes_left < size)
    if limits.can_upload and not used_up:
        return
    said = limits.message or limits.error or "it may not upload a video now"
    what = f"{WHERE} ({service}) takes no video {number} ({video.name}, {size:,} bytes) from this account now: {said}"
    if used_up:
        left = f"{videos_left if videos_left is not None else 'some'} videos and "
        left += f"{bytes_left:,} bytes" if bytes_left is not None else "some bytes"
        raise PostError(
            f"{what} ({left} left today); nothing was posted to Bluesky: the next runs send it there once the "
            "day's limit allows (within 24 hours)",
            kind=ErrorKind.RATE_LIMITED,
            exit_status=ExitStatus.TEMPORARY_FAILURE,
            summary=what,
        )
    raise PostError(
        f"{what}; nothing was posted to Bluesky: Bluesky takes videos from accounts whose email is verified "
        "(Settings > Account in the app), or set BLUESKY_VIDEO_SERVICE=none to send videos straight to the PDS",
        kind=ErrorKind.FORBIDDEN,
        exit_status=ExitStatus.PERMISSION_DENIED,
        summary=what,
    )


def _token(client: Any, pds: str, audience: str, method: str, seconds: int, call: Call) -> str:
    """A service token from the account's PDS: for `audience` (a DID), `method` alone, `seconds` long."""
    expires = int(time.time()) + seconds
    asked = {"aud": audience, "lxm": method, "exp": expires}
    token = str(call(pds, lambda: client.com.atproto.server.get_service_auth(asked).token))
    scrub_also([token])  # a key to the account's uploads for a while: never in a log
    return token


def _as_service(call: Call, service: str, step: Callable[[], Any]) -> Any:
    """A step against the video service: a token it refuses is the service's word, not the login's."""
    try:
        return call(service, step)
    except PostError as exc:
        if exc.kind != ErrorKind.UNAUTHORIZED:
            raise
        raise PostError(
            f"{WHERE} ({service}) refused the token the account's PDS gave for it ({exc.summary or exc}): "
            "nothing was posted to Bluesky; check BLUESKY_VIDEO_SERVICE, or set it to none to send videos "
            "straight to the PDS",
            kind=ErrorKind.FORBIDDEN,
            exit_status=ExitStatus.PERMISSION_DENIED,
        ) from None


def account_of(client: Any) -> Tuple[str, str]:
    """The logged-in account's DID and its PDS's base URL (the SDK's exported session names both)."""
    from .session import session_of

    session = session_of(client.export_session_string())
    if session is None:  # the SDK always exports all five parts once logged in
        raise PostError("the atproto SDK gave no session to read the account's PDS from: report it")
    return session.did, session.pds


def _bearer(token: str) -> Dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _said(job: Any) -> str:
    return " ".join(str(part) for part in (job.error, job.message) if part) or str(job.state)

"""Pictures and videos on an X post: what one may be there, and their upload.

tweepy 4.17 has no v2 media upload (only v1.1's, which X retired), so `upload_to_x` makes the
v2 requests itself, signed with OAuth 1.0a by oauthlib (tweepy's own signer, `api.signer`) through
the poster's session (its timeout and base URL): ``POST /2/media/upload`` (multipart) and
``POST /2/media/metadata`` (alt text). A video goes through X's chunked upload:
``POST /2/media/upload/initialize`` (its type, bytes and ``tweet_video``), ``POST
/2/media/upload/{id}/append`` for each 4 MiB segment in order (``segment_index`` 0, 1, ...),
``POST /2/media/upload/{id}/finalize``, then ``GET /2/media/upload?command=STATUS&media_id={id}``
asked after the ``check_after_secs`` X gives until its ``processing_info.state`` is
``succeeded`` (or ``failed``: exit 65, nothing posted)::

    prepared = fit_pictures(images, image_limits())
    media_ids = upload_to_x(session, credentials, prepared, policy=Backoff(2), ...)
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Sequence

from ...errors import ErrorKind, ExitStatus, PostError
from ...pictures.limits import ImageLimits
from ..uploads import processing_failed, refused, retried, upload_failed, wait_processed

if TYPE_CHECKING:
    from ...pictures.prepare import PreparedImage
    from ..retry import Backoff
    from .api import Credentials

__all__ = ["CHUNK_BYTES", "X_METADATA_URL", "X_UPLOAD_URL", "image_limits", "upload_to_x"]

# tweepy signs for api.twitter.com; api.x.com serves the same API. The poster's adapter sends
# both to X_API_BASE_URL; the signature covers this URL, as X checks it.
X_UPLOAD_URL = "https://api.twitter.com/2/media/upload"
X_METADATA_URL = "https://api.twitter.com/2/media/metadata"
CHUNK_BYTES = 4 * 1024 * 1024  # one APPEND's segment (X takes up to 5 MB); 512 MiB is 128 of them


def image_limits() -> ImageLimits:
    """5 MB a picture (JPEG, PNG, GIF, WebP), alt text up to 1,000 characters; X shows at most
    4,096 pixels a side, so the bot sends no more. An animated GIF may be 15 MB, but only
    through the chunked upload: through the one-request upload the bot uses, 5 MB too. A video
    (MP4 or MOV, H.264 and AAC) goes through the chunked upload: up to 512 MB and 140 seconds
    (longer needs a paid account), at most 1920x1200 (or 1200x1900) pixels, alone on its post."""
    return ImageLimits(
        "x",
        5_000_000,
        4096 * 4096,
        4096,
        1000,
        animated_gif_bytes=5_000_000,
        title="X",
        video_bytes=512 * 1024 * 1024,
        video_seconds=140.0,
        video_side=1920,
        video_pixels=1920 * 1200,
    )


def upload_to_x(
    session: Any,
    credentials: Credentials,
    images: Sequence[PreparedImage],
    *,
    policy: Backoff,
    classify: Callable[[Any], PostError],
    network_error: Callable[[Exception], PostError],
) -> List[str]:
    """Upload each picture with its alt text through X's v2 media endpoints; returns the media
    ids for ``media.media_ids``. `classify` turns an X error reply into a PostError, as for a post."""
    import requests

    from .api import signer

    auth = signer(credentials)

    def call(number: int, image: PreparedImage, method: str = "POST", needs_id: bool = True, **request: Any) -> dict:
        """One signed request; X's `data` (with the media id, unless `needs_id` is False: an APPEND)."""
        try:
            response = session.request(method, auth=auth, **request)
        except requests.RequestException as exc:
            raise network_error(exc) from None
        if response.status_code in (400, 413, 415):
            raise refused("X", number, image, response.status_code, _said(response))
        if response.status_code >= 300:
            raise classify(response)
        if not needs_id:
            return {}
        try:
            data = response.json()["data"]
            if isinstance(data, dict) and isinstance(data.get("id"), (str, int)):
                return data
        except (ValueError, KeyError, TypeError, RecursionError):
            pass
        raise PostError(
            f"X answered the upload of {image.name} without its id: run with -v and report it if it persists",
            kind=ErrorKind.NETWORK,
            exit_status=ExitStatus.TEMPORARY_FAILURE,
        )

    ids: List[str] = []
    for number, image in enumerate(images, start=1):
        if image.is_video:
            try:
                media_id = _chunked(session, auth, number, image, policy=policy, call=call)
                if image.alt:
                    alt = {
                        "url": X_METADATA_URL,
                        "json": {"id": media_id, "metadata": {"alt_text": {"text": image.alt}}},
                    }
                    retried(policy, partial(call, number, image, **alt), what=f"describe {image.name}")
            except PostError as exc:
                raise exc if exc.kind == ErrorKind.PICTURE else upload_failed("X", number, image, exc) from None
            ids.append(media_id)
            continue
        category = "tweet_gif" if image.mime_type == "image/gif" else "tweet_image"
        upload = {
            "url": X_UPLOAD_URL,
            "files": {"media": (f"picture.{image.extension}", image.data, image.mime_type)},
            "data": {"media_category": category},
        }
        try:
            data = retried(policy, partial(call, number, image, **upload), what=f"upload {image.name}")
            media_id = str(data["id"])
            if image.alt:  # a grammar's picture may have none (CBDQ's had none)
                alt = {"url": X_METADATA_URL, "json": {"id": media_id, "metadata": {"alt_text": {"text": image.alt}}}}
                retried(policy, partial(call, number, image, **alt), what=f"describe {image.name}")
        except PostError as exc:
            raise exc if exc.kind == ErrorKind.PICTURE else upload_failed("X", number, image, exc) from None
        ids.append(media_id)
    return ids


def _chunked(session: Any, auth: Any, number: int, image: PreparedImage, *, policy: Backoff, call: Any) -> str:
    """The video uploaded in X's chunked steps; its media id once X has processed it. Each step is
    retried on its own (a segment is sent again under its own index, never the whole video)."""
    base = X_UPLOAD_URL
    start = {"media_type": image.mime_type, "total_bytes": len(image.data), "media_category": "tweet_video"}
    started = retried(
        policy, partial(call, number, image, url=f"{base}/initialize", json=start), what=f"start uploading {image.name}"
    )
    media_id = str(started["id"])
    for index, at in enumerate(range(0, len(image.data), CHUNK_BYTES)):
        segment = {
            "url": f"{base}/{media_id}/append",
            "files": {"media": ("segment", image.data[at : at + CHUNK_BYTES], "application/octet-stream")},
            "data": {"segment_index": str(index)},
        }
        retried(
            policy,
            partial(call, number, image, needs_id=False, **segment),
            what=f"upload part {index + 1} of {image.name}",
        )
    finished = retried(
        policy, partial(call, number, image, url=f"{base}/{media_id}/finalize"), what=f"finish uploading {image.name}"
    )
    info = finished.get("processing_info")

    def ask() -> Optional[float]:
        found = call(number, image, method="GET", url=base, params={"command": "STATUS", "media_id": media_id})
        return _state(found.get("processing_info"), number, image)

    if info is not None and _state(info, number, image) is not None:
        wait_processed(policy, ask, "X", number, image)
    return media_id


def _state(info: Any, number: int, image: PreparedImage) -> Optional[float]:
    """None once X has processed the video, else the seconds X says to wait before asking again;
    PostError (exit 65) when it says processing failed."""
    if not isinstance(info, dict):
        return None  # no processing_info: ready at once
    state = info.get("state")
    if state == "succeeded":
        return None
    if state == "failed":
        error = info.get("error") if isinstance(info.get("error"), dict) else {}
        said = ": ".join(str(part) for part in (error.get("name"), error.get("message")) if part) or "failed"
        raise processing_failed("X", number, image, said)
    after = info.get("check_after_secs")
    return float(after) if isinstance(after, (int, float)) and not isinstance(after, bool) else 1.0


def _said(response: Any) -> str:
    """What X said of a refused picture, whatever its answer's shape."""
    try:
        body = response.json()
    except (ValueError, RecursionError):
        return response.reason or ""
    if not isinstance(body, dict):
        return response.reason or ""
    errors = body.get("errors")
    messages = (
        [str(error.get("message", "")) for error in errors or () if isinstance(error, dict)]
        if isinstance(errors, list)
        else []
    )
    return "; ".join(message for message in messages if message) or str(body.get("detail") or response.reason)

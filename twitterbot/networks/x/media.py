"""Pictures on an X post: what one may be there, and their upload.

tweepy 4.17 has no v2 media upload (only v1.1's, which X retired), so `upload_to_x` makes the two
v2 requests itself, signed with OAuth 1.0a by oauthlib (tweepy's own signer, `api.signer`) through
the poster's session (its timeout and base URL): ``POST /2/media/upload`` (multipart) and
``POST /2/media/metadata`` (alt text)::

    prepared = fit_pictures(images, image_limits())
    media_ids = upload_to_x(session, credentials, prepared, policy=Backoff(2), ...)
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, Callable, List, Sequence

from ...errors import ErrorKind, ExitStatus, PostError
from ...pictures.limits import ImageLimits
from ..uploads import refused, retried, upload_failed

if TYPE_CHECKING:
    from ...pictures.prepare import PreparedImage
    from ..retry import Backoff
    from .api import Credentials

__all__ = ["X_METADATA_URL", "X_UPLOAD_URL", "image_limits", "upload_to_x"]

# tweepy signs for api.twitter.com; api.x.com serves the same API. The poster's adapter sends
# both to X_API_BASE_URL; the signature covers this URL, as X checks it.
X_UPLOAD_URL = "https://api.twitter.com/2/media/upload"
X_METADATA_URL = "https://api.twitter.com/2/media/metadata"


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

    def call(number: int, image: PreparedImage, **request: Any) -> dict:
        try:
            response = session.post(auth=auth, **request)
        except requests.RequestException as exc:
            raise network_error(exc) from None
        if response.status_code in (400, 413, 415):
            raise refused("X", number, image, response.status_code, _said(response))
        if response.status_code >= 300:
            raise classify(response)
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

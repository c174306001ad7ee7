"""Pictures and videos on a Bluesky post: what one may be there, and their upload, before the post
is sent: the atproto SDK's ``upload_blob`` to the account's own PDS (which every PDS takes, a
self-hosted one too; the PDS hands the blob to the AppView's video processing when the post is
seen), or for a video, where the account's host has one, its video service (videoservice.py);
then an ``app.bsky.embed.images`` embed with ``alt`` and ``aspectRatio``, or for a video (alone)
an ``app.bsky.embed.video`` embed with the same::

    prepared = fit_pictures(images, image_limits())
    embed = bluesky_embed(client, prepared, policy=Backoff(2), call=poster_call)
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

from ...errors import ErrorKind, PostError
from ...pictures.limits import ImageLimits
from ..uploads import refused, retried, upload_failed

if TYPE_CHECKING:
    from ...pictures.prepare import PreparedImage
    from ..retry import Backoff

__all__ = ["bluesky_embed", "image_limits"]


def image_limits() -> ImageLimits:
    """A blob of ``app.bsky.embed.images`` is at most 2,000,000 bytes (the lexicon since April
    2026); the official app caps alt text at 2,000 characters and pictures at 4,000 pixels,
    and shows no animated GIFs as pictures: an animated GIF goes as a video. A video
    (``app.bsky.embed.video``: an MP4 blob of at most 100,000,000 bytes, alt text of at most
    1,000 characters) may be 3 minutes long; the bot sends at most 1920 pixels a side."""
    return ImageLimits(
        "bluesky",
        2_000_000,
        4000 * 4000,
        4000,
        2000,
        title="Bluesky",
        video_bytes=100_000_000,
        video_seconds=180.0,
        video_side=1920,
        video_pixels=1920 * 1920,
        video_alt=1000,
    )


def bluesky_embed(
    client: Any,
    images: Sequence[PreparedImage],
    *,
    policy: Backoff,
    call: Callable[..., Any],
    through: Optional[Callable[[int, PreparedImage], Any]] = None,
) -> Any:
    """Upload each picture as a blob and return the ``app.bsky.embed.images`` embed naming them,
    with alt text and aspect ratio (without it the app crops the picture); a video's blob as an
    ``app.bsky.embed.video`` embed, with its alt text and aspect ratio. `call` runs an SDK
    step, turning its errors into PostErrors; `through(number, video)`, when given, sends a video
    through a video service (videoservice.py) and gives its blob, instead of ``upload_blob``."""
    from atproto_client import models
    from atproto_client.exceptions import AtProtocolError

    def upload(number: int, image: PreparedImage) -> Any:
        try:
            return client.upload_blob(image.data).blob
        except AtProtocolError as exc:  # the server's refusal of this picture, in its own words
            response = getattr(exc, "response", None)
            if response is not None and response.status_code in (400, 413, 415):
                content = response.content
                said = ": ".join(
                    str(part) for part in (getattr(content, "error", ""), getattr(content, "message", "")) if part
                )
                raise refused("Bluesky", number, image, response.status_code, said or "refused") from None
            raise

    embedded = []
    for number, image in enumerate(images, start=1):
        if image.is_video and through is not None:
            return _video_embed(models, through(number, image), image)
        try:
            blob = retried(policy, partial(call, upload, number, image), what=f"upload {image.name}")
        except PostError as exc:
            raise exc if exc.kind == ErrorKind.PICTURE else upload_failed("Bluesky", number, image, exc) from None
        if image.is_video:  # alone on its post (fit_pictures saw to it)
            return _video_embed(models, blob, image)
        embedded.append(
            models.AppBskyEmbedImages.Image(
                alt=image.alt,
                image=blob,
                aspect_ratio=models.AppBskyEmbedDefs.AspectRatio(width=image.width, height=image.height),
            )
        )
    return models.AppBskyEmbedImages.Main(images=embedded)


def _video_embed(models: Any, blob: Any, video: PreparedImage) -> Any:
    """The ``app.bsky.embed.video`` of `video`'s blob, with its alt text and aspect ratio."""
    return models.AppBskyEmbedVideo.Main(
        video=blob,
        alt=video.alt or None,
        aspect_ratio=models.AppBskyEmbedDefs.AspectRatio(width=video.width, height=video.height),
    )

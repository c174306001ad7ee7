"""Pictures and videos on a Mastodon post: what one may be on a server that has not said its own
limits (`instance.py` reads those), and their upload: Mastodon.py's ``media_post`` with the alt
text as ``description``, waiting until the server has processed it. A picture is processed at
once; a video (and on most servers a GIF) asynchronously (``POST /api/v2/media`` answers 202 with
no url): the bot then asks
``GET /api/v1/media/:id`` (Mastodon.py's ``media``) until it has a url (206 while it runs, 422 when
it failed), with its own pauses and deadline (`uploads.wait_processed`): Mastodon.py's own
``synchronous`` wait has neither, and calls any error "could not be processed"::

    prepared = fit_pictures(images, image_limits())
    media_ids = upload_to_mastodon(client, prepared, policy=Backoff(2), classify=classify)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, List, Optional, Sequence

from ...errors import ErrorKind, PostError
from ...pictures.limits import ImageLimits
from ..uploads import processing_failed, refused, retried, upload_failed, wait_processed

if TYPE_CHECKING:
    from ...pictures.prepare import PreparedImage
    from ..retry import Backoff

__all__ = ["image_limits", "upload_to_mastodon"]


def image_limits() -> ImageLimits:
    """Each server sets its own (`MastodonPoster.image_limits` asks it); until it says, those of
    Mastodon 3.5, which every later server takes too: 8 MiB, 16.7 megapixels (4.x allows 16 MiB
    and 33 megapixels), alt text ("description") 1,500 characters, animated GIFs within the size."""
    size = 8 * 1024 * 1024
    # Videos: Mastodon 3.5 takes 40 MiB (4.x 99 MiB: `video_size_limit`) of MP4, WebM or MOV, at
    # most 1920x1200 pixels (`video_matrix_limit` 2,304,000), of any length; it transcodes them.
    return ImageLimits(
        "mastodon",
        size,
        16_777_216,
        8192,
        1500,
        animated_gif_bytes=size,
        title="Mastodon",
        video_bytes=40 * 1024 * 1024,
        video_side=1920,
        video_pixels=2_304_000,
    )


def upload_to_mastodon(
    client: Any, images: Sequence[PreparedImage], *, policy: Backoff, classify: Callable[[Exception], PostError]
) -> List[str]:
    """Upload each picture with its alt text (``description``), waiting until the server has
    processed it (a status naming an unprocessed upload is refused with 422); returns the ids
    for ``status_post(media_ids=...)``."""
    import io

    from mastodon import MastodonAPIError, MastodonError

    ids: List[str] = []
    for number, image in enumerate(images, start=1):

        def upload(image: PreparedImage = image, number: int = number) -> Any:
            try:
                return client.media_post(
                    io.BytesIO(image.data),
                    mime_type=image.mime_type,
                    description=image.alt or None,  # a grammar's picture may have none
                    file_name=f"{'video' if image.is_video else 'picture'}.{image.extension}",
                    synchronous=False,  # waited for below, with pauses and a deadline
                )
            except MastodonAPIError as exc:
                status = exc.args[1] if len(exc.args) > 1 and isinstance(exc.args[1], int) else 0
                if status in (413, 415, 422):
                    raise refused("Mastodon", number, image, status, str(exc.args[-1] if exc.args else exc)) from None
                raise classify(exc) from None
            except (MastodonError, RecursionError) as exc:
                raise classify(exc) from None

        try:
            media = retried(policy, upload, what=f"upload {image.name}")
        except PostError as exc:
            raise exc if exc.kind == ErrorKind.PICTURE else upload_failed("Mastodon", number, image, exc) from None
        media_id = media.get("id") if isinstance(media, dict) else None
        if not isinstance(media_id, (str, int)) or isinstance(media_id, bool):
            from ..answers import unreadable

            raise upload_failed("Mastodon", number, image, unreadable("Mastodon", "the upload's answer has no id"))
        if media.get("url") is None:  # being processed (a video, a GIF made a gifv): 202
            try:
                _processed(client, str(media_id), number, image, policy=policy, classify=classify)
            except PostError as exc:
                raise exc if exc.kind == ErrorKind.PICTURE else upload_failed("Mastodon", number, image, exc) from None
        ids.append(str(media_id))
    return ids


def _processed(
    client: Any,
    media_id: str,
    number: int,
    image: PreparedImage,
    *,
    policy: Backoff,
    classify: Callable[[Exception], PostError],
) -> None:
    """Wait until the server has processed upload `media_id`: a status naming it before is refused."""
    from mastodon import MastodonAPIError, MastodonError

    def ask() -> Optional[float]:
        try:
            media = client.media(media_id)
        except MastodonAPIError as exc:
            status = exc.args[1] if len(exc.args) > 1 and isinstance(exc.args[1], int) else 0
            if status == 422:  # MediaController#check_processing: the processing failed
                raise processing_failed("Mastodon", number, image, str(exc.args[-1] if exc.args else exc)) from None
            raise classify(exc) from None
        except (MastodonError, RecursionError) as exc:
            raise classify(exc) from None
        return None if isinstance(media, dict) and media.get("url") else 1.0

    wait_processed(policy, ask, "Mastodon", number, image)

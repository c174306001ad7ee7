"""Pictures on a post: fitted to a network, uploaded, described, before the post is made.

An upload is not a post: nothing appears on the account until the post that names the upload is
made, and an upload the post never names is dropped by the network. So an upload is retried on
any failure that may pass (no connection, no answer, a server error), and a picture that cannot
be uploaded is a certain failure of the post: nothing was posted, the next run may try again.
The post itself keeps its network's at-most-once rules. Each network's upload is one function
here, called by that network's poster before it sends the post::

    prepared = fit_pictures(images, LIMITS["x"])                 # PostError for a picture that cannot fit
    media_ids = upload_to_x(session, credentials, prepared, policy=Backoff(2), ...)

X: tweepy 4.17 has no v2 media upload (only v1.1's, which X retired), so `upload_to_x` makes
the two v2 requests itself, signed with OAuth 1.0a by requests-oauthlib (tweepy's own signer)
through the poster's session (its timeout and base URL): ``POST /2/media/upload`` (multipart)
and ``POST /2/media/metadata`` (alt text). Mastodon: Mastodon.py's ``media_post`` with the alt
text as ``description``, waiting until the server has processed it. Bluesky: the atproto SDK's
``upload_blob``, then an ``app.bsky.embed.images`` embed with ``alt`` and ``aspectRatio``.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Sequence, TypeVar

from ..errors import ErrorKind, ExitStatus, PostError
from ..pictures.limits import ImageLimits
from ..pictures.prepare import Attachment, PictureError, PreparedImage
from .retry import Backoff

if TYPE_CHECKING:
    from .x import Credentials

__all__ = [
    "retried",
    "X_METADATA_URL",
    "X_UPLOAD_URL",
    "bluesky_embed",
    "fit_pictures",
    "upload_to_mastodon",
    "upload_to_x",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

# tweepy signs for api.twitter.com; api.x.com serves the same API. The poster's adapter sends
# both to X_API_BASE_URL; the signature covers this URL, as X checks it.
X_UPLOAD_URL = "https://api.twitter.com/2/media/upload"
X_METADATA_URL = "https://api.twitter.com/2/media/metadata"


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


def fit_pictures(images: Sequence[Attachment], limits: ImageLimits) -> List[PreparedImage]:
    """Each picture fitted to `limits`; a picture that cannot be is a certain failure of the
    post (a data error: the user's file must change)."""
    try:
        return [image.prepare(limits) for image in images]
    except PictureError as exc:
        raise PostError(f"{exc} (nothing was posted)", kind=ErrorKind.PICTURE, exit_status=ExitStatus.DATA_ERROR) from None


def upload_failed(where: str, number: int, image: PreparedImage, error: PostError) -> PostError:
    """A picture that could not be uploaded: nothing was posted. The same exit status as the
    failure (a refusal needs the user, a network or server problem the next run)."""
    temporary = error.exit_status == ExitStatus.TEMPORARY_FAILURE
    advice = "the next run tries again" if temporary else "fix the picture or the account, then run again"
    what = f"picture {number} ({image.name}) could not be uploaded to {where}: {error.summary}"
    return PostError(f"{what}; nothing was posted: {advice}", kind=ErrorKind.UPLOAD, exit_status=error.exit_status, summary=what)


def refused(where: str, number: int, image: PreparedImage, status: int, said: str) -> PostError:
    """The network refused a picture (too big, a type it does not take): the file must change."""
    what = f"{where} refused picture {number} ({image.name}, {image.describe()}): {status} {said}"
    return PostError(
        f"{what}; nothing was posted: use a smaller picture or another format",
        kind=ErrorKind.PICTURE,
        exit_status=ExitStatus.DATA_ERROR,
        summary=what,
    )


# -- X ---------------------------------------------------------------------------------------------


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
    from requests_oauthlib import OAuth1

    auth = OAuth1(
        credentials.api_key, credentials.api_secret, credentials.access_token, credentials.access_token_secret
    )

    def call(number: int, image: PreparedImage, **request: Any) -> dict:
        try:
            response = session.post(auth=auth, **request)
        except requests.RequestException as exc:
            raise network_error(exc) from None
        if response.status_code in (400, 413, 415):
            raise refused("X", number, image, response.status_code, _x_said(response))
        if response.status_code >= 300:
            raise classify(response)
        try:
            body = response.json()
            return body["data"]
        except (ValueError, KeyError, TypeError):
            raise PostError(
                f"X answered the upload of {image.name} without its id: run with -v and report it if it persists",
                kind=ErrorKind.NETWORK,
                exit_status=ExitStatus.TEMPORARY_FAILURE,
            ) from None

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
            alt = {"url": X_METADATA_URL, "json": {"id": media_id, "metadata": {"alt_text": {"text": image.alt}}}}
            retried(policy, partial(call, number, image, **alt), what=f"describe {image.name}")
        except PostError as exc:
            raise exc if exc.kind == ErrorKind.PICTURE else upload_failed("X", number, image, exc) from None
        ids.append(media_id)
    return ids


def _x_said(response: Any) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.reason or ""
    messages = [str(error.get("message", "")) for error in body.get("errors", []) if isinstance(error, dict)]
    return "; ".join(message for message in messages if message) or str(body.get("detail") or response.reason)


def _may_pass(error: PostError) -> bool:
    """An upload failure worth trying again: no connection, no answer or a server error (an
    upload made twice is harmless: only the one the post names is shown)."""
    return error.kind in (ErrorKind.UNREACHABLE, ErrorKind.TIMEOUT, ErrorKind.NETWORK, ErrorKind.SERVER_ERROR)


# -- Mastodon ----------------------------------------------------------------------------------


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
                    description=image.alt,
                    file_name=f"picture.{image.extension}",
                    synchronous=True,
                )
            except MastodonAPIError as exc:
                status = exc.args[1] if len(exc.args) > 1 and isinstance(exc.args[1], int) else 0
                if status in (413, 415, 422):
                    raise refused("Mastodon", number, image, status, str(exc.args[-1] if exc.args else exc)) from None
                raise classify(exc) from None
            except MastodonError as exc:
                raise classify(exc) from None

        try:
            media = retried(policy, upload, what=f"upload {image.name}")
        except PostError as exc:
            raise exc if exc.kind == ErrorKind.PICTURE else upload_failed("Mastodon", number, image, exc) from None
        ids.append(str(media["id"]))
    return ids


# -- Bluesky -----------------------------------------------------------------------------------


def bluesky_embed(client: Any, images: Sequence[PreparedImage], *, policy: Backoff, call: Callable[..., Any]) -> Any:
    """Upload each picture as a blob and return the ``app.bsky.embed.images`` embed naming them,
    with alt text and aspect ratio (without it the app crops the picture). `call` runs an SDK
    step, turning its errors into PostErrors."""
    from atproto import models
    from atproto.exceptions import AtProtocolError

    def upload(number: int, image: PreparedImage) -> Any:
        try:
            return client.upload_blob(image.data).blob
        except AtProtocolError as exc:  # the server's refusal of this picture, in its own words
            response = getattr(exc, "response", None)
            if response is not None and response.status_code in (400, 413, 415):
                content = response.content
                said = ": ".join(str(part) for part in (getattr(content, "error", ""), getattr(content, "message", "")) if part)
                raise refused("Bluesky", number, image, response.status_code, said or "refused") from None
            raise

    embedded = []
    for number, image in enumerate(images, start=1):
        try:
            blob = retried(policy, partial(call, upload, number, image), what=f"upload {image.name}")
        except PostError as exc:
            raise exc if exc.kind == ErrorKind.PICTURE else upload_failed("Bluesky", number, image, exc) from None
        embedded.append(
            models.AppBskyEmbedImages.Image(
                alt=image.alt,
                image=blob,
                aspect_ratio=models.AppBskyEmbedDefs.AspectRatio(width=image.width, height=image.height),
            )
        )
    return models.AppBskyEmbedImages.Main(images=embedded)

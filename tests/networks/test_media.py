"""Pictures on posts (each network's media.py, networks/uploads.py) against the X emulator, the
Mastodon emulator and mastodon-mock, and the real Bluesky PDS: the picture arrives fitted, with its
alt text and without EXIF; uploads are retried, a failed upload posts nothing, a refusal says so."""

from __future__ import annotations

import io
import json
import os
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Dict

import images
import pytest
from conftest import REGISTRY, credentials_for
from mastodon_server import MastodonEmulator
from pds.harness import Pds, PdsAccount
from PIL import Image

from twitterbot.errors import ExitStatus, PostError
from twitterbot.networks import PostOptions
from twitterbot.networks.bluesky.media import bluesky_embed
from twitterbot.networks.bluesky.poster import BlueskyPoster, Login
from twitterbot.networks.mastodon.poster import MastodonPoster
from twitterbot.networks.retry import Backoff
from twitterbot.networks.x.media import upload_to_x
from twitterbot.networks.x.poster import XPoster
from twitterbot.pictures.prepare import Attachment, PreparedImage


@pytest.fixture(scope="module")
def photo(tmp_path_factory: pytest.TempPathFactory) -> Attachment:
    """A 4000x3000 phone photo, sideways, with GPS in its EXIF."""
    path = images.photo(tmp_path_factory.mktemp("media") / "garden.jpg")
    return Attachment(path, "Rows of runner beans under an orange sky", "photos/garden.jpg")


@pytest.fixture(scope="module")
def screenshot(tmp_path_factory: pytest.TempPathFactory) -> Attachment:
    path = images.screenshot(tmp_path_factory.mktemp("media") / "shot.png")
    return Attachment(path, "A settings page, long and narrow", "shot.png")


def look(data: bytes) -> Image.Image:
    picture = Image.open(io.BytesIO(data))
    picture.load()
    return picture


# -- X ---------------------------------------------------------------------------------------------


def test_x_a_photo_and_a_screenshot_are_uploaded_described_and_posted(
    emulator, poster: XPoster, photo, screenshot
) -> None:
    result = poster.post("The garden at dawn", PostOptions(images=(photo, screenshot)))
    assert result.confirmed
    (post,) = emulator.posts
    assert post.text == "The garden at dawn"
    first, second = post.media
    assert (first.alt, second.alt) == (photo.alt, screenshot.alt)
    assert first.media_type == "image/jpeg" and len(first.data) <= 5_000_000
    assert not images.has_location(first.data)
    assert look(first.data).height > look(first.data).width  # turned upright
    assert second.media_type == "image/png" and look(second.data).size == (737, 4096)
    assert [seen.path for seen in emulator.seen] == [
        "/2/media/upload",
        "/2/media/metadata",
        "/2/media/upload",
        "/2/media/metadata",
        "/2/tweets",
    ]


def test_x_checks_the_uploads_signature(emulator, photo) -> None:
    keys = credentials_for(emulator)
    wrong = type(keys)(keys.api_key, "not-the-secret", keys.access_token, keys.access_token_secret)
    poster = XPoster(wrong, timeout=2, retries=1, base_url=emulator.url, sleep=lambda s: None)
    with pytest.raises(PostError) as caught:
        poster.post("Signed wrong", PostOptions(images=(photo,)))
    assert caught.value.exit_status == ExitStatus.PERMISSION_DENIED and "401" in str(caught.value)
    assert emulator.posts == [] and [seen.status for seen in emulator.seen] == [401]


def test_x_an_upload_whose_reply_is_lost_is_uploaded_again_and_posted_once(emulator, poster, photo) -> None:
    emulator.fail_next("posted_then_drop")  # the first upload lands, its reply never comes
    result = poster.post("Lost reply", PostOptions(images=(photo,)))
    assert result.confirmed and len(emulator.posts) == 1
    assert len(emulator.media) == 2  # the lost one stays unused, as X drops it
    assert emulator.posts[0].media[0].alt == photo.alt


def test_x_an_upload_that_keeps_failing_posts_nothing(emulator, poster, photo) -> None:
    emulator.fail_next("server_error", "server_error")  # the poster tries twice (retries=1)
    with pytest.raises(PostError) as caught:
        poster.post("Never posted", PostOptions(images=(photo,)))
    error = caught.value
    assert error.kind == "upload" and error.exit_status == ExitStatus.TEMPORARY_FAILURE
    assert "picture 1 (photos/garden.jpg) could not be uploaded to X" in str(error) and "nothing was posted" in str(
        error
    )
    assert emulator.posts == []


def test_x_refuses_a_picture_too_big_and_says_which(emulator, poster, photo) -> None:
    emulator.max_image_bytes = 100_000
    with pytest.raises(PostError) as caught:
        poster.post("Too big", PostOptions(images=(photo,)))
    assert caught.value.kind == "picture" and caught.value.exit_status == ExitStatus.DATA_ERROR
    assert "X refused picture 1 (photos/garden.jpg" in str(caught.value) and "File size exceeds" in str(caught.value)
    assert emulator.posts == []


def test_x_refuses_a_file_that_is_not_a_picture(emulator, poster) -> None:
    fake = PreparedImage("x", b"this is not a picture", "image/png", 1, 1, "alt", "notes.png")
    with pytest.raises(PostError, match="media type unrecognized") as caught:
        upload_to_x(
            poster._client.session,
            credentials_for(emulator),
            [fake],
            policy=Backoff(0, sleep=lambda s: None),
            classify=lambda response: AssertionError(response),
            network_error=lambda exc: AssertionError(exc),
        )
    assert caught.value.exit_status == ExitStatus.DATA_ERROR


def test_x_a_picture_that_cannot_be_read_is_a_data_error_before_any_request(emulator, poster, tmp_path: Path) -> None:
    bad = Attachment(images.damaged(tmp_path / "bad.jpg"), "alt", "bad.jpg")
    with pytest.raises(PostError, match="bad.jpg is damaged") as caught:
        poster.post("Damaged", PostOptions(images=(bad,)))
    assert caught.value.exit_status == ExitStatus.DATA_ERROR and emulator.seen == []


# -- Mastodon --------------------------------------------------------------------------------------


def mastodon_poster(url: str, token: str) -> MastodonPoster:
    return MastodonPoster(
        instance=url, access_token=token, visibility="unlisted", timeout=5, retries=1, sleep=lambda s: None
    )


def test_mastodon_fits_the_picture_to_the_servers_own_limit(mastodon_emulator: MastodonEmulator, photo) -> None:
    mastodon_emulator.image_size_limit = 1_000_000  # this server says 1 MB in /api/v2/instance
    result = mastodon_poster(mastodon_emulator.url, mastodon_emulator.token).post("Beans", PostOptions(images=(photo,)))
    assert result.confirmed
    (status,) = mastodon_emulator.statuses
    (media,) = status.media
    assert media["description"] == photo.alt and media["mime"] == "image/jpeg"
    assert len(media["data"]) <= 1_000_000 and not images.has_location(media["data"])


def test_mastodon_an_upload_is_retried_and_a_failed_one_posts_nothing(
    mastodon_emulator: MastodonEmulator, photo
) -> None:
    poster = mastodon_poster(mastodon_emulator.url, mastodon_emulator.token)
    mastodon_emulator.fail_next_upload("posted_then_drop")
    assert poster.post("Retried", PostOptions(images=(photo,))).confirmed
    assert len(mastodon_emulator.media) == 2 and len(mastodon_emulator.statuses) == 1
    mastodon_emulator.fail_next_upload("server_error", "server_error")
    with pytest.raises(PostError) as caught:
        poster.post("Not posted", PostOptions(images=(photo,)))
    assert caught.value.kind == "upload" and caught.value.exit_status == ExitStatus.TEMPORARY_FAILURE
    assert mastodon_emulator.texts == ["Retried"]


def test_mastodon_refusals_of_a_picture_are_data_errors(mastodon_emulator: MastodonEmulator, screenshot) -> None:
    poster = mastodon_poster(mastodon_emulator.url, mastodon_emulator.token)
    mastodon_emulator.supported_mime_types = ("image/jpeg",)  # the instance says so, and the bot sends a JPEG
    assert poster.post("Made a JPEG", PostOptions(images=(screenshot,))).confirmed
    assert mastodon_emulator.statuses[0].media[0]["mime"] == "image/jpeg"
    other = mastodon_poster(mastodon_emulator.url, mastodon_emulator.token)
    other._image_limits = REGISTRY.network("mastodon").image_limits()  # as if the server had not said: PNG stays PNG
    with pytest.raises(PostError, match="Mastodon refused picture 1 .*File content type is invalid") as caught:
        other.post("PNG where it is not taken", PostOptions(images=(screenshot,)))
    assert caught.value.exit_status == ExitStatus.DATA_ERROR and len(mastodon_emulator.statuses) == 1


def test_mastodon_mock_keeps_the_description(mastodon_mock, photo) -> None:
    result = mastodon_poster(mastodon_mock.url, mastodon_mock.token).post(
        "With a picture", PostOptions(images=(photo,))
    )
    assert result.confirmed
    (status,) = [status for status in mastodon_mock.statuses() if status["id"] == result.post_id]
    (attachment,) = status["media_attachments"]
    assert attachment["description"] == photo.alt and attachment["type"] == "image"


# -- Bluesky (the real PDS) --------------------------------------------------------------------------


@pytest.fixture
def account(bluesky_pds: Pds) -> PdsAccount:
    return bluesky_pds.create_account("pics")


def blob(pds: Pds, did: str, cid: str) -> bytes:
    query = urllib.parse.urlencode({"did": did, "cid": cid})
    with urllib.request.urlopen(f"{pds.url}/xrpc/com.atproto.sync.getBlob?{query}", timeout=30) as response:
        return response.read()


@pytest.fixture
def bluesky(bluesky_pds: Pds, account: PdsAccount, tmp_path: Path) -> BlueskyPoster:
    """The Bluesky poster, logged in to the real PDS with an app password, never sleeping."""
    return BlueskyPoster(
        Login(account.handle, bluesky_pds.app_password(account), bluesky_pds.url, tmp_path / "session.json"),
        timeout=20,
        retries=0,
        sleep=lambda s: None,
    )


def test_bluesky_stores_the_blob_fitted_upright_and_without_exif(
    bluesky_pds: Pds, account: PdsAccount, bluesky: BlueskyPoster, photo, screenshot
) -> None:
    assert bluesky.post("The garden at dawn", PostOptions(images=(photo, screenshot))).confirmed
    (record,) = bluesky_pds.posts(account)
    embed: Dict[str, Any] = record["value"]["embed"]
    assert embed["$type"] == "app.bsky.embed.images"
    first, second = embed["images"]
    assert (first["alt"], second["alt"]) == (photo.alt, screenshot.alt)
    stored = blob(bluesky_pds, account.did, first["image"]["ref"]["$link"])
    assert len(stored) == first["image"]["size"] <= 2_000_000 and first["image"]["mimeType"] == "image/jpeg"
    assert not images.has_location(stored)
    picture = look(stored)
    assert picture.format == "JPEG" and picture.height > picture.width
    assert (first["aspectRatio"]["width"], first["aspectRatio"]["height"]) == picture.size
    png = look(blob(bluesky_pds, account.did, second["image"]["ref"]["$link"]))
    assert png.format == "PNG" and max(png.size) <= 4000
    json.dumps(record)  # the record is plain JSON all through


def test_bluesky_refusals_of_a_picture_post_nothing(
    bluesky_pds: Pds, account: PdsAccount, bluesky: BlueskyPoster
) -> None:
    poster = bluesky
    client = poster._call(poster._connect)
    # Too big for the server (its blob limit; the bot itself never sends over 2,000,000 bytes).
    big = PreparedImage("bluesky", b"\xff\xd8\xff" + os.urandom(6_000_000), "image/jpeg", 10, 10, "alt", "big.jpg")
    with pytest.raises(PostError, match=r"Bluesky refused picture 1 \(big.jpg.*413") as caught:
        bluesky_embed(client, [big], policy=Backoff(0), call=poster._call)
    assert caught.value.exit_status == ExitStatus.DATA_ERROR
    # Not a picture: the server stores the blob, then refuses a post that shows it as one.
    fake = PreparedImage("bluesky", b"this is not a picture at all", "image/png", 10, 10, "alt", "notes.png")
    poster._pictures = lambda images: bluesky_embed(client, [fake], policy=Backoff(0), call=poster._call)  # type: ignore[method-assign]
    with pytest.raises(PostError) as refused:
        poster.post("A text file as a picture", PostOptions(images=(fake,)))  # type: ignore[arg-type]
    assert refused.value.exit_status == ExitStatus.DATA_ERROR, refused.value
    assert bluesky_pds.posts(account) == []


def test_mastodon_refuses_a_picture_over_its_size_limit(mastodon_emulator: MastodonEmulator, photo) -> None:
    mastodon_emulator.image_size_limit = 1024 * 1024
    poster = mastodon_poster(mastodon_emulator.url, mastodon_emulator.token)
    poster._image_limits = REGISTRY.network("mastodon").image_limits()  # the bot assumes 8 MiB: the server says no
    with pytest.raises(PostError, match="Mastodon refused picture 1 .*File file size must be less than 1 MB") as caught:
        poster.post("Too big for this server", PostOptions(images=(photo,)))
    assert caught.value.exit_status == ExitStatus.DATA_ERROR and mastodon_emulator.statuses == []

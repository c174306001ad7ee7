"""A video posted to each network through its real client library, against the local servers:
X's chunked upload (INIT, APPEND in order, FINALIZE, STATUS polled) in tests/x_emulator.py,
Mastodon's asynchronous media (202, then polled until it has a URL) in tests/mastodon_server.py,
Bluesky's app.bsky.embed.video with its blob on the real PDS (tests/pds). Each arrives once,
moving, with its alt text and no metadata; a failed processing posts nothing."""

from __future__ import annotations

import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Dict, List

import clips
import pytest
from conftest import credentials_for
from mastodon_server import MastodonEmulator
from pds.harness import Pds, PdsAccount
from x_emulator import XEmulator

from twitterbot.errors import ExitStatus, PostError
from twitterbot.networks import PostOptions
from twitterbot.networks.bluesky.poster import BlueskyPoster, Login
from twitterbot.networks.mastodon.poster import MastodonPoster
from twitterbot.networks.x.media import CHUNK_BYTES
from twitterbot.networks.x.poster import XPoster
from twitterbot.pictures.prepare import Attachment


@pytest.fixture(autouse=True, scope="module")  # before the module's clips are made
def ffmpeg() -> None:
    clips.need_ffmpeg()


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Attachment:
    path = clips.phone_clip(tmp_path_factory.mktemp("video") / "bees.mp4", seconds=2, size="320x180")
    return Attachment(path, "Bees landing on lavender, slowed down", "clips/bees.mp4", kind="video")


@pytest.fixture(scope="module")
def gif(tmp_path_factory: pytest.TempPathFactory) -> Attachment:
    path = clips.animated_gif(tmp_path_factory.mktemp("video") / "card.gif", seconds=1, size="160x120")
    return Attachment(path, "A test card whose bars slide left", "clips/card.gif")


def no_secrets(data: bytes) -> None:
    assert b"+48.8577" not in data and b"Pixel" not in data and b"CameraSecret" not in data
    tags = dict(clips.probe(data)["format"].get("tags") or {})
    assert "location" not in tags and "creation_time" not in tags


# -- Bluesky (the real PDS) -------------------------------------------------------------------------


def blob(pds: Pds, did: str, cid: str) -> bytes:
    query = urllib.parse.urlencode({"did": did, "cid": cid})
    with urllib.request.urlopen(f"{pds.url}/xrpc/com.atproto.sync.getBlob?{query}", timeout=30) as response:
        return response.read()


@pytest.fixture
def account(bluesky_pds: Pds) -> PdsAccount:
    return bluesky_pds.create_account("videos")


@pytest.fixture
def bluesky(bluesky_pds: Pds, account: PdsAccount, tmp_path: Path) -> BlueskyPoster:
    return BlueskyPoster(
        Login(account.handle, bluesky_pds.app_password(account), bluesky_pds.url, tmp_path / "session.json"),
        timeout=20,
        retries=0,
        sleep=lambda s: None,
    )


@pytest.mark.parametrize("which", ["clip", "gif"])
def test_bluesky_a_video_and_a_gif_land_as_app_bsky_embed_video(
    bluesky_pds: Pds, account: PdsAccount, bluesky: BlueskyPoster, request: pytest.FixtureRequest, which: str
) -> None:
    attachment: Attachment = request.getfixturevalue(which)
    assert bluesky.post("Moving", PostOptions(images=(attachment,))).confirmed
    (record,) = bluesky_pds.posts(account)
    embed: Dict[str, Any] = record["value"]["embed"]
    assert embed["$type"] == "app.bsky.embed.video"
    assert embed["alt"] == attachment.alt
    video = embed["video"]
    assert video["mimeType"] == "video/mp4"
    stored = blob(bluesky_pds, account.did, video["ref"]["$link"])
    assert len(stored) == video["size"]
    stream = clips.probe(stored)["streams"][0]
    assert stream["codec_name"] == "h264"
    assert (embed["aspectRatio"]["width"], embed["aspectRatio"]["height"]) == (stream["width"], stream["height"])
    no_secrets(stored)


# -- Mastodon (tests/mastodon_server.py, through Mastodon.py) ---------------------------------------


def mastodon_poster(emulator: MastodonEmulator, waits: List[float]) -> MastodonPoster:
    return MastodonPoster(
        instance=emulator.url,
        access_token=emulator.token,
        visibility="unlisted",
        timeout=5,
        retries=1,
        sleep=waits.append,
    )


def test_mastodon_a_video_is_uploaded_202_polled_until_it_has_a_url_then_posted_once(
    mastodon_emulator: MastodonEmulator, clip: Attachment
) -> None:
    mastodon_emulator.processing_polls = 3
    waits: List[float] = []
    assert mastodon_poster(mastodon_emulator, waits).post("Bees", PostOptions(images=(clip,))).confirmed
    (status,) = mastodon_emulator.statuses
    (media,) = status.media
    assert media["mime"] == "video/mp4" and media["description"] == clip.alt and media["polls"] == 4
    assert len(mastodon_emulator.media) == 1  # uploaded once
    no_secrets(media["data"])
    assert waits == [1.0, 2.0, 4.0]  # paused between questions, never a re-upload
    assert [(seen.method, seen.path.split("/")[3]) for seen in mastodon_emulator.seen if "/media" in seen.path] == [
        ("POST", "media")
    ] + [("GET", "media")] * 4


def test_mastodon_a_gif_goes_as_it_is(mastodon_emulator: MastodonEmulator, gif: Attachment) -> None:
    assert mastodon_poster(mastodon_emulator, []).post("Card", PostOptions(images=(gif,))).confirmed
    (media,) = mastodon_emulator.statuses[0].media
    assert media["mime"] == "image/gif" and media["description"] == gif.alt


def test_mastodon_a_failed_processing_is_exit_65_and_nothing_is_posted(
    mastodon_emulator: MastodonEmulator, clip: Attachment
) -> None:
    mastodon_emulator.processing_fails = True
    with pytest.raises(
        PostError, match="Mastodon could not process video 1 \\(clips/bees.mp4.*Error processing"
    ) as caught:
        mastodon_poster(mastodon_emulator, []).post("Bees", PostOptions(images=(clip,)))
    assert caught.value.exit_status == ExitStatus.DATA_ERROR and "nothing was posted" in str(caught.value)
    assert mastodon_emulator.statuses == [] and len(mastodon_emulator.media) == 1


def test_mastodon_processing_that_never_ends_is_exit_75_and_nothing_is_posted(
    mastodon_emulator: MastodonEmulator, clip: Attachment
) -> None:
    mastodon_emulator.processing_polls = 10_000
    waits: List[float] = []
    with pytest.raises(
        PostError, match="Mastodon was still processing video 1 \\(clips/bees.mp4\\) after 30[0-9] s"
    ) as caught:
        mastodon_poster(mastodon_emulator, waits).post("Bees", PostOptions(images=(clip,)))
    assert caught.value.exit_status == ExitStatus.TEMPORARY_FAILURE
    assert mastodon_emulator.statuses == [] and len(mastodon_emulator.media) == 1
    assert max(waits) == 10.0 and sum(waits) >= 300


# -- X (tests/x_emulator.py, signed as tweepy signs) ------------------------------------------------


def x_poster(emulator: XEmulator, waits: List[float]) -> XPoster:
    return XPoster(credentials_for(emulator), timeout=5, retries=1, base_url=emulator.url, sleep=waits.append)


def big_clip(tmp_path: Path) -> Attachment:
    """A clip of noise, over 8 MiB once prepared: three segments or more."""
    path = tmp_path / "noise.mp4"
    clips._ffmpeg(
        "-f", "lavfi", "-i", "nullsrc=size=640x360:rate=25,geq=random(1)*255:128:128", "-t", "3",
        "-c:v", "libx264", "-preset", "ultrafast", "-crf", "10", "-pix_fmt", "yuv420p", str(path),
    )  # fmt: skip
    assert path.stat().st_size > 2 * 4 * 1024 * 1024
    return Attachment(path, "Grey noise, moving", "noise.mp4", kind="video")


def test_x_a_video_goes_through_the_chunked_upload_in_order_and_is_posted_once(
    emulator: XEmulator, tmp_path: Path
) -> None:
    clip = big_clip(tmp_path)
    waits: List[float] = []
    emulator.check_after_secs = 2
    assert x_poster(emulator, waits).post("Noise", PostOptions(images=(clip,))).confirmed
    (post,) = emulator.posts
    (media,) = post.media
    assert media.category == "tweet_video" and media.media_type == "video/mp4" and media.alt == clip.alt
    parts = -(-len(media.data) // CHUNK_BYTES)
    assert parts >= 2 and sorted(media.segments) == list(range(parts))
    assert all(len(media.segments[index]) == CHUNK_BYTES for index in range(parts - 1))
    assert media.state == "succeeded" and media.checks == 3
    no_secrets(media.data)
    paths = [seen.path for seen in emulator.seen]
    upload = f"/2/media/upload/{media.id}"
    assert paths == [
        "/2/media/upload/initialize",
        *[f"{upload}/append"] * parts,
        f"{upload}/finalize",
        "/2/media/upload",  # STATUS: in_progress
        "/2/media/upload",  # in_progress
        "/2/media/upload",  # succeeded
        "/2/media/metadata",
        "/2/tweets",
    ]
    assert waits == [2.0, 2.0]  # X's check_after_secs between questions
    assert len(emulator.media) == 1


def test_x_a_lost_segment_answer_sends_that_segment_again_not_the_video(emulator: XEmulator, tmp_path: Path) -> None:
    clip = big_clip(tmp_path)
    emulator.fail_next("ok", "ok", "posted_then_drop")  # the second APPEND is stored, its answer lost
    assert x_poster(emulator, []).post("Noise", PostOptions(images=(clip,))).confirmed
    appends = [seen.path for seen in emulator.seen if seen.path.endswith("/append")]
    (media,) = emulator.media.values()
    assert len(appends) == len(media.segments) + 1  # the one lost answer's segment, twice
    assert len(emulator.posts) == 1 and emulator.posts[0].media[0].data == media.data


def test_x_a_failed_processing_is_exit_65_and_nothing_is_posted(emulator: XEmulator, clip: Attachment) -> None:
    emulator.processing_fails = True
    with pytest.raises(PostError, match=r"X could not process video 1 \(clips/bees.mp4.*InvalidMedia") as caught:
        x_poster(emulator, []).post("Bees", PostOptions(images=(clip,)))
    assert caught.value.exit_status == ExitStatus.DATA_ERROR
    assert emulator.posts == [] and "/2/tweets" not in [seen.path for seen in emulator.seen]


def test_x_processing_that_never_ends_is_exit_75_and_nothing_is_posted(emulator: XEmulator, clip: Attachment) -> None:
    emulator.processing_checks = 10_000
    with pytest.raises(PostError, match=r"X was still processing video 1 \(clips/bees.mp4\)") as caught:
        x_poster(emulator, []).post("Bees", PostOptions(images=(clip,)))
    assert caught.value.exit_status == ExitStatus.TEMPORARY_FAILURE and emulator.posts == []
    assert len(emulator.media) == 1


def test_x_an_animated_gif_still_goes_as_a_picture(emulator: XEmulator, gif: Attachment) -> None:
    assert x_poster(emulator, []).post("Card", PostOptions(images=(gif,))).confirmed
    (media,) = emulator.posts[0].media
    assert media.media_type == "image/gif" and media.category == "tweet_gif" and media.alt == gif.alt

"""A Bluesky video through a video service (tests/bluesky_video_service.py: video.bsky.app's three
methods, checking service tokens as the real one does, storing the video in the real PDS of
tests/pds with the account's own token): the limits asked first, one upload, the job asked until
it names its blob, then the post. A limit, a failed processing or a job that never ends posts
nothing, each with its documented exit."""

from __future__ import annotations

import urllib.parse
import urllib.request
from pathlib import Path
from typing import Iterator, List

import clips
import pytest
from bluesky_video_service import VideoService
from pds.harness import Pds, PdsAccount

from twitterbot.errors import ErrorKind, ExitStatus, PostError
from twitterbot.networks import PostOptions
from twitterbot.networks.bluesky.poster import BlueskyPoster, Login
from twitterbot.networks.bluesky.videoservice import BLUESKY_VIDEO, service_did, video_service_for
from twitterbot.pictures.prepare import Attachment


@pytest.fixture(autouse=True, scope="module")  # before the module's clips are made
def ffmpeg() -> None:
    clips.need_ffmpeg()


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Attachment:
    path = clips.phone_clip(tmp_path_factory.mktemp("clips") / "bees.mp4")
    return Attachment(path, "Bees on lavender", "clips/bees.mp4", kind="video")


@pytest.fixture
def account(bluesky_pds: Pds) -> PdsAccount:
    return bluesky_pds.create_account("filmer")


@pytest.fixture
def service(bluesky_pds: Pds) -> Iterator[VideoService]:
    with VideoService(bluesky_pds.url, bluesky_pds.plc_url) as running:
        yield running


def poster(pds: Pds, account: PdsAccount, service: VideoService, folder: Path, waits: List[float]) -> BlueskyPoster:
    return BlueskyPoster(
        Login(account.handle, pds.app_password(account), pds.url, folder / "session.json"),
        timeout=20,
        retries=1,
        sleep=waits.append,
        video_service=service.url,
    )


def stored(pds: Pds, did: str, cid: str) -> bytes:
    query = urllib.parse.urlencode({"did": did, "cid": cid})
    with urllib.request.urlopen(f"{pds.url}/xrpc/com.atproto.sync.getBlob?{query}", timeout=30) as response:
        return response.read()


def test_a_video_goes_through_the_service_its_limits_asked_first_and_is_posted_once(
    bluesky_pds: Pds, account: PdsAccount, service: VideoService, clip: Attachment, tmp_path: Path
) -> None:
    waits: List[float] = []
    assert poster(bluesky_pds, account, service, tmp_path, waits).post("Bees", PostOptions(images=(clip,))).confirmed
    assert service.refused == [] and service.asked_limits == 1
    ((did, name, sent),) = service.uploads
    assert (did, name) == (account.did, "clips/bees.mp4")
    (record,) = bluesky_pds.posts(account)
    embed = record["value"]["embed"]
    assert embed["$type"] == "app.bsky.embed.video" and embed["alt"] == clip.alt
    assert stored(bluesky_pds, account.did, embed["video"]["ref"]["$link"]) == sent  # stored by the service
    assert clips.probe(sent)["streams"][0]["codec_name"] == "h264"
    assert waits and all(wait <= 10 for wait in waits)  # asked after pauses while it was processed


def test_a_video_the_service_has_processed_before_is_named_at_once(
    bluesky_pds: Pds, account: PdsAccount, service: VideoService, clip: Attachment, tmp_path: Path
) -> None:
    bot = poster(bluesky_pds, account, service, tmp_path, [])
    assert bot.post("Bees", PostOptions(images=(clip,))).confirmed
    assert bot.post("Bees again", PostOptions(images=(clip,))).confirmed
    first, second = (post["value"]["embed"]["video"]["ref"]["$link"] for post in bluesky_pds.posts(account))
    assert first == second and len(service.uploads) == 2 and service.refused == []


def test_the_day_s_videos_used_up_is_exit_75_and_nothing_is_uploaded_or_posted(
    bluesky_pds: Pds, account: PdsAccount, service: VideoService, clip: Attachment, tmp_path: Path
) -> None:
    service.limits = {"canUpload": False, "remainingDailyVideos": 0, "remainingDailyBytes": 0, "message": "daily limit"}
    with pytest.raises(
        PostError, match="takes no video 1 \\(clips/bees.mp4.*daily limit \\(0 videos and 0 bytes left"
    ) as caught:
        poster(bluesky_pds, account, service, tmp_path, []).post("Bees", PostOptions(images=(clip,)))
    assert caught.value.exit_status == ExitStatus.TEMPORARY_FAILURE and caught.value.kind == ErrorKind.RATE_LIMITED
    assert service.uploads == [] and bluesky_pds.posts(account) == []


def test_an_account_the_service_refuses_is_told_how_to_fix_it(
    bluesky_pds: Pds, account: PdsAccount, service: VideoService, clip: Attachment, tmp_path: Path
) -> None:
    service.limits = {"canUpload": False, "message": "Email not verified"}
    with pytest.raises(PostError) as caught:
        poster(bluesky_pds, account, service, tmp_path, []).post("Bees", PostOptions(images=(clip,)))
    assert caught.value.exit_status == ExitStatus.PERMISSION_DENIED and caught.value.kind == ErrorKind.FORBIDDEN
    assert "Email not verified" in str(caught.value) and "BLUESKY_VIDEO_SERVICE=none" in str(caught.value)
    assert service.uploads == [] and bluesky_pds.posts(account) == []


def test_a_failed_processing_is_exit_65_and_nothing_is_posted(
    bluesky_pds: Pds, account: PdsAccount, service: VideoService, clip: Attachment, tmp_path: Path
) -> None:
    service.fail_processing = True
    with pytest.raises(PostError, match="Bluesky's video service could not process video 1 .*invalid_video") as caught:
        poster(bluesky_pds, account, service, tmp_path, []).post("Bees", PostOptions(images=(clip,)))
    assert caught.value.exit_status == ExitStatus.DATA_ERROR
    assert len(service.uploads) == 1 and bluesky_pds.posts(account) == []


def test_processing_that_never_ends_is_exit_75_and_nothing_is_posted(
    bluesky_pds: Pds, account: PdsAccount, service: VideoService, clip: Attachment, tmp_path: Path
) -> None:
    service.never_done = True
    waits: List[float] = []
    with pytest.raises(PostError, match="Bluesky's video service was still processing video 1") as caught:
        poster(bluesky_pds, account, service, tmp_path, waits).post("Bees", PostOptions(images=(clip,)))
    assert caught.value.exit_status == ExitStatus.TEMPORARY_FAILURE
    assert len(service.uploads) == 1 and bluesky_pds.posts(account) == [] and sum(waits) >= 300


def test_which_video_service_an_account_uses() -> None:
    """Bluesky's own for the accounts it hosts (bsky.social, its *.host.bsky.network PDSes), none
    for a self-hosted PDS unless one is named; none when told."""
    assert video_service_for("auto", "https://morel.us-east.host.bsky.network") == BLUESKY_VIDEO
    assert video_service_for("auto", "https://bsky.social") == BLUESKY_VIDEO
    assert video_service_for("auto", "https://pds.example.org") is None
    assert video_service_for("none", "https://bsky.social") is None
    assert video_service_for("https://video.example.org", "https://pds.example.org") == "https://video.example.org"
    assert service_did(BLUESKY_VIDEO) == "did:web:video.bsky.app"
    assert service_did("http://127.0.0.1:8042") == "did:web:127.0.0.1%3A8042"

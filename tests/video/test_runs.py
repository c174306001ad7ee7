"""The issue's "done when", through bot.py's command line in the test's process: a line with a GIF
and a line with an MP4 posted to X, Mastodon and Bluesky (the real PDS), each once, each moving (a
video on Bluesky), alt text on each, no metadata left; `check` and the dry run say what each
network gets; a hostile video is refused with exit 65 in seconds; a processing failure posts nothing."""

from __future__ import annotations

import time

import clips
import pytest
from conftest import BotHome
from mastodon_server import MastodonEmulator
from pds.harness import Pds, PdsAccount

LINES = (
    "Bees at the lavender ![Bees landing on lavender flowers](bees.mp4)\n"
    "The test card, moving ![A test card whose bars slide left](card.gif)\n"
)


@pytest.fixture(autouse=True, scope="module")  # before the module's clips are made
def ffmpeg() -> None:
    clips.need_ffmpeg()


@pytest.fixture
def account(bluesky_pds: Pds) -> PdsAccount:
    return bluesky_pds.create_account("moving")


@pytest.fixture
def everywhere(home: BotHome, mastodon_emulator: MastodonEmulator, bluesky_pds: Pds, account: PdsAccount) -> BotHome:
    home.write_env(
        **mastodon_emulator.env(),
        POST_TO="x,mastodon,bluesky",
        BLUESKY_HANDLE=account.handle,
        BLUESKY_APP_PASSWORD=bluesky_pds.app_password(account),
        BLUESKY_SERVICE=bluesky_pds.url,
    )
    clips.phone_clip(home.path / "bees.mp4", seconds=2, size="320x180")
    clips.animated_gif(home.path / "card.gif", seconds=1, size="160x120")
    home.write_tweets(LINES)
    return home


def test_a_gif_and_an_mp4_go_to_every_network_once_moving(
    everywhere: BotHome, emulator, mastodon_emulator: MastodonEmulator, bluesky_pds: Pds, account: PdsAccount
) -> None:
    mastodon_emulator.processing_polls = 0  # a run waits a second a question; the polling has its own tests
    emulator.check_after_secs = 0
    for _ in range(2):
        run = everywhere.run("--force")
        assert run.returncode == 0, run.stderr
    assert sorted(post.text for post in emulator.posts) == ["Bees at the lavender", "The test card, moving"]
    by_text = {post.text: post.media[0] for post in emulator.posts}
    assert by_text["Bees at the lavender"].category == "tweet_video"
    assert by_text["The test card, moving"].media_type == "image/gif"
    assert all(media.alt for media in by_text.values())
    clips_on_mastodon = {status.text: status.media[0] for status in mastodon_emulator.statuses}
    assert clips_on_mastodon["Bees at the lavender"]["mime"] == "video/mp4"
    assert clips_on_mastodon["The test card, moving"]["mime"] == "image/gif"
    assert len(mastodon_emulator.statuses) == 2 and len(mastodon_emulator.media) == 2
    posts = bluesky_pds.posts(account)
    assert len(posts) == 2
    for post in posts:
        embed = post["value"]["embed"]
        assert embed["$type"] == "app.bsky.embed.video" and embed["alt"]
    for data in (by_text["Bees at the lavender"].data, clips_on_mastodon["Bees at the lavender"]["data"]):
        assert b"+48.8577" not in data and b"Pixel" not in data


def test_check_and_the_dry_run_say_what_each_network_gets(everywhere: BotHome) -> None:
    check = everywhere.run("check")
    said = check.stdout
    assert "ffmpeg is installed" in said
    assert "bees.mp4 for X: MP4 video, " in said and "2.0 s" in said and "no re-encoding" in said
    assert "card.gif for Bluesky: MP4 video, " in said and "animated GIF made a video" in said
    assert "card.gif for X: GIF, " in said
    dry = everywhere.run("--dry-run", "--force", "--seed", "3")
    assert dry.returncode == 0, dry.stderr
    assert " for Bluesky: " in dry.stderr and ".bluesky.mp4 (MP4 video, " in dry.stderr


def test_a_video_beside_a_picture_is_named_by_check(everywhere: BotHome) -> None:
    everywhere.write_tweets("Both ![Bees](bees.mp4) ![A card](card.gif)\n")
    check = everywhere.run("check")
    assert check.returncode == 65
    assert "line 1 has a video (bees.mp4) beside 1 other" in check.stdout


def test_a_hostile_video_is_refused_with_exit_65_in_seconds(everywhere: BotHome, emulator) -> None:
    (everywhere.path / "bees.mp4").write_bytes(b"\x00\x00\x00\x18ftypisom" + b"\x00" * 5000)
    everywhere.write_tweets("Bees ![Bees](bees.mp4)\n")
    started = time.monotonic()
    run = everywhere.run("--force")
    assert run.returncode == 65, run.stderr
    assert time.monotonic() - started < 10 and "bees.mp4" in run.stderr
    assert emulator.posts == [] and emulator.media == {}


def test_a_processing_failure_posts_nothing_and_exits_65(everywhere: BotHome, emulator) -> None:
    emulator.processing_fails = True
    everywhere.write_env(POST_TO="x")
    everywhere.write_tweets("Bees ![Bees](bees.mp4)\n")
    run = everywhere.run("--force")
    assert run.returncode == 65, run.stderr
    assert "X could not process video 1 (bees.mp4" in run.stderr and emulator.posts == []

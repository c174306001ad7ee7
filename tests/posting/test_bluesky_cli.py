"""POST_TO with Bluesky, end to end through bot.py as cron runs it, against the real reference PDS
(tests/pds) and the Mastodon emulator. Skipped, with the reason in the summary, where the PDS
cannot be installed (no npm); CI requires it (TWITTERBOT_REQUIRE_PDS=1)."""

from __future__ import annotations

import json

import pytest
from conftest import BotHome
from mastodon_server import MastodonEmulator
from pds.harness import Pds, PdsAccount

X_KEYS = ("TWITTER_API_KEY", "TWITTER_API_SECRET", "TWITTER_ACCESS_TOKEN", "TWITTER_ACCESS_TOKEN_SECRET")


@pytest.fixture
def account(bluesky_pds: Pds) -> PdsAccount:
    return bluesky_pds.create_account("cli")


@pytest.fixture
def bluesky_home(home: BotHome, bluesky_pds: Pds, account: PdsAccount) -> BotHome:
    for name in X_KEYS:
        home.settings.pop(name)
    home.write_env(
        POST_TO="bluesky",
        BLUESKY_HANDLE=account.handle,
        BLUESKY_APP_PASSWORD=bluesky_pds.app_password(account),
        BLUESKY_SERVICE=bluesky_pds.url,
    )
    return home


def test_bluesky_alone_posts_with_no_x_keys(bluesky_home: BotHome, bluesky_pds: Pds, account: PdsAccount) -> None:
    result = bluesky_home.run("--force", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [(n["network"], n["outcome"]) for n in report["networks"]] == [("bluesky", "posted")]
    posts = bluesky_pds.posts(account)
    assert [post["value"]["text"] for post in posts] == [report["text"]]
    rkey = posts[0]["uri"].rsplit("/", 1)[1]
    assert report["url"] == f"https://bsky.app/profile/{account.handle}/post/{rkey}"
    assert bluesky_home.emulator.posts == []
    session = bluesky_home.path / "state" / "bluesky-session.json"
    assert session.stat().st_mode & 0o077 == 0  # the saved session is the user's alone


def test_the_account_password_is_refused_and_never_shown(bluesky_home: BotHome, account: PdsAccount) -> None:
    bluesky_home.write_env(BLUESKY_APP_PASSWORD=account.password)
    result = bluesky_home.run("--force")
    assert result.returncode == 78
    assert "BLUESKY_APP_PASSWORD" in result.stderr and "App passwords" in result.stderr
    assert account.password not in result.stderr + result.stdout


def test_mastodon_and_bluesky_both_post_and_thread(
    bluesky_home: BotHome, bluesky_pds: Pds, account: PdsAccount, mastodon_emulator: MastodonEmulator
) -> None:
    bluesky_home.write_env(**mastodon_emulator.env(), POST_TO="mastodon,bluesky")
    check = bluesky_home.run("check", "--online")
    assert check.returncode == 0, check.stdout + check.stderr
    assert f"Bluesky accepts the keys: posting as @{account.handle}" in check.stdout
    assert "Mastodon accepts the keys" in check.stdout

    run = bluesky_home.run("--force")
    assert run.returncode == 0, run.stderr
    assert mastodon_emulator.texts == [bluesky_pds.posts(account)[0]["value"]["text"]]

    bluesky_home.write_env(PROGRESS_FIRST_AFTER="0", PROGRESS_EVERY="1s")
    job = bluesky_home.run("watch", "--name", "count", "--", "sh", "-c", "echo one; sleep 2; echo two")
    assert job.returncode == 0, job.stderr
    thread = [post for post in bluesky_pds.posts(account) if post["value"]["text"].startswith("count")]
    thread.reverse()  # oldest first
    assert len(thread) >= 2
    root = (thread[0]["uri"], thread[0]["cid"])
    for post in thread[1:]:
        reply = post["value"]["reply"]
        assert (reply["root"]["uri"], reply["root"]["cid"]) == root
        assert (reply["parent"]["uri"], reply["parent"]["cid"]) == root  # every post answers the first
    statuses = [status for status in mastodon_emulator.statuses if status.text.startswith("count")]
    assert len(statuses) == len(thread)
    assert all(status.in_reply_to_id == statuses[0].id for status in statuses[1:])

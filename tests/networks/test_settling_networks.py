"""Each network's look-up of an uncertain post and its bot label, against real local servers: the
reference PDS (tests/pds), mastodon-mock and the Mastodon emulator (tests/mastodon_server.py)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from mastodon_server import TOKEN, MastodonEmulator, MockInstance
from pds.harness import Pds

from twitterbot.networks.bluesky.poster import BlueskyPoster, Login
from twitterbot.networks.bluesky.records import new_record_key
from twitterbot.networks.mastodon.poster import MastodonPoster


def bluesky(pds: Pds, tmp_path: Path, name: str) -> BlueskyPoster:
    account = pds.create_account(name)
    return BlueskyPoster(
        Login(account.handle, pds.app_password(account), pds.url, tmp_path / "session.json"),
        timeout=10,
        retries=0,
        sleep=lambda seconds: None,
    )


def test_bluesky_finds_a_post_by_its_record_key_and_not_another_key(bluesky_pds: Pds, tmp_path: Path) -> None:
    poster = bluesky(bluesky_pds, tmp_path, "settle")
    sent_at = datetime.now(timezone.utc)
    posted = poster.post("Hello, settled")
    key = posted.post_id.split()[0].rsplit("/", 1)[-1]
    found = poster.look_up("Hello, settled", sent_at, key)
    assert found.found and found.how == "found by record key" and found.result.url == posted.url
    assert poster.look_up("Hello, settled", sent_at, new_record_key()).found is False
    recent = poster.look_up("Hello, settled", sent_at, None)  # an interrupted post: no key recorded
    assert recent.found and recent.result.url == posted.url
    assert poster.look_up("never sent", sent_at, None).found is False  # the account's whole list was read


def test_bluesky_mark_bot_adds_the_self_label_and_keeps_the_profile(bluesky_pds: Pds, tmp_path: Path) -> None:
    poster = bluesky(bluesky_pds, tmp_path, "botlabel")
    assert poster.bot_label() is False
    assert poster.mark_bot() is True
    assert poster.bot_label() is True
    assert poster.mark_bot() is True  # again: still one label
    profile = bluesky_pds.xrpc(
        "com.atproto.repo.getRecord",
        params={"repo": poster._did, "collection": "app.bsky.actor.profile", "rkey": "self"},
    )
    assert [label["val"] for label in profile["value"]["labels"]["values"]] == ["bot"]


def test_mastodon_settles_by_its_idempotency_key_while_the_server_keeps_it() -> None:
    with MastodonEmulator() as emu:
        poster = MastodonPoster(instance=emu.url, access_token=TOKEN, visibility="unlisted", timeout=5, retries=0)
        sent_at = datetime.now(timezone.utc)
        emu.fail_next("posted_then_drop")
        lost = poster.post("Lost reply")
        assert not lost.confirmed and lost.lookup_key
        found = poster.look_up("Lost reply", sent_at, lost.lookup_key)
        assert found.found and found.how == "found by Idempotency-Key" and emu.texts == ["Lost reply"]
        emu.fail_next("drop")
        never = poster.post("Never arrived")
        again = poster.look_up("Never arrived", sent_at - timedelta(minutes=10), never.lookup_key)  # sent 10 min ago
        assert again.found and "had not arrived" in again.how and emu.texts == ["Lost reply", "Never arrived"]


def test_mastodon_settles_by_recent_statuses_after_the_key_is_forgotten(mastodon_mock: MockInstance) -> None:
    poster = MastodonPoster(
        instance=mastodon_mock.url, access_token=mastodon_mock.token, visibility="unlisted", timeout=5, retries=0
    )
    sent_at = datetime.now(timezone.utc)
    posted = poster.post("Hello & <welcome>, settled")
    an_hour_ago = sent_at - timedelta(hours=1, minutes=1)
    found = poster.look_up("Hello & <welcome>, settled", an_hour_ago, "a-forgotten-key")
    assert found.found and found.result.post_id == posted.post_id
    assert found.how == "found among the account's recent statuses"
    assert [status["id"] for status in mastodon_mock.statuses()].count(
        posted.post_id
    ) == 1  # the look-up posted nothing
    missing = poster.look_up("never sent", an_hour_ago, None)
    assert missing.found in (False, None)


def test_mastodon_mark_bot_sets_the_bot_flag(mastodon_mock: MockInstance) -> None:
    poster = MastodonPoster(
        instance=mastodon_mock.url, access_token=mastodon_mock.token, visibility="unlisted", timeout=5, retries=0
    )
    assert poster.bot_label() is False
    assert poster.mark_bot() is True
    assert poster.bot_label() is True


@pytest.fixture(autouse=True)
def _require_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TWITTERBOT_REQUIRE_PDS", "1")


def test_check_online_notes_the_missing_bot_flag_and_account_mark_bot_sets_it(
    tmp_path: Path, mastodon_mock: MockInstance
) -> None:
    from conftest import BotHome

    home = BotHome(tmp_path / "bot", None)
    home.path.mkdir()
    home.write_env(**mastodon_mock.env(), POST_TO="mastodon")
    home.write_tweets("hello\n")
    before = home.run("check", "--online")
    assert "Mastodon: the account is not marked as a bot: `bot.py account --mark-bot` marks it" in before.stdout
    marked = home.run("account", "--mark-bot")
    assert marked.returncode == 0, marked.stderr
    assert "Mastodon: the account is marked as a bot" in marked.stderr
    after = home.run("check", "--online")
    assert "ok       Mastodon: the account is marked as a bot" in after.stdout
    assert home.run("account").returncode == 64

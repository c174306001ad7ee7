"""Each network's look-up of an uncertain post and its bot label, against real local servers: the
reference PDS (tests/pds), mastodon-mock and the Mastodon emulator (tests/mastodon_server.py); and
the answers a hostile or broken server gives a look-up (the emulators' scripted `Answer`s), which
may only make it say it cannot tell, or fail with a PostError. (X's: tests/networks/test_x_timeline.py.)"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from bluesky_emulator import BlueskyEmulator, Fault
from loopback import Answer
from mastodon_server import TOKEN, MastodonEmulator, MockInstance
from pds.harness import Pds

from twitterbot.errors import PostError
from twitterbot.networks import PLAIN, PostOptions
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


def test_bluesky_finds_a_reply_only_as_the_reply_to_the_post_it_answered(bluesky_pds: Pds, tmp_path: Path) -> None:
    poster = bluesky(bluesky_pds, tmp_path, "replies")
    sent_at = datetime.now(timezone.utc)
    first, second = poster.post("the first question"), poster.post("the second question")
    answer = poster.post("same words", PostOptions(reply_to=first.post_id))
    own = poster.look_up("same words", sent_at, None, PostOptions(reply_to=first.post_id))
    assert own.found and own.result and own.result.post_id == answer.post_id  # its thread's root kept
    other = poster.look_up("same words", sent_at, None, PostOptions(reply_to=second.post_id))
    assert other.found is False, other.how  # the reply to the first is not the second's
    assert poster.look_up("same words", sent_at, None, PLAIN).found is False  # nor a post that answers none
    key = answer.post_id.split()[0].rsplit("/", 1)[-1]
    by_key = poster.look_up("same words", sent_at, key, PostOptions(reply_to=second.post_id))
    assert by_key.found is None, by_key.how  # a record under its key answering another post is no answer


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
        found = poster.look_up("Lost reply", sent_at, lost.lookup_key, PLAIN)
        assert found.found and found.how == "found among the account's recent statuses" and emu.texts == ["Lost reply"]
        emu.fail_next("drop")
        never = poster.post("Never arrived")
        ten_minutes_ago = sent_at - timedelta(minutes=10)
        unknown = poster.look_up("Never arrived", ten_minutes_ago, never.lookup_key)  # what it was sent with: not kept
        assert unknown.found is False and emu.texts == ["Lost reply"]  # so nothing is sent again
        again = poster.look_up("Never arrived", ten_minutes_ago, never.lookup_key, PLAIN)
        assert again.found and "sent again with its Idempotency-Key" in again.how and "found" not in again.how
        assert emu.texts == ["Lost reply", "Never arrived"]


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


# -- hostile answers: a look-up that cannot read its answer says so, never raises anything else -----


def mastodon_poster(emu: MastodonEmulator) -> MastodonPoster:
    return MastodonPoster(instance=emu.url, access_token=TOKEN, visibility="unlisted", timeout=5, retries=0)


AN_HOUR_AGO = timedelta(hours=1, minutes=1)  # past the Idempotency-Key: the statuses are read


def test_mastodon_reads_the_account_s_statuses_after_the_key_is_forgotten() -> None:
    with MastodonEmulator() as emu:
        poster = mastodon_poster(emu)
        posted = poster.post("Hello & <welcome>")
        sent_at = datetime.now(timezone.utc) - timedelta(seconds=5)
        found = poster.look_up("Hello & <welcome>", sent_at, None)
        assert found.found and found.result.post_id == posted.post_id
        assert poster.look_up("never sent", sent_at, None).found is False  # the account's whole list
        assert emu.texts == ["Hello & <welcome>"]


@pytest.mark.parametrize(
    "answer",
    [
        Answer({"id": "1"}),
        Answer("a status"),
        Answer([5, None]),
        Answer([{"id": None, "created_at": "soon", "content": 5}]),  # may be the one: cannot tell
        Answer(None),
        Answer(b"<html>Bad Gateway</html>"),
        Answer([], status=500),
        Answer(size=20 * 1024 * 1024),
    ],
    ids=lambda answer: repr(answer.body)[:30] + f"/{answer.status}/{answer.size}",
)
def test_mastodon_cannot_tell_from_statuses_it_cannot_read(answer: Answer) -> None:
    with MastodonEmulator() as emu:
        poster = mastodon_poster(emu)
        emu.answer_next("statuses", answer)
        try:
            result = poster.look_up("Hello", datetime.now(timezone.utc) - AN_HOUR_AGO, None)
        except PostError as exc:
            assert exc.summary and (not answer.size or "more than 8 MB" in exc.summary)
        else:
            assert result.found is None, result


@pytest.mark.parametrize("answer", [Answer([]), Answer({"username": "pibot"}), Answer({"id": None}), Answer("me")])
def test_mastodon_cannot_tell_when_the_account_cannot_be_read(answer: Answer) -> None:
    with MastodonEmulator() as emu:
        emu.answer_next("me", answer)
        assert mastodon_poster(emu).look_up("Hello", datetime.now(timezone.utc) - AN_HOUR_AGO, None).found is None


def bluesky_emulated(emu: BlueskyEmulator, tmp_path: Path) -> BlueskyPoster:
    return BlueskyPoster(
        Login(emu.handle, emu.password, emu.url, tmp_path / "session.json"),
        timeout=5,
        retries=0,
        sleep=lambda seconds: None,
    )


@pytest.mark.parametrize(
    "fault",
    [
        Fault.server_error(),  # a refusal under getRecord was an exception that ended the run
        Fault(status=200, body=[]),
        Fault(status=200, body={"uri": None, "value": 5}),
        Fault(answer=Answer(b"<html>Bad Gateway</html>")),
        Fault(answer=Answer(size=20 * 1024 * 1024)),
    ],
    ids=["500", "list", "no-uri", "html", "20MB"],
)
def test_bluesky_cannot_look_a_record_key_up_in_an_answer_it_cannot_read(tmp_path: Path, fault: Fault) -> None:
    with BlueskyEmulator() as emu:
        poster = bluesky_emulated(emu, tmp_path)
        posted = poster.post("Hello")
        key = posted.post_id.split()[0].rsplit("/", 1)[-1]
        emu.fail("com.atproto.repo.getRecord", fault)
        with pytest.raises(PostError):
            poster.look_up("Hello", datetime.now(timezone.utc), key)
        assert poster.look_up("Hello", datetime.now(timezone.utc), key).found is True  # asked again


def test_bluesky_cannot_tell_from_a_record_under_its_key_with_other_text(tmp_path: Path) -> None:
    """The key is the post's alone: another text under it is no answer, and never "not found"."""
    with BlueskyEmulator() as emu:
        poster = bluesky_emulated(emu, tmp_path)
        key = poster.post("Hello").post_id.split()[0].rsplit("/", 1)[-1]
        emu.records[key]["value"]["text"] = "Goodbye"
        assert poster.look_up("Hello", datetime.now(timezone.utc), key).found is None


def listed(*values: dict) -> Fault:
    """listRecords answering with these record values (under made-up keys)."""
    records = [
        {
            "uri": f"at://did:plc:emulatoraliceaaaaaaaaaaa/app.bsky.feed.post/3k{number:011d}",
            "cid": "bafyrei",
            "value": value,
        }
        for number, value in enumerate(values)
    ]
    return Fault(status=200, body={"records": records})


@pytest.mark.parametrize(
    "fault",
    [
        listed({"$type": "app.bsky.feed.post", "text": "Hello", "createdAt": 5}),
        listed({"$type": "app.bsky.feed.post", "text": "Hello", "createdAt": "yesterday"}),
        listed({"$type": "app.bsky.feed.post", "text": 5, "createdAt": "2026-01-01T00:00:00Z"}),
        Fault(status=200, body={"records": "Hello"}),
        Fault(status=200, body=[]),
        Fault(answer=Answer(b"\x00\x01")),
        Fault(answer=Answer(size=20 * 1024 * 1024, gzip=True)),
    ],
    ids=["time-number", "time-words", "text-number", "records-string", "list", "binary", "20MB-gzip"],
)
def test_bluesky_cannot_tell_from_recent_posts_it_cannot_read(tmp_path: Path, fault: Fault) -> None:
    with BlueskyEmulator() as emu:
        poster = bluesky_emulated(emu, tmp_path)
        poster.account()
        emu.fail("com.atproto.repo.listRecords", fault)
        try:
            result = poster.look_up("Hello", datetime.now(timezone.utc) - timedelta(days=1), None)
        except PostError as exc:
            assert exc.summary
        else:
            assert result.found is None, result


def test_a_bluesky_post_answered_with_no_json_is_uncertain_not_an_exception(tmp_path: Path) -> None:
    """createRecord's answer cannot be read: the record may exist, so the post is uncertain (and
    looked up by its key), as for a lost answer; it ended the run with an exception."""
    with BlueskyEmulator() as emu:
        poster = bluesky_emulated(emu, tmp_path)
        emu.fail("com.atproto.repo.createRecord", Fault(answer=Answer(b"<html>Bad Gateway</html>")))
        result = poster.post("Hello")
        assert not result.confirmed and result.lookup_key and "could not be read" in result.uncertain


@pytest.mark.parametrize(
    "value",
    [{"$type": "app.example.thing", "text": {"nested": "Hello"}}, {"$type": "app.example.thing"}],
    ids=["text-object", "no-text"],
)
def test_bluesky_cannot_tell_from_a_record_of_another_kind_under_its_key(tmp_path: Path, value: dict) -> None:
    """A record the SDK has no model for is a dict-like that refuses to be compared: the look-up
    must not compare it (the fuzz met `NotImplementedError` there) and cannot tell."""
    with BlueskyEmulator() as emu:
        poster = bluesky_emulated(emu, tmp_path)
        key = poster.post("Hello").post_id.split()[0].rsplit("/", 1)[-1]
        uri = f"at://{emu.did}/app.bsky.feed.post/{key}"
        emu.fail("com.atproto.repo.getRecord", Fault(status=200, body={"uri": uri, "cid": "bafyrei", "value": value}))
        assert poster.look_up("Hello", datetime.now(timezone.utc), key).found is None

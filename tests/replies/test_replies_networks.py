"""Replies end to end through the real client libraries: tweepy against the X emulator's
``GET /2/users/:id/mentions`` and Mastodon.py against the Mastodon emulator's notifications. A
mention matching a rule gets exactly one reply, threaded under it; a second run answers nothing and
reads once; a lost answer is never sent again; killed runs (SIGKILL at random moments, the
emulators losing answers after posting) never answer a mention twice. Two copies of the bot
mentioning each other: on Mastodon two emulators with federation between them (`Federation`); the X
emulator holds one account, so on X that rule is tested with the chat network (test_replies.py)."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Dict, Set, Tuple

import pytest
from bluesky_emulator import BlueskyEmulator
from conftest import REPO, BotHome
from mastodon_server import MastodonEmulator
from x_emulator import XEmulator

RULES = {"(?<=\\s|^)hello\\b": "hi there!", "🐸": "ribbit {unlisted}", ".": ""}


@pytest.fixture
def replying(home: BotHome, mastodon_emulator: MastodonEmulator) -> BotHome:
    (home.path / "replies.json").write_text(json.dumps(RULES, ensure_ascii=False), encoding="utf-8")
    home.write_env(
        **mastodon_emulator.env(),
        REPLY_RULES=str(home.path / "replies.json"),
        MIN_POST_GAP="0",
        REPLY_COOLDOWN="0",
    )
    return home


def test_on_x_a_mention_gets_one_reply_threaded_under_it_and_a_second_run_reads_once(
    replying: BotHome, emulator: XEmulator
) -> None:
    replying.write_env(POST_TO="x")
    asked = emulator.mention("@pi_bot hello there", by="ada", ago=60)
    emulator.mention("@pi_bot something else", by="grace", ago=30)  # the catch-all "": no reply
    first = replying.run("replies")
    assert first.returncode == 0, first.stderr
    assert [(post.text, post.reply_to) for post in emulator.posts] == [("@ada hi there!", asked.id)]
    before = emulator.reads
    second = replying.run("replies")
    assert second.returncode == 0, second.stderr
    assert len(emulator.posts) == 1 and emulator.reads - before == 1


_IMPORTED = (
    "import sys\n"
    "seen = set()\n"
    "sys.addaudithook(lambda event, args: event == 'import' and seen.add(args[0]))\n"
    "from twitterbot.cli import main\n"
    "status = main(sys.argv[1:])\n"
    "names = ('tweepy', 'twitterbot.networks.x.poster', 'twitterbot.networks.x.media', 'twitterbot.pictures',\n"
    "         'twitterbot.delivery.deliver', 'twitterbot.posting.scheduled', 'twitterbot.posting.commands',\n"
    "         'mastodon', 'twitterbot.networks.mastodon.poster', 'twitterbot.networks.mastodon.media',\n"
    "         'atproto_client', 'twitterbot.networks.bluesky.poster')\n"
    "print('imported:', ' '.join(name for name in names if name in seen))\n"
    "sys.exit(status)\n"
)


def _imports(home: BotHome) -> list:
    """`bot.py replies` in a fresh Python: which of the poster's and the scheduled post's modules it imported."""
    result = subprocess.run(
        [sys.executable, "-c", _IMPORTED, "--env-file", str(home.env_file), "-q", "replies"],
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin", "HOME": str(home.path), "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()[-1].split()[1:]


def test_on_x_a_round_with_nothing_new_reads_once_without_tweepy_or_a_poster(
    replying: BotHome, emulator: XEmulator
) -> None:
    replying.write_env(POST_TO="x")
    assert replying.run("replies").returncode == 0  # the first round: the account's id, the cursor
    before = emulator.reads
    assert _imports(replying) == []  # the timer's usual round: one signed GET, no client library
    assert emulator.reads - before == 1
    emulator.mention("@pi_bot hello", by="ada", ago=5)
    assert "tweepy" in _imports(replying)  # a reply is due: the poster is made (the assertion can fail)
    assert [post.text for post in emulator.posts] == ["@ada hi there!"]


def test_on_mastodon_a_round_with_nothing_new_reads_once_without_mastodon_py_or_a_poster(
    replying: BotHome, mastodon_emulator: MastodonEmulator
) -> None:
    replying.write_env(POST_TO="mastodon")
    assert replying.run("replies").returncode == 0  # the first round: the account's id, the cursor
    before = mastodon_emulator.reads
    assert _imports(replying) == []  # the timer's usual round: one bearer-token GET, no client library
    assert mastodon_emulator.reads - before == 1
    assert mastodon_emulator.seen[-1].path == "/api/v1/notifications"
    mastodon_emulator.mention("@pibot hello", by="ada", ago=5)
    assert "mastodon" in _imports(replying)  # a reply is due: the poster is made (the assertion can fail)
    assert [status.text for status in mastodon_emulator.statuses] == ["@ada hi there!"]


def test_on_bluesky_a_round_with_nothing_new_and_a_saved_session_reads_once_without_the_sdk(
    replying: BotHome,
) -> None:
    with BlueskyEmulator() as bluesky:
        bluesky.canned[LIST] = {"notifications": []}
        replying.write_env(
            POST_TO="bluesky",
            BLUESKY_HANDLE=bluesky.handle,
            BLUESKY_APP_PASSWORD=bluesky.password,
            BLUESKY_SERVICE=bluesky.url,
        )
        assert "atproto_client" in _imports(replying)  # the first round: no saved session, the SDK logs in
        before = dict(bluesky.calls)
        assert _imports(replying) == []  # the timer's usual round: one GET with the saved session
        made = {method: n - before.get(method, 0) for method, n in bluesky.calls.items()}
        assert {method: n for method, n in made.items() if n} == {LIST: 1}
        bluesky.canned[LIST] = {"notifications": [_notification(bluesky, "hello bot")]}
        assert "atproto_client" in _imports(replying)  # a reply is due: the poster is made (the assertion can fail)
        assert [post["value"]["text"] for post in bluesky.posts()] == ["hi there!"]


LIST = "app.bsky.notification.listNotifications"


def _notification(bluesky: BlueskyEmulator, text: str) -> dict:
    """A mention of the emulator's account, as the AppView lists it, said a minute ago."""
    at = (datetime.now(timezone.utc) - timedelta(minutes=1)).isoformat(timespec="milliseconds")
    at = at.replace("+00:00", "Z")
    return {
        "uri": "at://did:plc:ada/app.bsky.feed.post/3ada",
        "cid": "bafyreiada",
        "author": {"did": "did:plc:ada", "handle": "ada.test"},
        "reason": "mention",
        "record": {"$type": "app.bsky.feed.post", "text": f"@{bluesky.handle} {text}", "createdAt": at},
        "isRead": False,
        "indexedAt": at,
    }


def test_on_x_a_reply_whose_answer_was_lost_is_never_sent_again(replying: BotHome, emulator: XEmulator) -> None:
    replying.write_env(POST_TO="x", API_TIMEOUT="0.5")
    emulator.mention("@pi_bot hello", by="ada", ago=60)
    emulator.fail_next("posted_then_drop")
    replying.run("replies")
    for _ in range(2):
        replying.run("replies")
    assert [post.text for post in emulator.posts] == ["@ada hi there!"]


def test_on_mastodon_a_mention_gets_one_reply_naming_its_author_never_more_public(
    replying: BotHome, mastodon_emulator: MastodonEmulator
) -> None:
    replying.write_env(POST_TO="mastodon")
    private = mastodon_emulator.mention("@pibot 🐸", by="ada", visibility="direct", ago=60)
    public = mastodon_emulator.mention("@pibot 🐸", by="grace", domain="elsewhere.example", ago=30)
    first = replying.run("replies")
    assert first.returncode == 0, first.stderr
    replies = [(status.text, status.in_reply_to_id, status.visibility) for status in mastodon_emulator.statuses]
    assert replies == [
        ("@ada ribbit", private.id, "direct"),
        ("@grace@elsewhere.example ribbit", public.id, "unlisted"),
    ]
    before = mastodon_emulator.reads
    assert replying.run("replies").returncode == 0
    assert len(mastodon_emulator.statuses) == 2 and mastodon_emulator.reads - before == 1


def test_on_x_and_mastodon_each_mention_is_answered_on_its_own_network(
    replying: BotHome, emulator: XEmulator, mastodon_emulator: MastodonEmulator
) -> None:
    replying.write_env(POST_TO="x,mastodon")
    on_x = emulator.mention("@pi_bot hello", by="ada", ago=60)
    on_mastodon = mastodon_emulator.mention("@pibot hello", by="ada", ago=60)
    ran = replying.run("replies")
    assert ran.returncode == 0, ran.stderr
    assert [(post.text, post.reply_to) for post in emulator.posts] == [("@ada hi there!", on_x.id)]
    assert [(status.text, status.in_reply_to_id) for status in mastodon_emulator.statuses] == [
        ("@ada hi there!", on_mastodon.id)
    ]


@pytest.mark.slow
def test_killed_runs_with_lost_answers_never_answer_a_mention_twice(tmp_path: Path) -> None:
    rng = random.Random(47)
    figures: Counter = Counter()
    with XEmulator(duplicate_check=False, slow_seconds=1.0) as x, MastodonEmulator(slow_seconds=1.0) as mastodon:
        home = BotHome(tmp_path / "bot", x)
        home.path.mkdir()
        (home.path / "replies.json").write_text(json.dumps(RULES, ensure_ascii=False), encoding="utf-8")
        home.write_env(
            **x.env(),
            **mastodon.env(),
            POST_TO="x,mastodon",
            REPLY_RULES=str(home.path / "replies.json"),
            REPLY_COOLDOWN="0",
            LOOK_UP_UNCERTAIN="no",
            API_RETRIES="1",
            API_TIMEOUT="0.5",
        )
        asked = Counter()
        for number in range(40):
            for _ in range(rng.randint(0, 3)):
                x.mention(f"@pi_bot hello {number}", by=f"person{rng.randint(0, 20)}", ago=60)
                mastodon.mention(f"@pibot hello {number}", by=f"person{rng.randint(0, 20)}", ago=60)
                asked["mentions"] += 2
            x._script.clear()
            mastodon._script.clear()
            fault = rng.choice([None, None, "posted_then_drop", "posted_then_slow", "slow"])
            if fault:
                x.fail_next(fault)
                mastodon.fail_next(fault)
            process = home.start("replies")
            if rng.random() < 0.6:
                time.sleep(rng.uniform(0.2, 1.5))
                if process.poll() is None:
                    process.send_signal(signal.SIGKILL)
                    figures["kills"] += 1
            try:
                process.communicate(timeout=60)
            except subprocess.TimeoutExpired:  # pragma: no cover - a hung run is a failure too
                process.kill()
                raise
            figures[f"exit {process.returncode}"] += 1
        x_answered = Counter(post.reply_to for post in x.posts if post.reply_to)
        mastodon_answered = Counter(status.in_reply_to_id for status in mastodon.statuses if status.in_reply_to_id)
    twice = [id_ for id_, count in (x_answered + mastodon_answered).items() if count > 1]
    assert twice == [], (twice, figures)
    assert figures["kills"] > 0 and sum(x_answered.values()) > 0, figures


def test_on_mastodon_bots_and_nobot_profiles_are_left_alone_and_stop_is_kept(
    replying: BotHome, mastodon_emulator: MastodonEmulator
) -> None:
    replying.write_env(POST_TO="mastodon")
    mastodon_emulator.mention("@pibot hello", by="robo", bot=True, ago=90)
    mastodon_emulator.mention("@pibot hello", by="shy", note="<p>Please, <a href='#'>#NoBot</a></p>", ago=60)
    mastodon_emulator.mention("@pibot stop", by="ada", ago=30)
    mastodon_emulator.mention("@pibot hello", by="ada", ago=10)
    ran = replying.run("replies")
    assert ran.returncode == 0, ran.stderr
    assert mastodon_emulator.statuses == []
    check = replying.run("check")
    assert "@ada on mastodon said stop" in check.stdout + check.stderr


SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" fill="red"/></svg>'


def test_on_mastodon_a_response_s_tags_warn_and_keep_it_direct(
    replying: BotHome, mastodon_emulator: MastodonEmulator
) -> None:
    (replying.path / "replies.json").write_text(
        json.dumps({"ending": "{cut spoiler}it ends well {direct}{lang de}", ".": ""}), encoding="utf-8"
    )
    replying.write_env(POST_TO="mastodon")
    asked = mastodon_emulator.mention("@pibot how is the ending?", by="ada", ago=60)
    ran = replying.run("replies")
    assert ran.returncode == 0, ran.stderr
    [status] = mastodon_emulator.statuses
    assert (status.text, status.spoiler_text, status.visibility, status.language, status.in_reply_to_id) == (
        "@ada it ends well",
        "spoiler",
        "direct",
        "de",
        asked.id,
    )


@pytest.mark.usefixtures("rsvg")
def test_on_x_a_response_s_svg_is_drawn_and_posted_as_its_picture(replying: BotHome, emulator: XEmulator) -> None:
    (replying.path / "replies.json").write_text(
        json.dumps({"card": "{svg " + SVG + " A red card} here is your card", ".": ""}), encoding="utf-8"
    )
    replying.write_env(POST_TO="x")
    asked = emulator.mention("@pi_bot a card please", by="ada", ago=60)
    ran = replying.run("replies")
    assert ran.returncode == 0, ran.stderr
    [post] = emulator.posts
    assert (post.text, post.reply_to) == ("@ada here is your card", asked.id)
    assert [(media.media_type, media.alt) for media in post.media] == [("image/png", "A red card")]


def test_a_response_with_an_unknown_tag_is_the_rule_s_data_error_and_the_mention_waits(
    replying: BotHome, mastodon_emulator: MastodonEmulator
) -> None:
    (replying.path / "replies.json").write_text(json.dumps({"hello": "hi {imgg x}", ".": ""}), encoding="utf-8")
    replying.write_env(POST_TO="mastodon")
    mastodon_emulator.mention("@pibot hello", by="ada", ago=60)
    ran = replying.run("replies")
    assert ran.returncode == 65, ran.stderr
    assert 'replies.json rule "hello"' in ran.stderr and "{imgg x}" in ran.stderr
    assert "Traceback" not in ran.stderr and mastodon_emulator.statuses == []
    check = replying.run("check")
    assert check.returncode != 0 and 'replies.json rule "hello" has {imgg x}' in check.stdout + check.stderr
    (replying.path / "replies.json").write_text(json.dumps({"hello": "hi {public}", ".": ""}), encoding="utf-8")
    fixed = replying.run("replies")
    assert fixed.returncode == 0, fixed.stderr
    assert [status.text for status in mastodon_emulator.statuses] == ["@ada hi"]  # it waited for the fix


class Federation:
    """Two Mastodon servers, one bot on each, and what federation does between them: each status
    a bot posts reaches the other server as a remote account's mention, answering the copy there
    of the status it answers."""

    def __init__(self, one: MastodonEmulator, two: MastodonEmulator) -> None:
        self.servers = (one, two)
        self.copies: Dict[int, Dict[str, str]] = {0: {}, 1: {}}  # on server i: copy's id -> original's id
        self.sent: Set[Tuple[str, str]] = set()

    def deliver(self) -> None:
        for index, source in enumerate(self.servers):
            target = self.servers[1 - index]
            for status in list(source.statuses):
                if (source.domain, status.id) in self.sent:
                    continue
                self.sent.add((source.domain, status.id))
                answered = self.copies[index].get(status.in_reply_to_id or "")
                copy = target.mention(status.text, by=source.username, domain=source.domain, reply_to=answered)
                self.copies[1 - index][copy.id] = status.id


def test_on_mastodon_two_copies_of_the_bot_on_two_servers_stop_within_one_reply_each(
    tmp_path: Path, emulator: XEmulator
) -> None:
    """Neither account has the bot flag: the conversation rule stops them (REPLY_COOLDOWN 0)."""
    with (
        MastodonEmulator(username="one", domain="one.social") as one,
        MastodonEmulator(username="two", domain="two.social") as two,
    ):
        homes = []
        for server in (one, two):
            home = BotHome(tmp_path / server.username, emulator)
            home.path.mkdir()
            home.write_tweets("a line\n")
            (home.path / "replies.json").write_text(json.dumps({".": "and hello to you"}), encoding="utf-8")
            home.write_env(
                **server.env(), POST_TO="mastodon", REPLY_RULES=str(home.path / "replies.json"), REPLY_COOLDOWN="0"
            )
            homes.append(home)
        federation = Federation(one, two)
        one.mention("@two@two.social hello, other bot", by="one")  # one's own status starts it
        for _ in range(3):
            for home in reversed(homes):
                federation.deliver()
                ran = home.run("replies")
                assert ran.returncode == 0, ran.stderr
        federation.deliver()
        assert [status.text for status in two.statuses] == ["@one@one.social and hello to you"]
        assert len(one.statuses) == 2  # its first status and one reply


def test_on_x_two_people_asking_a_fixed_rule_both_get_it_and_a_duplicate_is_failed_not_answered(
    replying: BotHome, emulator: XEmulator
) -> None:
    (replying.path / "replies.json").write_text(json.dumps({"time": "tea time"}), encoding="utf-8")
    replying.write_env(POST_TO="x")
    emulator.mention("@pi_bot what time is it", by="ada", ago=90)
    emulator.mention("@pi_bot time?", by="bo", ago=60)
    assert replying.run("replies").returncode == 0
    assert [post.text for post in emulator.posts] == ["@ada tea time", "@bo tea time"]  # as CBDQ began them
    emulator.mention("@pi_bot time again", by="ada", ago=30)
    again = replying.run("replies")
    assert again.returncode == 65 and "duplicate" in again.stderr
    assert len(emulator.posts) == 2
    history = replying.run("history").stdout.splitlines()
    [third] = [line for line in history if "time again" in line]
    assert " failed " in third and "duplicate" in third and " replied " not in third
    assert sum(" replied " in line for line in history) == 2


def test_on_x_a_flood_of_mentions_is_read_and_billed_once_and_answered_oldest_first(
    replying: BotHome, emulator: XEmulator
) -> None:
    replying.write_env(POST_TO="x", MAX_REPLIES_PER_RUN="10")
    asked = [
        emulator.mention(f"@pi_bot hello {number}", by=f"person{number}", ago=3000 - number) for number in range(250)
    ]
    assert replying.run("replies").returncode == 0
    assert emulator.mention_reads == 3  # 250 mentions: three pages of 100, each billed
    assert [post.reply_to for post in emulator.posts] == [post.id for post in asked[:10]]
    ran = replying.run("replies")
    assert ran.returncode == 0 and "240 left for the next round" not in ran.stderr
    assert emulator.mention_reads == 4  # nothing new: one read; the 240 kept are not read again
    assert [post.reply_to for post in emulator.posts] == [post.id for post in asked[:20]]

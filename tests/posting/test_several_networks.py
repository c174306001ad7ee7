"""POST_TO with several networks, end to end through bot.py as cron runs it: X through tweepy
against the X emulator, Mastodon through Mastodon.py against the Mastodon emulator."""

from __future__ import annotations

import json
import sqlite3

import pytest
from conftest import BotHome
from mastodon_server import MastodonEmulator
from x_emulator import XEmulator


@pytest.fixture
def both(home: BotHome, mastodon_emulator: MastodonEmulator) -> BotHome:
    home.write_env(**mastodon_emulator.env(), POST_TO="x,mastodon")
    return home


def attempts(home: BotHome) -> list:
    with sqlite3.connect(home.path / "state" / "history.sqlite3") as conn:
        return conn.execute("SELECT network, outcome, source, text FROM attempts ORDER BY id").fetchall()


def test_mastodon_alone_needs_no_x_keys(home: BotHome, mastodon_emulator: MastodonEmulator) -> None:
    for name in ("TWITTER_API_KEY", "TWITTER_API_SECRET", "TWITTER_ACCESS_TOKEN", "TWITTER_ACCESS_TOKEN_SECRET"):
        home.settings.pop(name)
    home.write_env(**mastodon_emulator.env(), POST_TO="mastodon")
    result = home.run("--force", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["action"] == "posted" and [n["network"] for n in report["networks"]] == ["mastodon"]
    assert mastodon_emulator.texts == [report["text"]]
    assert report["url"] == mastodon_emulator.status_url(mastodon_emulator.statuses[0].id)
    assert mastodon_emulator.statuses[0].visibility == "unlisted"
    assert home.emulator.posts == []
    history = home.run("history")
    assert report["url"] in history.stdout and "x.com" not in history.stdout


def test_missing_keys_name_only_the_networks_in_post_to(home: BotHome) -> None:
    home.write_env(POST_TO="x,mastodon")
    result = home.run("--force")
    assert result.returncode == 78
    assert "MASTODON_INSTANCE, MASTODON_ACCESS_TOKEN not set" in result.stderr
    assert "TWITTER_API_KEY" not in result.stderr


def test_one_pick_goes_to_both_and_counts_once(both: BotHome, mastodon_emulator: MastodonEmulator) -> None:
    both.write_env(MAX_POSTS_PER_DAY="1", MIN_POST_GAP="0")
    first = both.run("--force", "--json")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert [(n["network"], n["outcome"]) for n in report["networks"]] == [("x", "posted"), ("mastodon", "posted")]
    assert both.emulator.texts == mastodon_emulator.texts == [report["text"]]
    second = both.run("--force", "--json")  # the cap: one post (to two networks) in 24 hours
    assert second.returncode == 0 and json.loads(second.stdout)["action"] == "skipped"
    assert "1 posts in the last 24 hours" in json.loads(second.stdout)["reason"]


def test_a_network_down_gets_the_line_next_run_once(both: BotHome, mastodon_emulator: MastodonEmulator) -> None:
    mastodon_emulator.fail_next("server_error")
    first = both.run("--force")
    assert first.returncode == 75, first.stderr  # said plainly: Mastodon failed
    assert "a later run sends it there" in first.stderr
    assert len(both.emulator.posts) == 1 and mastodon_emulator.texts == []
    line = both.emulator.texts[0]

    second = both.run()  # the roll hits (1 in 1) but the gap holds: only the catch-up is sent
    assert second.returncode == 0, second.stderr
    assert "catching up on Mastodon" in second.stderr
    assert mastodon_emulator.texts == [line] and len(both.emulator.posts) == 1

    third = both.run()
    assert "catching up" not in third.stderr
    assert mastodon_emulator.texts == [line] and len(both.emulator.posts) == 1
    assert [(net, outcome, source) for net, outcome, source, _ in attempts(both)] == [
        ("x", "posted", "scheduled"),
        ("mastodon", "temporary", "scheduled"),
        ("mastodon", "posted", "catch_up"),
    ]


def test_a_refusal_for_good_is_not_caught_up(both: BotHome, mastodon_emulator: MastodonEmulator) -> None:
    mastodon_emulator.fail_next("unauthorized")
    first = both.run("--force")
    assert first.returncode == 77, first.stderr
    second = both.run()
    assert "catching up" not in second.stderr and mastodon_emulator.texts == []


def test_a_line_too_long_for_x_goes_to_mastodon_only(both: BotHome, mastodon_emulator: MastodonEmulator) -> None:
    long_line = "word " * 70  # 350 characters: over X's 280, under Mastodon's 500
    both.write_tweets(long_line + "\n")
    dry = both.run("--dry-run", "--force")
    assert dry.returncode == 0, dry.stderr
    assert "not to X: too long" in dry.stderr and "to Mastodon (" in dry.stderr
    check = both.run("check")
    assert "line 1 is too long for X" in check.stdout and "posted to the other networks only" in check.stdout
    result = both.run("--force", "--json")
    assert result.returncode == 0, result.stderr
    outcomes = {n["network"]: n["outcome"] for n in json.loads(result.stdout)["networks"]}
    assert outcomes == {"x": "too_long", "mastodon": "posted"}
    assert both.emulator.posts == [] and mastodon_emulator.texts == [long_line.strip()]


def test_a_line_that_fits_no_network_is_a_problem_of_the_file(both: BotHome) -> None:
    both.write_tweets("ok line\n" + "x" * 600 + "\n")
    check = both.run("check")
    assert "line 2 fits none of POST_TO's networks (x counts 600 of 280; mastodon counts 600 of 500)" in check.stdout


def test_check_online_names_each_account(both: BotHome, mastodon_emulator: MastodonEmulator) -> None:
    result = both.run("check", "--online")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "X accepts the keys: posting as @pi_bot" in result.stdout
    assert f"Mastodon accepts the keys: posting as @{mastodon_emulator.username}@" in result.stdout


def test_a_progress_job_threads_on_both(
    both: BotHome, mastodon_emulator: MastodonEmulator, emulator: XEmulator
) -> None:
    both.write_env(PROGRESS_FIRST_AFTER="0", PROGRESS_EVERY="1s")
    result = both.run("watch", "--name", "count", "--", "sh", "-c", "echo one; sleep 2; echo two")
    assert result.returncode == 0, result.stderr
    assert len(mastodon_emulator.statuses) >= 2 and len(emulator.posts) == len(mastodon_emulator.statuses)
    root = mastodon_emulator.statuses[0]
    assert all(status.in_reply_to_id == root.id for status in mastodon_emulator.statuses[1:])
    x_root = emulator.posts[0]
    assert all(post.reply_to == x_root.id for post in emulator.posts[1:])


def test_a_lost_reply_is_retried_with_the_same_key_and_posts_once(
    both: BotHome, mastodon_emulator: MastodonEmulator
) -> None:
    both.write_env(API_RETRIES="1")
    mastodon_emulator.fail_next("posted_then_drop")
    result = both.run("--force", "--json")
    assert result.returncode == 0, result.stderr
    assert [n["outcome"] for n in json.loads(result.stdout)["networks"]] == ["posted", "posted"]
    assert len(mastodon_emulator.statuses) == 1  # the retry got the first status back, not a second


def test_a_lost_reply_with_no_retry_left_counts_as_posted(both: BotHome, mastodon_emulator: MastodonEmulator) -> None:
    mastodon_emulator.fail_next("posted_then_drop")
    first = both.run("--force", "--json")
    assert first.returncode == 75
    assert [n["outcome"] for n in json.loads(first.stdout)["networks"]] == ["posted", "uncertain"]
    second = both.run()  # never caught up: it may be there already
    assert "catching up" not in second.stderr and len(mastodon_emulator.statuses) == 1

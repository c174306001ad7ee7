"""A run the roll skips, counted in the caller's process (the flock's daemon): the skip its own run
would count, or, with nothing written, why that run needs a process of its own. And `--roll N`,
which starts a run with its roll made."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Dict

import pytest
from conftest import REGISTRY, BotHome

from twitterbot.lock import run_lock
from twitterbot.posting.quiet import skip_in_place
from twitterbot.settings.loading import Config, load_config
from twitterbot.state.skips import SKIPS_FILE


def config_of(home: BotHome) -> Config:
    return load_config(REGISTRY, project_dir=home.path, env_file=home.env_file, environ={})


def written(config: Config) -> Dict[str, bytes]:
    """Every file of the bot's state folder, byte for byte."""
    folder = config.state.path
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()}


def rows(config: Config, table: str) -> list:
    with sqlite3.connect(config.state.history) as conn:
        return conn.execute(f"SELECT * FROM {table}").fetchall()


@pytest.fixture
def posted_once(home: BotHome) -> BotHome:
    """A bot of 1-in-4 that has posted once (its history made), as the daemon finds it."""
    home.write_env(TWEET_ONE_IN="4")
    assert home.run("--roll", "0").returncode == 0
    assert len(home.emulator.texts) == 1
    return home


def test_a_missed_roll_is_counted_as_the_bot_s_own_run_would_count_it(posted_once: BotHome) -> None:
    config = config_of(posted_once)
    runs_before = rows(config, "runs")
    done = skip_in_place(config, 2)
    assert not isinstance(done, str), done
    assert (done.action, done.reason, done.roll, done.one_in, done.streak) == (
        "skipped",
        "rolled 2 (posts on 0 of 1-in-4)",
        2,
        4,
        1,
    )
    # The bot's own run with the next miss takes the same streak on: one skip more, no row more.
    own = posted_once.run("--roll", "3", "-v")
    assert own.returncode == 0
    assert "skipped: rolled 3 (posts on 0 of 1-in-4) (skipped 2 runs in a row today)" in own.stderr
    assert skip_in_place(config, 1).streak == 3
    assert rows(config, "runs") == runs_before
    assert (config.state.path / SKIPS_FILE).is_file()
    assert len(posted_once.emulator.texts) == 1


def test_a_hit_and_a_first_run_are_left_to_a_run_of_their_own(home: BotHome) -> None:
    config = config_of(home)
    assert skip_in_place(config, 0) == "the roll posts"
    assert skip_in_place(config, 1) == "its history is not made yet (its first run)"
    assert not config.state.path.exists()


def _killed_mid_post(config: Config) -> None:
    with sqlite3.connect(config.state.history) as conn:
        conn.execute("UPDATE runs SET action = 'running'")


@pytest.mark.parametrize(
    "setting, change, why",
    [
        ({"HEALTHCHECK_URL": "http://127.0.0.1:9/ping"}, None, "HEALTHCHECK_URL or NOTIFY_URL is told of every run"),
        ({"LOG_FILE": "bot.log"}, None, "it logs to its own LOG_FILE"),
        ({"TWITTER_ACCESS_TOKEN": ""}, None, "its keys or its .env need a word"),
        ({}, _killed_mid_post, "the last run stopped before it finished"),
    ],
    ids=["monitor", "log-file", "keys", "killed"],
)
def test_a_run_with_more_to_do_than_skip_is_left_to_its_process_and_nothing_is_written(
    posted_once: BotHome, setting: Dict[str, str], change, why: str
) -> None:
    posted_once.write_env(**setting)
    config = config_of(posted_once)
    if change is not None:
        change(config)
    before = written(config)
    assert skip_in_place(config, 3) == why
    assert written(config) == before


def test_a_post_a_network_missed_is_left_to_the_run_that_catches_it_up(home: BotHome) -> None:
    home.write_env(
        TWEET_ONE_IN="4", POST_TO="x,mastodon", MASTODON_INSTANCE="http://127.0.0.1:9", MASTODON_ACCESS_TOKEN="t" * 24
    )
    home.run("--roll", "0")  # X has it; Mastodon, not answering, does not
    assert len(home.emulator.texts) == 1
    config = config_of(home)
    before = written(config)
    assert skip_in_place(config, 3) == "a post is to be caught up"
    assert written(config) == before


def test_a_one_off_line_due_is_left_to_its_run(posted_once: BotHome) -> None:
    soon = datetime.now(timezone.utc) - timedelta(minutes=1)
    posted_once.write_tweets(f"{{at: {soon:%Y-%m-%d %H:%M}}} the eclipse is now\nan ordinary line\n")
    posted_once.write_env(TWEET_TIMEZONE="UTC")
    config = config_of(posted_once)
    before = written(config)
    assert skip_in_place(config, 3) == "a one-off line is due"
    assert written(config) == before


def test_a_clock_behind_the_history_and_a_held_lock_are_left_to_the_run(posted_once: BotHome) -> None:
    config = config_of(posted_once)
    before = written(config)
    assert skip_in_place(config, 3, clock=lambda: datetime(2020, 1, 1, tzinfo=timezone.utc)) in (
        "the clock is in question against its history",
        "its last run is dated after now",
    )
    with run_lock(config.state.lock, wait=0):
        assert skip_in_place(config, 3) == "its lock is held (a run or a job of the bot's is going)"
    assert written(config) == before


@pytest.mark.parametrize(
    "args, said",
    [
        (["--roll", "4"], "--roll 4: the die of TWEET_ONE_IN=4 has the faces 0 to 3 (0 posts)"),
        (["--roll", "-1"], "--roll -1: the die of TWEET_ONE_IN=4 has the faces 0 to 3 (0 posts)"),
        (["--roll", "1", "--force"], "--roll with --force: --force rolls no die; give one of the two"),
        (["--roll", "0", "--one-offs"], "--roll with --one-offs: --one-offs rolls no die; give one of the two"),
    ],
)
def test_a_roll_the_die_cannot_show_is_a_usage_error(home: BotHome, args, said: str) -> None:
    home.write_env(TWEET_ONE_IN="4")
    result = home.run(*args)
    assert result.returncode == 64 and said in result.stderr
    assert home.emulator.seen == [] and not Path(home.path / "state").exists()


def test_a_dry_run_with_a_roll_shows_what_that_roll_does(home: BotHome) -> None:
    home.write_env(TWEET_ONE_IN="4")
    missed = home.run("--dry-run", "--roll", "3")
    assert missed.returncode == 0 and "skipped: rolled 3 (posts on 0 of 1-in-4)" in missed.stderr
    hit = home.run("--dry-run", "--roll", "0")
    assert hit.returncode == 0 and "would post line" in hit.stderr and "rolled 0 of 1-in-4" in hit.stderr
    assert home.emulator.seen == []

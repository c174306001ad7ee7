"""The flock daemon's decisions, under a faked clock: which bot's job is due, and what waits."""

from __future__ import annotations

import json
import logging
import random
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import List, Optional, Tuple

from in_process import run_in_process

from twitterbot.cli import built_in
from twitterbot.flock.botconfig import bot_config
from twitterbot.flock.daemon import FlockDaemon
from twitterbot.flock.folder import Bot, Flock
from twitterbot.state.skips import SKIPS_FILE

from .conftest import write_bot

START = datetime(2026, 12, 5, 5, 58, tzinfo=timezone.utc)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


def daemon_for(
    bots: Path, clock: Clock, started: List[Tuple[str, str]], *, seconds: str = "0.01", rolls: Optional[list] = None
) -> FlockDaemon:
    registry = built_in()

    def command(bot: Bot, kind: str, rolled: Optional[int]) -> List[str]:
        started.append((bot.name, kind))
        if rolls is not None:
            rolls.append(rolled)
        return [sys.executable, "-c", f"import time; time.sleep({seconds})"]

    return FlockDaemon(
        lambda: Flock.find(bots, {}, project_dir=None),
        lambda bot: bot_config(bot, registry, environ={}, overrides={}, named=False),
        command,
        clock=clock,
        notify=lambda message: None,
    )


def finish(daemon: FlockDaemon) -> None:
    for worker in daemon.workers.values():
        worker.process.wait(10)
    daemon.tick()


def test_each_bot_runs_at_its_own_times_in_its_own_zone(tmp_path: Path) -> None:
    write_bot(tmp_path / "london", {"TWEET_TIMES": "06:00", "TWEET_TIMEZONE": "Europe/London"}, "a\n")
    write_bot(tmp_path / "tokyo", {"TWEET_TIMES": "15:00", "TWEET_TIMEZONE": "Asia/Tokyo"}, "b\n")  # 06:00 UTC
    write_bot(tmp_path / "later", {"TWEET_TIMES": "07:00", "TWEET_TIMEZONE": "UTC"}, "c\n")
    clock, started = Clock(), []
    daemon = daemon_for(tmp_path, clock, started)
    assert "3 bots to run" in daemon.load()
    daemon.tick()
    assert started == []
    clock.now = START + timedelta(minutes=2, seconds=1)
    daemon.tick()
    assert sorted(started) == [("london", "run"), ("tokyo", "run")]
    finish(daemon)
    clock.now = START + timedelta(hours=1, minutes=2)
    daemon.tick()
    assert started[-1] == ("later", "run") and len(started) == 3


def test_a_bot_with_broken_settings_is_left_out_and_the_others_run(tmp_path: Path, caplog) -> None:
    write_bot(tmp_path / "good", {"TWEET_TIMES": "06:00", "TWEET_TIMEZONE": "UTC"}, "a\n")
    write_bot(tmp_path / "bad", {"TWEET_TIMES": "six o'clock"}, "b\n")
    clock, started = Clock(), []
    daemon = daemon_for(tmp_path, clock, started)
    assert daemon.load() == "1 bot to run; 1 skipped (bad)"
    assert "bad: " in caplog.text and "TWEET_TIMES" in caplog.text
    clock.now = START + timedelta(minutes=2)
    daemon.tick()
    assert started == [("good", "run")]
    finish(daemon)


def test_replies_every_five_minutes_and_a_one_off_at_its_time(tmp_path: Path) -> None:
    (tmp_path / "rules.json").write_text('{"hi": "hello"}')
    write_bot(
        tmp_path / "chatty",
        {"TWEET_TIMES": "12:00", "TWEET_TIMEZONE": "UTC", "REPLY_RULES": str(tmp_path / "rules.json")},
        "{at: 2026-12-05 06:03} a one-off line\na plain line\n",
    )
    clock, started = Clock(), []
    daemon = daemon_for(tmp_path, clock, started)
    daemon.load()
    clock.now = datetime(2026, 12, 5, 6, 0, 1, tzinfo=timezone.utc)
    daemon.tick()
    assert started == [("chatty", "replies")]
    finish(daemon)
    clock.now = datetime(2026, 12, 5, 6, 3, 1, tzinfo=timezone.utc)
    daemon.tick()
    assert started[-1] == ("chatty", "one-offs")
    finish(daemon)
    clock.now = datetime(2026, 12, 5, 6, 5, 1, tzinfo=timezone.utc)
    daemon.tick()
    assert started[-1] == ("chatty", "replies") and len(started) == 3
    finish(daemon)


def test_a_run_due_while_the_bot_s_last_job_goes_on_waits_for_it(tmp_path: Path) -> None:
    write_bot(tmp_path / "slow", {"TWEET_TIMES": "06:00", "TWEET_TIMEZONE": "UTC"}, "a\n")
    clock, started = Clock(), []
    daemon = daemon_for(tmp_path, clock, started, seconds="0.5")
    daemon.load()
    clock.now = START + timedelta(minutes=2)
    daemon.tick()
    daemon.plans["slow"].due = clock.now  # due again at once, while the first still runs
    daemon.tick()
    assert started == [("slow", "run")]  # not twice at once
    finish(daemon)
    assert started == [("slow", "run"), ("slow", "run")]  # then it runs
    finish(daemon)


def test_a_bug_met_tending_one_bot_holds_no_other_back(tmp_path: Path, caplog) -> None:
    write_bot(tmp_path / "a-buggy", {"TWEET_TIMES": "12:00", "TWEET_TIMEZONE": "UTC"}, "a\n")
    write_bot(tmp_path / "b-fine", {"TWEET_TIMES": "06:00", "TWEET_TIMEZONE": "UTC"}, "b\n")
    clock, started = Clock(), []
    daemon = daemon_for(tmp_path, clock, started)
    daemon.load()

    def broken(after):
        raise RuntimeError("a bug in reading the one-off lines")

    buggy = daemon.plans["a-buggy"]
    buggy.line_times, buggy.line_due = broken, START
    clock.now = START + timedelta(minutes=2)
    daemon.tick()
    assert started == [("b-fine", "run")]
    assert "a-buggy: its jobs could not be looked at" in caplog.text
    finish(daemon)


def test_a_tick_in_which_every_bot_skips_starts_no_process_and_counts_each_bot_s_skip(tmp_path: Path, caplog) -> None:
    """The daemon rolls each due bot's die: a miss with nothing else to do is counted in that bot's
    own history, as its run would count it, and no Python is started. A bot whose run has more
    to do (its own LOG_FILE here) gets its process, with the roll made."""
    caplog.set_level(logging.DEBUG)
    names, now = ("ann", "bob", "cy", "dan"), datetime.now(timezone.utc).replace(microsecond=0)
    for name in names:
        settings = {
            "TWEET_TIMES": f"{now + timedelta(minutes=1):%H:%M}",
            "TWEET_TIMEZONE": "UTC",
            "TWEET_ONE_IN": "1000000",
            "POST_TO": "mastodon",
            "MASTODON_INSTANCE": "http://127.0.0.1:9",
            "MASTODON_ACCESS_TOKEN": f"token-of-{name}-abcdefghijklmnop",
            **({"LOG_FILE": "dan.log"} if name == "dan" else {}),
        }
        write_bot(tmp_path / name, settings, f"{name}'s line\n")
        made = run_in_process(["--bots", str(tmp_path), "--bot", name, "--dry-run"], environ={}, cwd=tmp_path)
        assert made.returncode == 0, made.stderr  # its history made, as a bot that has run has it
    clock, started, rolls = Clock(), [], []
    clock.now = now  # after the dry runs' rows: a clock behind its history is a run's to question
    daemon = daemon_for(tmp_path, clock, started, rolls=rolls)
    daemon.rng = random.Random(5)
    assert "4 bots to run" in daemon.load()
    clock.now = now + timedelta(minutes=2)
    daemon.tick()
    assert started == [("dan", "run")] and rolls[0] not in (None, 0)
    assert f"dan: rolled {rolls[0]}; its run starts (it logs to its own LOG_FILE)" in caplog.text
    registry = built_in()
    for name in names[:3]:
        config = bot_config(
            Flock.find(tmp_path, {}, project_dir=None).bot(name), registry, environ={}, overrides={}, named=False
        )
        streak = json.loads((config.state.path / SKIPS_FILE).read_text())
        assert streak["runs"] == 1 and streak["one_in"] == 1000000
        assert f"{name}: skipped: rolled {streak['roll']} (posts on 0 of 1-in-1000000)" in caplog.text
    finish(daemon)


def test_a_bot_s_changed_env_is_read_again_before_its_die_is_rolled(tmp_path: Path, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    """The die the daemon rolls is the one the bot's run knows: TWEET_ONE_IN changed in its .env
    (no SIGHUP) is the die of its next run; a .env that no longer reads leaves the run to say why."""
    now = datetime.now(timezone.utc).replace(second=0, microsecond=0)  # times on the minute
    times = ",".join(f"{now + timedelta(minutes=minutes):%H:%M}" for minutes in (1, 2, 3))
    settings = {
        "TWEET_TIMES": times,
        "TWEET_TIMEZONE": "UTC",
        "TWEET_ONE_IN": "1000000",
        "POST_TO": "mastodon",
        "MASTODON_INSTANCE": "http://127.0.0.1:9",
        "MASTODON_ACCESS_TOKEN": "token-of-eve-abcdefghijklmnop",
    }
    write_bot(tmp_path / "eve", settings, "eve's line\n")
    made = run_in_process(["--bots", str(tmp_path), "--bot", "eve", "--dry-run"], environ={}, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    clock, started, rolls = Clock(), [], []
    clock.now = now
    daemon = daemon_for(tmp_path, clock, started, rolls=rolls)
    daemon.rng = random.Random(5)
    daemon.load()
    clock.now = now + timedelta(minutes=1, seconds=30)
    daemon.tick()
    assert started == []  # a miss of 1,000,000 counted in place
    env = tmp_path / "eve" / ".env"
    env.write_text(env.read_text().replace("TWEET_ONE_IN=1000000", "TWEET_ONE_IN=1"))
    clock.now = now + timedelta(minutes=2, seconds=30)
    daemon.tick()
    assert started == [("eve", "run")] and rolls == [0]  # the new die: every run posts
    finish(daemon)
    env.write_text(env.read_text() + "TWEET_ONE_IN=many\n")
    clock.now = now + timedelta(minutes=3, seconds=30)
    daemon.tick()
    assert started[-1] == ("eve", "run") and len(started) == 2  # started, to say what is wrong
    finish(daemon)

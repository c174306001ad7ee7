"""The clock checked against the history before a run decides anything (state/floor.py): the
reproductions of issue 57 under libfaketime's `faketime`, as cron runs bot.py on a Pi without a
real-time clock, and the pruning that no clock can push into what the runs still need. The
faketime tests are slow (tests/slow_tests.txt): a process per run."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone

import pytest
from conftest import BotHome
from faked_clock import FAKETIME, run_at
from x_emulator import XEmulator

from twitterbot.state.floor import CLOCK_BEHIND, CLOCK_LEAP, ClockNotSet, check_clock, clock_trouble
from twitterbot.state.outcomes import Ending
from twitterbot.state.prune import KEPT
from twitterbot.state.store import HistoryStore

needs_faketime = pytest.mark.skipif(FAKETIME is None, reason="faketime is not installed (apt-get install faketime)")
NOON = datetime(2027, 1, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def any_clock(emulator: XEmulator) -> None:
    """The emulator takes the faked clock's signatures (X would not; the bot's clock is tested)."""
    emulator.clock_skew_allowed = 10**10


def rows(home: BotHome) -> dict:
    """How many rows each table of the history holds."""
    (history,) = home.path.rglob("history*.sqlite3")
    with sqlite3.connect(history) as conn:
        return {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in ("runs", "attempts")}


def test_a_clock_before_or_far_after_the_newest_record_is_not_believed() -> None:
    assert clock_trouble(None, datetime(1970, 1, 1, tzinfo=timezone.utc)) is None  # an empty history
    assert clock_trouble(NOON, NOON - CLOCK_BEHIND) is None  # set back by hand, fake-hwclock
    assert "before the history's newest record (2027-01-01 12:00 UTC)" in clock_trouble(
        NOON, datetime(1970, 1, 1, tzinfo=timezone.utc)
    )
    assert clock_trouble(NOON, NOON + CLOCK_LEAP) is None  # off for a year
    assert "more than 366 days after" in clock_trouble(NOON, NOON + CLOCK_LEAP + timedelta(minutes=1))
    with pytest.raises(ClockNotSet, match="the clock is not set yet") as raised:
        check_clock(NOON, NOON - timedelta(days=2))
    assert raised.value.exit_status == 75
    check_clock(NOON, NOON - timedelta(days=2), trusted=True)  # --trust-clock: the owner says it is right
    check_clock(NOON, NOON + timedelta(days=3650), trusted=True)


def test_pruning_keeps_the_last_days_before_the_newest_record_whatever_the_cutoff() -> None:
    store = HistoryStore(":memory:")
    for days_ago in (30, 7, 5, 1, 0):
        at = NOON - timedelta(days=days_ago)
        run = store.begin_run(at=at, one_in=1, roll=0, forced=False, dry_run=False)
        attempt = store.begin_attempt(f"posted {days_ago} days ago", run_id=run, at=at, network="x")
        store.finish_attempt(attempt, Ending("posted", at, post_id=str(days_ago)))
        store.finish_run(run, at=at, action="posted", reason="rolled 0", text=None, post_id=None, url=None)
    far = NOON + timedelta(days=3650)  # a clock ten years ahead asks for everything older than 400 days of it
    store.prune(before=far - timedelta(days=400), texts_since=far, at=far)
    kept = store.last_posts([f"posted {days} days ago" for days in (0, 1, 5, 7, 30)])
    assert sorted(kept) == ["posted 0 days ago", "posted 1 days ago", "posted 5 days ago", "posted 7 days ago"]
    assert timedelta(days=7) < KEPT  # the cap's day and settling's week (LOOK_UP_WINDOW)


@needs_faketime
@pytest.mark.usefixtures("any_clock")
def test_a_clock_ten_years_ahead_prunes_nothing_and_the_new_year_line_goes_once(
    home: BotHome, emulator: XEmulator
) -> None:
    home.write_env(TWEET_TIMEZONE="UTC", TWEET_ONE_IN="1", MIN_POST_GAP="0", HISTORY_DAYS="400")
    home.write_tweets("{at: 2027-01-01 00:00} Happy new year!\nplain one\nplain two\nplain three\n")
    first = run_at(home, "2027-01-01 00:10:00")
    assert first.returncode == 0 and emulator.texts == ["Happy new year!"], first.stderr
    before = rows(home)
    ahead = run_at(home, "2037-01-01 00:10:00", "--force")
    assert ahead.returncode == 75, ahead.stderr
    assert "the clock is not set yet: the clock says 2037-01-01 00:10 UTC, more than 366 days after" in ahead.stderr
    assert rows(home) == before and emulator.texts == ["Happy new year!"]
    back = run_at(home, "2027-01-01 00:30:00", "--force")
    assert back.returncode == 0, back.stderr
    assert emulator.texts.count("Happy new year!") == 1 and len(emulator.texts) == 2
    shown = run_at(home, "2037-01-01 00:10:00", "check")
    assert "the clock is not set yet" in shown.stdout and "2027-01-01 00:30 UTC" in shown.stdout, shown.stdout
    trusted = run_at(home, "2028-06-01 00:10:00", "--force", "--trust-clock")
    assert trusted.returncode == 0 and len(emulator.texts) == 3, trusted.stderr


@needs_faketime
@pytest.mark.usefixtures("any_clock")
def test_a_pi_at_1970_posts_no_dated_line_and_check_shows_both_times(home: BotHome, emulator: XEmulator) -> None:
    home.write_env(TWEET_TIMEZONE="UTC", TWEET_ONE_IN="1", MIN_POST_GAP="0")
    home.write_tweets("{on: 01-01} Happy new year!\nplain one\nplain two\n")
    first = run_at(home, "2026-12-30 12:00:00")
    assert first.returncode == 0 and len(emulator.texts) == 1, first.stderr
    before = rows(home)
    for _ in range(2):  # no RTC, before the network answers: twice, past MIN_POST_GAP
        booted = run_at(home, "1970-01-01 00:01:00")
        assert booted.returncode == 75 and "the clock is not set yet" in booted.stderr, booted.stderr
    assert len(emulator.texts) == 1 and rows(home) == before
    shown = run_at(home, "2026-12-30 13:00:00", "check")
    assert "clock: 2026-12-30 13:00 UTC; the history's newest record is 2026-12-30 12:00 UTC" in shown.stdout
    set_right = run_at(home, "2027-01-01 09:00:00")
    assert set_right.returncode == 0 and emulator.texts[-1] == "Happy new year!", set_right.stderr


def test_a_one_off_s_run_posts_the_one_off_or_nothing(home: BotHome, emulator: XEmulator) -> None:
    now = datetime.now(timezone.utc)
    home.write_env(TWEET_TIMEZONE="UTC", TWEET_ONE_IN="1", MIN_POST_GAP="0")
    home.write_tweets(f"{{at: {now - timedelta(minutes=5):%Y-%m-%d %H:%M}}} Five minutes ago\nplain line\n")
    first = home.run("--one-offs")
    assert first.returncode == 0 and emulator.texts == ["Five minutes ago"], first.stderr
    again = home.run("--one-offs")  # the one-off went: never a plain line in its stead, though 1 in 1
    assert again.returncode == 0 and emulator.texts == ["Five minutes ago"], again.stderr
    assert "woke for a one-off line, but none is due" in home.run("history").stdout


def test_check_names_one_dated_line_written_in_different_ways(home: BotHome) -> None:
    home.write_env(TWEET_TIMEZONE="UTC")
    home.write_tweets(
        "{on: 12-25} Merry Christmas\n{on:12-25} Merry Christmas\nplain\n{ on : 12-25 } Merry Christmas\n"
        "{on: 12-24} Merry Christmas\n"
    )
    shown = home.run("check")
    assert 'lines 1, 2 and 4 are one line, {on: 12-25} "Merry Christmas", written in different ways' in shown.stdout, (
        shown.stdout
    )
    assert "lines 1, 2, 4 and 5" not in shown.stdout  # another day is another line


@needs_faketime
@pytest.mark.usefixtures("any_clock")
def test_records_a_clock_ahead_dated_are_dated_now_by_trust_clock_and_none_is_lost(
    home: BotHome, emulator: XEmulator
) -> None:
    home.write_env(TWEET_TIMEZONE="UTC", TWEET_ONE_IN="1", MIN_POST_GAP="0", MAX_POSTS_PER_DAY="10")
    home.write_tweets("{at: 2027-01-01 00:00} Happy new year!\nplain one\nplain two\nplain three\n")
    assert run_at(home, "2027-01-01 00:10:00").returncode == 0 and emulator.texts == ["Happy new year!"]
    ahead = run_at(home, "2027-03-01 12:00:00")  # the clock two months ahead, believed: a post dated March
    assert ahead.returncode == 0 and len(emulator.texts) == 2, ahead.stderr
    before = rows(home)
    back = run_at(home, "2027-01-01 01:00:00")  # set right: the history's newest record is in March
    assert back.returncode == 75 and "before the history's newest record (2027-03-01 12:00 UTC)" in back.stderr
    trusted = run_at(home, "2027-01-01 01:05:00", "--trust-clock")
    assert trusted.returncode == 0 and "--trust-clock: " in trusted.stderr, trusted.stderr
    after = run_at(home, "2027-01-01 02:00:00")
    assert after.returncode == 0, after.stderr
    assert rows(home)["attempts"] >= before["attempts"] and emulator.texts.count("Happy new year!") == 1
    shown = run_at(home, "2027-01-01 02:10:00", "check")
    assert "the clock is not set yet" not in shown.stdout, shown.stdout


@needs_faketime
@pytest.mark.usefixtures("any_clock")
def test_a_job_started_before_the_clock_is_set_runs_and_posts_nothing(home: BotHome, emulator: XEmulator) -> None:
    """A job at boot (a systemd unit) on a Pi at 1970: no post dated 1970, nothing recorded, exit 75
    so its unit tries again; once the clock is set it runs."""
    home.write_env(TWEET_ONE_IN="1", MIN_POST_GAP="0")
    assert home.run("--force").returncode == 0 and len(emulator.texts) == 1
    before = rows(home)
    job = ("watch", "--every", "1h", "--first-after", "0", "--name", "copy", "--", "sh", "-c", "echo ran")
    booted = run_at(home, "1970-01-01 00:01:00", *job)
    assert booted.returncode == 75 and "the clock is not set yet" in booted.stderr, booted.stderr
    assert "ran" not in booted.stdout
    assert len(emulator.texts) == 1 and rows(home) == before
    set_right = home.run(*job)
    assert set_right.returncode == 0 and "ran" in set_right.stdout, set_right.stderr

"""The calendar in a scheduled run (posting/calendar.py): one-off lines at their time, dated lines
on their days, with an injected clock and the X emulator."""

from __future__ import annotations

import json
import random
import zoneinfo
from datetime import datetime, timedelta, timezone
from pathlib import Path

from conftest import REGISTRY, X_ONLY, BotHome, by_network
from x_emulator import XEmulator

from twitterbot.networks.x.poster import XPoster
from twitterbot.posting.calendar import Calendar
from twitterbot.posting.scheduled import Run, RunRules, decide_and_post
from twitterbot.posting.tweets import parse_tweets
from twitterbot.state.store import HistoryStore

ZONE = zoneinfo.ZoneInfo("America/New_York")  # the bot's zone: 5 hours behind UTC in winter


def at(text: str) -> datetime:
    """A time of the bot's zone, as the clock (UTC) tells it."""
    return datetime.fromisoformat(text).replace(tzinfo=ZONE).astimezone(timezone.utc)


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def tweets(*texts: str):
    return parse_tweets("\n".join(texts).encode(), Path("tweets.txt"), X_ONLY)


def run(
    store, poster, file, clock, *, seed=0, one_in=1, cap=4, gap=timedelta(0), late_by=timedelta(hours=1), dry_run=False
):
    posters = (lambda: by_network(poster)) if poster is not None else None
    how = Run(store, posters, random.Random(seed), clock, dry_run=dry_run)
    rules = RunRules(one_in, cap, gap, X_ONLY, known=REGISTRY.names(), calendar=Calendar(ZONE, late_by))
    return decide_and_post(file, how, rules)


NEVER = 10**9  # TWEET_ONE_IN for a run whose roll never hits (seed 0 rolls far from 0)


def test_a_one_off_goes_with_the_first_run_at_its_time_without_a_roll_past_the_gap(
    emulator: XEmulator, poster: XPoster
) -> None:
    store = HistoryStore(":memory:")
    file = tweets("{at: 2026-12-31 23:59} Happy new year!", "plain one", "plain two")
    clock = Clock(at("2026-12-31 23:00"))
    assert run(store, poster, file, clock, one_in=1).action == "posted"  # a plain line, an hour before
    clock.now = at("2026-12-31 23:58")
    early = run(store, poster, file, clock, one_in=NEVER)
    assert early.action == "skipped" and "Happy" not in " ".join(emulator.texts)  # never before its time
    clock.now = at("2026-12-31 23:59")
    posted = run(store, poster, file, clock, one_in=NEVER, gap=timedelta(hours=2))  # no roll, past MIN_POST_GAP
    assert posted.action == "posted" and emulator.texts[-1] == "Happy new year!"
    assert "line 1 {at: 2026-12-31 23:59} is due" in posted.reason
    clock.now += timedelta(minutes=5)
    again = run(store, poster, file, clock, one_in=NEVER)
    assert again.action == "skipped" and emulator.texts.count("Happy new year!") == 1  # never twice


def test_a_one_off_is_held_to_the_cap_then_missed_when_late_by_has_passed(emulator: XEmulator, poster: XPoster) -> None:
    store = HistoryStore(":memory:")
    file = tweets("{at: 2026-12-31 23:59} Happy new year!", "a", "b", "c")
    clock = Clock(at("2026-12-31 20:00"))
    for _ in range(2):
        assert run(store, poster, file, clock, cap=2).action == "posted"
        clock.now += timedelta(minutes=30)
    clock.now = at("2027-01-01 00:10")
    capped = run(store, poster, file, clock, one_in=NEVER, cap=2)
    assert capped.action == "skipped" and "is due" in capped.reason and "MAX_POSTS_PER_DAY=2" in capped.reason
    clock.now = at("2027-01-01 01:00")
    assert run(store, poster, file, clock, one_in=NEVER, cap=2).action == "skipped"
    (missed,) = store.missed()
    assert missed.text.endswith("Happy new year!") and missed.due_at == at("2026-12-31 23:59")
    assert "could not post it (MAX_POSTS_PER_DAY)" in missed.reason
    clock.now = at("2027-01-02 00:00")  # the cap has room again: the missed line stays missed
    run(store, poster, file, clock, one_in=NEVER, cap=2)
    assert "Happy new year!" not in emulator.texts and len(store.missed()) == 1


def test_a_run_later_than_late_by_notes_the_line_missed_once_and_why(emulator: XEmulator, poster: XPoster) -> None:
    store = HistoryStore(":memory:")
    file = tweets("{at: 2026-12-31 23:59} Happy new year!", "plain")
    clock = Clock(at("2027-01-01 03:10"))
    result = run(store, poster, file, clock, one_in=NEVER)
    assert result.action == "skipped" and emulator.texts == []
    (missed,) = store.missed()
    assert "no run came within LATE_BY=1h of its time: the first came 3h11m after it" in missed.reason
    clock.now += timedelta(hours=1)
    run(store, poster, file, clock, one_in=NEVER)
    assert store.missed() == [missed]  # noted once


def test_a_dry_run_in_a_one_off_s_time_is_not_blamed_on_max_posts_per_day(emulator: XEmulator, poster: XPoster) -> None:
    store = HistoryStore(":memory:")
    file = tweets("{at: 2026-12-31 23:59} Happy new year!", "plain")
    clock = Clock(at("2027-01-01 00:10"))
    assert run(store, None, file, clock, one_in=NEVER, dry_run=True).action == "would_post"  # posts nothing
    clock.now = at("2027-01-01 03:10")
    run(store, poster, file, clock, one_in=NEVER)
    (missed,) = store.missed()
    assert "no run came within LATE_BY=1h of its time" in missed.reason and "MAX_POSTS_PER_DAY" not in missed.reason


def test_a_pi_that_boots_twenty_minutes_late_posts_the_midnight_line(emulator: XEmulator, poster: XPoster) -> None:
    store = HistoryStore(":memory:")
    file = tweets("{at: 2027-01-01 00:00} Midnight!", "plain")
    assert run(store, poster, file, Clock(at("2027-01-01 00:20")), one_in=NEVER).action == "posted"
    assert emulator.texts == ["Midnight!"]


def test_a_pi_booting_in_the_past_then_set_right_by_ntp_posts_once_never_early(
    emulator: XEmulator, poster: XPoster
) -> None:
    store = HistoryStore(":memory:")
    file = tweets("{at: 2027-01-01 00:00} Midnight!", "plain")
    clock = Clock(at("2026-12-31 18:00"))  # the clock as fake-hwclock saved it at shutdown
    assert run(store, poster, file, clock, one_in=NEVER).action == "skipped"
    clock.now = at("2027-01-01 00:25")  # NTP set it right
    assert run(store, poster, file, clock, one_in=NEVER).action == "posted"
    clock.now = at("2026-12-31 23:59")  # and back again, by a day's worth of trouble
    for _ in range(3):
        run(store, poster, file, clock, one_in=NEVER)
        clock.now += timedelta(minutes=20)
    assert emulator.texts == ["Midnight!"]


def test_a_missed_note_taken_while_the_clock_was_ahead_is_not_believed(emulator: XEmulator, poster: XPoster) -> None:
    store = HistoryStore(":memory:")
    file = tweets("{at: 2027-01-01 00:00} Midnight!", "plain")
    run(store, poster, file, Clock(at("2027-03-01 12:00")), one_in=NEVER)  # the clock was two months ahead
    assert len(store.missed()) == 1
    assert run(store, poster, file, Clock(at("2027-01-01 00:05")), one_in=NEVER).action == "posted"
    assert emulator.texts == ["Midnight!"]


def test_a_dated_line_goes_on_its_day_before_the_round_once_and_the_round_keeps_its_place(
    emulator: XEmulator, poster: XPoster
) -> None:
    emulator.duplicate_check = False  # X may refuse a text it has; the round is what is tested here
    store = HistoryStore(":memory:")
    file = tweets("{on: 12-25} Merry Christmas", "{days: sat sun; hours: 7-10} Weekend morning", "one", "two")
    clock = Clock(at("2026-12-24 12:00"))  # a Thursday
    for _ in range(2):
        run(store, poster, file, clock)
        clock.now += timedelta(hours=1)
    assert sorted(emulator.texts) == ["one", "two"]  # no dated line on another day
    clock.now = at("2026-12-25 00:00")
    assert run(store, poster, file, clock).line.text == "Merry Christmas"
    clock.now += timedelta(hours=1)
    assert run(store, poster, file, clock).line.text in ("one", "two")  # not twice on its day; the round goes on
    clock.now = at("2026-12-26 06:30")  # Saturday, before its hours
    assert run(store, poster, file, clock).line.text in ("one", "two")
    clock.now = at("2026-12-26 07:30")
    assert run(store, poster, file, clock).line.text == "Weekend morning"
    clock.now = at("2026-12-27 10:59")
    assert run(store, poster, file, clock).line.text == "Weekend morning"  # Sunday: its day too
    clock.now = at("2026-12-26 09:00")  # the clock went back a day: it went that day already
    assert run(store, poster, file, clock).line.text in ("one", "two")
    assert emulator.texts.count("Merry Christmas") == 1 and emulator.texts.count("Weekend morning") == 2


def test_a_file_of_timed_lines_alone_posts_nothing_out_of_their_times(emulator: XEmulator, poster: XPoster) -> None:
    store = HistoryStore(":memory:")
    file = tweets("{on: 12-25} Merry Christmas", "{at: 2026-12-31 23:59} Happy new year!")
    result = run(store, poster, file, Clock(at("2026-06-01 12:00")))
    assert result.action == "skipped" and "every line of tweets.txt has a time, and none holds now" in result.reason
    assert emulator.texts == []


def test_a_dry_run_says_what_would_happen_and_notes_nothing(emulator: XEmulator, poster: XPoster) -> None:
    store = HistoryStore(":memory:")
    file = tweets("{at: 2026-12-31 23:59} Happy new year!", "{at: 2026-06-01 09:00} Summer", "plain")
    result = run(store, None, file, Clock(at("2026-12-31 23:59")), one_in=NEVER, dry_run=True)
    assert result.action == "would_post" and result.line.text == "Happy new year!"
    assert store.missed() == [] and emulator.texts == []


def test_history_shows_a_one_off_line_missed_when_it_was_due_when_the_run_came_and_why(home: BotHome) -> None:
    due = (datetime.now(timezone.utc) - timedelta(hours=3)).replace(second=0, microsecond=0)
    line = f"{{at: {due:%Y-%m-%d %H:%M}}} Happy new year!"
    home.write_env(TWEET_TIMEZONE="UTC", TWEET_ONE_IN=str(NEVER))
    home.write_tweets(f"{line}\nplain\n")
    assert home.run().returncode == 0
    shown = home.run("history")
    assert shown.returncode == 0, shown.stderr
    missed, skipped = shown.stdout.splitlines()
    assert "skipped" in skipped
    assert missed.split()[2] == "missed" and line in missed
    assert f"due {due.astimezone():%Y-%m-%d %H:%M}, not posted: no run came within LATE_BY=1h of its time" in missed
    assert "the first came 3h" in missed

    (entry, run) = json.loads(home.run("history", "--json").stdout)
    assert entry["source"] == "one_off" and entry["action"] == "missed" and entry["text"] == line
    assert datetime.fromisoformat(entry["due_at"]) == due
    assert datetime.fromisoformat(entry["started_at"]) >= datetime.fromisoformat(run["started_at"])  # that run's
    assert entry["reason"].startswith("no run came within LATE_BY=1h") and entry["url"] is None

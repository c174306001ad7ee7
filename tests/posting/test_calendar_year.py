"""A year of hourly timer runs over a tweets file with every kind of time option, with an
injected clock and the X emulator: each dated line on its days only and never twice a day, each
one-off once within a run of its time or noted missed, through DST, a Pi switched off over a
one-off's time, and a clock set back a day. Slow (listed in tests/slow_tests.txt)."""

from __future__ import annotations

import random
import zoneinfo
from collections import Counter
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import List, Tuple

from conftest import REGISTRY, X_ONLY, by_network
from x_emulator import XEmulator

from twitterbot.networks.x.poster import XPoster
from twitterbot.posting.calendar import Calendar
from twitterbot.posting.scheduled import Run, RunRules, decide_and_post
from twitterbot.posting.tweets import parse_tweets
from twitterbot.state.store import HistoryStore

ZONE = zoneinfo.ZoneInfo("Europe/London")
FILE = "\n".join(
    [
        *(f"plain line {number}" for number in range(1, 21)),
        "{on: 12-25} Christmas",
        "{on: 02-29} Leap day",  # 2027 has none
        "{on: 2027-07-04} Fourth of July",
        "{from: 12-24; until: 01-02} Holidays",
        "{days: sat sun} Weekend",
        "{days: mon; hours: 9-11} Monday morning",
        "{from: 2027-06-01; until: 2027-06-30; days: fri} June Fridays",
        "{at: 2027-03-01 09:30} Spring",
        "{at: 2027-05-05 05:05} May",
        "{at: 2027-08-08 08:30} August",  # the Pi is off from 08:00 to 10:00: missed
        "{at: 2027-10-31 01:30} Halloween",  # 01:30 on the day the clocks go back: the first 01:30
    ]
)
OFF = (datetime(2027, 8, 8, 6, 30, tzinfo=timezone.utc), datetime(2027, 8, 8, 9, 0, tzinfo=timezone.utc))
JUMP_AT = datetime(2027, 12, 26, 12, 0, tzinfo=timezone.utc)  # the clock is set back a day here, once


def local(moment: datetime) -> datetime:
    return moment.astimezone(ZONE)


def year_of_runs(poster: XPoster) -> Tuple[List[Tuple[datetime, str]], HistoryStore]:
    store = HistoryStore(":memory:")
    tweets = parse_tweets(FILE.encode(), Path("tweets.txt"), X_ONLY)
    rules = RunRules(3, 6, timedelta(0), X_ONLY, known=REGISTRY.names(), calendar=Calendar(ZONE, timedelta(hours=1)))
    rng = random.Random(49)
    posted: List[Tuple[datetime, str]] = []
    now, end, jumped = datetime(2027, 1, 1, tzinfo=timezone.utc), datetime(2028, 1, 1, tzinfo=timezone.utc), False
    while now < end:
        if not OFF[0] <= now < OFF[1]:
            result = decide_and_post(tweets, Run(store, lambda: by_network(poster), rng, lambda at=now: at), rules)
            if result.action == "posted":
                posted.append((now, result.line.text))
        now += timedelta(hours=1)
        if now == JUMP_AT and not jumped:
            now, jumped = now - timedelta(days=1), True
    return posted, store


def test_a_year_of_timer_runs_keeps_the_calendar(emulator: XEmulator, poster: XPoster) -> None:
    emulator.duplicate_check = False  # a weekend line repeats every week; X's own check is not tested here
    emulator.posts_per_window = emulator.posts_per_day = 10**6  # a year's posts go out in a minute of real time
    posted, store = year_of_runs(poster)
    by_text: dict = {}
    for at, text in posted:
        by_text.setdefault(text, []).append(local(at))
    days = {text: [moment.date() for moment in moments] for text, moments in by_text.items()}
    assert days["Christmas"] == [date(2027, 12, 25)]  # on its day only, once though the clock went back
    assert days["Fourth of July"] == [date(2027, 7, 4)]
    assert "Leap day" not in days
    assert all((day.month, day.day) >= (12, 24) or (day.month, day.day) <= (1, 2) for day in days["Holidays"])
    assert all(day.weekday() >= 5 for day in days["Weekend"]) and len(days["Weekend"]) > 90
    assert all(moment.weekday() == 0 and 9 <= moment.hour <= 11 for moment in by_text["Monday morning"])
    assert all(day.month == 6 and day.weekday() == 4 for day in days["June Fridays"]) and len(days["June Fridays"]) == 4
    for text, seen in days.items():
        if not text.startswith("plain"):
            assert len(seen) == len(set(seen)), f"{text} went twice on a day"
    # One-offs: once, within a run (an hour) of their time, or noted missed.
    assert by_text["Spring"] == [datetime(2027, 3, 1, 10, 0, tzinfo=ZONE)]
    assert by_text["May"] == [datetime(2027, 5, 5, 6, 0, tzinfo=ZONE)]
    # 01:30 comes twice that night: its first, on summer time (00:30 UTC), is the one; the first
    # run after it is 01:00 UTC, which London calls 01:00 again, on winter time.
    assert [moment.astimezone(timezone.utc) for moment in by_text["Halloween"]] == [
        datetime(2027, 10, 31, 1, 0, tzinfo=timezone.utc)
    ]
    assert "August" not in by_text
    (missed,) = store.missed()
    assert missed.text.endswith("August") and "the first came 1h30m after it" in missed.reason
    # The round went on: every plain line went, each round before the next began.
    plain = Counter(text for _at, text in posted if text.startswith("plain"))
    assert len(plain) == 20 and max(plain.values()) - min(plain.values()) <= 1
    # The cap held: no post had six others in the 24 hours before it (of those made before it: the
    # posts of the day the clock was set back are dated after the runs that follow).
    times = [at for at, _text in posted]
    assert all(
        sum(1 for earlier in times[: index + 1] if moment - timedelta(hours=24) < earlier <= moment) <= 6
        for index, moment in enumerate(times)
    )

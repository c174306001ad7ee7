"""A line's time options (posting/when.py), read through the one options parser."""

from __future__ import annotations

from datetime import date, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from twitterbot.posting.options import OptionError, split_options
from twitterbot.posting.when import LineTime, MonthDay

NAMES = ("x", "mastodon", "bluesky")


def time_of(line: str) -> LineTime:
    options, _text = split_options(line, NAMES)
    assert options.time is not None
    return options.time


@pytest.mark.parametrize(
    "line, expected",
    [
        ("{on: 12-25} a", LineTime(on=MonthDay(12, 25))),
        ("{on: 2026-12-25} a", LineTime(on=date(2026, 12, 25))),
        ("{from: 12-24; until: 01-06} a", LineTime(start=MonthDay(12, 24), end=MonthDay(1, 6))),
        ("{from: 2026-06-01} a", LineTime(start=date(2026, 6, 1))),
        ("{days: Sat, sunday} a", LineTime(days=frozenset({5, 6}))),
        ("{days: fri-mon} a", LineTime(days=frozenset({4, 5, 6, 0}))),
        ("{hours: 7-10} a", LineTime(hours=frozenset({7, 8, 9, 10}))),
        ("{hours: 22-1 12} a", LineTime(hours=frozenset({22, 23, 0, 1, 12}))),
        ("{at: 2026-12-31 23:59} a", LineTime(at=datetime(2026, 12, 31, 23, 59))),
        ("{at: 2026-12-31T09:05; cw: new year} a", LineTime(at=datetime(2026, 12, 31, 9, 5))),
        ("{on: 02-29} leap", LineTime(on=MonthDay(2, 29))),
    ],
)
def test_time_options_are_read_as_typed_values(line: str, expected: LineTime) -> None:
    assert time_of(line) == expected


@pytest.mark.parametrize(
    "line, said",
    [
        ("{on: 02-30} a", "02-30, a day no year has"),
        ("{on: 13-01} a", "a day no year has"),
        ("{on: 2027-02-29} a", "does not exist"),
        ("{on: christmas} a", "which is no date"),
        ("{days: funday} a", "'funday', which is no weekday"),
        ("{hours: 24} a", "which are no hours"),
        ("{from: 2026-12-24; until: 2026-12-01} a", "until 2026-12-01 before its from 2026-12-24"),
        ("{from: 12-01} a", "without both ends"),
        ("{from: 12-01; until: 2027-01-06} a", "both as month-days"),
        ("{on: 12-25; from: 12-01; until: 12-31} a", "on with from or until"),
        ("{at: 2026-12-31 23:59; days: mon} a", "at is a time of its own"),
        ("{at: 2026-12-31} a", "no date and time"),
        ("{at: 2026-02-30 10:00} a", "does not exist"),
        ("{on: 2026-12-25; days: mon} a", "can never go"),
        ("{from: 2026-12-21; until: 2026-12-25; days: sat} a", "can never go"),
    ],
)
def test_a_date_that_cannot_come_is_refused_saying_why(line: str, said: str) -> None:
    with pytest.raises(OptionError, match=said):
        split_options(line, NAMES)


def test_windows_hold_on_their_days_and_hours_only() -> None:
    season = time_of("{from: 12-24; until: 01-06} a")
    assert season.holds(datetime(2026, 12, 31, 12)) and season.holds(datetime(2027, 1, 6, 23))
    assert not season.holds(datetime(2027, 1, 7, 0)) and not season.holds(datetime(2026, 12, 23, 23))
    weekend_mornings = time_of("{days: sat sun; hours: 7-10} a")
    assert weekend_mornings.holds(datetime(2026, 12, 26, 10, 59))  # a Saturday
    assert not weekend_mornings.holds(datetime(2026, 12, 26, 11, 0))
    assert not weekend_mornings.holds(datetime(2026, 12, 28, 8))  # a Monday
    leap = time_of("{on: 02-29} a")
    assert [day.year for day in leap.days_from(date(2026, 1, 1), 366 * 3)] == [2028]


@given(
    st.text(alphabet="0123456789-: Tmonfriatsu,", max_size=24),
    st.sampled_from(("on", "from", "until", "days", "hours", "at")),
)
def test_any_time_value_is_read_or_refused_with_a_reason(value: str, key: str) -> None:
    line = "{" + f"{key}: {value}" + "} text"
    try:
        options, _text = split_options(line, NAMES)
    except OptionError as exc:
        assert str(exc)
        return
    assert options.time is None or options.time.can_come()

"""When a tweets file line may go: its time options, read into one typed value (`LineTime`).

Written among a line's other options (posting/options.py), in the bot's time zone (TWEET_TIMEZONE,
else the system's)::

    {on: 12-25} Merry Christmas!                     that day, every year
    {on: 2026-12-25} Our first Christmas.            that day only
    {from: 12-01; until: 12-24} Advent.              a season (12-24 to 01-06 wraps the new year)
    {days: sat sun; hours: 7-10} Weekend mornings.   weekdays and hours, alone or with a date
    {at: 2026-12-31 23:59} Happy new year!           a one-off, posted by the first run at or after it

    time = read_time({"on": "12-25"})
    time.holds(datetime(2026, 12, 25, 9, 0))         # True: a naive time in the bot's zone

Pure: no clock and no zone here. `posting/calendar.py` asks these values about a run's now.
"""

from __future__ import annotations

import calendar as _months
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Callable, FrozenSet, Iterator, List, Mapping, Optional, Tuple, Union

__all__ = ["FIRST_YEAR", "LAST_YEAR", "TIME_KEYS", "WEEKDAYS", "LineTime", "MonthDay", "read_moment", "read_time"]

# The years a date may be written in: every time of them, in any zone, a day either side and a
# history's memory before, is one Python's datetime holds (9999-12-31 23:59 in Los Angeles is
# past the last UTC time it holds; 0001-01-01 in Tokyo before the first).
FIRST_YEAR, LAST_YEAR = 1900, 9998

TIME_KEYS = ("on", "from", "until", "days", "hours", "at")
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")  # date.weekday() order
_DAY_NAMES = {name: index for index, name in enumerate(WEEKDAYS)}
_DAY_NAMES.update(
    {
        full: index
        for index, full in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))
    }
)
_DATE = re.compile(r"(?:(\d{4})-)?(\d{1,2})-(\d{1,2})", re.ASCII)
_AT = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})[ T]+(\d{1,2}):(\d{2})", re.ASCII)


@dataclass(frozen=True, order=True)
class MonthDay:
    """A day of every year (``12-25``); ``02-29`` comes in leap years only."""

    month: int
    day: int

    def __str__(self) -> str:
        return f"{self.month:02d}-{self.day:02d}"

    def matches(self, day: date) -> bool:
        return (day.month, day.day) == (self.month, self.day)


Day = Union[date, MonthDay]  # a date written in full, or a day of every year


@dataclass(frozen=True)
class LineTime:
    """A line's time options. A dated line has a day rule (`on`, or a season `start`..`end`, and
    `days` of the week) and `hours`, all of which must hold; a one-off has its time `at` alone
    (naive, in the bot's zone)."""

    on: Optional[Day] = None
    start: Optional[Day] = None  # from
    end: Optional[Day] = None  # until
    days: FrozenSet[int] = frozenset()  # weekdays, 0 = Monday
    hours: FrozenSet[int] = frozenset()  # hours of the day, 0..23
    at: Optional[datetime] = None

    @property
    def one_off(self) -> bool:
        return self.at is not None

    def on_day(self, day: date) -> bool:
        """Whether the line's day rules (not its hours) hold on `day`."""
        if self.at is not None:
            return self.at.date() == day
        if self.on is not None and not _same_day(self.on, day):
            return False
        if (self.start is not None or self.end is not None) and not self._in_season(day):
            return False
        return not self.days or day.weekday() in self.days

    def holds(self, moment: datetime) -> bool:
        """Whether a dated line may go at `moment` (naive, the bot's zone): its day and hour rules hold."""
        return self.on_day(moment.date()) and (not self.hours or moment.hour in self.hours)

    def days_from(self, first: date, count: int) -> Iterator[date]:
        """The days among `count` days from `first` on which the line may go."""
        for offset in range(count):
            day = first + timedelta(days=offset)
            if self.on_day(day):
                yield day

    def last_day(self) -> Optional[date]:
        """The last day the line can come, when its dates are written in full (None: it comes every year)."""
        if self.at is not None:
            return self.at.date()
        ends = [day for day in (self.on, self.end) if isinstance(day, date)]
        if isinstance(self.start, date) and self.end is None and self.on is None:
            return None  # from a date on, for good
        return min(ends) if ends else None

    def describe(self) -> str:
        """The options as written back, for check and the status page."""
        parts = []
        if self.at is not None:
            parts.append(f"at: {self.at:%Y-%m-%d %H:%M}")
        if self.on is not None:
            parts.append(f"on: {self.on}")
        if self.start is not None:
            parts.append(f"from: {self.start}")
        if self.end is not None:
            parts.append(f"until: {self.end}")
        if self.days:
            parts.append("days: " + " ".join(_runs(sorted(self.days), WEEKDAYS.__getitem__)))
        if self.hours:
            parts.append("hours: " + " ".join(_runs(sorted(self.hours), str)))
        return "{" + "; ".join(parts) + "}"

    def _in_season(self, day: date) -> bool:
        start, end = self.start, self.end
        if isinstance(start, MonthDay) and isinstance(end, MonthDay):
            here = MonthDay(day.month, day.day)
            return start <= here <= end if start <= end else here >= start or here <= end  # wraps the new year
        if isinstance(start, date) and day < start:
            return False
        return not (isinstance(end, date) and day > end)

    def can_come(self) -> bool:
        """Whether some day satisfies every day rule: a full date that is no such weekday, or a
        season of full dates holding none of its weekdays, cannot (a month-day meets every weekday
        over the years)."""
        if self.at is not None or not self.days:
            return True
        if isinstance(self.on, date):
            return self.on_day(self.on)
        if isinstance(self.start, date) and isinstance(self.end, date):
            return any(True for _ in self.days_from(self.start, min(7, (self.end - self.start).days + 1)))
        return True


def _runs(values: List[int], name: Callable[[int], str]) -> List[str]:
    """Sorted numbers written as runs: 7 8 9 10 12 as 7-10 12, mon tue wed as mon-wed."""
    runs: List[List[int]] = []
    for value in values:
        if runs and value == runs[-1][-1] + 1:
            runs[-1].append(value)
        else:
            runs.append([value])
    return [name(run[0]) if len(run) == 1 else f"{name(run[0])}-{name(run[-1])}" for run in runs]


def _same_day(rule: Day, day: date) -> bool:
    return rule == day if isinstance(rule, date) else rule.matches(day)


def read_time(found: Mapping[str, str]) -> Optional[LineTime]:
    """The time options among a line's `found` options (key: value as written), or None when it
    has none. Raises ValueError saying what is wrong and how to write it: a date that cannot come
    (02-30, a weekday that is none), a season of full dates that ends before it begins."""
    given = {key: value for key, value in found.items() if key in TIME_KEYS}
    if not given:
        return None
    if "at" in given:
        others = [key for key in given if key != "at"]
        if others:
            raise ValueError(f"has at with {', '.join(others)}: at is a time of its own, keep one of them")
        return LineTime(at=read_moment(given["at"], "has at:"))
    if "on" in given and ("from" in given or "until" in given):
        raise ValueError("has on with from or until: use on for one day, or from and until for a season")
    time = LineTime(
        on=_day(given["on"], "on") if "on" in given else None,
        start=_day(given["from"], "from") if "from" in given else None,
        end=_day(given["until"], "until") if "until" in given else None,
        days=_weekdays(given["days"]) if "days" in given else frozenset(),
        hours=_hours(given["hours"]) if "hours" in given else frozenset(),
    )
    _check_season(time.start, time.end)
    if not time.can_come():
        raise ValueError(f"can never go: no day of {time.describe()} is one of its days; fix the date or the days")
    return time


def _check_season(start: Optional[Day], end: Optional[Day]) -> None:
    if start is None and end is None:
        return
    if isinstance(start, MonthDay) or isinstance(end, MonthDay):
        if start is None or end is None or not isinstance(start, MonthDay) or not isinstance(end, MonthDay):
            raise ValueError(
                "has a season of month-days without both ends, or with one end a full date: write both as "
                "month-days (from: 12-01; until: 12-24) or both as full dates (from: 2026-12-01; until: 2026-12-24)"
            )
        return
    if isinstance(start, date) and isinstance(end, date) and end < start:
        raise ValueError(f"has until {end} before its from {start}: swap them, or fix the year")


def _day(text: str, key: str) -> Day:
    match = _DATE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"has {key}: {text.strip()[:40]!r}, which is no date: write MM-DD (12-25) or YYYY-MM-DD")
    year, month, day = match.groups()
    if year is not None and not FIRST_YEAR <= int(year) <= LAST_YEAR:
        raise ValueError(f"has {key}: {text.strip()}, {_out_of_years(int(year))}")
    if year is None:
        # A month-day is possible when it exists in a leap year (02-29 comes every four years).
        if not 1 <= int(month) <= 12 or not 1 <= int(day) <= _months.monthrange(2024, int(month))[1]:
            raise ValueError(f"has {key}: {text.strip()}, a day no year has: fix the month or the day")
        return MonthDay(int(month), int(day))
    try:
        return date(int(year), int(month), int(day))
    except ValueError:
        raise ValueError(f"has {key}: {text.strip()}, a date that does not exist: fix the month or the day") from None


def read_moment(text: str, said: str) -> datetime:
    """A date and time written YYYY-MM-DD HH:MM (a line's `at`, a dry run's --at), naive: it is in
    the bot's zone. Raises ValueError whose message starts with `said`."""
    match = _AT.fullmatch(text.strip())
    if match is None:
        raise ValueError(
            f"{said} {text.strip()[:40]!r}, which is no date and time: write YYYY-MM-DD HH:MM (2026-12-31 23:59)"
        )
    if not FIRST_YEAR <= int(match.group(1)) <= LAST_YEAR:
        raise ValueError(f"{said} {text.strip()}, {_out_of_years(int(match.group(1)))}")
    try:
        return datetime(*(int(part) for part in match.groups()))  # type: ignore[misc]
    except ValueError:
        raise ValueError(f"{said} {text.strip()}, a time that does not exist: fix the date or the time") from None


def _out_of_years(year: int) -> str:
    """Why a date of `year` is refused, and what to write."""
    return f"a year the bot does not compute ({year}): write a year from {FIRST_YEAR} to {LAST_YEAR}"


def _weekdays(text: str) -> FrozenSet[int]:
    days = set()
    for word in _words(text):
        first, dash, last = word.partition("-")
        ends = [_DAY_NAMES.get(name) for name in ((first, last) if dash else (first,))]
        if None in ends:
            raise ValueError(f"has days: {word!r}, which is no weekday: write mon tue wed thu fri sat sun, or mon-fri")
        start, end = ends[0], ends[-1]
        assert start is not None and end is not None
        days.update(_span(start, end, 7))
    return frozenset(days)


def _hours(text: str) -> FrozenSet[int]:
    hours = set()
    for word in _words(text):
        first, dash, last = word.partition("-")
        try:
            ends = [int(first), int(last) if dash else int(first)]
        except ValueError:
            ends = [-1]
        if any(not 0 <= hour <= 23 for hour in ends):
            raise ValueError(f"has hours: {word!r}, which are no hours: write hours 0 to 23, as in 7-10 or 9 18-20")
        hours.update(_span(ends[0], ends[-1], 24))
    return frozenset(hours)


def _span(start: int, end: int, size: int) -> Tuple[int, ...]:
    """From `start` to `end` inclusive, wrapping at `size` (fri-mon, 22-2)."""
    return tuple((start + step) % size for step in range((end - start) % size + 1))


def _words(text: str) -> Tuple[str, ...]:
    words = tuple(word for word in re.split(r"[\s,]+", text.strip().lower()) if word)
    if not words:
        raise ValueError("has a time option without a value")
    return words

"""The calendar of a tweets file: which of its timed lines (posting/when.py) a run at a given
time owes, and what is coming. Pure over the history's answers; times are aware, the lines' own
are read in the bot's zone (TWEET_TIMEZONE, else the system's)::

    due = one_offs_due(tweets.times, store, now, rules)   # {at} lines whose time has come, oldest first
    text = dated_due(tweets.times, store, now, rules.zone)  # a dated line owed today, or None
    coming(tweets, now, zone, days=30)                     # what comes in the next 30 days

A one-off (`{at: ...}`) is posted by the first run at or after its time, never before and never
twice (any post of its text ends it), unless that run comes more than LATE_BY after its time:
then it is noted as missed, once. A dated line goes once on each day its options hold, before
the plain round, which waits for it and keeps its place.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from typing import TYPE_CHECKING, Callable, List, Mapping, Optional, Sequence, Tuple

from ..settings.keys import HISTORY_DAYS
from ..state.clock import zone_for
from ..wording import format_duration
from . import LATE_BY, TWEETS_FILE
from .when import LineTime

if TYPE_CHECKING:
    from ..settings.loading import Config
    from ..state.calendar import CalendarMarks
    from .tweets import TweetFile

__all__ = [
    "CLOCK_AHEAD",
    "Calendar",
    "Coming",
    "Due",
    "coming",
    "dated_due",
    "in_zone",
    "local",
    "missed_reason",
    "one_offs_due",
    "OneOffTimes",
]

# A missed note dated later than now plus this was taken while the clock was ahead: it is not
# believed, so a clock set right again still posts the line when its time truly comes.
CLOCK_AHEAD = timedelta(minutes=5)


@dataclass(frozen=True)
class Calendar:
    """What the calendar is read by: the bot's zone, LATE_BY, and how far back a one-off is still
    looked at (HISTORY_DAYS: an older one's posts may have been folded away)."""

    zone: tzinfo = timezone.utc
    late_by: timedelta = timedelta(hours=1)
    memory: timedelta = timedelta(days=400)

    @classmethod
    def of(cls, config: Config) -> Calendar:
        """The calendar as the settings say: TWEET_TIMEZONE (else the system's), LATE_BY, HISTORY_DAYS."""
        return cls(
            zone_for(config["TWEET_TIMEZONE"]),
            timedelta(seconds=config[LATE_BY]),
            timedelta(days=config[HISTORY_DAYS]),
        )


@dataclass(frozen=True)
class Due:
    """A one-off line whose time has come and that neither went nor was noted missed."""

    text: str
    at: datetime  # its time, aware
    late: timedelta  # how long ago that was

    def in_time(self, late_by: timedelta) -> bool:
        return self.late <= late_by


def local(moment: datetime, zone: tzinfo) -> datetime:
    """An aware time as a naive one in `zone`: what a line's options are compared with."""
    return moment.astimezone(zone).replace(tzinfo=None)


def in_zone(naive: datetime, zone: tzinfo) -> datetime:
    """A naive time of `zone` (a line's `at`, a midnight) as an aware UTC time."""
    return naive.replace(tzinfo=zone).astimezone(timezone.utc)


def one_offs_due(times: Mapping[str, LineTime], store: CalendarMarks, now: datetime, calendar: Calendar) -> List[Due]:
    """The one-offs whose time is at or before `now` (within the history's memory) that no post
    of the history holds and no believable missed note names, oldest first. Asks the history
    nothing when no one-off's time has come."""
    times_of = {text: in_zone(line.at, calendar.zone) for text, line in times.items() if line.at is not None}
    waiting = {text: at for text, at in times_of.items() if now - calendar.memory < at <= now}
    if not waiting:
        return []
    posted = store.last_posts(list(waiting))
    noted = {mark.text for mark in store.missed() if mark.noted_at <= now + CLOCK_AHEAD}
    due = [Due(text, at, now - at) for text, at in waiting.items() if text not in posted and text not in noted]
    return sorted(due, key=lambda each: (each.at, each.text))


def missed_reason(due: Due, calendar: Calendar, ran_in_time: bool) -> str:
    """Why a one-off was missed, for the history, the log and check: no run came within LATE_BY
    (a dry run posts nothing, and does not count), or the real runs that did could not post
    (MAX_POSTS_PER_DAY)."""
    limit = f"LATE_BY={format_duration(calendar.late_by)}"
    if ran_in_time:
        return f"the runs within {limit} of its time could not post it (MAX_POSTS_PER_DAY)"
    return f"no run came within {limit} of its time: the first came {format_duration(due.late)} after it"


def dated_due(times: Mapping[str, LineTime], store: CalendarMarks, now: datetime, zone: tzinfo) -> Optional[str]:
    """The dated line a run at `now` owes: one whose options hold now and that has not gone today
    (the bot's day, midnight to midnight, so a clock set back a day finds the day's post), the one
    that went longest ago first (never posted: first of all), then in file order. None: none."""
    moment = local(now, zone)
    holding = [text for text, line in times.items() if line.at is None and line.holds(moment)]
    if not holding:
        return None
    start = in_zone(datetime.combine(moment.date(), time()), zone)
    end = in_zone(datetime.combine(moment.date() + timedelta(days=1), time()), zone)
    today = store.posted_between(holding, start, end)
    left = [text for text in holding if text not in today]
    if not left:
        return None
    last = store.last_posts(left)
    never = datetime.min.replace(tzinfo=timezone.utc)
    return min(left, key=lambda text: last.get(text, never))  # min keeps file order among equals


@dataclass(frozen=True)
class Coming:
    """A timed line on one of the coming days: its line number, its text as posted, its options,
    and the day (a one-off: its time, aware)."""

    lineno: int
    text: str
    time: LineTime
    day: date
    at: Optional[datetime] = None


def coming(tweets: TweetFile, now: datetime, zone: tzinfo, days: int) -> List[Coming]:
    """The timed lines of the `days` days from today (the bot's), day by day in file order; a
    one-off from its day on, if its time is still to come."""
    found: List[Tuple[date, int, Coming]] = []
    today = local(now, zone).date()
    for index, text in enumerate(tweets.texts):
        line_time = tweets.times.get(text)
        if line_time is None:
            continue
        line = tweets.line(index)
        if line_time.at is not None:
            at = in_zone(line_time.at, zone)
            if at > now and line_time.at.date() < today + timedelta(days=days):
                found.append(
                    (
                        line_time.at.date(),
                        line.lineno,
                        Coming(line.lineno, line.text, line_time, line_time.at.date(), at),
                    )
                )
            continue
        for day in line_time.days_from(today, days):
            found.append((day, line.lineno, Coming(line.lineno, line.text, line_time, day)))
    return [each for _day, _lineno, each in sorted(found, key=lambda item: (item[0], item[1]))]


def passed(times: Mapping[str, LineTime], today: date) -> Sequence[str]:
    """The dated lines whose last day (written in full) is before `today`: they will not come again."""
    return [text for text, line in times.items() if line.at is None and (line.last_day() or today) < today]


class OneOffTimes:
    """The tweets file's one-off times, for the daemon, which asks before each nap: the file is
    read again (without measuring a line) only when it or the settings changed. `settings()` gives
    the settings in use (a reload may change them)."""

    def __init__(self, settings: Callable[[], Config]) -> None:
        self._settings = settings
        self._seen: Optional[tuple] = None
        self._times: List[datetime] = []

    def __call__(self, after: Optional[datetime]) -> Optional[datetime]:
        """The first one-off time after `after` (any, when None)."""
        from .sources import source_of

        config = self._settings()
        path = config[TWEETS_FILE]
        try:
            stat = path.stat()
        except OSError:
            return None
        seen = (path, stat.st_mtime_ns, stat.st_size, config["TWEET_TIMEZONE"])
        if seen != self._seen:
            zone = Calendar.of(config).zone
            found = source_of(config).times()
            self._times = sorted(in_zone(time.at, zone) for time in found.values() if time.at is not None)
            self._seen = seen
        return next((at for at in self._times if after is None or at > after), None)

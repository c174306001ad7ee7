"""The clock checked against the history before a run decides anything. A Raspberry Pi has no
battery clock: it boots at the last saved time (fake-hwclock) or at 1970 and keeps it until the
network answers, and an SD card moved between Pis brings another's. The history's newest record
is the floor: a run whose clock says a time well before it, or implausibly far after it, posts
nothing, prunes nothing and writes nothing (exit 75), so a false date never posts a dated line,
never wipes the history and never dates a record in a future the true clock must then wait for::

    check_clock(store.newest_record(), utc_now())   # raises ClockNotSet, or returns
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Optional

from ..errors import BotError, ExitStatus
from .database import Database, iso, parse_iso
from .skips import SkipLog

__all__ = ["CLOCK_BEHIND", "CLOCK_LEAP", "ClockFloor", "ClockNotSet", "check_clock", "clock_trouble"]

# How far before the newest record a clock may be and still run: a clock set back by hand, or
# fake-hwclock's time from the last shutdown (saved every hour). A run there finds what the later
# records say (the day's dated post, a one-off's post) and posts nothing twice.
CLOCK_BEHIND = timedelta(hours=1)
# How far after the newest record a clock is still believed: a bot left off for up to a year. A
# clock further ahead is taken for a wrong one. `bot.py --trust-clock` believes the clock: a run
# then dates now what a clock that was ahead dated later (`redate_after`), and the floor is right.
CLOCK_LEAP = timedelta(days=366)


class ClockNotSet(BotError):
    """The system clock disagrees with the history: not set yet (a Pi without a real-time clock,
    before the network answers), or set wrong. Nothing was done; a later run tries again."""

    kind = "clock"
    exit_status = ExitStatus.TEMPORARY_FAILURE


class ClockFloor(Database):
    """The newest time the history holds: a run's start, a skipped run's, a post's, a missed note's,
    a read of a network's mentions (a round of replies)."""

    skips: SkipLog  # the day's skipped runs (runs.py)

    def newest_record(self) -> Optional[datetime]:
        """The newest time any record of the history was written at (None: an empty history).
        Reads of indexed or small tables, and the day's skipped runs."""
        (newest,) = self._read(
            "SELECT max(at) FROM (SELECT max(started_at) AS at FROM runs UNION ALL SELECT max(sent_at) FROM attempts"
            " UNION ALL SELECT max(noted_at) FROM missed UNION ALL SELECT max(read_at) FROM mention_cursors)"
        )[0]
        found = parse_iso(newest) if newest else None
        streak = self.skips.read()
        if streak is not None and (found is None or streak.last > found):
            found = streak.last
        return found

    def redate_after(self, now: datetime) -> int:
        """The owner says `now` is right (--trust-clock): records dated after it were written by a
        clock that was ahead. Runs, posts and mention reads are dated `now` (kept: the cap counts
        them as recent, the calendar still finds a one-off's post), a missed note taken then is
        dropped (the line goes when its time truly comes), as `CalendarLog.forget_missed` does, and
        the day's skipped runs are dated `now`. Returns the rows changed."""
        at = iso(now)
        with self._write() as conn:
            changed = 0
            for table, column in (
                ("runs", "started_at"),
                ("runs", "finished_at"),
                ("attempts", "sent_at"),
                ("attempts", "finished_at"),
                ("mention_cursors", "read_at"),
            ):
                changed += conn.execute(f"UPDATE {table} SET {column} = ? WHERE {column} > ?", (at, at)).rowcount
            changed += conn.execute("DELETE FROM missed WHERE noted_at > ?", (at,)).rowcount
        self.skips.redate(now)
        return changed


def clock_trouble(newest: Optional[datetime], now: datetime) -> Optional[str]:
    """What is wrong with `now` against the history's `newest` record, in a sentence; None: it is
    believable (an empty history believes any clock)."""
    if newest is None:
        return None
    said = f"the clock says {now:%Y-%m-%d %H:%M} UTC"
    record = f"the history's newest record ({newest:%Y-%m-%d %H:%M} UTC)"
    if now < newest - CLOCK_BEHIND:
        return f"{said}, before {record}"
    if now > newest + CLOCK_LEAP:
        return f"{said}, more than {CLOCK_LEAP.days} days after {record}"
    return None


def check_clock(newest: Optional[datetime], now: datetime, *, trusted: bool = False) -> None:
    """Raise ClockNotSet (exit 75) when `now` is not believable against the history's `newest`
    record, unless `trusted` (--trust-clock: the owner says the clock is right)."""
    trouble = clock_trouble(newest, now)
    if trouble is None or trusted:
        return
    raise ClockNotSet(
        f"the clock is not set yet: {trouble}. Nothing was posted, pruned or recorded; a later run tries "
        "again. A Raspberry Pi without a real-time clock: start the bot after time-sync.target, or install "
        "fake-hwclock and systemd-timesyncd (docs/scheduling.md, 'A Pi without a real-time clock'); "
        "if the clock is right (the bot was off that long, or a clock that was ahead dated the records), run "
        "`bot.py --trust-clock` once"
    )

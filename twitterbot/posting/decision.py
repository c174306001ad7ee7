"""Whether a scheduled run posts, before any line is picked: the 1-in-N roll, the daily cap, the gap.

The cap (`cap_reached`) is the one check of MAX_POSTS_PER_DAY for scheduled runs and progress jobs
alike; the gap (MIN_POST_GAP) holds scheduled posts only::

    decision = decide(store, now, rolled=roll(4, rng), one_in=4, cap=4, gap=timedelta(0), force=False)
    isinstance(decision, Skip), decision.reason   # (True, 'rolled 2 (posts on 0 of 1-in-4)')
"""

from __future__ import annotations

import logging
import random
from datetime import datetime, timedelta
from typing import Optional, Union

from ..state.counting import CAP_WINDOW, CLOCK_SLACK
from ..state.store import HistoryStore
from ..wording import format_duration
from .choose import hits, roll

__all__ = [
    "CapReached",
    "Go",
    "Skip",
    "cap_reached",
    "decide",
    "gap_not_passed",
    "roll_die",
    "clock_went_back",
    "warn_if_the_clock_went_back",
]

log = logging.getLogger(__name__)


class Skip:
    """The run posts nothing, and why: the roll, the daily cap or the gap since the last post.
    Plain classes, as `Go` and `CapReached`: every run makes them, and a dataclass costs one to make."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class Go:
    """The run posts a line, and why ("rolled 0 of 1-in-4", "forced, although ...")."""

    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why


def decide(
    store: HistoryStore,
    now: datetime,
    *,
    rolled: Optional[int],
    one_in: int,
    cap: int,
    gap: timedelta,
    force: bool,
) -> Union[Skip, Go]:
    """Whether this run posts, before any line is picked: the roll (None: --force), then the cap
    of posts in 24 hours, then the gap since the last scheduled post (which --force may pass)."""
    if rolled is not None and not hits(rolled):
        return Skip(f"rolled {rolled} (posts on 0 of 1-in-{one_in})")
    why = "forced" if rolled is None else f"rolled 0 of 1-in-{one_in}"
    capped = cap_reached(store, now, cap)
    if capped:
        after = f"; the next can go after {capped.frees_at.astimezone():%Y-%m-%d %H:%M}" if capped.frees_at else ""
        return Skip(f"{why}, but {capped.reason(cap)}{after}")
    gap_ends = gap_not_passed(store, now, gap)
    if gap_ends:
        last = (gap_ends - gap).astimezone()
        too_soon = (
            f"the last scheduled post went out at {last:%H:%M}, less than MIN_POST_GAP={format_duration(gap)} ago"
        )
        if not force:
            return Skip(f"{why}, but {too_soon}; the next can go after {gap_ends.astimezone():%H:%M}")
        log.warning("--force: posting although %s", too_soon)
        return Go(f"forced, although {too_soon}")
    return Go(why)


class CapReached:
    """MAX_POSTS_PER_DAY is used up: `recent` posts (from every source) in the last 24 hours,
    and the oldest of them leaves the window at `frees_at`."""

    __slots__ = ("frees_at", "recent")

    def __init__(self, recent: int, frees_at: Optional[datetime]) -> None:
        self.recent, self.frees_at = recent, frees_at

    def reason(self, limit: int) -> str:
        return f"the cap is reached: {self.recent} posts in the last 24 hours (MAX_POSTS_PER_DAY={limit})"


def cap_reached(store: HistoryStore, now: datetime, limit: int) -> Optional[CapReached]:
    """The one check of the daily cap, for scheduled runs and progress jobs alike: None while
    fewer than `limit` posts went out in the last 24 hours. Posts dated in the future (the clock
    was ahead when they were made) do not count: they would block posting until that date."""
    recent = store.posts_since(now - CAP_WINDOW, until=now + CLOCK_SLACK)
    if recent < limit:
        return None
    oldest = store.oldest_post_since(now - CAP_WINDOW, until=now + CLOCK_SLACK)
    return CapReached(recent, oldest + CAP_WINDOW if oldest else None)


def gap_not_passed(store: HistoryStore, now: datetime, min_gap: timedelta) -> Optional[datetime]:
    """When the next scheduled post may go, if the last one went out less than `min_gap` ago
    (MIN_POST_GAP); None if a post may go now. Progress jobs' posts do not count."""
    if min_gap <= timedelta(0):
        return None
    last = store.last_scheduled_post(until=now + CLOCK_SLACK)
    if last is None or now - last >= min_gap:
        return None
    return last + min_gap


def clock_went_back(store: HistoryStore, now: datetime) -> Optional[datetime]:
    """When the last run says it started, if that is after `now` (the clock was ahead then, or is
    behind now); None when it is not."""
    last = store.last_run_started()
    return last if last and last > now + CLOCK_SLACK else None


def warn_if_the_clock_went_back(store: HistoryStore, now: datetime) -> None:
    """Once, in the first run after it: the last run is dated after now, so the clock was ahead
    then or is behind now. This run's own row, dated now, ends the warning."""
    last = clock_went_back(store, now)
    if last:
        log.warning(
            "the clock seems to have jumped: the last run is dated %s, after now (%s); posts dated in the "
            "future are left out of MAX_POSTS_PER_DAY and MIN_POST_GAP. Check the clock (timedatectl)",
            last.astimezone().strftime("%Y-%m-%d %H:%M"),
            now.astimezone().strftime("%Y-%m-%d %H:%M"),
        )


def roll_die(one_in: int, rng: random.Random, force: bool, *, given: Optional[int] = None) -> Optional[int]:
    """The die, 0..one_in-1 (a 0 posts); None with --force, which rolls nothing; `given` when the
    run was started with its roll made (--roll, the flock's daemon)."""
    if force:
        log.debug("the roll: none (--force)")
        return None
    rolled = roll(one_in, rng) if given is None else given
    made = "" if given is None else ", rolled before the run (--roll)"
    log.debug("the roll: %d of 0..%d (1 run in %d posts, on a 0)%s", rolled, one_in - 1, one_in, made)
    return rolled

"""The history store: every run, every post attempt, the shuffle bag, progress jobs and a cache of
measured lengths, in one SQLite file, behind one object.

It is what keeps the bot from spamming or double-posting. An attempt is written (and committed)
*before* the request goes to a network and its outcome after, so a run that dies half-way leaves a
``pending`` attempt that the next run counts as probably posted instead of sending it again::

    store = HistoryStore(":memory:")
    attempt = store.begin_attempt("hello", run_id=None, at=now, network="mastodon")
    store.finish_attempt(attempt, Ending("posted", now, post_id="123"))    # outcomes.Ending

Each concern is a module of its own (runs.py with counting.py, threads.py, jobs.py, bag.py,
lengths.py, alerts.py, calendar.py, mentions.py, prune.py and floor.py over database.py); this class only puts them together, so callers keep one
object to pass around.
"""

from __future__ import annotations

from .alerts import AlertLog
from .bag import Bag
from .calendar import CalendarLog
from .floor import ClockFloor
from .jobs import JobLog
from .lengths import LengthCache
from .mentions import MentionLog
from .prune import Pruning
from .runs import RunLog
from .threads import ThreadLog

__all__ = ["HistoryStore"]


class HistoryStore(RunLog, ThreadLog, JobLog, Bag, LengthCache, AlertLog, Pruning, CalendarLog, MentionLog, ClockFloor):
    """SQLite history. Pass a path, or ":memory:" in tests."""

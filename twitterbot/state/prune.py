"""A bounded history: the runs older than HISTORY_DAYS are folded into daily counts (the `days`
table) and their rows removed, with the attempts, threads and jobs of that time, so that a bot
running every ten minutes for years keeps a history of the same few megabytes::

    store.prune(before=now - timedelta(days=400), texts_since=now - timedelta(days=365), at=now)
    store.size()    # HistorySize(bytes=2_480_128, runs=14_210, oldest=..., folded_days=35)

Never removed, however old: what the round, the cap, settling or a thread still need. The round
is the bag (a table of its own), the cap counts the last 24 hours and settling the last week (far
inside any HISTORY_DAYS), and a grammar's memory of what it posted (GRAMMAR_MEMORY, `texts_since`)
keeps its attempts; so do a job still running, an attempt whose outcome is not known yet
(pending, uncertain) and the newest post of all (a new round never starts with it). Freed pages
are reused by the rows of the days after: the file stops growing rather than shrinking.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Optional

from .database import Database, iso, parse_iso

__all__ = ["KEPT", "HistorySize", "Pruning"]

# Never pruned, whatever `before` says: the rows of the last this long before the history's newest
# record. The cap counts a day and settling looks back a week (posting's LOOK_UP_WINDOW): a clock
# far ahead, or a caller's false `now`, can fold nothing they read.
KEPT = timedelta(days=8)

# Outcomes never pruned: the network may have the post, and a later run still looks it up.
_UNKNOWN = ("pending", "uncertain", "interrupted")


@dataclass(frozen=True)
class HistorySize:
    """How big the history is, for `check`: the file's bytes, its runs (each row may stand for a
    day's skipped runs), when its oldest run started, and how many earlier days are kept as counts."""

    bytes: int
    runs: int
    oldest: Optional[datetime]
    folded_days: int


class Pruning(Database):
    """The `days` table of folded runs, and pruning the runs, attempts, threads and jobs older than
    HISTORY_DAYS into it."""

    def due_for_pruning(self, before: datetime) -> bool:
        """Whether a run started before `before` is still kept (a cheap read, on the run's index)."""
        rows = self._read("SELECT 1 FROM runs WHERE started_at < ? LIMIT 1", (iso(before),))
        return bool(rows)

    def prune(self, *, before: datetime, texts_since: datetime, at: datetime) -> int:
        """Fold the runs started before `before` into daily counts and remove them, with the
        attempts, threads and finished jobs of before then (the attempts only where they are also
        older than `texts_since`: GRAMMAR_MEMORY), in one transaction, never those of the KEPT days
        before the newest record. Returns the rows removed."""
        unknown = ", ".join("?" for _ in _UNKNOWN)
        with self._write() as conn:
            (newest,) = conn.execute(
                "SELECT max(at) FROM (SELECT max(started_at) AS at FROM runs UNION ALL SELECT max(sent_at) FROM attempts)"
            ).fetchone()
            if newest is not None:
                before = min(before, parse_iso(newest) - KEPT)
            cutoff, texts_cutoff = iso(before), iso(min(before, texts_since))
            conn.execute(
                "INSERT INTO days (day, runs, posted, skipped, failed)"
                " SELECT substr(started_at, 1, 10), sum(runs), sum(action = 'posted'), sum(CASE WHEN action = 'skipped'"
                " THEN runs ELSE 0 END), sum(action = 'failed') FROM runs WHERE started_at < ?"
                " GROUP BY substr(started_at, 1, 10) ON CONFLICT (day) DO UPDATE SET runs = runs + excluded.runs,"
                " posted = posted + excluded.posted, skipped = skipped + excluded.skipped, failed = failed + excluded.failed",
                (cutoff,),
            )
            removed = conn.execute("DELETE FROM runs WHERE started_at < ?", (cutoff,)).rowcount
            newest = conn.execute("SELECT max(id) FROM attempts WHERE outcome = 'posted'").fetchone()[0]
            removed += conn.execute(
                f"DELETE FROM attempts WHERE sent_at < ? AND outcome NOT IN ({unknown}) AND id IS NOT ?"
                " AND (job_id IS NULL OR job_id IN (SELECT id FROM jobs WHERE finished_at IS NOT NULL))",
                (texts_cutoff, *_UNKNOWN, newest),
            ).rowcount
            old_threads = "SELECT id FROM threads WHERE started_at < ? AND finished_at IS NOT NULL"
            conn.execute(f"DELETE FROM thread_parts WHERE thread_id IN ({old_threads})", (cutoff,))
            removed += conn.execute(f"DELETE FROM threads WHERE id IN ({old_threads})", (cutoff,)).rowcount
            old_jobs = (
                "SELECT id FROM jobs WHERE finished_at IS NOT NULL AND finished_at < ?"
                " AND id NOT IN (SELECT job_id FROM attempts WHERE job_id IS NOT NULL)"
            )
            conn.execute(f"DELETE FROM job_threads WHERE job_id IN ({old_jobs})", (cutoff,))
            removed += conn.execute(f"DELETE FROM jobs WHERE id IN ({old_jobs})", (cutoff,)).rowcount
        return removed

    def size(self) -> HistorySize:
        """The history's size and age (`check`)."""
        runs, oldest = self._read("SELECT coalesce(sum(runs), 0), min(started_at) FROM runs")[0]
        (folded,) = self._read("SELECT count(*) FROM days")[0]
        size = os.stat(self._file).st_size if self._file is not None else 0
        return HistorySize(size, int(runs), parse_iso(oldest) if oldest else None, int(folded))

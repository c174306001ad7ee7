"""What the calendar asks of the history: when a dated line last went, whether a one-off line
went, and the one-offs no run could post in time (the `missed` table)::

    store.last_posts(["{on: 12-25} Merry Christmas"])          # {text: when it last went}
    store.posted_between(texts, day_start, day_end)            # the texts that went that day
    store.record_missed(text, due=at, at=now, reason="...")    # once; later runs see it in missed()
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Dict, Iterator, List, Sequence, Set

from .counting import COUNTED_OUTCOMES
from .database import Database, iso, parse_iso
from .skips import SkipLog

__all__ = ["CalendarLog", "CalendarMarks", "Missed"]

_CHUNK = 400  # texts per query: SQLite takes at most 999 parameters in older builds


@dataclass(frozen=True)
class Missed:
    """A one-off line no run could post within LATE_BY of its time."""

    text: str
    due_at: datetime
    noted_at: datetime
    reason: str


class CalendarMarks:
    """The calendar's questions, over a class's `_read(sql, params) -> rows`: the store and the
    status page's reader ask them alike. Posts are what the cap counts: sent, or maybe sent."""

    _read: Callable[..., list]

    def last_posts(self, texts: Sequence[str]) -> Dict[str, datetime]:
        """When each of `texts` last went (or may have gone) to a network; texts never posted are left out."""
        found: Dict[str, datetime] = {}
        for chunk in _chunks(texts):
            rows = self._read(
                f"SELECT text, max(sent_at) FROM attempts WHERE text IN ({_marks(chunk)})"
                f" AND outcome IN ({_marks(COUNTED_OUTCOMES)}) GROUP BY text",
                (*chunk, *COUNTED_OUTCOMES),
            )
            found.update((row[0], parse_iso(row[1])) for row in rows)
        return found

    def posted_between(self, texts: Sequence[str], start: datetime, end: datetime) -> Set[str]:
        """Those of `texts` that went (or may have gone) at or after `start` and before `end`."""
        found: Set[str] = set()
        for chunk in _chunks(texts):
            rows = self._read(
                f"SELECT DISTINCT text FROM attempts WHERE text IN ({_marks(chunk)}) AND sent_at >= ? AND sent_at < ?"
                f" AND outcome IN ({_marks(COUNTED_OUTCOMES)})",
                (*chunk, iso(start), iso(end), *COUNTED_OUTCOMES),
            )
            found.update(row[0] for row in rows)
        return found

    def missed(self) -> List[Missed]:
        """The one-off lines noted as missed, by their time."""
        rows = self._read("SELECT text, due_at, noted_at, reason FROM missed ORDER BY due_at, text")
        return [Missed(row[0], parse_iso(row[1]), parse_iso(row[2]), row[3]) for row in rows]


class CalendarLog(CalendarMarks, Database):
    """The missed table, and whether a run came in a one-off's time."""

    skips: SkipLog  # the day's skipped runs (runs.py)

    def ran_between(self, start: datetime, end: datetime) -> bool:
        """Whether a real run (a dry run posts nothing) started from `start` to `end`, a skipped
        one included: why a one-off was missed is then that run's cap, not the lack of a run."""
        rows = self._read(
            "SELECT 1 FROM runs WHERE dry_run = 0 AND started_at >= ? AND started_at <= ? LIMIT 1",
            (iso(start), iso(end)),
        )
        streak = self.skips.read()
        return bool(rows) or (streak is not None and streak.first <= end and streak.last >= start)

    def record_missed(self, text: str, *, due: datetime, at: datetime, reason: str) -> None:
        """Note that the one-off `text`, due at `due`, was missed (found so at `at`); a note taken
        while the clock was ahead (dated after `at`) is replaced by this one."""
        with self._write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO missed (text, due_at, noted_at, reason) VALUES (?, ?, ?, ?)",
                (text, iso(due), iso(at), reason),
            )

    def forget_missed(self, texts: Sequence[str]) -> None:
        """Notes taken while the clock was ahead (a line was found missed before its time had truly
        come): dropped, so the line goes when its time comes."""
        with self._write() as conn:
            conn.executemany("DELETE FROM missed WHERE text = ?", [(text,) for text in texts])


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" for _ in values)


def _chunks(texts: Sequence[str]) -> Iterator[Sequence[str]]:
    texts = list(texts)
    for start in range(0, len(texts), _CHUNK):
        yield texts[start : start + _CHUNK]

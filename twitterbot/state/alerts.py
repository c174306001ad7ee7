"""The alerts the monitor took and that are not settled since, so that one problem alerts once
until it is fixed: the same failure again is quiet, and a success settles it (the next failure
alerts again). An alert is written down only once the monitor took it: one it did not take (the
outage that failed the run often fails the alert too) is sent again by the next run::

    if not store.alert_sent("run"):
        ...send it; once NOTIFY_URL answered 2xx:
        store.record_alert("run", at=now, message="the run failed")
    store.settle_alerts(["run"])
"""

from __future__ import annotations

from datetime import datetime
from typing import Iterable, List

from .database import Database, iso

__all__ = ["AlertLog"]


class AlertLog(Database):
    """The alerts table."""

    def alert_sent(self, problem: str) -> bool:
        """Whether `problem`'s alert was taken by the monitor and is not settled since."""
        return bool(self._read("SELECT 1 FROM alerts WHERE problem = ?", (problem,)))

    def record_alert(self, problem: str, *, at: datetime, message: str) -> bool:
        """Record that the monitor took `problem`'s alert; False if it was recorded already (and
        not settled since)."""
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO alerts (problem, sent_at, message) VALUES (?, ?, ?)", (problem, iso(at), message)
            )
            return cursor.rowcount == 1

    def settle_alerts(self, problems: Iterable[str]) -> None:
        """These problems are over: each alerts again when it next happens."""
        names = list(problems)
        if not names:
            return
        with self._write() as conn:
            conn.executemany("DELETE FROM alerts WHERE problem = ?", [(name,) for name in names])

    def open_alerts(self) -> List[str]:
        """The problems that alerted and are not settled, oldest first."""
        return [row[0] for row in self._read("SELECT problem FROM alerts ORDER BY sent_at, problem")]

"""The alerts the monitor took and that are not settled since, so that one problem alerts once
until it is fixed: the same failure again is quiet, and a success settles it (the next failure
alerts again). An alert is written down as sent only once the monitor took it: one it did not
take (the outage that failed the run often fails the alert too) is written down as owed, and is
sent again by the next run that meets the problem; if a success settles the problem first,
`settle_alerts` hands the owed alert back, so that the owner still hears, once, that it happened::

    if not store.alert_sent("run"):
        ...send it; once NOTIFY_URL answered 2xx:
        store.record_alert("run", at=now, message="the run failed")
        ...or, when it did not: store.owe_alert("run", at=now, title="the run failed", message="...")
    for owed in store.settle_alerts(["run"]):
        ...tell the owner it happened and is over; once taken: store.forget_owed(owed.problem)

An owed alert is a row of the same table (no schema change), its problem written with the
`OWED` prefix, which no problem's own name has; its message is the title, a new line, and the
message.
"""

from __future__ import annotations

from datetime import datetime
from typing import Iterable, List, NamedTuple

from .database import Database, iso, parse_iso

__all__ = ["OWED", "AlertLog", "OwedAlert"]

OWED = "owed:"  # the prefix of an owed alert's problem in the alerts table


class OwedAlert(NamedTuple):
    """An alert the monitor did not take, for a problem that is now settled: what was not told."""

    problem: str
    at: datetime  # when the alert was first refused
    title: str
    message: str


class AlertLog(Database):
    """The alerts table."""

    def alert_sent(self, problem: str) -> bool:
        """Whether `problem`'s alert was taken by the monitor and is not settled since."""
        return bool(self._read("SELECT 1 FROM alerts WHERE problem = ?", (problem,)))

    def record_alert(self, problem: str, *, at: datetime, message: str) -> bool:
        """Record that the monitor took `problem`'s alert (and so that none is owed for it); False
        if it was recorded already (and not settled since)."""
        with self._write() as conn:
            conn.execute("DELETE FROM alerts WHERE problem = ?", (OWED + problem,))
            cursor = conn.execute(
                "INSERT OR IGNORE INTO alerts (problem, sent_at, message) VALUES (?, ?, ?)", (problem, iso(at), message)
            )
            return cursor.rowcount == 1

    def owe_alert(self, problem: str, *, at: datetime, title: str, message: str) -> None:
        """Record that the monitor did not take `problem`'s alert. The first refusal is kept (when
        the problem began); a later one of the same problem changes nothing."""
        with self._write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO alerts (problem, sent_at, message) VALUES (?, ?, ?)",
                (OWED + problem, iso(at), f"{' '.join(title.split())}\n{message}"),
            )

    def settle_alerts(self, problems: Iterable[str]) -> List[OwedAlert]:
        """These problems are over: each alerts again when it next happens. The alerts owed for
        them (the monitor never took one) are returned, and stay owed until `forget_owed`."""
        names = list(problems)
        if not names:
            return []
        with self._write() as conn:
            conn.executemany("DELETE FROM alerts WHERE problem = ?", [(name,) for name in names])
        owed = []
        for name in dict.fromkeys(names):
            for at, message in self._read("SELECT sent_at, message FROM alerts WHERE problem = ?", (OWED + name,)):
                title, _, text = (message or "").partition("\n")
                owed.append(OwedAlert(name, parse_iso(at), title, text))
        return owed

    def forget_owed(self, problem: str) -> None:
        """The owner has been told of `problem` after all: no alert is owed for it."""
        with self._write() as conn:
            conn.execute("DELETE FROM alerts WHERE problem = ?", (OWED + problem,))

    def open_alerts(self) -> List[str]:
        """The problems that alerted and are not settled, oldest first."""
        return [
            row[0]
            for row in self._read(
                "SELECT problem FROM alerts WHERE substr(problem, 1, ?) != ? ORDER BY sent_at, problem",
                (len(OWED), OWED),
            )
        ]

    def owed_alerts(self) -> List[str]:
        """The problems whose alert the monitor did not take, oldest first."""
        return [
            row[0][len(OWED) :]
            for row in self._read(
                "SELECT problem FROM alerts WHERE substr(problem, 1, ?) = ? ORDER BY sent_at, problem",
                (len(OWED), OWED),
            )
        ]

"""Skipped runs, kept light for an SD card: a run that posts nothing (the roll, the cap or the gap
said no, and nothing was left to settle or catch up) does not write to the history database.
It adds itself to the day's streak of skipped runs, one small record rewritten in place in the
file beside the history (`skipped-runs.json`): one write call, no flush, where a row in SQLite
costs a dozen writes and two flushes. The next run that writes to the history anyway (a post, a
failure) or the first skip of another day folds the streak into one row of the history's runs,
standing for all of them (its `runs` column)::

    skips = SkipLog(state_dir / SKIPS_FILE)
    streak = skips.add(now, one_in=4, roll=3, reason="rolled 3 of 4")   # Streak(runs=1, ...)
    skips.read()     # the streak not folded yet, or None

Losing the file (a power cut while it is written) loses only how many runs were skipped: nothing
about a post. A file that cannot be read is taken for no streak.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Optional

from .database import iso, parse_iso

__all__ = ["SKIPS_FILE", "SkipLog", "Streak"]

# Beside the history, in the state folder.
SKIPS_FILE = "skipped-runs.json"
# The record is written padded to this size, in place, in one call: a shorter record never leaves
# the end of a longer one behind, and the file never grows.
_RECORD_BYTES = 1024


@dataclass(frozen=True)
class Streak:
    """Runs skipped one after another on one day: how many, the first and the last, and what the
    last one rolled and why it skipped."""

    runs: int
    first: datetime
    last: datetime
    one_in: int
    roll: Optional[int]
    reason: str

    def summary(self) -> str:
        """The streak as one run's reason in the history: what the last said, and how many there were."""
        if self.runs == 1:
            return self.reason
        return f"{self.reason} (the last of {self.runs} runs skipped since {self.first.astimezone():%H:%M})"

    def day(self) -> str:
        return f"{self.first:%Y-%m-%d}"


class SkipLog:
    """The day's streak of skipped runs, in `path` (None: in memory, for a history in memory)."""

    def __init__(self, path: Optional[Path]) -> None:
        self.path = path
        self._held: Optional[Streak] = None  # in memory, or what this process last wrote

    def read(self) -> Optional[Streak]:
        """The streak not folded into the history yet; None: there is none (or the file is damaged)."""
        if self.path is None:
            return self._held
        try:
            with open(self.path, "rb") as handle:
                data = json.loads(handle.read(_RECORD_BYTES * 2).decode("utf-8").strip() or "null")
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or not data.get("runs"):
            return None
        try:
            return Streak(
                int(data["runs"]),
                parse_iso(data["first"]),
                parse_iso(data["last"]),
                int(data["one_in"]),
                None if data.get("roll") is None else int(data["roll"]),
                str(data.get("reason") or "skipped"),
            )
        except (KeyError, TypeError, ValueError):
            return None

    def add(self, at: datetime, *, one_in: int, roll: Optional[int], reason: str) -> Streak:
        """Add a skipped run to the streak (the caller folded a streak of another day first)."""
        held = self.read()
        if held is None:
            streak = Streak(1, at, at, one_in, roll, reason)
        else:
            streak = replace(held, runs=held.runs + 1, last=at, one_in=one_in, roll=roll, reason=reason)
        self._write(streak)
        return streak

    def redate(self, at: datetime) -> None:
        """A streak dated after `at` (a clock that was ahead wrote it) is dated `at`, its runs kept."""
        held = self.read()
        if held is not None and held.last > at:
            self._write(replace(held, first=min(held.first, at), last=at))

    def clear(self) -> None:
        """The streak was folded into the history: start a new one."""
        self._write(None)

    def _write(self, streak: Optional[Streak]) -> None:
        self._held = streak
        if self.path is None:
            return
        record = "null" if streak is None else _as_json(streak)
        data = record.encode("utf-8")[: _RECORD_BYTES - 1]
        if len(data) == _RECORD_BYTES - 1 and streak is not None:  # a reason too long: keep the counts
            data = _as_json(replace(streak, reason=streak.reason[:200])).encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            os.pwrite(fd, data.ljust(_RECORD_BYTES - 1) + b"\n", 0)
        finally:
            os.close(fd)


def _as_json(streak: Streak) -> str:
    fields = asdict(streak)
    fields.update(first=iso(streak.first), last=iso(streak.last))
    return json.dumps(fields, ensure_ascii=False, separators=(",", ":"))

"""The history as the status page reads it: read-only, and every question the page asks of it.

The file is opened with an SQLite ``mode=ro`` URI and ``query_only``: the page never writes it,
never creates it, and never migrates it (a history of schema 3 is read as it is, and the next run
upgrades it). One `read_history` is one snapshot, over in the few milliseconds its queries take,
so a scheduled run that posts meanwhile waits at most that long for its write lock. A file that is
not a whole history of ours, or that SQLite cannot read (busy, unreadable, damaged), raises
`UnreadableHistory` with a sentence for the owner. SQLite keeps whatever type a row was given, so
each value is read as the type the page expects (`_text`, `_count`, `_when`), and a value of
another type (bytes where text belongs, a word where a number belongs) reads as None or as text::

    with read_history(path) as history:
        history.posts_since(now - timedelta(hours=24), now), history.used_texts()
        history.recent_runs(15), history.keys_refused("mastodon")
        history.costs_since("x", month_start)      # what a network's posts cost (PostCounts)
"""

from __future__ import annotations

import math
import sqlite3
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Set, Tuple

from ..errors import ErrorKind, HistoryError
from .bag import BagContents
from .counting import PostCounts
from .database import iso
from .schema import APPLICATION_ID, SCHEMA_VERSION, TABLES, column
from .skips import SKIPS_FILE, SkipLog

__all__ = [
    "AttemptRow",
    "HistoryReader",
    "JobRow",
    "JobThread",
    "MissedLine",
    "RunRow",
    "UnreadableHistory",
    "read_history",
]

OLDEST_READABLE = 3  # networks and links in the attempts: older files are upgraded by the next run
_MISSED_SINCE = 10  # the schema version that added the missed one-offs


class UnreadableHistory(HistoryError):
    """The history cannot be read: not ours, of an older format, incomplete, busy or damaged. The
    message says which, and what to do."""


@dataclass(frozen=True)
class AttemptRow:
    """One post on one network; `job_name` is set for a progress job's post."""

    network: str
    text: str
    outcome: str
    sent_at: Optional[datetime]  # None: a time the history does not hold in its format
    detail: Optional[str] = None
    post_id: Optional[str] = None
    url: Optional[str] = None
    job_name: Optional[str] = None
    settled: Optional[str] = None  # how a later run settled an uncertain post, e.g. "uncertain → posted (...)"


@dataclass(frozen=True)
class RunRow:
    """One scheduled run, with its attempts (oldest first) when they were asked for."""

    id: int
    started_at: Optional[datetime]
    action: str
    one_in: Optional[int]
    roll: Optional[int]
    dry_run: bool
    text: Optional[str]
    reason: Optional[str]
    attempts: Tuple[AttemptRow, ...] = ()


@dataclass(frozen=True)
class MissedLine:
    """A one-off line (`{at: ...}`) no run could post within LATE_BY of its time: the line as
    written, its time, when the run that found it missed came, and why."""

    text: str
    due_at: Optional[datetime]
    noted_at: Optional[datetime]
    reason: str


@dataclass(frozen=True)
class JobThread:
    """A job's thread on one network: its first post's id, and the link stored with it, if any."""

    network: str
    post_id: str
    url: Optional[str]


@dataclass(frozen=True)
class JobRow:
    """A progress job's run."""

    id: int
    name: str
    started_at: Optional[datetime]
    finished_at: Optional[datetime]
    outcome: Optional[str]
    last_post_at: Optional[datetime]
    last_text: Optional[str]
    posts: int
    threads: Tuple[JobThread, ...] = ()


@dataclass(frozen=True)
class ReplyRow:
    """A mention the bot read (schema 11): who wrote it, what became of it (answered, skipped,
    failed, pending), the rule that matched, the reply's link or why it got none."""

    network: str
    author: str
    text: str
    seen_at: Optional[datetime]
    status: str
    reason: Optional[str]
    rule: Optional[str]
    reply_id: Optional[str]
    url: Optional[str]


@contextmanager
def read_history(path: Path) -> Iterator[HistoryReader]:
    """One consistent, read-only snapshot of the history at `path` (which must exist: a missing
    file is the caller's to explain). Raises `UnreadableHistory`."""
    try:
        conn, version = _open_read_only(path)
        with closing(conn):
            conn.execute("BEGIN")
            yield HistoryReader(conn, version, SkipLog(path.parent / SKIPS_FILE))
            conn.execute("ROLLBACK")
    except sqlite3.Error as exc:
        raise UnreadableHistory(_problem(path, exc)) from None


class HistoryReader(PostCounts, BagContents):
    """The status page's queries, over a read-only connection (see `read_history`). The cap's and
    the bag's are the store's own (`PostCounts`, `BagContents`)."""

    def __init__(self, conn: sqlite3.Connection, version: int, skips: Optional[SkipLog] = None) -> None:
        self._conn = conn
        self._skips = skips or SkipLog(None)  # the day's skipped runs, not in the database yet
        self._post_id = column("post_id", version)
        self._error_kind = column("error_kind", version)
        self._cost = column("cost", version)
        self._part = column("part", version)
        self._settled = column("settled", version)
        self._reads = version >= 11  # the billed reads of mentions (and the replies) are kept since schema 11
        self._calendar = version >= _MISSED_SINCE  # an older file has no missed one-offs to show

    def recent_runs(self, limit: int) -> Tuple[RunRow, ...]:
        """The last `limit` runs, newest first, each with its attempts; the day's skipped runs not
        in the database yet are the newest, as one."""
        rows = self._read(
            "SELECT id, started_at, action, one_in, roll, dry_run, text, reason FROM runs ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        streak = self._skips.read()
        if streak is not None and limit > 0:
            skipped = RunRow(0, streak.last, "skipped", streak.one_in, streak.roll, False, None, streak.summary())
            return (skipped, *self._with_attempts(rows[: limit - 1]))
        return self._with_attempts(rows)

    def _with_attempts(self, rows: list) -> Tuple[RunRow, ...]:
        """Runs rows as `RunRow`s, each with its attempts."""
        if not rows:
            return ()
        attempts: dict = {}
        marks = ", ".join("?" for _ in rows)
        # A run's attempts are sent after it starts: reading only those sent since the oldest of
        # these runs (a day's margin for a clock that moved) keeps a year's history as quick as a
        # day's, on the index of sent_at; attempts have no index of their run.
        starts = [when for when in (_when(row[1]) for row in rows) if when is not None]
        since = iso(min(starts) - timedelta(days=1)) if len(starts) == len(rows) else ""
        for run_id, network, outcome, post_id, url, detail, text, sent_at, settled in self._read(
            f"SELECT run_id, network, outcome, {self._post_id}, url, detail, text, sent_at, {self._settled} FROM attempts"
            f" WHERE sent_at >= ? AND run_id IN ({marks}) ORDER BY id",
            (since, *(row[0] for row in rows)),
        ):
            attempt = AttemptRow(
                _text(network) or "",
                _text(text) or "",
                _text(outcome) or "",
                _when(sent_at),
                _text(detail),
                _text(post_id),
                _text(url),
                settled=_text(settled),
            )
            attempts.setdefault(run_id, []).append(attempt)
        return tuple(_run(row, tuple(attempts.get(row[0], ()))) for row in rows)

    def keys_refused(self, network: str) -> Optional[AttemptRow]:
        """The last settled attempt on `network`, if it failed because the network refused the keys
        (`ErrorKind.UNAUTHORIZED`): nothing posts there until they are fixed. Rows written before
        schema 4 have no kind; migration 4 (or, for a file not yet migrated, the same test read
        here) finds the refusals among them by their message."""
        rows = self._read(
            f"SELECT outcome, detail, sent_at, text, {self._error_kind} FROM attempts WHERE network = ?"
            " AND outcome != 'pending' ORDER BY sent_at DESC, id DESC LIMIT 1",
            (network,),
        )
        if not rows:
            return None
        outcome, detail, sent_at, text, kind = rows[0]
        if outcome != "failed" or kind != ErrorKind.UNAUTHORIZED:
            return None
        return AttemptRow(network, _text(text) or "", outcome, _when(sent_at), _text(detail))

    def maybe_posted(self, since: datetime, limit: int) -> Tuple[AttemptRow, ...]:
        """Attempts sent after `since` that may or may not have reached their network, newest first."""
        rows = self._read(
            "SELECT network, text, outcome, detail, sent_at FROM attempts WHERE outcome IN ('uncertain', 'interrupted')"
            " AND sent_at > ? ORDER BY id DESC LIMIT ?",
            (iso(since), limit),
        )
        return tuple(
            AttemptRow(_text(row[0]) or "", _text(row[1]) or "", _text(row[2]) or "", _when(row[4]), _text(row[3]))
            for row in rows
        )

    def failed_runs(self, since: datetime, limit: int) -> Tuple[RunRow, ...]:
        """Runs started after `since` that failed, newest first (without their attempts)."""
        rows = self._read(
            "SELECT id, started_at, action, one_in, roll, dry_run, text, reason FROM runs"
            " WHERE action = 'failed' AND started_at > ? ORDER BY id DESC LIMIT ?",
            (iso(since), limit),
        )
        return tuple(_run(row) for row in rows)

    def failed_job_posts(self, since: datetime, limit: int) -> Tuple[AttemptRow, ...]:
        """Progress jobs' posts sent after `since` that failed, newest first."""
        rows = self._read(
            "SELECT a.network, a.text, a.detail, a.sent_at, j.name FROM attempts a JOIN jobs j ON a.job_id = j.id"
            " WHERE a.outcome = 'failed' AND a.sent_at > ? ORDER BY a.id DESC LIMIT ?",
            (iso(since), limit),
        )
        return tuple(
            AttemptRow(
                _text(row[0]) or "", _text(row[1]) or "", "failed", _when(row[3]), _text(row[2]), job_name=_text(row[4])
            )
            for row in rows
        )

    def missed(self, since: datetime, limit: int) -> Tuple[AttemptRow, ...]:
        """Posts a network missed for a passing reason after `since` and that were not sent there
        again since (the next runs catch them up), newest first."""
        rows = self._read(
            "SELECT a.network, a.text, a.detail, a.sent_at FROM attempts a WHERE a.outcome = 'temporary'"
            " AND a.sent_at > ? AND NOT EXISTS (SELECT 1 FROM attempts b WHERE b.post_group = a.post_group"
            " AND b.network = a.network AND b.id > a.id) ORDER BY a.id DESC LIMIT ?",
            (iso(since), limit),
        )
        return tuple(
            AttemptRow(_text(row[0]) or "", _text(row[1]) or "", "temporary", _when(row[3]), _text(row[2]))
            for row in rows
        )

    def recent_replies(self, limit: int) -> Tuple[ReplyRow, ...]:
        """The last `limit` mentions read, newest first (none in a history older than schema 11)."""
        if not self._reads:
            return ()
        rows = self._read(
            "SELECT m.network, m.author, m.text, m.seen_at, m.status, m.reason, m.rule, a.post_id, a.url"
            " FROM mentions m LEFT JOIN attempts a ON a.id = m.attempt_id ORDER BY m.id DESC LIMIT ?",
            (limit,),
        )
        return tuple(
            ReplyRow(
                _text(row[0]) or "",
                _text(row[1]) or "",
                _text(row[2]) or "",
                _when(row[3]),
                _text(row[4]) or "",
                _text(row[5]),
                _text(row[6]),
                _text(row[7]),
                _text(row[8]),
            )
            for row in rows
        )

    def missed_lines(self, since: datetime, limit: int) -> Tuple[MissedLine, ...]:
        """The one-off lines found missed after `since`, the latest found first (a note dated in
        the future, taken while the clock was ahead, is the next run's to drop or keep)."""
        if not self._calendar:
            return ()
        rows = self._read(
            "SELECT text, due_at, noted_at, reason FROM missed WHERE noted_at > ? ORDER BY noted_at DESC LIMIT ?",
            (iso(since), limit),
        )
        return tuple(MissedLine(_text(row[0]) or "", _when(row[1]), _when(row[2]), _text(row[3]) or "") for row in rows)

    def latest_jobs(self, limit: int) -> Tuple[JobRow, ...]:
        """The latest run of each job name, most recently active first, with its threads."""
        rows = self._read(
            "SELECT id, name, started_at, finished_at, outcome, last_post_at, last_text, posts FROM jobs"
            " WHERE id IN (SELECT max(id) FROM jobs GROUP BY name)"
            " ORDER BY coalesce(last_post_at, started_at) DESC LIMIT ?",
            (limit,),
        )
        return tuple(
            JobRow(
                id=row[0],
                name=_text(row[1]) or "",
                started_at=_when(row[2]),
                finished_at=_when(row[3]),
                outcome=_text(row[4]),
                last_post_at=_when(row[5]),
                last_text=_text(row[6]),
                posts=_count(row[7]) or 0,
                threads=self._threads(row[0]),
            )
            for row in rows
        )

    def _threads(self, job_id: int) -> Tuple[JobThread, ...]:
        rows = self._read(
            "SELECT network, thread_root, (SELECT url FROM attempts a WHERE a.job_id = t.job_id AND a.network = t.network"
            f" AND a.{self._post_id} = t.thread_root AND a.url IS NOT NULL LIMIT 1) FROM job_threads t"
            " WHERE t.job_id = ? ORDER BY network",
            (job_id,),
        )
        return tuple(JobThread(_text(row[0]) or "", _text(row[1]) or "", _text(row[2])) for row in rows)

    def _read(self, sql: str, params: tuple = ()) -> list:
        return self._conn.execute(sql, params).fetchall()

    def _time(self, text: object) -> Optional[datetime]:
        return _when(text)

    def used_texts(self) -> Set[str]:
        """Texts already posted in the current round (a row that is not text is no line of the file)."""
        return {text for text in super().used_texts() if isinstance(text, str)}

    def costs_since(
        self, network: str, since: datetime, until: Optional[datetime] = None
    ) -> List[Tuple[Optional[float], str]]:
        """What each counted post to `network` cost, with its text, each as its type: a cost that is
        not a finite number is None (priced by its text, as a row from before costs were kept)."""
        return [(_amount(cost), _text(text) or "") for cost, text in super().costs_since(network, since, until)]


def _run(row: Sequence[object], attempts: Tuple[AttemptRow, ...] = ()) -> RunRow:
    """A runs row (id, started_at, action, one_in, roll, dry_run, text, reason), each value as its type."""
    return RunRow(
        int(row[0]),  # type: ignore[call-overload]  # the INTEGER PRIMARY KEY: always an int
        _when(row[1]),
        _text(row[2]) or "",
        _count(row[3]),
        _count(row[4]),
        row[5] in (1, True),
        _text(row[6]),
        _text(row[7]),
        attempts,
    )


def _when(text: object) -> Optional[datetime]:
    """A stored time, or None for one not in the history's format: a damaged row must not stop the page."""
    if not text or not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.rstrip("Z")).replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def _text(value: object) -> Optional[str]:
    """A stored text; bytes (a row written by something else) decoded with a replacement for what
    is not UTF-8, a number written out; None stays None."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _amount(value: object) -> Optional[float]:
    """A stored amount of money; None for anything else (a word, bytes, infinity, NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _count(value: object) -> Optional[int]:
    """A stored whole number; None for anything else (a word, a fraction, bytes)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _open_read_only(path: Path) -> Tuple[sqlite3.Connection, int]:
    """The history and its schema version, read-only: SQLite may neither create nor change the
    file. A short busy timeout: a run commits in milliseconds, and the page can be reloaded."""
    conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, timeout=2, isolation_level=None)
    try:
        conn.execute("PRAGMA query_only = 1")
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except BaseException:
        conn.close()
        raise
    if app_id != APPLICATION_ID:
        conn.close()
        raise UnreadableHistory(
            f"{path} is not a twitterbot history database: point BOT_STATE_DIR at the bot's state folder"
        )
    if version < OLDEST_READABLE or not tables >= TABLES[min(version, SCHEMA_VERSION)]:
        conn.close()
        raise UnreadableHistory(
            f"{path} is a history of an older format (schema {version}) or is incomplete: the next scheduled"
            " run upgrades it (or says what is wrong); run `bot.py check` to see"
        )
    return conn, version


def _problem(path: Path, exc: sqlite3.Error) -> str:
    """Why SQLite could not read the history, and what to do, in one sentence."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        return f"{path} is busy (a run is writing it): reload the page in a moment"
    if "unable to open" in text or "readonly" in text.replace(" ", ""):
        return (
            f"{path} cannot be opened for reading ({text}): check that this user may read it and its folder;"
            " a run that stopped mid-write leaves a journal only a run can settle"
        )
    return (
        f"{path} is damaged or not a history database ({text}): `bot.py check` says what to do (move it aside"
        " to start a new history, or restore it from a backup)"
    )

"""The history store: every run, every post attempt, the shuffle bag and progress jobs, in one SQLite file.

It is what keeps the bot from spamming or double-posting. An attempt is written (and committed)
*before* the request goes to X and its outcome after, so a run that dies half-way leaves a
``pending`` attempt that the next run counts as probably posted instead of sending it again::

    store = HistoryStore(":memory:")
    attempt = store.begin_attempt("hello", run_id=None, at=now)
    store.finish_attempt(attempt, "posted", at=now, tweet_id="123")
"""

from __future__ import annotations

import errno
import os
import pwd
import sqlite3
import stat
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple, Union

from .errors import HistoryError, StateError

if TYPE_CHECKING:  # the rows it reads back live in records.py, imported by the methods that make them
    from .records import CatchUp, JobPost, JobRecord, RunRecord

__all__ = [
    "HistoryStore",
    "COUNTED_OUTCOMES",
    "TEMPORARY",
    "MIN_FREE_BYTES",
    "ensure_state_dir",
    "probe_state_dir",
    "state_error",
]

APPLICATION_ID = 0x54574254  # "TWBT": marks the file as ours, so a foreign database is refused

# Attempt outcomes that count against MAX_POSTS_PER_DAY: anything that did or may have reached a
# network. pending: being sent now (or its run was killed); interrupted: a killed run's pending
# attempt, settled; uncertain: sent, but the answer was lost. None of them is ever sent again.
# (MAX_POSTS_PER_DAY counts posts, not networks: one post to three networks counts once.)
COUNTED_OUTCOMES = ("pending", "posted", "interrupted", "uncertain")
# A certain failure that a later run may make good (the network was down or rate limited while the
# same post went to another network): see `catch_ups`.
TEMPORARY = "temporary"

_SCHEMA = """
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    one_in INTEGER,
    roll INTEGER,
    forced INTEGER NOT NULL DEFAULT 0,
    dry_run INTEGER NOT NULL DEFAULT 0,
    action TEXT NOT NULL,          -- running, posted, uncertain, would_post, skipped, failed, interrupted
    reason TEXT,
    text TEXT,
    tweet_id TEXT
);
CREATE INDEX runs_started_at ON runs (started_at);
CREATE TABLE attempts (
    id INTEGER PRIMARY KEY,
    run_id INTEGER REFERENCES runs (id),
    source TEXT NOT NULL DEFAULT 'scheduled',
    text TEXT NOT NULL,
    sent_at TEXT NOT NULL,
    finished_at TEXT,
    outcome TEXT NOT NULL,         -- pending, posted, uncertain, duplicate, failed, interrupted
    tweet_id TEXT,
    detail TEXT
);
CREATE INDEX attempts_sent_at ON attempts (sent_at);
-- The shuffle bag: texts already posted in the current round.
CREATE TABLE bag (
    text TEXT PRIMARY KEY,
    used_at TEXT NOT NULL
);
"""

# Schema changes, applied in order to new and old files alike: user_version says how far a file got.
_MIGRATIONS = {
    2: """
-- Progress jobs: what a reporter needs to continue a run's thread after a restart.
CREATE TABLE jobs (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    run_key TEXT,                  -- the job's own id for this run, if it has one
    started_at TEXT NOT NULL,
    finished_at TEXT,
    outcome TEXT,                  -- NULL while running, then done or failed
    thread_root TEXT,              -- the id of the run's first post; later posts reply to it
    last_post_at TEXT,
    last_text TEXT,
    last_news TEXT,                -- the message and fields of the last post, to skip repeats
    posts INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX jobs_name ON jobs (name, run_key);
ALTER TABLE attempts ADD COLUMN job_id INTEGER REFERENCES jobs (id);
""",
    3: """
-- Several networks: each attempt names its network, and the attempts that carry one post (a pick,
-- or a job's post) to every network share post_group, the id of the first of them.
ALTER TABLE attempts ADD COLUMN network TEXT NOT NULL DEFAULT 'x';
ALTER TABLE attempts ADD COLUMN post_group INTEGER;
CREATE INDEX attempts_post_group ON attempts (post_group, network);
-- The post's public link, in its network's own form (X's can be made from the id; others not).
ALTER TABLE attempts ADD COLUMN url TEXT;
ALTER TABLE runs ADD COLUMN url TEXT;
-- A progress job's thread on each network: the id of its first post there.
CREATE TABLE job_threads (
    job_id INTEGER NOT NULL REFERENCES jobs (id),
    network TEXT NOT NULL,
    thread_root TEXT NOT NULL,
    PRIMARY KEY (job_id, network)
);
INSERT INTO job_threads (job_id, network, thread_root) SELECT id, 'x', thread_root FROM jobs WHERE thread_root IS NOT NULL;
""",
}
SCHEMA_VERSION = max(_MIGRATIONS)
# The tables a file of each schema version must have; a file that lacks one is not a whole history.
_TABLES = {
    1: {"runs", "attempts", "bag"},
    2: {"runs", "attempts", "bag", "jobs"},
    3: {"runs", "attempts", "bag", "jobs", "job_threads"},
}

# The cache of measured lengths (`remember_lengths`) names the last file it covered wholly, by a
# digest of its texts. Both tables are made by their first write: only a cache, losing it loses nothing.
_CREATE_LINE_FILES = (
    "CREATE TABLE IF NOT EXISTS line_files (kind TEXT PRIMARY KEY, version TEXT NOT NULL, digest TEXT NOT NULL)"
)

# A real run posts only with at least this much free space beside the history: recording the
# outcome after X took the post must not fail for want of a few pages and a journal.
MIN_FREE_BYTES = 1024 * 1024


def ensure_state_dir(path: Path) -> None:
    """Create the state folder (private to the user) or explain why it cannot be used."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except (NotADirectoryError, FileExistsError):
        raise HistoryError(
            f"BOT_STATE_DIR {path}: a part of that path is a file, not a folder: point it at a folder"
        ) from None
    except OSError as exc:
        raise state_error(
            _nearest_existing(path), exc.errno, state_dir=path, doing="create the state folder in"
        ) from None
    if not path.is_dir():
        raise HistoryError(f"BOT_STATE_DIR {path} is not a folder: point it at a folder")


def probe_state_dir(path: Path) -> None:
    """Create and remove a file in the state folder, as a real run's lock and journal do: `check`
    finds a folder it cannot write (owner, mode, read-only filesystem) before a real run does."""
    try:
        with tempfile.TemporaryFile(dir=path, prefix=".check-"):
            pass
    except OSError as exc:
        raise state_error(path, exc.errno, state_dir=path, doing="create files in") from None


def state_error(path: Path, code: Optional[int], *, state_dir: Path, doing: str = "write") -> StateError:
    """One sentence for a state file or folder that cannot be written: what, why, and the command that fixes it."""
    user = _user_name(os.geteuid())
    if code == errno.EROFS:
        return StateError(
            f"cannot {doing} {path}: it is on a read-only filesystem (an SD card turns read-only after"
            " errors: see `dmesg`); remount it read-write, or set BOT_STATE_DIR to a writable folder"
        )
    if code in (errno.ENOSPC, errno.EDQUOT):
        return StateError(
            f"cannot {doing} {path}: the disk holding {state_dir} is full ({_free_text(state_dir)}); free"
            f" some space (`df -h {state_dir}`) and run again: the history is intact, keep it"
        )
    if code in (errno.EACCES, errno.EPERM):
        target = path if path.exists() else _nearest_existing(path)
        try:
            info = target.stat()
            owner = _user_name(info.st_uid)
            mode = stat.filemode(info.st_mode)
        except OSError:
            owner, mode = "?", "?"
        if owner == user:
            fix = f"chmod -R u+rwX {state_dir}"
        elif state_dir.exists():
            fix = f"sudo chown -R {user}: {state_dir}"
        else:
            fix = f"sudo mkdir -p {state_dir} && sudo chown -R {user}: {state_dir}"
        return StateError(
            f"cannot {doing} {path}: {target} belongs to {owner} ({mode}) and this bot runs as {user},"
            f" who may not write it: run `{fix}` (a command run with sudo may have made it), or set"
            " BOT_STATE_DIR to a folder you can write"
        )
    reason = os.strerror(code) if code else "unknown reason"
    return StateError(
        f"cannot {doing} {path} ({reason}): check that {state_dir} exists and this user ({user}) can write it"
    )


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return path


def _free_text(folder: Path, statvfs: Callable[[str], os.statvfs_result] = os.statvfs) -> str:
    try:
        free = _free_bytes(folder, statvfs)
    except OSError:
        return "free space unknown"
    return f"{free // 1024} KiB free"


def _free_bytes(folder: Path, statvfs: Callable[[str], os.statvfs_result]) -> int:
    info = statvfs(str(folder))
    return info.f_bavail * info.f_frsize


class HistoryStore:
    """SQLite history. Pass a path, or ":memory:" in tests."""

    def __init__(self, path: Union[Path, str], *, statvfs: Callable[[str], os.statvfs_result] = os.statvfs) -> None:
        """Open the history at `path`, creating it only if no file is there: an existing file that
        is not a whole history (an empty one included) is refused, never taken for a new history."""
        self.path = path
        self._label = str(path)
        self._statvfs = statvfs  # injectable, so tests can fake a full disk
        self._file: Optional[Path] = None if str(path) == ":memory:" else Path(path)
        try:
            if self._file is None:
                self._conn = sqlite3.connect(":memory:")
                self._conn.executescript(_create_script())
            else:
                self._create_if_missing(self._file)
                # mode=rw: never create a file here (a missing one is made whole in _create_if_missing).
                self._conn = sqlite3.connect(f"{self._file.absolute().as_uri()}?mode=rw", uri=True, timeout=10)
            self._check()
        except sqlite3.DatabaseError as exc:
            self._fail(exc)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- runs --------------------------------------------------------------------------------

    def begin_run(self, *, at: datetime, one_in: int, roll: Optional[int], forced: bool, dry_run: bool) -> int:
        """Record that a run started; `finish_run` fills in what it did."""
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO runs (started_at, one_in, roll, forced, dry_run, action) VALUES (?, ?, ?, ?, ?, 'running')",
                (_iso(at), one_in, roll, int(forced), int(dry_run)),
            )
            return int(cursor.lastrowid)

    def finish_run(
        self,
        run_id: int,
        *,
        at: datetime,
        action: str,
        reason: Optional[str] = None,
        text: Optional[str] = None,
        tweet_id: Optional[str] = None,
        url: Optional[str] = None,
    ) -> None:
        with self._write() as conn:
            conn.execute(
                "UPDATE runs SET finished_at = ?, action = ?, reason = ?, text = ?, tweet_id = ?, url = ? WHERE id = ?",
                (_iso(at), action, reason, text, tweet_id, url, run_id),
            )

    def recent_runs(self, limit: int) -> List[RunRecord]:
        """The last `limit` runs, newest first."""
        from .records import RunRecord

        rows = self._read(
            "SELECT id, started_at, action, reason, text, tweet_id, one_in, roll, dry_run, url"
            " FROM runs ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        return [
            RunRecord(row[0], _parse_iso(row[1]), row[2], row[3], row[4], row[5], row[6], row[7], bool(row[8]), row[9])
            for row in rows
        ]

    # -- attempts ----------------------------------------------------------------------------

    def begin_attempt(
        self,
        text: str,
        *,
        run_id: Optional[int],
        at: datetime,
        source: str = "scheduled",
        network: str = "x",
        group: Optional[int] = None,
    ) -> int:
        """Commit a pending attempt *before* sending, so a crash cannot lead to a second send.
        `group` is the id of the first attempt carrying the same post to another network (None:
        this attempt starts a group)."""
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO attempts (run_id, source, text, sent_at, outcome, network, post_group)"
                " VALUES (?, ?, ?, ?, 'pending', ?, ?)",
                (run_id, source, text, _iso(at), network, group),
            )
            attempt_id = int(cursor.lastrowid)
            if group is None:
                conn.execute("UPDATE attempts SET post_group = id WHERE id = ?", (attempt_id,))
            return attempt_id

    def catch_ups(self, since: datetime, networks: Sequence[str]) -> List[CatchUp]:
        """Posts sent since `since` that one of `networks` still lacks: it failed there for a
        temporary reason (outcome "temporary", and nothing sent there since) while the same post
        went, or may have gone, to another network. Oldest first."""
        if not networks:
            return []
        counted = ", ".join("?" for _ in COUNTED_OUTCOMES)
        wanted = ", ".join("?" for _ in networks)
        # The window runs from the post's first attempt: a network that keeps failing is given up
        # once the post is `since` old, however often it was retried.
        rows = self._read(
            "SELECT a.post_group, a.network, a.text, a.run_id, a.job_id, a.source,"
            " (SELECT min(g.sent_at) FROM attempts g WHERE g.post_group = a.post_group) AS first_sent"
            f" FROM attempts a WHERE a.outcome = ? AND a.network IN ({wanted}) AND a.post_group IS NOT NULL"
            " AND NOT EXISTS (SELECT 1 FROM attempts b WHERE b.post_group = a.post_group"
            "  AND b.network = a.network AND b.id > a.id)"
            " AND EXISTS (SELECT 1 FROM attempts c WHERE c.post_group = a.post_group"
            f"  AND c.network != a.network AND c.outcome IN ({counted}))"
            " AND first_sent > ? ORDER BY first_sent, a.network",
            (TEMPORARY, *networks, *COUNTED_OUTCOMES, _iso(since)),
        )
        if not rows:  # the usual run: nothing to catch up, and no need to make the rows' class
            return []
        from .records import CatchUp

        return [CatchUp(row[0], row[1], row[2], row[3], row[4], row[5], _parse_iso(row[6])) for row in rows]

    def finish_attempt(
        self,
        attempt_id: int,
        outcome: str,
        *,
        at: datetime,
        tweet_id: Optional[str] = None,
        detail: Optional[str] = None,
        mark_used: bool = False,
        url: Optional[str] = None,
    ) -> None:
        """Record an attempt's outcome; with `mark_used`, take its text out of this round in the same transaction."""
        with self._write() as conn:
            conn.execute(
                "UPDATE attempts SET outcome = ?, finished_at = ?, tweet_id = ?, detail = ?, url = ? WHERE id = ?",
                (outcome, _iso(at), tweet_id, detail, url, attempt_id),
            )
            if mark_used:
                (text,) = conn.execute("SELECT text FROM attempts WHERE id = ?", (attempt_id,)).fetchone()
                conn.execute("INSERT OR REPLACE INTO bag (text, used_at) VALUES (?, ?)", (text, _iso(at)))

    def recover_interrupted(self, *, at: datetime) -> List[str]:
        """Settle what a killed scheduled run left behind. Its pending attempts may have reached X,
        so their texts leave the round and keep counting against the daily cap. Returns those texts.
        (A progress job's pending attempts belong to that job; `open_job` settles them.)"""
        with self._write() as conn:
            texts = [
                row[0] for row in conn.execute("SELECT text FROM attempts WHERE outcome = 'pending' AND job_id IS NULL")
            ]
            conn.execute(
                "UPDATE attempts SET outcome = 'interrupted', finished_at = ?, detail = ?"
                " WHERE outcome = 'pending' AND job_id IS NULL",
                (_iso(at), _MAYBE_POSTED),
            )
            conn.execute(
                "UPDATE runs SET action = 'interrupted', finished_at = ?,"
                " reason = 'the run stopped before it finished' WHERE action = 'running'",
                (_iso(at),),
            )
            conn.executemany(
                "INSERT OR REPLACE INTO bag (text, used_at) VALUES (?, ?)", [(text, _iso(at)) for text in texts]
            )
        return texts

    def posts_since(self, since: datetime, until: Optional[datetime] = None) -> int:
        """How many posts went (or may have gone) to X after `since` and up to `until`, from every
        source. Rows dated after `until` (made while the clock was ahead) are left out."""
        return int(self._counted_since("count(DISTINCT coalesce(post_group, id))", since, until))

    def oldest_post_since(self, since: datetime, until: Optional[datetime] = None) -> Optional[datetime]:
        """When the oldest counted post in the window was sent: the cap frees up 24 h after it."""
        oldest = self._counted_since("min(sent_at)", since, until)
        return _parse_iso(oldest) if oldest else None

    def last_scheduled_post(self, until: datetime) -> Optional[datetime]:
        """When the newest scheduled post (made or maybe made) up to `until` was sent, for
        MIN_POST_GAP. Progress jobs' posts are not scheduled posts and are left out."""
        newest = self._counted_since("max(sent_at)", None, until, where="job_id IS NULL")
        return _parse_iso(newest) if newest else None

    def last_run_started(self) -> Optional[datetime]:
        """When the newest run (the last one written) says it started: later than now means the
        clock was ahead then, or is behind now."""
        rows = self._read("SELECT started_at FROM runs ORDER BY id DESC LIMIT 1")
        return _parse_iso(rows[0][0]) if rows else None

    def _counted_since(
        self, aggregate: str, since: Optional[datetime], until: Optional[datetime], where: str = "1"
    ) -> object:
        # One post to several networks is one post: count its group once (old rows have none).
        marks = ", ".join("?" for _ in COUNTED_OUTCOMES)
        rows = self._read(
            f"SELECT {aggregate} FROM attempts WHERE sent_at > ? AND sent_at <= ? AND outcome IN ({marks}) AND {where}",
            (_iso(since) if since else "", _iso(until) if until else "9999", *COUNTED_OUTCOMES),
        )
        return rows[0][0]

    def last_posted_text(self) -> Optional[str]:
        marks = ", ".join("?" for _ in COUNTED_OUTCOMES)
        rows = self._read(
            f"SELECT text FROM attempts WHERE outcome IN ({marks}) ORDER BY id DESC LIMIT 1", COUNTED_OUTCOMES
        )
        return rows[0][0] if rows else None

    # -- progress jobs -----------------------------------------------------------------------

    def open_job(self, name: str, *, at: datetime, run_key: Optional[str] = None) -> JobRecord:
        """The run to report on: with `run_key`, that run (finished or not); without, the newest
        unfinished run of `name`. Either is created if missing. Posts a killed process left
        pending are settled as "may have been posted". The caller holds the job's lock."""
        if run_key is None:
            where, params = "name = ? AND run_key IS NULL AND finished_at IS NULL", (name,)
        else:
            where, params = "name = ? AND run_key = ?", (name, run_key)
        with self._write() as conn:
            row = conn.execute(f"SELECT id FROM jobs WHERE {where} ORDER BY id DESC LIMIT 1", params).fetchone()
            if row:
                job_id = int(row[0])
                conn.execute(
                    "UPDATE attempts SET outcome = 'interrupted', finished_at = ?, detail = ?"
                    " WHERE outcome = 'pending' AND job_id = ?",
                    (_iso(at), _MAYBE_POSTED, job_id),
                )
            else:
                cursor = conn.execute(
                    "INSERT INTO jobs (name, run_key, started_at) VALUES (?, ?, ?)", (name, run_key, _iso(at))
                )
                job_id = int(cursor.lastrowid)
        return self.job(job_id)

    def job(self, job_id: int) -> JobRecord:
        from .records import JobRecord

        marks = ", ".join("?" for _ in COUNTED_OUTCOMES)
        (row,) = self._read(
            "SELECT id, name, run_key, started_at, finished_at, outcome, thread_root, last_post_at, last_text,"
            f" last_news, posts, EXISTS (SELECT 1 FROM attempts WHERE job_id = jobs.id AND source = 'final'"
            f" AND outcome IN ({marks})) FROM jobs WHERE id = ?",
            (*COUNTED_OUTCOMES, job_id),
        )
        return JobRecord(
            id=row[0],
            name=row[1],
            run_key=row[2],
            started_at=_parse_iso(row[3]),
            finished_at=_parse_iso(row[4]) if row[4] else None,
            outcome=row[5],
            thread_root=row[6],
            last_post_at=_parse_iso(row[7]) if row[7] else None,
            last_text=row[8],
            last_news=row[9],
            posts=row[10],
            final_sent=bool(row[11]),
            threads=dict(self._read("SELECT network, thread_root FROM job_threads WHERE job_id = ?", (job_id,))),
        )

    def recent_job_posts(self, limit: int) -> List[JobPost]:
        """The last `limit` posts (and tries) of progress jobs, newest first."""
        from .records import JobPost

        rows = self._read(
            "SELECT attempts.id, sent_at, attempts.outcome, detail, text, tweet_id, source = 'final', jobs.id,"
            " jobs.name, (SELECT thread_root FROM job_threads t WHERE t.job_id = jobs.id AND t.network = attempts.network),"
            " attempts.network, attempts.url FROM attempts JOIN jobs ON attempts.job_id = jobs.id"
            " ORDER BY sent_at DESC, attempts.id DESC LIMIT ?",
            (limit,),
        )
        return [
            JobPost(
                row[0],
                _parse_iso(row[1]),
                row[2],
                row[3],
                row[4],
                row[5],
                bool(row[6]),
                row[7],
                row[8],
                row[9],
                row[10],
                row[11],
            )
            for row in rows
        ]

    def begin_job_attempt(
        self, job_id: int, text: str, *, at: datetime, final: bool, network: str = "x", group: Optional[int] = None
    ) -> int:
        """Like `begin_attempt`, for a job's post; a final one is remembered so it is never sent twice."""
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO attempts (job_id, source, text, sent_at, outcome, network, post_group)"
                " VALUES (?, ?, ?, ?, 'pending', ?, ?)",
                (job_id, "final" if final else "progress", text, _iso(at), network, group),
            )
            attempt_id = int(cursor.lastrowid)
            if group is None:
                conn.execute("UPDATE attempts SET post_group = id WHERE id = ?", (attempt_id,))
            return attempt_id

    def record_job_post(
        self,
        job_id: int,
        attempt_id: int,
        *,
        at: datetime,
        tweet_id: Optional[str],
        news: str,
        detail: Optional[str],
        outcome: str = "posted",
        url: Optional[str] = None,
    ) -> None:
        """A job's post went out (`outcome` posted) or may have (uncertain): settle the attempt and
        move the job on, in one transaction, so the post is never sent again. The same post on a
        second network moves the job on only once; each network keeps its own thread."""
        counted = ", ".join("?" for _ in COUNTED_OUTCOMES)
        with self._write() as conn:
            (network, group) = conn.execute(
                "SELECT network, post_group FROM attempts WHERE id = ?", (attempt_id,)
            ).fetchone()
            conn.execute(
                "UPDATE attempts SET outcome = ?, finished_at = ?, tweet_id = ?, detail = ?, url = ? WHERE id = ?",
                (outcome, _iso(at), tweet_id, detail, url, attempt_id),
            )
            conn.execute(
                "UPDATE jobs SET posts = posts + 1, last_post_at = ?, last_news = ?,"
                " last_text = (SELECT text FROM attempts WHERE id = ?) WHERE id = ?"
                f" AND NOT EXISTS (SELECT 1 FROM attempts WHERE post_group = ? AND id != ? AND outcome IN ({counted}))",
                (_iso(at), news, attempt_id, job_id, group, attempt_id, *COUNTED_OUTCOMES),
            )
            if tweet_id is not None:
                conn.execute(
                    "INSERT OR IGNORE INTO job_threads (job_id, network, thread_root) VALUES (?, ?, ?)",
                    (job_id, network, tweet_id),
                )
                conn.execute("UPDATE jobs SET thread_root = coalesce(thread_root, ?) WHERE id = ?", (tweet_id, job_id))

    def reset_thread(self, job_id: int, network: str = "x") -> None:
        """The thread's first post on `network` is gone: the next post there starts a new thread."""
        with self._write() as conn:
            conn.execute("DELETE FROM job_threads WHERE job_id = ? AND network = ?", (job_id, network))
            conn.execute(
                "UPDATE jobs SET thread_root = (SELECT thread_root FROM job_threads WHERE job_id = ?"
                " ORDER BY network = 'x' DESC LIMIT 1) WHERE id = ?",
                (job_id, job_id),
            )

    def finish_job(self, job_id: int, outcome: str, *, at: datetime) -> None:
        with self._write() as conn:
            conn.execute("UPDATE jobs SET outcome = ?, finished_at = ? WHERE id = ?", (outcome, _iso(at), job_id))

    # -- the shuffle bag ---------------------------------------------------------------------

    def used_texts(self) -> Set[str]:
        """Texts already posted in the current round."""
        return {row[0] for row in self._read("SELECT text FROM bag")}

    def start_new_round(self) -> None:
        """Every line has been posted: empty the bag so all lines are available again."""
        with self._write() as conn:
            conn.execute("DELETE FROM bag")

    # -- measured lengths (a cache) ----------------------------------------------------------

    def measured_lengths(
        self, kind: str, version: str, texts: Optional[Iterable[str]] = None
    ) -> Dict[str, Tuple[int, Tuple[str, ...]]]:
        """Each text's length and URLs as `remember_lengths` kept them for `kind` and `version`,
        by exact text: of every text kept, or of `texts` only. Only a cache (the tweets file's
        lines, so measuring needs no slow import): its table is made by the first write, and
        losing it loses nothing."""
        if not self._has_table("line_lengths"):
            return {}
        sql = "SELECT text, length, urls FROM line_lengths WHERE kind = ? AND version = ?"
        if texts is None:
            rows = self._read(sql, (kind, version))
        else:
            rows = [row for text in texts for row in self._read(sql + " AND text = ?", (kind, version, text))]
        return {text: (length, tuple(urls.split()) if urls else ()) for text, length, urls in rows}

    def measured_texts(self, kind: str, version: str, longest: int) -> Set[str]:
        """The texts with a length kept for `kind` and `version` of at most `longest`: checking that
        a file's lines are all known reads only their texts (a scheduled run looks up one length)."""
        if not self._has_table("line_lengths"):
            return set()
        sql = "SELECT text FROM line_lengths WHERE kind = ? AND version = ? AND length <= ?"
        return {text for (text,) in self._read(sql, (kind, version, longest))}

    def measured_file(self, kind: str, version: str) -> Optional[str]:
        """The digest `remember_measured_file` kept for `kind` and `version`: of a file whose every
        text has a length kept. None if there is none, or the lengths were replaced since."""
        if not self._has_table("line_files"):
            return None
        rows = self._read("SELECT digest FROM line_files WHERE kind = ? AND version = ?", (kind, version))
        return rows[0][0] if rows else None

    def remember_measured_file(self, kind: str, version: str, digest: str) -> None:
        """Keep `digest`, of a file whose every text has a length kept for `kind` and `version`: the
        next run that reads the same file need not check its texts one by one."""
        with self._write() as conn:
            conn.execute(_CREATE_LINE_FILES)
            conn.execute(
                "INSERT OR REPLACE INTO line_files (kind, version, digest) VALUES (?, ?, ?)", (kind, version, digest)
            )

    def _has_table(self, name: str) -> bool:
        return bool(self._read("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)))

    def remember_lengths(self, kind: str, version: str, lengths: Mapping[str, Tuple[int, Tuple[str, ...]]]) -> None:
        """Keep `lengths` (text -> length and URLs) as the whole cache of `kind`, in place of what was there."""
        with self._write() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS line_lengths (kind TEXT NOT NULL, text TEXT NOT NULL,"
                " version TEXT NOT NULL, length INTEGER NOT NULL, urls TEXT NOT NULL, PRIMARY KEY (kind, text))"
                " WITHOUT ROWID"
            )
            conn.execute("DELETE FROM line_lengths WHERE kind = ?", (kind,))
            conn.execute(_CREATE_LINE_FILES)
            conn.execute("DELETE FROM line_files WHERE kind = ?", (kind,))  # the file it named may have lost lengths
            conn.executemany(
                "INSERT INTO line_lengths (kind, text, version, length, urls) VALUES (?, ?, ?, ?, ?)",
                [(kind, text, version, length, " ".join(urls)) for text, (length, urls) in lengths.items()],
            )

    # -- plumbing ----------------------------------------------------------------------------

    def check_writable(self) -> None:
        """Write as a real run does, then roll back: `check` finds a read-only file, or a folder
        where SQLite cannot write its journal, without changing the history."""
        try:
            version = self._conn.execute("PRAGMA user_version").fetchone()[0]
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute(f"PRAGMA user_version = {int(version)}")  # a real write, to the journal too
            finally:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
        except sqlite3.Error as exc:
            self._fail(exc)

    def ensure_room_to_record(self, min_free: int = MIN_FREE_BYTES) -> None:
        """Raise `StateError` unless the disk holding the history has `min_free` bytes: a run must
        not post what it could not then record."""
        if self._file is None:
            return
        folder = self._file.parent
        try:
            free = _free_bytes(folder, self._statvfs)
        except OSError:
            return  # unknown: the writes themselves will say if the disk is full
        if free < min_free:
            raise StateError(
                f"not posting: the disk holding {folder} has {free // 1024} KiB free, and the bot needs"
                f" {min_free // 1024} KiB to record what it posts; free some space (`df -h {folder}`)"
                " and run again: the history is intact, keep it"
            )

    def _create_if_missing(self, path: Path) -> None:
        """Only a missing file starts a new history. The new file is built beside the real name
        and linked into place whole, so a run killed while creating it leaves no empty file."""
        try:
            info = path.stat()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise state_error(path, exc.errno, state_dir=path.parent, doing="read") from None
        else:
            if not stat.S_ISREG(info.st_mode):
                raise HistoryError(f"{path} is not a file: move it aside, or set BOT_STATE_DIR to another folder")
            if info.st_size == 0:
                raise HistoryError(
                    f"{path} is empty (0 bytes), so it holds no history; if it held one, that was lost"
                    " (a power cut or a full disk can do that): restore it from a backup, or delete it"
                    " to start a new history (the bot will then not know what it already posted)"
                )
            return
        try:
            handle, temp_name = tempfile.mkstemp(prefix=f".{path.name}.new-", dir=path.parent)
        except OSError as exc:
            raise state_error(path, exc.errno, state_dir=path.parent, doing="create") from None
        os.close(handle)
        temp = Path(temp_name)
        try:
            conn = sqlite3.connect(temp_name)
            try:
                conn.executescript(_create_script())
            finally:
                conn.close()
            try:
                os.link(temp, path)  # never replaces: a file another run created first wins
            except FileExistsError:
                pass
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):
                    raise state_error(path, exc.errno, state_dir=path.parent, doing="create") from None
                if not path.exists():  # a filesystem without hard links (FAT): rename is next best
                    os.replace(temp, path)
            _sync_folder(path.parent)
        except sqlite3.DatabaseError as exc:
            self._fail(exc)
        finally:
            for leftover in (temp, Path(f"{temp_name}-journal")):
                leftover.unlink(missing_ok=True)

    def _check(self) -> None:
        conn = self._conn
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if app_id != APPLICATION_ID:
            what = "an empty database" if not tables else "it holds other data"
            raise HistoryError(
                f"{self._label} is not a twitterbot history database ({what}): "
                "set BOT_STATE_DIR to another folder, or move the file aside"
            )
        if version > SCHEMA_VERSION:
            raise HistoryError(
                f"{self._label} was written by a newer twitterbot (schema {version}, this one knows "
                f"{SCHEMA_VERSION}): update twitterbot (git pull) before running it again"
            )
        missing = _TABLES.get(version, _TABLES[1]) - tables
        if version < 1 or missing:
            held = "no tables at all" if not tables else f"no {', '.join(sorted(missing)) or 'schema version'}"
            raise HistoryError(
                f"{self._label} is marked as a twitterbot history but has {held}, so it is not a whole"
                " history: restore it from a backup, or delete it to start a new history (the bot will"
                " then not know what it already posted)"
            )
        problems = conn.execute("PRAGMA quick_check").fetchall()
        if problems != [("ok",)]:
            raise sqlite3.DatabaseError(problems[0][0])
        for target in range(version + 1, SCHEMA_VERSION + 1):
            # executescript commits first; BEGIN..COMMIT makes each step all-or-nothing.
            conn.executescript(f"BEGIN; {_MIGRATIONS[target]} PRAGMA user_version = {target}; COMMIT;")

    def _write(self) -> _Transaction:
        return _Transaction(self)

    def _read(self, sql: str, params: tuple = ()) -> list:
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            self._fail(exc)

    def _fail(self, exc: sqlite3.Error) -> None:
        """Turn an SQLite error into advice. Only a file SQLite finds corrupt is called damaged: a
        file that cannot be written, or a full disk, is fine and must be kept."""
        name = _error_name(exc)
        if name in ("SQLITE_BUSY", "SQLITE_LOCKED"):
            raise HistoryError(f"{self._label} is busy (another program holds it): try again in a moment") from None
        if self._file is not None and name in ("SQLITE_FULL", "SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_IOERR"):
            code = errno.ENOSPC if name == "SQLITE_FULL" else self._diagnose()
            if code is not None or name != "SQLITE_IOERR":
                raise state_error(self._file, code, state_dir=self._file.parent) from None
            raise StateError(
                f"could not read or write {self._label} ({exc}): the storage may be failing (see `dmesg`);"
                " keep the file, and copy it somewhere safe"
            ) from None
        raise HistoryError(
            f"{self._label} is damaged or not a history database ({exc}): move it aside to start a new "
            "history (the bot will then not know what it already posted), or restore it from a backup"
        ) from None

    def _diagnose(self) -> Optional[int]:
        """Why the history cannot be written, as an errno, found by looking at the file and its folder."""
        assert self._file is not None
        folder = self._file.parent
        try:
            if self._statvfs(str(folder)).f_flag & os.ST_RDONLY:
                return errno.EROFS
        except OSError:
            pass
        for target in (self._file, folder):
            if target.exists() and not os.access(target, os.W_OK):
                return errno.EACCES
        return None


def _error_name(exc: sqlite3.Error) -> str:
    """SQLite's primary error name (Python 3.11 gives it; older ones only have the message)."""
    name = getattr(exc, "sqlite_errorname", None)
    if name:
        return "_".join(name.split("_")[:2])
    text = str(exc).lower()
    for fragment, guessed in (
        ("locked", "SQLITE_BUSY"),
        ("full", "SQLITE_FULL"),
        ("readonly", "SQLITE_READONLY"),
        ("unable to open", "SQLITE_CANTOPEN"),
        ("disk i/o", "SQLITE_IOERR"),
    ):
        if fragment in text.replace(" ", "") or fragment in text:
            return guessed
    return "SQLITE_ERROR"


def _create_script() -> str:
    """The whole schema, at the newest version, in one transaction."""
    steps = " ".join(_MIGRATIONS[version] for version in sorted(_MIGRATIONS))
    return (
        f"BEGIN; {_SCHEMA} {steps} PRAGMA application_id = {APPLICATION_ID};"
        f" PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
    )


def _sync_folder(folder: Path) -> None:
    """Make a new file's name durable, so a power cut cannot leave the name without the file."""
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)


class _Transaction:
    """`with store._write() as conn:` commits on success, rolls back on error, and turns SQLite errors into HistoryError."""

    def __init__(self, store: HistoryStore) -> None:
        self._store = store

    def __enter__(self) -> sqlite3.Connection:
        return self._store._conn.__enter__()

    def __exit__(self, exc_type, exc, tb) -> bool:
        self._store._conn.__exit__(exc_type, exc, tb)
        if isinstance(exc, sqlite3.Error):
            self._store._fail(exc)
        return False


_MAYBE_POSTED = "the run stopped before X answered; it may have been posted"


def _iso(moment: datetime) -> str:
    """UTC ISO-8601 with a fixed width, so that text order is time order."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_iso(text: str) -> datetime:
    """A time `_iso` wrote. Not with strptime: its first call builds locale tables, 10 ms of CPU,
    a twentieth of a whole scheduled run."""
    if len(text) != 27 or text[-1] != "Z" or text[10] != "T":
        raise ValueError(f"{text!r} is not a time in the history's format (2026-01-31T12:00:00.000000Z)")
    return datetime.fromisoformat(text[:-1]).replace(tzinfo=timezone.utc)

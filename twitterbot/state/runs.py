"""Runs and post attempts: what each scheduled run decided, and every post it (or a progress
job) sent, recorded *before* the request goes out and settled after. These rows are what the daily
cap, the minimum gap and catch-up count, so an attempt that may have reached a network counts as
posted (`COUNTED_OUTCOMES`) and is never sent again."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Union

from .counting import COUNTED_OUTCOMES, PostCounts
from .database import Database, iso, parse_iso
from .outcomes import AttemptStart, PlannedRun, RunRef, row_id
from .skips import SKIPS_FILE, SkipLog, Streak

if TYPE_CHECKING:  # the rows it reads back live in records.py, imported by the methods that make them
    from .outcomes import Ending
    from .records import CatchUp, RunRecord, Unsettled

__all__ = ["MAYBE_POSTED", "TEMPORARY", "RunLog"]

# A certain failure that a later run may make good (the network was down or rate limited while the
# same post went to another network): see `catch_ups`.
TEMPORARY = "temporary"

MAYBE_POSTED = "the run stopped before the network answered; it may have been posted"


class RunLog(PostCounts, Database):
    """The runs and attempts tables, and the day's skipped runs beside them (`skips`); the counting
    queries are `PostCounts`'."""

    def __init__(self, path: Union[Path, str], **options: Any) -> None:
        super().__init__(path, **options)
        # The day's skipped runs, beside the history file (skips.py); in memory for a history in memory.
        self.skips = SkipLog(None if self._file is None else self._file.parent / SKIPS_FILE)

    def begin_run(
        self, *, at: datetime, one_in: int, roll: Optional[int], forced: bool, dry_run: bool, held: bool = False
    ) -> RunRef:
        """Record that a run started; `finish_run` fills in what it did. The skipped runs before it
        that are not in the history yet are folded into it first (one row), so the runs stay in
        order. A run that holds the run lock (`held`) has its row written with its first write (its
        first attempt, or its end) instead, one transaction less: it gets a `PlannedRun`, whose id
        is known once that write is done."""
        streak = self.skips.read()
        cleared = self.skips.clear if streak is not None else None

        def write(conn: sqlite3.Connection) -> int:
            if streak is not None:
                _fold(conn, streak)
            return int(
                conn.execute(
                    "INSERT INTO runs (started_at, one_in, roll, forced, dry_run, action) VALUES (?, ?, ?, ?, ?, 'running')",
                    (iso(at), one_in, roll, int(forced), int(dry_run)),
                ).lastrowid
            )

        if held:
            planned = PlannedRun()
            self._queue(lambda conn: planned.written(write(conn)), before_reads=False, after=cleared)
            return planned
        with self._write() as conn:
            run_id = write(conn)
        if cleared is not None:
            cleared()
        return run_id

    def record_skip(self, at: datetime, *, one_in: int, roll: Optional[int], reason: str) -> Streak:
        """A run that posted nothing and had nothing else to record: one more in the day's streak of
        skipped runs (skips.py), written without touching the database. The first skip of another
        day (or after the clock went back) folds the streak before it into the history."""
        held = self.skips.read()
        try:
            if held is not None and (held.day() != f"{at.astimezone(timezone.utc):%Y-%m-%d}" or at < held.last):
                with self._write() as conn:
                    _fold(conn, held)
                self.skips.clear()
            return self.skips.add(at, one_in=one_in, roll=roll, reason=reason)
        except OSError:  # the state folder takes no new file: the run is a row of the history, as before
            streak = Streak(1, at, at, one_in, roll, reason)
            with self._write() as conn:
                _fold(conn, streak)
            return streak

    def finish_run(
        self,
        run_id: RunRef,
        *,
        at: datetime,
        action: str,
        reason: Optional[str] = None,
        text: Optional[str] = None,
        post_id: Optional[str] = None,
        url: Optional[str] = None,
        error_kind: Optional[str] = None,
    ) -> None:
        """Record what a run did; `error_kind` is the kind of the error it reported (`BotError.kind`)."""
        with self._write() as conn:
            conn.execute(
                "UPDATE runs SET finished_at = ?, action = ?, reason = ?, text = ?, post_id = ?, url = ?, error_kind = ?"
                " WHERE id = ?",
                (iso(at), action, reason, text, post_id, url, error_kind, int(run_id)),
            )

    def recent_runs(self, limit: int) -> List[RunRecord]:
        """The last `limit` runs, newest first; the day's skipped runs not folded in yet are the
        newest, as one (its `runs` says how many it stands for)."""
        from .records import RunRecord

        streak = self.skips.read()
        rows = self._read(
            "SELECT id, started_at, action, reason, text, post_id, one_in, roll, dry_run, url, runs"
            " FROM runs ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        runs = [
            RunRecord(
                row[0], parse_iso(row[1]), row[2], row[3], row[4], row[5], row[6], row[7], bool(row[8]), row[9], row[10]
            )
            for row in rows
        ]
        if streak is not None and limit > 0:
            newest = RunRecord(
                0, streak.last, "skipped", streak.summary(), None, None, streak.one_in, streak.roll, False
            )
            runs = [replace(newest, runs=streak.runs), *runs][:limit]
        return runs

    def begin_attempt(
        self,
        text: str,
        *,
        run_id: Optional[RunRef],
        at: datetime,
        network: str,
        source: str = "scheduled",
        group: Optional[int] = None,
        cost: Optional[float] = None,
        sent_text: Optional[str] = None,
    ) -> int:
        """Commit a pending attempt *before* sending, so a crash cannot lead to a second send.
        `group` is the id of the first attempt carrying the same post to another network (None:
        this attempt starts a group); `cost` what the network charges for it (None: nothing);
        `sent_text` the post's text when it is not `text` (a line's pictures are left out of it),
        kept to look the post up if its outcome is uncertain."""
        start = AttemptStart(network, at, run_id, source, group, cost=cost, sent_text=sent_text)
        return self.begin_attempt_from(text, start)

    def begin_attempt_from(self, text: str, start: AttemptStart) -> int:
        """`begin_attempt` as `start` says, with the post stored whole (`start.post`: what a later
        run sends again, and looks up, by)."""
        sent_text = start.sent_text
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO attempts (run_id, source, text, sent_at, outcome, network, post_group, cost, sent_text,"
                " post) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?)",
                (
                    row_id(start.run_id),
                    start.source,
                    text,
                    iso(start.at),
                    start.network,
                    start.group,
                    start.cost,
                    sent_text if sent_text != text else None,
                    start.post,
                ),
            )
            attempt_id = int(cursor.lastrowid)
            if start.group is None:
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
            " (SELECT min(g.sent_at) FROM attempts g WHERE g.post_group = a.post_group) AS first_sent, a.post"
            f" FROM attempts a WHERE a.outcome = ? AND a.network IN ({wanted}) AND a.post_group IS NOT NULL"
            " AND a.thread_id IS NULL"  # a thread's part is its thread's to send again (threads.py)
            " AND NOT EXISTS (SELECT 1 FROM attempts b WHERE b.post_group = a.post_group"
            "  AND b.network = a.network AND b.id > a.id)"
            " AND EXISTS (SELECT 1 FROM attempts c WHERE c.post_group = a.post_group"
            f"  AND c.network != a.network AND c.outcome IN ({counted}))"
            " AND first_sent > ? ORDER BY first_sent, a.network",
            (TEMPORARY, *networks, *COUNTED_OUTCOMES, iso(since)),
        )
        if not rows:  # the usual run: nothing to catch up, and no need to make the rows' class
            return []
        from .records import CatchUp

        return [CatchUp(row[0], row[1], row[2], row[3], row[4], row[5], parse_iso(row[6]), row[7]) for row in rows]

    def finish_attempt(self, attempt_id: int, ending: Ending, *, with_next_write: bool = False) -> None:
        """Record an attempt's outcome (`Ending`), and for one that failed the kind of its error;
        with `ending.mark_used`, take its text out of this round in the same transaction. With
        `with_next_write`, in the next transaction (the run's end, or the next attempt's begin; a
        read before then writes it first): a scheduled post costs two transactions, not four. A
        run killed before then leaves the attempt pending, which counts as posted, and the next
        run looks it up."""
        if with_next_write:
            self._queue(lambda conn: self._write_ending(conn, attempt_id, ending), before_reads=True)
            return
        with self._write() as conn:
            self._write_ending(conn, attempt_id, ending)

    def keep_post(self, attempt_id: int, stored: str) -> None:
        """Keep `stored` as the attempt's post from now on, with the attempt's outcome (the next
        write): a posted attempt's post without its pictures' bytes, which no later run sends
        again, so a history on an SD card does not grow by every picture the bot draws."""
        self._queue(
            lambda conn: conn.execute("UPDATE attempts SET post = ? WHERE id = ?", (stored, attempt_id)),
            before_reads=False,
        )

    def _write_ending(self, conn: sqlite3.Connection, attempt_id: int, ending: Ending) -> None:
        conn.execute(
            "UPDATE attempts SET outcome = ?, finished_at = ?, post_id = ?, detail = ?, url = ?, error_kind = ?,"
            " lookup_key = ? WHERE id = ?",
            (
                ending.outcome,
                iso(ending.at),
                ending.post_id,
                ending.detail,
                ending.url,
                ending.error_kind,
                ending.lookup_key,
                attempt_id,
            ),
        )
        if ending.mark_used:
            (text,) = conn.execute("SELECT text FROM attempts WHERE id = ?", (attempt_id,)).fetchone()
            conn.execute("INSERT OR REPLACE INTO bag (text, used_at) VALUES (?, ?)", (text, iso(ending.at)))

    def unsettled(self, since: datetime, networks: Sequence[str], *, source: Optional[str] = None) -> List[Unsettled]:
        """A scheduled run's posts on `networks` whose outcome is not known (uncertain, or the run
        stopped while sending), sent since `since`, oldest first: what a run looks up. A progress
        job's are its own (its thread has moved on). `source`: only those of that source (reply)."""
        if not networks:
            return []
        wanted = ", ".join("?" for _ in networks)
        only = " AND source = ?" if source else ""
        rows = self._read(
            "SELECT id, run_id, post_group, network, text, coalesce(sent_text, text), sent_at, lookup_key, outcome,"
            f" post FROM attempts WHERE outcome IN ('uncertain', 'interrupted') AND job_id IS NULL AND network IN ({wanted})"
            f" AND sent_at > ?{only} ORDER BY id",
            (*networks, iso(since), *((source,) if source else ())),
        )
        if not rows:  # the usual run: nothing uncertain, and no need to make the rows' class
            return []
        from .records import Unsettled

        return [
            Unsettled(row[0], row[1], row[2], row[3], row[4], row[5], parse_iso(row[6]), row[7], row[8], row[9])
            for row in rows
        ]

    def settle(
        self,
        attempt_id: int,
        *,
        found: bool,
        how: str,
        at: datetime,
        post_id: Optional[str] = None,
        url: Optional[str] = None,
        run_note: str = "",
    ) -> bool:
        """Record what a look-up found of an uncertain attempt (`how`: "found by record key"). Found:
        it is posted, with its id and link. Not found: it was not posted; when no other network
        has the post (its group), the text goes back into the round, and when one has, the
        attempt is temporary, so catch-up sends it (`catch_ups`). The run's row says so too
        (`run_note` added to its reason). Returns whether the text went back into the round."""
        counted = ", ".join("?" for _ in COUNTED_OUTCOMES)
        with self._write() as conn:
            row = conn.execute(
                "SELECT outcome, text, run_id, post_group FROM attempts WHERE id = ?", (attempt_id,)
            ).fetchone()
            before, text, run_id, group = row
            settled = f"{before} → {'posted' if found else 'not posted'} ({how})"
            elsewhere = conn.execute(
                f"SELECT 1 FROM attempts WHERE post_group = ? AND id != ? AND outcome IN ({counted}) LIMIT 1",
                (group, attempt_id, *COUNTED_OUTCOMES),
            ).fetchone()
            outcome = "posted" if found else (TEMPORARY if elsewhere else "failed")
            conn.execute(
                "UPDATE attempts SET outcome = ?, settled = ?, post_id = coalesce(?, post_id), url = coalesce(?, url),"
                " detail = ?, error_kind = NULL WHERE id = ?",
                (outcome, settled, post_id, url, settled, attempt_id),
            )
            back = not found and not elsewhere
            if back:
                conn.execute("DELETE FROM bag WHERE text = ?", (text,))
                # A reply that is certainly not there: its mention is answered by a later run.
                conn.execute(
                    "UPDATE mentions SET status = 'pending', attempt_id = NULL, reason = NULL WHERE attempt_id = ?",
                    (attempt_id,),
                )
            if run_id is not None:
                conn.execute(
                    "UPDATE runs SET reason = coalesce(reason || '; ', '') || ?,"
                    " post_id = coalesce(post_id, ?), url = coalesce(url, ?),"
                    " action = CASE WHEN action IN ('uncertain', 'interrupted') AND ? THEN 'posted'"
                    "  WHEN action IN ('uncertain', 'interrupted') AND ? THEN 'failed' ELSE action END"
                    " WHERE id = ?",
                    (f"later: {run_note or settled}", post_id, url, int(found), int(back), run_id),
                )
        return back

    def left_running(self) -> bool:
        """Whether a killed scheduled run left something for `recover_interrupted` to settle: a
        run still marked running, or an attempt of no job still pending. Reads only."""
        rows = self._read(
            "SELECT 1 WHERE EXISTS (SELECT 1 FROM runs WHERE action = 'running')"
            " OR EXISTS (SELECT 1 FROM attempts WHERE outcome = 'pending' AND job_id IS NULL)"
        )
        return bool(rows)

    def recover_interrupted(self, *, at: datetime) -> List[str]:
        """Settle what a killed scheduled run left behind. Its pending attempts may have reached X,
        so their texts leave the round and keep counting against the daily cap. Returns those texts.
        (A progress job's pending attempts belong to that job; `open_job` settles them.)"""
        with self._write() as conn:
            # A reply's text is no line of the round: its mention stays answered (mentions.py).
            texts = [
                row[0]
                for row in conn.execute(
                    "SELECT text FROM attempts WHERE outcome = 'pending' AND job_id IS NULL AND source != 'reply'"
                )
            ]
            conn.execute(
                "UPDATE attempts SET outcome = 'interrupted', finished_at = ?, detail = ?"
                " WHERE outcome = 'pending' AND job_id IS NULL",
                (iso(at), MAYBE_POSTED),
            )
            conn.execute(
                "UPDATE runs SET action = 'interrupted', finished_at = ?,"
                " reason = 'the run stopped before it finished' WHERE action = 'running'",
                (iso(at),),
            )
            conn.executemany(
                "INSERT OR REPLACE INTO bag (text, used_at) VALUES (?, ?)", [(text, iso(at)) for text in texts]
            )
        return texts

    def last_run_started(self) -> Optional[datetime]:
        """When the newest run (the last one written, or the last skipped run not folded in yet)
        says it started: later than now means the clock was ahead then, or is behind now."""
        streak = self.skips.read()
        if streak is not None:
            return streak.last
        rows = self._read("SELECT started_at FROM runs ORDER BY id DESC LIMIT 1")
        return parse_iso(rows[0][0]) if rows else None

    def scheduled_posts(self) -> int:
        """How many scheduled runs have posted, the days folded by HISTORY_DAYS included (they
        keep the same count): a post's number (Blue Bots Done Quick's ``{n}``) is this and one."""
        rows = self._read(
            "SELECT (SELECT count(*) FROM runs WHERE action = 'posted') + (SELECT coalesce(sum(posted), 0) FROM days)"
        )
        return int(rows[0][0]) if rows else 0

    def last_posted_text(self) -> Optional[str]:
        marks = ", ".join("?" for _ in COUNTED_OUTCOMES)
        rows = self._read(
            f"SELECT text FROM attempts WHERE outcome IN ({marks}) ORDER BY id DESC LIMIT 1", COUNTED_OUTCOMES
        )
        return rows[0][0] if rows else None


def _fold(conn: sqlite3.Connection, streak: Streak) -> None:
    """Write a streak of skipped runs into the runs table as one row standing for all of them
    (`runs`), dated from the first to the last. A streak already folded (the process stopped
    before the file was cleared) is not folded twice."""
    first = iso(streak.first)
    if conn.execute("SELECT 1 FROM runs WHERE started_at = ? AND action = 'skipped'", (first,)).fetchone():
        return
    conn.execute(
        "INSERT INTO runs (started_at, finished_at, one_in, roll, forced, dry_run, action, reason, runs)"
        " VALUES (?, ?, ?, ?, 0, 0, 'skipped', ?, ?)",
        (first, iso(streak.last), streak.one_in, streak.roll, streak.summary(), streak.runs),
    )

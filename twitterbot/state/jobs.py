"""Progress jobs: each run of a long job, its thread on every network, and its posts, so a
restarted job continues its thread and never sends its result twice."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, List, Optional

from .counting import COUNTED_OUTCOMES
from .database import Database, iso, parse_iso
from .runs import MAYBE_POSTED

if TYPE_CHECKING:
    from .outcomes import Ending
    from .records import JobPost, JobRecord

__all__ = ["JobLog"]


class JobLog(Database):
    """The jobs and job_threads tables, and the attempts that belong to a job."""

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
                    (iso(at), MAYBE_POSTED, job_id),
                )
            else:
                cursor = conn.execute(
                    "INSERT INTO jobs (name, run_key, started_at) VALUES (?, ?, ?)", (name, run_key, iso(at))
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
            started_at=parse_iso(row[3]),
            finished_at=parse_iso(row[4]) if row[4] else None,
            outcome=row[5],
            thread_root=row[6],
            last_post_at=parse_iso(row[7]) if row[7] else None,
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
            "SELECT attempts.id, sent_at, attempts.outcome, detail, text, post_id, source = 'final', jobs.id,"
            " jobs.name, (SELECT thread_root FROM job_threads t WHERE t.job_id = jobs.id AND t.network = attempts.network),"
            " attempts.network, attempts.url FROM attempts JOIN jobs ON attempts.job_id = jobs.id"
            " ORDER BY sent_at DESC, attempts.id DESC LIMIT ?",
            (limit,),
        )
        return [
            JobPost(
                row[0],
                parse_iso(row[1]),
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
        self,
        job_id: int,
        text: str,
        *,
        at: datetime,
        final: bool,
        network: str,
        group: Optional[int] = None,
        cost: Optional[float] = None,
        post: Optional[str] = None,
    ) -> int:
        """Like `begin_attempt`, for a job's post; a final one is remembered so it is never sent twice."""
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO attempts (job_id, source, text, sent_at, outcome, network, post_group, cost, post)"
                " VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?)",
                (job_id, "final" if final else "progress", text, iso(at), network, group, cost, post),
            )
            attempt_id = int(cursor.lastrowid)
            if group is None:
                conn.execute("UPDATE attempts SET post_group = id WHERE id = ?", (attempt_id,))
            return attempt_id

    def record_job_post(self, job_id: int, attempt_id: int, ending: Ending, news: str) -> None:
        """A job's post went out (`outcome` posted) or may have (uncertain): settle the attempt and
        move the job on, in one transaction, so the post is never sent again. The same post on a
        second network moves the job on only once; each network keeps its own thread. `news` is
        what the post said, so the job never posts the same news twice."""
        at, post_id = ending.at, ending.post_id
        counted = ", ".join("?" for _ in COUNTED_OUTCOMES)
        with self._write() as conn:
            (network, group) = conn.execute(
                "SELECT network, post_group FROM attempts WHERE id = ?", (attempt_id,)
            ).fetchone()
            conn.execute(
                "UPDATE attempts SET outcome = ?, finished_at = ?, post_id = ?, detail = ?, url = ?, error_kind = ?"
                " WHERE id = ?",
                (ending.outcome, iso(at), post_id, ending.detail, ending.url, ending.error_kind, attempt_id),
            )
            conn.execute(
                "UPDATE jobs SET posts = posts + 1, last_post_at = ?, last_news = ?,"
                " last_text = (SELECT text FROM attempts WHERE id = ?) WHERE id = ?"
                f" AND NOT EXISTS (SELECT 1 FROM attempts WHERE post_group = ? AND id != ? AND outcome IN ({counted}))",
                (iso(at), news, attempt_id, job_id, group, attempt_id, *COUNTED_OUTCOMES),
            )
            if post_id is not None:
                conn.execute(
                    "INSERT OR IGNORE INTO job_threads (job_id, network, thread_root) VALUES (?, ?, ?)",
                    (job_id, network, post_id),
                )
                conn.execute("UPDATE jobs SET thread_root = coalesce(thread_root, ?) WHERE id = ?", (post_id, job_id))

    def reset_thread(self, job_id: int, network: str) -> None:
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
            conn.execute("UPDATE jobs SET outcome = ?, finished_at = ? WHERE id = ?", (outcome, iso(at), job_id))

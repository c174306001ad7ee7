"""Threads of a long line (LONG_LINES=thread): the parts a line was cut into on one network, and
the attempt that last carried each part, so that a thread a failure broke is finished by a later
run and a part that may be there is never sent again::

    thread, attempt = store.begin_thread("a long line", ["part 1", "part 2"], AttemptStart("x", now, run_id=1))
    store.finish_attempt(attempt, Ending("posted", now, post_id="1"))   # both from outcomes.py
    second = store.begin_part(thread, 2, AttemptStart("x", now, run_id=1, cost=0.015))
    store.open_threads(since)   # the threads with parts left, oldest first

Each part's attempt is an attempt like any other, with the line as its text (the round and the
cap know the line by it), the part as sent (`sent_text`: a later run looks it up by it), the
part's number and its own price.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from .database import Database, iso
from .outcomes import row_id

if TYPE_CHECKING:
    from .outcomes import AttemptStart

__all__ = ["OpenThread", "ThreadLog"]


@dataclass(frozen=True)
class OpenThread:
    """A thread with parts left to send: its network, the line's recorded text, its language and
    warning, its post's group, each part as (number, text, last outcome, post id), and its post as
    stored whole (None: a thread begun before schema 12, which kept only its language and warning)."""

    thread_id: int
    network: str
    text: str
    language: Optional[str]
    spoiler: Optional[str]
    group: int
    parts: Tuple[Tuple[int, str, Optional[str], Optional[str]], ...]
    post: Optional[str] = None


class ThreadLog(Database):
    """The threads and thread_parts tables, beside the attempts that carry each part."""

    def begin_thread(
        self,
        text: str,
        parts: Sequence[str],
        start: AttemptStart,
        *,
        language: Optional[str] = None,
        spoiler: Optional[str] = None,
        post: Optional[str] = None,
    ) -> Tuple[int, int]:
        """Record a thread (with its `post` stored whole: each later part goes out as it says), its
        parts and the pending attempt of its first part (with part 1's price, `start.cost`, and its
        own stored post, `start.post`) in one transaction, before anything is sent. Returns (the
        thread, the first part's attempt)."""
        group, network, at = start.group, start.network, start.at
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO attempts (run_id, source, text, sent_at, outcome, network, post_group, cost, sent_text, part,"
                " post) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, 1, ?)",
                (
                    row_id(start.run_id),
                    start.source,
                    text,
                    iso(start.at),
                    start.network,
                    group,
                    start.cost,
                    parts[0],
                    start.post,
                ),
            )
            attempt = int(cursor.lastrowid)
            if group is None:
                group = attempt
                conn.execute("UPDATE attempts SET post_group = id WHERE id = ?", (attempt,))
            thread = int(
                conn.execute(
                    "INSERT INTO threads (post_group, network, text, language, spoiler, started_at, post)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (group, network, text, language, spoiler, iso(at), post),
                ).lastrowid
            )
            conn.execute("UPDATE attempts SET thread_id = ? WHERE id = ?", (thread, attempt))
            conn.executemany(
                "INSERT INTO thread_parts (thread_id, part, text, attempt_id) VALUES (?, ?, ?, ?)",
                [(thread, number, part, attempt if number == 1 else None) for number, part in enumerate(parts, 1)],
            )
            return thread, attempt

    def begin_part(self, thread_id: int, part: int, start: AttemptStart) -> int:
        """Record the pending attempt of a thread's `part` before it is sent, as `start` says (when,
        the run, the source, the part's price, its stored post); its text as sent is the part's.
        Returns the attempt."""
        with self._write() as conn:
            network, text, group = conn.execute(
                "SELECT network, text, post_group FROM threads WHERE id = ?", (thread_id,)
            ).fetchone()
            (sent,) = conn.execute(
                "SELECT text FROM thread_parts WHERE thread_id = ? AND part = ?", (thread_id, part)
            ).fetchone()
            attempt = int(
                conn.execute(
                    "INSERT INTO attempts (run_id, source, text, sent_at, outcome, network, post_group, thread_id,"
                    " cost, sent_text, part, post) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?)",
                    (
                        row_id(start.run_id),
                        start.source,
                        text,
                        iso(start.at),
                        network,
                        group,
                        thread_id,
                        start.cost,
                        sent,
                        part,
                        start.post,
                    ),
                ).lastrowid
            )
            conn.execute(
                "UPDATE thread_parts SET attempt_id = ? WHERE thread_id = ? AND part = ?", (attempt, thread_id, part)
            )
            return attempt

    def finish_thread(self, thread_id: int, *, at: datetime, stopped: Optional[str] = None) -> None:
        """Nothing is left to send: every part went (or may have), or `stopped` says why not."""
        with self._write() as conn:
            conn.execute("UPDATE threads SET finished_at = ?, stopped = ? WHERE id = ?", (iso(at), stopped, thread_id))

    def abandon_threads(self, before: datetime, *, at: datetime, why: str) -> int:
        """End the threads begun before `before` that still have parts left (`why`: what the
        history says); a thread that old is no longer finished. Returns how many there were."""
        if not self._read(
            "SELECT 1 FROM threads WHERE finished_at IS NULL AND started_at <= ? LIMIT 1", (iso(before),)
        ):
            return 0  # the usual run: nothing to write
        with self._write() as conn:
            return conn.execute(
                "UPDATE threads SET finished_at = ?, stopped = ? WHERE finished_at IS NULL AND started_at <= ?",
                (iso(at), why, iso(before)),
            ).rowcount

    def open_threads(self, since: datetime, networks: Sequence[str]) -> List[OpenThread]:
        """The threads on `networks` begun since `since` with parts left to send, oldest first."""
        if not networks:
            return []
        wanted = ", ".join("?" for _ in networks)
        rows = self._read(
            "SELECT id, network, text, language, spoiler, post_group, post FROM threads"
            f" WHERE finished_at IS NULL AND started_at > ? AND network IN ({wanted}) ORDER BY id",
            (iso(since), *networks),
        )
        return [OpenThread(*row[:6], parts=self.thread_parts(row[0]), post=row[6]) for row in rows]

    def thread_parts(self, thread_id: int) -> Tuple[Tuple[int, str, Optional[str], Optional[str]], ...]:
        """Each part of a thread: (number, text, its last attempt's outcome or None, its post id)."""
        rows = self._read(
            "SELECT p.part, p.text, a.outcome, a.post_id FROM thread_parts p"
            " LEFT JOIN attempts a ON a.id = p.attempt_id WHERE p.thread_id = ? ORDER BY p.part",
            (thread_id,),
        )
        return tuple((row[0], row[1], row[2], row[3]) for row in rows)

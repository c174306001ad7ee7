"""Replies in the history: the mentions each run read (once per network and id), each network's
cursor, the reads a network bills, the accounts that said "stop", and which reply answered which
mention. A mention is claimed in the same transaction as its reply's attempt is recorded, before
the reply is sent, so no second run and no run after a kill answers it again::

    store.record_mentions("x", [row], cursor="x:1:42", at=now, requests=1, cost=0.001)
    for row in store.pending_mentions(["x"]):       # oldest first
        attempt = store.claim_reply(row.network, row.mention_id, "hello", start, rule="(?i)hi")
        store.finish_reply(attempt, Ending("posted", now, post_id="9"), "answered")
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import TYPE_CHECKING, Dict, List, NamedTuple, Optional, Sequence, Tuple

from .database import Database, iso, parse_iso
from .outcomes import row_id

if TYPE_CHECKING:
    from .outcomes import AttemptStart, Ending

__all__ = [
    "ANSWERED",
    "FAILED",
    "PENDING",
    "REPLY_SOURCE",
    "SKIPPED",
    "MentionLog",
    "MentionRow",
    "MentionTaken",
    "ReplyRecord",
    "StoppedAccount",
    "Tried",
]

# What became of a mention (the mentions table's status).
PENDING = "pending"  # read, not answered yet: a later run (within MAX_REPLIES_PER_RUN) answers it
ANSWERED = "answered"  # claimed by a reply that went, or may have gone, to the network
SKIPPED = "skipped"  # not answered, for the reason kept beside it
FAILED = "failed"  # its reply failed for good
# The attempts a reply makes carry this source.
REPLY_SOURCE = "reply"

_COLUMNS = (
    "network, mention_id, author_id, author, author_bot, bio, text, created_at, reply_to, visibility, answers_bot"
)


class MentionRow(NamedTuple):
    """A mention as the history keeps it (the network's `Mention`, in columns)."""

    network: str
    mention_id: str
    author_id: str
    author: str
    author_bot: bool
    bio: str
    text: str
    created_at: datetime
    reply_to: str
    visibility: Optional[str]
    answers_bot: bool


class ReplyRecord(NamedTuple):
    """One mention read, for `history` and the status page: what became of it, why, by which rule,
    and its reply's link when there is one."""

    network: str
    author: str
    text: str
    seen_at: datetime
    status: str
    reason: Optional[str]
    rule: Optional[str]
    outcome: Optional[str]
    reply_id: Optional[str]
    url: Optional[str]


class Tried(NamedTuple):
    """A pending mention's last failed try: when it was read and when it last failed (for its back-off)."""

    seen_at: datetime
    failed_at: datetime


class StoppedAccount(NamedTuple):
    network: str
    author: str
    stopped_at: datetime


class MentionTaken(Exception):
    """The mention is no longer pending (another run claimed it first): nothing was recorded."""


class MentionLog(Database):
    """The mentions, cursors, billed reads and stopped accounts (schema 11)."""

    def mention_cursor(self, network: str) -> Tuple[bool, Optional[str]]:
        """Whether `network` was read before, and the cursor its last read left (None: none)."""
        rows = self._read("SELECT cursor FROM mention_cursors WHERE network = ?", (network,))
        return (True, rows[0][0]) if rows else (False, None)

    def record_mentions(
        self,
        network: str,
        mentions: Sequence[MentionRow],
        cursor: Optional[str],
        *,
        at: datetime,
        requests: int,
        cost: Optional[float],
    ) -> int:
        """Keep one read of `network`: its new mentions (pending; one already kept stays as it is),
        the cursor to read from next (None: keep the one there) and, when reads are billed, what
        the read cost, all in one transaction. Returns how many mentions were new."""
        with self._write() as conn:
            before = conn.total_changes
            conn.executemany(
                f"INSERT OR IGNORE INTO mentions ({_COLUMNS}, seen_at, status)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')",
                [(*_values(row), iso(at)) for row in mentions],
            )
            new = conn.total_changes - before
            conn.execute(
                "INSERT INTO mention_cursors (network, cursor, read_at) VALUES (?, ?, ?)"
                " ON CONFLICT (network) DO UPDATE SET cursor = coalesce(excluded.cursor, cursor), read_at = excluded.read_at",
                (network, cursor, iso(at)),
            )
            if cost:
                conn.execute(
                    "INSERT INTO mention_reads (network, read_at, requests, cost) VALUES (?, ?, ?, ?)",
                    (network, iso(at), requests, cost),
                )
        return new

    def pending_mentions(self, networks: Sequence[str]) -> List[MentionRow]:
        """The mentions of `networks` not answered yet, the oldest first."""
        if not networks:
            return []
        wanted = ", ".join("?" for _ in networks)
        rows = self._read(
            f"SELECT {_COLUMNS} FROM mentions WHERE status = 'pending' AND network IN ({wanted})"
            " ORDER BY created_at, id",
            tuple(networks),
        )
        return [_row(row) for row in rows]

    def failed_tries(self, networks: Sequence[str]) -> Dict[Tuple[str, str], Tried]:
        """The pending mentions of `networks` whose last try failed (a rule's data error, a picture
        not fetched, a passing failure of the network), by (network, mention id)."""
        if not networks:
            return {}
        wanted = ", ".join("?" for _ in networks)
        rows = self._read(
            "SELECT m.network, m.mention_id, m.seen_at, coalesce(a.finished_at, a.sent_at) FROM mentions m"
            " JOIN attempts a ON a.id = m.attempt_id"
            f" WHERE m.status = 'pending' AND a.outcome IN ('failed', 'temporary') AND m.network IN ({wanted})",
            tuple(networks),
        )
        return {(row[0], row[1]): Tried(parse_iso(row[2]), parse_iso(row[3])) for row in rows}

    def fail_mention(self, network: str, mention_id: str, reason: str, *, at: datetime, rule: Optional[str]) -> None:
        """A try at a pending mention failed before a reply was sent (its rule's data error, a
        picture not fetched, the round's match budget spent): kept as a failed attempt, its reason
        beside the mention, which stays pending for a later round (`failed_tries`)."""
        with self._write() as conn:
            attempt = int(
                conn.execute(
                    "INSERT INTO attempts (source, text, sent_at, finished_at, outcome, network, detail)"
                    " VALUES (?, '', ?, ?, 'failed', ?, ?)",
                    (REPLY_SOURCE, iso(at), iso(at), network, reason),
                ).lastrowid
            )
            conn.execute("UPDATE attempts SET post_group = id WHERE id = ?", (attempt,))
            conn.execute(
                "UPDATE mentions SET attempt_id = ?, reason = ?, rule = ? WHERE network = ? AND mention_id = ?"
                " AND status = 'pending'",
                (attempt, reason, rule, network, mention_id),
            )

    def claim_reply(self, network: str, mention_id: str, text: str, start: AttemptStart, *, rule: Optional[str]) -> int:
        """Record the reply's attempt (pending, before it is sent) and claim the mention for it, in
        one transaction; `MentionTaken` (and nothing recorded) when it is no longer pending."""
        with self._write() as conn:
            attempt = int(
                conn.execute(
                    "INSERT INTO attempts (run_id, source, text, sent_at, outcome, network, cost, sent_text, post)"
                    " VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?)",
                    (
                        row_id(start.run_id),
                        REPLY_SOURCE,
                        text,
                        iso(start.at),
                        network,
                        start.cost,
                        start.sent_text,
                        start.post,
                    ),
                ).lastrowid
            )
            conn.execute("UPDATE attempts SET post_group = id WHERE id = ?", (attempt,))
            claimed = conn.execute(
                "UPDATE mentions SET status = 'answered', rule = ?, attempt_id = ?, reason = NULL"
                " WHERE network = ? AND mention_id = ? AND status = 'pending'",
                (rule, attempt, network, mention_id),
            ).rowcount
            if not claimed:
                raise MentionTaken(f"{network} mention {mention_id} is no longer pending")  # rolls back the attempt
        return attempt

    def finish_reply(self, attempt_id: int, ending: Ending, status: str) -> None:
        """Record a reply's outcome and what it makes of its mention (`status`: answered; pending,
        for a passing failure a later run makes good; failed), in one transaction."""
        with self._write() as conn:
            self._write_ending(conn, attempt_id, ending)  # type: ignore[attr-defined]  # RunLog's
            conn.execute(
                "UPDATE mentions SET status = ?, reason = ? WHERE attempt_id = ?",
                (status, None if status == ANSWERED else ending.detail, attempt_id),
            )

    def skip_mention(self, network: str, mention_id: str, reason: str, *, rule: Optional[str] = None) -> None:
        """A pending mention that gets no reply, and why."""
        with self._write() as conn:
            conn.execute(
                "UPDATE mentions SET status = 'skipped', reason = ?, rule = ? WHERE network = ? AND mention_id = ?"
                " AND status = 'pending'",
                (reason, rule, network, mention_id),
            )

    def stop_account(self, row: MentionRow, *, at: datetime) -> None:
        """The author of `row` said "stop": never answered again; the mention itself is skipped."""
        with self._write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO stopped_accounts (network, author_id, author, stopped_at, mention_id)"
                " VALUES (?, ?, ?, ?, ?)",
                (row.network, row.author_id, row.author, iso(at), row.mention_id),
            )
            conn.execute(
                "UPDATE mentions SET status = 'skipped', reason = ? WHERE network = ? AND mention_id = ?",
                ("the author said stop: never answered again", row.network, row.mention_id),
            )

    def is_stopped(self, network: str, author_id: str) -> bool:
        rows = self._read("SELECT 1 FROM stopped_accounts WHERE network = ? AND author_id = ?", (network, author_id))
        return bool(rows)

    def stopped_accounts(self) -> List[StoppedAccount]:
        """Every account that said stop, the newest first (`check` lists them)."""
        rows = self._read("SELECT network, author, stopped_at FROM stopped_accounts ORDER BY stopped_at DESC")
        return [StoppedAccount(row[0], row[1], parse_iso(row[2])) for row in rows]

    def last_reply_to(self, network: str, author_id: str) -> Optional[datetime]:
        """When the newest reply to the account went, or may have gone (REPLY_COOLDOWN)."""
        rows = self._read(
            "SELECT max(a.sent_at) FROM mentions m JOIN attempts a ON a.id = m.attempt_id"
            " WHERE m.network = ? AND m.author_id = ? AND a.outcome IN ('pending', 'posted', 'interrupted', 'uncertain')",
            (network, author_id),
        )
        return parse_iso(rows[0][0]) if rows and rows[0][0] else None

    def recent_replies(self, limit: int) -> List[ReplyRecord]:
        """The last `limit` mentions read, newest first, with what became of each."""
        rows = self._read(
            "SELECT m.network, m.author, m.text, m.seen_at, m.status, m.reason, m.rule, a.outcome, a.post_id, a.url"
            " FROM mentions m LEFT JOIN attempts a ON a.id = m.attempt_id ORDER BY m.id DESC LIMIT ?",
            (limit,),
        )
        return [ReplyRecord(*row[:3], parse_iso(row[3]), *row[4:]) for row in rows]  # type: ignore[call-arg]

    def replies_interrupted(self, *, at: datetime) -> int:
        """Settle what a killed run left: its pending replies may have reached the network, so they
        stay claimed (answered) and count as sent. Returns how many."""
        with self._write() as conn:
            return conn.execute(
                "UPDATE attempts SET outcome = 'interrupted', finished_at = ?,"
                " detail = 'the run stopped before the network answered; it may have been posted'"
                " WHERE outcome = 'pending' AND source = ?",
                (iso(at), REPLY_SOURCE),
            ).rowcount


def _values(row: MentionRow) -> tuple:
    return (
        row.network,
        row.mention_id,
        row.author_id,
        row.author,
        int(row.author_bot),
        row.bio,
        row.text,
        iso(row.created_at),
        row.reply_to,
        row.visibility,
        int(row.answers_bot),
    )


def _row(row: sqlite3.Row) -> MentionRow:
    return MentionRow(
        row[0], row[1], row[2], row[3], bool(row[4]), row[5], row[6], parse_iso(row[7]), row[8], row[9], bool(row[10])
    )

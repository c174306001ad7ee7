"""What the daily cap and the minimum gap count: the posts that went, or may have gone, to a
network in a window of time. The store (runs.py) and the status page's reader (reader.py) ask the
same questions of the attempts table, so the queries live here once::

    store.posts_since(now - timedelta(hours=24), now)
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Callable, List, Optional, Set, Tuple

from .database import iso, parse_iso

__all__ = ["CAP_WINDOW", "CLOCK_SLACK", "COUNTED_OUTCOMES", "PostCounts"]

# MAX_POSTS_PER_DAY counts the posts of this window, as a thread's room does.
CAP_WINDOW = timedelta(hours=24)
# History rows dated later than now plus this were written while the clock was ahead: they are left
# out of the cap and the gap (and the run warns), so fixing a clock never blocks posting for long.
CLOCK_SLACK = timedelta(minutes=5)

# Attempt outcomes that count against MAX_POSTS_PER_DAY: anything that did or may have reached a
# network. pending: being sent now (or its run was killed); interrupted: a killed run's pending
# attempt, settled; uncertain: sent, but the answer was lost. None of them is ever sent again.
# (MAX_POSTS_PER_DAY counts posts, not networks: one post to three networks counts once; a thread
# of three parts counts three times.)
COUNTED_OUTCOMES = ("pending", "posted", "interrupted", "uncertain")
# Replies (schema 11's source "reply") count in the monthly budget, not in the cap or the gap.
_NOT_REPLIES = "source != 'reply'"


class PostCounts:
    """The counting queries, over a class's `_read(sql, params) -> rows`."""

    _read: Callable[..., list]
    _cost: str = "cost"  # the cost column as SQL (a history older than schema 6 has none: NULL)
    _part: str = "part"  # the thread part column (older than schema 8: NULL)
    _reads: bool = True  # whether the billed reads of mentions are kept (schema 11)

    def costs_since(
        self, network: str, since: datetime, until: Optional[datetime] = None
    ) -> List[Tuple[Optional[float], str]]:
        """What each post that went (or may have gone) to `network` after `since` cost, with its
        text: the cost is None for a row written before costs were kept (its text tells its price)."""
        marks = ", ".join("?" for _ in COUNTED_OUTCOMES)
        window = (network, iso(since), iso(until) if until else "9999")
        # Reads of the account's mentions that a network bills (schema 11) count too, with no text.
        reads = (
            " UNION ALL SELECT cost, '' FROM mention_reads WHERE network = ? AND read_at > ? AND read_at <= ?"
            if self._reads
            else ""
        )
        rows = self._read(
            f"SELECT {self._cost}, text FROM attempts WHERE network = ? AND sent_at > ? AND sent_at <= ?"
            f" AND outcome IN ({marks}){reads}",
            (*window, *COUNTED_OUTCOMES, *(window if self._reads else ())),
        )
        return [(row[0], row[1]) for row in rows]

    def posts_since(self, since: datetime, until: Optional[datetime] = None) -> int:
        """How many posts went (or may have gone) to a network after `since` and up to `until`, from
        every source but replies (they have their own limits: MAX_REPLIES_PER_RUN, REPLY_COOLDOWN).
        Rows dated after `until` (made while the clock was ahead) are left out."""
        # A thread's parts are posts too: its part 1 and the line's post elsewhere are one.
        post = f"coalesce(post_group, id) || '.' || coalesce({self._part}, 1)"
        return int(self._counted_since(f"count(DISTINCT {post})", since, until, where=_NOT_REPLIES))

    def oldest_post_since(self, since: datetime, until: Optional[datetime] = None) -> Optional[datetime]:
        """When the oldest counted post in the window was sent: the cap frees up 24 h after it."""
        oldest = self._counted_since("min(sent_at)", since, until, where=_NOT_REPLIES)
        return self._time(oldest) if oldest else None

    def last_scheduled_post(self, until: datetime) -> Optional[datetime]:
        """When the newest scheduled post (made or maybe made) up to `until` was sent, for
        MIN_POST_GAP. Progress jobs' posts are not scheduled posts and are left out."""
        newest = self._counted_since("max(sent_at)", None, until, where=f"job_id IS NULL AND {_NOT_REPLIES}")
        return self._time(newest) if newest else None

    def texts_posted_since(self, since: datetime) -> Set[str]:
        """Every text that went (or may have gone) to a network after `since`, from every source: a
        grammar's run draws again rather than post one of them (GRAMMAR_MEMORY)."""
        marks = ", ".join("?" for _ in COUNTED_OUTCOMES)
        rows = self._read(
            f"SELECT DISTINCT text FROM attempts WHERE sent_at > ? AND outcome IN ({marks})",
            (iso(since), *COUNTED_OUTCOMES),
        )
        return {row[0] for row in rows}

    def _time(self, text: str) -> Optional[datetime]:
        return parse_iso(text)

    def _counted_since(
        self, aggregate: str, since: Optional[datetime], until: Optional[datetime], where: str = "1"
    ) -> object:
        # One post to several networks is one post: count its group once (old rows have none).
        marks = ", ".join("?" for _ in COUNTED_OUTCOMES)
        rows = self._read(
            f"SELECT {aggregate} FROM attempts WHERE sent_at > ? AND sent_at <= ? AND outcome IN ({marks}) AND {where}",
            (iso(since) if since else "", iso(until) if until else "9999", *COUNTED_OUTCOMES),
        )
        return rows[0][0]

"""The rows the history store reads back: past runs and progress jobs for `history` and the
reporter, and posts a network still lacks. A plain dataclass each.

They live apart from the store so that a scheduled run, which reads none of them back (or only
when a network missed a post), does not pay for making their classes: on Python 3.11 making a
frozen dataclass costs about 1 ms of CPU, which a Pi Zero pays four times a day::

    from twitterbot.state.records import RunRecord
    [run.action for run in store.recent_runs(10)]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Dict, Optional

__all__ = ["CatchUp", "JobPost", "JobRecord", "RunRecord", "Unsettled"]


@dataclass(frozen=True)
class RunRecord:
    """One row of `history`: what a run decided and did."""

    id: int
    started_at: datetime
    action: str
    reason: Optional[str]
    text: Optional[str]
    post_id: Optional[str]
    one_in: Optional[int]
    roll: Optional[int]
    dry_run: bool
    url: Optional[str] = None  # the first post's link
    runs: int = 1  # how many runs the row stands for: a day's skipped runs are one row (skips.py)


@dataclass(frozen=True)
class CatchUp:
    """A post that one network still lacks (see `HistoryStore.catch_ups`)."""

    group: int
    network: str
    text: str
    run_id: Optional[int]
    job_id: Optional[int]
    source: str
    first_sent_at: datetime
    post: Optional[str] = None  # the post as stored whole with the attempt; None: before schema 12


@dataclass(frozen=True)
class Unsettled:
    """A post whose outcome is not known, with what a look-up needs (see `HistoryStore.unsettled`)."""

    id: int
    run_id: Optional[int]
    group: Optional[int]
    network: str
    text: str  # as the history keeps it (a line with its pictures)
    sent_text: str  # as it was posted
    sent_at: datetime
    lookup_key: Optional[str]  # Bluesky's record key, Mastodon's Idempotency-Key; None: not known
    outcome: str  # uncertain or interrupted
    post: Optional[str] = None  # the post as stored whole with the attempt; None: before schema 12


@dataclass(frozen=True)
class JobRecord:
    """A progress job's run, as the reporter left it."""

    id: int
    name: str
    run_key: Optional[str]
    started_at: datetime
    finished_at: Optional[datetime]
    outcome: Optional[str]
    thread_root: Optional[str]
    last_post_at: Optional[datetime]
    last_text: Optional[str]
    last_news: Optional[str]
    posts: int
    final_sent: bool  # a final (done/failed) post reached, or may have reached, a network
    threads: Dict[str, str] = field(default_factory=dict)  # network -> the id of the run's first post there


@dataclass(frozen=True)
class JobPost:
    """One post (or try) of a progress job, for `history`: which job, which run and thread."""

    id: int
    sent_at: datetime
    outcome: str  # pending, posted, duplicate, failed, interrupted
    detail: Optional[str]
    text: str
    post_id: Optional[str]
    final: bool  # the run's result, not a progress post
    job_id: int
    job_name: str
    thread_root: Optional[str]  # the id of the run's first post on this network
    network: str
    url: Optional[str] = None

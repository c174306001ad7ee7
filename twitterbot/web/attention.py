"""What needs the owner's eye, as the status page lists it: one `Attention` a problem, from the
settings, the tweets file, the history and the jobs, most urgent first and each problem once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import List, Optional, Tuple

from ..posting.links import label_of
from ..settings.loading import Config
from ..settings.table import POST_TO
from ..state.clock import zone_for
from ..state.reader import HistoryReader
from ..unattended import TWEET_TIMEZONE
from .links import check_url

__all__ = ["ATTENTION_WINDOW", "FAILURE_WINDOW", "Attention", "history_attention", "urgent_first"]

ATTENTION_WINDOW = timedelta(days=7)  # uncertain posts and missed one-off lines stay on the page this long
FAILURE_WINDOW = timedelta(hours=24)  # failures stay on the page this long
_ORDER = ("history", "keys", "uncertain", "failed", "tweets_file", "missed", "missed_line", "job")


@dataclass(frozen=True)
class Attention:
    """One thing the owner should look at: `kind` is history, keys, uncertain, failed, missed (a
    post a network lacks yet), missed_line (a one-off line no run posted in time), tweets_file or
    job; `link` where to look, if there is a page for it."""

    kind: str
    title: str
    detail: str = ""
    link: Optional[str] = None
    at: Optional[datetime] = None


def urgent_first(items: List[Attention]) -> Tuple[Attention, ...]:
    """The items most urgent first, each problem once, under its most urgent heading: the run that
    failed because X refused the keys is the keys' item, not a second one that says the same."""
    ordered = sorted(items, key=_urgency)
    said = {item.detail for item in ordered if item.kind != "failed"}
    return tuple(item for item in ordered if item.kind != "failed" or item.detail not in said)


def _urgency(item: Attention) -> int:
    return _ORDER.index(item.kind) if item.kind in _ORDER else len(_ORDER)


def history_attention(history: HistoryReader, config: Config, now: datetime) -> List[Attention]:
    """What the history says needs the owner: keys a network refused at its last try, posts that
    may or may not have gone, failed runs and job posts, posts a network still lacks, and one-off
    lines no run posted within LATE_BY of their time."""
    items: List[Attention] = []
    for network in config[POST_TO]:  # nothing will post there until the keys are fixed
        refused = history.keys_refused(network.name)
        if refused and refused.detail:
            items.append(Attention("keys", f"{network.label} refused the keys", refused.detail, at=refused.sent_at))
    for attempt in history.maybe_posted(now - ATTENTION_WINDOW, limit=10):
        items.append(
            Attention(
                "uncertain",
                f"Maybe posted on {label_of(config, attempt.network)}: {attempt.text}",
                f"{attempt.detail or 'no answer came'}; it counts as posted and is never sent again: look whether it is there",
                link=check_url(attempt.network, config),
                at=attempt.sent_at,
            )
        )
    for run in history.failed_runs(now - FAILURE_WINDOW, limit=5):
        items.append(Attention("failed", "A run failed", run.reason or "", at=run.started_at))
    for attempt in history.failed_job_posts(now - FAILURE_WINDOW, limit=5):
        items.append(
            Attention(
                "failed",
                f"Job {attempt.job_name!r}: a post to {label_of(config, attempt.network)} failed",
                attempt.detail or attempt.text,
                at=attempt.sent_at,
            )
        )
    for attempt in history.missed(now - FAILURE_WINDOW, limit=5):
        items.append(
            Attention(
                "missed",
                f"Not on {label_of(config, attempt.network)} yet: {attempt.text}",
                f"{attempt.detail or ''} (the next runs send it there, for 24 hours)".strip(),
                at=attempt.sent_at,
            )
        )
    zone = zone_for(config[TWEET_TIMEZONE])  # the bot's zone, which the lines' times are written in
    for line in history.missed_lines(now - ATTENTION_WINDOW, limit=5):
        items.append(
            Attention(
                "missed_line",
                f"A one-off line was not posted: {line.text}",
                f"due {_at(line.due_at, zone)}, the run that found it came {_at(line.noted_at, zone)}: {line.reason}",
                at=line.noted_at,
            )
        )
    return items


def _at(moment: Optional[datetime], zone: tzinfo) -> str:
    """A time in the bot's zone, as the tweets file's {at: ...} writes it."""
    return f"{moment.astimezone(zone):%Y-%m-%d %H:%M}" if moment else "at a time the history does not hold"

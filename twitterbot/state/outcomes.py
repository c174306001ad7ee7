"""What became of a run or of one post: the values the history database and `--json` hold, and
how an attempt is begun (`AttemptStart`) and ended (`Ending`) in it.

Apart from records.py so that every run, which compares outcomes, and every post, which records
its attempts, does not pay for making the record classes (see records.py)::

    from twitterbot.state.records import Outcome   # or from here
    Outcome.POSTED == "posted"   # True
"""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Optional, Union

__all__ = ["AttemptStart", "Ending", "Outcome", "PlannedRun", "RunRef", "row_id"]


class Outcome(str, enum.Enum):
    """What became of a run or of one post (an attempt) on one network. The values are what the
    history database and `--json` hold, and never change; a member compares equal to its value."""

    POSTED = "posted"  # the network answered with the post
    UNCERTAIN = "uncertain"  # it may have been posted: counted as posted, never sent again
    DUPLICATE = "duplicate"  # the network already has this text
    TEMPORARY = "temporary"  # certainly not posted, for a passing reason: a later run catches up
    FAILED = "failed"  # certainly not posted
    TOO_LONG = "too_long"  # not sent: it does not fit on that network
    OVER_BUDGET = "over_budget"  # not sent: it would pass that network's monthly budget
    WOULD_POST = "would_post"  # a dry run: nothing sent
    SKIPPED = "skipped"  # a run that decided not to post
    PENDING = "pending"  # recorded, being sent
    INTERRUPTED = "interrupted"  # the run stopped while sending: counted as posted

    __str__ = str.__str__  # "posted", not "Outcome.POSTED", in messages
    __format__ = str.__format__


class PlannedRun:
    """A run's row that is written with the run's first write, in the same transaction: its id is
    known from then on (`int(run)`), which is when the first statement that names it runs."""

    __slots__ = ("id",)

    def __init__(self) -> None:
        self.id: Optional[int] = None

    def written(self, run_id: int) -> None:
        self.id = run_id

    def __int__(self) -> int:
        assert self.id is not None, "a planned run is named before its first write"
        return self.id


# A run as the history knows it: its id, or its row still to be written.
RunRef = Union[int, PlannedRun]


def row_id(run: Optional[RunRef]) -> Optional[int]:
    """The id to write for `run` (None: a job's attempt, which belongs to no run)."""
    return None if run is None else int(run)


class AttemptStart:
    """What an attempt is recorded with before it is sent: the network, when, the run that sends
    it (None: a job's), what kind of send it is (`source`: scheduled, catch_up), `group`, the
    first attempt carrying the same post to another network (None: this one starts a group), and
    for a post that is sent whole, its price there and its text as sent; `post`, the post stored
    whole (the delivery's JSON: a later run sends and looks it up by it).
    Plain classes, as `Ending`: every post makes them, and a dataclass costs one to make."""

    __slots__ = ("at", "cost", "group", "network", "post", "run_id", "sent_text", "source")

    def __init__(
        self,
        network: str,
        at: datetime,
        run_id: Optional[RunRef] = None,
        source: str = "scheduled",
        group: Optional[int] = None,
        *,
        cost: Optional[float] = None,
        sent_text: Optional[str] = None,
        post: Optional[str] = None,
    ) -> None:
        self.network, self.at, self.run_id, self.source, self.group = network, at, run_id, source, group
        self.cost = cost  # what the network charges for it (None: nothing)
        self.sent_text = sent_text  # the text as sent, where it is not what the row names
        self.post = post  # the post as the delivery stores it


class Ending:
    """How an attempt ended, as it is written after the send (`finish_attempt`, `record_job_post`):
    its outcome and when, the post's id and link if the network answered, why it failed (`detail`,
    the `ErrorKind` as `error_kind`), what an uncertain post can be looked up by later
    (`lookup_key`), and whether its text leaves this round (`mark_used`: a scheduled line that
    reached, or may have reached, the network)."""

    __slots__ = ("at", "detail", "error_kind", "lookup_key", "mark_used", "outcome", "post_id", "url")

    def __init__(  # the columns of an attempt's row, as finish_attempt writes them
        self,
        outcome: str,
        at: datetime,
        post_id: Optional[str] = None,
        url: Optional[str] = None,
        detail: Optional[str] = None,
        error_kind: Optional[str] = None,
        lookup_key: Optional[str] = None,
        mark_used: bool = False,
    ) -> None:
        self.outcome, self.at, self.post_id, self.url = outcome, at, post_id, url
        self.detail, self.error_kind, self.lookup_key, self.mark_used = detail, error_kind, lookup_key, mark_used

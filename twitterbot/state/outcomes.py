"""What became of a run or of one post: the values the history database and `--json` hold.

Apart from records.py so that every run, which compares outcomes, does not pay for making the
record classes (see records.py)::

    from twitterbot.state.records import Outcome   # or from here
    Outcome.POSTED == "posted"   # True
"""

from __future__ import annotations

import enum

__all__ = ["Outcome"]


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

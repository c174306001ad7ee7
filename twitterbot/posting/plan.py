"""A dry run's plan: where the picked line would go, and how, with nothing recorded or sent.

The run's `Delivery` says what a real run would do with the same line (`Delivery.plan`): each
network it fits or would go to as a thread, those it is too long for, and a picture that cannot be
prepared as the data error a real run would meet. This module words it, with what a thread would
cost::

    action, reason, fields = planned(line, "tweets.txt", "forced", False, delivery)
    action, [sent.outcome for sent in fields["networks"]]    # ('would_post', ['would_post', 'too_long'])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Tuple

from ..delivery.send import Sent
from ..state.outcomes import Outcome
from .result import dry_outcome
from .tweets import TweetLine

if TYPE_CHECKING:
    from ..delivery.deliver import Delivery

__all__ = ["planned"]


def planned(
    line: TweetLine, file_name: str, why: str, new_round: bool, delivery: Delivery
) -> Tuple[Outcome, str, Dict[str, object]]:
    """The run's action, reason and result fields for a dry run that picked `line` (`why` it
    posts, and whether the pick starts a new round)."""
    plan = delivery.plan(line.post(file_name))
    action, reason, error = dry_outcome(why, new_round, plan, _threads(line, plan, delivery.numbers))
    return action, reason, {"line": line, "networks": plan, "error": error}


def _threads(line: TweetLine, plan: Tuple[Sent, ...], numbers: bool) -> str:
    """For the reason: where `line` would go as a thread, and what that costs."""
    threaded = [
        sent for sent in plan if sent.fit is not None and line.threaded(sent.fit) and sent.outcome == Outcome.WOULD_POST
    ]
    if not threaded:
        return ""
    from ..delivery.threads import parts_for, thread_cost  # only a line that goes somewhere as a thread
    from .options import sent_text

    said: List[str] = []
    for sent in threaded:
        parts = parts_for(sent_text(line.text, line.options, sent.network), sent.network, numbers)
        said.append(f"{sent.network.label} would get it as {thread_cost(sent.network, parts)}")
    return "".join(f"; {each}" for each in said)

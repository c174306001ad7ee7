"""The one send step: a recorded attempt goes through send -> outcome -> record.

The `Delivery` (delivery.py) records every post before it is sent and hands the request here; this
step turns what the network said into an outcome and has it written down (`record`). An outcome
that cannot be known counts as posted: it is recorded as uncertain and never sent again (at most
once)::

    sent = send(lambda: poster.post(text), network=network, record=record)
    sent.outcome, sent.reached
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ..errors import BotError, DuplicatePost, ErrorKind, ExitStatus, PostError
from ..networks import Fit, Network, PostResult
from ..state.outcomes import Outcome

__all__ = ["Record", "Sent", "send"]

# How an outcome is written down: (outcome, the network's answer if it posted or may have, detail,
# the kind of the error that ended the attempt).
Record = Callable[[Outcome, Optional[PostResult], Optional[str], Optional[ErrorKind]], None]


@dataclass(frozen=True)
class Sent:
    """What became of a post on one network. `outcome`: posted, uncertain, duplicate, failed,
    temporary (a certain failure a later run makes good), too_long (not sent: it does not fit
    there), over_budget (not sent: `note` says which budget it would pass) or would_post (a dry run)."""

    network: Network
    outcome: Outcome
    fit: Optional[Fit] = None
    result: Optional[PostResult] = None
    error: Optional[BotError] = None
    note: Optional[str] = None

    @property
    def reached(self) -> bool:
        """The post is, or may be, on this network now."""
        return self.outcome in (Outcome.POSTED, Outcome.UNCERTAIN)

    def as_dict(self) -> dict:
        fit, result = self.fit, self.result
        return {
            "network": self.network.name,
            "outcome": self.outcome,
            "length": fit.length if fit else None,
            "limit": fit.limit if fit else None,
            "counted_in": fit.unit if fit else None,
            "id": result.post_id if result else None,
            "url": result.url if result else None,
            "check_url": result.check_url if result else None,
            "error": self.error.kind if self.error else None,
            "reason": str(self.error) if self.error else self.note or (fit.reason if fit and not fit.fits else None),
        }


def send(post: Callable[[], PostResult], *, network: Network, record: Record, fit: Optional[Fit] = None) -> Sent:
    """Send one recorded attempt (`post` makes the request) and record what came of it. A post the
    network already has is a duplicate; a certain failure is temporary (a later run may make it
    good) or failed; a post that may have reached the network is uncertain and counts as posted."""
    try:
        result = post()
    except DuplicatePost as exc:
        record(Outcome.DUPLICATE, None, str(exc), exc.kind)
        return Sent(network, Outcome.DUPLICATE, fit, error=exc)
    except PostError as exc:
        outcome = Outcome.TEMPORARY if exc.exit_status == ExitStatus.TEMPORARY_FAILURE else Outcome.FAILED
        record(outcome, None, str(exc), exc.kind)
        return Sent(network, outcome, fit, error=exc)
    if not result.confirmed:
        record(Outcome.UNCERTAIN, result, result.uncertain, ErrorKind.UNCERTAIN)
        where = result.check_url or f"the account's profile on {network.site or network.name}"
        reason = (
            f"{network.label} may or may not have posted it ({result.uncertain}): it counts as posted"
            f" and will not be sent again unless a later run finds it is not there (LOOK_UP_UNCERTAIN); see {where}"
            " to check"
        )
        error = PostError(reason, kind=ErrorKind.UNCERTAIN, exit_status=ExitStatus.TEMPORARY_FAILURE)
        return Sent(network, Outcome.UNCERTAIN, fit, result, error)
    record(Outcome.POSTED, result, None, None)
    return Sent(network, Outcome.POSTED, fit, result)

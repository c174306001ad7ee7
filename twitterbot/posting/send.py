"""The one way a post is sent: a recorded attempt goes through send -> outcome -> record.

Every post (a scheduled run's, a catch-up, a progress job's) is recorded before it is sent (the
caller's `begin_attempt`) and its outcome after, here. An outcome that cannot be known counts as
posted: it is recorded as uncertain and never sent again (at most once). The caller says how its
outcome is written down (`record`), since a job's post also moves its thread::

    attempt = store.begin_attempt(text, run_id=run_id, at=clock(), network=poster.name)
    sent = send(lambda: poster.post(text), network=poster.name, registry=registry, record=recorder(store, attempt, clock))
    sent.outcome, sent.reached
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from ..errors import BotError, DuplicatePost, ErrorKind, ExitStatus, PostError
from ..networks import Fit, Poster, PostResult

if TYPE_CHECKING:
    from ..pictures.prepare import PreparedImage
    from ..registry import Registry
    from ..state.store import HistoryStore
from ..state.outcomes import Outcome

__all__ = ["Record", "Sent", "recorder", "send", "send_attempt"]

# How an outcome is written down: (outcome, the network's answer if it posted or may have, detail,
# the kind of the error that ended the attempt).
Record = Callable[[Outcome, Optional[PostResult], Optional[str], Optional[ErrorKind]], None]


@dataclass(frozen=True)
class Sent:
    """What became of a post on one network. `outcome`: posted, uncertain, duplicate, failed,
    temporary (a certain failure a later run makes good), too_long (not sent: it does not fit
    there), over_budget (not sent: `note` says which budget it would pass) or would_post (a dry run)."""

    network: str
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
            "network": self.network,
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


def send(
    post: Callable[[], PostResult], *, network: str, registry: Registry, record: Record, fit: Optional[Fit] = None
) -> Sent:
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
        where = result.check_url or f"the account's profile on {registry.site(network)}"
        reason = (
            f"{registry.label(network)} may or may not have posted it ({result.uncertain}): it counts as posted"
            f" and will not be sent again unless a later run finds it is not there (LOOK_UP_UNCERTAIN); see {where}"
            " to check"
        )
        error = PostError(reason, kind=ErrorKind.UNCERTAIN, exit_status=ExitStatus.TEMPORARY_FAILURE)
        return Sent(network, Outcome.UNCERTAIN, fit, result, error)
    record(Outcome.POSTED, result, None, None)
    return Sent(network, Outcome.POSTED, fit, result)


def recorder(store: object, attempt: int, clock: Callable[[], datetime]) -> Record:
    """How a scheduled post's outcome is written: a post that reached, or may have reached, the
    network leaves the round (never sent again), and so does one the network already has."""

    def record(
        outcome: Outcome, result: Optional[PostResult], detail: Optional[str], kind: Optional[ErrorKind]
    ) -> None:
        posted = outcome == Outcome.POSTED and result is not None
        store.finish_attempt(  # type: ignore[attr-defined]
            attempt,
            outcome,
            at=clock(),
            detail=detail,
            mark_used=outcome in (Outcome.POSTED, Outcome.UNCERTAIN, Outcome.DUPLICATE),
            error_kind=kind,
            lookup_key=result.lookup_key if result is not None and outcome == Outcome.UNCERTAIN else None,
            **({"post_id": result.post_id, "url": result.url} if posted else {}),
        )

    return record


def send_attempt(
    store: HistoryStore,
    poster: Poster,
    attempt: int,
    text: str,
    *,
    fit: object,
    clock: Callable[[], datetime],
    images: Sequence[PreparedImage] = (),
    registry: Registry,
    language: Optional[str] = None,
    spoiler: Optional[str] = None,
) -> Sent:
    """A scheduled post's attempt through the one send step (`send.send`). `images` are the
    pictures already prepared for this network (`images.prepared_pictures`, before the attempt was
    recorded); the poster uploads them before the post: a failed upload is a PostError, so no post
    and nothing half-done. `language` and `spoiler` go to the poster only when set (a poster may
    not know them)."""
    extra: dict = {"images": list(images)} if images else {}
    extra.update({"language": language} if language else {})
    extra.update({"spoiler": spoiler} if spoiler else {})
    return send(
        lambda: poster.post(text, **extra),
        network=poster.name,
        registry=registry,
        record=recorder(store, attempt, clock),
        fit=fit,
    )

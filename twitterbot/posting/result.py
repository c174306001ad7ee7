"""What a scheduled run decided and did (`RunResult`), in the words its log line, `--json` and
`history` use: one line per decision, for cron mail and the journal::

    result = run_once(config, posters=..., rng=random.Random())
    log_result(result)             # "posted line 3 'Hello' https://... (rolled 0 of 1-in-4)"
    print(json.dumps(result.as_dict()))
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import List, Optional, Tuple

from ..delivery.send import Sent
from ..errors import BotError, ErrorKind, ExitStatus, PostError
from ..state.outcomes import Outcome
from ..wording import preview
from .tweets import TweetLine

__all__ = [
    "MAX_DUPLICATE_TRIES",
    "RunResult",
    "dry_outcome",
    "duplicates_error",
    "first_post",
    "log_result",
    "outcome_of",
]

# The scheduled run's log: these lines are the run's.
log = logging.getLogger(__name__)

# When X says a picked line is already posted, the line leaves the round and the run tries another
# untried line, sending at most this many lines in all: each try is a request X may bill. Lines
# left untried are the next runs' to try.
MAX_DUPLICATE_TRIES = 10


@dataclass(frozen=True)
class RunResult:
    """What a run decided and did; `--json` prints it, the log line is made from it."""

    action: Outcome  # posted | uncertain | would_post | skipped | failed
    reason: str  # one sentence for the log
    one_in: Optional[int]  # None only when the run failed before reading the settings
    roll: Optional[int]  # None when --force skipped the roll
    line: Optional[TweetLine] = None
    post_id: Optional[str] = None  # the first network's post
    error: Optional[BotError] = None  # a PostError, or (--json of a failed command) any BotError
    check_url: Optional[str] = None  # uncertain: where to see whether the post was made
    networks: Tuple[Sent, ...] = ()  # the post on each network in POST_TO
    caught_up: Tuple[Sent, ...] = ()  # earlier posts this run sent to a network that had missed them
    settled: Tuple[str, ...] = ()  # uncertain posts this run looked up, and what it found
    streak: int = 0  # a skipped run that wrote no row: how many runs in a row were skipped, this one too

    @property
    def url(self) -> Optional[str]:
        first = next((sent.result for sent in self.networks if sent.result and sent.result.url), None)
        return first.url if first else None

    @property
    def exit_status(self) -> ExitStatus:
        return self.error.exit_status if self.error else ExitStatus.OK

    def as_dict(self) -> dict:
        line = self.line
        return {
            "action": self.action,
            "reason": self.reason,
            "text": line.text if line else None,
            "line": line.lineno if line else None,
            "weighted_length": line.weighted_length if line else None,
            "has_url": line.has_url if line else None,
            "post_id": self.post_id,
            "tweet_id": self.post_id,  # deprecated alias of post_id, for one release
            "url": self.url,
            "check_url": self.check_url,
            "one_in": self.one_in,
            "roll": self.roll,
            "error": self.error.kind if self.error else None,
            "exit_status": int(self.exit_status),
            "networks": [sent.as_dict() for sent in self.networks],
            "caught_up": [sent.as_dict() for sent in self.caught_up],
            "settled": list(self.settled),
        }


def log_result(result: RunResult) -> None:
    """The one human line per decision (cron mail and journald keep it)."""
    line = result.line
    if result.action == Outcome.POSTED and line:
        log.info("posted line %d %s %s (%s)", line.lineno, preview(line.text), result.url or "", result.reason)
    elif result.action == Outcome.UNCERTAIN and line:
        log.warning("uncertain: line %d %s: %s", line.lineno, preview(line.text), result.reason)
    elif result.action == Outcome.WOULD_POST and line:
        log.info("dry run: would post line %d %s; %s", line.lineno, _where(result.networks), result.reason)
    elif result.action == Outcome.SKIPPED:
        # A steady skip is said once: the runs after the first of a day's streak log at DEBUG.
        log.log(logging.DEBUG if result.streak > 1 else logging.INFO, "skipped: %s", _skipped(result))
    else:
        log.error("failed: %s", result.reason)


def _skipped(result: RunResult) -> str:
    return result.reason + (f" (skipped {result.streak} runs in a row today)" if result.streak > 1 else "")


def _where(planned: Tuple[Sent, ...]) -> str:
    """Where a dry run would post the line, each network with its count (and what it costs there)."""
    parts = []
    for sent in planned:
        fit = sent.fit
        if fit is None:
            continue
        counted = sent.network.describe(fit)
        if sent.note:  # held back: a thread longer than the cap allows, a budget
            parts.append(f"not to {sent.network.label}: {sent.note}")
        elif not fit.fits and sent.outcome == Outcome.WOULD_POST:
            parts.append(f"to {sent.network.label} as a thread ({counted})")
        elif not fit.fits:
            parts.append(f"not to {sent.network.label}: too long ({fit.reason or counted})")
        elif fit.cost:
            parts.append(f"to {sent.network.label} ({counted}; it {fit.cost})")
        else:
            parts.append(f"to {sent.network.label} ({counted})")
    return ", ".join(parts) or "(to no network)"


def outcome_of(why: str, line: TweetLine, sent: Tuple[Sent, ...]) -> Tuple[Outcome, str]:
    """The run's action and reason from what became of the post on each network. A post that no
    network got because of their budgets, or because its thread needs more posts than
    MAX_POSTS_PER_DAY leaves (a note says which), is a skip: the bot did what it was told."""
    reached = [each for each in sent if each.reached]
    if (
        not reached
        and any(each.note for each in sent)
        and all(each.outcome in (Outcome.OVER_BUDGET, Outcome.TOO_LONG) for each in sent)
    ):
        return Outcome.SKIPPED, f"{why}, but " + "; ".join(each.note or "" for each in sent if each.note)
    if len(sent) == 1 and sent[0].error is not None:
        return (Outcome.UNCERTAIN if sent[0].reached else Outcome.FAILED), str(sent[0].error)
    action = (
        Outcome.POSTED
        if any(each.outcome == Outcome.POSTED for each in sent)
        else Outcome.UNCERTAIN
        if reached
        else Outcome.FAILED
    )
    if len(sent) == 1:
        return action, why
    parts = []
    for each in sent:
        if each.outcome == Outcome.OVER_BUDGET:
            parts.append(f"{each.network.name}: {each.note}")
        elif each.outcome == Outcome.TOO_LONG and each.note:
            parts.append(f"{each.network.name}: not sent, {each.note}")
        elif each.outcome == Outcome.TOO_LONG and each.fit:
            parts.append(
                f"{each.network.name}: not sent, too long ({each.fit.length} of {each.fit.limit} {each.fit.unit})"
            )
        elif each.outcome == Outcome.TEMPORARY and reached:
            parts.append(f"{each.network.name}: {each.error} (a later run sends it there)")
        elif each.error is not None:
            parts.append(f"{each.network.name}: {each.error}")
        else:
            parts.append(f"{each.network.name}: {each.outcome}")
    return action, f"{why}; " + "; ".join(parts)


def first_post(sent: Tuple[Sent, ...]) -> dict:
    """The run's error (the first network's problem, if any) and its first post's id and check link."""
    error = next((each.error for each in sent if each.error is not None and each.outcome != Outcome.DUPLICATE), None)
    posted = next((each.result for each in sent if each.result is not None), None)
    return {
        "error": error,
        "post_id": posted.post_id if posted and posted.confirmed else None,
        "check_url": posted.check_url if posted and not posted.confirmed else None,
    }


def duplicates_error(tried: List[TweetLine], untried: int) -> PostError:
    numbers = ", ".join(str(line.lineno) for line in tried)
    lines = f"line {numbers}" if len(tried) == 1 else f"lines {numbers}"
    if untried:
        message = (
            f"X already has the {len(tried)} lines this run sent ({lines}, now marked used); a run stops after "
            f"{MAX_DUPLICATE_TRIES} such tries, as each is a request X may bill. {untried} untried lines are left "
            "for the next runs: remove lines that are already on X from the tweets file"
        )
    else:
        message = (
            f"X already has every line left in this round ({lines} tried by this run, now marked used): "
            "add new lines to the tweets file"
        )
    return PostError(message, kind=ErrorKind.DUPLICATE, exit_status=ExitStatus.DATA_ERROR)


def dry_outcome(
    why: str, new_round: bool, planned: Tuple[Sent, ...], threads: str = ""
) -> Tuple[Outcome, str, Optional[BotError]]:
    """A dry run's action, reason and error: a picture that cannot be prepared is the data error a
    real run would meet; `threads` says where the line would go as a thread."""
    round_note = "; every line has been posted, so this starts a new round" if new_round else ""
    why = f"{why}; dry run, nothing sent{round_note}{threads}"
    error = next((sent.error for sent in planned if sent.error is not None), None)
    if error is None:
        return Outcome.WOULD_POST, why, None
    action = Outcome.WOULD_POST if any(sent.outcome == Outcome.WOULD_POST for sent in planned) else Outcome.FAILED
    return action, f"{why}; {error}", error

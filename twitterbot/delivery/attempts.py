"""`Attempts`: how one sender's attempts are recorded, before each send and after it. Each
feature's kind lives beside its sender (a scheduled line's in posting/attempts.py, a job's in
progress/attempts.py, a reply's in replies/sending.py); a thread's part (`PartAttempts`) is the
kernel's own, so a thread's parts go through the one send loop as any post does.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Callable, Optional

from ..errors import ErrorKind
from ..networks import Fit, Network, Poster, PostOptions, PostResult
from ..state.outcomes import AttemptStart, Ending, Outcome
from .send import Record

if TYPE_CHECKING:
    from ..state.store import HistoryStore
    from .post import Post

__all__ = ["REACHED", "Attempts", "PartAttempts", "ending_of", "line_ending"]


class Attempts:
    """How one sender's attempts are recorded, before each send and after it, and what a post
    answers: a scheduled line's (`LineAttempts`) leave the round; a progress job's (`JobAttempts`)
    move its thread."""

    __slots__ = ()
    source: str = "scheduled"

    # Whether a post too long for a network is recorded as not sent there (a catch-up's: so that
    # later runs do not offer it again), or simply not sent (a line: the round passes it by).
    records_too_long: bool = False
    # Whether the stored post keeps its drawn or fetched pictures' bytes: a scheduled post's do (a
    # catch-up or a thread's part 1 sends them again); a job's and a reply's are never sent again.
    keeps_pictures: bool = True

    def begin(self, store: HistoryStore, post: Post, start: AttemptStart) -> int:
        """Record the pending attempt of `post` as `start` says (its network, when, the text as
        sent and its price there); returns the attempt."""
        raise NotImplementedError

    def ending(self, store: HistoryStore, attempt: int, clock: Callable[[], datetime]) -> Record:
        """How the attempt's outcome is written down."""
        raise NotImplementedError

    def post(
        self, store: HistoryStore, network: Network, poster: Poster, text: str, options: PostOptions
    ) -> PostResult:
        """The network's request for one post (`options`: its pictures, language, warning and the
        post it answers, as the poster takes them)."""
        return poster.post(text, options)

    def group(self) -> Optional[int]:
        """The group the post's first attempt joins (a catch-up joins its post's); None: a new one."""
        return None

    def price(self, network: Network, fit: Fit) -> Optional[float]:
        """What the post costs on `network`, measured as `fit` (a reply may cost otherwise)."""
        return network.price(fit)


class PartAttempts(Attempts):
    """A part of a thread, an attempt like any other: begun as its thread's part `part` (its text
    the part's, as cut when the thread was recorded), or, for part 1 sent by the run that recorded
    the thread, the attempt recorded with it (`recorded`); its outcome written as a line's."""

    __slots__ = ("part", "recorded", "source", "thread_id")

    def __init__(self, thread_id: int, part: int, source: str, recorded: Optional[int] = None) -> None:
        self.thread_id, self.part, self.source, self.recorded = thread_id, part, source, recorded

    def begin(self, store: HistoryStore, post: Post, start: AttemptStart) -> int:
        if self.recorded is not None:
            return self.recorded
        return store.begin_part(self.thread_id, self.part, start)

    def ending(self, store: HistoryStore, attempt: int, clock: Callable[[], datetime]) -> Record:
        return line_ending(store, attempt, clock=clock)


def line_ending(store: HistoryStore, attempt: int, *, clock: Callable[[], datetime]) -> Record:
    """How a scheduled post's outcome is written: a post that reached, or may have reached, the
    network leaves the round (never sent again), and so does one the network already has. It is
    written with the run's next write (the next attempt, or the run's end), as one transaction."""

    def record(
        outcome: Outcome, result: Optional[PostResult], detail: Optional[str], kind: Optional[ErrorKind]
    ) -> None:
        ending = ending_of(outcome, result, detail, kind, clock(), mark_used=outcome in REACHED)
        store.finish_attempt(attempt, ending, with_next_write=True)

    return record


# The outcomes after which a post is, or may be, on the network (or the network has it already).
REACHED = (Outcome.POSTED, Outcome.UNCERTAIN, Outcome.DUPLICATE)


def ending_of(
    outcome: Outcome,
    result: Optional[PostResult],
    detail: Optional[str],
    kind: Optional[ErrorKind],
    at: datetime,
    *,
    mark_used: bool = False,
) -> Ending:
    """How an attempt ended, as the history keeps it: a posted one's id and link, an uncertain
    one's look-up key, what went wrong."""
    posted = outcome == Outcome.POSTED and result is not None
    uncertain = outcome == Outcome.UNCERTAIN and result is not None
    return Ending(
        outcome,
        at,
        post_id=result.post_id if posted else None,
        url=result.url if posted else None,
        detail=detail,
        error_kind=kind,
        lookup_key=result.lookup_key if uncertain else None,
        mark_used=mark_used,
    )

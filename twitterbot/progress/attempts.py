"""A progress job's attempts (`JobAttempts`): the jobs' kind of the delivery kernel's `Attempts`."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Callable, Optional

from ..delivery.attempts import Attempts
from ..errors import ErrorKind, PostError
from ..networks import Network, Poster, PostOptions, PostResult
from ..state.outcomes import Ending, Outcome

if TYPE_CHECKING:
    from ..delivery.post import Post
    from ..delivery.send import Record
    from ..state.outcomes import AttemptStart
    from ..state.store import HistoryStore

__all__ = ["JobAttempts"]

log = logging.getLogger(__name__)


class JobAttempts(Attempts):
    """A progress job's attempts: one that reached, or may have reached, a network moves the job
    on with its `news`; a failed one is only a failed attempt (a job does not catch up). A `final`
    post is the job's result, never sent twice."""

    __slots__ = ("final", "job_id", "name", "news", "source")
    keeps_pictures = False

    def __init__(self, job_id: int, name: str, news: str, final: bool = False) -> None:
        self.job_id, self.name, self.news, self.final = job_id, name, news, final
        self.source = "final" if final else "progress"

    def begin(self, store: HistoryStore, post: Post, start: AttemptStart) -> int:
        text = start.sent_text or post.text
        return store.begin_job_attempt(
            self.job_id,
            text,
            at=start.at,
            final=self.final,
            network=start.network,
            group=start.group,
            cost=start.cost,
            post=start.post,
        )

    def ending(self, store: HistoryStore, attempt: int, clock: Callable[[], datetime]) -> Record:
        def record(
            outcome: Outcome, result: Optional[PostResult], detail: Optional[str], kind: Optional[ErrorKind]
        ) -> None:
            if result is None:  # a passing failure is a failure: the job's news moves on without it
                failed = Outcome.DUPLICATE if outcome == Outcome.DUPLICATE else Outcome.FAILED
                store.finish_attempt(attempt, Ending(failed, clock(), detail=detail, error_kind=kind))
                return
            ending = Ending(outcome, clock(), result.post_id, result.url, result.uncertain, kind)
            store.record_job_post(self.job_id, attempt, ending, self.news)

        return record

    def post(
        self, store: HistoryStore, network: Network, poster: Poster, text: str, options: PostOptions
    ) -> PostResult:
        """A reply in the job's thread on that network; where the network refuses to answer a post
        that is gone (deleted), the post starts a new thread there."""
        try:
            return poster.post(text, options)
        except PostError as exc:
            reply_to = options.reply_to
            if reply_to is None or exc.kind != ErrorKind.REJECTED:
                raise
            log.warning(
                "%s: %s refused the reply to %s (%s); posting it on its own", self.name, network.label, reply_to, exc
            )
            result = poster.post(text, replace(options, reply_to=None))
            store.reset_thread(self.job_id, network.name)  # this post becomes the new thread's first
            return result

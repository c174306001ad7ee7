"""A scheduled line's attempts (`LineAttempts`): the scheduled run's and its catch-up's kind of
the delivery kernel's `Attempts`."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Callable, Optional

from ..delivery.attempts import Attempts, line_ending

if TYPE_CHECKING:
    from ..delivery.post import Post
    from ..delivery.send import Record
    from ..state.outcomes import AttemptStart
    from ..state.store import HistoryStore

__all__ = ["LineAttempts"]


class LineAttempts(Attempts):
    """A scheduled run's attempts (`source` scheduled, or catch_up for a post a network missed,
    joining its first send's `post_group`): a line that reached, or may have reached, the network
    leaves the round, and so does one the network already has."""

    __slots__ = ("post_group", "records_too_long", "source")

    def __init__(self, source: str = "scheduled", post_group: Optional[int] = None) -> None:
        self.source, self.post_group = source, post_group
        self.records_too_long = source == "catch_up"

    def begin(self, store: HistoryStore, post: Post, start: AttemptStart) -> int:
        return store.begin_attempt_from(post.key, start)

    def ending(self, store: HistoryStore, attempt: int, clock: Callable[[], datetime]) -> Record:
        return line_ending(store, attempt, clock=clock)

    def group(self) -> Optional[int]:
        return self.post_group

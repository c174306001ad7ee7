"""The one retry policy every network uses, and the one rate-limit message.

A poster tries a post at most ``retries + 1`` times, waiting 2 s, 4 s, 8 s... between tries, and
only after a failure its module says cannot make a second post (`Poster.may_retry`). A rate limit
is never waited out: the next scheduled run tries again. Each network words why its retry is safe
(`how`: "with the same Idempotency-Key")::

    policy = Backoff(retries=2)
    for attempt in policy.attempts():
        if attempt:
            policy.wait(attempt, error)   # logs "X had a server error (503); trying again in 2 s (retry 1 of 2)"
        ...
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Iterator, Optional

from ..errors import ErrorKind, ExitStatus, PostError

__all__ = ["Backoff", "rate_limited"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Backoff:
    """How often and how long to wait before sending a request again: `retries` times, `backoff`
    seconds doubled on each retry. `sleep` is injected so tests never wait."""

    retries: int
    backoff: float = 2.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    def attempts(self) -> Iterator[int]:
        """0 for the first try, then 1..retries."""
        return iter(range(self.retries + 1))

    def delay(self, retry: int) -> float:
        """Seconds to wait before retry number `retry` (from 1)."""
        return self.backoff * 2 ** (retry - 1)

    def wait(self, retry: int, error: PostError, how: str = "") -> None:
        """Say what failed and what comes next, then wait before retry number `retry`."""
        delay = self.delay(retry)
        log.warning(
            "%s; trying again in %.0f s%s (retry %d of %d)",
            error.summary,
            delay,
            f" {how}" if how else "",
            retry,
            self.retries,
        )
        self.sleep(delay)


def rate_limited(where: str, said: str, retry_at: Optional[datetime] = None) -> PostError:
    """The network refused for too many requests (429): nothing was posted; `retry_at` is when it
    says posting works again, if it says."""
    when = "after " + retry_at.astimezone().strftime("%Y-%m-%d %H:%M %Z") if retry_at else "later"
    return PostError(
        f"{where} says too many requests ({said}): nothing was posted; posting works again {when}",
        kind=ErrorKind.RATE_LIMITED,
        exit_status=ExitStatus.TEMPORARY_FAILURE,
        retry_at=retry_at,
    )

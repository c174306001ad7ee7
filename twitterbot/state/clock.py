"""The bot's clock: aware UTC, the time every record in the history is written in.

It lives in the foundation so that the daemon, a progress session and `check` can tell the time
without importing a scheduled run. Code that needs the time takes a `clock` argument defaulting to
`utc_now`, so a test (or a faked clock) can hand it another.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Callable

__all__ = ["Clock", "utc_now"]

# What a part that needs the time is handed: a function returning an aware UTC datetime.
Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """Now, in UTC, aware (the history compares and stores only aware times)."""
    return datetime.now(timezone.utc)

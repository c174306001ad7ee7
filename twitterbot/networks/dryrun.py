"""The dry-run network: prints each post it would send instead of sending it.

Turning posting off swaps in this poster rather than scattering `if dry_run` checks: everything
after a post (threads, history of a job) behaves as in a real run.
"""

from __future__ import annotations

import itertools
import sys
from typing import Optional, TextIO

from ..errors import PostError
from . import PostResult

__all__ = ["DryRunPoster"]


class DryRunPoster:
    """Posts nothing: writes each post it would send to `stream` and makes up an id, so threads
    and everything after a post behave as in a real run."""

    name = "dry-run"
    retry_safety = "not needed: nothing is sent"

    def __init__(self, stream: Optional[TextIO] = None) -> None:
        self._stream = stream
        self._ids = itertools.count(1)

    def post(self, text: str, reply_to: Optional[str] = None) -> PostResult:
        stream = self._stream or sys.stderr
        to = f" (reply to {reply_to})" if reply_to else ""
        stream.write(f"dry run, not posted{to}:\n" + "".join(f"    {line}\n" for line in text.splitlines()))
        stream.flush()
        return PostResult(text=text, post_id=f"dry-run-{next(self._ids)}")

    def may_retry(self, error: PostError) -> bool:
        return False

"""One run at a time: an exclusive, non-blocking `flock` on a file in the state folder.

The kernel drops the lock when the process dies, so a crashed run never leaves a stale lock.
"""

from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import LockHeld
from .history import state_error

__all__ = ["run_lock"]


_RUN_ADVICE = "this run did nothing. If runs overlap often, space out the schedule"


@contextmanager
def run_lock(path: Path, *, busy: str = "another run is in progress", advice: str = _RUN_ADVICE) -> Iterator[None]:
    """Hold the lock at `path` for the `with` block, or raise `LockHeld` at once if another process
    has it; `busy` says who that is, `advice` what to do."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:  # a state folder or lock file this user cannot write, a read-only filesystem
        raise state_error(path, exc.errno, state_dir=path.parent, doing="open the lock file") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            who = f" (pid {holder})" if holder.isdigit() else ""
            raise LockHeld(f"{busy}{who} and holds {path}; {advice}") from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError as exc:  # a full disk
            raise state_error(path, exc.errno, state_dir=path.parent, doing="write the lock file") from None
        yield
    finally:
        os.close(fd)

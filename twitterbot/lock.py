"""One run at a time: an exclusive, non-blocking `flock` on a file in the state folder.

The kernel drops the lock when the process dies, so a crashed run never leaves a stale lock.
"""

from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Iterator

from .errors import LockHeld
from .state.folder import state_error

__all__ = ["run_lock"]


_RUN_ADVICE = "this run did nothing. If runs overlap often, space out the schedule"


@contextmanager
def run_lock(
    path: Path,
    *,
    busy: str = "another run is in progress",
    advice: str = _RUN_ADVICE,
    remove: bool = False,
) -> Iterator[None]:
    """Hold the lock at `path` for the `with` block, or raise `LockHeld` at once if another process
    has it; `busy` says who that is, `advice` what to do.

    With `remove`, the file is deleted when the lock is released (job locks, one per job name,
    would otherwise pile up). That is safe because the file is only ever unlinked by the process
    holding its lock, and a lock only counts if it is on the file `path` names at the moment it
    is taken: a process that opened the file just before its holder unlinked it, and then got the
    lock on that orphan, sees that `path` is now another file (or none) and starts again.
    Never use `remove` on a lock shared with other programs (cron's ``flock`` on bot.lock does
    not make that check)."""
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:  # a state folder or lock file this user cannot write, a read-only filesystem
            raise state_error(path, exc.errno, state_dir=path.parent, doing="open the lock file") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            os.close(fd)
            who = f" (pid {holder})" if holder.isdigit() else ""
            raise LockHeld(f"{busy}{who} and holds {path}; {advice}") from None
        except BaseException:
            os.close(fd)
            raise
        if not remove or _same_file(fd, path):
            break
        os.close(fd)  # a lock on a file its last holder has just removed: take the current one
    try:
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError as exc:  # a full disk
            raise state_error(path, exc.errno, state_dir=path.parent, doing="write the lock file") from None
        yield
    finally:
        if remove:
            with suppress(FileNotFoundError):
                os.unlink(path)  # still holding the lock: see above
        os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)

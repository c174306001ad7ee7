"""One run at a time: an exclusive `flock` on a file in the state folder.

The kernel drops the lock when the process dies, so a crashed run never leaves a stale lock. A
run that finds the lock held may wait for it a bounded time (`RUN_LOCK_WAIT` for bot.lock): a
scheduled run that starts while a round of replies (every few minutes) holds it posts a few
seconds late instead of losing its slot; past the wait it gives up with `LockHeld` (75).
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Callable, Iterator

from .errors import LockHeld
from .state.folder import state_error

__all__ = ["RUN_LOCK_WAIT", "run_lock"]

log = logging.getLogger(__name__)

# How long a run that takes bot.lock (a scheduled run, replies, check) waits for another to let it
# go: a round of replies takes a few seconds, a scheduled post a few more; a run still holding it
# after a minute is stuck or slow, and this one gives up (75) rather than pile up behind it.
RUN_LOCK_WAIT = 60.0
# How often a waiting run tries the lock again (a poll: no signal, no thread).
_POLL = 0.25

_RUN_ADVICE = "this run did nothing. If runs overlap often, space out the schedule"


@contextmanager
def run_lock(
    path: Path,
    *,
    busy: str = "another run is in progress",
    advice: str = _RUN_ADVICE,
    remove: bool = False,
    wait: float = 0.0,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[None]:
    """Hold the lock at `path` for the `with` block. If another process has it, try again every
    quarter second for up to `wait` seconds (0: not at all), then raise `LockHeld`; `busy` says
    who holds it, `advice` what to do. `sleep` and `clock` are a test's to replace.

    With `remove`, the file is deleted when the lock is released (job locks, one per job name,
    would otherwise pile up). That is safe because the file is only ever unlinked by the process
    holding its lock, and a lock only counts if it is on the file `path` names at the moment it
    is taken: a process that opened the file just before its holder unlinked it, and then got the
    lock on that orphan, sees that `path` is now another file (or none) and starts again.
    Never use `remove` on a lock shared with other programs (cron's ``flock`` on bot.lock does
    not make that check)."""
    deadline = clock() + wait
    said = False
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
            left = deadline - clock()
            if left <= 0:
                waited = f"; waited {wait:g} s for it" if wait > 0 else ""
                raise LockHeld(f"{busy}{who} and holds {path}{waited}; {advice}") from None
            if not said:
                log.info("%s%s and holds %s: waiting up to %g s for it", busy, who, path.name, wait)
                said = True
            sleep(min(_POLL, left))
            continue
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

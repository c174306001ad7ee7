"""The state folder and the disk it lives on: made private to the user, probed before a real run
needs it, and every failure to write it turned into one sentence that names the fix::

    ensure_state_dir(Path("/home/pi/twitterbot/state"))   # or HistoryError / StateError saying why
"""

from __future__ import annotations

import errno
import os
import pwd
import stat
import tempfile
from pathlib import Path
from typing import Callable, Optional

from ..errors import HistoryError, StateError

__all__ = ["MIN_FREE_BYTES", "ensure_state_dir", "free_bytes", "probe_state_dir", "state_error"]

# A real run posts only with at least this much free space beside the history: recording the
# outcome after a network took the post must not fail for want of a few pages and a journal.
MIN_FREE_BYTES = 1024 * 1024


def ensure_state_dir(path: Path) -> None:
    """Create the state folder (private to the user) or explain why it cannot be used."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except (NotADirectoryError, FileExistsError):
        raise HistoryError(
            f"BOT_STATE_DIR {path}: a part of that path is a file, not a folder: point it at a folder"
        ) from None
    except OSError as exc:
        raise state_error(
            _nearest_existing(path), exc.errno, state_dir=path, doing="create the state folder in"
        ) from None
    if not path.is_dir():
        raise HistoryError(f"BOT_STATE_DIR {path} is not a folder: point it at a folder")


def probe_state_dir(path: Path) -> None:
    """Create and remove a file in the state folder, as a real run's lock and journal do: `check`
    finds a folder it cannot write (owner, mode, read-only filesystem) before a real run does."""
    try:
        with tempfile.TemporaryFile(dir=path, prefix=".check-"):
            pass
    except OSError as exc:
        raise state_error(path, exc.errno, state_dir=path, doing="create files in") from None


def state_error(path: Path, code: Optional[int], *, state_dir: Path, doing: str = "write") -> StateError:
    """One sentence for a state file or folder that cannot be written: what, why, and the command that fixes it."""
    user = _user_name(os.geteuid())
    if code == errno.EROFS:
        return StateError(
            f"cannot {doing} {path}: it is on a read-only filesystem (an SD card turns read-only after"
            " errors: see `dmesg`); remount it read-write, or set BOT_STATE_DIR to a writable folder"
        )
    if code in (errno.ENOSPC, errno.EDQUOT):
        return StateError(
            f"cannot {doing} {path}: the disk holding {state_dir} is full ({_free_text(state_dir)}); free"
            f" some space (`df -h {state_dir}`) and run again: the history is intact, keep it"
        )
    if code in (errno.EACCES, errno.EPERM):
        target = path if path.exists() else _nearest_existing(path)
        try:
            info = target.stat()
            owner = _user_name(info.st_uid)
            mode = stat.filemode(info.st_mode)
        except OSError:
            owner, mode = "?", "?"
        if owner == user:
            fix = f"chmod -R u+rwX {state_dir}"
        elif state_dir.exists():
            fix = f"sudo chown -R {user}: {state_dir}"
        else:
            fix = f"sudo mkdir -p {state_dir} && sudo chown -R {user}: {state_dir}"
        return StateError(
            f"cannot {doing} {path}: {target} belongs to {owner} ({mode}) and this bot runs as {user},"
            f" who may not write it: run `{fix}` (a command run with sudo may have made it), or set"
            " BOT_STATE_DIR to a folder you can write"
        )
    reason = os.strerror(code) if code else "unknown reason"
    return StateError(
        f"cannot {doing} {path} ({reason}): check that {state_dir} exists and this user ({user}) can write it"
    )


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return path


def _free_text(folder: Path, statvfs: Callable[[str], os.statvfs_result] = os.statvfs) -> str:
    try:
        free = free_bytes(folder, statvfs)
    except OSError:
        return "free space unknown"
    return f"{free // 1024} KiB free"


def free_bytes(folder: Path, statvfs: Callable[[str], os.statvfs_result] = os.statvfs) -> int:
    """Bytes an unprivileged user may still write on the disk holding `folder`."""
    info = statvfs(str(folder))
    return info.f_bavail * info.f_frsize

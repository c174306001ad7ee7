"""The state folder and the disk it lives on: the name of every file the bot keeps there (one
`StateFolder`, which `Config.state` makes from BOT_STATE_DIR), the folder made private to the
user, probed before a real run needs it, and every failure to write it turned into one sentence
that names the fix::

    config.state.history                       # PosixPath('/home/pi/twitterbot/state/history.sqlite3')
    ensure_state_dir(config.state.path)        # or HistoryError / StateError saying why
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
from .warned import WARNED_FILE

__all__ = ["MIN_FREE_BYTES", "StateFolder", "ensure_state_dir", "free_bytes", "probe_state_dir", "state_error"]


class StateFolder:
    """The state folder (BOT_STATE_DIR) and the name of each file the bot keeps in it, so that a
    file is named in one place and every part asks here for it. Naming a file creates nothing."""

    __slots__ = ("path",)

    def __init__(self, path: Path) -> None:
        self.path = path

    def __repr__(self) -> str:
        return f"<StateFolder {self.path}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StateFolder) and other.path == self.path

    def __hash__(self) -> int:
        return hash(self.path)

    @property
    def history(self) -> Path:
        """The history database (`twitterbot.state.store.HistoryStore`)."""
        return self.path / "history.sqlite3"

    @property
    def lock(self) -> Path:
        """The lock a scheduled run, a round of replies and `check` hold (`twitterbot.lock`)."""
        return self.path / "bot.lock"

    @property
    def warned(self) -> Path:
        """What the last run warned about, so a warning is said once (`twitterbot.state.warned`)."""
        return self.path / WARNED_FILE

    @property
    def pictures(self) -> Path:
        """The folder of the pictures the jobs posted, kept for the status page (`twitterbot.pictures.kept`)."""
        return self.path / "pictures"

    @property
    def cluster(self) -> Path:
        """The folder of the Dask cluster's TLS certificates (`twitterbot.jobs.cluster`)."""
        return self.path / "cluster"

    def session(self, network: str) -> Path:
        """A network's saved login, reused between runs ("bluesky": bluesky-session.json)."""
        return self.path / f"{network}-session.json"

    def job_lock(self, slug: str) -> Path:
        """The lock one long job holds while it runs, by the job's slug (`progress.reporter.slug`)."""
        return self.path / f"job-{slug}.lock"

    def file(self, name: str) -> Path:
        """A job's own file or folder, named by the job: its checkpoint, its compiled kernel's
        cache ("pegs-cache"), its downloaded texts."""
        return self.path / name


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

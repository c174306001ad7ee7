"""Files written whole or not at all, and files read only if they are files: the one way the bot
replaces a file a user or a job relies on, and the one way it opens a file a user names (a FIFO
would block a run for ever, a device never ends: neither is read)."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import BinaryIO, Callable, Optional, Union

__all__ = ["NotAFile", "not_a_file", "open_regular", "read_regular", "read_setting_file", "write_atomically"]


class NotAFile(OSError):
    """A path that names something other than a regular file; `kind` says what ("a FIFO (a named
    pipe)", "a folder", "a device")."""

    def __init__(self, path: Path, kind: str) -> None:
        super().__init__(f"{path} is {kind}")
        self.kind = kind


def not_a_file(mode: int) -> Optional[str]:
    """What a file of `mode` (`os.stat`'s st_mode) is when it is not a regular file, else None."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (a named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular(path: Path) -> BinaryIO:
    """`path` opened for reading if it is a regular file, else `NotAFile`. The open never blocks
    (a FIFO opened without a writer would) and the check is made on what was opened, so a FIFO that
    takes the file's place in between is refused too. Other failures are the usual OSError."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    kind = not_a_file(os.fstat(descriptor).st_mode)
    if kind:
        os.close(descriptor)
        raise NotAFile(path, kind)
    os.set_blocking(descriptor, True)
    return os.fdopen(descriptor, "rb")


def read_regular(path: Path) -> bytes:
    """The bytes of `path`, if it is a regular file (`open_regular`)."""
    with open_regular(path) as handle:
        return handle.read()


def read_setting_file(
    path: Path, *, what: str, setting: str, otherwise: str, error: Callable[[str], Exception]
) -> bytes:
    """The bytes of a file a setting names (`what` it is, "tweets file"; `setting`, TWEETS_FILE),
    or `error` with a sentence that says what is wrong and what to do: create it or `otherwise`
    ("set TWEETS_FILE"), point the setting at a file, fix its permissions."""
    try:
        return read_regular(path)
    except FileNotFoundError:
        raise error(f"{what} {path} does not exist: create it, or {otherwise}") from None
    except NotAFile as exc:
        raise error(f"{what} {path} is {exc.kind}, not a file: set {setting} to the file") from None
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror}: check its permissions") from None


def write_atomically(path: Path, text: Union[str, bytes], mode: int = 0o644) -> None:
    """Write via a temporary file and a rename, so a crash never leaves half a file (a unit, a
    checkpoint, a solution, a saved session). The temporary file has `mode` from its creation, so
    a private file (0600) is never readable by others, not even for a moment. `text` may be bytes
    (a picture), written as they are."""
    temporary = path.with_name(f".{path.name}.tmp")
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()  # a crash's leftover, maybe with another mode
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(temporary, mode)
    os.replace(temporary, path)

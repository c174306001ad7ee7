"""Files written whole or not at all: the one way the bot replaces a file a user or a job relies on."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Union

__all__ = ["write_atomically"]


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

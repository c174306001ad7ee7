"""Files written whole or not at all: the one way the bot replaces a file a user or a job relies on."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["write_atomically"]


def write_atomically(path: Path, text: str, mode: int = 0o644) -> None:
    """Write via a temporary file and a rename, so a crash never leaves half a file (a unit, a
    checkpoint, a solution)."""
    temporary = path.with_name(f".{path.name}.tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(temporary, mode)
    os.replace(temporary, path)

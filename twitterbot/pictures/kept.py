"""Each job's latest posted picture, kept in the state folder for the status page.

The reporter keeps the last picture of every post it sends (`keep`); the status page shows it
(`kept_alt`, `kept_png`). One file name, one place: `pictures/job-<id>.png` and its alt text in
`pictures/job-<id>.txt`, both replaced whole (a crash never leaves half a picture)::

    keep(config.state.pictures, job_id, picture.png, picture.alt)
    kept_alt(config.state.pictures, job_id)   # the alt text, or None: nothing kept

No Pillow here: the bytes were drawn already, and the page only reads them back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..files import write_atomically

__all__ = ["keep", "kept_alt", "kept_png"]


def keep(folder: Path, job_id: int, png: bytes, alt: str) -> None:
    """Keep `png` and its `alt` text as job `job_id`'s latest picture (replacing the one before).
    Raises OSError when the folder cannot be written; the reporter logs it and posts on."""
    folder.mkdir(parents=True, exist_ok=True)
    write_atomically(_png(folder, job_id), png)
    write_atomically(_alt(folder, job_id), alt)


def kept_alt(folder: Path, job_id: int) -> Optional[str]:
    """The kept picture's alt text ("" when its text file is missing), or None when no picture is kept."""
    if not _png(folder, job_id).is_file():
        return None
    try:
        return _alt(folder, job_id).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def kept_png(folder: Path, job_id: int) -> Optional[bytes]:
    """The kept picture's PNG bytes, or None when none is kept (or it cannot be read)."""
    try:
        return _png(folder, job_id).read_bytes()
    except OSError:
        return None


def _png(folder: Path, job_id: int) -> Path:
    return folder / f"job-{int(job_id)}.png"


def _alt(folder: Path, job_id: int) -> Path:
    return folder / f"job-{int(job_id)}.txt"

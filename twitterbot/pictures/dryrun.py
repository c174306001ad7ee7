"""The dry run's pictures: each one fitted to each network and written to a folder to open.

folder = dry_run_folder()
for line in write_prepared(attachments, [network.image_limits() for network in config[POST_TO]], folder):
    print(line)   # 'picture 1 for Bluesky: /tmp/twitterbot-dry-run-x1y2/1-garden.bluesky.jpg (JPEG, ...)'
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import List, Sequence

from .limits import VIDEO_ALONE, ImageLimits
from .prepare import Attachment, PictureError

__all__ = ["dry_run_folder", "write_prepared"]


def dry_run_folder() -> Path:
    """A new folder for one dry run's pictures (the system's temporary folder: nothing to clean
    up in the bot's own folders)."""
    return Path(tempfile.mkdtemp(prefix="twitterbot-dry-run-"))


def write_prepared(
    attachments: Sequence[Attachment], limits: Sequence[ImageLimits], folder: Path, *, start: int = 1
) -> List[str]:
    """Write each picture as each network (`limits`, one per network) would get it; return one
    line per file (or per picture a network cannot take) saying where it is, its format, bytes,
    pixels and alt text (a video's duration and encoding too)."""
    said: List[str] = []
    videos = [attachment for attachment in attachments if attachment.is_video]
    if videos and len(attachments) > 1:
        said.append(f"{videos[0].name} is a video beside other pictures; {VIDEO_ALONE}: this post is not sent")
    for number, attachment in enumerate(attachments, start=start):
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", Path(attachment.name).stem).strip("-") or "picture"
        for chosen in limits:
            network = chosen.network
            try:
                prepared = attachment.prepare(chosen)
            except PictureError as exc:
                said.append(f"{_what(attachment)} {number} for {chosen.where}: not sent: {exc}")
                continue
            path = folder / f"{number}-{stem}.{network}.{prepared.extension}"
            path.write_bytes(prepared.data)
            said.append(
                f"{_what(attachment)} {number} for {chosen.where}: {path} ({prepared.describe()}); alt text: {prepared.alt!r}"
            )
    return said


def _what(attachment: Attachment) -> str:
    return "video" if attachment.is_video else "picture"

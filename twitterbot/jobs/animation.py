"""The jobs' animations encoded (`pegs solve --animate`, `monkey --animate`): frames drawn with
Pillow, piped to Debian's ffmpeg as PNGs and made an H.264 MP4 (yuv420p, no metadata) that every
network takes (docs/video.md)::

    video = encode_mp4(program, frames, per_second, job="pegs")

ffmpeg runs in a session of its own within a memory and a time limit (its group killed when the
time is up); nothing is written but the MP4, in a temporary folder of its own, read back and
removed. Where ffmpeg is missing (`ffmpeg_program` is None) a job posts its still picture, and
says so in the log.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Optional, Sequence

__all__ = ["FFMPEG_MISSING", "encode_mp4", "ffmpeg_program"]

FFMPEG_MISSING = "--animate needs ffmpeg (sudo apt install ffmpeg): posting the still picture instead"
log = logging.getLogger(__name__)

_OUTPUT_FPS = 25
_FFMPEG_SECONDS = 120  # a 10 s clip of still frames encodes in about a second on a Pi 4
_FFMPEG_MEMORY_KIB = 1024 * 1024  # x264's own allocations need more than 640 MiB mapped


def ffmpeg_program() -> Optional[str]:
    """ffmpeg's path, or None where it is not installed."""
    return shutil.which("ffmpeg")


def encode_mp4(program: str, frames: Sequence[bytes], per_second: int, *, job: str) -> bytes:
    """`frames` (PNGs, each shown 1/`per_second` s, all of one even size) as an H.264 MP4 made by
    ffmpeg within its limits, said in `job`'s log (frames, seconds, bytes: the dry run shows it);
    ValueError (with ffmpeg's last words) where it fails or takes too long."""
    with tempfile.TemporaryDirectory(prefix=f"twitterbot-{job}-") as folder:
        out = Path(folder) / "animation.mp4"
        command = [
            "sh",
            "-c",
            'ulimit -v "$1" && shift && exec "$@"',
            "sh",
            str(_FFMPEG_MEMORY_KIB),
            program,
            "-hide_banner",
            "-loglevel",
            "error",
            "-f",
            "image2pipe",
            "-c:v",
            "png",
            "-framerate",
            str(per_second),
            "-i",
            "-",
            "-vf",
            f"fps={_OUTPUT_FPS},format=yuv420p",
            "-c:v",
            "libx264",
            "-preset",
            "veryfast",
            "-crf",
            "26",
            "-movflags",
            "+faststart",
            "-map_metadata",
            "-1",
            "-fflags",
            "+bitexact",
            "-flags:v",
            "+bitexact",
            "-y",
            str(out),
        ]
        with subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        ) as child:
            try:
                _, said = child.communicate(b"".join(frames), timeout=_FFMPEG_SECONDS)
            except subprocess.TimeoutExpired:
                raise ValueError(f"ffmpeg took over {_FFMPEG_SECONDS} s") from None
            finally:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(child.pid, signal.SIGKILL)
        if child.returncode != 0 or not out.is_file():
            words = said.decode("utf-8", "replace").strip().splitlines()
            raise ValueError(words[-1][:200] if words else f"ffmpeg exited {child.returncode}")
        video = out.read_bytes()
    log.info(
        "%s: animation of %d frames (%d distinct), %.1f s, %s bytes (H.264 MP4)",
        job,
        len(frames),
        len(set(frames)),
        len(frames) / per_second,
        f"{len(video):,}",
    )
    return video

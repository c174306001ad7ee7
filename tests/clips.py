"""Videos for the tests, made by ffmpeg on the spot (nothing is downloaded): a phone's clip with
its GPS position, camera and creation time, a WebM, a big-pixel clip, animated GIFs, and
hostile files. `need_ffmpeg()` skips a test LOUDLY without ffmpeg (and fails it instead with
TWITTERBOT_REQUIRE_FFMPEG=1, as CI sets)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

FFMPEG = shutil.which("ffmpeg")
FFPROBE = shutil.which("ffprobe")


def need_ffmpeg() -> None:
    if not (FFMPEG and FFPROBE):
        (pytest.fail if os.environ.get("TWITTERBOT_REQUIRE_FFMPEG") == "1" else pytest.skip)(
            "NO ffmpeg/ffprobe ON PATH: videos and animated GIFs as videos are NOT tested here (apt-get install ffmpeg)"
        )


def _ffmpeg(*arguments: str) -> None:
    subprocess.run([FFMPEG or "ffmpeg", "-v", "error", "-y", *arguments], check=True)


def phone_clip(path: Path, *, seconds: float = 2, size: str = "640x360", rate: int = 25) -> Path:
    """An H.264 and AAC MP4 carrying what a phone writes: a GPS position, a camera, a creation time."""
    _ffmpeg(
        "-f", "lavfi", "-i", f"testsrc2=size={size}:rate={rate}",
        "-f", "lavfi", "-i", "sine=frequency=440",
        "-t", str(seconds), "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac",
        "-metadata", "location=+48.8577+002.2950/", "-metadata", "creation_time=2024-05-01T10:00:00Z",
        "-metadata", "make=Pixel", "-metadata", "model=Pixel 8", "-metadata:s:v", "handler_name=CameraSecret",
        str(path),
    )  # fmt: skip
    return path


def webm_clip(path: Path, *, seconds: float = 1) -> Path:
    _ffmpeg("-f", "lavfi", "-i", "testsrc2=size=320x240:rate=15", "-t", str(seconds), "-c:v", "libvpx", str(path))
    return path


def animated_gif(path: Path, *, seconds: float = 2, size: str = "320x240") -> Path:
    _ffmpeg("-f", "lavfi", "-i", f"testsrc2=size={size}:rate=10", "-t", str(seconds), str(path))
    return path


def probe(data_or_path: object) -> dict:
    """What ffprobe reads of a file or bytes: the format's and the streams' tags and fields."""
    import json
    import tempfile

    if isinstance(data_or_path, bytes):
        with tempfile.NamedTemporaryFile(suffix=".mp4") as file:
            file.write(data_or_path)
            file.flush()
            return probe(Path(file.name))
    said = subprocess.run(
        [
            FFPROBE or "ffprobe",
            "-v",
            "error",
            "-print_format",
            "json",
            "-show_format",
            "-show_streams",
            str(data_or_path),
        ],
        check=True,
        capture_output=True,
    ).stdout
    return json.loads(said)

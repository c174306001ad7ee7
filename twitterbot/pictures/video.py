"""Videos and animated GIFs made ready for one network with Debian's ffprobe and ffmpeg.

A video is looked at before a frame of it is decoded: ffprobe reads its container in a child
process of its own (a memory limit, a time limit, a session killed whole), told which demuxer to
use and which protocol it may open (the file it is given, nothing else: a QuickTime reference or a
playlist cannot make it read another file). A damaged container, absurd pixels, duration or frame
rate, and a stream that announces far more pixels to decode than a Pi can afford are refused there,
within seconds. Then, for each network:

- a clip the network takes as it is (its container and H.264 video, within its bytes, seconds and
  pixels) is copied stream by stream into an MP4 without its metadata (``-map_metadata -1 -c
  copy``: no GPS position, camera or creation time; nothing re-encoded);
- a clip too large in pixels, too big in bytes or in a codec the network does not take is
  re-encoded (H.264, AAC, scaled down to the network's side, at a bit rate that fits its bytes);
- a clip longer than the network takes is refused before any upload (each network's docs
  refuse it; the user chooses what to cut, not the bot);
- an animated GIF becomes an MP4 for a network that shows no animated GIF (Bluesky)::

    clip = prepare_video(Path("clips/bees.mp4"), limits, name="clips/bees.mp4")
    clip.data, clip.mime_type, clip.width, clip.height, clip.seconds, clip.steps

`ffmpeg_missing()` says whether the programs are there (`check` says it too).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Dict, List, Optional, Tuple, Union

from ..errors import BotError, ExitStatus
from .limits import ImageLimits

__all__ = [
    "FFMPEG_MEMORY_KIB",
    "VIDEO_EXTENSIONS",
    "PreparedVideo",
    "VideoError",
    "VideoInfo",
    "ffmpeg_missing",
    "gif_as_video",
    "prepare_video",
    "probe",
    "sniff_video",
]

# What ffprobe and ffmpeg may map (ulimit -v: address space, of which ffmpeg's libraries and
# threads' stacks are most; x264 re-encoding 720p with two threads maps about 700 MiB and keeps
# under 200 MiB resident: benchmarks/video.py measures it).
FFMPEG_MEMORY_KIB = 1024 * 1024
PROBE_SECONDS = 10.0  # ffprobe reads a container's index, never its frames
MOST_BYTES = 1024 * 1024 * 1024  # no network takes a video of more; bigger is refused unread
MOST_SIDE = 8192  # an 8K frame; a header announcing more is damaged or hostile
MOST_PIXELS = 4096 * 4096  # a frame decoded for re-encoding (a phone's 4K is 8.3 megapixels)
MOST_SECONDS = 3600.0
MOST_FPS = 240.0
# Pixels a re-encoding may decode in all (frames times pixels): 10 minutes of 1080p at 30 fps.
# A few kilobytes announcing hours of 4K (a decompression bomb) is refused before it is decoded.
MOST_DECODED = 1920 * 1080 * 30 * 600
_MOST_BITS = 10_000_000  # a second of re-encoded 1080p at most: more shows no better on a phone
_PASSES = {"h264"}  # the one video codec every network takes as it is
_AUDIO_PASSES = {"aac"}
_DEMUXERS = {"video/mp4": "mov", "video/quicktime": "mov", "video/webm": "matroska", "image/gif": "gif"}
_CODEC_NAMES = {"h264": "H.264", "hevc": "HEVC", "vp8": "VP8", "vp9": "VP9", "av1": "AV1", "gif": "GIF"}
VIDEO_TYPES = frozenset({"video/mp4", "video/quicktime", "video/webm"})
VIDEO_EXTENSIONS = frozenset({".mp4", ".m4v", ".mov", ".webm"})  # a file named so is a video
Source = Union[Path, bytes]


class VideoError(BotError):
    """A video that cannot be posted as it is: damaged, hostile, too long for a network, or
    ffmpeg missing. The message names the file and says what to do (exit 65)."""

    kind = "picture"
    exit_status = ExitStatus.DATA_ERROR


@dataclass(frozen=True)
class VideoInfo:
    """What ffprobe read of a video's container: its type, size on screen (turned as a phone's
    rotation says), seconds, frame rate, codecs and bytes."""

    mime_type: str
    width: int
    height: int
    seconds: float
    fps: float
    codec: str
    pixel_format: str
    audio: Optional[str]
    size: int

    def describe(self) -> str:
        sound = f", {self.audio.upper()} sound" if self.audio else ", no sound"
        codec = _CODEC_NAMES.get(self.codec, self.codec)
        return f"{codec}{sound}, {self.width}x{self.height}, {self.seconds:.1f} s, {self.size:,} bytes"


@dataclass(frozen=True)
class PreparedVideo:
    """One video as one network gets it: an MP4 (or the user's WebM or MOV where the network
    takes it), its size on screen, seconds and what was done to make it."""

    data: bytes
    mime_type: str
    width: int
    height: int
    seconds: float
    steps: Tuple[str, ...]


def sniff_video(head: bytes) -> Optional[str]:
    """The video type the first bytes of a file announce (MP4, QuickTime, WebM), or None."""
    if head[4:8] == b"ftyp":
        return "video/quicktime" if head[8:12] == b"qt  " else "video/mp4"
    if head[4:8] in (b"moov", b"mdat", b"wide", b"free"):
        return "video/quicktime"
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return "video/webm"
    return None


def ffmpeg_missing() -> Optional[str]:
    """What to install when ffprobe or ffmpeg is missing, or None when both are there."""
    if shutil.which("ffprobe") and shutil.which("ffmpeg"):
        return None
    return "ffmpeg is not installed, and it prepares videos and animated GIFs: sudo apt install ffmpeg"


def probe(path: Path, mime_type: str, name: str, size: int, *, fds: Tuple[int, ...] = ()) -> VideoInfo:
    """`path` read by ffprobe (the demuxer its first bytes name), refused with VideoError when it
    is damaged or announces what no network takes or no Pi can decode. `fds`: the open files
    ffprobe is given (the user's clip, read through the bot's own descriptor: /dev/fd/N)."""
    if size > MOST_BYTES:
        raise VideoError(f"{name} is {size:,} bytes; no network takes a video over {MOST_BYTES:,}: make it shorter")
    command = _limited(
        "ffprobe",
        "-v",
        "error",
        "-protocol_whitelist",
        "file",
        "-f",
        _DEMUXERS[mime_type],
        "-print_format",
        "json",
        "-show_format",
        "-show_streams",
        f"file:{path}",
    )
    said = _run(command, name, PROBE_SECONDS, "read", fds=fds)
    try:
        found = json.loads(said.decode("utf-8", "replace"))
        return _info(found, mime_type, name, size)
    except (ValueError, TypeError, KeyError, AttributeError):
        raise VideoError(f"{name} is damaged: ffprobe could not read its streams: export it again") from None


def prepare_video(source: Source, limits: ImageLimits, *, name: str, mime_type: str) -> PreparedVideo:
    """The video `source` (a file, or a job's bytes) as `limits.network` takes it; VideoError
    when it cannot be."""
    missing = ffmpeg_missing()
    if missing:
        raise VideoError(f"{name} is a video; {missing}")
    if not limits.video_bytes:
        raise VideoError(f"{name} is a video; {limits.where} takes no videos here: post it elsewhere")
    with tempfile.TemporaryDirectory(prefix="twitterbot-video-") as folder, contextlib.ExitStack() as stack:
        given, out = _given(source, Path(folder), stack), Path(folder) / "prepared.mp4"
        # The copy most clips need starts beside ffprobe's look (a copy decodes no frame), and is
        # stopped at once when the look refuses the clip or finds it must be re-encoded: the clip
        # is ready in about the time ffmpeg alone takes to copy it.
        copying = _spawn(_copy_command(given.path, mime_type, given.size, out), given.fds)
        try:
            info = probe(given.path, mime_type, name, given.size, fds=given.fds)
            if limits.video_seconds and info.seconds > limits.video_seconds:
                raise VideoError(
                    f"{name} is {info.seconds:.1f} s long; {limits.where} takes {limits.video_seconds:g} s: "
                    "cut it shorter (nothing was uploaded)"
                )
            reasons = _why_encode(info, limits)
            if reasons:
                _abandon(copying)
                _encode(given.path, info, limits, out, name, fds=given.fds)
                steps = ("re-encoded as H.264" + (" and AAC" if info.audio else "") + f" ({', '.join(reasons)})",)
                width, height = _scaled_size(info, limits)
            else:
                _waited(copying, name, 60.0 + info.seconds / 4, "copy")
                steps = ("sent as it is, in an MP4", "metadata removed (no re-encoding)")
                width, height = info.width, info.height
        finally:
            _abandon(copying)
        data = out.read_bytes()
    if len(data) > limits.video_bytes:
        raise VideoError(
            f"{name} is still {len(data):,} bytes once prepared; {limits.where} takes {limits.video_bytes:,}: "
            "make it shorter"
        )
    return PreparedVideo(data, "video/mp4", width, height, info.seconds, steps)


def gif_as_video(data: bytes, limits: ImageLimits, *, name: str, width: int, height: int, frames: int) -> PreparedVideo:
    """An animated GIF made an MP4 (H.264, no sound) for a network that shows no animated GIF,
    so that it moves there too. Its frames were counted from its blocks: a GIF announcing more
    pixels than a Pi can decode is refused before ffmpeg sees it."""
    if width * height > MOST_PIXELS or width * height * frames > MOST_DECODED:
        raise VideoError(
            f"{name} is a GIF of {frames:,} frames of {width:,}x{height:,} pixels: too much to decode on a Pi: "
            "make it smaller or shorter"
        )
    missing = ffmpeg_missing()
    if missing:
        raise VideoError(f"{name} is an animated GIF and {limits.where} shows none; {missing}")
    with tempfile.TemporaryDirectory(prefix="twitterbot-video-") as folder:
        given = _written(data, Path(folder))
        info = probe(given, "image/gif", name, len(data))
        if limits.video_seconds and info.seconds > limits.video_seconds:
            raise VideoError(
                f"{name} plays for {info.seconds:.1f} s; {limits.where} takes {limits.video_seconds:g} s: make it shorter"
            )
        out = Path(folder) / "prepared.mp4"
        _encode(given, info, limits, out, name)
        made = out.read_bytes()
    if len(made) > limits.video_bytes:
        raise VideoError(f"{name} is {len(made):,} bytes as a video; {limits.where} takes {limits.video_bytes:,}")
    width, height = _scaled_size(info, limits)
    return PreparedVideo(made, "video/mp4", width, height, info.seconds, ("animated GIF made a video (H.264)",))


def _info(found: Dict[str, Any], mime_type: str, name: str, size: int) -> VideoInfo:
    streams = found.get("streams") or []
    video = next((s for s in streams if s.get("codec_type") == "video"), None)
    if video is None:
        raise VideoError(f"{name} has no picture in it (no video stream): export it again")
    audio = next((s for s in streams if s.get("codec_type") == "audio"), None)
    width, height = int(video.get("width") or 0), int(video.get("height") or 0)
    if width <= 0 or height <= 0:
        raise VideoError(f"{name} is damaged: its video has no size: export it again")
    if max(width, height) > MOST_SIDE or width * height > MOST_PIXELS:
        raise VideoError(
            f"{name} announces {width:,}x{height:,} pixels a frame; the bot decodes at most "
            f"{MOST_PIXELS / 1e6:.1f} megapixels (4096x4096): export it smaller"
        )
    seconds = _number(found.get("format", {}).get("duration")) or _number(video.get("duration"))
    if not seconds or seconds <= 0:
        raise VideoError(f"{name} is damaged: it has no duration: export it again")
    if seconds > MOST_SECONDS:
        raise VideoError(f"{name} announces {seconds:,.0f} s; the bot takes videos of at most an hour: cut it shorter")
    fps = _rate(video.get("avg_frame_rate")) or _rate(video.get("r_frame_rate")) or 30.0
    if fps > MOST_FPS:
        raise VideoError(f"{name} announces {fps:,.0f} frames a second; export it at 60 or fewer")
    if width * height * fps * seconds > MOST_DECODED:
        raise VideoError(
            f"{name} would decode to {width * height * fps * seconds / 1e9:,.0f} billion pixels "
            f"({width}x{height}, {fps:.0f} fps, {seconds:.0f} s); a Pi prepares at most "
            f"{MOST_DECODED / 1e9:.0f} billion: make it shorter or smaller"
        )
    if _turned(video):
        width, height = height, width
    return VideoInfo(
        mime_type,
        width,
        height,
        seconds,
        fps,
        str(video.get("codec_name") or "unknown"),
        str(video.get("pix_fmt") or ""),
        str(audio.get("codec_name")) if audio else None,
        size,
    )


def _turned(video: Dict[str, Any]) -> bool:
    """Whether a phone's rotation (90 or 270 degrees) makes the frames shown the other way up."""
    for side in video.get("side_data_list") or ():
        rotation = _number(side.get("rotation")) if isinstance(side, dict) else None
        if rotation is not None and round(abs(rotation)) % 180 == 90:
            return True
    rotate = _number((video.get("tags") or {}).get("rotate"))
    return rotate is not None and round(abs(rotate)) % 180 == 90


def _number(value: Any) -> Optional[float]:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _rate(value: Any) -> Optional[float]:
    """A frame rate as ffprobe writes it ("30000/1001"), or None."""
    if not isinstance(value, str) or "/" not in value:
        return None
    top, _, bottom = value.partition("/")
    over, under = _number(top), _number(bottom)
    return over / under if over and under else None


def _why_encode(info: VideoInfo, limits: ImageLimits) -> List[str]:
    """Why the clip cannot go to the network as it is (empty: it can, its streams copied)."""
    reasons: List[str] = []
    if info.codec not in _PASSES or info.pixel_format not in ("yuv420p", "yuvj420p"):
        reasons.append(f"{limits.where} takes H.264 video; this is {_CODEC_NAMES.get(info.codec, info.codec)}")
    if info.audio and info.audio not in _AUDIO_PASSES:
        reasons.append(f"its sound is {info.audio}")
    if max(info.width, info.height) > limits.video_side or info.width * info.height > limits.video_pixels:
        reasons.append(f"scaled down from {info.width}x{info.height}")
    if info.size > limits.video_bytes:
        reasons.append(f"{info.size:,} bytes; {limits.where} takes {limits.video_bytes:,}")
    return reasons


def _scaled_size(info: VideoInfo, limits: ImageLimits) -> Tuple[int, int]:
    """The size on screen once scaled down to the network's side and pixels (even numbers, as
    H.264 in 4:2:0 needs)."""
    scale = min(1.0, limits.video_side / max(info.width, info.height))
    scale = min(scale, math.sqrt(limits.video_pixels / (info.width * info.height)))
    return max(2, int(info.width * scale) // 2 * 2), max(2, int(info.height * scale) // 2 * 2)


@dataclass(frozen=True)
class _Given:
    """The clip as ffprobe and ffmpeg read it: `path`, its `size`, and the open files they are
    given (`fds`: the descriptor `path` reads through, when it is the user's file)."""

    path: Path
    size: int
    fds: Tuple[int, ...] = ()


def _given(source: Source, folder: Path, stack: contextlib.ExitStack) -> _Given:
    """The video as ffprobe and ffmpeg may read it: a job's bytes, written into the bot's private
    folder; the user's file, opened by the bot (a regular file: a FIFO or a device is refused) and
    read by them through that descriptor (/dev/fd/N, held open in `stack`), so that the programs
    read only what the bot chose, and no private copy of it is made. Where /dev/fd is missing (no
    /proc), the file is copied into the private folder as it is read."""
    if isinstance(source, bytes):
        return _Given(_written(source, folder), len(source))
    from ..files import NotAFile, open_regular

    try:
        stream = stack.enter_context(open_regular(source))
        size = os.fstat(stream.fileno()).st_size
        if size > MOST_BYTES:
            raise VideoError(
                f"{source} is over {MOST_BYTES:,} bytes; no network takes a video that big: make it shorter"
            )
        through = Path(f"/dev/fd/{stream.fileno()}")
        if through.exists():
            return _Given(through, size, (stream.fileno(),))
        given = folder / "given"
        with given.open("wb") as copy:
            _copy_within(stream, copy, MOST_BYTES, source)
        return _Given(given, given.stat().st_size)
    except NotAFile as exc:
        raise VideoError(f"{source} is {exc.kind}, not a video file: name the video file itself") from None
    except FileNotFoundError:
        raise VideoError(
            f"{source} does not exist: check the path (it is read from the tweets file's folder)"
        ) from None
    except OSError as exc:
        raise VideoError(f"cannot read {source}: {exc.strerror or exc}: check the file") from None


def _written(data: bytes, folder: Path) -> Path:
    """`data` (a job's video, an animated GIF) as a file of the bot's private folder."""
    given = folder / "given"
    given.write_bytes(data)
    return given


def _copy_within(stream: IO[bytes], copy: IO[bytes], most: int, name: Path) -> None:
    copied = 0
    while True:
        chunk = stream.read(1024 * 1024)
        if not chunk:
            return
        copied += len(chunk)
        if copied > most:
            raise VideoError(f"{name} is over {most:,} bytes; no network takes a video that big: make it shorter")
        copy.write(chunk)


# The clip's first video and sound streams, without any metadata (the container's, the streams',
# chapters): what a copy and an encoding both write.
_FIRST_STREAMS_BARE = ("-map", "0:v:0", "-map", "0:a:0?", "-map_metadata", "-1", "-map_chapters", "-1")


def _copy_command(given: Path, mime_type: str, size: int, out: Path) -> List[str]:
    """ffmpeg copying the clip's first video and sound streams into an MP4 without any metadata
    (the container's, the streams', chapters), the index first so it plays while it loads."""
    return _limited(
        "ffmpeg",
        *_reading(given, mime_type),
        *_FIRST_STREAMS_BARE,
        "-c",
        "copy",
        "-fflags",
        "+bitexact",
        "-movflags",
        "+faststart",
        "-f",
        "mp4",
        str(out),
        write=size * 2 + 1024 * 1024,
    )


def _encode(
    given: Path, info: VideoInfo, limits: ImageLimits, out: Path, name: str, *, fds: Tuple[int, ...] = ()
) -> None:
    """The clip re-encoded: H.264 (yuv420p, as every player takes), scaled down to the network's
    side, at a bit rate that fits its bytes (a 5% margin for the container), AAC sound."""
    width, height = _scaled_size(info, limits)
    audio_bits = 128_000 if info.audio else 0
    budget = int(limits.video_bytes * 8 * 0.95 / max(info.seconds, 0.5)) - audio_bits
    budget = min(max(budget, 200_000), _MOST_BITS)
    rate = ["-crf", "23", "-maxrate", str(budget), "-bufsize", str(budget * 2)]
    command = _limited(
        "ffmpeg",
        *_reading(given, info.mime_type),
        *_FIRST_STREAMS_BARE,
        "-vf",
        f"scale={width}:{height},format=yuv420p",
        "-c:v",
        "libx264",
        "-preset",
        "veryfast",
        *rate,
        "-threads",
        "2",
        "-c:a",
        "aac",
        "-b:a",
        "128k",
        "-fflags",
        "+bitexact",
        "-movflags",
        "+faststart",
        "-f",
        "mp4",
        str(out),
        write=limits.video_bytes * 2,
    )
    # A Pi Zero 2 W encodes 720p at about real time; a hostile clip is stopped at this limit.
    _run(command, name, 60.0 + info.seconds * 6, "re-encode", fds=fds)


def _reading(given: Path, mime_type: str) -> List[str]:
    """ffmpeg's options to read `given` with the demuxer its type names, and no other file."""
    return [
        "-nostdin",
        "-v",
        "error",
        "-y",
        "-threads",
        "2",
        "-protocol_whitelist",
        "file",
        "-f",
        _DEMUXERS[mime_type],
        "-i",
        f"file:{given}",
    ]


def _limited(program: str, *arguments: str, write: int = 64 * 1024 * 1024) -> List[str]:
    """`program` run under ulimit: at most FFMPEG_MEMORY_KIB mapped, `write` bytes written."""
    found = shutil.which(program)
    if not found:
        raise VideoError(f"{program} is missing: sudo apt install ffmpeg")
    return [
        "sh",
        "-c",
        'ulimit -v "$1" && ulimit -f "$2" && shift 2 && exec "$@"',
        "sh",
        str(FFMPEG_MEMORY_KIB),
        str(max(write // 512, 2048)),
        found,
        *arguments,
    ]


def _run(command: List[str], name: str, seconds: float, doing: str, *, fds: Tuple[int, ...] = ()) -> bytes:
    """`command` in a session of its own, stopped with every process it started after `seconds`;
    its standard output, or VideoError with what it said."""
    return _waited(_spawn(command, fds), name, seconds, doing)


def _spawn(command: List[str], fds: Tuple[int, ...] = ()) -> subprocess.Popen:
    """`command` started in a session of its own (so that every process it starts can be stopped),
    given the open files `fds` and no other."""
    return subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        pass_fds=fds,
    )


def _abandon(child: Optional[subprocess.Popen]) -> None:
    """A child no longer wanted (or already done) stopped, waited for and its pipes closed."""
    if child is None:
        return
    if child.returncode is None:
        _stop(child)
    for stream in (child.stdout, child.stderr):
        if stream is not None:
            stream.close()


def _waited(child: subprocess.Popen, name: str, seconds: float, doing: str) -> bytes:
    """`child` waited for at most `seconds` (then stopped with every process it started): its
    standard output, or VideoError with what it said."""
    with child:
        try:
            out, said = child.communicate(timeout=seconds)
        except subprocess.TimeoutExpired:
            _stop(child)
            raise VideoError(
                f"{name} took over {seconds:g} s to {doing}; it is damaged or too much for a Pi: export it again, shorter"
            ) from None
        finally:
            _stop(child)
    if child.returncode != 0:
        raise VideoError(f"{name} could not be {_done(doing)} ({_last_words(said, child.returncode)}): export it again")
    return out


def _done(doing: str) -> str:
    return {"read": "read", "copy": "copied", "re-encode": "re-encoded"}.get(doing, doing)


def _stop(child: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()


def _last_words(said: bytes, code: int) -> str:
    lines = [line.strip() for line in said.decode("utf-8", "replace").splitlines() if line.strip()]
    if code in (-signal.SIGKILL, -signal.SIGSEGV, -signal.SIGABRT) or any("alloc" in line.lower() for line in lines):
        return "it ran out of the memory it may use: the video is too big"
    if code == -signal.SIGXFSZ or code == 128 + signal.SIGXFSZ:
        return "what it wrote grew too big"
    return lines[-1][:300] if lines else f"exit status {code}"

"""Fit one picture to one network: upright, without metadata, within its bytes and pixels.

The user's file is only read. Each network gets its own copy, made in memory::

    prepared = prepare(Path("photos/sunrise.jpg"), "Orange sky over runner beans", network.image_limits())
    prepared.data, prepared.mime_type, prepared.width, prepared.height
    prepared.describe()     # 'JPEG, 1,912,334 bytes, 2309x1732 (scaled down from 4000x3000, ...)'

The steps, in order: the EXIF orientation is applied (`ImageOps.exif_transpose`: a phone stores
a portrait photo sideways with a tag that says so); a colour profile is converted to sRGB; every
piece of metadata (EXIF with its GPS position, XMP, IPTC, comments, profiles) is left behind,
because only the pixels are written again; the picture is scaled down only if it has more pixels
than the network takes; a PNG (a screenshot, a chart) stays PNG when it fits the network's bytes,
a photo becomes a JPEG of quality 88, and only a picture still too big is encoded at a lower
quality, then scaled down until it fits. An animated GIF goes as it is to a network that shows
animated GIFs, and is refused by the others with a message that says so.

A big JPEG is decoded small: `Image.draft` makes the JPEG decoder itself scale by 1/2, 1/4 or
1/8, so a 12-megapixel photo meant for a 4-megapixel slot never exists in memory at full size
(benchmarks/pictures.py measures it: a Pi Zero has 512 MB for everything).
"""

from __future__ import annotations

import io
import math
import struct
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, List, Optional, Sequence, Tuple, Union

from ..errors import BotError, ExitStatus
from ..files import NotAFile, not_a_file, open_regular
from .limits import VIDEO_ALONE, ImageLimits
from .video import VIDEO_EXTENSIONS, VideoError, gif_as_video, prepare_video, sniff_video

__all__ = [
    "DECODE_LIMIT",
    "DECODE_MEMORY",
    "decode_limit",
    "OPEN_LIMIT",
    "Attachment",
    "alone",
    "PictureError",
    "PreparedImage",
    "open_picture_file",
    "pillow",
    "prepare",
    "prepare_all",
    "sniff",
    "unusable",
    "within_budget",
    "JPEG_QUALITY",
]

JPEG_QUALITY = 88  # a photo this good shows no blocks on a phone; 4000x3000 is then about 3-4 MB
# No picture is decoded at more pixels than fit DECODE_MEMORY, so that a run stays within the
# 150 MiB it may use on a Pi. A JPEG of more is decoded at 1/2, 1/4 or 1/8 of its size (a
# 24-megapixel photo at 6); any other picture of more is refused before it is decoded. A phone
# shows a post's picture 1,000-1,300 pixels wide anyway.
DECODE_MEMORY = 96 * 1024 * 1024  # what decoding and fitting one picture may take, beside Python and Pillow
# Bytes a decoded pixel costs at the peak: Pillow's 4 of the decoded picture and 4 of its scaled or
# flattened copy; libwebp decodes into buffers of its own first (measured by benchmarks/pictures.py).
_PEAK_BYTES = {"WEBP": 20}
_PEAK_BYTES_USUALLY = 8
DECODE_LIMIT = DECODE_MEMORY // _PEAK_BYTES_USUALLY  # 12.6 megapixels: a 4000x3000 screenshot, a 12-MP photo
OPEN_LIMIT = DECODE_LIMIT * 64  # a JPEG drafted at 1/8: the most pixels a file may announce to be opened at all
_BAND_PIXELS = 1_000_000  # a band of a picture being scaled (about 4 MB)
_FORMATS = ("JPEG", "PNG", "GIF", "WEBP")  # the networks take these; no other decoder is ever reached
_FORMAT_NAMES = {"JPEG": "JPEG", "PNG": "PNG", "GIF": "GIF", "WEBP": "WebP"}
_LOWER_QUALITY = 80  # tried once before scaling down, when a picture is a little too big
_LOSSLESS = {"PNG", "GIF"}
_ORIENTATION = 0x0112  # the EXIF tag of a photo's orientation
_TRANSPOSED = {5, 6, 7, 8}  # orientations whose upright picture is the stored one turned a quarter

Source = Union[Path, str, IO[bytes]]


class PictureError(BotError):
    """A picture that cannot be posted as it is: missing, not a picture, too big where nothing
    can make it fit, or an animated GIF for a network that shows none. The message names the file
    and says what to do."""

    kind = "picture"
    exit_status = ExitStatus.DATA_ERROR


@dataclass(frozen=True)
class Attachment:
    """A picture to post, before it is fitted to a network: a file (a line of the tweets file)
    or bytes (a job's drawing, a grammar's drawn or fetched picture), its alt text, and its name
    for messages. `alt_optional`: it may go without alt text (a grammar made for a service that
    had none, as CBDQ's pictures); every other picture needs some."""

    source: Union[Path, bytes]
    alt: str
    name: str
    alt_optional: bool = False
    kind: str = "picture"  # or "video" (an MP4, MOV or WebM): it goes alone on a post

    @property
    def is_video(self) -> bool:
        """A video: said so, or a file named as one (a job's `.mp4` made without saying its kind)."""
        named = isinstance(self.source, Path) and self.source.suffix.lower() in VIDEO_EXTENSIONS
        return self.kind == "video" or named

    def prepare(self, limits: ImageLimits) -> PreparedImage:
        if not isinstance(self.source, bytes):
            return prepare(self.source, self.alt, limits, name=self.name, alt_optional=self.alt_optional)
        try:
            return prepare(io.BytesIO(self.source), self.alt, limits, name=self.name, alt_optional=self.alt_optional)
        except PictureError as exc:  # fetched ({img}) or drawn: there is no file of the owner's to save again
            raise PictureError(_not_a_file(str(exc))) from None


# What the advice for a file says, and what it says for a picture fetched by its address.
_FILE_ADVICE = ((": save it smaller", ": link a smaller picture"), (": export it again", ": link another picture"))


def _not_a_file(message: str) -> str:
    """A picture's problem worded for one fetched by its address ({img}), not a file on the Pi."""
    for said, instead in _FILE_ADVICE:
        message = message.replace(said, instead)
    return message


def prepare_all(attachments: Sequence[Attachment], limits: ImageLimits) -> List[PreparedImage]:
    """Every picture of a post fitted to one network; raises `PictureError` for the first that
    cannot be, and for a video beside anything else."""
    return alone([attachment.prepare(limits) for attachment in attachments], limits)


def alone(prepared: List[PreparedImage], limits: ImageLimits) -> List[PreparedImage]:
    """`prepared`, or `PictureError` when a video is among others: every network takes one video
    alone (an animated GIF becomes one on Bluesky, so a line of a GIF and a photo cannot go there)."""
    video = next((image for image in prepared if image.is_video), None)
    if video is not None and len(prepared) > 1:
        raise PictureError(
            f"{video.name} goes to {limits.where} as a video, beside {len(prepared) - 1} other(s); {VIDEO_ALONE}: "
            "give it a line of its own"
        )
    return prepared


@dataclass(frozen=True)
class PreparedImage:
    """One picture as it will be sent to one network: the bytes, their type and size, the alt
    text, and what was done to the user's file to make it (for `check` and the dry run)."""

    network: str
    data: bytes
    mime_type: str
    width: int
    height: int
    alt: str
    name: str  # the file it was made from, as the user wrote it
    steps: Tuple[str, ...] = ()
    seconds: Optional[float] = None  # a video's duration; None for a picture

    @property
    def is_video(self) -> bool:
        return self.mime_type.startswith("video/")

    @property
    def extension(self) -> str:
        return {
            "image/jpeg": "jpg",
            "image/png": "png",
            "image/gif": "gif",
            "image/webp": "webp",
            "video/mp4": "mp4",
            "video/quicktime": "mov",
            "video/webm": "webm",
        }[self.mime_type]

    @property
    def format(self) -> str:
        return self.extension.upper().replace("JPG", "JPEG")

    def describe(self) -> str:
        """'JPEG, 1,912,334 bytes, 2309x1732 (scaled down from 4000x3000, metadata removed)';
        a video's with its duration: 'MP4 video, 2,345,678 bytes, 1280x720, 30.0 s (...)'."""
        done = f" ({', '.join(self.steps)})" if self.steps else ""
        if self.is_video:
            return f"{self.format} video, {len(self.data):,} bytes, {self.width}x{self.height}, {self.seconds or 0:.1f} s{done}"
        return f"{self.format}, {len(self.data):,} bytes, {self.width}x{self.height}{done}"


def sniff(head: bytes) -> Optional[str]:
    """The picture type the first bytes of a file announce, without Pillow (a scheduled run
    checks its tweets file with it), or None if they announce none the networks take."""
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def prepare(
    source: Source, alt: str, limits: ImageLimits, *, name: Optional[str] = None, alt_optional: bool = False
) -> PreparedImage:
    """`source` (a path or a binary stream) as `limits.network` takes it, with `alt` as its alt
    text (which it must have, unless `alt_optional`). Raises `PictureError` naming the file when it
    cannot be made to fit, and for anything Pillow cannot read: a damaged or hostile file is the
    user's data, never the bot's bug."""
    name = name or (str(source) if isinstance(source, (str, Path)) else getattr(source, "name", "the picture"))
    if not alt.strip() and not alt_optional:
        raise PictureError(f"{name} has no alt text: describe what it shows, for people who cannot see it")
    if len(alt) > limits.max_alt:
        raise PictureError(
            f"the alt text of {name} is {len(alt)} characters; {limits.where} takes {limits.max_alt}: shorten it"
        )
    stream = open_picture_file(Path(source), name) if isinstance(source, (str, Path)) else source
    try:
        head = stream.read(16)
        stream.seek(0)
        video_type = sniff_video(head)
        if video_type:
            given = Path(source) if isinstance(source, (str, Path)) else stream.read()
            return _video(given, video_type, alt, limits, name)
        with warnings.catch_warnings():
            # Pillow warns of damaged EXIF it reads past: the EXIF is left behind anyway, and a
            # warning would be noise in every cron mail.
            warnings.simplefilter("ignore", UserWarning)
            warnings.simplefilter("ignore", RuntimeWarning)  # Pillow's DecompressionBombWarning: within_budget decides
            return _prepared(stream, alt, limits, name)
    except PictureError:
        raise
    except VideoError as exc:
        raise PictureError(str(exc)) from None
    except MemoryError:
        raise PictureError(f"{name} needs more memory to prepare than there is: save it smaller") from None
    except unusable() as exc:  # Pillow's word for a damaged file: truncated data, bad tables, bad chunks
        raise PictureError(f"{name} is damaged and cannot be read ({_said(exc)}): export it again") from None
    finally:
        if stream is not source:
            stream.close()


def unusable() -> Tuple[type, ...]:
    """Every exception Pillow raises for a file it cannot use (a damaged or hostile one): each is
    "not a picture we can use", a data error, never the bot's bug."""
    from PIL import Image

    return (
        Image.DecompressionBombError,
        OSError,
        ValueError,
        SyntaxError,
        EOFError,
        struct.error,
        IndexError,
        MemoryError,
    )


def pillow() -> Any:
    """Pillow's `Image` module with its own decompression-bomb check at the bot's ceiling: no
    picture of more pixels than a JPEG drafted at 1/8 brings within DECODE_LIMIT is even opened
    (Pillow refuses over twice MAX_IMAGE_PIXELS). The exact budget is `within_budget`."""
    from PIL import Image

    Image.MAX_IMAGE_PIXELS = OPEN_LIMIT // 2
    return Image


def open_picture_file(path: Path, name: str) -> IO[bytes]:
    """`path` opened for reading if it is a regular file; `PictureError` for anything else (a
    FIFO would block the run for ever, a device never ends) before it is opened for reading."""
    try:
        found = path.stat()
    except FileNotFoundError:
        raise PictureError(
            f"{name} does not exist: check the path (it is read from the tweets file's folder)"
        ) from None
    except OSError as exc:
        raise PictureError(f"cannot read {name}: {exc.strerror or exc}: check the file") from None
    kind = not_a_file(found.st_mode)
    if kind:
        raise PictureError(f"{name} is {kind}, not a picture file: name the picture file itself")
    try:  # never blocks, and refuses a FIFO that took the file's place since the look above
        return open_regular(path)
    except NotAFile:
        raise PictureError(f"{name} is no longer a regular file: name the picture file itself") from None
    except OSError as exc:
        raise PictureError(f"cannot read {name}: {exc.strerror or exc}: check the file") from None


def within_budget(width: int, height: int, fmt: Optional[str], name: str, size: int) -> None:
    """`PictureError` for a picture that would take more memory to decode than a Pi can spare,
    read from its header before a pixel is decoded: over DECODE_LIMIT pixels, or for a JPEG
    (decoded at 1/2, 1/4 or 1/8 of its size) over 64 times that."""
    most = decode_limit(fmt) * (64 if fmt == "JPEG" else 1)
    if width * height <= most:
        return
    raise PictureError(
        f"{name} is {width:,}x{height:,} pixels ({width * height / 1e6:,.1f} megapixels in {size:,} bytes); decoding it "
        f"would take more memory than a Pi can spare (a {_FORMAT_NAMES.get(fmt or '', 'picture')} of at most {most / 1e6:,.1f} megapixels"
        f"{'' if fmt == 'JPEG' else ', e.g. 4000x3000' if most > 12e6 else ', e.g. 2560x1920'}): save it smaller"
    )


def decode_limit(fmt: Optional[str]) -> int:
    """The most pixels a picture of format `fmt` is decoded at within DECODE_MEMORY."""
    return DECODE_MEMORY // _PEAK_BYTES.get(fmt or "", _PEAK_BYTES_USUALLY)


def _prepared(stream: IO[bytes], alt: str, limits: ImageLimits, name: str) -> PreparedImage:
    """The picture in `stream` prepared: an animated GIF as it is, without its metadata; anything
    else decoded (within the budget) and fitted."""
    from PIL import UnidentifiedImageError

    Image = pillow()
    size = _stream_size(stream)
    head = stream.read(16)
    stream.seek(0)
    if sniff(head) == "image/gif":
        gif = _animated(stream, alt, name, limits, size)
        if gif is not None:
            return gif
    try:
        image = Image.open(stream, formats=_FORMATS)
    except UnidentifiedImageError:
        if Path(name).suffix.lower() in VIDEO_EXTENSIONS:
            raise PictureError(f"{name} is not a video (MP4, MOV or WebM): replace it or fix its name") from None
        raise PictureError(f"{name} is not a picture (JPEG, PNG, GIF or WebP): replace it or fix its name") from None
    except Image.DecompressionBombError:
        raise PictureError(f"{name} has too many pixels to open safely: save it smaller") from None
    # close(), not `with`: _fitted closes the image early to free its pixels, and before Pillow
    # 10 (Debian's python3-pil on Bookworm is 9.4) leaving `with` on a closed image raises.
    try:
        within_budget(image.width, image.height, image.format, name, size)
        if getattr(image, "is_animated", False):
            raise PictureError(
                f"{name} is animated; {limits.where} shows no animated pictures: use a still picture, or post it elsewhere"
            )
        return _fitted(image, alt, limits, name, size)
    finally:
        image.close()


def _animated(stream: IO[bytes], alt: str, name: str, limits: ImageLimits, size: int) -> Optional[PreparedImage]:
    """An animated GIF, sent without its comments and XMP but otherwise as it is, where the network
    shows animated GIFs (re-encoding it would lose its frames or grow it); None for a still GIF,
    which is fitted like any picture. Its frames are counted from its blocks, never decoded."""
    from .gif import read_gif

    where = limits.where
    ceiling = max(limits.animated_gif_bytes, limits.max_bytes) * 4  # a still GIF this big cannot be fitted either
    if size > ceiling:
        raise PictureError(
            f"{name} is a GIF of {size:,} bytes; {where} takes {limits.animated_gif_bytes or limits.max_bytes:,}: save it smaller"
        )
    gif = read_gif(stream.read())
    if gif.frames < 2:
        stream.seek(0)
        return None
    if limits.gif_as_video:  # it moves there as a video
        made = gif_as_video(gif.data, limits, name=name, width=gif.width, height=gif.height, frames=gif.frames)
        steps = (*made.steps, "comments and XMP removed")
        return PreparedImage(
            limits.network, made.data, made.mime_type, made.width, made.height, alt, name, steps, made.seconds
        )
    if not limits.animated_gif_bytes:
        raise PictureError(
            f"{name} is animated; {where} shows no animated pictures: use a still picture, or post it elsewhere"
        )
    if len(gif.data) > limits.animated_gif_bytes:
        raise PictureError(
            f"{name} is an animated GIF of {len(gif.data):,} bytes; {where} takes {limits.animated_gif_bytes:,}: "
            "make it shorter or smaller (fewer frames, fewer colours)"
        )
    steps = ("animated GIF, sent as it is", "comments and XMP removed")
    return PreparedImage(limits.network, gif.data, "image/gif", gif.width, gif.height, alt, name, steps)


def _video(source: Union[Path, bytes], video_type: str, alt: str, limits: ImageLimits, name: str) -> PreparedImage:
    """A video (`pictures.video`) as `limits.network` takes it, with its alt text."""
    most = limits.video_alt or limits.max_alt
    if len(alt) > most:
        raise PictureError(
            f"the alt text of {name} is {len(alt)} characters; {limits.where} takes {most} for a video: shorten it"
        )
    made = prepare_video(source, limits, name=name, mime_type=video_type)
    return PreparedImage(
        limits.network, made.data, made.mime_type, made.width, made.height, alt, name, made.steps, made.seconds
    )


def _said(error: BaseException) -> str:
    """What Pillow said about a damaged file, short (its messages can carry a whole chunk)."""
    said = str(error) or type(error).__name__
    return said if len(said) <= 120 else said[:117] + "..."


def _fitted(image: Any, alt: str, limits: ImageLimits, name: str, size: int) -> PreparedImage:
    fmt = image.format
    raw_width, raw_height = image.size
    orientation = image.getexif().get(_ORIENTATION, 1)
    width, height = (raw_height, raw_width) if orientation in _TRANSPOSED else (raw_width, raw_height)
    scale = min(1.0, limits.max_side / max(width, height), math.sqrt(limits.max_pixels / (width * height)))
    steps: List[str] = []
    if fmt == "JPEG":
        # A JPEG file much bigger than the network takes will be encoded smaller: a picture of
        # about that many bytes needs about that share of the pixels. The decoder scales by 1/2,
        # 1/4 or 1/8 as it reads, to no less than the size asked for; the encoding below shrinks
        # further if that is not enough.
        draft = min(scale, math.sqrt(limits.max_bytes / max(1, size)))
        if raw_width * raw_height > DECODE_LIMIT:
            # A photo this big would need 250 MiB and more at full size: decode it at the largest
            # 1/2^n that stays under the limit, whatever the network would take.
            draft = min(draft, 2.0 ** math.floor(math.log2(math.sqrt(DECODE_LIMIT / (raw_width * raw_height)))))
        if draft < 1:
            image.draft(
                "L" if image.mode == "L" else "RGB", (math.ceil(raw_width * draft), math.ceil(raw_height * draft))
            )
    image.load()
    lossless = fmt in _LOSSLESS or "A" in image.getbands() or "transparency" in image.info
    profile = image.info.get("icc_profile")
    # Scaled as stored, then turned: turning a smaller picture takes less memory.
    target = (max(1, int(raw_width * scale)), max(1, int(raw_height * scale)))
    picture = image
    if picture.width > target[0] or picture.height > target[1]:
        picture = _scaled(picture, target)
        image.close()  # frees the decoded pixels now, not when the file is closed
    picture = _upright(picture, orientation, steps)
    picture = _srgb(picture, profile, steps)
    picture = _pixels_only(picture, keep_palette=lossless)
    if picture.size != (width, height):
        steps.insert(0, f"scaled down from {width}x{height} to fit {limits.where}'s limits")
    steps.append("metadata removed")

    if lossless and "image/png" in limits.mime_types:
        png, size = _png_within(picture, limits.max_bytes)
        if png is not None:
            return _made(limits, png, "image/png", picture, alt, name, steps)
        steps.append(f"as PNG over {limits.max_bytes:,} bytes, too big: made a JPEG")
    return _jpeg(picture, alt, limits, name, steps, (width, height))


def _jpeg(
    picture: Any, alt: str, limits: ImageLimits, name: str, steps: List[str], original: Tuple[int, int]
) -> PreparedImage:
    """A JPEG within `limits.max_bytes`: quality 88, then 80, then smaller and smaller."""

    picture = _flattened(picture)
    data = _encode(picture, "JPEG", quality=JPEG_QUALITY)
    if len(data) <= limits.max_bytes:
        return _made(limits, data, "image/jpeg", picture, alt, name, steps)
    data = _encode(picture, "JPEG", quality=_LOWER_QUALITY)
    quality = _LOWER_QUALITY
    for _ in range(12):
        if len(data) <= limits.max_bytes:
            break
        # Bytes grow about with the pixel count: aim a little below the limit.
        shrink = min(0.9, math.sqrt(limits.max_bytes / len(data)) * 0.95)
        size = (max(1, int(picture.width * shrink)), max(1, int(picture.height * shrink)))
        scaled = _scaled(picture, size)
        picture.close()
        picture = scaled
        data = _encode(picture, "JPEG", quality=quality)
    else:
        raise PictureError(f"{name} cannot be made small enough for {limits.where} ({limits.max_bytes:,} bytes)")
    steps[:] = [step for step in steps if not step.startswith("scaled down")]
    if picture.size != original:
        steps.insert(0, f"scaled down from {original[0]}x{original[1]} to fit {limits.where}'s limits")
    steps.append(f"JPEG quality {quality}")
    return _made(limits, data, "image/jpeg", picture, alt, name, steps)


def _made(
    limits: ImageLimits, data: bytes, mime: str, picture: Any, alt: str, name: str, steps: List[str]
) -> PreparedImage:
    return PreparedImage(limits.network, data, mime, picture.width, picture.height, alt, name, tuple(steps))


def _upright(image: Any, orientation: int, steps: List[str]) -> Any:
    """The picture as it is meant to be seen. Only a photo that needs it is transposed: a copy
    of a big picture is memory a Pi does not have to spare. A resized picture has lost its
    EXIF, so the orientation read from the file is applied by hand, as exif_transpose would."""
    if orientation not in (2, 3, 4, 5, 6, 7, 8):
        return image
    from PIL import Image, ImageOps

    steps.append("turned upright (EXIF orientation)")
    if image.getexif().get(_ORIENTATION) == orientation:
        upright = ImageOps.exif_transpose(image)
    else:
        method = {
            2: Image.Transpose.FLIP_LEFT_RIGHT,
            3: Image.Transpose.ROTATE_180,
            4: Image.Transpose.FLIP_TOP_BOTTOM,
            5: Image.Transpose.TRANSPOSE,
            6: Image.Transpose.ROTATE_270,
            7: Image.Transpose.TRANSVERSE,
            8: Image.Transpose.ROTATE_90,
        }[orientation]
        upright = image.transpose(method)
    if upright is not image:
        image.close()  # frees the sideways pixels
    return upright


def _srgb(picture: Any, profile: Optional[bytes], steps: List[str]) -> Any:
    """Colours converted from the photo's own profile (a phone's Display P3) to sRGB, which every
    app assumes when no profile comes along: the profile is metadata the bot drops."""
    if not profile or picture.mode not in ("RGB", "RGBA", "CMYK"):
        return picture
    from PIL import ImageCms

    try:
        converted = ImageCms.profileToProfile(
            picture,
            io.BytesIO(profile),
            ImageCms.createProfile("sRGB"),
            outputMode="RGBA" if picture.mode == "RGBA" else "RGB",
        )
    except (ImageCms.PyCMSError, OSError, ValueError):
        return picture  # a damaged profile: the pixels as they are
    steps.append("colours converted to sRGB")
    return converted


def _pixels_only(picture: Any, keep_palette: bool) -> Any:
    """The picture in a mode PNG or JPEG can hold, and nothing else of the file: no EXIF, XMP,
    comments or profile (Pillow writes some of `info` back when saving, so `info` is emptied but
    for a palette's transparent colour)."""
    wanted = {"1", "L", "LA", "P", "RGB", "RGBA"} if keep_palette else {"L", "RGB"}
    if picture.mode not in wanted:
        has_alpha = "A" in picture.getbands() or "transparency" in picture.info
        picture = picture.convert("RGBA" if keep_palette and has_alpha else "RGB")
    transparency = picture.info.get("transparency")
    picture.info = {"transparency": transparency} if transparency is not None and picture.mode in ("P", "L") else {}
    return picture


def _scaled(picture: Any, size: Tuple[int, int]) -> Any:
    """`picture` scaled to `size` (Lanczos), a band of rows at a time: Pillow's resize of a whole
    picture holds a second copy of it, scaled one way, before it scales the other; a band's copy
    is small. Each band reads the rows around its own (the `box` of `resize`), so no seam shows."""
    from PIL import Image

    if picture.mode in ("1", "P"):  # scaled by nearest neighbour, with no such copy
        return picture.resize(size, Image.Resampling.NEAREST)
    scaled = Image.new(picture.mode, size)
    rows = max(1, _BAND_PIXELS // size[0])
    ratio = picture.height / size[1]
    for top in range(0, size[1], rows):
        bottom = min(size[1], top + rows)
        box = (0, top * ratio, picture.width, bottom * ratio)
        band = picture.resize((size[0], bottom - top), Image.Resampling.LANCZOS, box=box)
        scaled.paste(band, (0, top))
        band.close()
    return scaled


def _flattened(picture: Any) -> Any:
    """A picture JPEG can hold: transparent parts become white (as the apps show them)."""
    from PIL import Image

    if picture.mode in ("RGB", "L"):
        return picture
    if "A" in picture.getbands() or "transparency" in picture.info:
        rgba = picture if picture.mode == "RGBA" else picture.convert("RGBA")  # no copy of a big picture
        white = Image.new("RGB", rgba.size, "white")
        white.paste(rgba, mask=rgba)  # the mask is the alpha band itself: no copy of it
        rgba.close()
        return white
    return picture.convert("RGB")


def _encode(picture: Any, fmt: str, **options: Any) -> bytes:
    """`picture` encoded. Optimised (smaller, the same pixels) up to 4 megapixels: libjpeg's
    optimisation keeps every coefficient of a bigger picture in memory at once."""
    buffer = io.BytesIO()
    small = picture.width * picture.height <= 4_000_000
    if fmt == "JPEG":
        picture.save(buffer, "JPEG", optimize=small, **options)
    else:
        picture.save(buffer, "PNG", optimize=small)
    return buffer.getvalue()


class _Capped(io.BytesIO):
    """A buffer that stops an encoding once it passes `cap` bytes: a PNG too big to send is
    not kept whole in memory just to be thrown away."""

    def __init__(self, cap: int) -> None:
        super().__init__()
        self.cap = cap

    def write(self, data: Any) -> int:
        if self.tell() + len(data) > self.cap:
            raise _TooBig(self.tell() + len(data))
        return super().write(data)


class _TooBig(Exception):
    """An encoding passed its cap, at `size` bytes so far."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


def _png_within(picture: Any, cap: int) -> Tuple[Optional[bytes], int]:
    """`picture` as a PNG of at most `cap` bytes, or None and the bytes at which it was stopped."""
    buffer = _Capped(cap)
    try:
        picture.save(buffer, "PNG", optimize=picture.width * picture.height <= 4_000_000)
    except _TooBig as exc:
        return None, exc.size
    return buffer.getvalue(), buffer.tell()


def _stream_size(stream: IO[bytes]) -> int:
    """The bytes of the file or buffer `stream` reads, from where it stands (its start)."""
    position = stream.tell()
    stream.seek(0, io.SEEK_END)
    size = stream.tell()
    stream.seek(position)
    return size - position

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
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, List, Optional, Sequence, Tuple, Union

from ..errors import BotError, ExitStatus
from .limits import ImageLimits

__all__ = ["DECODE_LIMIT", "Attachment", "PictureError", "PreparedImage", "prepare", "prepare_all", "sniff", "JPEG_QUALITY"]

JPEG_QUALITY = 88  # a photo this good shows no blocks on a phone; 4000x3000 is then about 3-4 MB
# A JPEG of more pixels is decoded at 1/2, 1/4... of its size (a 24-megapixel photo at 6), so that
# preparing it stays under 150 MiB on a Pi; a phone shows a picture 1,000-1,300 pixels wide anyway.
DECODE_LIMIT = 16_000_000
_LOWER_QUALITY = 80  # tried once before scaling down, when a picture is a little too big
_LOSSLESS = {"PNG", "GIF", "BMP", "TIFF", "ICO"}
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
    or PNG bytes (a job's drawing), its alt text, and its name for messages."""

    source: Union[Path, bytes]
    alt: str
    name: str

    def prepare(self, limits: ImageLimits) -> PreparedImage:
        source = io.BytesIO(self.source) if isinstance(self.source, bytes) else self.source
        return prepare(source, self.alt, limits, name=self.name)


def prepare_all(attachments: Sequence[Attachment], limits: ImageLimits) -> List[PreparedImage]:
    """Every picture of a post fitted to one network; raises `PictureError` for the first that cannot be."""
    return [attachment.prepare(limits) for attachment in attachments]


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

    @property
    def extension(self) -> str:
        return {"image/jpeg": "jpg", "image/png": "png", "image/gif": "gif", "image/webp": "webp"}[self.mime_type]

    @property
    def format(self) -> str:
        return self.extension.upper().replace("JPG", "JPEG")

    def describe(self) -> str:
        """'JPEG, 1,912,334 bytes, 2309x1732 (scaled down from 4000x3000, metadata removed)'."""
        done = f" ({', '.join(self.steps)})" if self.steps else ""
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


def prepare(source: Source, alt: str, limits: ImageLimits, *, name: Optional[str] = None) -> PreparedImage:
    """`source` (a path or a binary stream) as `limits.network` takes it, with `alt` as its alt
    text. Raises `PictureError` naming the file when it cannot be made to fit."""
    from PIL import Image, UnidentifiedImageError

    name = name or (str(source) if isinstance(source, (str, Path)) else getattr(source, "name", "the picture"))
    if not alt.strip():
        raise PictureError(f"{name} has no alt text: describe what it shows, for people who cannot see it")
    if len(alt) > limits.max_alt:
        raise PictureError(
            f"the alt text of {name} is {len(alt)} characters; {limits.where} takes {limits.max_alt}: shorten it"
        )
    try:
        image = Image.open(source)
    except FileNotFoundError:
        raise PictureError(f"{name} does not exist: check the path (it is read from the tweets file's folder)") from None
    except UnidentifiedImageError:
        raise PictureError(f"{name} is not a picture (JPEG, PNG, GIF or WebP): replace it or fix its name") from None
    except Image.DecompressionBombError:
        raise PictureError(f"{name} has too many pixels to open safely: scale it down first") from None
    except OSError as exc:
        raise PictureError(f"cannot read {name}: {exc.strerror or exc}: check the file") from None
    # close(), not `with`: _fitted closes the image early to free its pixels, and before Pillow
    # 10 (Debian's python3-pil on Bookworm is 9.4) leaving `with` on a closed image raises.
    try:
        if getattr(image, "is_animated", False) and getattr(image, "n_frames", 1) > 1:
            return _as_is(source, image.format, alt, limits, name)
        return _fitted(image, alt, limits, name)
    except (OSError, SyntaxError, ValueError) as exc:  # Pillow's word for a damaged file: truncated data, bad tables
        raise PictureError(f"{name} is damaged and cannot be read ({exc}): export it again") from None
    finally:
        image.close()


def _as_is(source: Source, fmt: Optional[str], alt: str, limits: ImageLimits, name: str) -> PreparedImage:
    """An animated GIF, sent unchanged where the network shows animated GIFs (re-encoding it
    would lose its frames or grow it)."""
    where = limits.where
    if fmt != "GIF" or not limits.animated_gif_bytes:
        raise PictureError(
            f"{name} is animated; {where} shows no animated pictures: use a still picture, or post it elsewhere"
        )
    data = _read(source)
    if len(data) > limits.animated_gif_bytes:
        raise PictureError(
            f"{name} is an animated GIF of {len(data):,} bytes; {where} takes {limits.animated_gif_bytes:,}: "
            "make it shorter or smaller (fewer frames, fewer colours)"
        )
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        width, height = image.size
    return PreparedImage(limits.network, data, "image/gif", width, height, alt, name, ("animated GIF, sent as it is",))


def _fitted(image: Any, alt: str, limits: ImageLimits, name: str) -> PreparedImage:
    from PIL import Image

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
        draft = min(scale, math.sqrt(limits.max_bytes / max(1, _file_size(image))))
        if raw_width * raw_height > DECODE_LIMIT:
            # A photo this big would need 250 MiB and more at full size: decode it at the largest
            # 1/2^n that stays under the limit, whatever the network would take.
            draft = min(draft, 2.0 ** math.floor(math.log2(math.sqrt(DECODE_LIMIT / (raw_width * raw_height)))))
        if draft < 1:
            image.draft("L" if image.mode == "L" else "RGB", (math.ceil(raw_width * draft), math.ceil(raw_height * draft)))
    image.load()
    lossless = fmt in _LOSSLESS or "A" in image.getbands() or "transparency" in image.info
    profile = image.info.get("icc_profile")
    # Scaled as stored, then turned: turning a smaller picture takes less memory.
    target = (max(1, int(raw_width * scale)), max(1, int(raw_height * scale)))
    picture = image
    if picture.width > target[0] or picture.height > target[1]:
        picture = picture.resize(target, Image.Resampling.LANCZOS)
        image.close()  # frees the decoded pixels now, not when the file is closed
    picture = _upright(picture, orientation, steps)
    picture = _srgb(picture, profile, steps)
    picture = _pixels_only(picture, keep_palette=lossless)
    if picture.size != (width, height):
        steps.insert(0, f"scaled down from {width}x{height} to fit {limits.where}'s limits")
    steps.append("metadata removed")

    if lossless and "image/png" in limits.mime_types:
        data = _encode(picture, "PNG")
        if len(data) <= limits.max_bytes:
            return _made(limits, data, "image/png", picture, alt, name, steps)
        steps.append(f"as PNG {len(data):,} bytes, too big: made a JPEG")
    return _jpeg(picture, alt, limits, name, steps, (width, height))


def _jpeg(picture: Any, alt: str, limits: ImageLimits, name: str, steps: List[str], original: Tuple[int, int]) -> PreparedImage:
    """A JPEG within `limits.max_bytes`: quality 88, then 80, then smaller and smaller."""
    from PIL import Image

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
        picture = picture.resize(size, Image.Resampling.LANCZOS)
        data = _encode(picture, "JPEG", quality=quality)
    else:
        raise PictureError(f"{name} cannot be made small enough for {limits.where} ({limits.max_bytes:,} bytes)")
    steps[:] = [step for step in steps if not step.startswith("scaled down")]
    if picture.size != original:
        steps.insert(0, f"scaled down from {original[0]}x{original[1]} to fit {limits.where}'s limits")
    steps.append(f"JPEG quality {quality}")
    return _made(limits, data, "image/jpeg", picture, alt, name, steps)


def _made(limits: ImageLimits, data: bytes, mime: str, picture: Any, alt: str, name: str, steps: List[str]) -> PreparedImage:
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
            picture, io.BytesIO(profile), ImageCms.createProfile("sRGB"), outputMode="RGBA" if picture.mode == "RGBA" else "RGB"
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


def _flattened(picture: Any) -> Any:
    """A picture JPEG can hold: transparent parts become white (as the apps show them)."""
    from PIL import Image

    if picture.mode in ("RGB", "L"):
        return picture
    if "A" in picture.getbands() or "transparency" in picture.info:
        rgba = picture.convert("RGBA")
        white = Image.new("RGB", rgba.size, "white")
        white.paste(rgba, mask=rgba.getchannel("A"))
        return white
    return picture.convert("RGB")


def _encode(picture: Any, fmt: str, **options: Any) -> bytes:
    buffer = io.BytesIO()
    if fmt == "JPEG":
        picture.save(buffer, "JPEG", optimize=True, **options)
    else:
        picture.save(buffer, "PNG", optimize=picture.width * picture.height <= 4_000_000)
    return buffer.getvalue()


def _file_size(image: Any) -> int:
    """The bytes of the file `image` was opened from."""
    stream = image.fp
    position = stream.tell()
    stream.seek(0, io.SEEK_END)
    size = stream.tell()
    stream.seek(position)
    return size


def _read(source: Source) -> bytes:
    if isinstance(source, (str, Path)):
        return Path(source).read_bytes()
    source.seek(0)
    return source.read()

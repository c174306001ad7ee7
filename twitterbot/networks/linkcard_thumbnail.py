"""A link card's thumbnail: a picture from the web, metadata dropped, made to fit a byte limit.

A stand-in until the pictures' own preparation code lands (twitterbot/pictures/, issue 26): then
`fit_thumbnail` should call it and this module go. Pillow is imported here only, when a card has a
picture, so a run without one never loads it.
"""

from __future__ import annotations

import io
from typing import Tuple

__all__ = ["ThumbnailError", "fit_thumbnail"]

MAX_SIDE = 2000  # pixels: a card shows its picture small; Bluesky's app sends no larger
MAX_PIXELS = 50_000_000  # refuse bigger pictures before decoding them (a Pi has little memory)
_QUALITIES = (85, 75, 65)


class ThumbnailError(Exception):
    """The picture cannot be made a thumbnail (not an image, damaged, too many pixels, no Pillow)."""


def fit_thumbnail(data: bytes, *, max_bytes: int) -> Tuple[bytes, str, int, int]:
    """`data` (JPEG, PNG, GIF or WebP) as a JPEG of at most `max_bytes` and `MAX_SIDE` pixels a side:
    turned upright by its EXIF orientation, then saved without any metadata (no EXIF, no GPS).
    Returns (bytes, mime type, width, height); raises ThumbnailError."""
    try:
        from PIL import Image, ImageOps
    except ImportError:
        raise ThumbnailError("Pillow is not installed: pip install -r requirements.txt") from None
    try:
        with Image.open(io.BytesIO(data), formats=("JPEG", "PNG", "GIF", "WEBP")) as opened:
            if opened.width * opened.height > MAX_PIXELS:
                raise ThumbnailError(f"{opened.width}x{opened.height} pixels is over {MAX_PIXELS:,}")
            opened.draft("RGB", (MAX_SIDE, MAX_SIDE))  # a JPEG decodes at 1/2, 1/4 or 1/8 size: less memory
            image = ImageOps.exif_transpose(opened)
            image = _flatten(image)
    except ThumbnailError:
        raise
    except (OSError, ValueError, Image.DecompressionBombError, SyntaxError) as exc:
        raise ThumbnailError(f"not an image Pillow can read ({type(exc).__name__}: {exc})") from None
    image.thumbnail((MAX_SIDE, MAX_SIDE))
    while True:
        for quality in _QUALITIES:
            out = io.BytesIO()
            image.save(out, "JPEG", quality=quality, optimize=True)  # no exif= given: none is written
            if out.tell() <= max_bytes:
                return out.getvalue(), "image/jpeg", image.width, image.height
        if image.width < 64 or image.height < 64:
            raise ThumbnailError(f"it does not fit {max_bytes:,} bytes even at {image.width}x{image.height}")
        image = image.resize((max(1, image.width * 3 // 4), max(1, image.height * 3 // 4)))


def _flatten(image):  # type: ignore[no-untyped-def]
    """RGB, with any transparency laid on white (JPEG has none)."""
    from PIL import Image

    if image.mode in ("RGBA", "LA", "P", "PA") or "transparency" in image.info:
        rgba = image.convert("RGBA")
        background = Image.new("RGB", rgba.size, (255, 255, 255))
        background.paste(rgba, mask=rgba.getchannel("A"))
        return background
    return image.convert("RGB")

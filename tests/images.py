"""Test pictures, made by the tests (no binary fixtures): a phone photo with GPS, a tall
screenshot, an animated GIF, a damaged JPEG and a text file named .png."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image, ImageDraw

GPS = {1: "N", 2: (51.0, 30.0, 12.5), 3: "W", 4: (0.0, 7.0, 39.0)}


def photo(path: Path, size=(4000, 3000), orientation: int = 6, quality: int = 92) -> Path:
    """A photo as a phone stores it: sideways (orientation 6), with GPS and a camera name in its
    EXIF, textured so that it compresses like a real photo. The top-left of the stored picture
    is red, so the upright picture has red at its top right."""
    width, height = size
    sky = Image.linear_gradient("L").resize(size).convert("RGB")
    noise = Image.effect_noise(size, 40).convert("RGB")
    picture = Image.blend(sky, noise, 0.35)
    ImageDraw.Draw(picture).rectangle((0, 0, width // 5, height // 5), fill=(230, 20, 20))
    exif = Image.Exif()
    exif[0x0112] = orientation
    exif[0x010F] = "PhoneMaker"
    exif[0x8825] = GPS
    picture.save(path, "JPEG", quality=quality, exif=exif.tobytes())
    return path


def screenshot(path: Path, size=(1080, 6000)) -> Path:
    """A tall PNG screenshot: flat colours and lines of 'text', with a text chunk and EXIF."""
    from PIL import PngImagePlugin

    picture = Image.new("RGB", size, (250, 250, 250))
    draw = ImageDraw.Draw(picture)
    for top in range(40, size[1] - 40, 60):
        draw.rectangle((40, top, 40 + (top * 7) % (size[0] - 80), top + 24), fill=(40, 40, 60))
    info = PngImagePlugin.PngInfo()
    info.add_text("Author", "Somebody Private")
    exif = Image.Exif()
    exif[0x8825] = GPS
    picture.save(path, "PNG", pnginfo=info, exif=exif.tobytes())
    return path


def animated_gif(path: Path, frames: int = 4) -> Path:
    pictures = []
    for frame in range(frames):
        picture = Image.new("RGB", (120, 80), "white")
        ImageDraw.Draw(picture).ellipse((frame * 20, 20, frame * 20 + 40, 60), fill=(200, 30, 30))
        pictures.append(picture)
    pictures[0].save(path, "GIF", save_all=True, append_images=pictures[1:], duration=200, loop=0)
    return path


def damaged(path: Path) -> Path:
    """A JPEG cut off after its first kilobytes: the header reads, the pixels do not."""
    buffer = io.BytesIO()
    Image.effect_noise((800, 600), 50).convert("RGB").save(buffer, "JPEG")
    path.write_bytes(buffer.getvalue()[:2000])
    return path


def text_named_png(path: Path) -> Path:
    path.write_text("this is not a picture\n")
    return path


def has_location(data: bytes) -> bool:
    """Whether a picture's bytes still hold EXIF (and so maybe GPS) or any other metadata."""
    with Image.open(io.BytesIO(data)) as picture:
        exif = picture.getexif()
        return (
            bool(exif)
            or 0x8825 in exif
            or any(
                key in picture.info for key in ("exif", "xmp", "XML:com.adobe.xmp", "icc_profile", "Author", "comment")
            )
            or b"PhoneMaker" in data
            or b"Exif\x00\x00" in data
        )


def text_bomb_png(path: Path) -> Path:
    """A small PNG whose compressed text chunk expands past Pillow's limit (MAX_TEXT_CHUNK)."""
    from PIL import PngImagePlugin

    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", "a" * 2_000_000, zip=True)
    Image.new("RGB", (40, 30), "white").save(path, "PNG", pnginfo=info)
    return path


def many_pixels_png(path: Path, size=(12000, 12000)) -> Path:
    """A PNG of many pixels in few bytes (one bit a pixel, all black): a decompression bomb."""
    Image.new("1", size).save(path, "PNG")
    return path


def gif_with_metadata(path: Path) -> Path:
    """An animated GIF that carries a comment and an XMP packet with a place in it."""
    animated_gif(path)
    data = path.read_bytes()
    xmp = b"<x:xmpmeta><exif:GPSLatitude>51,30.2N</exif:GPSLatitude></x:xmpmeta>"
    block = b"\x21\xff\x0bXMP DataXMP" + bytes([len(xmp)]) + xmp + b"\x00"
    comment = b"\x21\xfe" + bytes([len(b"Taken at 12 Acacia Avenue")]) + b"Taken at 12 Acacia Avenue" + b"\x00"
    at = data.index(b"\x21\xff\x0bNETSCAPE2.0")
    path.write_bytes(data[:at] + block + comment + data[at:])
    return path

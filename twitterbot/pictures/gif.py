"""A GIF read block by block, without decoding a pixel: its size, its frames, and a copy without
the blocks that carry nothing to see (comments, XMP, colour profiles, any other application's data).

An animated GIF is sent as it is (re-encoding it would lose frames or grow it), so this is how its
metadata is dropped: a comment or an XMP packet may hold a name or a place. Only the blocks a
viewer needs are kept: the header, the colour tables, each frame with its timing (the graphic
control extension), plain text drawn on a frame, and the loop count (NETSCAPE2.0 / ANIMEXTS1.0)::

    gif = read_gif(data)      # ValueError for a damaged file
    gif.width, gif.height, gif.frames, gif.data
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Tuple

__all__ = ["Gif", "read_gif"]

_IMAGE, _EXTENSION, _TRAILER = 0x2C, 0x21, 0x3B
_COMMENT, _APPLICATION = 0xFE, 0xFF
_LOOPS = (b"NETSCAPE2.0", b"ANIMEXTS1.0")  # the loop count, which the animation needs


@dataclass(frozen=True)
class Gif:
    """A GIF's logical screen size, its number of frames and its bytes without metadata."""

    width: int
    height: int
    frames: int
    data: bytes


def read_gif(data: bytes) -> Gif:
    """`data` read as a GIF; ValueError (saying where) when it is not one or is cut short."""
    if data[:6] not in (b"GIF87a", b"GIF89a") or len(data) < 13:
        raise ValueError("not a GIF")
    width, height = int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little")
    position = 13 + _table_size(data[10])
    kept: List[bytes] = [data[:position]]
    frames = 0
    while True:
        if position >= len(data) and frames:
            kept.append(b";")  # many encoders leave out the trailer; viewers do without it
            break
        if position >= len(data):
            raise ValueError(f"the GIF ends at byte {position:,} before its first frame")
        block = data[position]
        if block == _TRAILER:
            kept.append(data[position : position + 1])
            break
        if block == _IMAGE:
            end = _frame_end(data, position)
            frames += 1
            kept.append(data[position:end])
        elif block == _EXTENSION:
            end, keep = _extension(data, position)
            if keep:
                kept.append(data[position:end])
        else:
            raise ValueError(f"the GIF has an unknown block 0x{block:02x} at byte {position:,}")
        position = end
    if not frames:
        raise ValueError("the GIF has no frame")
    return Gif(width, height, frames, b"".join(kept))


def _table_size(packed: int) -> int:
    """The bytes of the colour table a descriptor's packed byte announces (none if its top bit is clear)."""
    return 3 * 2 ** ((packed & 0x07) + 1) if packed & 0x80 else 0


def _frame_end(data: bytes, position: int) -> int:
    """Where the frame starting at `position` (its image descriptor) ends."""
    if position + 10 > len(data):
        raise ValueError(f"the GIF is cut short in a frame at byte {position:,}")
    start = position + 10 + _table_size(data[position + 9]) + 1  # the descriptor, its colours, the LZW code size
    return _sub_blocks_end(data, start)


def _extension(data: bytes, position: int) -> Tuple[int, bool]:
    """Where the extension at `position` ends, and whether a viewer needs it."""
    if position + 2 > len(data):
        raise ValueError(f"the GIF is cut short in an extension at byte {position:,}")
    label = data[position + 1]
    end = _sub_blocks_end(data, position + 2)
    if label == _COMMENT:
        return end, False
    if label == _APPLICATION:
        size = data[position + 2]
        return end, data[position + 3 : position + 3 + size] in _LOOPS
    return end, True


def _sub_blocks_end(data: bytes, position: int) -> int:
    """The end of a chain of sub-blocks (each a length byte and that many bytes; 0 ends the chain)."""
    while True:
        if position >= len(data):
            raise ValueError(f"the GIF is cut short at byte {position:,}")
        size = data[position]
        position += 1 + size
        if size == 0:
            return position

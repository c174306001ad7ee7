"""What a network accepts as a picture: bytes, pixels, formats, animated GIFs, alt text.

Plain data, cheap to import (no Pillow). Each network states its own limits in its module
(`network.image_limits()`); a Mastodon server's are its own, read online::

    limits = config[POST_TO][0].image_limits()
    limits.max_bytes, limits.max_alt
    strictest_alt([network.image_limits() for network in config[POST_TO]])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, Sequence

__all__ = ["ImageLimits", "MAX_IMAGES", "STILLS", "VIDEO_ALONE", "strictest_alt"]

# Every network the bot posts to takes up to four pictures on a post.
MAX_IMAGES = 4
# ... or one video, alone: X (one video or up to 4 pictures), Mastodon and Bluesky alike.
VIDEO_ALONE = "every network takes one video on a post, without pictures"

STILLS = frozenset({"image/jpeg", "image/png", "image/webp", "image/gif"})


@dataclass(frozen=True)
class ImageLimits:
    """One network's limits for one picture. `max_pixels` is width times height; `max_side` the
    longest side the bot sends (larger is scaled down: the network would only shrink it);
    `animated_gif_bytes` is None where an animated GIF cannot be posted as one."""

    network: str
    max_bytes: int
    max_pixels: int
    max_side: int
    max_alt: int  # characters of alt text
    mime_types: FrozenSet[str] = STILLS
    animated_gif_bytes: int = 0  # 0: the network shows no animated GIFs
    source: str = "built in"  # where the figures come from, for `check`
    title: str = ""  # the network's name as people write it, for messages
    # Videos (and animated GIFs sent as videos): bytes (0: the network takes none), seconds
    # (0: no limit of its own), the longest side and the pixels sent (more is scaled down; every
    # network gets an MP4), and the alt text's limit (0: `max_alt`). Every network takes one video
    # on a post, alone (`VIDEO_ALONE`).
    video_bytes: int = 0
    video_seconds: float = 0.0
    video_side: int = 1920
    video_pixels: int = 1920 * 1200
    video_alt: int = 0

    @property
    def gif_as_video(self) -> bool:
        """Whether an animated GIF goes as a video: the network takes videos but shows no GIF moving."""
        return not self.animated_gif_bytes and bool(self.video_bytes)

    @property
    def where(self) -> str:
        return self.title or self.network


def strictest_alt(limits: Sequence[ImageLimits]) -> ImageLimits:
    """The limits with the smallest alt-text limit among `limits` (a line goes to all of them)."""
    return min(limits, key=lambda each: each.max_alt)

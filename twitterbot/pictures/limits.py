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

__all__ = ["ImageLimits", "MAX_IMAGES", "STILLS", "strictest_alt"]

# Every network the bot posts to takes up to four pictures on a post.
MAX_IMAGES = 4

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

    @property
    def where(self) -> str:
        return self.title or self.network


def strictest_alt(limits: Sequence[ImageLimits]) -> ImageLimits:
    """The limits with the smallest alt-text limit among `limits` (a line goes to all of them)."""
    return min(limits, key=lambda each: each.max_alt)

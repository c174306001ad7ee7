"""What each network accepts as a picture: bytes, pixels, formats, animated GIFs, alt text.

Plain data, cheap to import (no Pillow). Mastodon's limits are each server's own: a run that is
online reads them from the server (`mastodon_limits` of its instance reply); offline (`check`,
`--dry-run`) the bot assumes the conservative defaults below, which any Mastodon 3.5+ server takes::

    limits = LIMITS["bluesky"]
    limits.max_bytes, limits.max_alt                # 2000000, 2000
    strictest_alt(("x", "bluesky"))                 # 1000, "x"
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import FrozenSet, Mapping, Optional, Tuple

__all__ = ["ImageLimits", "LIMITS", "MAX_IMAGES", "limits_for", "mastodon_limits", "strictest_alt"]

# Every network takes up to four pictures on a post (X, Mastodon and Bluesky alike).
MAX_IMAGES = 4

_STILLS = frozenset({"image/jpeg", "image/png", "image/webp", "image/gif"})


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
    mime_types: FrozenSet[str] = _STILLS
    animated_gif_bytes: Optional[int] = None
    source: str = "built in"  # where the figures come from, for `check`
    title: str = ""  # the network's name as people write it, for messages

    @property
    def where(self) -> str:
        return self.title or self.network


# X: 5 MB per image (JPG, PNG, GIF, WEBP), animated GIFs up to 15 MB but only through the chunked
# upload (the bot uses the one-request upload, so 5 MB for them too); alt text 1,000 characters.
# X shows pictures at most 4,096 pixels wide or high: the bot sends no more.
# Bluesky: a blob of app.bsky.embed.images is at most 2,000,000 bytes (the lexicon since April
# 2026); the official app caps alt text at 2,000 characters and pictures at 4,000 pixels, and
# shows no animated GIFs as images. Mastodon: the defaults of Mastodon 3.5 (8 MiB, 16.7
# megapixels; 4.x allows 16 MiB and 33 megapixels) until the server says otherwise; alt text
# ("description") 1,500 characters, the server's MAX_DESCRIPTION_LENGTH.
LIMITS: Mapping[str, ImageLimits] = {
    "x": ImageLimits("x", 5_000_000, 4096 * 4096, 4096, 1000, animated_gif_bytes=5_000_000, title="X"),
    "mastodon": ImageLimits(
        "mastodon", 8 * 1024 * 1024, 16_777_216, 8192, 1500, animated_gif_bytes=8 * 1024 * 1024, title="Mastodon"
    ),
    "bluesky": ImageLimits("bluesky", 2_000_000, 4000 * 4000, 4000, 2000, title="Bluesky"),
}


def limits_for(network: str) -> ImageLimits:
    """A network's picture limits; the dry-run backend takes X's, the strictest in bytes but Bluesky."""
    return LIMITS.get(network, LIMITS["x"])


def strictest_alt(networks: Tuple[str, ...]) -> Tuple[int, str]:
    """The smallest alt-text limit among `networks`, and whose it is."""
    limit = min((limits_for(network) for network in networks), key=lambda limits: limits.max_alt)
    return limit.max_alt, limit.network


def mastodon_limits(instance: Mapping[str, object], base: Optional[ImageLimits] = None) -> ImageLimits:
    """The limits a Mastodon server states in its `/api/v2/instance` reply
    (configuration.media_attachments), falling back to the defaults for what it leaves out."""
    base = base or LIMITS["mastodon"]
    configuration = instance.get("configuration") or {}
    media = configuration.get("media_attachments") or {} if isinstance(configuration, Mapping) else {}
    if not isinstance(media, Mapping) or not media:
        return base
    size = media.get("image_size_limit")
    matrix = media.get("image_matrix_limit")
    alt = media.get("description_limit")
    types = media.get("supported_mime_types")
    stills = frozenset(t for t in types if isinstance(t, str) and t.startswith("image/")) if types else base.mime_types
    size = int(size) if isinstance(size, int) and size > 0 else base.max_bytes
    return replace(
        base,
        max_bytes=size,
        max_pixels=int(matrix) if isinstance(matrix, int) and matrix > 0 else base.max_pixels,
        max_alt=int(alt) if isinstance(alt, int) and alt > 0 else base.max_alt,
        mime_types=stills & _STILLS or base.mime_types,
        animated_gif_bytes=size if "image/gif" in stills else None,
        source="the server's instance settings",
    )

"""What a Mastodon server says of itself in its instance endpoint: its status length limit and its
picture limits. Imported by the poster (`poster.py`), which asks the server."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Optional

from .media import image_limits

if TYPE_CHECKING:
    from ...pictures.limits import ImageLimits

__all__ = ["limits_from_instance", "max_characters"]


def max_characters(info: Any) -> Optional[int]:
    """The status length limit in an instance endpoint's answer (v2 and v1 keep it in
    configuration.statuses; Pleroma and glitch-soc's v1 say max_toot_chars)."""
    statuses = ((info or {}).get("configuration") or {}).get("statuses") or {}
    for value in (statuses.get("max_characters"), (info or {}).get("max_toot_chars")):
        if isinstance(value, int) and value > 0:
            return value
    return None


def limits_from_instance(instance: Mapping[str, Any]) -> ImageLimits:
    """The picture limits a server states in its ``/api/v2/instance`` reply
    (configuration.media_attachments), Mastodon's defaults for what it leaves out."""
    from dataclasses import replace

    from ...pictures.limits import STILLS

    base = image_limits()
    configuration = instance.get("configuration") or {}
    media = configuration.get("media_attachments") if isinstance(configuration, Mapping) else None
    if not isinstance(media, Mapping) or not media:
        return base

    def number(name: str, default: int) -> int:
        value = media.get(name)
        return value if isinstance(value, int) and value > 0 else default

    types = media.get("supported_mime_types")
    stills = frozenset(t for t in types if isinstance(t, str)) & STILLS if types else base.mime_types
    size = number("image_size_limit", base.max_bytes)
    return replace(
        base,
        max_bytes=size,
        max_pixels=number("image_matrix_limit", base.max_pixels),
        max_alt=number("description_limit", base.max_alt),
        mime_types=stills or base.mime_types,
        animated_gif_bytes=size if "image/gif" in stills else 0,
        video_bytes=number("video_size_limit", base.video_bytes),
        video_pixels=number("video_matrix_limit", base.video_pixels),
        source="the server's instance settings",
    )

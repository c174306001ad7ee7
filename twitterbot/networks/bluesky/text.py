"""A Bluesky post's text: at most 300 graphemes and 3,000 bytes of UTF-8 (``app.bsky.feed.post``'s
lexicon), measured without the SDK::

    measure("Hi 👋🏽 from my Pi").length   # 15: an emoji with a skin tone is one grapheme
"""

from __future__ import annotations

from .. import Fit

__all__ = ["MAX_BYTES", "MAX_GRAPHEMES", "measure"]

MAX_GRAPHEMES = 300  # app.bsky.feed.post's text: maxGraphemes
MAX_BYTES = 3000  # ... and maxLength (UTF-8 bytes)


def measure(text: str) -> Fit:
    """The text's length as Bluesky counts it (extended grapheme clusters, at most 300), and the
    byte rule (3,000 bytes of UTF-8) as the reason when that one fails."""
    from ..graphemes import count_graphemes

    size = len(text.encode("utf-8"))
    reason = None
    if size > MAX_BYTES:
        reason = f"{size:,} bytes in UTF-8, over Bluesky's {MAX_BYTES:,}-byte limit"
    return Fit("bluesky", count_graphemes(text), MAX_GRAPHEMES, "graphemes", reason)

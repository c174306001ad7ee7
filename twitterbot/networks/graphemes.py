"""Counting user-perceived characters (Unicode extended grapheme clusters), as Mastodon and
Bluesky count a post's length: an emoji with a skin tone, a flag or a family is one, not four.

    count_graphemes("👩‍👩‍👧 hi")   # 4

Python's standard library has no grapheme segmentation, so `uniseg` (pure Python, Unicode 16)
does it; it is imported on first use, so a run that posts only to X never loads it.
"""

from __future__ import annotations

__all__ = ["count_graphemes"]


def count_graphemes(text: str) -> int:
    """The number of extended grapheme clusters in `text` (UAX #29)."""
    if text.isascii():
        # In ASCII only CR LF joins two characters into one cluster.
        return len(text) - text.count("\r\n")
    from uniseg.graphemecluster import grapheme_clusters

    return sum(1 for _ in grapheme_clusters(text))

"""The record of one Bluesky post: its text's facets (clickable links, hashtags, mentions), the
reply it answers, and its embed (the pictures, or a link card's app.bsky.embed.external). Imported
by the poster (`networks/bluesky.py`) with the atproto SDK, when a post is made."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable, Optional

from ..errors import PostError

if TYPE_CHECKING:
    from atproto import Client

    from .bluesky import PostRef
    from .linkcard import Card

__all__ = ["external_embed", "post_record"]

log = logging.getLogger(f"{__package__}.bluesky")  # its lines log as the poster's do


def post_record(
    client: Client,
    text: str,
    created_at: str,
    parent: Optional[PostRef],
    embed: Any,
    card: Optional[Card],
    call: Callable[..., Any],
) -> Any:
    """The app.bsky.feed.post record; `call` runs an SDK step the poster's way (errors as PostErrors)."""
    from atproto import models

    reply = None
    if parent:
        reply = models.AppBskyFeedPost.ReplyRef(
            root=models.ComAtprotoRepoStrongRef.Main(uri=parent.root_uri, cid=parent.root_cid),
            parent=models.ComAtprotoRepoStrongRef.Main(uri=parent.uri, cid=parent.cid),
        )
    facets = client.detect_facets(text) or None  # resolves each @handle; one that does not stays text
    if embed is None and card is not None:
        embed = external_embed(client, card, call)
    return models.AppBskyFeedPost.Record(created_at=created_at, text=text, facets=facets, reply=reply, embed=embed)


def external_embed(client: Client, card: Card, call: Callable[..., Any]) -> Any:
    """The app.bsky.embed.external of `card`, its thumbnail uploaded as a blob. A refused upload
    costs the thumbnail, not the post."""
    from atproto import models

    thumb = None
    if card.thumb is not None:
        try:
            thumb = call(client.upload_blob, card.thumb.data).blob
        except PostError as exc:
            log.warning("link card: the thumbnail was not uploaded (%s): posting the card without it", exc.summary)
    external = models.AppBskyEmbedExternal.External(
        uri=card.uri, title=card.title, description=card.description, thumb=thumb
    )
    return models.AppBskyEmbedExternal.Main(external=external)

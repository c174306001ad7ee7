"""The record of one Bluesky post: its key, the reply it answers (`PostRef`), its text's facets
(clickable links, hashtags, mentions) and its embed (the pictures, or the card of its first link as
an app.bsky.embed.external). Imported by the poster (`poster.py`), which builds it with the atproto
SDK when a post is made::

    record_key = new_record_key()                    # the same key on every try of one post
    found = fetch_link_card("see https://example.com/pegs")   # what a dry run shows, too
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Optional

from ...errors import ErrorKind, ExitStatus, PostError
from .linkcard import Card, CardResult, Limits, fetch_card

if TYPE_CHECKING:
    from atproto import Client

__all__ = [
    "COLLECTION",
    "PostRef",
    "external_embed",
    "fetch_link_card",
    "first_link",
    "new_record_key",
    "post_record",
    "post_url",
]

COLLECTION = "app.bsky.feed.post"

log = logging.getLogger(__package__)  # its lines log as the poster's do


def post_url(handle: str, uri: str) -> str:
    """The bsky.app link of a post from its at:// URI."""
    return f"https://bsky.app/profile/{handle}/post/{uri.rsplit('/', 1)[-1]}"


# Record keys are TIDs: 53 bits of microseconds since 1970 and 10 bits of clock id, written in
# base32 "sortable" (13 characters), as the atproto spec defines them.
_S32 = "234567abcdefghijklmnopqrstuvwxyz"


def new_record_key(now: Optional[float] = None, clock_id: Optional[int] = None) -> str:
    """A fresh TID to use as one post's record key (the same key on every retry of that post)."""
    micros = int((time.time() if now is None else now) * 1_000_000)
    import random

    clock = random.getrandbits(10) if clock_id is None else clock_id & 0x3FF
    value = ((micros & ((1 << 53) - 1)) << 10) | clock
    return "".join(_S32[(value >> (5 * i)) & 31] for i in range(12, -1, -1))


class PostRef(NamedTuple):
    """What a reply needs to know of its parent: the parent's and the thread root's uri and cid.
    It travels as `PostResult.post_id`, written ``"<uri> <cid> <root uri> <root cid>"``."""

    uri: str
    cid: str
    root_uri: str
    root_cid: str

    def encode(self) -> str:
        return " ".join(self)

    @classmethod
    def decode(cls, text: str) -> PostRef:
        parts = text.split()
        if len(parts) != 4 or not (parts[0].startswith("at://") and parts[2].startswith("at://")):
            raise PostError(
                f"{text!r} is not a Bluesky post reference (expected '<at:// uri> <cid> <root uri> <root cid>'): "
                "the thread to reply to was recorded by another network or is damaged; start a new thread",
                kind=ErrorKind.BAD_REPLY_TO,
                exit_status=ExitStatus.DATA_ERROR,
            )
        return cls(*parts)


def first_link(text: str) -> Optional[str]:
    """The first link of `text` as its facets find it (the SDK's own detection, which needs no
    connection): the page a link card shows."""
    from atproto_client.utils.facet_detection import detect_facets

    for facet in detect_facets(text):
        for feature in facet.features:
            uri = getattr(feature, "uri", None)
            if uri:
                return uri
    return None


def fetch_link_card(text: str, *, limits: Optional[Limits] = None) -> Optional[CardResult]:
    """The card a post of `text` would carry (its first link's page), or why it has none; None
    when the text has no link. What a dry run and `check --online` show."""
    link = first_link(text)
    return fetch_card(link, limits=limits) if link else None


def post_record(
    client: Client,
    text: str,
    created_at: str,
    parent: Optional[PostRef],
    embed: Any,
    card: Optional[Card],
    call: Callable[..., Any],
    language: Optional[str] = None,
) -> Any:
    """The app.bsky.feed.post record, in `language` (its `langs`) when given; `call` runs an SDK
    step the poster's way (errors as PostErrors)."""
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
    langs = [language] if language else None
    return models.AppBskyFeedPost.Record(
        created_at=created_at, text=text, facets=facets, reply=reply, embed=embed, langs=langs
    )


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

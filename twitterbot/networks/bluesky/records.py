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
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, List, NamedTuple, Optional, Sequence, Tuple

from ...errors import ErrorKind, ExitStatus, PostError
from .linkcard import Card, CardResult, Limits, fetch_card

if TYPE_CHECKING:
    from atproto_client import Client

__all__ = [
    "BOT_LABEL",
    "COLLECTION",
    "PROFILE",
    "among",
    "PostRef",
    "external_embed",
    "fetch_link_card",
    "first_link",
    "new_record_key",
    "post_record",
    "post_url",
    "self_labels",
    "text_of",
    "with_bot_label",
]

COLLECTION = "app.bsky.feed.post"
PROFILE = "app.bsky.actor.profile"  # the account's profile: one record, under the key "self"
BOT_LABEL = "bot"  # the self-label that says an account is automated
# A post's createdAt is the poster's clock when it built the record: a look-up takes posts made
# from this long before the attempt was recorded.
CLOCK_SLACK_SECONDS = 120

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
    attached: Tuple[Any, Optional[Card]],
    call: Callable[..., Any],
    language: Optional[str] = None,
    labels: Sequence[str] = (),
) -> Any:
    """The app.bsky.feed.post record, in `language` (its `langs`) when given, with its embed or
    else its link card (`attached`) and its self-labels (`labels`: what its pictures show); `call`
    runs an SDK step the poster's way (errors as PostErrors)."""
    from atproto_client import models

    embed, card = attached
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
    selfs = None
    if labels:
        values = [models.ComAtprotoLabelDefs.SelfLabel(val=value) for value in labels]
        selfs = models.ComAtprotoLabelDefs.SelfLabels(values=values)
    return models.AppBskyFeedPost.Record(
        created_at=created_at, text=text, facets=facets, reply=reply, embed=embed, langs=langs, labels=selfs
    )


def external_embed(client: Client, card: Card, call: Callable[..., Any]) -> Any:
    """The app.bsky.embed.external of `card`, its thumbnail uploaded as a blob. A refused upload
    costs the thumbnail, not the post."""
    from atproto_client import models

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


def among(
    records: Sequence[Any],
    text: str,
    sent_at: datetime,
    result: Callable[..., Any],
    *,
    full: bool,
    parent: Optional[PostRef] = None,
    any_reply: bool = False,
) -> Any:
    """A look-up through the account's last posts (newest first): found when one has `text`, was
    made since `sent_at` (less the clock slack) and answers `parent` (None: it answers none;
    `any_reply`: not compared, for an attempt recorded before the history kept what it answered):
    another mention's reply with the same words is another post. Not found when the page reaches back past
    `sent_at`, or `full` (it holds every post), and every post on it could be read; else nobody
    can tell (a post whose text or time cannot be read may be the one)."""
    from .. import LookUp

    since = sent_at.timestamp() - CLOCK_SLACK_SECONDS
    oldest: Optional[float] = None
    unreadable = False
    for record in records:
        made = _timestamp(getattr(getattr(record, "value", None), "created_at", None))
        posted = text_of(record)
        if made is None or posted is None:
            unreadable = True
            continue
        oldest = made if oldest is None or made < oldest else oldest
        if posted == text and made >= since and (any_reply or answers(record) == (parent.uri if parent else None)):
            return LookUp(True, "found among the account's recent posts", result(text, record.uri, record.cid, parent))
    if unreadable:
        return LookUp(None, "the server's answer holds a post that could not be read")
    if full or (oldest is not None and oldest < since):
        return LookUp(False, "not found among the account's recent posts")
    return LookUp(None, "more posts since than one look-up reads")


def answers(record: Any) -> Optional[str]:
    """The uri of the post a record replies to (its ``reply.parent``), or None when it replies to none."""
    reply = getattr(getattr(record, "value", None), "reply", None)
    uri = getattr(getattr(reply, "parent", None), "uri", None)
    return uri if isinstance(uri, str) else None if reply is None else "?"


def text_of(record: Any) -> Optional[str]:
    """A record's post text, or None when it has none that is text (a record of a type the SDK
    does not know is a dict-like whose fields are anything, and refuses even to be compared)."""
    posted = getattr(getattr(record, "value", None), "text", None)
    return posted if isinstance(posted, str) else None


def _timestamp(text: Any) -> Optional[float]:
    """A record's ``createdAt`` as a time, or None when it is not one."""
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except (ValueError, OverflowError):
        return None


def self_labels(profile: Any) -> List[str]:
    """The self-labels a profile record carries ("bot", "!no-unauthenticated", ...)."""
    labels = getattr(profile, "labels", None) if profile is not None else None
    return [str(getattr(label, "val", "")) for label in (getattr(labels, "values", None) or [])]


def with_bot_label(profile: Any) -> Any:
    """The profile record with the ``bot`` self-label added and every other field kept; a new
    profile holding only the label when the account has none."""
    from atproto_client import models

    labels = [models.ComAtprotoLabelDefs.SelfLabel(val=value) for value in self_labels(profile) if value != BOT_LABEL]
    labels.append(models.ComAtprotoLabelDefs.SelfLabel(val=BOT_LABEL))
    selfs = models.ComAtprotoLabelDefs.SelfLabels(values=labels)
    if profile is None:
        return models.AppBskyActorProfile.Record(labels=selfs)
    return profile.model_copy(update={"labels": selfs})

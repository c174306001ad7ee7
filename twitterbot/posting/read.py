"""What a source read, and the one function that makes it a `Post`.

Every source of posts reads a text the same way (a tweets file's line, a grammar's expansion, a
reply rule's response, a job's report): its options (posting/options.py), its services' tags
(posting/tags.py) and its pictures (posting/images.py). What it read is an `Expansion`; its
`post` makes the `Post` the Delivery sends, and is the only place the tag fields are copied::

    read = Expansion(options, "Hello", tags=read_tags("{private} Hello"))
    post = read.post(key="{private} Hello", where="tweets.json expansion 'Hello'")
    post.visibility                           # 'private'

A new tag is a field on `Tagged` (tags.py) and its reader there; `post` copies every field
`Tagged` and `Post` share by name.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Dict, Mapping, Optional, Tuple

from .options import NO_OPTIONS, LineOptions

if TYPE_CHECKING:
    from ..delivery.post import Post
    from ..networks import Fit
    from ..pictures.prepare import Attachment
    from .images import LineImage
    from .tags import Tagged

__all__ = ["Expansion"]

# Fields `Tagged` and `Post` share that are not copied as tags: the text is the read text, and
# the language and warning are the options' (`read_expansion` merges the tags' into them).
_NOT_TAGS = frozenset({"text", "language", "warning"})


@dataclass(frozen=True)
class Expansion:
    """What a source read beyond its words: its line options (with the tags' warning and language
    merged in), its text without them, its pictures written as ``![alt](path)``, and its services'
    tags (None: it has none)."""

    options: LineOptions = NO_OPTIONS
    text: str = ""
    images: Tuple[LineImage, ...] = ()
    tags: Optional[Tagged] = None

    def post(
        self,
        *,
        key: Optional[str] = None,
        where: str = "a post",
        pictures: Optional[Tuple[Attachment, ...]] = None,
        fits: Tuple[Fit, ...] = (),
        networks: Optional[Tuple[str, ...]] = None,
        reply_to: Optional[Mapping[str, str]] = None,
        threads: bool = False,
        unfit: Optional[str] = None,
    ) -> Post:
        """The `Post` to deliver: recorded by `key` (default: its text), sent as its text, in its
        options' language and warning, with every tag field its tags set. `pictures`: every
        attachment it carries (its files', then those its tags drew or fetched; default: its
        files'). `networks`: where it goes (default: those `fits` measured, which its only and
        skip left in; no fits: every network of the delivery)."""
        from ..delivery.post import Post  # only a source that posts, or plans a post

        if pictures is None:
            pictures = tuple(image.attachment for image in self.images)
        if networks is None and fits:
            networks = tuple(fit.network for fit in fits)
        post = Post(
            key or self.text,
            self.text,
            pictures,
            self.options.language,
            self.options.warning,
            where=where,
            reply_to=reply_to or {},
            fits=fits,
            networks=networks,
            threads=threads,
        )
        changes: Dict[str, object] = {"unfit": unfit} if unfit is not None else {}
        if self.tags is not None:
            shared = {each.name for each in fields(Post)} - _NOT_TAGS
            changes.update(
                {each.name: getattr(self.tags, each.name) for each in fields(self.tags) if each.name in shared}
            )
        return replace(post, **changes) if changes else post

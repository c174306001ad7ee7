"""`Post`: one post, before any network has it, with every field a network is told, and how the
history stores it whole (`Post.to_stored`, `stored_post`) so that settling, a re-send, a catch-up
and a resumed thread send it exactly as it was::

    post = Post("Hello", "Hello", visibility="private")
    stored_post(post.to_stored()) == post     # True
"""

from __future__ import annotations

import base64
import json
import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Mapping, Optional, Sequence, Tuple, Union

from ..errors import ErrorKind, ExitStatus, PostError
from ..networks import Fit, Network, PostOptions

if TYPE_CHECKING:
    from ..pictures.prepare import Attachment, PreparedImage

__all__ = ["PRIVATE_VISIBILITIES", "Post", "stored_post"]

# The visibilities only some readers see (Mastodon's): a post with one is never sent where every
# post is public.
PRIVATE_VISIBILITIES = ("private", "direct")

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Post:
    """One post, before any network has it: what the history knows it by (`key`: a tweets-file line
    as written, pictures and options and all; a job's text), its words, its pictures with their alt
    texts, its language and content warning, and for messages where it came from (`where`:
    "tweets.txt line 3"). `reply_to` is the post it answers on each network (network name -> that
    network's post id; a job's thread). `fits` are the networks' measures when the sender has them
    (a tweets file measures its lines once, with a cache); `networks` limits where it goes (a
    line's only/skip), and `threads` lets a network it is too long for get it as a thread
    (LONG_LINES=thread)."""

    key: str
    text: str
    images: Tuple[Attachment, ...] = ()
    language: Optional[str] = None
    warning: Optional[str] = None
    where: str = "a post"
    reply_to: Mapping[str, str] = field(default_factory=dict)
    fits: Tuple[Fit, ...] = ()
    networks: Optional[Tuple[str, ...]] = None  # None: every network of the delivery
    threads: bool = False
    # Mastodon's visibility for this post (public, unlisted, private, direct; the most private of
    # it and MASTODON_VISIBILITY wins), whether its pictures are sensitive (shown behind a
    # warning), and Bluesky's self-labels for it: each sent only to a network that takes it
    # (`Network.post_options`).
    visibility: Optional[str] = None
    sensitive: bool = False
    labels: Tuple[str, ...] = ()
    # What a picture that cannot go to a network means for the post, after its problem.
    unfit: str = "nothing was sent, and the line stays in the round until the picture is fixed"

    def goes_to(self, network: Network) -> bool:
        """Whether the post is for `network`: its line's only and skip left it in, and it is not a
        private or direct post (CBTS's {private}, {direct}) for a network whose posts are all
        public (X, Bluesky), where it would be read by everyone (`kept_private`)."""
        return (self.networks is None or network.name in self.networks) and not self.kept_private(network)

    def kept_private(self, network: Network) -> bool:
        """Whether the post is private or direct and `network` has no such posts: not sent there."""
        return self.visibility in PRIVATE_VISIBILITIES and "visibility" not in network.post_options

    def told(self, network: Network, images: Sequence[Union[Attachment, PreparedImage]] = ()) -> PostOptions:
        """Everything `network` is told with the post's text, as its poster takes it: `images`
        (the post's pictures as prepared for it), the post it answers there, its language, its own
        content warning, and the visibility, sensitive flag and labels of a network that takes
        them. A function of the post alone: a later run tells the network the same."""
        takes = network.post_options
        return PostOptions(
            images=tuple(images),
            reply_to=self.reply_to.get(network.name),
            language=self.language,
            spoiler=self.spoiler_for(network),
            visibility=self.visibility if "visibility" in takes else None,
            sensitive=self.sensitive and "sensitive" in takes,
            labels=self.labels if "labels" in takes else (),
        )

    def part(self, number: int, reply_to: Optional[Mapping[str, str]] = None) -> Post:
        """The post as part `number` of its thread is sent: answering `reply_to` (the part before;
        part 1 answers nothing), the pictures only with part 1, and the labels (what pictures
        show) only with the part that has pictures."""
        first = number == 1
        return replace(
            self,
            reply_to=dict(reply_to or {}),
            images=self.images if first else (),
            labels=self.labels if first and self.images else (),
        )

    @property
    def draws_bytes(self) -> bool:
        """Whether a picture of the post is bytes (drawn or fetched), not a file: what a stored
        post keeps whole only while a later run may send it again."""
        return any(isinstance(image.source, bytes) for image in self.images)

    def to_stored(self, keep_pictures: bool = True) -> str:
        """The post as the history keeps it with its attempt (JSON, keys sorted): every field a
        network is told and its source's key, its pictures as what sends them again (a file's
        path, or a drawn or fetched picture's bytes), each with its alt text. Not its measures
        (`fits`: measured again when needed). Without `keep_pictures` (a post no later run sends
        again: a job's, a reply's) a drawn or fetched picture keeps its alt text but not its
        bytes, so a history on an SD card does not grow by every picture a job posts; it reads
        back as empty bytes."""
        return json.dumps(
            {
                "v": _STORED,
                "key": self.key,
                "text": self.text,
                "images": [_stored_picture(image, keep_pictures) for image in self.images],
                "language": self.language,
                "warning": self.warning,
                "where": self.where,
                "reply_to": dict(self.reply_to),
                "networks": list(self.networks) if self.networks is not None else None,
                "threads": self.threads,
                "visibility": self.visibility,
                "sensitive": self.sensitive,
                "labels": list(self.labels),
                "unfit": self.unfit,
            },
            ensure_ascii=False,
            sort_keys=True,
            separators=(",", ":"),
        )

    @classmethod
    def from_stored(cls, stored: str) -> Post:
        """The post `to_stored` kept; ValueError when `stored` is not one (a damaged row)."""
        from ..pictures.prepare import Attachment

        try:
            data = json.loads(stored)
            if data.get("v") != _STORED:
                raise ValueError(f"a stored post of version {data.get('v')!r}, not {_STORED}")
            images = tuple(
                Attachment(
                    Path(each["path"]) if "path" in each else base64.b64decode(each.get("data", "")),
                    each["alt"],
                    each["name"],
                    bool(each.get("alt_optional")),
                    "video" if each.get("kind") == "video" else "picture",  # rows before videos have none
                )
                for each in data["images"]
            )
            networks = data["networks"]
            return cls(
                key=data["key"],
                text=data["text"],
                images=images,
                language=data["language"],
                warning=data["warning"],
                where=data["where"],
                reply_to={str(name): str(post_id) for name, post_id in data["reply_to"].items()},
                networks=tuple(networks) if networks is not None else None,
                threads=bool(data["threads"]),
                visibility=data["visibility"],
                sensitive=bool(data["sensitive"]),
                labels=tuple(data["labels"]),
                unfit=data["unfit"],
            )
        except (AttributeError, KeyError, TypeError, ValueError) as exc:  # JSONDecodeError is a ValueError
            raise ValueError(f"not a stored post ({type(exc).__name__}: {exc})") from None

    def text_for(self, network: Network) -> str:
        """What `network` is sent as the text: where it has no content warnings of its own, the
        warning is the post's first line."""
        if self.warning and not network.content_warnings:
            return f"CW: {self.warning}\n{self.text}"
        return self.text

    def spoiler_for(self, network: Network) -> Optional[str]:
        """The warning as the network's own field (Mastodon's spoiler_text), where it has one."""
        return self.warning if network.content_warnings else None

    def fit_for(self, network: Network) -> Fit:
        """How `network` counts the post: the sender's measure, else measured now."""
        known = next((fit for fit in self.fits if fit.network == network.name), None)
        return known or network.measure(self.text_for(network))

    def threaded(self, fit: Fit) -> bool:
        """Whether the post goes to `fit`'s network as a thread: threads allowed, and too long there."""
        return self.threads and fit.length > fit.limit

    def picture_error(self, problem: Exception) -> PostError:
        """A picture that cannot go to a network: the user's data, named by where the post came from."""
        return PostError(
            f"{self.where}: {problem}" + (f"; {self.unfit}" if self.unfit else ""),
            kind=ErrorKind.PICTURE,
            exit_status=ExitStatus.DATA_ERROR,
        )


# The version of a stored post's JSON (`Post.to_stored`): a reader meets only versions it knows.
_STORED = 1


def stored_post(stored: Optional[str]) -> Optional[Post]:
    """The post an attempt or a thread was stored with, or None when the row was written before
    the history kept posts (schema 12), or its post cannot be read (logged: the row is then read
    as an older one is)."""
    if stored is None:
        return None
    try:
        return Post.from_stored(stored)
    except ValueError as exc:
        log.warning("the history holds a post that cannot be read (%s): it is read from its text instead", exc)
        return None


def _stored_picture(image: Attachment, keep_bytes: bool) -> Dict[str, object]:
    """One picture as a stored post keeps it: the file it is read from, or its bytes (with
    `keep_bytes`; else its alt text and name only)."""
    kept: Dict[str, object] = {"alt": image.alt, "name": image.name, "alt_optional": image.alt_optional}
    if image.kind == "video":  # a picture's row stays as it was before videos
        kept["kind"] = "video"
    if isinstance(image.source, bytes):
        if keep_bytes:
            kept["data"] = base64.b64encode(image.source).decode("ascii")
    else:
        kept["path"] = str(image.source)
    return kept

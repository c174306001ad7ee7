"""What a rule answers: its response expanded with the bot's Tracery grammar (when TWEETS_FILE is
one, so ``"#greeting#"`` works; else the response is plain text), then read as a post is: the
visibility words of Cheap Bots Toot Sweet (``{public}``, ``{unlisted}``, ``{private}``,
``{direct}``: the most private wins, and never more public than the mention), a line's options at
its start (``{cw: ...; lang: ...; only: ...}``) and its pictures (``![alt](path)``, read beside the
rules file). An empty response, or Blue Bots Done Quick's ``"0"``, means no reply::

    reply = respond(rule, grammar, rng=rng, networks=registry.names(), folder=rules.path.parent)
    reply.text, reply.visibility, reply.warning   # or a NoReply with its reason
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence, Tuple, Union

from ..errors import TweetFileError
from ..networks.mentions import most_private

if TYPE_CHECKING:
    from ..pictures.prepare import Attachment
    from ..posting.grammar import Grammar
    from ..posting.options import LineOptions
    from .rules import Rule

__all__ = ["NoReply", "Reply", "respond"]

_VISIBILITY = re.compile(r"\{(public|unlisted|private|direct)\}")
# Bounds of one response's expansion: a reply is one post, far smaller than a run's draws.
_CHARACTERS, _STEPS = 100_000, 20_000


@dataclass(frozen=True)
class Reply:
    """A response ready to become a post: its text, options and pictures, and its visibility
    (None: the network's own, MASTODON_VISIBILITY)."""

    text: str
    options: Optional[LineOptions] = None
    images: Tuple[Attachment, ...] = ()
    visibility: Optional[str] = None


@dataclass(frozen=True)
class NoReply:
    """Why a matched rule gives no reply (an empty response, a response that cannot be read)."""

    reason: str


def respond(
    rule: Rule,
    grammar: Optional[Grammar],
    *,
    rng: random.Random,
    networks: Sequence[str],
    folder: Path,
) -> Union[Reply, NoReply]:
    """The reply `rule` gives: its response expanded with `grammar` (None: plain text), its
    visibility words, options and pictures read out of it."""
    text = rule.response
    if grammar is not None and ("#" in text or "[" in text):
        from ..posting.grammar import OutOfWork, TooDeep, Work

        try:
            text = grammar.expand(rng, text, work=Work(_CHARACTERS, _STEPS))  # type: ignore[union-attr]
        except (TweetFileError, TooDeep, OutOfWork) as exc:
            return NoReply(f"its response cannot be expanded with the grammar ({_first_line(exc)}): fix the rule")
    visibilities = _VISIBILITY.findall(text)
    text = _VISIBILITY.sub("", text).strip()
    if not text or text == "0":
        return NoReply("its response is empty (no reply)")
    options = None
    if text.startswith(("{", "\\{")):
        from ..posting.options import OptionError, split_options

        try:
            options, text = split_options(text, networks)
        except OptionError as exc:
            return NoReply(f"its response's options cannot be read ({exc}): fix the rule")
        if not text:
            return NoReply("its response has options but no text: write the reply after the }")
    images: Tuple[Attachment, ...] = ()
    if "![" in text:
        from ..posting.images import split_images

        try:
            text, pictures = split_images(text, folder)
        except (TweetFileError, ValueError) as exc:
            return NoReply(f"its response's pictures cannot be read ({_first_line(exc)}): fix the rule")
        images = tuple(picture.attachment for picture in pictures)
    return Reply(text, options, images, most_private(*visibilities))


def _first_line(error: Exception) -> str:
    return (str(error).splitlines() or [""])[0]

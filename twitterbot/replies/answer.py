"""What a rule answers: its response expanded with the bot's Tracery grammar (when TWEETS_FILE is
one, so ``"#greeting#"`` works; else the response is plain text), then read by the same reader as
a grammar's expansion (`posting.generated.read_expansion`): the options at its start (``{cw: ...;
lang: ...; only: ...}``), the services' tags (``{svg ...}``, ``{img URL}``, ``{cut ...}``,
``{hide}``, ``{lang ...}``, ``{label ...}`` and Cheap Bots Toot Sweet's visibility words: the
most private wins, and the reply is never more public than the mention) and its pictures
(``![alt](path)``, read beside the rules file). An empty response, or Blue Bots Done Quick's
``"0"``, means no reply; a response that cannot be read is the rule's data error (`RuleDataError`,
naming the rule), and the mention waits until the rule is fixed::

    reply = respond(rule, grammar, rng=rng, networks=registry.names(), folder=rules.path.parent)
    reply.text, reply.visibility, reply.options.warning, reply.tags   # or a NoReply with its reason

The tags' pictures are drawn and fetched by the round (`pictures`), before the reply is recorded.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence, Tuple, Union

from ..errors import TweetFileError

if TYPE_CHECKING:
    from ..pictures.prepare import Attachment
    from ..posting.grammar import Grammar
    from ..posting.options import LineOptions
    from ..posting.tagpictures import PictureRules
    from ..posting.tags import Tagged
    from .rules import Rule

__all__ = ["NoReply", "Reply", "RuleDataError", "pictures", "respond"]

# Bounds of one response's expansion: a reply is one post, far smaller than a run's draws.
_CHARACTERS, _STEPS = 100_000, 20_000


class RuleDataError(TweetFileError):
    """A matched rule whose response cannot be read or whose pictures cannot be drawn (exit 65):
    the message names the rules file and the rule (`key`); the mention stays pending."""

    kind = "rule"

    def __init__(self, message: str, key: Optional[str]) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class Reply:
    """A response ready to become a post: its text, options (with the tags' warning and language),
    pictures written as files, its services' tags (None: none), and its visibility (None: the
    network's own, MASTODON_VISIBILITY)."""

    text: str
    options: Optional[LineOptions] = None
    images: Tuple[Attachment, ...] = ()
    visibility: Optional[str] = None
    tags: Optional[Tagged] = None

    @property
    def sensitive(self) -> bool:
        return bool(self.tags and self.tags.sensitive)

    @property
    def labels(self) -> Tuple[str, ...]:
        return self.tags.labels if self.tags else ()


@dataclass(frozen=True)
class NoReply:
    """Why a matched rule gives no reply (an empty response, one that cannot be expanded)."""

    reason: str


def respond(
    rule: Rule,
    grammar: Optional[Grammar],
    *,
    rng: random.Random,
    networks: Sequence[str],
    folder: Path,
    source: str = "REPLY_RULES",
) -> Union[Reply, NoReply]:
    """The reply `rule` gives: its response expanded with `grammar` (None: plain text), then its
    options, tags and pictures read (pictures beside `folder`). Raises `RuleDataError`, naming
    `source` (the rules file) and the rule, for a response that cannot be read."""
    text = rule.response
    if grammar is not None and ("#" in text or "[" in text):
        from ..posting.grammar import OutOfWork, TooDeep, Work

        try:
            text = grammar.expand(rng, text, work=Work(_CHARACTERS, _STEPS))  # type: ignore[union-attr]
        except (TweetFileError, TooDeep, OutOfWork) as exc:
            return NoReply(f"its response cannot be expanded with the grammar ({_first_line(exc)}): fix the rule")
    text = text.strip()
    if not text or text == "0":
        return NoReply("its response is empty (no reply)")
    from ..posting.generated import read_expansion
    from ..posting.options import OptionError
    from ..posting.tags import TagError

    try:
        read = read_expansion(text, networks, folder)
    except TagError as exc:
        if read_words_only(text):
            return NoReply("its response is empty (no reply)")
        raise RuleDataError(f"{_where(rule, source)} {exc}", rule.key) from None
    except (OptionError, TweetFileError, ValueError) as exc:
        raise RuleDataError(f"{_where(rule, source)} {_first_line(exc)}", rule.key) from None
    tags = read.tags
    return Reply(
        read.text,
        read.options or None,
        tuple(image.attachment for image in read.images),
        tags.visibility if tags else None,
        tags if tags else None,
    )


def read_words_only(text: str) -> bool:
    """Whether `text` is nothing but visibility words (``{public}``): CBTS posted nothing then."""
    from ..posting.tags import TagError, read_tags

    try:
        tagged = read_tags(text)
    except TagError:
        return False
    return not tagged.text and not tagged.pictures


def pictures(reply: Reply, rules: PictureRules, rule: Optional[Rule], source: str) -> Tuple[Attachment, ...]:
    """Every picture `reply` carries: its files, then those its tags draw or fetch. Raises
    `RuleDataError` for an SVG the rule must fix, `PostError` (75) for a fetch that failed now."""
    if reply.tags is None or not reply.tags.pictures:
        return reply.images
    from ..posting.tagpictures import make_pictures

    where = _where(rule, source) if rule is not None else "the status reply"
    try:
        made = make_pictures(reply.tags, rules, where=where)
    except TweetFileError as exc:
        message = str(exc).replace("fix the grammar's SVG", "fix the rule's SVG")
        raise RuleDataError(message, rule.key if rule is not None else None) from None
    return reply.images + made


def _where(rule: Rule, source: str) -> str:
    """The rule in a message: its file and key."""
    return f"{source} rule {json.dumps(rule.key, ensure_ascii=False)}"


def _first_line(error: Exception) -> str:
    return (str(error).splitlines() or [""])[0]

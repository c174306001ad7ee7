"""Answering a mention: the chosen reply built as one `Post`, handed to the round's `Delivery`
(through `ReplyAttempts`: the mention is claimed in the transaction that records the reply), and
what became of the mention, an `Answer`::

    post = reply_post(network, mention, rule, reply, images)
    answer = deliver_reply(delivery, network, mention, rule, post)   # a real round
    answer = plan_reply(delivery, network, mention, rule, post)      # a dry run: Delivery.plan
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional, Tuple

from ..delivery.attempts import REACHED, Attempts, ending_of
from ..errors import ErrorKind, ExitStatus
from ..networks.mentions import Mention
from ..state.outcomes import Outcome
from .judging import shown

if TYPE_CHECKING:
    from datetime import datetime

    from ..delivery.deliver import Delivery
    from ..delivery.post import Post
    from ..delivery.send import Record, Sent
    from ..networks import Fit, Network, PostResult
    from ..pictures.prepare import Attachment
    from ..settings.loading import Config
    from ..state.outcomes import AttemptStart
    from ..state.store import HistoryStore
    from .answer import Reply
    from .rules import ReplyRules

__all__ = ["Answer", "ReplyAttempts", "deliver_reply", "pictures_present", "plan_reply", "reply_pictures", "reply_post"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Answer:
    """What became of one mention in a round (a dry run's: what would)."""

    mention: Mention
    action: str  # answered, would_answer, skipped, failed, stopped
    reason: str = ""
    rule: Optional[str] = None
    text: Optional[str] = None
    url: Optional[str] = None
    status: ExitStatus = ExitStatus.OK  # a failed reply's: its error's exit status
    free: bool = False  # a failure before any request (its rule's data): it takes no reply's place in the round


def pictures_present(rules: ReplyRules, rule: Optional[str], reply: Reply) -> None:
    """Raise `RuleDataError` for a picture file (``![alt](path)``) of the reply that is not there:
    the rule's to fix, named with the folder it is read from (the rules file's), and the mention
    waits for the fix rather than failing for good when it is sent."""
    from pathlib import Path

    from .answer import RuleDataError

    for image in reply.images:
        if isinstance(image.source, Path) and not image.source.is_file():
            raise RuleDataError(
                f"{rules.path.name} rule {shown(rule)}: its picture {image.name} does not exist in"
                f" {rules.path.parent} (pictures are read from the rules file's folder): add it or fix"
                " the path; the mention waits for the fix",
                rule,
            )


def reply_pictures(rules: ReplyRules, rule: Optional[str], reply: Reply, config: Config) -> Tuple[Attachment, ...]:
    """The reply's pictures, its tags' drawn and fetched (`answer.pictures`); `RuleDataError` for a
    picture file that is not there (`pictures_present`)."""
    pictures_present(rules, rule, reply)
    if reply.tags is None or not reply.tags.pictures:
        return reply.images
    from ..posting.tagpictures import PictureRules
    from .answer import pictures

    found = next((each for each in rules.rules if each.key == rule), None)
    return pictures(reply, PictureRules.of(config), found, rules.path.name)


def reply_post(
    network: Network, mention: Mention, rule: Optional[str], reply: Reply, images: Tuple[Attachment, ...]
) -> Post:
    """The reply as a `Post` for `network` alone (`Expansion.post`, as every source makes one),
    threaded under the mention, never more public than it."""
    from dataclasses import replace

    from ..networks.mentions import most_private
    from ..posting.options import NO_OPTIONS
    from ..posting.read import Expansion

    read = Expansion(reply.options or NO_OPTIONS, network.addressed(reply.text, mention), tags=reply.tags)
    post = read.post(
        where=f"the reply rule {shown(rule)}" if rule is not None else "the status reply",
        pictures=images,
        networks=(network.name,),
        reply_to={network.name: mention.reply_to},
        unfit="the mention is not answered",
    )
    return replace(post, visibility=most_private(post.visibility, _mention_visibility(network, mention)))


def _mention_visibility(network: Network, mention: Mention) -> Optional[str]:
    """How private the mention is, as the reply must be at least: on a network with visibilities,
    one it does not name or that is not one of the four (Mastodon's ``limited``, seen only by
    those it names) is as private as can be, ``direct``."""
    from ..networks.mentions import VISIBILITY_ORDER

    if "visibility" in network.post_options and mention.visibility not in VISIBILITY_ORDER:
        return VISIBILITY_ORDER[-1]
    return mention.visibility


def deliver_reply(delivery: Delivery, network: Network, mention: Mention, rule: Optional[str], post: Post) -> Answer:
    """`post` sent by `delivery`, and the mention's `Answer`: a reply too long or over budget is
    recorded as skipped; one the network refused as a duplicate is failed, with its reason (it is
    no answer); one that failed for a passing reason leaves the mention pending for a later round."""
    from ..state.mentions import MentionTaken

    try:
        sents = delivery.deliver(post, ReplyAttempts(mention.id, rule))
    except MentionTaken:
        return Answer(mention, "skipped", "another run answered it first")
    if not sents:  # its network is not posted to now: it waits
        return Answer(mention, "skipped", "its network is not posted to")
    sent = sents[0]
    outcome = str(sent.outcome)
    if outcome in ("too_long", "over_budget"):
        reason = sent.note or f"the reply is too long for {network.label}"
        delivery.store.skip_mention(mention.network, mention.id, reason, rule=rule)
        return Answer(mention, "skipped", reason, rule)
    if outcome == "duplicate":  # X keeps no second post of a text: this mention has no answer
        reason = f"{network.label} refused the reply: {sent.error or 'it already has a post with its text'}"
        log.warning("%s: the reply to %s failed: %s", network.label, mention.author.handle, reason)
        return Answer(mention, "failed", reason, rule, status=ExitStatus.DATA_ERROR)
    if not sent.reached:
        log.warning("%s: the reply to %s %s: %s", network.label, mention.author.handle, outcome, sent.error)
        status = sent.error.exit_status if sent.error else ExitStatus.TEMPORARY_FAILURE
        return Answer(mention, "failed", str(sent.error or outcome), rule, status=status)
    url = sent.result.url if sent.result else None
    log.info(
        "%s: answered %s (rule %s)%s", network.label, mention.author.handle, shown(rule), f": {url}" if url else ""
    )
    return Answer(mention, "answered", outcome, rule, post.text, url)


def plan_reply(delivery: Delivery, network: Network, mention: Mention, rule: Optional[str], post: Post) -> Answer:
    """What `deliver_reply` would do with `post`, asked of `Delivery.plan` (the one dry run):
    would answer, or why not (too long for the network, a picture that cannot go)."""
    plan = delivery.plan(post)
    sent: Optional[Sent] = plan[0] if plan else None
    if sent is None:
        return Answer(mention, "skipped", "its network is not posted to")
    if sent.outcome != Outcome.WOULD_POST:
        reason = str(sent.error) if sent.error else sent.note or f"the reply is too long for {network.label}"
        return Answer(mention, "skipped", reason, rule)
    return Answer(mention, "would_answer", rule=rule, text=post.text)


class ReplyAttempts(Attempts):
    """A reply's attempt: recorded in the same transaction as its mention is claimed, before it is
    sent (`MentionTaken` when another run claimed it first: nothing is recorded or sent), priced as
    the network prices a reply; its outcome after, with what it makes of the mention, in one
    transaction. A reply that reached, or may have reached, the network leaves its mention
    answered; one refused as a duplicate (X has a post with its text: not this mention's answer)
    fails it, with the network's reason; a passing failure leaves it for a later run; any other
    failure ends it."""

    __slots__ = ("mention_id", "rule")
    source = "reply"
    keeps_pictures = False

    def __init__(self, mention_id: str, rule: Optional[str]) -> None:
        self.mention_id, self.rule = mention_id, rule

    def begin(self, store: HistoryStore, post: Post, start: AttemptStart) -> int:
        text = start.sent_text or post.text
        return store.claim_reply(start.network, self.mention_id, text, start, rule=self.rule)

    def ending(self, store: HistoryStore, attempt: int, clock: Callable[[], datetime]) -> Record:
        def record(
            outcome: Outcome, result: Optional[PostResult], detail: Optional[str], kind: Optional[ErrorKind]
        ) -> None:
            ending = ending_of(outcome, result, detail, kind, clock())
            if outcome == Outcome.DUPLICATE:
                status = "failed"
                ending.detail = f"the network refused the reply: {detail or 'it has a post with its text'}"
            else:
                status = "answered" if outcome in REACHED else "pending" if outcome == Outcome.TEMPORARY else "failed"
            store.finish_reply(attempt, ending, status)

        return record

    def price(self, network: Network, fit: Fit) -> Optional[float]:
        return network.reply_price(fit)

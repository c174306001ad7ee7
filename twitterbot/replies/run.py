"""One round of replies: read each listening network's new mentions once, keep them all (and the
cursor) in the history, and answer the pending ones, the oldest first, at most
MAX_REPLIES_PER_RUN; the rest wait for the next round. A mention whose try failed (its rule's data
error, a picture not fetched, the network down) is tried again with back-off (`due`), sooner when
the rules file changed since, and takes no place among the round's replies: a few failing mentions
never starve the rest. `bot.py replies` runs one round; a
scheduled run with REPLY_RULES set runs one before its roll (`Replies.before_run`)::

    result = answer_mentions(config, outlets=LazyPosters.of(config), rng=random.Random())
    result.answered, result.skipped, result.failed, result.left, result.exit_status

The round puts together what its neighbours do: mentions.py reads, judging.py decides who and what
is answered, sending.py answers (the reply as a `Post`, handed to the `Delivery`, through
`ReplyAttempts`: the mention is claimed in the transaction that records the reply's attempt,
before it is sent). The round holds the run lock, so two overlapping rounds take turns, and the
claim stops a second reply even without it. A dry run asks the same `Delivery` for its plan.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import cached_property
from typing import TYPE_CHECKING, Callable, Dict, List, Mapping, Optional, Sequence, cast

from ..errors import ExitStatus, MissingDependency, PostError
from ..networks import Network, Poster
from ..networks.lazy import LazyPosters
from ..networks.mentions import Listener, Mention
from ..posting import LOOK_UP_UNCERTAIN, TWEETS_FILE
from ..settings.table import POST_TO
from ..state.clock import utc_now
from ..wording import one_line
from . import MAX_REPLIES_PER_RUN
from .answer import RuleDataError
from .judging import StatusRule, choose, load_config_rules, read_grammar_of, rule_of, shown, verdict
from .mentions import mention_of, read_into, read_page, row_of
from .rules import MatchBudget, MatchBudgetSpent
from .safety import Skip
from .sending import Answer, deliver_reply, pictures_present, plan_reply, reply_pictures, reply_post

if TYPE_CHECKING:
    from ..delivery.deliver import Delivery
    from ..posting.grammar import Grammar
    from ..settings.loading import Config
    from ..state.mentions import MentionRow, Tried
    from ..state.store import HistoryStore
    from .rules import ReplyRules

__all__ = ["MAX_FREE_FAILURES", "RETRY_FIRST", "RETRY_LONGEST", "RepliesResult", "answer_mentions", "due"]

log = logging.getLogger(__name__)

# A mention whose try failed waits at least this long before it is tried again, then as long again
# as it has waited since it was read, at most `RETRY_LONGEST`: 5 minutes, 10, 20, ... a day.
RETRY_FIRST = timedelta(minutes=5)
RETRY_LONGEST = timedelta(days=1)

# A failure before any request (a response that cannot be read) takes no place among a round's
# MAX_REPLIES_PER_RUN; a flood of them still ends a round after this many, each a write.
MAX_FREE_FAILURES = 100


def due(tried: Optional[Tried], now: datetime, changed: Optional[datetime]) -> bool:
    """Whether a pending mention is tried this round: never tried, or its back-off is over, or the
    rules (or the grammar) changed since it last failed (`changed`: when), which may be the fix."""
    if tried is None or (changed is not None and changed > tried.failed_at):
        return True
    wait = min(max(RETRY_FIRST, tried.failed_at - tried.seen_at), RETRY_LONGEST)
    return now - tried.failed_at >= wait


@dataclass
class RepliesResult:
    """A round's outcome: each mention's `Answer`, the networks that could not be read, the exit status."""

    answers: List[Answer] = field(default_factory=list)
    unread: Dict[str, str] = field(default_factory=dict)  # network label -> why
    left: int = 0  # pending mentions left for a later round (MAX_REPLIES_PER_RUN, the match budget)
    waiting: int = 0  # pending mentions whose last try failed, waiting out their back-off
    exit_status: ExitStatus = ExitStatus.OK

    @property
    def answered(self) -> int:
        return sum(1 for answer in self.answers if answer.action == "answered")

    @property
    def skipped(self) -> int:
        return sum(1 for answer in self.answers if answer.action in ("skipped", "stopped"))

    @property
    def failed(self) -> int:
        return sum(1 for answer in self.answers if answer.action == "failed")

    def summary(self) -> str:
        parts = [f"{self.answered} answered", f"{self.skipped} skipped", f"{self.failed} failed"]
        if self.waiting:
            parts.append(f"{self.waiting} failed before, tried again later")
        if self.left:
            parts.append(f"{self.left} left for the next round")
        if self.unread:
            parts.append("not read: " + "; ".join(f"{label}: {why}" for label, why in self.unread.items()))
        return "replies: " + ", ".join(parts)

    def unreadable(self, network: Network, problem: PostError) -> None:
        """`network`'s mentions could not be read: a warning, and the others are answered."""
        self.unread[network.label] = problem.summary or str(problem)
        log.warning("%s: could not read the mentions: %s", network.label, problem)


def answer_mentions(
    config: Config,
    *,
    outlets: Optional[LazyPosters],
    rng: random.Random,
    clock: Callable[[], datetime] = utc_now,
    status: Optional[StatusRule] = None,
    lock_wait: Optional[float] = None,
) -> RepliesResult:
    """One round. `outlets` None: a dry run, which reads (with keys) and lists, recording and
    sending nothing. A network that cannot be read is a warning, and the others are answered.
    `lock_wait`: how long to wait for a run holding bot.lock (None: `RUN_LOCK_WAIT`; a long job's
    round waits for nothing, so its progress reports are never held up)."""
    from ..lock import RUN_LOCK_WAIT, run_lock
    from ..state.floor import check_clock
    from ..state.folder import ensure_state_dir
    from ..state.store import HistoryStore

    rules = load_config_rules(config, compile_now=outlets is None)
    listening = [network for network in config[POST_TO] if network.listens]
    if not listening:
        log.warning("replies: none of POST_TO's networks can read its mentions yet: nothing to answer")
        return RepliesResult()
    if outlets is None:
        return _dry_run(config, rules, listening, rng=rng, clock=clock, status=status)
    ensure_state_dir(config.state.path)
    wait = RUN_LOCK_WAIT if lock_wait is None else lock_wait
    with run_lock(config.state.lock, wait=wait), HistoryStore(config.state.history) as store:
        check_clock(store.newest_record(), clock())  # a clock not set yet answers nothing (75, state/floor.py)
        round_ = _Round(config, store, outlets, rules, rng=rng, clock=clock, status=status)
        return round_.run(listening)


class _Round:
    """One real round's means: its history (the lock is held), posters, rules, die, clock."""

    def __init__(
        self,
        config: Config,
        store: HistoryStore,
        posters: LazyPosters,
        rules: ReplyRules,
        *,
        rng: random.Random,
        clock: Callable[[], datetime],
        status: Optional[StatusRule],
    ) -> None:
        self.config, self.store, self.rules, self.rng, self.clock = config, store, rules, rng, clock
        self.status, self.posters = status, posters
        self.seconds: Callable[[], float] = time.monotonic  # the match budget's clock
        self._readers: Dict[Network, Listener] = {}

    @cached_property
    def grammar(self) -> Optional[Grammar]:
        """Read only by a round that matches a rule."""
        return read_grammar_of(self.config)

    @cached_property
    def delivery(self) -> Delivery:
        """Made only by a round that answers something."""
        return _delivery(self.config, self.store, self.posters, self.clock)

    def reader(self, network: Network) -> Listener:
        """What reads `network`'s mentions: its poster once the posters are made (a reply was due,
        or an uncertain one looked up), else its reader, made once (X's needs no tweepy)."""
        if self.posters.made is not None:
            return cast(Listener, self.posters.made[network])
        if network not in self._readers:
            self._readers[network] = network.reader(self.config)
        return self._readers[network]

    def run(self, listening: Sequence[Network]) -> RepliesResult:
        result = RepliesResult()
        now = self.clock()
        self.store.replies_interrupted(at=now)
        if self.config[LOOK_UP_UNCERTAIN]:
            self._settle(listening, now)
        for network in listening:
            problem = read_into(self.store, network, self.reader(network), self.config, now)
            if problem is not None:
                result.unreadable(network, problem)
                result.exit_status = result.exit_status or problem.exit_status
        by_name = {network.name: network for network in listening}
        pending = self._due(list(by_name), now, result)
        cap, budget = self.config[MAX_REPLIES_PER_RUN], MatchBudget(clock=self.seconds)
        sent = free = 0  # replies sent or tried, and pictures fetched; failures that cost nothing
        for index, row in enumerate(pending):
            if sent >= cap or free >= MAX_FREE_FAILURES:
                result.left = len(pending) - index
                break
            answer = self._answer(by_name[row.network], mention_of(row), budget)
            result.answers.append(answer)
            sent += answer.action in ("answered", "failed") and not answer.free
            free += answer.free
            result.exit_status = result.exit_status or answer.status
            if budget.left() <= 0:
                result.left = len(pending) - index - 1
                break
        return result

    def _due(self, networks: List[str], now: datetime, result: RepliesResult) -> List[MentionRow]:
        """The pending mentions tried this round, the oldest first (`due`); `result` counts the rest."""
        pending = self.store.pending_mentions(networks)
        tried, changed = self.store.failed_tries(networks), self._changed()
        chosen = [row for row in pending if due(tried.get((row.network, row.mention_id)), now, changed)]
        result.waiting = len(pending) - len(chosen)
        return chosen

    def _changed(self) -> Optional[datetime]:
        """When the rules file, its folder (a picture added), or the grammar its responses use last changed."""
        times = []
        for path in (self.rules.path, self.rules.path.parent, self.config[TWEETS_FILE]):
            try:
                times.append(path.stat().st_mtime)
            except (OSError, AttributeError):
                continue
        return datetime.fromtimestamp(max(times), timezone.utc) if times else None

    def _settle(self, listening: Sequence[Network], now: datetime) -> None:
        """Uncertain replies of the last days, looked up as posts are (`delivery/settle.py`)."""
        from ..posting import LOOK_UP_WINDOW

        unsettled = self.store.unsettled(now - LOOK_UP_WINDOW, [network.name for network in listening], source="reply")
        if unsettled:
            from ..delivery.settle import settle_uncertain

            settle_uncertain(self.store, unsettled, self.posters(), clock=self.clock)

    def _answer(self, network: Network, mention: Mention, budget: MatchBudget) -> Answer:
        """Judge one pending mention, match it, and deliver its reply."""
        now = self.clock()
        skip = verdict(mention, self.config, self.store, now)
        if skip is not None:
            return self._skipped(network, mention, skip, now)
        drawing = False  # a failure before drawing or fetching a picture costs nothing
        try:
            chosen = choose(
                self.rules,
                mention,
                self.grammar,
                self.status,
                rng=self.rng,
                names=self.config.registry.names(),
                budget=budget,
            )
            if isinstance(chosen, Skip):
                return self._skipped(network, mention, chosen, now)
            rule, reply = chosen
            drawing = True
            images = reply_pictures(self.rules, rule, reply, self.config)
        except (RuleDataError, MatchBudgetSpent, PostError, MissingDependency) as exc:
            # the rule's to fix, or a picture not fetched now: kept as a failed try, the mention
            # waits (`due`): tried again after its back-off, or once the rules file changes
            key = getattr(exc, "key", None)
            log.error("%s: the reply to %s waits: %s", network.label, mention.author.handle, exc)
            self.store.fail_mention(mention.network, mention.id, str(exc), at=now, rule=key)
            return Answer(mention, "failed", str(exc), key, status=exc.exit_status, free=not drawing)
        post = reply_post(network, mention, rule, reply, images)
        return deliver_reply(self.delivery, network, mention, rule, post)

    def _skipped(self, network: Network, mention: Mention, skip: Skip, now: datetime) -> Answer:
        """A mention not answered, kept so: for good when its author said stop."""
        if skip.stop:
            self.store.stop_account(row_of(mention), at=now)
            log.info("%s: %s said stop: the bot never answers them again", network.label, mention.author.handle)
            return Answer(mention, "stopped", skip.reason)
        self.store.skip_mention(mention.network, mention.id, skip.reason, rule=rule_of(skip))
        return Answer(mention, "skipped", skip.reason)


def _delivery(
    config: Config, store: HistoryStore, posters: Callable[[], Mapping[Network, Poster]], clock: Callable[[], datetime]
) -> Delivery:
    """How a round's replies go out, or a dry run's would: the scheduled post's `Delivery`."""
    from ..delivery.deliver import Delivery
    from ..posting import delivery_rules
    from ..settings.secrets import Scrubber

    rules = delivery_rules(config)
    return Delivery(store, posters, clock, Scrubber(config.secrets()), rules)


def _dry_run(
    config: Config,
    rules: ReplyRules,
    listening: Sequence[Network],
    *,
    rng: random.Random,
    clock: Callable[[], datetime],
    status: Optional[StatusRule],
) -> RepliesResult:
    """List each new mention and the reply it would get, as `Delivery.plan` sees it (too long for
    its network: no reply); record and send nothing, draw or fetch no tag's picture. Without the
    networks' keys, say so: the rules are loaded and checked all the same."""
    from ..networks.dryrun import DryRunPoster
    from ..state.store import HistoryStore

    result = RepliesResult()
    missing = config.missing()
    if missing:
        log.warning(
            "dry run: %s not set, so the mentions cannot be read; the %d rules of %s load",
            ", ".join(missing),
            len(rules),
            rules.path.name,
        )
        return result
    grammar, now, names = read_grammar_of(config), clock(), config.registry.names()
    budget = MatchBudget()
    with HistoryStore(config.state.history if config.state.history.exists() else ":memory:") as store:
        stand_in = DryRunPoster(networks=listening)
        delivery = _delivery(config, store, LazyPosters(lambda: dict.fromkeys(listening, stand_in)), clock)
        for network in listening:
            pending = [mention_of(row) for row in store.pending_mentions([network.name])]
            try:
                page = read_page(store, network, network.reader(config), config, now)
            except PostError as exc:
                result.unreadable(network, exc)
                continue
            for mention in [*pending, *page.mentions]:
                try:
                    chosen = verdict(mention, config, store, now) or choose(
                        rules, mention, grammar, status, rng=rng, names=names, budget=budget
                    )
                    if not isinstance(chosen, Skip):
                        pictures_present(rules, *chosen)
                except (RuleDataError, MatchBudgetSpent) as exc:
                    chosen = Skip(str(exc))
                if isinstance(chosen, Skip):
                    answer = Answer(mention, "skipped", chosen.reason)
                else:
                    rule, reply = chosen
                    post = reply_post(network, mention, rule, reply, reply.images)
                    answer = plan_reply(delivery, network, mention, rule, post)
                result.answers.append(answer)
                print(_said(network, answer))
    if not result.answers:
        print("no new mentions")
    return result


def _said(network: Network, answer: Answer) -> str:
    """A dry run's lines for one mention: who said what, and the reply it would get or why none."""
    mention = answer.mention
    said = f"{network.label} {mention.author.handle}: {one_line(mention.text)}\n"
    if answer.action == "would_answer":
        return f"{said}  reply ({shown(answer.rule)}): {answer.text}"
    return f"{said}  no reply: {answer.reason}"

"""One round of replies: read each listening network's new mentions once, keep them (and the
cursor) in the history, and answer the pending ones, the oldest first, at most
MAX_REPLIES_PER_RUN; the rest wait for the next round. `bot.py replies` runs one round; a
scheduled run with REPLY_RULES set runs one before its roll (`Replies.before_run`)::

    result = answer_mentions(config, outlets=lambda: posters_for(config), rng=random.Random())
    result.answered, result.skipped, result.left, result.exit_status

Each reply is a post of the `Delivery`, through `ReplyAttempts`: the mention is claimed in the
transaction that records the reply's attempt, before it is sent; the round holds the run lock, so
two overlapping rounds take turns, and the claim stops a second reply even without it.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import (
    TYPE_CHECKING,
    Callable,
    Dict,
    Generic,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
    Union,
    cast,
)

from ..errors import ExitStatus, MissingDependency, PostError
from ..networks import Network, Poster
from ..networks.mentions import Author, Listener, Mention, MentionPage
from ..posting import LOOK_UP_UNCERTAIN, POST_LANGUAGE, TWEETS_FILE
from ..settings.table import POST_TO
from ..state.clock import utc_now
from ..state.mentions import MentionRow
from ..wording import one_line
from . import MAX_REPLIES_PER_RUN, REPLY_COOLDOWN, REPLY_IGNORE_CASE, REPLY_RULES, REPLY_TO_BOTS
from .answer import NoReply, Reply, RuleDataError, pictures, respond
from .rules import ReplyRules, load_rules
from .safety import Politeness, Skip, judge

if TYPE_CHECKING:
    from ..pictures.prepare import Attachment
    from ..posting.delivery import Delivery, Post
    from ..posting.grammar import Grammar
    from ..settings.loading import Config
    from ..state.store import HistoryStore

__all__ = ["FIRST_READ", "Answer", "RepliesResult", "StatusRule", "answer_mentions", "load_config_rules"]

log = logging.getLogger(__name__)

# A bot's first read of a network (no cursor yet) goes back this far, and no further: never the
# account's whole past.
FIRST_READ = timedelta(days=1)

Outlets = Callable[[], Mapping[Network, Poster]]
T = TypeVar("T")


@dataclass(frozen=True)
class StatusRule:
    """The built-in rule of a running job: a mention saying "status" gets `line`, the job's latest
    progress, before the file's rules are tried."""

    line: str


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


@dataclass
class RepliesResult:
    """A round's outcome: each mention's `Answer`, the networks that could not be read, the exit status."""

    answers: List[Answer] = field(default_factory=list)
    unread: Dict[str, str] = field(default_factory=dict)  # network label -> why
    left: int = 0  # pending mentions left for a later round (MAX_REPLIES_PER_RUN)
    exit_status: ExitStatus = ExitStatus.OK

    @property
    def answered(self) -> int:
        return sum(1 for answer in self.answers if answer.action == "answered")

    @property
    def skipped(self) -> int:
        return sum(1 for answer in self.answers if answer.action in ("skipped", "stopped"))

    def summary(self) -> str:
        parts = [f"{self.answered} answered", f"{self.skipped} skipped"]
        if self.left:
            parts.append(f"{self.left} left for the next round (MAX_REPLIES_PER_RUN)")
        if self.unread:
            parts.append("not read: " + "; ".join(f"{label}: {why}" for label, why in self.unread.items()))
        return "replies: " + ", ".join(parts)


def load_config_rules(config: Config, *, compile_now: bool = False) -> ReplyRules:
    """The rules file REPLY_RULES names, matched as REPLY_IGNORE_CASE says (`compile_now`: every
    rule compiled now, as `check` and a dry run do; else each when a mention first reaches it)."""
    return load_rules(config[REPLY_RULES], ignore_case=config[REPLY_IGNORE_CASE], compile_now=compile_now)


def answer_mentions(
    config: Config,
    *,
    outlets: Optional[Outlets],
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
        round_ = _Round(config, store, outlets, rules, rng=rng, clock=clock, status=status)
        return round_.run(listening)


class _Round:
    """One real round's means: its history (the lock is held), posters, rules, die, clock."""

    def __init__(
        self,
        config: Config,
        store: HistoryStore,
        outlets: Outlets,
        rules: ReplyRules,
        *,
        rng: random.Random,
        clock: Callable[[], datetime],
        status: Optional[StatusRule],
    ) -> None:
        self.config, self.store, self.rules, self.rng, self.clock = config, store, rules, rng, clock
        self.status = status
        self._outlets = outlets
        self._made: Optional[Mapping[Network, Poster]] = None
        self._readers: Dict[Network, Listener] = {}
        self.grammar = _Lazy(lambda: _grammar(config))

    def outlets(self) -> Mapping[Network, Poster]:
        if self._made is None:
            self._made = self._outlets()
        return self._made

    def reader(self, network: Network) -> Listener:
        """What reads `network`'s mentions: its poster once the posters are made (a reply was due,
        or an uncertain one looked up), else its reader, made once (X's needs no tweepy)."""
        if self._made is not None:
            return cast(Listener, self._made[network])
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
            problem = self._read(network, now)
            if problem is not None:
                result.unread[network.label] = problem.summary or str(problem)
                log.warning("%s: could not read the mentions: %s", network.label, problem)
                result.exit_status = result.exit_status or problem.exit_status
        by_name = {network.name: network for network in listening}
        pending = self.store.pending_mentions(list(by_name))
        cap = self.config[MAX_REPLIES_PER_RUN]
        sent = 0
        delivery: _Lazy[Delivery] = _Lazy(self._delivery)
        for index, row in enumerate(pending):
            if sent >= cap:
                result.left = len(pending) - index
                break
            mention = _mention(row)
            answer = self._answer(by_name[row.network], mention, delivery)
            result.answers.append(answer)
            if answer.action in ("answered", "failed"):
                sent += 1
            result.exit_status = result.exit_status or answer.status
        return result

    def _settle(self, listening: Sequence[Network], now: datetime) -> None:
        """Uncertain replies of the last days, looked up as posts are (`posting.settle`)."""
        from ..posting import LOOK_UP_WINDOW

        unsettled = self.store.unsettled(now - LOOK_UP_WINDOW, [network.name for network in listening], source="reply")
        if unsettled:
            from ..posting.settle import settle_uncertain

            settle_uncertain(self.store, unsettled, self.outlets(), clock=self.clock)

    def _read(self, network: Network, now: datetime) -> Optional[PostError]:
        """Read `network`'s new mentions into the history, with the cursor and the read's cost."""
        budget = _budgets(self.config).get(network.name)
        if budget is not None and network.read_price:
            from ..posting.budget import month_spend

            spend = month_spend(self.store, network, now, budget)
            if spend.spent + network.read_price > budget + 1e-9:
                return PostError(
                    f"reading its mentions (${network.read_price:.3f}) would pass {spend.setting}=${budget:.2f}, with"
                    f" ${spend.spent:.2f} spent this month: they are read again next month, or with a higher"
                    f" {spend.setting}",
                    exit_status=ExitStatus.OK,
                    summary=f"{spend.setting} is spent",
                )
        try:
            page = _read_page(self.store, network, self.reader(network), self.config, now)
        except PostError as exc:
            return exc
        rows = [_row(mention) for mention in page.mentions]
        cost = (network.read_price or 0) * page.reads or None
        new = self.store.record_mentions(network.name, rows, page.cursor, at=now, requests=page.reads, cost=cost)
        log.info("%s: %d new mention%s", network.label, new, "" if new == 1 else "s")
        return None

    def _answer(self, network: Network, mention: Mention, delivery: _Lazy[Delivery]) -> Answer:
        """Judge one pending mention, match it, and deliver its reply."""
        now = self.clock()
        verdict = judge(
            mention,
            _politeness(self.config),
            now=now,
            stopped=self.store.is_stopped(mention.network, mention.author.id),
            last_reply=self.store.last_reply_to(mention.network, mention.author.id),
        )
        row = _row(mention)
        if verdict is not None:
            if verdict.stop:
                self.store.stop_account(row, at=now)
                log.info("%s: %s said stop: the bot never answers them again", network.label, mention.author.handle)
                return Answer(mention, "stopped", verdict.reason)
            self.store.skip_mention(mention.network, mention.id, verdict.reason)
            return Answer(mention, "skipped", verdict.reason)
        try:
            chosen = _choose(self.rules, mention, self.grammar(), self.status, rng=self.rng, names=self._names())
            if isinstance(chosen, Skip):
                self.store.skip_mention(mention.network, mention.id, chosen.reason, rule=_key(chosen))
                return Answer(mention, "skipped", chosen.reason)
            rule, reply = chosen
            images = self._pictures(rule, reply)
        except (RuleDataError, PostError, MissingDependency) as exc:
            # the rule's to fix, or a picture not fetched now: nothing was recorded, the mention waits
            log.error("%s: the reply to %s waits: %s", network.label, mention.author.handle, exc)
            return Answer(mention, "failed", str(exc), getattr(exc, "key", None), status=exc.exit_status)
        from ..posting.delivery import ReplyAttempts
        from ..state.mentions import MentionTaken

        post = _post(network, mention, rule, reply, images)
        try:
            sents = delivery().deliver(post, ReplyAttempts(mention.id, rule))
        except MentionTaken:
            return Answer(mention, "skipped", "another run answered it first")
        if not sents:  # its network is not posted to now: it waits
            return Answer(mention, "skipped", "its network is not posted to")
        sent = sents[0]
        outcome = str(sent.outcome)
        if outcome in ("too_long", "over_budget"):
            reason = sent.note or f"the reply is too long for {network.label}"
            self.store.skip_mention(mention.network, mention.id, reason, rule=rule)
            return Answer(mention, "skipped", reason, rule)
        if not sent.reached and outcome != "duplicate":
            log.warning("%s: the reply to %s %s: %s", network.label, mention.author.handle, outcome, sent.error)
            status = sent.error.exit_status if sent.error else ExitStatus.TEMPORARY_FAILURE
            return Answer(mention, "failed", str(sent.error or outcome), rule, status=status)
        url = sent.result.url if sent.result else None
        log.info(
            "%s: answered %s (rule %s)%s", network.label, mention.author.handle, _shown(rule), f": {url}" if url else ""
        )
        return Answer(mention, "answered", outcome, rule, post.text, url)

    def _pictures(self, rule: Optional[str], reply: Reply) -> Tuple[Attachment, ...]:
        """The reply's pictures, its tags' drawn and fetched (`answer.pictures`)."""
        if reply.tags is None or not reply.tags.pictures:
            return reply.images
        from ..posting.tagpictures import PictureRules

        found = next((each for each in self.rules.rules if each.key == rule), None)
        return pictures(reply, PictureRules.of(self.config), found, self.rules.path.name)

    def _names(self) -> Tuple[str, ...]:
        return self.config.registry.names()

    def _delivery(self) -> Delivery:
        from ..posting.delivery import Delivery, DeliveryRules
        from ..settings.secrets import Scrubber

        rules = DeliveryRules(budgets=_budgets(self.config), language=self.config[POST_LANGUAGE])
        return Delivery(self.store, self.outlets, self.clock, Scrubber(self.config.secrets()), rules)


def _choose(
    rules: ReplyRules,
    mention: Mention,
    grammar: Optional[Grammar],
    status: Optional[StatusRule],
    *,
    rng: random.Random,
    names: Tuple[str, ...],
) -> Union[Skip, Tuple[Optional[str], Reply]]:
    """The rule that answers `mention` and its reply, or why none does."""
    if status is not None and _says_status(mention.text):
        return None, Reply(status.line)
    rule = rules.match(mention.text)
    if rule is None:
        return Skip("no rule matches it")
    reply = respond(rule, grammar, rng=rng, networks=names, folder=rules.path.parent, source=rules.path.name)
    if isinstance(reply, NoReply):
        return _RuleSkip(f"the rule {_shown(rule.key)} matched: {reply.reason}", rule=rule.key)
    if reply.options is not None and not reply.options.is_for(mention.network):
        return _RuleSkip(
            f"the rule {_shown(rule.key)} matched, but its only/skip leave this network out", rule=rule.key
        )
    return rule.key, reply


@dataclass(frozen=True)
class _RuleSkip(Skip):
    rule: Optional[str] = None


def _key(skip: Skip) -> Optional[str]:
    return getattr(skip, "rule", None)


def _says_status(text: str) -> bool:
    import re

    from .safety import _LEADING_HANDLES

    return re.search(r"(?<!\w)status(?!\w)", _LEADING_HANDLES.sub("", text), re.IGNORECASE) is not None


def _post(
    network: Network, mention: Mention, rule: Optional[str], reply: Reply, images: Tuple[Attachment, ...]
) -> Post:
    """The reply as a `Post` for `network` alone, threaded under the mention, never more public than it."""
    from ..networks.mentions import most_private
    from ..posting.delivery import Post

    options = reply.options
    text = network.addressed(reply.text, mention)
    return Post(
        text,
        text,
        images,
        options.language if options else None,
        options.warning if options else None,
        where=f"the reply rule {_shown(rule)}" if rule is not None else "the status reply",
        reply_to={network.name: mention.reply_to},
        networks=(network.name,),
        visibility=most_private(reply.visibility, mention.visibility),
        sensitive=reply.sensitive,
        labels=reply.labels,
        unfit="the mention is not answered",
    )


def _read_page(
    store: Optional[HistoryStore], network: Network, reader: Listener, config: Config, now: datetime
) -> MentionPage:
    """One read of `network`'s mentions from its cursor (none yet: the last day's, `FIRST_READ`)."""
    _, cursor = store.mention_cursor(network.name) if store is not None else (False, None)
    listen = getattr(reader, "mentions", None)
    if listen is None:  # a network that says it listens, with a reader that cannot: a bug of that network
        raise PostError(f"{network.label}'s poster cannot read mentions", exit_status=ExitStatus.UNAVAILABLE)
    return listen(cursor, not_before=now - FIRST_READ, limit=config[MAX_REPLIES_PER_RUN])


def _dry_run(
    config: Config,
    rules: ReplyRules,
    listening: Sequence[Network],
    *,
    rng: random.Random,
    clock: Callable[[], datetime],
    status: Optional[StatusRule],
) -> RepliesResult:
    """List each new mention and the reply it would get; record and send nothing. Without the
    networks' keys, say so: the rules are loaded and checked all the same."""
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
    store = HistoryStore(config.state.history) if config.state.history.exists() else None
    grammar = _grammar(config)
    now = clock()
    try:
        for network in listening:
            pending = [_mention(row) for row in store.pending_mentions([network.name])] if store else []
            try:
                page = _read_page(store, network, network.reader(config), config, now)
            except PostError as exc:
                result.unread[network.label] = exc.summary or str(exc)
                log.warning("%s: could not read the mentions: %s", network.label, exc)
                continue
            for mention in [*pending, *page.mentions]:
                verdict = judge(
                    mention,
                    _politeness(config),
                    now=now,
                    stopped=bool(store and store.is_stopped(mention.network, mention.author.id)),
                    last_reply=store.last_reply_to(mention.network, mention.author.id) if store else None,
                )
                try:
                    chosen = verdict or _choose(rules, mention, grammar, status, rng=rng, names=config.registry.names())
                except RuleDataError as exc:
                    chosen = Skip(str(exc))
                if isinstance(chosen, Skip):
                    result.answers.append(Answer(mention, "skipped", chosen.reason))
                    print(
                        f"{network.label} {mention.author.handle}: {one_line(mention.text)}\n  no reply: {chosen.reason}"
                    )
                    continue
                rule, reply = chosen
                text = network.addressed(reply.text, mention)
                result.answers.append(Answer(mention, "would_answer", rule=rule, text=text))
                print(
                    f"{network.label} {mention.author.handle}: {one_line(mention.text)}\n  reply ({_shown(rule)}): {text}"
                )
    finally:
        if store is not None:
            store.close()
    if not result.answers:
        print("no new mentions")
    return result


def _grammar(config: Config) -> Optional[Grammar]:
    """The bot's Tracery grammar when TWEETS_FILE is one (a response may use its rules), else None."""
    from ..posting.tweets import is_grammar

    path = config[TWEETS_FILE]
    if not is_grammar(path) or not path.exists():
        return None
    from ..posting.grammar import read_grammar

    return read_grammar(path)


def _budgets(config: Config) -> Dict[str, float]:
    from ..posting import monthly_budgets

    return monthly_budgets(config)


def _politeness(config: Config) -> Politeness:
    return Politeness(config[REPLY_TO_BOTS], timedelta(seconds=config[REPLY_COOLDOWN]))


def _shown(key: Optional[str]) -> str:
    import json

    return json.dumps(key, ensure_ascii=False) if key is not None else "status"


def _row(mention: Mention) -> MentionRow:
    author = mention.author
    return MentionRow(
        mention.network,
        mention.id,
        author.id,
        author.handle,
        author.bot,
        author.bio,
        mention.text,
        mention.created_at,
        mention.reply_to,
        mention.visibility,
        mention.answers_bot,
    )


def _mention(row: MentionRow) -> Mention:
    author = Author(row.author_id, row.author, row.author_bot, row.bio)
    return Mention(
        row.network, row.mention_id, author, row.text, row.created_at, row.reply_to, row.visibility, row.answers_bot
    )


class _Lazy(Generic[T]):
    """A value made at its first call and kept (the grammar, the delivery: only a round that
    answers something makes them)."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make: Callable[[], T] = make
        self._value: Optional[T] = None
        self._made = False

    def __call__(self) -> T:
        if not self._made:
            self._value, self._made = self._make(), True
        return self._value  # type: ignore[return-value]

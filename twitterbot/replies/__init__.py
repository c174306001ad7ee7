"""Replies: the bot answers when it is spoken to, once per mention, by reply rules written as Cheap
Bots Done Quick, Cheap Bots Toot Sweet and Blue Bots Done Quick wrote them (docs/replies.md).

    python bot.py replies [--dry-run]     answer new mentions once (a timer's every few minutes)

rules.py reads the rules file (JavaScript regular expressions through the `regex` package),
answer.py turns a rule's response into a reply, safety.py decides who is not answered (itself, bots,
#nobot, "stop", the cooldown, two bots' loops). A round: mentions.py reads the mentions,
judging.py decides who and what is answered, sending.py answers (the reply's `Post`, handed to the
`Delivery`), run.py runs the round (and its dry run); command.py is the command.
This module is all a run without REPLY_RULES imports of it: it declares the settings, and the
scheduled run's hook (`before_run`) imports the rest only when REPLY_RULES is set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Optional, Tuple

from ..capability import Capability, CheckLine, Feature
from ..settings.parsers import BOOL, DURATION, OPTIONAL_PATH, POSITIVE_INT
from ..settings.table import POST_TO, Setting, by_name

if TYPE_CHECKING:
    from ..settings.loading import Config
    from .rules import ReplyRules

__all__ = ["MAX_REPLIES_PER_RUN", "REPLIES", "REPLY_COOLDOWN", "REPLY_IGNORE_CASE", "REPLY_RULES", "REPLY_TO_BOTS"]


REPLY_RULES = Setting(
    "REPLY_RULES",
    "",
    OPTIONAL_PATH,
    "a JSON file of reply rules (CBDQ/CBTS/BBDQ style: regular expression -> response); empty: no replies",
)
REPLY_IGNORE_CASE = Setting(
    "REPLY_IGNORE_CASE", "no", BOOL, "match the rules' patterns in any case, as Blue Bots Done Quick did (yes or no)"
)
REPLY_TO_BOTS = Setting("REPLY_TO_BOTS", "no", BOOL, "answer accounts that say they are bots (yes or no)")
REPLY_COOLDOWN = Setting("REPLY_COOLDOWN", "1h", DURATION, "at most one reply to the same account in this long")
MAX_REPLIES_PER_RUN = Setting(
    "MAX_REPLIES_PER_RUN",
    "10",
    POSITIVE_INT,
    "at most this many replies a round, the oldest mentions first; the rest wait",
)


class Replies(Capability):
    """The reply rules' settings, `bot.py replies`, its checks, and a round before each scheduled run."""

    name = "replies"
    title = "Replies"
    page = "replies.md"
    features = (Feature("replies (REPLY_RULES)", ("regex",), "replies", "python3-regex"),)
    settings = by_name(REPLY_RULES, REPLY_IGNORE_CASE, REPLY_TO_BOTS, REPLY_COOLDOWN, MAX_REPLIES_PER_RUN)
    commands = "twitterbot.replies.command"
    command_names = ("replies",)

    def uses(self, config: Config) -> bool:
        return config[REPLY_RULES] is not None

    def checks(self, config: Config) -> Iterable[CheckLine]:
        """The rules load and compile (a key that does not is named, exit 65 from `bot.py replies`);
        the accounts that said stop are listed."""
        if config[REPLY_RULES] is None:
            return
        from ..errors import TweetFileError
        from .judging import load_config_rules

        try:
            rules = load_config_rules(config, compile_now=True)
        except TweetFileError as exc:
            yield "problem", str(exc), exc  # the rules' data error: exit 65, as `bot.py replies`
            return
        yield "ok", f"reply rules: {len(rules)} rules in {rules.path}"
        yield from _unreadable_responses(rules, config.registry.names())
        if rules.integer_first:
            keys = ", ".join(rules.integer_first[:5])
            yield (
                "note",
                f"reply rules: CBDQ tried the integer-like keys ({keys}) before the others; this bot keeps the "
                "file's order: move them first if they should win",
            )
        listening = [network.label for network in config[POST_TO] if network.listens]
        if not listening:
            yield "note", "reply rules: none of POST_TO's networks can read mentions yet"
        if config.state.history.exists():
            from ..state.store import HistoryStore

            with HistoryStore(config.state.history) as store:
                for account in store.stopped_accounts():
                    yield (
                        "note",
                        f"replies: {account.author} on {account.network} said stop"
                        f" ({account.stopped_at:%Y-%m-%d}): never answered again",
                    )

    def while_job(self, config: Config) -> Optional[Callable[[str], None]]:
        """While a long job runs with REPLY_RULES set: a round of replies at most every few minutes,
        where a mention saying "status" gets the job's latest progress line."""
        if config[REPLY_RULES] is None:
            return None
        from .command import status_rounds

        return status_rounds(config)

    def before_run(self, config: Config, *, dry_run: bool) -> None:
        """A scheduled run with REPLY_RULES set first answers new mentions (a dry run does not)."""
        if dry_run or config[REPLY_RULES] is None:
            return
        from .command import before_scheduled_run

        before_scheduled_run(config)


def _unreadable_responses(rules: ReplyRules, names: Tuple[str, ...]) -> Iterator[CheckLine]:
    """Each response that a round would stop at (exit 65): an unknown tag, options that do not
    parse, a missing picture. Responses that use the grammar are read when a mention reaches them
    (their expansion may make the tags)."""
    import random

    from .answer import RuleDataError, respond

    for rule in rules.rules:
        if "{" not in rule.response and "![" not in rule.response:
            continue
        if "#" in rule.response or "[" in rule.response.replace("![", ""):
            continue
        try:
            respond(rule, None, rng=random.Random(0), networks=names, folder=rules.path.parent, source=rules.path.name)
        except RuleDataError as exc:
            yield "problem", str(exc), exc


REPLIES = Replies()

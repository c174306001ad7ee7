"""Judging a mention: whether it is answered at all (safety.py's rules, asked with what the history
knows of its author), then which rule answers it and with what reply::

    skip = verdict(mention, config, store, now)      # None: it may be answered
    chosen = choose(rules, mention, grammar, status, rng=rng, names=names)
    isinstance(chosen, Skip) or chosen == (rule_key, reply)

A running job's "status" mention gets its latest line (`StatusRule`) before the file's rules are
tried; a rule that matches but answers nothing (an empty response, "0", its only/skip) is a
`RuleSkip`, which names the rule.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Optional, Tuple, Union

from ..posting import TWEETS_FILE
from . import REPLY_COOLDOWN, REPLY_IGNORE_CASE, REPLY_RULES, REPLY_TO_BOTS
from .answer import NoReply, Reply, respond
from .rules import MatchBudget, ReplyRules, load_rules
from .safety import Politeness, Skip, judge, says_status

if TYPE_CHECKING:
    from datetime import datetime

    from ..networks.mentions import Mention
    from ..posting.grammar import Grammar
    from ..settings.loading import Config
    from ..state.store import HistoryStore

__all__ = ["RuleSkip", "StatusRule", "choose", "load_config_rules", "read_grammar_of", "rule_of", "shown", "verdict"]

# A reply chosen: the key of the rule that answers (None: the status rule) and its reply.
Chosen = Tuple[Optional[str], Reply]


@dataclass(frozen=True)
class StatusRule:
    """The built-in rule of a running job: a mention saying "status" gets `line`, the job's latest
    progress, before the file's rules are tried."""

    line: str


@dataclass(frozen=True)
class RuleSkip(Skip):
    """A mention a rule matched and answers with nothing: `rule` names it in the history."""

    rule: Optional[str] = None


def load_config_rules(config: Config, *, compile_now: bool = False) -> ReplyRules:
    """The rules file REPLY_RULES names, matched as REPLY_IGNORE_CASE says (`compile_now`: every
    rule compiled now, as `check` and a dry run do; else each when a mention first reaches it)."""
    return load_rules(config[REPLY_RULES], ignore_case=config[REPLY_IGNORE_CASE], compile_now=compile_now)


def read_grammar_of(config: Config) -> Optional[Grammar]:
    """The bot's Tracery grammar when TWEETS_FILE is one (a response may use its rules), else None."""
    from ..posting.tweets import is_grammar

    path = config[TWEETS_FILE]
    if not is_grammar(path) or not path.exists():
        return None
    from ..posting.grammar import read_grammar

    return read_grammar(path)


def verdict(mention: Mention, config: Config, store: Optional[HistoryStore], now: datetime) -> Optional[Skip]:
    """Why `mention` is not answered, by safety.py's rules (REPLY_TO_BOTS, REPLY_COOLDOWN, who said
    stop and when the bot last replied, as `store` knows them: a dry run may have no history), or None."""
    politeness = Politeness(config[REPLY_TO_BOTS], timedelta(seconds=config[REPLY_COOLDOWN]))
    return judge(
        mention,
        politeness,
        now=now,
        stopped=bool(store and store.is_stopped(mention.network, mention.author.id)),
        last_reply=store.last_reply_to(mention.network, mention.author.id) if store else None,
    )


def choose(
    rules: ReplyRules,
    mention: Mention,
    grammar: Optional[Grammar],
    status: Optional[StatusRule],
    *,
    rng: random.Random,
    names: Tuple[str, ...],
    budget: Optional[MatchBudget] = None,
) -> Union[Skip, Chosen]:
    """The rule that answers `mention` and its reply, or why none does (`budget`: the round's
    matching time, `MatchBudgetSpent` when it runs out)."""
    if status is not None and says_status(mention.text):
        return None, Reply(status.line)
    rule = rules.match(mention.text, budget)
    if rule is None:
        return Skip("no rule matches it")
    reply = respond(rule, grammar, rng=rng, networks=names, folder=rules.path.parent, source=rules.path.name)
    if isinstance(reply, NoReply):
        return RuleSkip(f"the rule {shown(rule.key)} matched: {reply.reason}", rule=rule.key)
    if reply.options is not None and not reply.options.is_for(mention.network):
        return RuleSkip(f"the rule {shown(rule.key)} matched, but its only/skip leave this network out", rule=rule.key)
    return rule.key, reply


def rule_of(skip: Skip) -> Optional[str]:
    """The rule a skipped mention matched, if one did."""
    return skip.rule if isinstance(skip, RuleSkip) else None


def shown(key: Optional[str]) -> str:
    """A rule's key as a message names it (the status rule: "status")."""
    return json.dumps(key, ensure_ascii=False) if key is not None else "status"

"""Whether a mention is answered at all: the rules that keep the bot polite and out of loops,
decided from values alone (pure), before any rule is matched::

    verdict = judge(mention, politeness, now=now, stopped=False, last_reply=None)
    verdict is None           # answer it (if a rule matches)
    verdict.reason            # why not; verdict.stop: the author said "stop" (recorded for good)

In order: an account that said "stop" is never answered again, and a mention saying "stop" (the
word, in any case, after its leading @mentions) is not answered but recorded; an account that says
it is a bot (Mastodon's bot flag, Bluesky's ``bot`` self-label) is not answered unless
REPLY_TO_BOTS=yes; nor one whose profile says ``#nobot``. A mention that answers one of the bot's
own posts (`Mention.answers_bot`) is answered only when the author got no reply from the bot within
`CONVERSATION` (a day) or REPLY_COOLDOWN, whichever is longer: two copies of this bot, on a network
where neither can tell the other is a bot (X), stop after one reply each, since each one's second
reply would answer a reply within the day. Any other mention waits REPLY_COOLDOWN since the last
reply to its author (default 1 h). The bot's own posts never reach here: each network leaves them out.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Optional

from ..networks.mentions import Mention
from ..wording import format_duration

__all__ = ["CONVERSATION", "Politeness", "Skip", "judge", "says_status", "says_stop"]

# How long a reply from the bot keeps it from answering that account's replies to the bot.
CONVERSATION = timedelta(days=1)

_LEADING_HANDLES = re.compile(r"^(?:\s*@[\w.@:-]+)+")
_STOP = re.compile(r"(?<!\w)stop(?!\w)", re.IGNORECASE)
_STATUS = re.compile(r"(?<!\w)status(?!\w)", re.IGNORECASE)
_NOBOT = re.compile(r"(?<!\w)#nobots?(?!\w)", re.IGNORECASE)


def _plain(text: str) -> str:
    """`text` as a person reads it: compatibility forms folded (NFKC: ``ｓｔｏｐ``, ``＃nobot``) and
    invisible format characters taken out (``S\u200bTOP``), so neither hides a word."""
    folded = unicodedata.normalize("NFKC", text)
    return "".join(char for char in folded if unicodedata.category(char) != "Cf")


@dataclass(frozen=True)
class Politeness:
    """REPLY_TO_BOTS and REPLY_COOLDOWN."""

    to_bots: bool = False
    cooldown: timedelta = timedelta(hours=1)


@dataclass(frozen=True)
class Skip:
    """Why a mention gets no reply; `stop`: its author asked the bot to stop answering them."""

    reason: str
    stop: bool = False


def says_stop(text: str) -> bool:
    """Whether a mention's text says "stop" as a word (in any case), its leading @handles aside."""
    return _STOP.search(_LEADING_HANDLES.sub("", _plain(text))) is not None


def says_status(text: str) -> bool:
    """Whether a mention's text says "status" as a word (in any case), its leading @handles aside:
    while a job runs, such a mention gets its latest progress line."""
    return _STATUS.search(_LEADING_HANDLES.sub("", _plain(text))) is not None


def judge(
    mention: Mention, politeness: Politeness, *, now: datetime, stopped: bool, last_reply: Optional[datetime]
) -> Optional[Skip]:
    """Why `mention` is not answered (`stopped`: its author said stop before; `last_reply`: when the
    bot last replied to its author), or None: it may be."""
    if stopped:
        return Skip("its author asked the bot to stop answering them")
    if says_stop(mention.text):
        return Skip("it says stop: its author is never answered again", stop=True)
    if mention.author.bot and not politeness.to_bots:
        return Skip("its author is a bot (REPLY_TO_BOTS=no)")
    if _NOBOT.search(_plain(mention.author.bio)):
        return Skip("its author's profile says #nobot")
    since = now - last_reply if last_reply is not None else None
    if mention.answers_bot and since is not None and since < max(CONVERSATION, politeness.cooldown):
        return Skip(
            f"it answers the bot, which replied to its author {format_duration(since)} ago:"
            " one reply a day in a conversation, so two bots cannot answer each other for ever"
        )
    if since is not None and since < politeness.cooldown:
        return Skip(
            f"the bot replied to its author {format_duration(since)} ago (REPLY_COOLDOWN="
            f"{format_duration(politeness.cooldown)})"
        )
    return None

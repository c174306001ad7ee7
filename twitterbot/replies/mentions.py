"""Reading the mentions: one read of a network's new mentions from its cursor, kept in the history
with the cursor and what the read cost, within the network's monthly budget::

    problem = read_into(store, network, reader, config, now)   # None: read and kept
    page = read_page(store, network, reader, config, now)      # a dry run's read, kept nowhere

A mention travels as the network's `Mention` and is kept as a `MentionRow` (`row_of`, `mention_of`).
"""

from __future__ import annotations

import logging
import unicodedata
from dataclasses import replace
from datetime import timedelta
from typing import TYPE_CHECKING, Dict, Optional

from ..errors import ExitStatus, PostError
from ..networks.mentions import Author, Mention
from ..state.mentions import MentionRow

if TYPE_CHECKING:
    from datetime import datetime

    from ..networks import Network
    from ..networks.mentions import Listener, MentionPage
    from ..settings.loading import Config
    from ..state.store import HistoryStore

__all__ = ["FIRST_READ", "READ_ALL", "budgets", "mention_of", "read_into", "read_page", "row_of"]

log = logging.getLogger(__name__)

# A bot's first read of a network (no cursor yet) goes back this far, and no further: never the
# account's whole past.
FIRST_READ = timedelta(days=1)

# How many mentions one read keeps: all it gives (each network bounds its own pages). They wait in
# the history for the rounds that answer them, MAX_REPLIES_PER_RUN at a time: a mention is read,
# and billed, once.
READ_ALL = 100_000


def read_into(
    store: HistoryStore, network: Network, reader: Listener, config: Config, now: datetime
) -> Optional[PostError]:
    """Read `network`'s new mentions into the history, with the cursor and the read's cost; the
    problem that kept them unread (its budget spent, the network failing), or None."""
    budget = budgets(config).get(network.name)
    if budget is not None and network.read_price:
        from ..delivery.budget import month_spend

        spend = month_spend(store, network, now, budget)
        if spend.spent + network.read_price > budget + 1e-9:
            return PostError(
                f"reading its mentions (${network.read_price:.3f}) would pass {spend.setting}=${budget:.2f}, with"
                f" ${spend.spent:.2f} spent this month: they are read again next month, or with a higher"
                f" {spend.setting}",
                exit_status=ExitStatus.OK,
                summary=f"{spend.setting} is spent",
            )
    try:
        page = read_page(store, network, reader, config, now)
    except PostError as exc:
        return exc
    rows = [row_of(mention) for mention in page.mentions]
    cost = (network.read_price or 0) * page.reads or None
    new = store.record_mentions(network.name, rows, page.cursor, at=now, requests=page.reads, cost=cost)
    log.info("%s: %d new mention%s", network.label, new, "" if new == 1 else "s")
    return None


def read_page(
    store: Optional[HistoryStore], network: Network, reader: Listener, config: Config, now: datetime
) -> MentionPage:
    """One read of `network`'s mentions from its cursor (none yet: the last day's, `FIRST_READ`),
    all it gives (`READ_ALL`), however few a round answers."""
    _, cursor = store.mention_cursor(network.name) if store is not None else (False, None)
    listen = getattr(reader, "mentions", None)
    if listen is None:  # a network that says it listens, with a reader that cannot: a bug of that network
        raise PostError(f"{network.label}'s poster cannot read mentions", exit_status=ExitStatus.UNAVAILABLE)
    page = listen(cursor, not_before=now - FIRST_READ, limit=READ_ALL)
    return replace(page, mentions=tuple(_cleaned(mention) for mention in page.mentions))


def _cleaned(mention: Mention) -> Mention:
    """`mention` with its author's handle as a handle can be: no control, format or space
    character (an ESC in a Mastodon ``acct`` would steer the terminal and go out in the reply)."""
    handle = mention.author.handle
    kept = "".join(char for char in handle if not unicodedata.category(char).startswith(("C", "Z")))
    if kept == handle:
        return mention
    return replace(mention, author=replace(mention.author, handle=kept))


def budgets(config: Config) -> Dict[str, float]:
    """Each paying network's monthly budget, by name: what a read and a reply may spend."""
    from ..posting import monthly_budgets

    return monthly_budgets(config)


def row_of(mention: Mention) -> MentionRow:
    """`mention` as the history keeps it."""
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


def mention_of(row: MentionRow) -> Mention:
    """A kept mention as the network read it."""
    author = Author(row.author_id, row.author, row.author_bot, row.bio)
    return Mention(
        row.network, row.mention_id, author, row.text, row.created_at, row.reply_to, row.visibility, row.answers_bot
    )

"""`bot.py replies`: answer new mentions once and exit, for a timer of its own every few minutes.

python bot.py replies             read each listening network once, answer what is new
python bot.py replies --dry-run   list each new mention and the reply it would get; nothing sent
"""

from __future__ import annotations

import argparse
import logging
import random
import time
from typing import Callable, List

from ..arguments import Commands, Parser, add_command
from ..errors import BotError, ConfigError, ExitStatus
from ..settings.loading import Config
from . import REPLY_RULES

__all__ = ["STATUS_EVERY", "before_scheduled_run", "register", "status_rounds"]

log = logging.getLogger(__name__)


def register(parser: Parser, commands: Commands) -> None:
    add_command(
        commands,
        "replies",
        _replies,
        takes=("dry_run",),
        brief=True,  # from its timer every 5 minutes, over in a second: no cyclic garbage collector
        dry_run_help="list each new mention and the reply it would get; send and record nothing",
        help="answer new mentions by the reply rules (REPLY_RULES), once, and exit",
    )


def _replies(args: argparse.Namespace, config: Config) -> int:
    from ..networks import check_keys
    from ..networks.lazy import LazyPosters
    from .run import answer_mentions

    if config[REPLY_RULES] is None:
        raise ConfigError("REPLY_RULES is not set: set it to your reply rules file (docs/replies.md)")
    outlets = None
    if not args.dry_run:
        check_keys(config)
        outlets = LazyPosters.of(config)
    result = answer_mentions(config, outlets=outlets, rng=random.Random())
    log.info("%s", result.summary())
    return int(result.exit_status)


# While a long job runs: a round of replies at most this often, on the job's progress reports.
STATUS_EVERY = 300.0


def status_rounds(config: Config, *, seconds: Callable[[], float] = time.monotonic) -> Callable[[str], None]:
    """What a long job calls each time it reports, with its latest progress line: a round of
    replies, at most every `STATUS_EVERY` seconds (the first at the first report), in which a
    mention saying "status" gets that line. Its trouble is a warning: the job goes on."""
    last: List[float] = []

    def heard(line: str) -> None:
        now = seconds()
        if last and now - last[0] < STATUS_EVERY:
            return
        last[:] = [now]
        from ..networks.lazy import LazyPosters
        from .judging import StatusRule
        from .run import answer_mentions

        try:
            result = answer_mentions(
                config,
                outlets=LazyPosters.of(config),
                rng=random.Random(),
                status=StatusRule(line),
                lock_wait=0,  # a run holds the lock: this round is skipped, the job is not held up
            )
        except BotError as exc:
            log.warning("replies: %s; the job goes on", exc)
            return
        if result.answers:
            log.info("%s", result.summary())

    return heard


def before_scheduled_run(config: Config) -> None:
    """A round before a scheduled run's roll: its trouble is a warning, and the run goes on."""
    from ..networks.lazy import LazyPosters
    from .run import answer_mentions

    try:
        result = answer_mentions(config, outlets=LazyPosters.of(config), rng=random.Random())
    except BotError as exc:
        log.warning("replies: %s; the scheduled run goes on", exc)
        return
    if result.answers or result.unread:
        log.info("%s", result.summary())
    if result.exit_status not in (ExitStatus.OK,):
        log.warning(
            "replies: some mentions were not answered (exit status %d); the scheduled run goes on",
            int(result.exit_status),
        )

"""`bot.py replies`: answer new mentions once and exit, for a timer of its own every few minutes.

python bot.py replies             read each listening network once, answer what is new
python bot.py replies --dry-run   list each new mention and the reply it would get; nothing sent
"""

from __future__ import annotations

import argparse
import logging
import random
import threading
import time
from typing import Callable, Optional

from ..arguments import Commands, Parser, add_command
from ..errors import BotError, ConfigError, ExitStatus
from ..settings.loading import Config
from . import REPLY_RULES

__all__ = [
    "STATUS_EVERY",
    "STATUS_GRACE",
    "StatusRounds",
    "before_scheduled_run",
    "register",
    "status_rounds",
    "without_paths",
]

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

# How long the end of a job waits for a round still running (a slow mentions server): the job's
# process then ends, and a reply cut short is settled by the next round, as after a kill.
STATUS_GRACE = 10.0


class StatusRounds:
    """What a long job calls each time it reports, with its latest progress line: a round of
    replies, at most every `STATUS_EVERY` seconds (the first at the first report), in which a
    mention saying "status" gets that line. The round runs beside the job, in a thread of its own:
    a slow mentions server never holds up the job's progress, and a report while a round runs
    starts none. Its trouble is a warning: the job goes on."""

    def __init__(self, config: Config, *, seconds: Callable[[], float] = time.monotonic) -> None:
        self.config, self.seconds = config, seconds
        self._last: Optional[float] = None
        self._round: Optional[threading.Thread] = None

    def __call__(self, line: str) -> None:
        now = self.seconds()
        if (self._last is not None and now - self._last < STATUS_EVERY) or self.running:
            return
        self._last = now
        self._round = threading.Thread(target=self._answer, args=(line,), name="replies round", daemon=True)
        self._round.start()

    @property
    def running(self) -> bool:
        return self._round is not None and self._round.is_alive()

    def join(self, timeout: Optional[float] = STATUS_GRACE) -> bool:
        """Wait up to `timeout` seconds for the round that runs; whether none runs now."""
        if self._round is not None:
            self._round.join(timeout)
        return not self.running

    def _answer(self, line: str) -> None:
        from ..networks.lazy import LazyPosters
        from .judging import StatusRule
        from .run import answer_mentions

        try:
            result = answer_mentions(
                self.config,
                outlets=LazyPosters.of(self.config),
                rng=random.Random(),
                status=StatusRule(without_paths(line, self.config)),
                lock_wait=0,  # a run holds the lock: this round is skipped, the job is not held up
            )
        except BotError as exc:
            log.warning("replies: %s; the job goes on", exc)
            return
        except Exception as exc:  # a bug in a round beside the job is the round's, never the job's
            log.error("replies: the round broke (%s: %s); the job goes on", type(exc).__name__, exc)
            return
        if result.answers:
            log.info("%s", result.summary())


def without_paths(line: str, config: Config) -> str:
    """A job's progress line as a stranger may read it: the bot's own folders (its history, state
    folder, settings' folder, the home folder) written by their names alone, never their paths."""
    import os
    from pathlib import Path

    folders = [config.state.history, config.state.path, Path.home()]
    if config.env_file is not None:
        folders.append(Path(config.env_file).parent)
    for folder in sorted({str(os.path.abspath(each)) for each in folders}, key=len, reverse=True):
        if len(folder) > 1:
            line = line.replace(folder + os.sep, "").replace(folder, Path(folder).name or folder)
    return line


def status_rounds(config: Config, *, seconds: Callable[[], float] = time.monotonic) -> StatusRounds:
    """The rounds of replies beside a long job (`StatusRounds`)."""
    return StatusRounds(config, seconds=seconds)


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

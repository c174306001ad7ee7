"""Which bot a command is for: `--bot NAME`, else the one bot there is, else the checkout's own
(a `.env` beside bot.py, today's layout); the flock's own commands (`bots`, `new`) and a `check`
without `--bot` are for the whole flock. The command line calls `select` once, inside its error
boundary, in place of reading the settings itself::

    config, handler = select(args, registry, project_dir=PROJECT_DIR, environ=os.environ)
    handler(args, config)

A bot of the flock folder reads its settings from its own `.env` alone: the process environment's
settings are the checkout's bot's, never another bot's keys or state folder.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Optional, Tuple

from ..arguments import absolute, global_settings
from ..errors import ConfigError, UsageError
from ..settings import loading
from ..settings.loading import Config, SettingsTable
from .folder import Bot, Flock

__all__ = ["FLOCK_COMMANDS", "Handler", "bot_config", "naming", "select"]

Handler = Callable[[argparse.Namespace, Config], int]

FLOCK_COMMANDS = ("bots", "new")  # the flock's own commands: never one bot's
EVERY_BOT = ("check",)  # without --bot in a flock of several: each bot in turn


def select(
    args: argparse.Namespace,
    registry: SettingsTable,
    *,
    project_dir: Optional[Path],
    environ: Mapping[str, str],
) -> Tuple[Config, Handler]:
    """The settings the command runs with and the handler that runs it. Sets `args.flock` (the
    `Flock`, None with --env-file) for the commands that go over every bot. Raises UsageError for a
    bot that is not there, or for a command of one bot in a flock of several with no --bot."""
    overrides = {**args.settings, **global_settings(args)}
    name, command = getattr(args, "bot", None), getattr(args, "command_name", None)
    if command in FLOCK_COMMANDS and (name or args.env_file):
        raise UsageError(f"`{command}` is for the whole flock: leave out {'--bot' if name else '--env-file'}")
    if args.env_file:
        if name:
            raise UsageError("--bot and --env-file both say whose settings to read: use one of them")
        args.flock = None
        env_file = absolute(args.env_file)
        return loading.load_config(
            registry, project_dir=project_dir, env_file=env_file, environ=environ, overrides=overrides
        ), args.handler
    flock = Flock.find(absolute(getattr(args, "bots", None)), environ, project_dir=project_dir)
    args.flock = flock
    if name:
        return bot_config(
            flock.bot(name), registry, environ=environ, overrides=overrides, named=flock.many
        ), args.handler
    if command in FLOCK_COMMANDS or (command in EVERY_BOT and flock.many):
        config = loading.load_config(registry, project_dir=flock.folder or project_dir, environ={}, overrides=overrides)
        return config, args.handler if command in FLOCK_COMMANDS else every_bot(args.handler, environ)
    checkout = [bot for bot in flock.bots if bot.checkout]
    if checkout or not flock.bots:  # today's layout, or no bot at all: as ever
        return loading.load_config(
            registry, project_dir=project_dir, environ=environ, overrides=overrides
        ), args.handler
    if flock.many:
        raise UsageError(
            f"this flock has {len(flock.bots)} bots ({', '.join(flock.names())}): say which with --bot NAME"
        )
    return bot_config(flock.bots[0], registry, environ=environ, overrides=overrides, named=True), args.handler


def bot_config(
    bot: Bot,
    registry: SettingsTable,
    *,
    environ: Mapping[str, str],
    overrides: Mapping[str, str],
    named: bool = True,
) -> Config:
    """`bot`'s settings, its folder the one its relative paths resolve from. A bot of the flock
    folder reads no setting from the environment. `named`: its log lines begin with its name, as
    long as the command runs (the log the command line set up is put back after it)."""
    if bot.checkout:
        config = loading.load_config(registry, project_dir=bot.folder, environ=environ, overrides=overrides)
    else:
        if not bot.env_file.is_file():
            raise ConfigError(
                f"bot {bot.name} has no settings: {bot.env_file} is missing: copy config.example.env there"
                f" (chmod 600), or make the bot again with `bot.py new {bot.name}`"
            )
        config = loading.load_config(
            registry, project_dir=bot.folder, env_file=bot.env_file, environ={}, overrides=overrides
        )
    if named:
        _name_lines(bot.name)
    return config


def every_bot(handler: Handler, environ: Mapping[str, str]) -> Handler:
    """`handler` run for each bot of the flock in turn, each with its own settings, under a line
    naming it; a bot whose settings cannot be read is reported and the others still run. The
    exit status is the worst (the highest) of them."""

    def run(args: argparse.Namespace, config: Config) -> int:
        worst = 0
        registry, overrides = config.registry, {**args.settings, **global_settings(args)}
        for number, bot in enumerate(args.flock.bots):
            print(f"{'' if number == 0 else chr(10)}bot {bot.name} ({bot.folder}):", flush=True)
            with naming(bot.name):
                try:
                    status = handler(args, bot_config(bot, registry, environ=environ, overrides=overrides, named=False))
                except ConfigError as exc:
                    for line in str(exc).splitlines():
                        print(f"problem: {line}")
                    status = int(exc.exit_status)
            worst = max(worst, status)
        for problem in args.flock.problems:
            print(f"problem: {problem}")
        return worst

    return run


class _BotName(logging.Filter):
    """Begins each log line with the bot's name, once (every handler sees the same record)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.bot = name

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "bot", None) is None:
            record.msg, record.args, record.bot = f"{self.bot}: {record.getMessage()}", (), self.bot
        return True


def _name_lines(name: str) -> Any:
    """Every handler of the log now begins its lines with `name` (until the log is put back)."""
    named = _BotName(name)
    for handler in logging.getLogger().handlers:
        handler.addFilter(named)
    return named


@contextlib.contextmanager
def naming(name: str) -> Iterator[None]:
    """Every log line begins with `name` while this lasts."""
    named = _name_lines(name)
    try:
        yield
    finally:
        for handler in logging.getLogger().handlers:
            handler.removeFilter(named)

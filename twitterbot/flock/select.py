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
from pathlib import Path
from typing import Callable, Mapping, Optional, Tuple

from ..arguments import absolute, global_settings
from ..errors import BotError, ExitStatus, UsageError
from ..settings import loading
from ..settings.loading import Config, SettingsTable
from .botconfig import bot_config, naming
from .folder import Bot, Flock

__all__ = ["FLOCK_COMMANDS", "FLOCK_WIDE", "Handler", "every_bot", "select"]

Handler = Callable[[argparse.Namespace, Config], int]

FLOCK_COMMANDS = ("bots", "new")  # the flock's own commands: never one bot's
# Without --bot in a flock of several: `check` checks each bot in turn, `daemon` runs them all,
# `cron` and `systemd` write the one line and unit of that daemon, `serve` shows them all.
FLOCK_WIDE = ("check", "daemon", "cron", "systemd", "serve")


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
        return _budgeted(flock.bot(name), flock, registry, environ, overrides), args.handler
    if command in FLOCK_COMMANDS or (command in FLOCK_WIDE and flock.many):
        config = loading.load_config(registry, project_dir=flock.folder or project_dir, environ={}, overrides=overrides)
        return config, _flock_handler(command, args.handler, environ)
    checkout = [bot for bot in flock.bots if bot.checkout]
    if checkout:  # today's layout: the checkout's own bot, held to the flock's budget if there is one
        return _budgeted(checkout[0], flock, registry, environ, overrides), args.handler
    if not flock.bots:  # no bot at all (the environment's settings alone): as ever
        return loading.load_config(
            registry, project_dir=project_dir, environ=environ, overrides=overrides
        ), args.handler
    if flock.many:
        raise UsageError(
            f"this flock has {len(flock.bots)} bots ({', '.join(flock.names())}): say which with --bot NAME"
        )
    return _budgeted(flock.bots[0], flock, registry, environ, overrides), args.handler


def _budgeted(
    bot: Bot, flock: Flock, registry: SettingsTable, environ: Mapping[str, str], overrides: Mapping[str, str]
) -> Config:
    """`bot`'s settings, its X budget held to the flock's too (FLOCK_X_MONTHLY_BUDGET). Its log
    lines begin with its name, but for the checkout's own bot alone (today's layout, unchanged)."""
    from ..state.clock import utc_now
    from .budget import within_flock_budget

    def load(which: Bot, more: Mapping[str, str]) -> Config:
        named = which is bot and (flock.many or not which.checkout)
        return bot_config(which, registry, environ=environ, overrides={**overrides, **more}, named=named)

    return within_flock_budget(load(bot, {}), bot, flock, load=load, now=utc_now())


def _flock_handler(command: str, handler: Handler, environ: Mapping[str, str]) -> Handler:
    """What runs `command` for the whole flock: the flock's own commands as they are, `check`
    once for each bot, `daemon` as the flock's one daemon, `cron` and `systemd` its line and unit."""
    if command == "check":
        return every_bot(handler, environ)
    if command == "daemon":
        from .daemon import serve_flock

        return lambda args, config: serve_flock(args, config, environ=environ)
    if command == "serve":
        from .page import serve_flock_page

        return lambda args, config: serve_flock_page(args, config, environ=environ)
    if command in ("cron", "systemd"):
        from .install import run_cron, run_systemd

        return run_cron if command == "cron" else lambda args, config: run_systemd(args, config, environ=environ)
    return handler


def every_bot(handler: Handler, environ: Mapping[str, str]) -> Handler:
    """`handler` run for each bot of the flock in turn, each with its own settings, under a line
    naming it; a bot whose settings cannot be read is reported and the others still run. The
    exit status is the worst (the highest) of them."""

    def run(args: argparse.Namespace, config: Config) -> int:
        worst = 0
        registry, overrides = config.registry, {**args.settings, **global_settings(args)}
        for number, bot in enumerate(args.flock.bots):
            if number:
                print()
            print(f"bot {bot.name} ({bot.folder}):", flush=True)
            with naming(bot.name):
                try:
                    status = handler(args, bot_config(bot, registry, environ=environ, overrides=overrides, named=False))
                except BotError as exc:  # its settings, its state folder: said, and the next bot checked
                    for line in str(exc).splitlines():
                        print(f"problem: {line}")
                    status = int(exc.exit_status)
            worst = max(worst, status)
        for problem in args.flock.problems:  # a folder that is no bot
            print(f"problem: {problem}")
            worst = max(worst, int(ExitStatus.CONFIG_ERROR))
        return worst

    return run

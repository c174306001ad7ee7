"""A bot's settings, read from its own folder, and its name at the head of every log line::

config = bot_config(flock.bot("poems"), registry, environ=os.environ, overrides={})
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any, Iterator, Mapping

from ..errors import ConfigError
from ..settings import loading
from ..settings.loading import Config, SettingsTable
from .folder import Bot

__all__ = ["bot_config", "naming"]


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

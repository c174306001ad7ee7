"""A setting: one variable the bot reads, its default, how it is checked and its help; and the
settings of the foundation, which every command reads.

Every other part of the bot declares its own settings on its capability (`twitterbot.capability`):
the scheduled post, the schedule, progress mode, each job, the status page and each network. The
registry the command line builds (`twitterbot.registry`) joins them into the one table the env
file is read with and the reference page of the docs is generated from::

    Setting("4", "positive_int", "post on 1 run in N (1 = every run)")
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

__all__ = ["DEPRECATED", "MAX_DURATION", "MAX_RETRIES", "Parser", "Setting"]

MAX_RETRIES = 5  # API_RETRIES: backoff doubles from 2 s, so 5 retries wait about a minute in all
MAX_DURATION = 366 * 86400.0  # a year: longer durations are typos, and overflow date arithmetic


@dataclass(frozen=True)
class Setting:
    """One configuration variable: its default (as text), how to check it (`kind`, the name of a
    parser), its help, whether its value is a secret (scrubbed from every output, never echoed),
    and for a secret, where the user finds it."""

    default: str
    kind: str
    help: str
    secret: bool = False
    source: str = ""


# A parser: (setting name, text, where it came from, the folder relative paths start from, the
# setting) -> the checked value, or a ConfigError that names the setting, the source and the fix.
Parser = Callable[[str, str, str, Optional[Path], Setting], object]


# Old names still read, each as its new name; `check` says to rename them.
DEPRECATED = {"X_API_TIMEOUT": "API_TIMEOUT", "X_API_RETRIES": "API_RETRIES"}

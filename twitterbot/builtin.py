"""The capabilities that come with the bot, in order, and the registry they make: what the
command line (`twitterbot.cli`) is built from. A new job or network is one line in `BUILT_IN`.

A Python program that uses the bot as a library reads its settings the same way::

    from twitterbot.builtin import read_config
    from twitterbot.progress.session import open_reporter

    with open_reporter("my job", config=read_config()) as report:   # .env beside bot.py
        report.done("finished")

Every capability here is declared in a light module (its package's ``__init__``), so building
the registry imports no client library, no numpy and no Flask.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Optional, Sequence, Tuple

from .capability import Capability
from .jobs.cluster import CLUSTER
from .jobs.monkey import MONKEY
from .jobs.pegs import PEGS
from .jobs.puzzles import PUZZLES
from .networks.bluesky import NETWORK as BLUESKY
from .networks.mastodon import NETWORK as MASTODON
from .networks.x import NETWORK as X
from .posting import POSTING
from .progress import PROGRESS
from .registry import Registry
from .settings.core import CORE
from .settings.loading import PROJECT_DIR, Config, load_config
from .unattended import SCHEDULE
from .web import WEB

__all__ = ["BUILT_IN", "built_in", "read_config"]

# The order of the settings reference and of config.example.env; the networks' order is the order
# runs post to them, the first being POST_TO's default; the scheduled post's commands come first
# (it owns the plain run, `bot.py` with no command).
BUILT_IN: Tuple[Capability, ...] = (
    CORE,
    POSTING,
    SCHEDULE,
    PROGRESS,
    X,
    MASTODON,
    BLUESKY,
    CLUSTER,
    PEGS,
    MONKEY,
    PUZZLES,
    WEB,
)


def built_in(extra: Sequence[Capability] = ()) -> Registry:
    """The registry of the built-in capabilities, and `extra` ones after them (a test's network)."""
    return Registry((*BUILT_IN, *extra))


def read_config(
    *,
    env_file: Optional[Path] = None,
    environ: Optional[Mapping[str, str]] = None,
    project_dir: Optional[Path] = PROJECT_DIR,
    registry: Optional[Registry] = None,
) -> Config:
    """The settings as the command line reads them: the env file (``.env`` beside bot.py unless
    `env_file` names another), then the environment."""
    return load_config(registry or built_in(), project_dir=project_dir, env_file=env_file, environ=environ)

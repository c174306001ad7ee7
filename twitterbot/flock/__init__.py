"""A flock: every bot a maker has, in one install. One folder per bot under the flock folder, each
with its own `.env`, tweets file or grammar, reply rules, pictures and state folder; the checkout's
own `.env` (today's layout) is a flock of one. `select.py` says which bot a command is for
(`--bot NAME`), `folder.py` what the flock holds (docs/flock.md)."""

from __future__ import annotations

from ..capability import Capability
from ..settings.parsers import DURATION
from ..settings.table import Setting, by_name

__all__ = ["FLOCK", "RUN_DEADLINE"]

RUN_DEADLINE = Setting(
    "RUN_DEADLINE",
    "10m",
    DURATION,
    "how long the flock's daemon lets one run of this bot take (after its jitter) before stopping it",
)


class Flock(Capability):
    """The flock's own commands: `bots` lists every bot, `new` makes one."""

    name = "flock"
    title = "A flock of bots"
    page = "flock.md"
    settings = by_name(RUN_DEADLINE)
    commands = "twitterbot.flock.commands"
    command_names = ("bots", "new")


FLOCK = Flock()

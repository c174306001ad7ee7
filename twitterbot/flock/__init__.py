"""A flock: every bot a maker has, in one install. One folder per bot under the flock folder, each
with its own `.env`, tweets file or grammar, reply rules, pictures and state folder; the checkout's
own `.env` (today's layout) is a flock of one. `select.py` says which bot a command is for
(`--bot NAME`), `folder.py` what the flock holds (docs/flock.md)."""

from __future__ import annotations

from ..capability import Capability

__all__ = ["FLOCK"]


class Flock(Capability):
    """The flock's own commands: `bots` lists every bot, `new` makes one."""

    name = "flock"
    title = "A flock of bots"
    page = "flock.md"
    commands = "twitterbot.flock.commands"
    command_names = ("bots", "new")


FLOCK = Flock()

"""What one part of the bot brings to the program, declared as data: the shape every network and
every job shares, which the command line collects into one registry (`twitterbot.registry`).

A capability names itself, lists the settings it reads (with the parsers of the kinds only it
has), the module that registers its commands, and what `bot.py check` should look at for it.
It imports nothing heavy: the command line reads every capability's settings on every run::

    class Pegs(Capability):
        name = "pegs"
        title = "Peg solitaire"
        page = "jobs/pegs.md"
        settings = {"TWITTERBOT_PEGS_KERNEL": Setting("auto", "kernel", "...")}
        commands = "twitterbot.jobs.pegs.command"

        def checks(self, config):
            yield "ok", "the compiled kernel is built"

A network is a capability with more facts (`twitterbot.networks.Network`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Iterable, List, Mapping, Optional, Tuple

if TYPE_CHECKING:
    from .settings.loading import Config
    from .settings.table import Parser, Setting

__all__ = ["Capability", "CheckLine"]

# One line of `bot.py check`: ("ok" | "note" | "problem", what it found).
CheckLine = Tuple[str, str]


class Capability:
    """One part of the bot, as class data; a subclass sets what it has and overrides `checks` or
    `validate` when it has something to say."""

    name: ClassVar[str]  # a short word: pegs, status page, a network's as POST_TO writes it
    title: ClassVar[str] = ""  # its heading in the settings reference: "Peg solitaire"
    page: ClassVar[str] = ""  # the docs page (under docs/) that explains its settings
    # Its settings, in the order config.example.env lists them, and the parsers of the setting
    # kinds only it has (the shared ones are in twitterbot.settings.parsers).
    settings: ClassVar[Mapping[str, Setting]] = {}
    parsers: ClassVar[Mapping[str, Parser]] = {}
    # The module whose `register(parser, commands)` adds its commands to the command line,
    # imported only when the command line needs them; None: it has no command of its own.
    commands: ClassVar[Optional[str]] = None

    def checks(self, config: Config) -> Iterable[CheckLine]:
        """What `bot.py check` reports for this part; it runs only when check does, so it may
        import what it needs here."""
        return ()

    def validate(self, values: Mapping[str, object], where: Mapping[str, str]) -> List[Tuple[str, str]]:
        """Problems that only show between settings once each is read (a jitter longer than the
        gap between two times), as (the setting to blame, the problem); `where` says where each
        value came from ("the environment"), for the message."""
        return []

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"

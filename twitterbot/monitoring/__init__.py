"""Being left alone for months: heartbeat pings in healthchecks.io's protocol (HEALTHCHECK_URL),
alerts in ntfy's (NOTIFY_URL), and the alert for a progress job gone quiet (PROGRESS_STALL).

This module is light: a run without these settings gets the do-nothing `Monitor` and imports
nothing more. With them, `monitor_for` builds the real one (`monitor.LiveMonitor`)::

    monitor = monitor_for(config, "scheduled run")
    monitor.start()
    ...
    monitor.finish(0, "posted line 3", fixed=("run",))
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterable, NamedTuple, Optional, Sequence, Tuple
from urllib.parse import urlsplit

from ..capability import Capability, CheckLine
from ..errors import ConfigError
from ..settings.parsers import DURATION
from ..settings.table import Setting, SettingType

if TYPE_CHECKING:
    from ..settings.loading import Config

__all__ = ["MONITORING", "Alert", "Monitor", "monitor_for", "monitored"]


class Alert(NamedTuple):
    """One problem worth the owner's eye. `problem` names it for the history ("run", "keys:<network>"):
    one alert is sent per problem until a success settles it. `priority` is ntfy's (1..5 or a word)."""

    problem: str
    title: str
    message: str
    priority: str = "high"
    tags: Tuple[str, ...] = ("warning",)


class Monitor:
    """What a run tells the monitors: here, nothing (neither HEALTHCHECK_URL nor NOTIFY_URL is set)."""

    active = False  # whether anything is told at all

    def start(self) -> None:
        """The run or job begins (a ping to URL/start)."""

    def finish(self, status: int, reason: str, *, alerts: Sequence[Alert] = (), fixed: Iterable[str] = ()) -> None:
        """It ended with exit `status` (`reason` in words): a ping, the `alerts` not sent yet, and
        the problems `fixed` settled so that they alert again when they come back."""

    def alert(self, alert: Alert) -> None:
        """Send `alert` now, unless it was sent and not settled since."""

    def settle(self, problems: Iterable[str]) -> None:
        """The `problems` are over: the next time one happens, it alerts again."""


def monitored(config: Config) -> bool:
    """Whether anything is told of runs: HEALTHCHECK_URL or NOTIFY_URL is set."""
    return bool(config["HEALTHCHECK_URL"] or config["NOTIFY_URL"])


def monitor_for(config: Config, what: str) -> Monitor:
    """The monitor of one run or job (`what`, for the alert's title): the do-nothing one unless
    HEALTHCHECK_URL or NOTIFY_URL is set."""
    if not monitored(config):
        return Monitor()
    from .monitor import LiveMonitor  # only with a monitor to tell

    return LiveMonitor(config, what)


def _parse_endpoint(name: str, text: str, where: str, base_dir: Optional[Path], setting: Setting) -> str:
    """An http or https URL with a host (a path is the point: a check's id, a topic); empty: off."""
    value = text.strip().rstrip("/")
    if not value:
        return ""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number from 0 to 65535
    except ValueError:
        parts = None
    if (
        parts is None
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.fragment
        or not value.isascii()
        or any(ch.isspace() or not ch.isprintable() for ch in value)
    ):
        raise ConfigError(
            f"{name} from {where} is not an http or https URL like {setting.source}: "
            "copy it whole from that page, or leave it empty"
        )
    return value


ENDPOINT = SettingType("endpoint", _parse_endpoint)


class Monitoring(Capability):
    """Heartbeat pings and alerts, for a bot nobody watches."""

    name = "monitoring"
    title = "Monitoring and alerts"
    page = "left-alone.md"
    settings = {
        "HEALTHCHECK_URL": Setting(
            "",
            ENDPOINT,
            "ping this URL (healthchecks.io's protocol) as each run and job starts and ends",
            True,
            "https://hc-ping.com/<your check's uuid>",
        ),
        "NOTIFY_URL": Setting(
            "",
            ENDPOINT,
            "send alerts to this ntfy topic URL (a failure, an uncertain post, refused keys, a budget reached)",
            True,
            "https://ntfy.sh/<your topic>",
        ),
        "PROGRESS_STALL": Setting(
            "6h", DURATION, "alert when a progress job has reported nothing for this long (0 = never)"
        ),
    }

    def checks(self, config: Config) -> Iterable[CheckLine]:
        pings, alerts = config["HEALTHCHECK_URL"], config["NOTIFY_URL"]
        yield (
            "ok" if pings else "note",
            (
                "heartbeat pings: each run and job pings HEALTHCHECK_URL"
                if pings
                else "heartbeat pings: off (set HEALTHCHECK_URL to hear when runs stop)"
            ),
        )
        yield (
            "ok" if alerts else "note",
            (
                "alerts: sent to NOTIFY_URL"
                if alerts
                else "alerts: off (set NOTIFY_URL to an ntfy topic to hear of failures)"
            ),
        )


MONITORING = Monitoring()
